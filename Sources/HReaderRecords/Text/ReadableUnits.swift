import Foundation
import HReaderModel

/// A measured value in the units people read: what every view shows (charts, lists, tiles, the
/// trends, `hreader entries list`). The vault keeps what the source recorded; only the showing changes.
///
///     let shown = ReadableUnits.quantity(0.99, unit: "%", codes: ["com.apple.health": ["HKQuantityTypeIdentifierOxygenSaturation"]])
///     shown.text   // "99 %"
public struct ReadableQuantity: Sendable, Equatable {
    public var value: Double
    public var unit: String?

    /// "99 %", "22.4 kg/m²", "72 /min".
    public var text: String { [ReadableUnits.number(value), unit].compactMap { $0 }.joined(separator: " ") }
}

/// The rules, in one place:
/// - Apple Health writes percentages as fractions (`0.97` with unit `%`): oxygen saturation, body fat,
///   walking asymmetry and double support, walking steadiness, blood alcohol. Entries from Apple Health
///   (they carry a `com.apple.health` code) with `%` are shown times 100. An oxygen saturation of at
///   most 1 % is a fraction whatever its source (a saturation of 1 % is no reading); the tile always read it so.
/// - HealthKit's bare `count` takes the unit of the entry's LOINC code (BMI kg/m², steps).
/// - Spellings of one unit read as one: `count/min`, `beats/min`, `bpm`, `breaths/min` → `/min` (as
///   the tiles say), `mm[Hg]` → mmHg, `degC` → °C, `kg/m2` → kg/m².
/// - Any other UCUM reads as people write it (`readable`): powers of ten as `×10⁹`, `u` as µ, exponents
///   raised (`m2` → m²), brackets and annotations dropped (`[iU]/L` → IU/L, `{cells}/uL` → cells/µL).
/// The unit table is the export's (`ObservationCatalog`), so the summary and a FHIR export agree
/// with what the screens show; only the showing reads the codes for people.
public enum ReadableUnits {
    /// UCUM codes as people write them; any other code reads as the catalog's display.
    static let peopleRead: [String: String] = ["kg/m2": "kg/m²", "Cel": "°C", "mm[Hg]": "mmHg"]

    static let loincSystems = ["LOINC", "http://loinc.org", "urn:oid:2.16.840.1.113883.6.1"]
    static let oxygenSaturationLOINC: Set<String> = ["2708-6", "59408-5", "59417-6", "20564-1"]

    /// How a value of `unit` recorded for an entry with `codes` (and `description`) is shown.
    public static func quantity(_ value: Double, unit: String?, codes: [String: [String]], description: String = "") -> ReadableQuantity {
        Scale(unit: unit, codes: codes, description: description).quantity(value)
    }

    /// `quantity` for the readings of one unit, codes and description (a series): the unit's lookups
    /// are made once, not for each of a decade's readings (they were most of a decade chart's time).
    public struct Scale: Sendable {
        /// The unit shown.
        let unit: String?
        /// Times 100 always (Apple Health's fractions), for a value in (0, 1] only (a saturation
        /// of at most 1 % is no reading), or never.
        let percent: Percent
        enum Percent { case never, always, fractions }

        public init(unit: String?, codes: [String: [String]], description: String = "") {
            let recorded = unit?.trimmingSpaces() ?? ""
            let catalog = ObservationCatalog.standard
            if recorded.isEmpty {
                (self.unit, percent) = (nil, .never)
            } else if recorded == "count", let ucum = ReadableUnits.loinc(codes).lazy.compactMap({ catalog.code($0)?.ucum }).first {
                (self.unit, percent) = (ReadableUnits.display(ucum), .never)
            } else if let mapped = catalog.unit(recorded) {
                self.unit = ReadableUnits.display(mapped.ucum)
                percent = mapped.ucum != "%" ? .never : ReadableUnits.isFraction(codes: codes, description: description)
            } else {
                (self.unit, percent) = (ReadableUnits.readable(recorded), .never)
            }
        }

        public func quantity(_ value: Double) -> ReadableQuantity {
            let fraction = percent == .always || (percent == .fractions && value > 0 && value <= 1)
            return ReadableQuantity(value: fraction ? ReadableUnits.rounded(value * 100) : value, unit: unit)
        }
    }

    /// An entry's numeric value (a number, or text that reads as one), shown; nil for text values.
    public static func quantity(of content: EntryContent) -> ReadableQuantity? {
        guard let number = content.valueNumber ?? content.valueText.flatMap({ Double($0.trimmingSpaces()) }),
              number.isFinite else { return nil }
        return quantity(number, unit: content.unit, codes: content.codes, description: content.description)
    }

    /// A value as shown in lists: a number in readable units ("99 %"), else the text with its unit as recorded.
    public static func text(number: Double?, text: String?, unit: String?, codes: [String: [String]], description: String) -> String? {
        if let number { return quantity(number, unit: unit, codes: codes, description: description).text }
        guard let text else { return nil }
        return [text, unit.map(readable)].compactMap { $0 }.joined(separator: " ")
    }

    /// Whether how `unit` reads depends on the entry's codes (a `%` that may be a fraction, a bare `count`).
    public static func needsCodes(_ unit: String?) -> Bool {
        let recorded = unit?.trimmingSpaces()
        return recorded == "%" || recorded == "count"
    }

