import CLibXML2
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
        if let line = doctypeLine(data) {
            throw RecordsError.malformed("the FHIR XML has a DOCTYPE (line \(line)): refused (FHIR XML has none, and a DTD can declare entities)")
        }
        // libxml2 reads from memory it does not own: a copy that lives as long as the reader.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: data.count, alignment: 1)
        defer { buffer.deallocate() }
        _ = data.copyBytes(to: buffer.bindMemory(to: UInt8.self))
        let options = XMLPolicy.parserOptions | Int32(XML_PARSE_NOCDATA.rawValue)
        XMLPolicy.prepareThread()
        guard let reader = xmlReaderForMemory(buffer.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(data.count), nil, nil, options) else {
            throw RecordsError.malformed("the FHIR XML cannot be read as XML")
        }
        defer { xmlFreeTextReader(reader) }

        var stack: [XMLNode] = []
        var root: XMLNode?
        func finish(_ node: XMLNode) {
            if stack.isEmpty { root = node } else { stack[stack.count - 1].children.append(node) }
        }
        while try advance(reader) {
            switch xmlTextReaderNodeType(reader) {
            case 1:  // element start
                guard stack.count < maxDepth else {
                    throw RecordsError.malformed("the FHIR XML nests elements deeper than \(maxDepth) (line \(line(reader)))")
                }
                var node = element(reader)
                let empty = xmlTextReaderIsEmptyElement(reader) == 1
                if node.namespace == xhtmlNamespace, node.name == "div", !stack.isEmpty {
                    node.xhtml = try xhtml(reader, empty: empty, depth: stack.count)
                    finish(node)
                } else if empty {
                    finish(node)
                } else {
                    stack.append(node)
                }
            case 15:  // element end
                finish(stack.removeLast())
            case 3, 4:  // text, CDATA
                let text = string(xmlTextReaderConstValue(reader)) ?? ""
                if !text.allSatisfy(\.isWhitespace) {
                    let inside = stack.last.map { "<\($0.name)>" } ?? "the document"
                    throw RecordsError.malformed("the FHIR XML has text in \(inside) at line \(line(reader)): FHIR XML keeps values in value attributes")
                }
            case 5, 6:  // entity reference or declaration
                throw RecordsError.malformed("the FHIR XML uses an entity at line \(line(reader)): refused")
            case 10:  // DOCTYPE (when the byte scan could not see it, as in UTF-16)
                throw RecordsError.malformed("the FHIR XML has a DOCTYPE (line \(line(reader))): refused")
            default:  // comments, processing instructions, whitespace
                continue
            }
        }
        guard let root else { throw RecordsError.malformed("the FHIR XML holds no element") }
        return root
    }

    /// The next node; false at the end of the document.
    private static func advance(_ reader: xmlTextReaderPtr) throws -> Bool {
        let status = xmlTextReaderRead(reader)
        if status < 0 { throw failure(reader) }
        return status == 1
    }

    private static func element(_ reader: xmlTextReaderPtr) -> XMLNode {
        var attributes: [(name: String, value: String)] = []
        if xmlTextReaderHasAttributes(reader) == 1 {
            while xmlTextReaderMoveToNextAttribute(reader) == 1 {
                // Namespace declarations and attributes of other namespaces (xsi:schemaLocation) carry no FHIR data.
                guard xmlTextReaderIsNamespaceDecl(reader) == 0, xmlTextReaderConstNamespaceUri(reader) == nil else { continue }
                attributes.append((string(xmlTextReaderConstLocalName(reader)) ?? "", string(xmlTextReaderConstValue(reader)) ?? ""))
            }
            xmlTextReaderMoveToElement(reader)
        }
        return XMLNode(name: string(xmlTextReaderConstLocalName(reader)) ?? "", namespace: string(xmlTextReaderConstNamespaceUri(reader)),
                       attributes: attributes, line: line(reader))
    }

    /// An XHTML narrative written out as XML text, as FHIR JSON carries it: the `div` with its XHTML
    /// namespace declared, its descendants, their attributes and text (comments left out). Reads up
    /// to the end of the `div`.
    private static func xhtml(_ reader: xmlTextReaderPtr, empty: Bool, depth: Int) throws -> String {
        var out = "<div xmlns=\"\(xhtmlNamespace)\"" + xhtmlAttributes(reader) + (empty ? "/>" : ">")
        guard !empty else { return out }
        let divDepth = xmlTextReaderDepth(reader)
        while try advance(reader) {
            let name = string(xmlTextReaderConstName(reader)) ?? ""
            switch xmlTextReaderNodeType(reader) {
            case 1:
                guard depth + Int(xmlTextReaderDepth(reader) - divDepth) < maxDepth else {
                    throw RecordsError.malformed("the FHIR XML nests elements deeper than \(maxDepth) (line \(line(reader)))")
                }
                out += "<\(name)" + xhtmlAttributes(reader) + (xmlTextReaderIsEmptyElement(reader) == 1 ? "/>" : ">")
            case 15:
                out += "</\(name)>"
                if xmlTextReaderDepth(reader) == divDepth { return out }
            case 3, 4, 13, 14:
                escape(string(xmlTextReaderConstValue(reader)) ?? "", into: &out, quote: false)
            case 5, 6:
                throw RecordsError.malformed("the FHIR XML uses an entity at line \(line(reader)): refused")
            default:
                continue
            }
        }
        throw RecordsError.malformed("the FHIR XML ends inside a narrative div")
    }

    /// ` name="value"` for each attribute but namespace declarations.
    private static func xhtmlAttributes(_ reader: xmlTextReaderPtr) -> String {
        var out = ""
        guard xmlTextReaderHasAttributes(reader) == 1 else { return out }
        while xmlTextReaderMoveToNextAttribute(reader) == 1 {
            guard xmlTextReaderIsNamespaceDecl(reader) == 0 else { continue }
            out += " \(string(xmlTextReaderConstName(reader)) ?? "")=\""
            escape(string(xmlTextReaderConstValue(reader)) ?? "", into: &out, quote: true)
            out += "\""
        }
        xmlTextReaderMoveToElement(reader)
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

    /// The line of a `<!DOCTYPE` in the prolog (before the root element), read from the bytes so the
    /// parser never sees it.
    static func doctypeLine(_ data: Data) -> Int? {
        let bytes = [UInt8](data.prefix(64 << 10))
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        func at(_ text: String) -> Bool { bytes[i...].starts(with: Array(text.utf8)) }
        func skip(past end: String) { while i < bytes.count, !at(end) { i += 1 }; i += end.utf8.count }
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "<") {
                if at("<?") { skip(past: "?>"); continue }
                if at("<!--") { skip(past: "-->"); continue }
                guard at("<!") else { return nil }  // the root element: the prolog is over
                return bytes[..<i].filter { $0 == UInt8(ascii: "\n") }.count + 1
            }
            i += 1
        }
        return nil
    }

    private static func failure(_ reader: xmlTextReaderPtr) -> RecordsError {
        var detail = ""
        if let last = xmlGetLastError(), let message = last.pointee.message {
            detail = ": " + String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return .malformed("the FHIR XML is not well-formed at line \(line(reader))\(detail)")
    }

    private static func line(_ reader: xmlTextReaderPtr) -> Int { Int(xmlTextReaderGetParserLineNumber(reader)) }

    private static func string(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
