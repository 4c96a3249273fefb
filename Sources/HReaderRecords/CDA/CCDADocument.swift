import Foundation
import HReaderJSON
import HReaderModel

/// A C-CDA, CCD or HITSP C32 clinical document read as the FHIR R4 resources it stands for, mapped
/// as HL7's "C-CDA on FHIR" maps them (docs/records.md, "C-CDA and C32 documents"). Pure: bytes in,
/// resources out. `FHIRMapper.map(files:)` with `.ccda` maps them as any FHIR input.
///
/// ```swift
/// guard CCDADocument.recognizes(data) else { … }
/// let document = try CCDADocument.read(data, what: "ccd.xml")
/// print(document.kind, document.producer ?? "", document.resources.count)   // "C-CDA R2.1 CCD", "Good Health Clinic", 14
/// ```
///
/// Nothing is invented: a negated statement (`negationInd="true"`) becomes a refuted Condition or
/// AllergyIntolerance, a "no known allergies" AllergyIntolerance, a not-done Immunization, or is
/// skipped with the reason; a placeholder (a nullFlavor, "Not on file") is skipped and counted; a
/// section with narrative only is kept as a note (`notes`), never as a coded fact.
public struct CCDADocument: Sendable {
    /// "C-CDA R2.1 CCD", "C-CDA R1.1 CCD", "HITSP C32", "CCD 1.0", or the document's type by its
    /// templateId or code ("C-CDA R2.1 Discharge Summary", "CDA document: Summarization of episode note").
    public var kind: String
    /// The custodian organization's name, else the first author's organization.
    public var producer: String?
    /// The document's effectiveTime as FHIR.
    public var date: String?
    /// What each section gave: imported and skipped with reasons, in document order.
    public var sections: [Section]
    /// Patient first, then the clinical resources, as FHIR R4 JSON objects.
    public var resources: [JSONObject]
    /// Sections with narrative only (no entries): their text, kept as entries of the section's kind.
    public var notes: [Note]

    public struct Section: Sendable, Equatable {
        /// The kind hreader read it as (`problems`, `vital signs`), or nil for a section it does not read.
        public var kind: String?
        public var title: String
        public var imported = 0
        /// Reason → count.
        public var skipped: [String: Int] = [:]
        /// The section had narrative only, kept as a note (counted in `imported`).
        public var keptNarrative = false

        /// "Problems: 3 imported, 1 skipped" (the reasons are in `skipped`).
        public var summary: String {
            var line = "\(title): \(imported) imported"
            if keptNarrative { line = "\(title): " + (skipped.isEmpty ? "narrative only, kept as a note" : "narrative kept as a note") }
            let count = skipped.values.reduce(0, +)
            if count > 0 {
                line += ", \(count) skipped"
            }
            return line
        }
    }

    /// A section's narrative, for a section with no entries to read.
    public struct Note: Sendable, Equatable {
        public var id: String
        public var type: EntryType
        public var title: String
        public var sectionCode: String?
        public var text: String
    }

    static let hl7 = CDAElement.hl7Namespace

    /// Whether the bytes are a CDA document: a root `ClinicalDocument` in the `urn:hl7-org:v3`
    /// namespace (a UTF-8 BOM, CRLF line ends, a prolog and comments before it are fine).
    public static func recognizes(_ data: Data) -> Bool {
        if let doctype = XMLTextReader.doctype(in: data), doctype.hasInternalSubset {
            // Not parsed for recognition: read() refuses it with the reason.
            return String(decoding: data.prefix(64 << 10), as: UTF8.self).contains("<ClinicalDocument")
        }
        // The root's start tag comes early: libxml2 need not see (nor copy) a whole embedded PDF to find it.
        guard let root = CDAElement.rootName(data.prefix(1 << 20)) else { return false }
        return root.name == "ClinicalDocument" && root.namespace == hl7
    }

    /// Reads and maps a document. Throws `RecordsError.malformed` when it is not well-formed XML,
    /// breaks the XML policy, or is not a CDA document with a patient.
    public static func read(_ data: Data, what: String) throws -> CCDADocument {
        let root = try CDAElement.read(data, what: what)
        guard root.name == "ClinicalDocument", root.namespace == hl7 else {
            throw RecordsError.malformed("\(what) is not a CDA document (its root is <\(root.name)>, not ClinicalDocument in urn:hl7-org:v3)")
        }
        var mapper = CCDAMapping(root: root, what: what)
        try mapper.run()
        return CCDADocument(kind: kind(of: root), producer: producer(of: root), date: CCDAValues.fhirDateTime(root.child("effectiveTime")?[attribute: "value"]),
                            sections: mapper.sections, resources: mapper.resources, notes: mapper.notes)
    }

    // MARK: - Header

    /// Document templates: root (and extension) → name.
    static let documentTemplates: [(root: String, name: String)] = [
        ("2.16.840.1.113883.10.20.22.1.2", "CCD"), ("2.16.840.1.113883.10.20.22.1.8", "Discharge Summary"),
        ("2.16.840.1.113883.10.20.22.1.14", "Referral Note"), ("2.16.840.1.113883.10.20.22.1.9", "Progress Note"),
        ("2.16.840.1.113883.10.20.22.1.4", "Consultation Note"), ("2.16.840.1.113883.10.20.22.1.3", "History and Physical"),
        ("2.16.840.1.113883.10.20.22.1.13", "Transfer Summary"), ("2.16.840.1.113883.10.20.22.1.15", "Care Plan"),
        ("2.16.840.1.113883.10.20.22.1.7", "Operative Note"), ("2.16.840.1.113883.10.20.22.1.6", "Procedure Note"),
        ("2.16.840.1.113883.10.20.22.1.5", "Diagnostic Imaging Report"), ("2.16.840.1.113883.10.20.22.1.10", "Unstructured Document"),
    ]

    static func kind(of root: CDAElement) -> String {
        let templates = root.all("templateId")
        func has(_ id: String) -> Bool { templates.contains { $0[attribute: "root"] == id } }
        for (id, name) in documentTemplates {
            guard let template = templates.first(where: { $0[attribute: "root"] == id }) else { continue }
            let version: String
            switch template[attribute: "extension"] {
            case "2015-08-01"?: version = "R2.1"
            case "2014-06-09"?: version = "R2.0"
            case let other? where other.hasPrefix("2024") || other.hasPrefix("2023") || other.hasPrefix("2022"): version = "R3.0"
            case nil: version = "R1.1"
            case let other?: version = "(\(other))"
            }
            return "C-CDA \(version) \(name)"
        }
        if has("2.16.840.1.113883.3.88.11.32.1") { return "HITSP C32" }
        if has("2.16.840.1.113883.10.20.1") { return "CCD 1.0" }
        if has("2.16.840.1.113883.10.20.22.1.1") { return "C-CDA document" }
        let type = root.child("code").flatMap { $0[attribute: "displayName"] ?? $0[attribute: "code"] }
        return "CDA document" + (type.map { ": \($0)" } ?? "")
    }

    static func producer(of root: CDAElement) -> String? {
        let custodian = root.at("custodian/assignedCustodian/representedCustodianOrganization/name")
        if let name = custodian.flatMap({ nonEmpty($0.plainText) }) { return name }
        for author in root.all("author") {
            if let name = author.at("assignedAuthor/representedOrganization/name").flatMap({ nonEmpty($0.plainText) }) { return name }
        }
        return nil
    }
}
