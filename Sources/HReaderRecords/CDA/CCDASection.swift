import HReaderModel

/// The sections of a CDA document hreader reads, each known by its template ids (C-CDA R1.1/R2.x
/// with entries required `…22.2.x.1` and optional `…22.2.x`, CCD 1.0 `…10.20.1.x`, HITSP C83 as
/// used by C32, IHE PCC) and by its LOINC section code, for documents that leave templateIds out.
/// The table is data: to read another section's ids, add them to its line.
enum CCDASectionKind: String, CaseIterable, Sendable {
    case problems, allergies, medications, immunizations, results, vitalSigns = "vital signs", procedures, encounters
    case socialHistory = "social history", planOfCare = "plan of care", functionalStatus = "functional status"

    var templates: Set<String> {
        let ccda = "2.16.840.1.113883.10.20.22.2.", ccd = "2.16.840.1.113883.10.20.1.", c83 = "2.16.840.1.113883.3.88.11.83.",
            ihe = "1.3.6.1.4.1.19376.1.5.3.1."
        return switch self {
        case .problems: [ccda + "5", ccda + "5.1", ccd + "11", c83 + "103", ihe + "3.6"]
        case .allergies: [ccda + "6", ccda + "6.1", ccd + "2", c83 + "102", ihe + "3.13"]
        case .medications: [ccda + "1", ccda + "1.1", ccda + "11", ccda + "11.1", ccda + "38", ccd + "8", c83 + "112", ihe + "3.19"]
        case .immunizations: [ccda + "2", ccda + "2.1", ccd + "6", c83 + "117", ihe + "3.23"]
        case .results: [ccda + "3", ccda + "3.1", ccd + "14", c83 + "122", ihe + "3.28"]
        case .vitalSigns: [ccda + "4", ccda + "4.1", ccd + "16", c83 + "119", ihe + "3.25", ihe + "1.5.3.2"]
        case .procedures: [ccda + "7", ccda + "7.1", ccd + "12", c83 + "108", ihe + "3.12"]
        case .encounters: [ccda + "22", ccda + "22.1", ccd + "3", c83 + "127", ihe + "1.5.3.3"]
        case .socialHistory: [ccda + "17", ccd + "15", c83 + "126", ihe + "3.16.1"]
        case .planOfCare: [ccda + "10", ccd + "10", c83 + "124", ihe + "3.31"]
        case .functionalStatus: [ccda + "14", ccd + "5"]
        }
    }

    /// LOINC section codes.
    var codes: Set<String> {
        switch self {
        case .problems: ["11450-4"]
        case .allergies: ["48765-2"]
        case .medications: ["10160-0", "10183-2", "29549-3"]
        case .immunizations: ["11369-6"]
        case .results: ["30954-2"]
        case .vitalSigns: ["8716-3"]
        case .procedures: ["47519-4"]
        case .encounters: ["46240-8"]
        case .socialHistory: ["29762-2"]
        case .planOfCare: ["18776-5"]
        case .functionalStatus: ["47420-5"]
        }
    }

    /// The entry type a narrative-only section of this kind is kept as.
    var entryType: EntryType {
        switch self {
        case .problems: .condition
        case .allergies: .allergy
        case .medications: .medication
        case .immunizations: .immunization
        case .results: .result
        case .vitalSigns: .vitalSign
        case .procedures: .procedure
        case .encounters: .encounter
        case .socialHistory, .planOfCare, .functionalStatus: .observation
        }
    }

    var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }

    /// The kind of a section: by its templateIds first, else by its LOINC code.
    static func of(_ section: CDAElement) -> CCDASectionKind? {
        let roots = Set(section.all("templateId").compactMap { $0[attribute: "root"] })
        if let kind = allCases.first(where: { !$0.templates.isDisjoint(with: roots) }) { return kind }
        guard let code = section.child("code"), let value = code[attribute: "code"] else { return nil }
        let system = code[attribute: "codeSystem"]
        guard system == nil || system == "2.16.840.1.113883.6.1" else { return nil }
        return allCases.first { $0.codes.contains(value) }
    }
}
