import Foundation
@testable import HReaderRecords
import XCTest

/// The fast path (`AppleHealthScanner` after libxml2 has read the prolog) against libxml2 alone,
/// on the same bytes: what it reads it reads the same (attributes, metadata, children, lines), and
/// what it does not read it declines, so the importer reads the document again with libxml2.
final class AppleHealthScannerTests: XCTestCase {
    enum Outcome: Equatable {
        case read([String])
        case failed([String], String)
        case declined([String])
    }

    static func read(_ xml: String, chunk: Int, fastPath: Bool) -> Outcome {
        var elements: [String] = []
        do {
            try AppleHealthReader(fastPath: fastPath, source: AppleHealthReaderTests.source(xml, chunk: chunk)).read {
                elements.append(AppleHealthReaderTests.describe($0))
            }
            return .read(elements)
        } catch is AppleHealthReader.FastPathDeclined {
            return .declined(elements)
        } catch {
            return .failed(elements, "\(error)")
        }
    }

    /// A body with what real exports hold and what XML allows around it.
    static let body = """
        <HealthData locale="en_US">
         <ExportDate value="2026-11-20 10:00:00 +0100"/>
         <Record type="HKQuantityTypeIdentifierHeartRate"
                 sourceName='Zoë’s "Watch" 📱' unit = "count/min"
                 startDate="2026-03-01 09:05:00 +0100" endDate="2026-03-01 09:05:00 +0100" value="71" >
          <MetadataEntry key="tab	and
        newline" value="&#9;&#10;&#xE9;&#38;&amp;&lt;&gt;&apos;&quot;"/>
         </Record >
         <Record type="HKCategoryTypeIdentifierHeadache" sourceName="Cuff" startDate="2026-03-02 09:05:00 +0100" endDate="2026-03-02 10:05:00 +0100" value="HKCategoryValueSeverityModerate"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Zoë’s iPhone" device="&lt;&lt;HKDevice: 0x2a8f52a90&gt;, name:iPhone, manufacturer:Apple Inc.&gt;" unit="count" startDate="2026-03-01 09:00:00 +0100" endDate="2026-03-01 09:10:00 +0100" value="1200"/>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="31.5" durationUnit="min" sourceName="Watch" startDate="2026-03-01 18:00:00 +0100" endDate="2026-03-01 18:31:30 +0100">
          <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2026-03-01 18:10:00 +0100"><MetadataEntry key="ignored" value="deeper"/></WorkoutEvent>
         </Workout>
        </HealthData>

        """

    func testTheFastPathReadsWhatLibxml2Reads() {
        for xml in [AppleHealthReaderTests.export, AppleHealthReaderTests.doctype + "\n" + Self.body, Self.body] {
            let libxml2 = Self.read(xml, chunk: .max, fastPath: false)
            guard case .read(let elements) = libxml2 else { return XCTFail("libxml2 refused the test document: \(libxml2)") }
            XCTAssertGreaterThan(elements.count, 3)
            for chunk in [1, 2, 3, 7, 64, 4096, .max] {
                XCTAssertEqual(Self.read(xml, chunk: chunk, fastPath: true), libxml2, "chunks of \(chunk)")
            }
        }
    }

    func testWhatTheFastPathDoesNotReadItDeclines() {
        let cases: [(String, String)] = [
            ("a comment", "<!-- note -->"),
            ("CDATA", "<Record type=\"x\"><![CDATA[text]]></Record>"),
            ("text", "<Record type=\"x\">text</Record>"),
            ("a processing instruction", "<?pi data?>"),
            ("an entity the document does not declare", "<Record type=\"&nbsp;\"/>"),
            ("a namespace", "<Record xmlns:a=\"urn:x\" a:type=\"x\"/>"),
            ("a default namespace", "<Record xmlns=\"urn:x\" type=\"x\"/>"),
            ("a carriage return", "<Record type=\"x\"\r\n/>"),
            ("a non-ASCII name", "<Récord type=\"x\"/>"),
            ("bytes that are not UTF-8", "<Record type=\"\u{FFFD}\"/>".replacingOccurrences(of: "\u{FFFD}", with: "\u{1}")),
        ]
        for (what, markup) in cases {
            let xml = Self.body.replacingOccurrences(of: " <ExportDate", with: " \(markup)\n <ExportDate")
            let fast = Self.read(xml, chunk: 5, fastPath: true)
            guard case .declined(let before) = fast else { XCTFail("\(what): \(fast)"); continue }
            XCTAssertEqual(before, [], "\(what): nothing read before it")
        }
    }