    /// How a UCUM code reads: `kg/m2` as kg/m², `Cel` as °C, the catalog's display, else `readable`.
    public static func display(_ ucum: String) -> String {
        peopleRead[ucum] ?? ObservationCatalog.standard.unit(ucum)?.display ?? readable(ucum)
    }

    /// A unit as people write it: UCUM's `10*9/L` as ×10⁹/L, `10*3/uL` as ×10³/µL, `ug/dL` as µg/dL,
    /// `m[iU]/mL` as mIU/mL, `mL/min/{1.73_m2}` as mL/min/1.73 m², `{cells}/uL` as cells/µL, `m2` as m².
    /// Anything else (`mg/dL`, `U/L`, `%`, a source's own words) stays as written.
    public static func readable(_ unit: String) -> String {
        let trimmed = unit.trimmingSpaces()
        if let known = peopleRead[trimmed] { return known }
        guard trimmed.unicodeScalars.contains(where: { "*^{}[]_u0123456789".unicodeScalars.contains($0) }) else { return trimmed }
        return trimmed.split(separator: "/", omittingEmptySubsequences: false).map { readableTerm(String($0)) }.joined(separator: "/")
    }

    private static let superscripts: [Character: Character] = [
        "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹", "-": "⁻",
    ]
    /// UCUM's units that take the micro prefix (`u`), written µ.
    private static let microUnits: Set<String> = ["g", "L", "l", "mol", "m", "U", "IU", "eq", "kat", "s", "V", "W", "Pa"]

    /// One term of a unit (between slashes): annotations, brackets, powers of ten, µ and exponents.
    private static func readableTerm(_ term: String) -> String {
        var text = term
        // {cells}, {1.73_m2}: the annotation's words; m[iU], [in_i]: the unit without its brackets and suffix.
        if text.contains("{") || text.contains("[") {
            text = text.replacingOccurrences(of: "{", with: "").replacingOccurrences(of: "}", with: "")
                .replacingOccurrences(of: "[", with: "").replacingOccurrences(of: "]", with: "")
            if let underscore = text.firstIndex(of: "_"), text[text.index(after: underscore)...].allSatisfy(\.isLetter) {
                text = String(text[..<underscore])   // in_i, lb_av, ft_i
            }
            text = text.replacingOccurrences(of: "_", with: " ")
            if text.lowercased().hasSuffix("iu") { text = String(text.dropLast(2)) + "IU" }
            return text.split(separator: " ").map { readableTerm(String($0)) }.joined(separator: " ")
        }
        // 10*9, 10^9, 10*-3: a power of ten, written ×10⁹ (with the rest of the term after it).
        for marker in ["10*", "10^"] where text.hasPrefix(marker) {
            let rest = text.dropFirst(marker.count)
            let exponent = rest.prefix { $0.isNumber || $0 == "-" }
            guard !exponent.isEmpty, exponent.allSatisfy({ superscripts[$0] != nil }) else { break }
            let after = rest.dropFirst(exponent.count)
            return "×10" + String(exponent.map { superscripts[$0]! }) + (after.isEmpty ? "" : readableTerm(String(after)))
        }
        // uL, ug, umol: micro.
        if text.hasPrefix("u"), microUnits.contains(String(text.dropFirst()).trimmingCharacters(in: .decimalDigits)) {
            text = "µ" + text.dropFirst()
        }
        // m2, cm3: an exponent after the unit's letters.
        if let last = text.last, last == "2" || last == "3", text.dropLast().allSatisfy({ $0.isLetter || $0 == "µ" }), text.count > 1 {
            text = text.dropLast() + String(superscripts[last]!)
        }
        return text
    }

    /// "99", "22.4", "0.25": whole numbers without a point, others as Swift writes them shortest.
    public static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// Which `%` readings are fractions: all of Apple Health's; an oxygen saturation's in (0, 1].
    static func isFraction(codes: [String: [String]], description: String) -> Scale.Percent {
        if codes[AppleHealthMapper.codeSystem] != nil { return .always }
        let lowered = description.lowercased()
        return loinc(codes).contains(where: oxygenSaturationLOINC.contains) || lowered.contains("oxygen saturation")
            || lowered.contains("spo2") ? .fractions : .never
    }

    static func loinc(_ codes: [String: [String]]) -> [String] {
        loincSystems.flatMap { codes[$0] ?? [] }.map { $0.trimmingSpaces() }
    }

    /// 0.99 × 100 is 98.99999999999999 in binary: kept to the millionth, as the export rounds.
    package static func rounded(_ value: Double) -> Double {
        guard abs(value) < 1e12 else { return value }
        return (value * 1_000_000).rounded() / 1_000_000
    }
}

extension Entry {
    /// The value with its unit as a person reads it ("120 mm[Hg]", "99 %" for Apple Health's 0.99,
    /// "positive"); numbers go through `ReadableUnits`, text is shown as recorded.
    public var displayValue: String? {
        ReadableUnits.text(number: content.valueNumber, text: content.valueText, unit: content.unit, codes: content.codes,
                           description: content.description)
    }

    /// The numeric value in the units people read (nil for text values).
    public var readableQuantity: ReadableQuantity? { ReadableUnits.quantity(of: content) }
}
