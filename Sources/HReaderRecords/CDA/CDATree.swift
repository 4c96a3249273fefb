import CLibXML2
import Foundation

/// A CDA document's elements in one array, in document order, their attributes in another, and
/// every attribute value and text in one byte buffer: what `CDAElement` views. Built by one pass of
/// libxml2's SAX2 parser, so neither libxml2 nor Swift makes an object or a String per node; a
/// String is made only for what the mapping reads. Immutable once built.
final class CDATree {
    /// A range of `bytes`.
    struct Span {
        var start: Int32 = 0
        var count: Int32 = 0
    }

    struct Node {
        /// Indices into `names` and `namespaces`.
        var name: Int32
        var namespace: Int32
        var attributeStart: Int32
        var attributeCount: Int32
        /// Indices into `nodes`; -1 for none.
        var firstChild: Int32 = -1
        var nextSibling: Int32 = -1
        var text = Span()
        var tail = Span()
    }

    struct Attribute {
        var name: Int32
        var namespace: Int32
        var value: Span
    }

    let nodes: [Node]
    let attributes: [Attribute]
    let bytes: [UInt8]
    /// Element and attribute names, each once.
    let names: [String]
    /// Namespace URIs, each once; index 0 is no namespace.
    let namespaces: [String?]
    /// The HL7 v3 namespace's index, -1 when the document never uses it.
    let hl7: Int32
    /// The XML Schema instance namespace's index (of `xsi:type`), 0 when the document never uses it.
    let instance: Int32

    fileprivate init(_ builder: CDATreeBuilder) {
        nodes = builder.nodes
        attributes = builder.attributes
        bytes = builder.bytes
        names = builder.names
        namespaces = builder.namespaces
        hl7 = builder.namespaces.firstIndex(of: CDAElement.hl7Namespace).map(Int32.init) ?? -1
        instance = builder.namespaces.firstIndex(of: CDAElement.instanceNamespace).map(Int32.init) ?? 0
    }

