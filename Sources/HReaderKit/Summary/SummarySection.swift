import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// The sections of a clinician summary, in the order IPS lists them, with their LOINC section codes.
public enum SummarySection: String, CaseIterable, Sendable {
    case problems, allergies, medications, immunizations, results
    case vitalSigns = "vital-signs"

    public var title: String {
        switch self {
        case .problems: "Active problems"
        case .allergies: "Allergies and intolerances"
        case .medications: "Current medications"
        case .immunizations: "Immunizations"
        case .results: "Recent results"
        case .vitalSigns: "Vital signs"
        }
    }

    /// The IPS section code (LOINC) and its display.
    var loinc: (code: String, display: String) {
        switch self {
        case .problems: ("11450-4", "Problem list - Reported")
        case .allergies: ("48765-2", "Allergies and adverse reactions Document")
        case .medications: ("10160-0", "History of Medication use Narrative")
        case .immunizations: ("11369-6", "History of Immunization Narrative")
        case .results: ("30954-2", "Relevant diagnostic tests/laboratory data Narrative")
        case .vitalSigns: ("8716-3", "Vital signs")
        }
    }

    /// The code of http://hl7.org/fhir/uv/ips/CodeSystem/absent-unknown-uv-ips that an empty
    /// required section carries in its one entry; nil for the sections IPS only recommends, which
    /// are left out when empty.
    var noInformation: (code: String, display: String)? {
        switch self {
        case .problems: ("no-problem-info", "No information about problems")
        case .allergies: ("no-allergy-info", "No information about allergies")
        case .medications: ("no-medication-info", "No information about medications")
        case .immunizations, .results, .vitalSigns: nil
        }
    }

    /// Resource types whose raw FHIR is used as it came for an entry of this section.
    var rawTypes: Set<String> {
        switch self {
        case .problems: ["Condition"]
        case .allergies: ["AllergyIntolerance"]
        case .medications: ["MedicationStatement", "MedicationRequest"]
        case .immunizations: ["Immunization"]
        case .results: ["Observation", "DiagnosticReport"]
        case .vitalSigns: ["Observation"]
        }
    }
}

/// One line of a section as a person reads it: what, a detail (value, dose, reaction), when.
public struct SummaryRow: Sendable, Equatable {
    public let entry: Entry
    public let text: String
    public let detail: String?
    /// The date as recorded, to the day (`2026-11-09`, `2012-05`, `2012`).
    public let date: String?
    /// How the SMART Health Card that brought it was checked, when a card did.
    public var verification: EntryVerification? = nil
}

extension ClinicalSummary {
    public func entries(in section: SummarySection) -> [Entry] {
        switch section {
        case .problems: problems
        case .allergies: allergies
        case .medications: medications
        case .immunizations: immunizations
        case .results: results
        case .vitalSigns: vitalSigns
        }
    }

    /// The export's mapping of measurements, whose values (units in UCUM, HealthKit's fractions as
    /// percentages, blood pressure as its two readings) the summary shows and writes.
    var planner: ExportPlanner {
        ExportPlanner(patientUUID: patient.uuid, options: ExportOptions(), sourceKinds: sourceKinds, now: generated)
    }

    public func rows(_ section: SummarySection) -> [SummaryRow] {
        rowsWithoutChecks(section).map { row in
            var row = row
            row.verification = verifications[row.entry.id]
            return row
        }
    }

    private func rowsWithoutChecks(_ section: SummarySection) -> [SummaryRow] {
        let planner = section == .results || section == .vitalSigns ? self.planner : nil
        return entries(in: section).map { entry in
            let c = entry.content
            func day(_ time: ClinicalTime?) -> String? { time.map { String($0.text.prefix(10)) } }
            func joined(_ parts: [String?]) -> String? {
                let kept = parts.compactMap { $0?.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
                return kept.isEmpty ? nil : kept.joined(separator: "; ")
            }
            switch section {
            case .problems:
                return SummaryRow(entry: entry, text: c.description, detail: nil, date: day(c.start ?? c.date))
            case .allergies:
                return SummaryRow(entry: entry, text: c.description, detail: joined([c.reaction, c.severity]), date: day(c.start ?? c.date))
            case .medications:
                return SummaryRow(entry: entry, text: c.description,
                                  detail: joined([c.dose ?? entry.user.patientDose, entry.user.patientDirections]), date: day(c.start ?? c.date))
            case .immunizations:
                return SummaryRow(entry: entry, text: c.description, detail: nil, date: day(c.effectiveTime))
            case .results, .vitalSigns:
                let draft = planner?.draft(for: entry, withoutLOINC: true)
                // A single number reads as on every other view (ReadableUnits); panels and text as the export maps them.
                let value: String?
                if case .quantity? = draft?.value, let shown = entry.readableQuantity { value = shown.text }
                else { value = draft.flatMap { Self.text(of: $0.value) } ?? entry.displayValue }
                return SummaryRow(entry: entry, text: c.description, detail: value, date: day(c.effectiveTime))
            }
        }
    }

    /// "72 /min", "120/80 mm[Hg]", "109/? mm[Hg]", "22.4 kg/m²", "Never smoker": units as every view
    /// shows them (`ReadableUnits.display` of the UCUM code the export chose).
    static func text(of value: ObservationDraft.Value) -> String? {
        func number(_ q: ObservationDraft.Quantity) -> String { JSONNumber.text(q.value) ?? "null" }
        func unit(_ q: ObservationDraft.Quantity) -> String { q.ucum.map(ReadableUnits.display) ?? q.unit }
        func withUnit(_ text: String, _ unit: String) -> String { unit.isEmpty ? text : text + " " + unit }
        switch value {
        case .none: return nil
        case .text(let text): return text
        case .quantity(let q): return withUnit(number(q), unit(q))
        case .bloodPressure(let systolic, let diastolic):
            var unitText = ""
            func reading(_ c: ObservationDraft.Component) -> String {
                guard case .quantity(let q) = c else { return "?" }
                unitText = unit(q)
                return number(q)
            }
            let text = reading(systolic) + "/" + reading(diastolic)
            return withUnit(text, unitText)
        }
    }
}
