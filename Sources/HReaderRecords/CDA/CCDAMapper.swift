import Foundation
import HReaderJSON
import HReaderModel

extension FHIRMapper {
    /// A C-CDA/C32 document, as `FHIRMapper.map(files:)` reads it with `.ccda`: its resources join the
    /// input as any FHIR resources; its narrative-only sections join it as notes of the document's
    /// patient. Returns the document without its resources (kind, producer, sections' counts).
    static func addCCDA(_ data: Data, into input: inout FHIRInput, what name: String) throws -> CCDADocument {
        var document = try CCDADocument.read(data, what: name)
        for (i, resource) in document.resources.enumerated() {
            try input.add(resource, path: "\(name): \(resource["resourceType"]?.string ?? "resource")[\(i)]", fullUrl: nil)
        }
        if let patient = document.resources.first?["id"]?.string {
            for note in document.notes {
                var entry = noteEntry(note)
                entry.input = input.file
                input.notes.append(("Patient/\(patient)", entry))
            }
        }
        document.resources = []
        return document
    }

    /// The status of a note that keeps a section's narrative: no clinical status, and never a current
    /// problem, allergy or medication, nor a given immunization.
    public static let narrativeStatus = "narrative"

    /// A narrative-only section as an entry of the section's kind: its description says it is the
    /// section's narrative, its value is the text; no code of a clinical fact (only the section's LOINC code).
    static func noteEntry(_ note: CCDADocument.Note) -> MappedEntry {
        var content = EntryContent(type: note.type, description: "\(note.title): the document's section narrative (no coded entries)",
                                   status: narrativeStatus,
                                   codes: note.sectionCode.flatMap { FHIRCodes.isPlaceholder(code: $0) ? nil : ["LOINC": [$0]] } ?? [:])
        content.valueText = note.text
        var raw: [JSONObject.Member] = [("cda_section", .string(note.title))]
        if let code = note.sectionCode { raw.append(("code", .string(code))) }
        raw.append(("text", .string(note.text)))
        content.raw = JSONValue.object(JSONObject(raw)).serialized()
        return MappedEntry(remoteID: "narrative/\(note.id)", content: content)
    }
}
