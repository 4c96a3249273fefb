import CLibXML2
import Foundation

/// libxml2's streaming reader over a copy of the bytes it owns, opened with `XMLPolicy`'s options.
/// The readers of RHEx feeds, FHIR XML and XML property lists walk their documents with it.
///
///     let reader = try XMLTextReader(data, what: "the patient feed")
///     while try reader.read() { if reader.nodeType == .elementStart { print(reader.localName) } }
final class XMLTextReader {
    /// libxml2's node types (`xmlReaderTypes`) that the readers tell apart.
    enum NodeType: Int32 {
        case elementStart = 1, text = 3, cdata = 4, entityReference = 5, entity = 6
        case processingInstruction = 7, comment = 8, documentType = 10
        case whitespace = 13, significantWhitespace = 14, elementEnd = 15
        case other = -1
    }

    private let reader: xmlTextReaderPtr
    /// libxml2 reads from memory it does not own: this copy lives as long as the reader.
    private let buffer: UnsafeMutableRawBufferPointer
    /// How messages name the document, e.g. "the FHIR XML".
    let what: String

    /// Fails only when libxml2 cannot start (no memory); a document that is not XML fails in `read`.
    init(_ data: Data, what: String, cdataAsText: Bool = true) throws {
        self.what = what
        buffer = .allocate(byteCount: max(data.count, 1), alignment: 1)
        _ = data.copyBytes(to: buffer.bindMemory(to: UInt8.self))
        let options = XMLPolicy.parserOptions | (cdataAsText ? Int32(XML_PARSE_NOCDATA.rawValue) : 0)
        XMLPolicy.prepareThread()
        guard let reader = xmlReaderForMemory(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(data.count), nil, nil, options) else {
            buffer.deallocate()
            throw RecordsError.malformed("\(what) cannot be read as XML")
        }
        self.reader = reader
    }

    deinit {
        xmlFreeTextReader(reader)
        buffer.deallocate()
    }

    /// Moves to the next node; false at the end of the document. Throws when the XML is not
    /// well-formed, with libxml2's reason and the line.
    func read() throws -> Bool {
        let status = xmlTextReaderRead(reader)
        if status < 0 {
            var detail = ""
            if let last = xmlGetLastError(), let message = last.pointee.message {
                detail = ": " + String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            throw RecordsError.malformed("\(what) is not well-formed at line \(parserLine)\(detail)")
        }
        return status == 1
    }

    var nodeType: NodeType { NodeType(rawValue: xmlTextReaderNodeType(reader)) ?? .other }
    var localName: String { Self.string(xmlTextReaderConstLocalName(reader)) ?? "" }
    /// The qualified name (`xhtml:div`, or `div`).
    var name: String { Self.string(xmlTextReaderConstName(reader)) ?? "" }
    var namespaceURI: String? { Self.string(xmlTextReaderConstNamespaceUri(reader)) }
    /// A text node's text (entities and character references already replaced).
    var value: String { Self.string(xmlTextReaderConstValue(reader)) ?? "" }
    var isEmptyElement: Bool { xmlTextReaderIsEmptyElement(reader) == 1 }
    var depth: Int { Int(xmlTextReaderDepth(reader)) }
    /// The current node's line (where the parser is, when the node has none).
    var line: Int {
        if let node = xmlTextReaderCurrentNode(reader) {
            let line = xmlGetLineNo(node)
            if line > 0 { return line }
        }
        return parserLine
    }
    /// Where the parser is, which may be ahead of the node: it reads in chunks.
    private var parserLine: Int { Int(xmlTextReaderGetParserLineNumber(reader)) }

    /// At a `documentType` node: whether the DOCTYPE has an internal subset that declares anything
    /// (entities above all). Public identifiers alone, as a plist's, declare nothing.
    var documentTypeDeclaresAnything: Bool {
        guard let node = xmlTextReaderCurrentNode(reader) else { return false }
        return node.pointee.children != nil
    }

    /// The current element's attributes, in document order, with their qualified names, their
    /// namespace and whether each is a namespace declaration. Leaves the reader on the element.
    func attributes() -> [(name: String, localName: String, namespaceURI: String?, isNamespaceDeclaration: Bool, value: String)] {
        var attributes: [(String, String, String?, Bool, String)] = []
        guard xmlTextReaderHasAttributes(reader) == 1 else { return attributes }
        while xmlTextReaderMoveToNextAttribute(reader) == 1 {
            attributes.append((name, localName, namespaceURI, xmlTextReaderIsNamespaceDecl(reader) == 1, value))
        }
        xmlTextReaderMoveToElement(reader)
        return attributes
    }

    /// The `<!DOCTYPE` of the prolog, found in the bytes before any parser sees them: its line, and
    /// whether it has an internal subset (`[ … ]`, where entities are declared). Nil when the prolog
    /// has none, or the document is not in an ASCII-compatible encoding (the `documentType` node
    /// then tells).
    static func doctype(in data: Data) -> (line: Int, hasInternalSubset: Bool)? {
        let bytes = [UInt8](data.prefix(64 << 10))
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func at(_ text: String) -> Bool { bytes[i...].starts(with: Array(text.utf8)) }
        func skip(past end: String) { while i < bytes.count, !at(end) { i += 1 }; i += end.utf8.count }
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "<") {
                if at("<?") { skip(past: "?>"); continue }
                if at("<!--") { skip(past: "-->"); continue }
                guard at("<!") else { return nil }  // the root element: the prolog is over
                let line = bytes[..<i].filter { $0 == UInt8(ascii: "\n") }.count + 1
                // Up to the DOCTYPE's `>`, past quoted identifiers: a `[` opens an internal subset.
                var quote: UInt8?
                while i < bytes.count {
                    let byte = bytes[i]
                    if let open = quote {
                        if byte == open { quote = nil }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = byte
                    } else if byte == UInt8(ascii: "[") {
                        return (line, true)
                    } else if byte == UInt8(ascii: ">") {
                        break
                    }
                    i += 1
                }
                return (line, false)
            }
            i += 1
        }
        return nil
    }

    private static func string(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
