import Foundation
import HReaderModel

/// A CodeableConcept (or a single Coding) as an entry needs it: what to call it and its codes.
struct Concept {
    var text: String?
    var codings: [(system: String?, code: String?, display: String?)] = []

    /// text ?? first coding's display ?? first coding's code.
    var description: String? {
        text ?? codings.lazy.compactMap(\.display).first ?? codings.lazy.compactMap(\.code).first
    }

    /// Short system name → codes, in coding order, without repeats (found in a set: a resource
    /// may carry thousands) and without placeholders (`FHIRCodes.isPlaceholder(code:)`).
    var codes: [String: [String]] {
        var codes: [String: [String]] = [:]
        var seen = Set<SystemCode>(minimumCapacity: codings.count)
        for coding in codings {
            guard let code = coding.code, !FHIRCodes.isPlaceholder(code: code) else { continue }
            let key = FHIRCodes.key(forSystem: coding.system)
            if seen.insert(SystemCode(system: key, code: code)).inserted { codes[key, default: []].append(code) }
        }
        return codes
    }

    private struct SystemCode: Hashable {
        let system: String
        let code: String
    }

    func has(system: String, code: String) -> Bool {
        codings.contains { $0.system == system && $0.code == code }
    }

    var loincCodes: [String] { codings.filter { $0.system == "http://loinc.org" }.compactMap(\.code) }
}

extension JSONReader {
    /// A CodeableConcept member.
    func concept(_ key: String) throws -> Concept? {
        guard let reader = try object(key) else { return nil }
        return try reader.asConcept()
    }

    /// Every CodeableConcept of an array member.
    func concepts(_ key: String) throws -> [Concept] {
        try objects(key).map { try $0.asConcept() }
    }

    /// This object read as a CodeableConcept, or as a bare Coding.
    func asConcept() throws -> Concept {
        let codingReaders = has("coding") ? try objects("coding") : [self]
        var concept = Concept(text: nonEmpty(try string("text")))
        for coding in codingReaders {
            let code = nonEmpty(try coding.string("code")), display = nonEmpty(try coding.string("display"))
            if code == nil && display == nil { continue }
            concept.codings.append((nonEmpty(try coding.string("system")), code, display))
        }
        return concept
    }

    /// A status that is a code (`"active"`) or, as in R4's clinical statuses, a CodeableConcept.
    func status(_ key: String) throws -> String? {
        if case .object? = object.present(key) {
            let concept = try self.concept(key)
            return concept?.codings.lazy.compactMap(\.code).first ?? concept?.text
        }
        return nonEmpty(try string(key))
    }

    /// A FHIR date, dateTime or instant member as a clinical time; text that is none of these is an error.
    func time(_ key: String, zone: DayZone) throws -> ClinicalTime? {
        guard let text = try string(key) else { return nil }
        guard let time = FHIRTime.parse(text, zone: zone) else {
            throw RecordsError.malformed("\(path).\(key) is not a FHIR date or dateTime: \"\(text)\"")
        }
        return time
    }

    /// A Period member's start and end.
    func period(_ key: String, zone: DayZone) throws -> (start: ClinicalTime?, end: ClinicalTime?)? {
        guard let period = try object(key) else { return nil }
        return (try period.time("start", zone: zone), try period.time("end", zone: zone))
    }

    /// A Quantity as its number (literal and value) and unit (the human unit, else the UCUM code).
    func asQuantity() throws -> (literal: String, value: Double, unit: String?)? {
        guard let number = try number("value") else { return nil }
        return try (number.literal, number.value, nonEmpty(string("unit")) ?? nonEmpty(string("code")))
    }

    /// The `reference` of a Reference member, as written.
    func reference(_ key: String) throws -> String? {
        nonEmpty(try object(key)?.string("reference"))
    }
}

func nonEmpty(_ text: String?) -> String? {
    guard let text else { return nil }
    // Most texts begin and end with a printable ASCII character: nothing to trim, and no trip
    // through Foundation (this runs for almost every value read).
    if let first = text.utf8.first, let last = text.utf8.last, first > 0x20, first < 0x80, last > 0x20, last < 0x80 { return text }
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return trimmed.isEmpty ? nil : trimmed
}

/// FHIR dates and times. `ClinicalTime.parse` reads what FHIR allows; a date-time without an offset
/// (which FHIR forbids but some servers send) is read as a wall time of the given zone rather than
/// lost, and placed by Model's one calendar (`DayCalendar.instant(ofWall:)`): a time the clock shows
/// twice is the first of the two, one it skips is read under the offset before the change.
enum FHIRTime {
    static func parse(_ text: String, zone: DayZone) -> ClinicalTime? {
        let trimmed = trimmedOfSpaces(text)
        if let epoch = instant(trimmed) { return ClinicalTime(text: trimmed, epoch: epoch) }
        if let time = ClinicalTime.parse(text, zone: zone) { return time }
        // Foundation's DateFormatter traps (a fatal error, not nil) on some non-ASCII text, e.g. a
        // combining mark after a digit (found by the fhir-ndjson fuzzer): a date-time is ASCII.
        guard trimmed.contains("T"), trimmed.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let withoutFraction = trimmed.split(separator: ".", maxSplits: 1).first.map(String.init) ?? trimmed
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        // The formatter reads the wall clock's fields (as UTC, which has no changes of offset); the
        // zone's calendar places them.
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: withoutFraction) {
                let wall = Int64(date.timeIntervalSince1970.rounded(.down))
                return ClinicalTime(text: trimmed, epoch: DayCalendar(zone).instant(ofWall: wall).epoch)
            }
        }
        return nil
    }

    /// The text without the spaces and tabs (`.whitespaces`) at its ends; without Foundation when
    /// both ends are ASCII and neither is a space or a tab (nearly always).
    static func trimmedOfSpaces(_ text: String) -> String {
        if let first = text.utf8.first, let last = text.utf8.last, first < 0x80, last < 0x80,
           first != 0x20, first != 0x09, last != 0x20, last != 0x09 {
            return text
        }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// Thin alias: the fast path lives in `ClinicalTime` so every importer gets it.
    static func instant(_ text: String) -> Int64? { ClinicalTime.rfc3339Instant(text) }
}