    func testMalformedDocumentsAreDeclinedSoThatLibxml2GivesTheMessage() {
        let cases: [(String, String)] = [
            ("truncated", String(Self.body.dropLast(30))),
            ("a mismatched end tag", Self.body.replacingOccurrences(of: "</Record >", with: "</Recrd>")),
            ("an attribute twice", Self.body.replacingOccurrences(of: "unit = \"count/min\"", with: "unit=\"a\" unit=\"b\"")),
            ("attributes without space between", Self.body.replacingOccurrences(of: "unit = \"count/min\"\n", with: "unit=\"a\"value=\"b\"\n")),
            ("a < in a value", Self.body.replacingOccurrences(of: "value=\"1200\"", with: "value=\"1<2\"")),
            ("content after the root", Self.body + "<Extra/>\n"),
            ("an unquoted value", Self.body.replacingOccurrences(of: "value=\"1200\"", with: "value=1200")),
            ("a bad character reference", Self.body.replacingOccurrences(of: "&#9;", with: "&#1;")),
        ]
        for (what, xml) in cases {
            let libxml2 = Self.read(xml, chunk: .max, fastPath: false)
            guard case .failed(let read, _) = libxml2 else { XCTFail("\(what): libxml2 accepted it"); continue }
            let fast = Self.read(xml, chunk: 3, fastPath: true)
            guard case .declined(let before) = fast else { XCTFail("\(what): \(fast)"); continue }
            XCTAssertTrue(read.starts(with: before), "\(what): what was read before is what libxml2 reads")
        }
    }

    /// A document the scanner cannot go on with from the root (another encoding, an attribute the
    /// DTD types) is read by libxml2 to the end, not declined.
    func testDocumentsLibxml2MustReadAloneAreNotHandedOver() {
        let latin1 = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n" + Self.body.replacingOccurrences(of: "’", with: "").replacingOccurrences(of: " 📱", with: "")
        let typed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!ATTLIST Record type NMTOKEN #REQUIRED>
            ]>
            <HealthData locale="en_US">
             <Record type="  HKQuantityTypeIdentifierHeartRate  " startDate="2026-03-01 09:05:00 +0100" value="71"/>
            </HealthData>

