import Foundation
import XCTest
@testable import HReaderRecords

/// The element tree `CDATree` builds in one SAX2 pass is the one libxml2's streaming reader shows
/// (which the C-CDA reader used before): same names, namespaces, attributes, text and tails, and the
/// same documents refused. The reader-built tree here is the oracle.
final class CDATreeTests: XCTestCase {
    func documents() throws -> [(String, Data)] {
        var out: [(String, Data)] = []
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        for folder in ["Fixtures/ccda", "Fuzz/ccda", "Fuzz/fhir-xml"] {
            let directory = here.appendingPathComponent(folder)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
                out.append(("\(folder)/\(name)", try Data(contentsOf: directory.appendingPathComponent(name))))
            }
        }
        let snippets = [
            "<a xmlns='urn:hl7-org:v3'>x<b>y</b>z<c/>w<!-- c -->v<?pi x?>u<![CDATA[<t>]]>s&amp;&#x41;&lt;</a>",
            "<a xmlns='urn:hl7-org:v3' xmlns:s='urn:hl7-org:sdtc' xmlns:xsi='http://www.w3.org/2001/XMLSchema-instance'><s:raceCode code='1'/><value xsi:type='PQ' value='1'/></a>",
            "<a><foo:bar x='1' foo:y='2'/></a>", "<a xml:lang='en' b='&#10;x&#9;y'>\r\n text \r\n</a>",
            "<?xml version='1.0'?><!DOCTYPE a SYSTEM 'x.dtd'><a>&ent;</a>", "<a>&ent;</a>", "<a/><b/>", "<a></a>trailing", "   ", "<a>",
            "\u{FEFF}<a>bom</a>", "<?xml version='1.0' encoding='ISO-8859-1'?><a>caf\u{E9}</a>", "<a b='1' b='2'/>", "<a>\u{0}</a>",
            String(repeating: "<d>", count: 170) + String(repeating: "</d>", count: 170),
            "<!DOCTYPE a []><a/>", "<a><b>1</b>   <b>2</b>\n</a>",
            "<a b='x &amp; y' c='&#38;' d='&amp;#38;' e='&#x26;&#x26;' f='&lt;&gt;&quot;&apos;' g='&#38;#38;' h='&amp;amp;'>t &amp; u &#38; v</a>",
            "<a b='&#10;&#13;&#9; x \n y\r\nz'/>",
        ]
        for (i, snippet) in snippets.enumerated() { out.append(("snippet \(i)", Data(snippet.utf8))) }
        out.append(("latin1", Data([0x3C, 0x3F] + Array("xml version='1.0' encoding='ISO-8859-1'?><a>caf".utf8) + [0xE9] + Array("</a>".utf8))))
        out.append(("utf16", "<?xml version='1.0' encoding='UTF-16'?><a xmlns='urn:hl7-org:v3'>x<b c='d'/>y</a>".data(using: .utf16)!))
        out.append(("latin1", Data([0x3C, 0x3F] + Array("xml version='1.0' encoding='ISO-8859-1'?><a>caf".utf8) + [0xE9] + Array("</a>".utf8))))
        out.append(("utf16", "<?xml version='1.0' encoding='UTF-16'?><a xmlns='urn:hl7-org:v3'>x<b c='d'/>y</a>".data(using: .utf16)!))
        out.append(("text over libxml2's limit", Data(("<a>" + String(repeating: "x", count: 10_000_001) + "</a>").utf8)))
        return out
    }

    func testTheTreeIsTheOneLibxml2sStreamingReaderShows() throws {
        var compared = 0
        for (name, data) in try documents() {
            switch (Result { try ReaderElement.read(data, what: name) }, Result { try CDAElement.read(data, what: name) }) {
            case (.success(let reader), .success(let tree)):
                let viewed = ReaderElement(tree)
                if reader != viewed { XCTFail("\(name): \(firstDifference(reader, viewed, path: reader.name))") }
                compared += 1
            case (.failure, .failure): break
            case (.success, .failure(let error)): XCTFail("\(name): refused (\(error)), the reader reads it")
            case (.failure(let error), .success): XCTFail("\(name): read, the reader refuses it (\(error))")
            }
        }
        XCTAssertGreaterThan(compared, 10)
    }

    func firstDifference(_ a: ReaderElement, _ b: ReaderElement, path: String) -> String {
        if a.name != b.name || a.namespace != b.namespace { return "\(path): name \(a.name)|\(a.namespace ?? "-") vs \(b.name)|\(b.namespace ?? "-")" }
        if a.attributes != b.attributes { return "\(path): attributes \(a.attributes) vs \(b.attributes)" }
        if a.text != b.text { return "\(path): text \(a.text.debugDescription.prefix(200)) vs \(b.text.debugDescription.prefix(200))" }
        if a.tail != b.tail { return "\(path): tail \(a.tail.debugDescription.prefix(200)) vs \(b.tail.debugDescription.prefix(200))" }
        if a.children.count != b.children.count { return "\(path): \(a.children.count) children vs \(b.children.count)" }
        for (x, y) in zip(a.children, b.children) where x != y { return firstDifference(x, y, path: path + "/" + x.name) }
        return "\(path): equal?"
    }

    func testTheByteHelpersSayWhatTheStringOnesSaid() {
        var samples: [String] = ["20120101", "2012", "201201", "20120230", "20120229", "19000229", "20000229", "201201011230-0500", "20120101123045.123456789012+0100",
                       "20120101123045", "2012010112", "2012010112+1500", "2012010112+1460", "-0500", " 2012 ", "\u{A0}2012", "2012\n", "00000101",
                       "1.5", ".5", "5.", "-0", "-0.0", "+3", "007", "-", "+", "", " 12 ", "1e5", "12345678901234567890123456789012345678901",
                       "1.2.3", ".1", "1.", "1..2", "7d5a02b0-67a4-11db-bd13-0800200c9a66", "7D5A02B0-67A4-11DB-BD13-0800200C9A66",
                       "7d5a02b0-67a4-11db-bd13-0800200c9a6", "７d5a02b0-67a4-11db-bd13-0800200c9a66", "x", " x", "x ", "\u{85}x", "x\u{2028}"]
        // Every pairing of a few characters that matter, in a fixed order.
        let alphabet = ["0", "1", "9", "+", "-", ".", " ", "\t", "\u{A0}", "\u{FF11}", "a", "F", "\r\n", "e\u{301}", ":"]
        for a in alphabet { for b in alphabet { samples += [a + b, "2012" + a + b, a + "201201" + b, "1" + a + "5" + b] } }
        for sample in samples {
            XCTAssertEqual(CCDAValues.fhirDateTime(sample), StringHelpers.fhirDateTime(sample), "fhirDateTime \(sample.debugDescription)")
            XCTAssertEqual(CCDAValues.decimal(sample), StringHelpers.decimal(sample), "decimal \(sample.debugDescription)")
            XCTAssertEqual(CCDAValues.isOID(sample), StringHelpers.isOID(sample), "isOID \(sample.debugDescription)")
            XCTAssertEqual(CCDAValues.isUUID(sample), StringHelpers.isUUID(sample), "isUUID \(sample.debugDescription)")
            XCTAssertEqual(nonEmpty(sample), StringHelpers.nonEmpty(sample), "nonEmpty \(sample.debugDescription)")
        }
    }
}

