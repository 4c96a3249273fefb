import Foundation
import HReaderJSON
import HReaderModel

/// Apple Health export elements → entries (DESIGN.md §7), pure: the reader hands over elements, the
/// importer stores what this returns.
///
/// - `Record`s by the type table (`appleHealthTypeTable`); types not in it become `observation`
///   entries (the summary counts them). Units and values as recorded; category values
///   (`HKCategoryValueSeverityModerate`) as text.
/// - A blood-pressure `Correlation` is one entry ("120/80"); the top-level systolic and diastolic
///   Records that repeat its children (same `remoteID`) are not imported again.
/// - `Workout`s and `ActivitySummary`s are `activity` entries.
/// - Remote ids hash what the element says (type, source, dates, value, unit), so the same sample
///   in a later export updates in place instead of being added twice.
public struct AppleHealthMapper: Sendable {
    public struct KnownType: Sendable {
        public var entryType: EntryType
        public var loinc: String?
        public var description: String
    }

    public enum Result: Sendable {
        case entry(MappedEntry)
        case skip(Skip)
    }

    /// The code system key HealthKit identifiers are stored under.
    public static let codeSystem = "com.apple.health"

    public static let types: [String: KnownType] = {
        var table: [String: KnownType] = [:]
        for line in appleHealthTypeTable.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, let type = EntryType(rawValue: fields[1]) else { continue }
            table[fields[0]] = KnownType(entryType: type, loinc: fields[2] == "-" ? nil : fields[2], description: fields[3])
        }
        return table
    }()

    public init() {}

    public static func isKnown(_ type: String) -> Bool { types[type] != nil }

    // MARK: Elements

    public func record(_ element: AppleHealthElement) -> Result {
        guard let type = element.attribute("type"), !type.isEmpty else {
            return .skip(Skip(kind: "Record", reason: "a Record without a type (line \(element.line))"))
        }
        guard let start = time(element.attribute("startDate")) else {
            return .skip(Skip(kind: type, reason: "a Record with a missing or unreadable startDate"))
        }
        let end = time(element.attribute("endDate"))
        let known = Self.types[type]
        var content = EntryContent(type: known?.entryType ?? .observation, description: known?.description ?? Self.readable(type))
        place(start: start, end: end, into: &content)
        content.codes = codes(known?.loinc, type)
        let value = element.attribute("value")
        if let value, let number = Double(value), number.isFinite {
            content.valueNumber = number
        } else if let value, !value.isEmpty {
            content.valueText = Self.readable(value)
        }
        content.unit = nonEmpty(element.attribute("unit"))
        content.raw = Self.raw(element)
        return .entry(MappedEntry(remoteID: Self.remoteID(element), content: content))
    }

    /// A blood-pressure correlation as one reading; any other correlation type as an observation.
    public func correlation(_ element: AppleHealthElement) -> Result {
        let type = element.attribute("type") ?? "Correlation"
        guard let start = time(element.attribute("startDate")) else {
            return .skip(Skip(kind: type, reason: "a Correlation with a missing or unreadable startDate"))
        }
        let known = Self.types[type]
        var content = EntryContent(type: known?.entryType ?? .observation, description: known?.description ?? Self.readable(type))
        place(start: start, end: time(element.attribute("endDate")), into: &content)
        content.codes = codes(known?.loinc, type)
        if type == "HKCorrelationTypeIdentifierBloodPressure" {
            let systolic = element.children.first { $0.attribute("type") == "HKQuantityTypeIdentifierBloodPressureSystolic" }
            let diastolic = element.children.first { $0.attribute("type") == "HKQuantityTypeIdentifierBloodPressureDiastolic" }
            guard let s = systolic?.attribute("value").flatMap(Double.init), let d = diastolic?.attribute("value").flatMap(Double.init) else {
                return .skip(Skip(kind: type, reason: "a blood-pressure correlation without a systolic and a diastolic value"))
            }
            content.valueText = "\(Self.plain(s))/\(Self.plain(d))"
            content.unit = nonEmpty(systolic?.attribute("unit"))
        } else {
            content.valueText = element.children.compactMap { child in
                child.attribute("value").map { "\(Self.readable(child.attribute("type") ?? "")) \($0)" }
            }.joined(separator: ", ")
        }
        content.raw = Self.raw(element)
        return .entry(MappedEntry(remoteID: Self.remoteID(element), content: content))
    }

    /// A Workout; `route`: the summary of its route file (`WorkoutRouteGPX`), read by the import.
    public func workout(_ element: AppleHealthElement, route: RouteSummary? = nil) -> Result {
        guard let start = time(element.attribute("startDate")) else {
            return .skip(Skip(kind: "Workout", reason: "a Workout with a missing or unreadable startDate"))
        }
        let activity = element.attribute("workoutActivityType") ?? "HKWorkoutActivityTypeOther"
        var content = EntryContent(type: .activity, description: "\(Self.readable(activity)) workout")
        place(start: start, end: time(element.attribute("endDate")), into: &content)
        content.codes = [Self.codeSystem: [activity]]
        if let duration = element.attribute("duration").flatMap(Double.init) {
            content.valueNumber = duration
            content.unit = nonEmpty(element.attribute("durationUnit"))
        }
        var parts: [String] = []
        if let distance = element.attribute("totalDistance") { parts.append("\(Self.rounded(distance)) \(element.attribute("totalDistanceUnit") ?? "")") }
        if let energy = element.attribute("totalEnergyBurned") { parts.append("\(Self.rounded(energy)) \(element.attribute("totalEnergyBurnedUnit") ?? "")") }
        if let text = route?.text { parts.append(text) }
        if !parts.isEmpty { content.valueText = parts.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ") }
        content.raw = Self.raw(element, route: route.flatMap { $0.isEmpty ? nil : $0 })
        return .entry(MappedEntry(remoteID: Self.remoteID(element), content: content))
    }

    /// An ActivitySummary: its day (`dateComponents`, a date without a zone) starts at midnight in
    /// `zone`, the local zone the timeline counts days in unless a caller names another.
    public func activitySummary(_ element: AppleHealthElement, zone: DayZone = .local) -> Result {
        guard let day = element.attribute("dateComponents"), let date = ClinicalTime.parse(day, zone: zone) else {
            return .skip(Skip(kind: "ActivitySummary", reason: "an ActivitySummary with a missing or unreadable dateComponents"))
        }
        var content = EntryContent(type: .activity, description: "Activity summary", date: date)
        content.codes = [Self.codeSystem: ["HKActivitySummary"]]
        var parts: [String] = []
        if let energy = element.attribute("activeEnergyBurned") {
            parts.append("\(Self.rounded(energy)) \(element.attribute("activeEnergyBurnedUnit") ?? "kcal") active energy")
            content.valueNumber = Double(energy)
            content.unit = element.attribute("activeEnergyBurnedUnit") ?? "kcal"
        }
        if let exercise = element.attribute("appleExerciseTime") { parts.append("\(Self.rounded(exercise)) min exercise") }
        if let stand = element.attribute("appleStandHours") { parts.append("\(Self.rounded(stand)) h stand") }
        content.valueText = parts.isEmpty ? nil : parts.joined(separator: ", ")
        content.raw = Self.raw(element)
        return .entry(MappedEntry(remoteID: "HKActivitySummary:\(day)", content: content))
    }

    /// The `Me` element: birth date (yyyy-MM-dd) and sex as hreader stores them.
    public static func me(_ element: AppleHealthElement) -> (birthDate: String?, gender: String?) {
        let birth = element.attribute("HKCharacteristicTypeIdentifierDateOfBirth").flatMap(nonEmpty)
        let gender: String? = switch element.attribute("HKCharacteristicTypeIdentifierBiologicalSex") {
        case "HKBiologicalSexFemale": "female"
        case "HKBiologicalSexMale": "male"
        case "HKBiologicalSexOther": "other"
        default: nil
        }
        return (birth, gender)
    }

    // MARK: Pieces

    public static func remoteID(_ element: AppleHealthElement) -> String {
        HealthKitText.remoteID(kind: element.kind.rawValue, element.attribute)
    }

    /// `remoteID` as the 64-bit hash it writes (`HealthKitText.remoteID(hash:)` gives the id back).
    public static func remoteIDHash(_ element: AppleHealthElement) -> UInt64 {
        HealthKitText.remoteIDHash(kind: element.kind.rawValue, element.attribute)
    }

    /// What every sample of one HealthKit type becomes (the samples' series keep it).
    public static func seriesMapping(_ type: String) -> SeriesMapping {
        let known = types[type]
        var codes = [codeSystem: [type]]
        if let loinc = known?.loinc { codes["LOINC"] = [loinc] }
        return SeriesMapping(type: known?.entryType ?? .observation, description: known?.description ?? readable(type), codes: codes)
    }

    private func codes(_ loinc: String?, _ type: String) -> [String: [String]] {
        var codes = [Self.codeSystem: [type]]
        if let loinc { codes["LOINC"] = [loinc] }
        return codes
    }

    private func place(start: ClinicalTime, end: ClinicalTime?, into content: inout EntryContent) {
        if let end, end.epoch != start.epoch {
            content.start = start
            content.end = end
        } else {
            content.date = start
        }
    }

    /// `yyyy-MM-dd HH:mm:ss ±HHMM` (Apple Health's format) → an RFC 3339 time keeping the offset.
    func time(_ text: String?) -> ClinicalTime? {
        guard let text, let (epoch, offset) = AppleHealthDate.parse(text) else { return nil }
        let b = Array(text.utf8)
        let date = String(decoding: b[0..<10], as: UTF8.self), clock = String(decoding: b[11..<19], as: UTF8.self)
        let zone = offset == 0 ? "Z" : "\(offset < 0 ? "-" : "+")\(String(decoding: b[21..<23], as: UTF8.self)):\(String(decoding: b[23..<25], as: UTF8.self))"
        return ClinicalTime(text: "\(date)T\(clock)\(zone)", epoch: epoch)
    }

    /// The element as JSON (attributes, metadata, children): the lossless raw form.
    static func raw(_ element: AppleHealthElement) -> String { raw(element, route: nil) }

    /// The element as JSON; a workout's route summary as its `route` member.
    static func raw(_ element: AppleHealthElement, route: RouteSummary?) -> String {
        var out = "{\"element\":"
        JSONText.quote(element.kind.rawValue, into: &out)
        for (name, value) in element.attributes {
            out += ","
            JSONText.quote(name, into: &out)
            out += ":"
            JSONText.quote(value, into: &out)
        }
        if !element.metadata.isEmpty {
            out += ",\"metadata\":{"
            for (i, entry) in element.metadata.enumerated() {
                if i > 0 { out += "," }
                JSONText.quote(entry.key, into: &out)
                out += ":"
                JSONText.quote(entry.value, into: &out)
            }
            out += "}"
        }
        if !element.children.isEmpty {
            out += ",\"children\":[" + element.children.map { raw($0) }.joined(separator: ",") + "]"
        }
        if let route { out += ",\"route\":" + route.json.serialized() }
        return out + "}"
    }

    static func readable(_ identifier: String) -> String { HealthKitText.readable(identifier) }

    static func plain(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    static func rounded(_ text: String) -> String {
        guard let value = Double(text) else { return text }
        return value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
