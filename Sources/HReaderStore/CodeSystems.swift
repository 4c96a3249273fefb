import Foundation

/// What a code in an entry's `codes` is worth for telling facts apart (FactGrouping) and for keeping
/// (the mappers): a placeholder value says nothing, and only a code of a standard terminology names
/// the same thing wherever it is written.
public enum CodeSystems {
    /// The `codes` keys (FHIR short names, hData names, system URIs and OIDs) of the terminologies
    /// whose codes mean one thing everywhere: SNOMED CT, RxNorm, LOINC, CVX, UNII, NDC, ICD, CPT.
    /// A local or unnamed system's code (`Unknown`, `urn:oid:<a hospital's>`) may mean anything.
    public static func isTerminology(_ system: String) -> Bool {
        terminologies.contains(system) || terminologies.contains(system.uppercased())
    }

    static let terminologies: Set<String> = [
        "LOINC", "SNOMED-CT", "SNOMED CT", "SNOMEDCT", "SNOMED", "RXNORM", "RxNorm", "CVX", "UNII", "NDC",
        "ICD-9-CM", "ICD-10-CM", "ICD-10", "ICD-9", "ICD-10-PCS", "ICD9", "ICD10", "CPT", "HCPCS",
        "http://loinc.org", "http://snomed.info/sct", "http://www.nlm.nih.gov/research/umls/rxnorm", "http://hl7.org/fhir/sid/cvx",
        "http://fdasis.nlm.nih.gov", "http://hl7.org/fhir/sid/ndc", "http://hl7.org/fhir/sid/icd-10-cm", "http://hl7.org/fhir/sid/icd-10",
        "http://hl7.org/fhir/sid/icd-9-cm", "http://www.ama-assn.org/go/cpt", "http://www.cms.gov/Medicare/Coding/ICD10",
        "http://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets",
        "urn:oid:2.16.840.1.113883.6.1", "urn:oid:2.16.840.1.113883.6.96", "urn:oid:2.16.840.1.113883.6.88",
        "urn:oid:2.16.840.1.113883.12.292", "urn:oid:2.16.840.1.113883.6.59", "urn:oid:2.16.840.1.113883.4.9",
        "urn:oid:2.16.840.1.113883.6.69", "urn:oid:2.16.840.1.113883.6.90", "urn:oid:2.16.840.1.113883.6.3",
        "urn:oid:2.16.840.1.113883.6.103", "urn:oid:2.16.840.1.113883.6.2", "urn:oid:2.16.840.1.113883.6.12",
        "urn:oid:2.16.840.1.113883.6.4", "urn:oid:2.16.840.1.113883.6.285",
    ]

    /// Whether a code value says only that there is no code: `Unknown`, `UNK`, `NI`, `NA`, `N/A`,
    /// `0`, empty, `none`, a nullFlavor (`ASKU`, `NAV`, `NASK`, `OTH`, `MSK`, `NP`, `UNC`, `NINF`,
    /// `PINF`), dashes, in any case. Such a value is never kept as a code: four allergies whose substance
    /// code is `Unknown` are four allergies, not one.
    public static func isPlaceholder(_ code: String) -> Bool {
        let trimmed = code.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return true }
        guard trimmed.count <= 16 else { return false }
        if trimmed.allSatisfy({ $0 == "0" || $0 == "-" || $0 == "." }) { return true }
        return placeholders.contains(trimmed.lowercased())
    }

    static let placeholders: Set<String> = [
        "unknown", "unk", "ni", "na", "n/a", "n.a.", "none", "null", "nil", "nullflavor", "not applicable", "not available",
        "asku", "nav", "nask", "oth", "msk", "np", "unc", "ninf", "pinf", "?",
    ]
}
