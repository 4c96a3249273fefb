import Foundation
import HReaderStore

/// What a built-in applet reads: the patient, their entries, the applet's declaration and the moment
/// the summary is made. Built-ins are pure functions of this context.
struct AppletContext {
    let patient: Patient
    /// All of the patient's entries in date order, struck ones included (only the medications
    /// applet shows those, marked).
    let entries: [Entry]
    let declaration: AppletDeclaration
    let now: Date
    let calendar: Calendar

    init(patient: Patient, entries: [Entry], declaration: AppletDeclaration, now: Date, timeZone: TimeZone = .current) {
        self.patient = patient
        self.entries = entries
        self.declaration = declaration
        self.now = now
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// Entries of `type` that the user has not struck.
    func current(_ type: EntryType) -> [Entry] {
        entries.filter { $0.content.type == type && !$0.user.deleted }
    }

    /// Whole years of age at `date`; nil without a birth date (hReader's age bug, reading years from a
    /// month-only difference, is not reproduced).
    func ageInYears(at date: Date) -> Int? {
        guard let birthDate = patient.birthDate, let born = ClinicalTime.parse(birthDate, timeZone: calendar.timeZone) else { return nil }
        return calendar.dateComponents([.year], from: born.date, to: date).year
    }

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

    /// Codes of one system, under hReader's short name or the FHIR URI.
    func codes(_ system: String) -> [String] {
        switch system {
        case "LOINC": return (content.codes["LOINC"] ?? []) + (content.codes["http://loinc.org"] ?? [])
        case "SNOMED-CT": return (content.codes["SNOMED-CT"] ?? []) + (content.codes["http://snomed.info/sct"] ?? [])
        default: return content.codes[system] ?? []
        }
    }

    func hasCode(_ system: String, in set: Set<String>) -> Bool {
        codes(system).contains { set.contains($0) }
    }

    /// The value as a number: the stored number, or text that reads as one ("118.0").
    var number: Double? {
        if let n = content.valueNumber { return n }
        guard let text = content.valueText?.trimmingCharacters(in: .whitespaces) else { return nil }
        return Double(text)
    }
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