/// A document's elements as libxml2's streaming reader shows them (the C-CDA reader's tree before `CDATree`).
struct ReaderElement: Equatable {
    var name: String
    var namespace: String?
    var attributes: [String]
    var text = ""
    var tail = ""
    var children: [ReaderElement] = []

    static func read(_ data: Data, what: String) throws -> ReaderElement {
        guard !data.isEmpty else { throw RecordsError.malformed("\(what) is empty") }
        if let doctype = XMLTextReader.doctype(in: data), doctype.hasInternalSubset {
            throw RecordsError.malformed("\(what) has a DOCTYPE")
        }
        let reader = try XMLTextReader(data, what: what)
        var stack: [ReaderElement] = []
        var root: ReaderElement?
        func finish(_ element: ReaderElement) {
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(element) }
        }
        func appendText(_ text: String) {
            guard !stack.isEmpty else { return }
            let last = stack.count - 1
            if let child = stack[last].children.indices.last { stack[last].children[child].tail += text } else { stack[last].text += text }
        }
        while try reader.read() {
            switch reader.nodeType {
            case .elementStart:
                guard stack.count < 160 else { throw RecordsError.malformed("deep") }
                guard root == nil else { throw RecordsError.malformed("after root") }
                let attributes = reader.attributes().filter { !$0.isNamespaceDeclaration }.map { "\($0.localName)|\($0.namespaceURI ?? "-")|\($0.value)" }
                let element = ReaderElement(name: reader.localName, namespace: reader.namespaceURI, attributes: attributes)
                if reader.isEmptyElement { finish(element) } else { stack.append(element) }
            case .elementEnd: finish(stack.removeLast())
            case .text, .cdata, .whitespace, .significantWhitespace: appendText(reader.value)
            case .entityReference, .entity: throw RecordsError.malformed("entity")
            case .documentType:
                if reader.documentTypeDeclaresAnything { throw RecordsError.malformed("doctype") }
            default: continue
            }
        }
        guard let root else { throw RecordsError.malformed("no element") }
        return root
    }

    init(name: String, namespace: String?, attributes: [String]) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
    }

    init(_ element: CDAElement) {
        name = element.name
        namespace = element.namespace
        var list: [String] = []
        let node = element.tree.nodes[Int(element.index)]
        for i in Int(node.attributeStart)..<Int(node.attributeStart + node.attributeCount) {
            let a = element.tree.attributes[i]
            list.append("\(element.tree.names[Int(a.name)])|\(element.tree.namespaces[Int(a.namespace)] ?? "-")|\(element.tree.string(a.value))")
        }
        attributes = list
        text = element.text
        tail = element.tail
        children = element.children.map(ReaderElement.init)
    }
}

