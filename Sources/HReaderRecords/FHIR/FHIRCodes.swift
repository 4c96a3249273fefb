import HReaderModel
import Foundation

/// Code systems: FHIR system URIs (and their OIDs) to the short names hReader's records use, so
/// codes from FHIR and from RHEx sit under the same keys. Unknown systems keep their URI. And the
/// codes that are none.
enum FHIRCodes {
    static let shortNames: [String: String] = [
        "http://loinc.org": "LOINC",
        "http://snomed.info/sct": "SNOMED-CT",
        "http://www.nlm.nih.gov/research/umls/rxnorm": "RxNorm",
        "http://hl7.org/fhir/sid/cvx": "CVX",
        "http://hl7.org/fhir/sid/icd-10-cm": "ICD-10-CM",
        "http://hl7.org/fhir/sid/icd-10": "ICD-10",
        "http://hl7.org/fhir/sid/icd-9-cm": "ICD-9-CM",
        "http://www.ama-assn.org/go/cpt": "CPT",
        "http://hl7.org/fhir/sid/ndc": "NDC",
        "urn:oid:2.16.840.1.113883.6.1": "LOINC",
        "urn:oid:2.16.840.1.113883.6.96": "SNOMED-CT",
        "urn:oid:2.16.840.1.113883.6.88": "RxNorm",
        "urn:oid:2.16.840.1.113883.12.292": "CVX",
        "urn:oid:2.16.840.1.113883.6.90": "ICD-10-CM",
        "urn:oid:2.16.840.1.113883.6.103": "ICD-9-CM",
        "urn:oid:2.16.840.1.113883.6.12": "CPT",
    ]

    /// The key under which a coding's code is kept; `Unknown` (as in hData) for a coding without a system.
    static func key(forSystem system: String?) -> String {
        guard let system, !system.isEmpty else { return "Unknown" }
        return shortNames[system] ?? system
    }

    /// Whether a code is a placeholder where a vendor had none: a placeholder value
    /// (`CodeSystems.isPlaceholder`: empty, `Unknown`, `UNK`, `N/A`, zeros, a nullFlavor's code, in
    /// any case) or any placeholder text (`CCDAValues.isPlaceholderText`). Such a code is never an
    /// entry's code, from C-CDA or FHIR: one vendor codes four different allergens `Unknown` in UNII,
    /// which would make them one coded fact. The coding's display still names the entry. (The
    /// grouping of facts reads the value part alone from the vault, for entries stored before.)
    static func isPlaceholder(code: String) -> Bool {
        // Most codes are numbers (LOINC, SNOMED CT, RxNorm, CVX): nothing to fold.
        if let first = code.utf8.first, first >= UInt8(ascii: "1"), first <= UInt8(ascii: "9") { return false }
        return CodeSystems.isPlaceholder(code) || CCDAValues.isPlaceholderText(code)
    }

    /// LOINC codes of blood-pressure observations.
    static let bloodPressurePanels: Set<String> = ["85354-9", "55284-4", "35094-2"]
    static let systolic = "8480-6"
    static let diastolic = "8462-4"
}