            """
        for xml in [latin1, typed] {
            let libxml2 = Self.read(xml, chunk: .max, fastPath: false)
            guard case .read = libxml2 else { XCTFail("libxml2: \(libxml2)"); continue }
            XCTAssertEqual(Self.read(xml, chunk: 7, fastPath: true), libxml2)
        }
    }
}

extension AppleHealthScannerTests {
    /// libxml2 hands a namespace declaration over apart from the attributes: the fast path, which
    /// would keep it as one, must decline it.
    func testLibxml2KeepsNamespaceDeclarationsOutOfTheAttributes() {
        let xml = Self.body.replacingOccurrences(of: " <ExportDate", with: " <Record xmlns=\"urn:x\" type=\"x\" startDate=\"2026-03-01 09:05:00 +0100\"/>\n <ExportDate")
        guard case .read(let elements) = Self.read(xml, chunk: .max, fastPath: false) else { return XCTFail("libxml2 refused it") }
        XCTAssertTrue(elements.contains { $0.hasPrefix("record@") && $0.contains("type=x") && !$0.contains("xmlns") }, "\(elements)")
    }
}

extension AppleHealthScannerTests {
    /// Feeds `chunks` to a scanner that goes on after `<HealthData`: nil when every chunk was
    /// taken, else why it declined and after which chunk.
    static func scan(_ chunks: [[UInt8]]) throws -> (chunk: Int, reason: String)? {
        let root = strdup("HealthData")!
        defer { free(root) }
        let rootName = UnsafeRawPointer(root).assumingMemoryBound(to: UInt8.self)
        var builder = AppleHealthElementBuilder()
        try builder.start(rootName, attributes: SAXAttributes(base: nil, count: 0), line: 1)
        var scanner = AppleHealthScanner(rootName: rootName, line: 1)
        defer { scanner.deallocate() }
        for (index, chunk) in chunks.enumerated() {
            do {
                try chunk.withUnsafeBytes { try scanner.feed($0, into: &builder) }
            } catch let declined as AppleHealthReader.FastPathDeclined {
                return (index, declined.reason)
            }
        }
        return nil
    }

    /// An `&` 16 bytes before the end of what the scanner holds: its reference may still end with
    /// the next byte, which is not there yet. The scanner read that byte anyway, one past its bytes
    /// (past its buffer when the chunk filled it: AddressSanitizer's heap-buffer-overflow), and
    /// judged the reference by whatever was there.
    func testAReferenceSixteenBytesBeforeTheEndWaitsForTheNextByte() throws {
        let head = Array(">\n<Record type=\"".utf8)
        let reference = Array("&".utf8) + [UInt8](repeating: UInt8(ascii: "b"), count: 15)
        let tail = Array("x\"/>\n</HealthData>\n".utf8)

        // The first chunk fills the buffer exactly, the `&` 16 bytes before its end.
        let capacity = AppleHealthScanner.initialCapacity
        let full = head + [UInt8](repeating: UInt8(ascii: "a"), count: capacity - head.count - reference.count) + reference
        XCTAssertEqual(full.count, capacity)
        var outcome = try Self.scan([full, tail])
        XCTAssertEqual(outcome?.chunk, 1, "the first chunk is taken whole: the reference is not all there yet")
        XCTAssertEqual(outcome?.reason, "an unterminated reference")

        // What the byte after the bytes held was (a `;` of an earlier chunk, still in the buffer) decides nothing.
        let earlier = Array(">\n<Other v=\"".utf8) + [UInt8](repeating: UInt8(ascii: ";"), count: 200) + Array("\"/>\n".utf8)
        let short = Array("<Record type=\"".utf8) + reference
        XCTAssertLessThan(short.count, earlier.count - 20)
        outcome = try Self.scan([earlier, short, tail])
        XCTAssertEqual(outcome?.chunk, 2, "the second chunk is taken whole")
        XCTAssertEqual(outcome?.reason, "an unterminated reference")
    }
}

extension AppleHealthScannerTests {
    /// An element keeps at most 1,000 children (MetadataEntry, a correlation's Records), with or
    /// without attributes: a top-level Record (split into samples or not), a correlation and a
    /// correlation's Record. libxml2 alone and the fast path refuse them alike, with the same line.
    func testChildrenPastTheCapAreRefusedAlikeByBothReaders() {
        let record = #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="W" unit="count/min" startDate="2026-03-01 09:05:00 +0100" endDate="2026-03-01 09:05:00 +0100" value="71">"#
        let correlation = #"<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="2026-03-01 08:00:00 +0100" endDate="2026-03-01 08:00:00 +0100">"#
        func document(_ element: String) -> String {
            "<HealthData locale=\"en_US\">\n <ExportDate value=\"2026-11-20 10:00:00 +0100\"/>\n" + element + "\n</HealthData>\n"
        }
        let cases: [(String, String, String)] = [
            ("empty Records of a correlation", correlation + "\n" + String(repeating: "<Record/>", count: 1001) + "</Correlation>", "Correlation"),
            ("empty metadata of a correlation", correlation + "\n" + String(repeating: "<MetadataEntry/>", count: 600)
                + String(repeating: "<Record/>", count: 401) + "</Correlation>", "Correlation"),
            ("metadata of a Record", record + "\n" + String(repeating: "<MetadataEntry key=\"k\" value=\"v\"/>", count: 1001) + "</Record>", "Record"),
            ("metadata of a correlation's Record", correlation + "\n<Record>\n" + String(repeating: "<MetadataEntry/>", count: 1001) + "</Record></Correlation>", "Record"),
        ]
        for (what, element, kind) in cases {
            let xml = document(element)
            let message = "the <\(kind)> at line \(kind == "Record" && what.contains("correlation") ? 4 : 3) has more than 1000 children"
            for splitting in [true, false] {
                do {
                    _ = try AppleHealthReader(splittingSamples: splitting, source: AppleHealthReaderTests.source(xml)).read { _ in }
                    XCTFail("\(what): read")
                } catch {
                    XCTAssertTrue("\(error)".contains(message), "\(what): \(error)")
                }
            }
            let libxml2 = Self.read(xml, chunk: .max, fastPath: false)
            guard case .failed(_, let error) = libxml2 else { XCTFail("\(what): \(libxml2)"); continue }
            XCTAssertTrue(error.contains(message), "\(what): \(error)")
            for chunk in [7, 4096, .max] {
                XCTAssertEqual(Self.read(xml, chunk: chunk, fastPath: true), libxml2, "\(what), chunks of \(chunk)")
            }
        }
        // 1,000 is not too many.
        let full = document(correlation + "\n" + String(repeating: "<Record/>", count: 998) + "<MetadataEntry/><MetadataEntry/></Correlation>")
        guard case .read(let elements) = Self.read(full, chunk: .max, fastPath: true) else { return XCTFail("1,000 children refused") }
        XCTAssertEqual(elements.count, 2)
    }
}
