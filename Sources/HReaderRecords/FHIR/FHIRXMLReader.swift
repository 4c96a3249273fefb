import Foundation

/// One element of an XML document, as `FHIRXMLReader` hands the tree over.
struct XMLNode {
    var name: String
    var namespace: String?
    /// Attributes without a namespace (`value`, `id`, `url`), in document order.
    var attributes: [(name: String, value: String)]
    var children: [XMLNode] = []
    /// The line where the element starts, for messages.
    var line: Int
    /// An XHTML `div` (a narrative): the element itself written out as XML text.
    var xhtml: String?

    func attribute(_ name: String) -> String? { attributes.first { $0.name == name }?.value }
}

/// Reads an XML document into a tree of elements with libxml2's reader. Safe on hostile input: no
/// DOCTYPE at all (FHIR XML never has one; this also shuts out entity declarations, external
/// entities and entity expansion bombs), no network, no DTD loading, no entity substitution, never
/// `XML_PARSE_HUGE`; the size and the nesting depth are bounded. Text outside an XHTML narrative is
/// refused (FHIR XML keeps every value in a `value` attribute).
enum FHIRXMLReader {
    static let maxBytes = 256 << 20
    /// Deeper than `XMLPolicy.maxDepth`: FHIR nests datatypes in backbone elements in resources in
    /// Bundles, and narratives nest tables; libxml2 itself stops at 256 without XML_PARSE_HUGE.
    static let maxDepth = 200
    static let xhtmlNamespace = "http://www.w3.org/1999/xhtml"

    static func read(_ data: Data) throws -> XMLNode {
        guard !data.isEmpty else { throw RecordsError.malformed("the FHIR XML is empty") }
        guard data.count <= maxBytes else {
            throw RecordsError.malformed("the FHIR XML is \(data.count) bytes, more than the \(maxBytes) hreader reads")
        }
        if let line = XMLTextReader.doctype(in: data)?.line {
            throw RecordsError.malformed("the FHIR XML has a DOCTYPE (line \(line)): refused (FHIR XML has none, and a DTD can declare entities)")
        }
        let reader = try XMLTextReader(data, what: "the FHIR XML")
        var stack: [XMLNode] = []
        var root: XMLNode?
        func finish(_ node: XMLNode) {
            if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
        }
        while try reader.read() {
            switch reader.nodeType {
            case .elementStart:
                guard stack.count < maxDepth else {
                    throw RecordsError.malformed("the FHIR XML nests elements deeper than \(maxDepth) (line \(reader.line))")
                }
                var node = element(reader)
                let empty = reader.isEmptyElement
                if node.namespace == xhtmlNamespace, node.name == "div", !stack.isEmpty {
                    node.xhtml = try xhtml(reader, empty: empty, depth: stack.count)
                    finish(node)
                } else if empty {
                    finish(node)
                } else {
                    stack.append(node)
                }
            case .elementEnd:
                finish(stack.removeLast())
            case .text, .cdata:
                if !reader.value.allSatisfy(\.isWhitespace) {
                    let inside = stack.last.map { "<\($0.name)>" } ?? "the document"
                    throw RecordsError.malformed("the FHIR XML has text in \(inside) at line \(reader.line): FHIR XML keeps values in value attributes")
                }
            case .entityReference, .entity:
                throw RecordsError.malformed("the FHIR XML uses an entity at line \(reader.line): refused")
            case .documentType:  // when the byte scan could not see it, as in UTF-16
                throw RecordsError.malformed("the FHIR XML has a DOCTYPE (line \(reader.line)): refused")
            default:  // comments, processing instructions, whitespace
                continue
            }
        }
        guard let root else { throw RecordsError.malformed("the FHIR XML holds no element") }
        return root
    }

    private static func element(_ reader: XMLTextReader) -> XMLNode {
        // Namespace declarations and attributes of other namespaces (xsi:schemaLocation) carry no FHIR data.
        let attributes = reader.attributes().filter { !$0.isNamespaceDeclaration && $0.namespaceURI == nil }.map { ($0.localName, $0.value) }
        return XMLNode(name: reader.localName, namespace: reader.namespaceURI, attributes: attributes, line: reader.line)
    }

    /// An XHTML narrative written out as XML text, as FHIR JSON carries it: the `div` with its XHTML
    /// namespace declared, its descendants, their attributes and text (comments left out). Reads up
    /// to the end of the `div`.
    private static func xhtml(_ reader: XMLTextReader, empty: Bool, depth: Int) throws -> String {
        var out = "<div xmlns=\"\(xhtmlNamespace)\"" + xhtmlAttributes(reader) + (empty ? "/>" : ">")
        guard !empty else { return out }
        let divDepth = reader.depth
        while try reader.read() {
            switch reader.nodeType {
            case .elementStart:
                guard depth + reader.depth - divDepth < maxDepth else {
                    throw RecordsError.malformed("the FHIR XML nests elements deeper than \(maxDepth) (line \(reader.line))")
                }
                out += "<\(reader.name)" + xhtmlAttributes(reader) + (reader.isEmptyElement ? "/>" : ">")
            case .elementEnd:
                out += "</\(reader.name)>"
                if reader.depth == divDepth { return out }
            case .text, .cdata, .whitespace, .significantWhitespace:
                escape(reader.value, into: &out, quote: false)
            case .entityReference, .entity:
                throw RecordsError.malformed("the FHIR XML uses an entity at line \(reader.line): refused")
            default:
                continue
            }
        }
        throw RecordsError.malformed("the FHIR XML ends inside a narrative div")
    }

    /// ` name="value"` for each attribute but namespace declarations.
    private static func xhtmlAttributes(_ reader: XMLTextReader) -> String {
        var out = ""
        for attribute in reader.attributes() where !attribute.isNamespaceDeclaration {
            out += " \(attribute.name)=\""
            escape(attribute.value, into: &out, quote: true)
            out += "\""
        }
        return out
    }

    private static func escape(_ text: String, into out: inout String, quote: Bool) {
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quote: out += "&quot;"
            default: out.append(character)
            }
        }
    }
}
