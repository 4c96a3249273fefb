import HReaderModel

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
    package var noInformation: (code: String, display: String)? {
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
/// `ClinicalSummary.rows` makes them, with values in the units every view shows (`ReadableUnits`).
public struct SummaryRow: Sendable, Equatable {
    public let entry: Entry
    public let text: String
    public let detail: String?
    /// The date as recorded, to the day (`2026-11-09`, `2012-05`, `2012`).
    public let date: String?
    /// How the SMART Health Card that brought it was checked, when a card did.
    public var verification: EntryVerification? = nil

    package init(entry: Entry, text: String, detail: String?, date: String?, verification: EntryVerification? = nil) {
        self.entry = entry; self.text = text; self.detail = detail; self.date = date; self.verification = verification
    }
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
    package var planner: ExportPlanner {
        ExportPlanner(patientUUID: patient.uuid, options: ExportOptions(), sourceKinds: sourceKinds, now: generated)
    }
}
