import Foundation

/// The `METADATA.XML` of an IHE XDM package (the zip a patient portal's "download" or "transmit"
/// gives: `IHE_XDM/SUBSET01/METADATA.XML` beside `DOC0001.XML`, a stylesheet and a README). It is an
/// ebXML `SubmitObjectsRequest`; each document is an `ExtrinsicObject` whose slots give its file
/// (`URI`, relative to the metadata's folder), `size` in bytes and `hash` (SHA-1, hex).
///
///     let documents = try XDMMetadata.documents(in: metadataBytes)
///     for document in documents { print(document.uri, document.size ?? -1) }
public enum XDMMetadata {
    public struct Document: Equatable, Sendable {
        /// The document's path relative to the metadata's folder.
        public var uri: String
        public var size: Int?
        /// SHA-1 of the document's bytes, lower-case hex.
        public var sha1: String?
        public var mimeType: String?

        public init(uri: String, size: Int? = nil, sha1: String? = nil, mimeType: String? = nil) {
            self.uri = uri; self.size = size; self.sha1 = sha1; self.mimeType = mimeType
        }
    }

    /// The documents the metadata names, in order. Throws `RecordsError.malformed` for XML that is
    /// not well-formed or declares entities (read under `XMLPolicy`).
    public static func documents(in data: Data) throws -> [Document] {
        let what = "the XDM METADATA.XML"
        if let doctype = XMLTextReader.doctype(in: data), doctype.hasInternalSubset {
            throw RecordsError.malformed("\(what) declares entities (a DOCTYPE at line \(doctype.line)); refusing it")
        }
        let reader = try XMLTextReader(data, what: what)
        var documents: [Document] = []
        var current: Document?
        var slot: String?
        var values: [String] = []
        var inValue = false
        var text = ""
        while try reader.read() {
            switch reader.nodeType {
            case .entityReference, .entity:
                throw RecordsError.malformed("\(what) uses an entity reference at line \(reader.line); refusing it")
            case .elementStart:
                switch reader.localName {
                case "ExtrinsicObject":
                    let attributes = reader.attributes()
                    current = Document(uri: "", mimeType: attributes.first { $0.localName == "mimeType" }?.value)
                    if reader.isEmptyElement { current = nil }
                case "Slot" where current != nil:
                    slot = reader.attributes().first { $0.localName == "name" }?.value
                    values = []
                    if reader.isEmptyElement { slot = nil }
                case "Value" where slot != nil:
                    inValue = !reader.isEmptyElement
                    text = ""
                    if reader.isEmptyElement { values.append("") }
                default:
                    break
                }
            case .text, .cdata, .significantWhitespace, .whitespace:
                if inValue { text += reader.value }
            case .elementEnd:
                switch reader.localName {
                case "Value" where inValue:
                    values.append(text.trimmingCharacters(in: .whitespacesAndNewlines))
                    inValue = false
                case "Slot" where slot != nil:
                    if current != nil { apply(slot!, values, to: &current!) }
                    slot = nil
                case "ExtrinsicObject":
                    if let document = current, !document.uri.isEmpty { documents.append(document) }
                    current = nil
                default:
                    break
                }
            default:
                break
            }
        }
        return documents
    }

    private static func apply(_ slot: String, _ values: [String], to document: inout Document) {
        switch slot {
        case "URI":
            // XDS splits a long URI over numbered values: "1|http://…", "2|…"; a plain value is the URI.
            let numbered = values.compactMap { value -> (Int, String)? in
                guard let bar = value.firstIndex(of: "|"), let n = Int(value[..<bar]) else { return nil }
                return (n, String(value[value.index(after: bar)...]))
            }
            document.uri = numbered.count == values.count && !numbered.isEmpty
                ? numbered.sorted { $0.0 < $1.0 }.map(\.1).joined() : (values.first ?? "")
        case "size":
            document.size = values.first.flatMap { Int($0) }
        case "hash":
            document.sha1 = values.first?.lowercased()
        default:
            break
        }
    }
}
