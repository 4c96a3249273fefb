import Foundation
import HReaderJSON
import HReaderModel

/// Maps an hData/RHEx patient record (the c32 JSON `GET /records/[id]/c32/[id].json` returns, as
/// hReader read it) to a patient and entries.
///
/// ```swift
/// let record = try RHExMapper().map(data, remoteID: id)   // id from the patient feed
/// ```
///
/// The eight sections hReader imported become entries; entries of any other section (`care_goals`,
/// `social_history`, …) are listed in `skipped`. Fields are read leniently: hData servers send
/// strings, numbers or small objects for the same field.
public struct RHExMapper: Sendable {
    /// hReader's eight sections, in the order they are mapped, and the entry type of each.
    public static let sections: [(name: String, type: EntryType)] = [
        ("encounters", .encounter), ("conditions", .condition), ("allergies", .allergy),
        ("medications", .medication), ("procedures", .procedure), ("results", .result),
        ("vital_signs", .vitalSign), ("immunizations", .immunization),
    ]

    /// The zone for dates written as text without one (epoch seconds need none): the local zone the
    /// timeline counts days in, unless a caller names another.
    public var zone: DayZone

    public init(zone: DayZone = .local) {
        self.zone = zone
    }

    /// Maps one record. `remoteID` is the id the patient feed gave; without it, the record's own
    /// `_id` (or `id`, or medical record number) is used.
    public func map(_ data: Data, remoteID: String? = nil) throws -> MappedRecord {
        let json = try JSONParser.parse(data, what: "RHEx record")
        guard let document = json.object else {
            throw RecordsError.malformed("RHEx record is \(json.kindDescription), expected a JSON object")
        }
        let raw = String(data: data, encoding: .utf8) ?? json.serialized()
        var record = MappedRecord(patient: patient(document, remoteID: remoteID, raw: raw))

        let mapped = Dictionary(uniqueKeysWithValues: Self.sections.map { ($0.name, $0.type) })
        var usedIDs: Set<String> = []
        for (name, type) in Self.sections {
            guard let value = document.present(name) else { continue }
            guard let items = value.array else {
                throw RecordsError.malformed("RHEx record: \"\(name)\" is \(value.kindDescription), expected an array")
            }
            for (i, item) in items.enumerated() {
                if let object = item.object {
                    var entry = entry(object, section: name, type: type)
                    entry.remoteID = Self.unique(entry.remoteID, section: name, among: &usedIDs)
                    record.entries.append(entry)
                } else if !item.isNull {
                    record.skipped.append(Skip(kind: name, reason: "\(name)[\(i)] is \(item.kindDescription), expected an object"))
                }
            }
        }
        // Other sections of entries (objects in an array), which hReader did not show either.
        for member in document.members where mapped[member.key] == nil {
            for item in member.value.array ?? [] {
                guard let object = item.object else { continue }  // e.g. `languages`: ["en-US"]
                record.skipped.append(Skip(kind: member.key, remoteID: Self.id(object),
                                           reason: "section \(member.key) is not imported"))
            }
        }
        return record
    }

    // MARK: - Patient

    private func patient(_ document: JSONObject, remoteID: String?, raw: String) -> MappedPatient {
        let first = Lenient.text(document["first"]) ?? ""
        let last = Lenient.text(document["last"]) ?? ""
        let birthDate = Self.birthDate(document["birthdate"])
        let id = remoteID ?? Self.id(document)
            ?? Lenient.text(document["medical_record_number"]).map { "mrn:\($0)" }
            ?? StableID.hashed("patient", .array([.string(first), .string(last), .string(birthDate ?? "")]))
        let content = NewPatient(
            firstName: first, lastName: last, gender: Self.gender(document["gender"]), birthDate: birthDate,
            race: Self.category(document["race"]), ethnicity: Self.category(document["ethnicity"]),
            remoteID: id, raw: raw)
        var patient = MappedPatient(remoteID: id, content: content)
        patient.statedIDs = Self.statedIDs(document)
        return patient
    }

    /// "M"/"F" as FHIR's "male"/"female"; other values lower-cased.
    static func gender(_ value: JSONValue?) -> String? {
        guard let text = Lenient.readable(value) else { return nil }
        switch text.uppercased() {
        case "M", "MALE": return "male"
        case "F", "FEMALE": return "female"
        case "U", "UN", "UNK", "UNKNOWN": return "unknown"
        default: return text.lowercased()
        }
    }

    /// Epoch seconds as the UTC calendar date "YYYY-MM-DD"; a date string kept as written.
    static func birthDate(_ value: JSONValue?) -> String? {
        let seconds: Double?
        switch value {
        case .number(let n)?: seconds = Double(n)
        case .string(let s)?:
            if let number = NumberText.parse(s) { seconds = number } else { return Lenient.text(value) }
        default: return nil
        }
        guard let seconds, seconds.isFinite, abs(seconds) < 1e13 else { return nil }
        // Model's calendar at UTC: civil-day arithmetic, and Foundation's (Julian) count before 1583.
        var utc = DayCalendar(.fixed(secondsFromGMT: 0))
        return utc.day(containing: Int64(seconds.rounded(.down))).text
    }