    func string(_ span: Span) -> String {
        guard span.count > 0 else { return "" }
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[Int(span.start)..<Int(span.start + span.count)]), as: UTF8.self)
        }
    }

    /// The first `maxBytes` bytes of a span (fewer, to end at a character's start: the bytes are UTF-8).
    func string(_ span: Span, maxBytes: Int) -> String {
        guard Int(span.count) > maxBytes else { return string(span) }
        let cut = Int(span.start) + max(maxBytes, 0)
        var end = cut
        while end > Int(span.start), end > cut - 3, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return string(Span(start: span.start, count: Int32(end) - span.start))
    }

    func equals(_ span: Span, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard utf8.count == Int(span.count) else { return false }
            guard let other = utf8.baseAddress else { return true }
            return bytes.withUnsafeBufferPointer { memcmp($0.baseAddress! + Int(span.start), other, utf8.count) == 0 }
        }
    }

    /// The value of an element's attribute of that name and namespace (0: none).
    func attribute(of element: Int32, named name: String, namespace: Int32) -> Span? {
        let node = nodes[Int(element)]
        var i = Int(node.attributeStart)
        let end = i + Int(node.attributeCount)
        while i < end {
            let attribute = attributes[i]
            if attribute.namespace == namespace, names[Int(attribute.name)] == name { return attribute.value }
            i += 1
        }
        return nil
    }

    // MARK: - Reading

    /// libxml2 refuses a text node longer than this without XML_PARSE_HUGE (XML_MAX_TEXT_LENGTH);
    /// the tree keeps that limit for a run of text (an embedded document's base64 included).
    static let maxTextBytes = 10_000_000

    /// Parses `data` under `XMLPolicy` with SAX2 callbacks that only collect: no DTD is loaded
    /// (no external subset callback, no DTD loading option), any declaration in a DOCTYPE and any
    /// entity reference stop the parser, entities are never substituted.
    static func read(_ data: Data, what: String, maxDepth: Int, maxElements: Int) throws -> CDATree {
        let builder = UnsafeMutablePointer<CDATreeBuilder>.allocate(capacity: 1)
        builder.initialize(to: CDATreeBuilder(what: what, maxDepth: maxDepth, maxElements: maxElements, capacity: data.count))
        defer {
            builder.deinitialize(count: 1)
            builder.deallocate()
        }
        var handler = Self.handler()
        XMLPolicy.prepareThread()
        // The callbacks reach the builder through libxml2's user-data pointer; they run only inside xmlParseChunk.
        guard let context = xmlCreatePushParserCtxt(&handler, UnsafeMutableRawPointer(builder), nil, 0, nil) else {
            throw RecordsError.malformed("\(what) cannot be read as XML")
        }
        defer { xmlFreeParserCtxt(context) }
        xmlCtxtUseOptions(context, XMLPolicy.parserOptions | Int32(XML_PARSE_NOCDATA.rawValue))
        builder.pointee.context = context
        let status = data.withUnsafeBytes { raw in
            xmlParseChunk(context, raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(raw.count), 1)
        }
        if let refusal = builder.pointee.refusal { throw refusal }
        if status != 0 || context.pointee.wellFormed == 0 {
            let error = context.pointee.lastError
            let line = error.line > 0 ? Int(error.line) : builder.pointee.line
            let detail = error.message.map { ": " + String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
            throw RecordsError.malformed("\(what) is not well-formed at line \(line)\(detail)")
        }
        guard !builder.pointee.nodes.isEmpty else { throw RecordsError.malformed("\(what) holds no element") }
        return CDATree(builder.pointee)
    }

    fileprivate static func builder(_ user: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<CDATreeBuilder>? {
        user?.assumingMemoryBound(to: CDATreeBuilder.self)
    }

    /// Elements and text; declarations and entity references only to refuse them. No external
    /// subset, entity resolution or DTD callbacks: libxml2 loads nothing.
    private static func handler() -> xmlSAXHandler {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { user, localname, prefix, uri, _, _, count, defaulted, attributes in
            guard let localname else { return }
            // Defaulted attributes (values a DTD supplies) come last; the document did not say them.
            CDATree.builder(user)?.pointee.start(localname, prefix: prefix, uri: uri,
                                         attributes: SAXAttributes(base: attributes, count: Int(count - defaulted)))
        }
        handler.endElementNs = { user, _, _, _ in CDATree.builder(user)?.pointee.end() }
        handler.characters = { user, text, count in
            guard let text, count > 0 else { return }
            CDATree.builder(user)?.pointee.append(text, count: Int(count))
        }
        handler.ignorableWhitespace = handler.characters
        handler.cdataBlock = handler.characters
        handler.reference = { user, _ in CDATree.builder(user)?.pointee.refuseEntity() }
        handler.entityDecl = { user, _, _, _, _, _ in CDATree.builder(user)?.pointee.refuseDeclaration() }
        handler.unparsedEntityDecl = { user, _, _, _, _ in CDATree.builder(user)?.pointee.refuseDeclaration() }
        handler.elementDecl = { user, _, _, _ in CDATree.builder(user)?.pointee.refuseDeclaration() }
        handler.attributeDecl = { user, _, _, _, _, _, _ in CDATree.builder(user)?.pointee.refuseDeclaration() }
        handler.notationDecl = { user, _, _, _ in CDATree.builder(user)?.pointee.refuseDeclaration() }
        // A comment or processing instruction inside a DOCTYPE is a declaration there too.
        handler.comment = { user, _ in CDATree.builder(user)?.pointee.refuseIfInSubset() }
        handler.processingInstruction = { user, _, _ in CDATree.builder(user)?.pointee.refuseIfInSubset() }
        handler.serror = { _, _ in }   // read from the context's lastError instead of printed
        return handler
    }
}

/// What the SAX2 callbacks collect into, through a pointer (no class, no exclusivity checks per callback).
private struct CDATreeBuilder {
    var nodes: [CDATree.Node] = []
    var attributes: [CDATree.Attribute] = []
    var bytes: [UInt8] = []
    var names: [String] = []
    var namespaces: [String?] = [nil]
    /// libxml2 hands names and namespace URIs over from its dictionary, each name at one address:
    /// address → index, without reading the name again.
    var nameIndex = AddressTable()
    var namespaceIndex = AddressTable()
    /// The same by text, for names made here (an undeclared prefix) and as a fallback.
    var nameByText: [String: Int32] = [:]
    var namespaceByText: [String: Int32] = [:]
    /// The open elements, and the last child of each so far (-1: none yet).
    var open: [Int32] = []
    var lastChild: [Int32] = []
    var rootEnded = false
    var refusal: RecordsError?
    var context: xmlParserCtxtPtr?
    let what: String
    let maxDepth: Int
    let maxElements: Int

    init(what: String, maxDepth: Int, maxElements: Int, capacity: Int) {
        self.what = what
        self.maxDepth = maxDepth
        self.maxElements = maxElements
        // About what a CDA document holds per byte: one element per 40, one attribute per 25, and
        // values and text a third of the bytes.
        nodes.reserveCapacity(min(capacity / 40, maxElements) + 16)
        attributes.reserveCapacity(capacity / 25 + 16)
        bytes.reserveCapacity(capacity / 3 + 64)
    }

    var line: Int { context?.pointee.input.map { Int($0.pointee.line) } ?? 0 }

    mutating func refuse(_ message: String) {
        guard refusal == nil else { return }
        refusal = RecordsError.malformed(message)
        xmlStopParser(context)
    }

    mutating func refuseEntity() {
        refuse("\(what) uses an entity at line \(line): refused")
    }

    mutating func refuseDeclaration() {
        refuse("\(what) has a DOCTYPE that declares entities or elements (line \(line)): refused")
    }

    mutating func refuseIfInSubset() {
        if let context, context.pointee.inSubset != 0 { refuseDeclaration() }
    }

    mutating func start(_ localname: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, uri: UnsafePointer<xmlChar>?,
                        attributes list: SAXAttributes) {
        guard refusal == nil else { return }
        guard open.count < maxDepth else { return refuse("\(what) nests elements deeper than \(maxDepth) (line \(line))") }
        guard !rootEnded else { return refuse("\(what) has content after its root element (line \(line))") }
        guard nodes.count < maxElements else { return refuse("\(what) has more than \(maxElements) elements") }
        let attributeStart = Int32(attributes.count)
        for i in 0..<list.count {
            guard let base = list.base, let name = base[5 * i] else { continue }
            let value = list.value(i)
            let start = bytes.count
            appendAttributeValue(value)
            let span = CDATree.Span(start: Int32(start), count: Int32(bytes.count - start))
            attributes.append(CDATree.Attribute(name: nameID(name, prefix: base[5 * i + 1], uri: base[5 * i + 2]),
                                                namespace: namespaceID(base[5 * i + 2]), value: span))
        }
        let index = Int32(nodes.count)
        nodes.append(CDATree.Node(name: nameID(localname, prefix: prefix, uri: uri), namespace: namespaceID(uri),
                                  attributeStart: attributeStart, attributeCount: Int32(attributes.count) - attributeStart))
        if let parent = open.last {
            let previous = lastChild[lastChild.count - 1]
            if previous >= 0 { nodes[Int(previous)].nextSibling = index } else { nodes[Int(parent)].firstChild = index }
            lastChild[lastChild.count - 1] = index
        }
        open.append(index)
        lastChild.append(-1)
    }

    /// Without entity substitution libxml2 hands every `&` of an attribute value over as `&#38;`
    /// (for its tree builder to decode, as it does for the streaming reader): decoded here the same way.
    private mutating func appendAttributeValue(_ value: UnsafeBufferPointer<UInt8>) {
        guard value.contains(UInt8(ascii: "&")) else { return bytes.append(contentsOf: value) }
        let escaped: [UInt8] = Array("&#38;".utf8)
        var i = 0
        while i < value.count {
            if value[i] == UInt8(ascii: "&"), i + 5 <= value.count, value[i..<(i + 5)].elementsEqual(escaped) {
                bytes.append(UInt8(ascii: "&"))
                i += 5
            } else {
                bytes.append(value[i])
                i += 1
            }
        }
    }

    mutating func end() {
        guard refusal == nil, !open.isEmpty else { return }
        open.removeLast()
        lastChild.removeLast()
        if open.isEmpty { rootEnded = true }
    }

    /// Text goes to the open element's `text` before its first child, else to its last child's `tail`.
    mutating func append(_ text: UnsafePointer<xmlChar>, count: Int) {
        guard refusal == nil, let parent = open.last else { return }
        let previous = lastChild[lastChild.count - 1]
        let target = Int(previous >= 0 ? previous : parent)
        var span = previous >= 0 ? nodes[target].tail : nodes[target].text
        guard Int(span.count) + count <= CDATree.maxTextBytes else {
            return refuse("\(what) is not well-formed at line \(line): a text of more than \(CDATree.maxTextBytes) bytes")
        }
        if span.count == 0 {
            span.start = Int32(bytes.count)
        } else if Int(span.start + span.count) != bytes.count {
            // Not the last thing written (never so for a well-formed pass): moved to the end first.
            let earlier = Array(bytes[Int(span.start)..<Int(span.start + span.count)])
            span.start = Int32(bytes.count)
            bytes.append(contentsOf: earlier)
        }
        bytes.append(contentsOf: UnsafeBufferPointer(start: text, count: count))
        span.count += Int32(count)
        if previous >= 0 { nodes[target].tail = span } else { nodes[target].text = span }
    }

    /// An element or attribute name's index. A prefix without a namespace (undeclared) stays part
    /// of the name, as libxml2's own tree keeps it (`foo:bar`).
    private mutating func nameID(_ name: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, uri: UnsafePointer<xmlChar>?) -> Int32 {
        if let prefix, uri == nil {
            return intern(String(cString: prefix) + ":" + String(cString: name), into: &names, byText: &nameByText)
        }
        let address = UInt(bitPattern: name)
        if let found = nameIndex[address] { return found }
        let id = intern(String(cString: name), into: &names, byText: &nameByText)
        nameIndex[address] = id
        return id
    }

    private mutating func namespaceID(_ uri: UnsafePointer<xmlChar>?) -> Int32 {
        guard let uri else { return 0 }
        let address = UInt(bitPattern: uri)
        if let found = namespaceIndex[address] { return found }
        let text = String(cString: uri)
        let id = namespaceByText[text] ?? Int32(namespaces.count)
        if Int(id) == namespaces.count {
            namespaces.append(text)
            namespaceByText[text] = id
        }
        namespaceIndex[address] = id
        return id
    }

    private func intern(_ text: String, into list: inout [String], byText: inout [String: Int32]) -> Int32 {
        if let found = byText[text] { return found }
        let id = Int32(list.count)
        list.append(text)
        byText[text] = id
        return id
    }
}

/// A small open-addressing table from addresses to indices: a name's address is looked up for
/// every element and attribute, where a Dictionary's hashing would cost more than the parse.
private struct AddressTable {
    private var keys = [UInt](repeating: 0, count: 256)
    private var values = [Int32](repeating: 0, count: 256)
    private var count = 0

    private func slot(_ key: UInt) -> Int {
        let mask = keys.count - 1
        var i = Int(truncatingIfNeeded: (UInt64(key >> 3) &* 0x9E37_79B9_7F4A_7C15) >> 40) & mask
        while keys[i] != 0, keys[i] != key { i = (i + 1) & mask }
        return i
    }

    subscript(key: UInt) -> Int32? {
        get {
            let i = slot(key)
            return keys[i] == key ? values[i] : nil
        }
        set {
            guard let newValue, key != 0 else { return }
            if (count + 1) * 2 > keys.count { grow() }
            let i = slot(key)
            if keys[i] == 0 { count += 1 }
            keys[i] = key
            values[i] = newValue
        }
    }

    private mutating func grow() {
        let old = zip(keys, values).filter { $0.0 != 0 }
        keys = [UInt](repeating: 0, count: keys.count * 2)
        values = [Int32](repeating: 0, count: keys.count)
        count = 0
        for (key, value) in old { self[key] = value }
    }
}
