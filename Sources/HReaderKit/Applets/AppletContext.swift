import Foundation
import HReaderModel
import HReaderStore

/// What a built-in applet reads: the patient, their record, the applet's declaration and the moment
/// the summary is made. A tile asks the record for what it shows (the newest few readings of its
/// kinds, a count, a week of steps), never for the whole record: a person's Apple Health samples are
/// millions (issue 41).
struct AppletContext {
    let patient: Patient
    let record: EntryRepository
    /// The vault's connection, for the readers beside the entries (`ActivityTotals`).
    let db: Database
    let declaration: AppletDeclaration
    let now: Date
    /// Where the tiles' local days are counted, as the timeline counts them (DayCalendar).
    let zone: DayZone

    init(patient: Patient, db: Database, declaration: AppletDeclaration, now: Date, zone: DayZone = .local) {
        self.patient = patient
        self.db = db
        self.record = EntryRepository(db)
        self.declaration = declaration
        self.now = now
        self.zone = zone
    }

    /// The newest current entries of `types` (struck ones left out) of the kinds `kinds` accepts
    /// that `matches`, newest first, at most `limit`.
    func newest(_ types: [EntryType], limit: Int, kinds: ((EntryRepository.Kind) -> Bool)? = nil,
                where matches: (Entry) -> Bool = { _ in true }) throws -> [Entry] {
        var found: [Entry] = []
        guard limit > 0 else { return found }
        try record.forEachNewest(patientID: patient.id, types: types, kinds: kinds) { entry in
            if matches(entry) { found.append(entry) }
            return found.count < limit
        }
        return found
    }

    /// Whole years of age at `date`; nil without a birth date (hReader's age bug, reading years from a
    /// month-only difference, is not reproduced).
    func ageInYears(at date: Date) -> Int? { LocalAge(birthDate: patient.birthDate, at: date, zone: zone)?.years }

    func tile(status: Tile.Status, value: String? = nil, unit: String? = nil, lines: [String] = [], updated: String? = nil) -> Tile {
        Tile(identifier: declaration.identifier, title: declaration.displayName, status: status, value: value, unit: unit,
             lines: lines, updated: updated)
    }

    /// A tile that says there is nothing to show yet.
    func emptyTile(_ line: String) -> Tile {
        tile(status: .unknown, lines: [line])
    }

    /// A positive whole number from the configuration, or `fallback`.
    func configuredCount(_ key: String, default fallback: Int) -> Int {
        guard let n = declaration.configurationNumber(key), n >= 1, n < 10_000 else { return fallback }
        return Int(n)
    }
}

extension Entry {
    /// The description, lower-cased, for hReader's "description contains" matching.
    var loweredDescription: String { content.description.lowercased() }

    func hasCode(_ system: String, in set: Set<String>) -> Bool {
        CodeMatch.has(content.codes, system, in: set)
    }

    /// The value as a number: the stored number, or text that reads as one ("118.0").
    var number: Double? { CodeMatch.number(content.valueNumber, content.valueText) }
}

/// hReader's matching of codes and values, for an entry or for a kind of entries before any is read.
enum CodeMatch {
    /// Codes of one system, under hReader's short name or the FHIR URI.
    static func codes(_ codes: [String: [String]], _ system: String) -> [String] {
        switch system {
        case "LOINC": return (codes["LOINC"] ?? []) + (codes["http://loinc.org"] ?? [])
        case "SNOMED-CT": return (codes["SNOMED-CT"] ?? []) + (codes["http://snomed.info/sct"] ?? [])
        default: return codes[system] ?? []
        }
    }

    static func has(_ codes: [String: [String]], _ system: String, in set: Set<String>) -> Bool {
        self.codes(codes, system).contains { set.contains($0) }
    }

    /// The stored number, or text that reads as one ("118.0").
    static func number(_ number: Double?, _ text: String?) -> Double? {
        if let number { return number }
        guard let text = text?.trimmingCharacters(in: .whitespaces) else { return nil }
        return Double(text)
    }
}

extension EntryRepository.Kind {
    var loweredDescription: String { description.lowercased() }

    func hasCode(_ system: String, in set: Set<String>) -> Bool { CodeMatch.has(codes, system, in: set) }
}

extension ClinicalTime {
    /// The calendar date as written ("2012-05-01" of "2012-05-01T23:30:00+02:00"), for tile lines.
    var dayText: String {
        text.count >= 10 ? String(text.prefix(10)) : text
    }
}

enum TileFormat {
    /// "118" for whole numbers, else one decimal ("24.3").
    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.1f", value)
    }

    /// Always one decimal ("24.0"), as hReader showed BMI.
    static func oneDecimal(_ value: Double) -> String { String(format: "%.1f", value) }

    /// "90-120": a range's bounds as written in the rules.
    static func range(_ range: ClosedRange<Double>) -> String { "\(number(range.lowerBound))-\(number(range.upperBound))" }
}