/// The String-based helpers the byte-based ones replaced, as they were.
enum StringHelpers {
    static func nonEmpty(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    static func isOID(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber } && !text.hasPrefix(".") && !text.hasSuffix(".")
            && !text.contains("..")
    }

    static func isUUID(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
        return parts == [8, 4, 4, 4, 12] && text.allSatisfy { $0 == "-" || $0.isHexDigit }
    }

    static func fhirDateTime(_ text: String?) -> String? {
        guard var text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty, text.allSatisfy(\.isASCII) else { return nil }
        var offset: String?
        if let sign = text.firstIndex(where: { $0 == "+" || $0 == "-" }) {
            let zone = text[text.index(after: sign)...]
            guard zone.count == 4, zone.allSatisfy(\.isNumber), let hours = Int(zone.prefix(2)), let minutes = Int(zone.suffix(2)),
                  hours <= 14, minutes < 60 else { return nil }
            offset = "\(text[sign])\(zone.prefix(2)):\(zone.suffix(2))"
            text = String(text[..<sign])
        }
        var fraction = ""
        if let dot = text.firstIndex(of: ".") {
            let digits = text[text.index(after: dot)...]
            guard !digits.isEmpty, digits.allSatisfy(\.isNumber) else { return nil }
            fraction = "." + digits.prefix(9)
            text = String(text[..<dot])
        }
        guard text.allSatisfy(\.isNumber), [4, 6, 8, 10, 12, 14].contains(text.count) else { return nil }
        let digits = Array(text)
        func number(_ from: Int, _ count: Int) -> Int { Int(String(digits[from..<(from + count)]))! }
        let year = number(0, 4)
        guard year >= 1 else { return nil }
        var out = String(digits[0..<4])
        guard digits.count >= 6 else { return out }
        let month = number(4, 2)
        guard (1...12).contains(month) else { return nil }
        out += "-" + String(digits[4..<6])
        guard digits.count >= 8 else { return out }
        let day = number(6, 2)
        let days = month == 2 ? ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28) : [4, 6, 9, 11].contains(month) ? 30 : 31
        guard day >= 1, day <= days else { return nil }
        out += "-" + String(digits[6..<8])
        guard digits.count >= 10, let offset else { return out }
        let hour = number(8, 2), minute = digits.count >= 12 ? number(10, 2) : 0, second = digits.count >= 14 ? number(12, 2) : 0
        guard hour < 24, minute < 60, second < 60 else { return nil }
        let two = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return out + "T\(two(hour)):\(two(minute)):\(two(second))" + (digits.count >= 14 ? fraction : "") + offset
    }

    static func decimal(_ text: String?) -> String? {
        guard var text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        var sign = ""
        if text.hasPrefix("-") { sign = "-"; text.removeFirst() } else if text.hasPrefix("+") { text.removeFirst() }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        var integer = String(whole.drop { $0 == "0" })
        if integer.isEmpty { integer = "0" }
        var out = sign + integer
        if parts.count == 2 {
            let fraction = parts[1]
            guard !fraction.isEmpty, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            out += "." + fraction
        } else if whole.isEmpty {
            return nil
        }
        guard out.count <= 40 else { return nil }
        return out == "-0" ? "0" : out
    }
}
