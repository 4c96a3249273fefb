import Foundation

/// One element of a CDA document as `CDAElement.read` hands the tree over: mixed content is kept in
/// order, as ElementTree does (`text` before the first child, each child's `tail` after it), because
/// a CDA narrative (`section/text`) is XHTML-like markup with text between its elements.
struct CDAElement {
    var name: String
    var namespace: String?
    /// Every attribute but namespace declarations, with its namespace (`xsi:type` has the schema
    /// instance namespace, `sdtc:valueSet` the SDTC one).
    var attributes: [(name: String, namespace: String?, value: String)]
    var text = ""
    var tail = ""
    var children: [CDAElement] = []
    /// The line where the element starts, for messages.
    var line: Int

    static let hl7Namespace = "urn:hl7-org:v3"
    static let instanceNamespace = "http://www.w3.org/2001/XMLSchema-instance"

    /// An attribute of no namespace (`code`, `root`, `value`).
    subscript(attribute name: String) -> String? {
        attributes.first { $0.name == name && $0.namespace == nil }?.value
    }

    /// `xsi:type` without a prefix (`CD`, `PQ`, `IVL_TS`).
    var instanceType: String? {
        guard let value = attributes.first(where: { $0.name == "type" && $0.namespace == Self.instanceNamespace })?.value else { return nil }
        return value.split(separator: ":").last.map(String.init)
    }

    /// The first child of that name in the HL7 v3 namespace.
    func child(_ name: String) -> CDAElement? {
        children.first { $0.name == name && $0.namespace == Self.hl7Namespace }
    }

    /// Every child of that name in the HL7 v3 namespace.
    func all(_ name: String) -> [CDAElement] {
        children.filter { $0.name == name && $0.namespace == Self.hl7Namespace }
    }

    /// The element at a path of child names (`patientRole/patient/name`), first match at each step.
    func at(_ path: String) -> CDAElement? {
        var current: CDAElement? = self
        for step in path.split(separator: "/") { current = current?.child(String(step)) }
        return current
    }

    func hasTemplate(_ root: String) -> Bool {
        all("templateId").contains { $0[attribute: "root"] == root }
    }

    var nullFlavor: String? { self[attribute: "nullFlavor"] }
    var isNegated: Bool { self[attribute: "negationInd"]?.lowercased() == "true" }

    /// Every text of the element and its descendants in document order, whitespace folded; block
    /// elements of a narrative (paragraph, row, list item, line break) end a line, table cells are
    /// separated by " | ".
    var plainText: String {
        var out = ""
        appendText(to: &out)
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        }
        var result: [String] = []
        for line in lines {
            let trimmed = line.trimmingCharacters(in: CharacterSet(charactersIn: " |"))
            if !trimmed.isEmpty { result.append(trimmed) }
        }
        return result.joined(separator: "\n")
    }

    /// The narrative without its table headers and captions: empty when a table has headers only.
    var plainTextWithoutHeaders: String {
        var copy = self
        copy.removeHeaders()
        return copy.plainText
    }

    private mutating func removeHeaders() {
        children.removeAll { ["thead", "th", "caption"].contains($0.name) }
        for index in children.indices { children[index].removeHeaders() }
    }

    private static let blockNames: Set<String> = ["paragraph", "tr", "item", "br", "caption", "list", "table", "thead", "tbody", "tfoot"]

    /// Line ends in the source are layout, not text: only block elements end a line.
    private func appendText(to out: inout String) {
        out += Self.flattened(text)
        for child in children {
            if child.name == "td" || child.name == "th" { out += " | " }
            child.appendText(to: &out)
            if Self.blockNames.contains(child.name) { out += "\n" }
            out += Self.flattened(child.tail)
        }
    }

    private static func flattened(_ text: String) -> String {
        text.contains(where: \.isNewline) ? String(text.map { $0.isNewline ? " " : $0 }) : text
    }

    // MARK: - Reading

    /// The most a CDA document may be: an embedded PDF (`nonXMLBody`) makes documents large.
    static let maxBytes = 128 << 20
    /// CDA nests entries in entryRelationships in organizers in sections in sections, and its
    /// narrative nests tables in lists; libxml2 itself stops at 256 without XML_PARSE_HUGE.
    static let maxDepth = 160
    /// How many elements a document may have (a guard against a tree that would not fit in memory).
    static let maxElements = 2_000_000

    /// Reads a document into its element tree with libxml2's reader under `XMLPolicy`: no network,
    /// no DTD loading, no entity substitution, never `XML_PARSE_HUGE`; a DOCTYPE that declares
    /// anything and every entity reference are refused; the size, the depth and the number of
    /// elements are bounded. Comments and processing instructions are passed over.
    static func read(_ data: Data, what: String) throws -> CDAElement {
        guard !data.isEmpty else { throw RecordsError.malformed("\(what) is empty") }
        guard data.count <= maxBytes else {
            throw RecordsError.malformed("\(what) is \(data.count) bytes, more than the \(maxBytes) hreader reads")
        }
        if let doctype = XMLTextReader.doctype(in: data), doctype.hasInternalSubset {
            throw RecordsError.malformed("\(what) has a DOCTYPE that declares entities or elements (line \(doctype.line)): refused")
        }
        let reader = try XMLTextReader(data, what: what)
        var stack: [CDAElement] = []
        var root: CDAElement?
        var count = 0
        func finish(_ element: CDAElement) {
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }
        func appendText(_ text: String) {
            guard !stack.isEmpty else { return }
            let last = stack.count - 1
            if let child = stack[last].children.indices.last {
                stack[last].children[child].tail += text
            } else {
                stack[last].text += text
            }
        }
        while try reader.read() {
            switch reader.nodeType {
            case .elementStart:
                guard stack.count < maxDepth else {
                    throw RecordsError.malformed("\(what) nests elements deeper than \(maxDepth) (line \(reader.line))")
                }
                guard root == nil else { throw RecordsError.malformed("\(what) has content after its root element (line \(reader.line))") }
                count += 1
                guard count <= maxElements else {
                    throw RecordsError.malformed("\(what) has more than \(maxElements) elements")
                }
                let attributes = reader.attributes().filter { !$0.isNamespaceDeclaration }.map {
                    (name: $0.localName, namespace: $0.namespaceURI, value: $0.value)
                }
                let element = CDAElement(name: reader.localName, namespace: reader.namespaceURI, attributes: attributes, line: reader.line)
                if reader.isEmptyElement { finish(element) } else { stack.append(element) }
            case .elementEnd:
                finish(stack.removeLast())
            case .text, .cdata, .whitespace, .significantWhitespace:
                appendText(reader.value)
            case .entityReference, .entity:
                throw RecordsError.malformed("\(what) uses an entity at line \(reader.line): refused")
            case .documentType:
                if reader.documentTypeDeclaresAnything {
                    throw RecordsError.malformed("\(what) has a DOCTYPE that declares entities or elements (line \(reader.line)): refused")
                }
            default:  // comments, processing instructions
                continue
            }
        }
        guard let root else { throw RecordsError.malformed("\(what) holds no element") }
        return root
    }

    /// The root element's name and namespace, read no further than its start tag; nil when the
    /// bytes are not XML up to there.
    static func rootName(_ data: Data) -> (name: String, namespace: String?)? {
        guard !data.isEmpty, let reader = try? XMLTextReader(data, what: "the document") else { return nil }
        while (try? reader.read()) == true {
            switch reader.nodeType {
            case .elementStart: return (reader.localName, reader.namespaceURI)
            case .entityReference, .entity: return nil
            default: continue
            }
        }
        return nil
    }
}