    /// A race or ethnicity: its name or display text, else the name of its CDC code, else the code.
    /// hData sends `{"code": "", "code_set": "CDC-RE"}` for "not given".
    static func category(_ value: JSONValue?) -> String? {
        guard case .object(let object)? = value else { return Lenient.readable(value) }
        for key in ["name", "display", "displayName", "text", "title", "description"] {
            if let text = Lenient.text(object[key]) { return text }
        }
        if case .object? = object["code"] { return category(object["code"]) }
        guard let code = Lenient.text(object["code"]) else { return nil }
        return RaceAndEthnicity.name(forCode: code) ?? code
    }

    /// Real records reuse an `_id` for different entries (in one section or across sections), and
    /// an entry without id may repeat exactly. Each entry needs its own remote id, stable while the
    /// record keeps its order: the first keeps the id, later ones get `<id>#<section>`, then
    /// `<id>#<section>#2`, ….
    static func unique(_ id: String, section: String, among used: inout Set<String>) -> String {
        var candidate = id
        if used.contains(candidate) { candidate = "\(id)#\(section)" }
        var n = 2
        while used.contains(candidate) {
            candidate = "\(id)#\(section)#\(n)"
            n += 1
        }
        used.insert(candidate)
        return candidate
    }

    /// `_id` or `id`: a string, a number, or MongoDB's `{"$oid": "…"}`.
    static func id(_ object: JSONObject) -> String? {
        ["_id", "id"].lazy.compactMap { key in object[key].flatMap(Self.idText) }.first
    }

    /// Every id a record gives itself: `_id`, `id` and its medical record number, each once.
    static func statedIDs(_ document: JSONObject) -> [String] {
        var ids: [String] = []
        for value in [document["_id"], document["id"], document["medical_record_number"]] {
            if let text = value.flatMap(Self.idText), !ids.contains(text) { ids.append(text) }
        }
        return ids
    }

    private static func idText(_ value: JSONValue) -> String? {
        if case .object(let oid) = value { return Lenient.text(oid["$oid"]) }
        return Lenient.text(value)
    }

    // MARK: - Entries

    private func entry(_ object: JSONObject, section: String, type: EntryType) -> MappedEntry {
        let codes = Self.codes(object["codes"])
        var content = EntryContent(
            type: type,
            description: Lenient.text(object["description"]) ?? Lenient.text(object["name"])
                ?? EntryLabel.fallbackDescription(type, codes: codes),
            status: Lenient.readable(object["status"]),
            date: Lenient.time(object["time"], zone: zone),
            start: Lenient.time(object["start_time"], zone: zone),
            end: Lenient.time(object["end_time"], zone: zone),
            codes: codes,
            dose: Lenient.readable(object["dose"]),
            reaction: Lenient.readable(object["reaction"]),
            severity: Lenient.readable(object["severity"]),
            raw: JSONValue.object(object).serialized())
        Self.readValue(object["value"], into: &content)
        return MappedEntry(remoteID: Self.id(object) ?? StableID.hashed(section, .object(object)), content: content)
    }

    /// `{"scalar": "6.3", "units": "mg/dL"}`: a number when the scalar reads as one, else text.
    static func readValue(_ value: JSONValue?, into content: inout EntryContent) {
        let scalar: JSONValue?
        switch value {
        case .object(let object)?:
            scalar = object.present("scalar") ?? object.present("value")
            content.unit = Lenient.text(object["units"]) ?? Lenient.text(object["unit"])
        case let other?:
            scalar = other
        case nil:
            scalar = nil
        }
        switch scalar {
        case .number(let literal)?:
            content.valueNumber = Double(literal)
        case .string(let text)?:
            if let number = NumberText.parse(text) { content.valueNumber = number } else { content.valueText = Lenient.text(scalar) }
        default:
            content.valueText = Lenient.readable(scalar)
        }
    }

    /// `{system: [codes]}`; a single code as a string or number is taken as a one-element list, and
    /// systems without codes are left out.
    static func codes(_ value: JSONValue?) -> [String: [String]] {
        guard let object = value?.object else { return [:] }
        var codes: [String: [String]] = [:]
        for member in object.members {
            let list: [String]
            if let items = member.value.array {
                list = items.compactMap { Lenient.text($0) }
            } else {
                list = Lenient.text(member.value).map { [$0] } ?? []
            }
            if !list.isEmpty { codes[member.key, default: []] += list }
        }
        return codes
    }
}
