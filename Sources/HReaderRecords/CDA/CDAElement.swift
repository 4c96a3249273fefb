import Foundation

/// One element of a CDA document, as `CDAElement.read` hands the tree over: a view into the
/// document's `CDATree`, so that walking the tree copies nothing. Mixed content is kept in order,
/// as ElementTree does (`text` before the first child, each child's `tail` after it), because a CDA
/// narrative (`section/text`) is XHTML-like markup with text between its elements.
///
///     let root = try CDAElement.read(data, what: "ccd.xml")
///     for section in root.at("component/structuredBody")?.all("component") ?? [] { … }
struct CDAElement {
    let tree: CDATree
    let index: Int32

    static let hl7Namespace = "urn:hl7-org:v3"
    static let instanceNamespace = "http://www.w3.org/2001/XMLSchema-instance"

    private var node: CDATree.Node { tree.nodes[Int(index)] }

    /// The local name (`observation`; `sdtc:raceCode` is `raceCode` in the SDTC namespace).
    var name: String { tree.names[Int(node.name)] }
    var namespace: String? { tree.namespaces[Int(node.namespace)] }
    /// Whether the element is in the HL7 v3 namespace.
    var isHL7: Bool { node.namespace == tree.hl7 }
    /// The text before the first child element.
    var text: String { tree.string(node.text) }
    /// The text after the element, before its next sibling (or its parent's end).
    var tail: String { tree.string(node.tail) }

    /// The child elements, any namespace, in document order.
    var children: CDAChildren { CDAChildren(tree: tree, first: node.firstChild) }

    /// An attribute of no namespace (`code`, `root`, `value`).
    subscript(attribute name: String) -> String? {
        tree.attribute(of: index, named: name, namespace: 0).map(tree.string)
    }

    /// Whether the attribute of no namespace is there and is `value` (compared without making a String).
    func attribute(_ name: String, is value: String) -> Bool {
        guard let span = tree.attribute(of: index, named: name, namespace: 0) else { return false }
        return tree.equals(span, value)
    }

    /// `xsi:type` without a prefix (`CD`, `PQ`, `IVL_TS`).
    var instanceType: String? {
        guard tree.instance > 0, let span = tree.attribute(of: index, named: "type", namespace: tree.instance) else { return nil }
        return tree.string(span).split(separator: ":").last.map(String.init)
    }

    /// The first child of that name in the HL7 v3 namespace.
    func child(_ name: String) -> CDAElement? {
        var i = node.firstChild
        while i >= 0 {
            let child = tree.nodes[Int(i)]
            if child.namespace == tree.hl7, tree.names[Int(child.name)] == name { return CDAElement(tree: tree, index: i) }
            i = child.nextSibling
        }
        return nil
    }

    /// Every child of that name in the HL7 v3 namespace.
    func all(_ name: String) -> [CDAElement] {
        var found: [CDAElement] = []
        var i = node.firstChild
        while i >= 0 {
            let child = tree.nodes[Int(i)]
            if child.namespace == tree.hl7, tree.names[Int(child.name)] == name { found.append(CDAElement(tree: tree, index: i)) }
            i = child.nextSibling
        }
        return found
    }

    /// The element at a path of child names (`patientRole/patient/name`), first match at each step.
    func at(_ path: String) -> CDAElement? {
        var current: CDAElement? = self
        for step in path.split(separator: "/") { current = current?.child(String(step)) }
        return current
    }

    func hasTemplate(_ root: String) -> Bool {
        var i = node.firstChild
        while i >= 0 {
            let child = tree.nodes[Int(i)]
            if child.namespace == tree.hl7, tree.names[Int(child.name)] == "templateId",
               CDAElement(tree: tree, index: i).attribute("root", is: root) { return true }
            i = child.nextSibling
        }
        return false
    }

    var nullFlavor: String? { self[attribute: "nullFlavor"] }
    /// `negationInd="true"`, in any case.
    var isNegated: Bool {
        guard let span = tree.attribute(of: index, named: "negationInd", namespace: 0), span.count == 4 else { return false }
        let start = Int(span.start)
        return zip(tree.bytes[start..<(start + 4)], "true".utf8).allSatisfy { ($0 | 0x20) == $1 }
    }

    /// Every text of the element and its descendants in document order, whitespace folded; block
    /// elements of a narrative (paragraph, row, list item, line break) end a line, table cells are
    /// separated by " | ".
    var plainText: String { plainText(leavingOut: nil) }

    /// The narrative without its table headers and captions: empty when a table has headers only.
    var plainTextWithoutHeaders: String { plainText(leavingOut: { ["thead", "th", "caption"].contains($0.name) }, atEveryLevel: true) }

