import HReaderJSON
import HReaderStore

/// Which source's samples count first when several wrote the same kind of activity on a day
/// (`SourceOverlap`): the names given to `hreader sources priority NAME …` in that order, then
/// every other source by its kind — a watch or band, then an app, then a phone — then by name.
/// Apple Health's own default puts the watch before the phone as well.
///
/// The order is one vault setting (`activity.source_priority`, a JSON array of names); every
/// sample stays stored with its source, so a new order changes the next answer and nothing else.
public struct SourcePriority: Sendable, Equatable {
    /// What a source is, guessed from the words of its name.
    public enum Kind: Int, Sendable, Comparable {
        case wearable = 0, app, phone

        public var name: String {
            switch self {
            case .wearable: return "watch or band"
            case .app: return "app"
            case .phone: return "phone"
            }
        }

        public static func < (a: Kind, b: Kind) -> Bool { a.rawValue < b.rawValue }
    }

    /// The names put first, in order.
    public let named: [String]

    public init(named: [String] = []) { self.named = named }

    static let settingKey = "activity.source_priority"

    static let wearableWords: Set<String> = [
        "watch", "band", "ring", "strap", "tracker", "wear", "wearos", "garmin", "fitbit", "forerunner", "fenix", "venu",
        "vivoactive", "vivosmart", "vivomove", "instinct", "polar", "suunto", "coros", "whoop", "oura", "amazfit", "withings",
    ]
    /// "MobileTrack" is what Fitbit's data names the phone its app counts steps with.
    static let phoneWords: Set<String> = ["iphone", "phone", "smartphone", "pixel", "android", "galaxy", "oneplus", "xiaomi", "motorola",
                                          "mobiletrack"]

    /// A watch or band when a word of the name says so ("Anna's Apple Watch", "Garmin Forerunner
    /// 965", "Fit (Google Pixel Watch 2)"), else a phone when one says that ("Generator iPhone",
    /// "Fit (Google Pixel 8)"), else an app. A name "App (Device)" is first judged by its device
    /// alone: "Fitbit (MobileTrack)" is Fitbit's app counting with the phone, not a band.
    public static func kind(of name: String) -> Kind {
        if name.hasSuffix(")"), let open = name.lastIndex(of: "("),
           let kind = kind(ofWords: name[name.index(after: open)..<name.index(before: name.endIndex)]) {
            return kind
        }
        return kind(ofWords: Substring(name)) ?? .app
    }

    private static func kind(ofWords text: Substring) -> Kind? {
        let words = Set(text.lowercased().split { !($0.isLetter || $0.isNumber) }.map(String.init))
        if !words.isDisjoint(with: wearableWords) { return .wearable }
        if !words.isDisjoint(with: phoneWords) { return .phone }
        return nil
    }

    /// `sources` in the order they count: the named ones first (those among `sources`), then by
    /// kind, then by name.
    public func ordered(_ sources: [String]) -> [String] {
        let present = Set(sources)
        let first = named.filter { present.contains($0) }
        let chosen = Set(first)
        let rest = present.subtracting(chosen).sorted { a, b in
            let (ka, kb) = (Self.kind(of: a), Self.kind(of: b))
            return ka != kb ? ka < kb : a < b
        }
        return first + rest
    }

    /// Each of `sources`' place in the order (0 counts first).
    public func ranks(_ sources: some Sequence<String>) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: ordered(Array(Set(sources))).enumerated().map { ($1, $0) })
    }

    /// The vault's order (the default when none was set).
    static func load(_ db: Database) throws -> SourcePriority {
        guard let text = try SettingsRepository(db).value(settingKey),
              case let .array(items)? = try? JSONParser.parse(text) else { return SourcePriority() }
        return SourcePriority(named: items.compactMap(\.string))
    }

    func save(_ db: Database) throws {
        try SettingsRepository(db).set(Self.settingKey, named.isEmpty ? nil : JSONValue.array(named.map(JSONValue.string)).serialized())
    }
}
