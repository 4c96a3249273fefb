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
    /// `0`, empty, `none`, a nullFlavor's code (`ASKU`, `NAV`, `NASK`, `OTH`, `MSK`, `NP`, `UNC`, …),
    /// dashes, in any case. Such a value is never kept as a code: four allergies whose substance
    /// code is `Unknown` are four allergies, not one.
    public static func isPlaceholder(_ code: String) -> Bool {
        // Read as bytes: this runs for every code of every entry a regrouping reads. A real code is
        // mostly digits or longer than any placeholder, and leaves at the first test.
        var bytes = Array(code.utf8.prefix(24))
        while let first = bytes.first, first == 0x20 || first == 0x09 || first == 0x0a || first == 0x0d { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 || last == 0x0a || last == 0x0d { bytes.removeLast() }
        if bytes.isEmpty { return code.utf8.count <= 24 }
        guard code.utf8.count <= 24, bytes.count <= 16 else { return false }
        if bytes.allSatisfy({ $0 == UInt8(ascii: "0") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }) { return true }
        if bytes.contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) { return false }
        let lowered = String(decoding: bytes.map { $0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0 }, as: UTF8.self)
        return placeholders.contains(lowered)
    }

    /// nullFlavor codes that stand for no value (not the quantity ones: `TRC`, `PINF`, `NINF`, `QS`),
    /// and the words vendors write in their place; lower-cased.
    static let placeholders: Set<String> = [
        "ni", "na", "unk", "asku", "nav", "nask", "navu", "msk", "oth", "inv", "unc", "np", "der",
        "unknown", "n/a", "n.a.", "none", "null", "nil", "nullflavor", "not applicable", "not available", "-", "--", "?", "tbd",
    ]
}