    /// The plain text with the children `leavingOut` names (and their tails) left out: of this
    /// element only, or `atEveryLevel`.
    func plainText(leavingOut: ((CDAElement) -> Bool)?, atEveryLevel: Bool = false) -> String {
        var unlimited = TextAllowance(bytes: .max, elements: .max)
        return plainText(leavingOut: leavingOut, atEveryLevel: atEveryLevel, within: &unlimited)
    }

    /// How much of a tree a walk for text may take: bytes of text and elements visited. A walk
    /// stops where either runs out, so text asked for by reference costs what is read, never the
    /// whole subtree (`CCDANarrative`).
    struct TextAllowance {
        var bytes: Int
        var elements: Int
    }

    /// The plain text of no more than `allowance` allows, which the walk spends: when its bytes run
    /// out the text is cut there (at a character's start), when its elements run out the walk stops.
    func plainText(leavingOut: ((CDAElement) -> Bool)?, atEveryLevel: Bool = false, within allowance: inout TextAllowance) -> String {
        var out = ""
        _ = appendText(to: &out, leavingOut: leavingOut, atEveryLevel: atEveryLevel, allowance: &allowance)
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

    private static let blockNames: Set<String> = ["paragraph", "tr", "item", "br", "caption", "list", "table", "thead", "tbody", "tfoot"]

    /// Line ends in the source are layout, not text: only block elements end a line. False when the
    /// allowance ran out (the walk stopped).
    private func appendText(to out: inout String, leavingOut: ((CDAElement) -> Bool)?, atEveryLevel: Bool,
                            allowance: inout TextAllowance) -> Bool {
        guard allowance.elements > 0 else { return false }
        allowance.elements -= 1
        guard Self.append(node.text, of: tree, to: &out, allowance: &allowance) else { return false }
        for child in children {
            if let leavingOut, leavingOut(child) { continue }
            let name = child.name
            if name == "td" || name == "th" { guard Self.append(" | ", to: &out, allowance: &allowance) else { return false } }
            guard child.appendText(to: &out, leavingOut: atEveryLevel ? leavingOut : nil, atEveryLevel: atEveryLevel,
                                   allowance: &allowance) else { return false }
            if Self.blockNames.contains(name) { guard Self.append("\n", to: &out, allowance: &allowance) else { return false } }
            guard Self.append(child.node.tail, of: tree, to: &out, allowance: &allowance) else { return false }
        }
        return true
    }

    /// A separator (a cell's bar, a block's line end), when the allowance's bytes still hold it.
    private static func append(_ separator: String, to out: inout String, allowance: inout TextAllowance) -> Bool {
        guard allowance.bytes != .max else {
            out += separator
            return true
        }
        guard allowance.bytes >= separator.utf8.count else {
            allowance.bytes = 0
            return false
        }
        allowance.bytes -= separator.utf8.count
        out += separator
        return true
    }

    /// A text run, its line ends as spaces, as much of it as the allowance's bytes allow.
    private static func append(_ span: CDATree.Span, of tree: CDATree, to out: inout String, allowance: inout TextAllowance) -> Bool {
        guard span.count > 0 else { return true }
        guard Int(span.count) > allowance.bytes else {
            if allowance.bytes != .max { allowance.bytes -= Int(span.count) }
            out += flattened(tree.string(span))
            return true
        }
        out += flattened(tree.string(span, maxBytes: allowance.bytes))
        allowance.bytes = 0
        return false
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

    /// Reads a document into its element tree with one pass of libxml2's SAX2 parser under
    /// `XMLPolicy` (`CDATree.read`): no network, no DTD loading, no entity substitution, never
    /// `XML_PARSE_HUGE`; a DOCTYPE that declares anything and every entity reference are refused;
    /// the size, the depth and the number of elements are bounded. Comments and processing
    /// instructions are passed over.
    static func read(_ data: Data, what: String) throws -> CDAElement {
        guard !data.isEmpty else { throw RecordsError.malformed("\(what) is empty") }
        guard data.count <= maxBytes else {
            throw RecordsError.malformed("\(what) is \(data.count) bytes, more than the \(maxBytes) hreader reads")
        }
        if let doctype = XMLTextReader.doctype(in: data), doctype.hasInternalSubset {
            throw RecordsError.malformed("\(what) has a DOCTYPE that declares entities or elements (line \(doctype.line)): refused")
        }
        let tree = try CDATree.read(data, what: what, maxDepth: maxDepth, maxElements: maxElements)
        return CDAElement(tree: tree, index: 0)
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

/// The child elements of a `CDAElement`, walked without copying.
struct CDAChildren: Sequence {
    let tree: CDATree
    let first: Int32

    struct Iterator: IteratorProtocol {
        let tree: CDATree
        var position: Int32

        mutating func next() -> CDAElement? {
            guard position >= 0 else { return nil }
            let element = CDAElement(tree: tree, index: position)
            position = tree.nodes[Int(position)].nextSibling
            return element
        }
    }

    func makeIterator() -> Iterator { Iterator(tree: tree, position: first) }
}
