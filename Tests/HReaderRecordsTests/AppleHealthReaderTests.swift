import Foundation
@testable import HReaderRecords
import XCTest

/// The streaming reader of Apple Health exports: what it hands over, what it refuses (entities,
/// limits), and that chunk boundaries change nothing.
final class AppleHealthReaderTests: XCTestCase {
    /// The head of a real export: its internal DTD declares elements and attributes, never entities.
    static let doctype = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 13 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT ExportDate EMPTY>
        <!ATTLIST ExportDate
          value CDATA #REQUIRED
        >
        <!ELEMENT Me EMPTY>
        <!ATTLIST Me
          HKCharacteristicTypeIdentifierDateOfBirth                   CDATA #REQUIRED
          HKCharacteristicTypeIdentifierBiologicalSex                 CDATA #REQUIRED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
          sourceName    CDATA #REQUIRED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        <!ELEMENT Correlation ((MetadataEntry|Record)*)>
        <!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics)*)>
        <!ELEMENT WorkoutEvent (MetadataEntry*)>
        <!ELEMENT MetadataEntry EMPTY>
        <!ATTLIST MetadataEntry
          key   CDATA #REQUIRED
          value CDATA #REQUIRED
        >
        <!ELEMENT HeartRateVariabilityMetadataList (InstantaneousBeatsPerMinute*)>
        <!ELEMENT InstantaneousBeatsPerMinute EMPTY>
        ]>
        """

    /// Every kind of element the importer reads, with metadata, a correlation's children, an
    /// ignored grandchild, escaped and non-ASCII values. Line numbers in the comments.
    static let body = """
        <HealthData locale="en_US">
         <ExportDate value="2026-11-20 10:00:00 +0100"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-07-02" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Zoë’s iPhone 📱" unit="count" startDate="2026-03-01 09:00:00 +0100" endDate="2026-03-01 09:10:00 +0100" value="1200"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Health &amp; &quot;Co&quot; &lt;Watch&gt; &#38;#38; &#x41;" unit="count/min" startDate="2026-03-01 09:05:00 +0100" endDate="2026-03-01 09:05:00 +0100" value="71">
          <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/>
          <HeartRateVariabilityMetadataList>
           <InstantaneousBeatsPerMinute bpm="70" time="9:05:01.00 AM"/>
          </HeartRateVariabilityMetadataList>
         </Record>
         <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="2026-03-01 08:00:00 +0100" endDate="2026-03-01 08:00:00 +0100">
          <MetadataEntry key="HKWasUserEntered" value="1"/>
          <Record type="HKQuantityTypeIdentifierBloodPressureSystolic" sourceName="Cuff" unit="mmHg" startDate="2026-03-01 08:00:00 +0100" endDate="2026-03-01 08:00:00 +0100" value="128">
           <MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>
          </Record>
          <Record type="HKQuantityTypeIdentifierBloodPressureDiastolic" sourceName="Cuff" unit="mmHg" startDate="2026-03-01 08:00:00 +0100" endDate="2026-03-01 08:00:00 +0100" value="82"/>
         </Correlation>
         <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="31.5" durationUnit="min" sourceName="Watch" startDate="2026-03-01 18:00:00 +0100" endDate="2026-03-01 18:31:30 +0100">
          <MetadataEntry key="HKIndoorWorkout" value="0"/>
          <WorkoutEvent type="HKWorkoutEventTypeSegment" date="2026-03-01 18:10:00 +0100"><MetadataEntry key="ignored" value="deeper"/></WorkoutEvent>
         </Workout>
         <ActivitySummary dateComponents="2026-03-01" activeEnergyBurned="512" activeEnergyBurnedUnit="kcal"/>
         <ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="lab1" sourceName="Clinic" resourceFilePath="/clinical-records/lab1.json"/>
         <Audiogram type="HKDataTypeIdentifierAudiogram" sourceName="Ears"/>
        </HealthData>

        """

    static let export = doctype + "\n" + body

    /// The line in `export` where the body's line `n` (1-based) is.
    static func line(_ n: Int) -> Int { doctype.split(separator: "\n", omittingEmptySubsequences: false).count + n }

    func testReadsEveryElementWithAttributesMetadataAndChildren() throws {
        let elements = try Self.read(Self.export)
        XCTAssertEqual(elements.map(\.kind), [.exportDate, .me, .record, .record, .correlation, .workout, .activitySummary, .clinicalRecord])
        XCTAssertEqual(elements.map(\.line), [2, 3, 4, 5, 11, 18, 22, 23].map(Self.line))

        XCTAssertEqual(elements[0].attribute("value"), "2026-11-20 10:00:00 +0100")
        XCTAssertEqual(elements[1].attribute("HKCharacteristicTypeIdentifierBiologicalSex"), "HKBiologicalSexFemale")
        let steps = elements[2]
        XCTAssertEqual(steps.attributes.map(\.name), ["type", "sourceName", "unit", "startDate", "endDate", "value"])
        XCTAssertEqual(steps.attribute("sourceName"), "Zoë’s iPhone 📱")
        XCTAssertEqual(steps.metadata.count, 0)

        let heart = elements[3]
        XCTAssertEqual(heart.attribute("sourceName"), #"Health & "Co" <Watch> &#38; A"#)
        XCTAssertEqual(heart.metadata.map(\.key), ["HKMetadataKeyHeartRateMotionContext"])
        XCTAssertEqual(heart.metadata.map(\.value), ["1"])
        XCTAssertEqual(heart.children.count, 0)

        let pressure = elements[4]
        XCTAssertEqual(pressure.attribute("type"), "HKCorrelationTypeIdentifierBloodPressure")
        XCTAssertEqual(pressure.metadata.map(\.key), ["HKWasUserEntered"])
        XCTAssertEqual(pressure.children.map { $0.attribute("value") }, ["128", "82"])
        XCTAssertEqual(pressure.children.map(\.kind), [.record, .record])
        XCTAssertEqual(pressure.children.map(\.line), [13, 16].map(Self.line))
        XCTAssertEqual(pressure.children[0].metadata.map(\.key), ["HKMetadataKeySyncVersion"])
        XCTAssertEqual(pressure.children[1].metadata.count, 0)

        let workout = elements[5]
        XCTAssertEqual(workout.metadata.map(\.key), ["HKIndoorWorkout"], "a WorkoutEvent's MetadataEntry is not the workout's")
        XCTAssertEqual(workout.children.count, 0)
        XCTAssertEqual(elements[6].attribute("activeEnergyBurned"), "512")
        XCTAssertEqual(elements[7].attribute("resourceFilePath"), "/clinical-records/lab1.json")
    }

    /// Chunk boundaries fall in the middle of tags, of attribute values, of "&amp;" and of UTF-8
    /// sequences: the result is the same.
    func testOneByteChunksGiveTheSameResultAsLargeChunks() throws {
        let whole = try Self.read(Self.export).map(Self.describe)
        XCTAssertEqual(whole.count, 8)
        for size in [1, 2, 3, 7, 4096] {
            XCTAssertEqual(try Self.read(Self.export, chunk: size).map(Self.describe), whole, "chunks of \(size) bytes")
        }
    }

    /// 10 levels of entities, each referencing the one below 10 times, referenced from one Record
    /// attribute: 10^10 expansions if anything expanded them. Refused at the first declaration,
    /// before any element is handed over.
    func testNestedEntityBombIsRefused() {
        var entities = #"<!ENTITY e0 "ha">"#
        for level in 1...10 {
            entities += "\n<!ENTITY e\(level) \"" + String(repeating: "&e\(level - 1);", count: 10) + "\">"
        }
        let bomb = """
            <?xml version="1.0"?>
            <!DOCTYPE HealthData [
            <!ELEMENT HealthData ANY>
            \(entities)
            ]>
            <HealthData><Record type="&e10;" sourceName="x" startDate="2026-01-01 00:00:00 +0000" endDate="2026-01-01 00:00:00 +0000"/></HealthData>
            """
        var handed = 0
        XCTAssertThrowsError(try AppleHealthReader(source: Self.source(bomb)).read { _ in handed += 1 }) { error in
            XCTAssertEqual(error as? RecordsError,
                           .malformed("the export declares entities (line 4); an Apple Health export never does; refused"))
        }
        XCTAssertEqual(handed, 0)
    }

    /// An external entity (a local file) and an external parameter entity: refused, nothing read.
    func testExternalEntitiesAreRefused() {
        for declaration in [#"<!ENTITY x SYSTEM "file:///etc/passwd">"#, #"<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;"#,
                            #"<!NOTATION n SYSTEM "n"><!ENTITY u SYSTEM "file:///etc/passwd" NDATA n>"#] {
            let xml = """
                <?xml version="1.0"?>
                <!DOCTYPE HealthData [
                \(declaration)
                ]>
                <HealthData><Record type="&x;" sourceName="x" startDate="s" endDate="e"/></HealthData>
                """
            var values: [String] = []
            XCTAssertThrowsError(try AppleHealthReader(source: Self.source(xml)).read { values += $0.attributes.map(\.value) }, declaration) { error in
                XCTAssertTrue("\(error)".contains("declares entities"), "\(error)")
            }
            XCTAssertFalse(values.contains { $0.contains("root:") })
        }
    }

    /// An external DTD is never loaded: an entity it would declare stays undeclared.
    func testExternalDTDIsNotLoaded() throws {
        let dtd = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-dtd-\(UUID().uuidString).dtd")
        try #"<!ENTITY secret "TOP-SECRET-CONTENT">"#.write(to: dtd, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: dtd) }
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE HealthData SYSTEM "file://\(dtd.path)">
            <HealthData><Record type="a&secret;b" sourceName="x" startDate="s" endDate="e"/></HealthData>
            """
        let elements = (try? Self.read(xml)) ?? []
        XCTAssertFalse(elements.contains { $0.attributes.contains { $0.value.contains("TOP-SECRET") } })
    }

    func testTruncatedExportGivesTheLine() {
        let export = Self.export
        // Inside the correlation, between its children.
        let inCorrelation = String(export[..<export.range(of: "  <Record type=\"HKQuantityTypeIdentifierBloodPressureDiastolic")!.lowerBound])
        XCTAssertThrowsError(try Self.read(inCorrelation)) { error in
            XCTAssertEqual(error as? RecordsError,
                           .malformed("the export ends inside a <Correlation> element (line \(Self.line(11))): it is truncated"))
        }
        // In the middle of a start tag: libxml2's own message, with the line.
        let inTag = String(export[..<export.range(of: "activeEnergyBurned=\"512\"")!.lowerBound])
        XCTAssertThrowsError(try Self.read(inTag)) { error in
            XCTAssertEqual(error as? RecordsError, .malformed(
                "the export is not well-formed XML at line \(Self.line(22)): Couldn't find end of Start Tag ActivitySummary"))
        }
        // Between top-level elements.
        let between = String(export[..<export.range(of: " <ClinicalRecord")!.lowerBound])
        XCTAssertThrowsError(try Self.read(between)) { error in
            XCTAssertEqual(error as? RecordsError,
                           .malformed("the export ends at line \(Self.line(22)) without its closing </HealthData>: it is truncated"))
        }
        // Extra content after the end is not truncation.
        XCTAssertThrowsError(try Self.read(export + "<HealthData/>")) { error in
            XCTAssertTrue("\(error)".contains("not well-formed XML at line \(Self.line(26))"), "\(error)")
        }
    }

    func testMalformedXMLGivesTheLine() {
        let broken = Self.export.replacingOccurrences(of: "<Workout ", with: "<Workout <<")
        XCTAssertThrowsError(try Self.read(broken)) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("not well-formed XML at line \(Self.line(18))"), message)
        }
    }

    func testOtherRootsAreNotExports() {
        XCTAssertThrowsError(try Self.read(#"<feed xmlns="http://www.w3.org/2005/Atom"><entry/></feed>"#)) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("this XML is not an Apple Health export (its root is <feed>, not <HealthData>)"))
        }
        XCTAssertThrowsError(try Self.read(""))
        XCTAssertThrowsError(try Self.read("not xml at all"))
    }

    /// What `handle` throws comes out as it is, and the rest of the export is never read.
    func testHandlerErrorStopsTheParse() throws {
        struct Stop: Error {}
        let records = (0..<20_000).map { #"<Record type="t\#($0)" sourceName="s" startDate="a" endDate="b"/>"# }
        let xml = Self.doctype + "\n<HealthData locale=\"en\">\n" + records.joined(separator: "\n") + "\n</HealthData>\n"
        let data = Data(xml.utf8)
        var offset = 0, handled = 0
        let reader = AppleHealthReader { buffer in
            let count = min(buffer.count, data.count - offset)
            data.copyBytes(to: buffer, from: offset..<(offset + count))
            offset += count
            return count
        }
        XCTAssertThrowsError(try reader.read { _ in
            handled += 1
            if handled == 2 { throw Stop() }
        }) { error in XCTAssertTrue(error is Stop, "\(error)") }
        XCTAssertEqual(handled, 2)
        XCTAssertLessThanOrEqual(offset, AppleHealthReader.chunkBytes, "read no further than the chunk that held the element")
        XCTAssertGreaterThan(data.count, 10 * AppleHealthReader.chunkBytes)
    }

    /// Parsing on a second thread hands over the same elements, in the same order, as parsing on
    /// the caller's; a parse error still comes after the elements before it; a handler error stops
    /// the parsing thread (the call returns, nothing hangs).
    func testConcurrentReadIsTheSameRead() throws {
        let records = (0..<5_000).map { i in
            #"<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="W &amp; Co" unit="count/min" "#
                + #"startDate="2024-01-01 10:\#(String(format: "%02d", i % 60)):00 +0100" endDate="2024-01-01 10:00:00 +0100" value="\#(i)"/>"#
        }
        let xml = Self.doctype + "\n<HealthData locale=\"en\">\n" + records.joined(separator: "\n") + "\n</HealthData>\n"
        func source(_ data: Data) -> AppleHealthReader.Source {
            var offset = 0
            return { buffer in
                let count = min(buffer.count, data.count - offset)
                data.copyBytes(to: buffer, from: offset..<(offset + count))
                offset += count
                return count
            }
        }
        func read(_ data: Data, concurrently: Bool) throws -> [String] {
            var out: [String] = []
            try AppleHealthReader(source: source(data)).read(concurrently: concurrently) { element in
                out.append("\(element.kind) \(element.line) " + element.attributes.map { "\($0.name)=\($0.value)" }.joined(separator: " "))
            }
            return out
        }
        let data = Data(xml.utf8)
        let serial = try read(data, concurrently: false)
        XCTAssertEqual(serial.count, 5_000)
        XCTAssertTrue(serial[7].contains("sourceName=W & Co"), serial[7])
        XCTAssertEqual(try read(data, concurrently: true), serial)

        // Malformed after 3000 records: the 3000 come first, then the error with its line.
        let broken = Data((Self.doctype + "\n<HealthData>\n" + records[..<3000].joined(separator: "\n") + "\n<Record <<\n").utf8)
        var handed = 0
        XCTAssertThrowsError(try AppleHealthReader(source: source(broken)).read(concurrently: true) { _ in handed += 1 }) { error in
            XCTAssertTrue("\(error)".contains("not well-formed"), "\(error)")
        }
        XCTAssertEqual(handed, 3000)

        struct Stop: Error {}
        handed = 0
        XCTAssertThrowsError(try AppleHealthReader(source: source(data)).read(concurrently: true) { _ in
            handed += 1
            if handed == 10 { throw Stop() }
        }) { error in XCTAssertTrue(error is Stop, "\(error)") }
        XCTAssertEqual(handed, 10)
    }

    /// A Record read straight into the samples' columns gives its attributes and metadata back
    /// exactly, ampersands, device addresses and dates included; one that would not (a date not in
    /// the export's format, an upper-case address) stays text, unchanged.
    func testRecordsSplitIntoSampleColumnsGiveTheirTextBack() throws {
        let device = "&lt;&lt;HKDevice: 0x2a8f52a90&gt;, name:Scale &amp; Co, model:GS-2&gt;"
        let xml = Self.doctype + """

            <HealthData locale="en">
             <Record type="HKQuantityTypeIdentifierBodyMass" sourceName="A &amp; B" sourceVersion="3" device="\(device)" unit="kg" creationDate="2024-02-29 07:19:49 -0330" startDate="2024-02-29 07:08:32 -0330" endDate="2024-02-29 07:08:32 +0000" value="72.50">
              <MetadataEntry key="HKWasUserEntered" value="1"/>
              <MetadataEntry key="note" value="x &amp; y"/>
             </Record>
             <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="W" device="&lt;&lt;HKDevice: 0x2A8F&gt;&gt;" unit="count/min" startDate="2024-02-29 07:08:32 +0100" value="61"/>
             <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="W" unit="count/min" startDate="2024-02-30 07:08:32 +0100" value="61"/>
             <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="W" startDate="2024-03-01 23:00:00 +0100" endDate="2024-03-02 07:00:00 +0100" value="HKCategoryValueSleepAnalysisAsleepCore"/>
            </HealthData>
            """
        let data = Data(xml.utf8)
        var offset = 0
        var elements: [AppleHealthElement] = []
        try AppleHealthReader { buffer in
            let count = min(buffer.count, data.count - offset)
            data.copyBytes(to: buffer, from: offset..<(offset + count))
            offset += count
            return count
        }.read { elements.append($0) }
        XCTAssertEqual(elements.count, 4)
        XCTAssertNotNil(elements[0].sample, "a Record the columns hold")
        XCTAssertEqual(elements[0].attributes.map(\.name), ["type", "sourceName", "sourceVersion", "device", "unit", "creationDate", "startDate", "endDate", "value"])
        XCTAssertEqual(elements[0].attribute("sourceName"), "A & B")
        XCTAssertEqual(elements[0].attribute("device"), "<<HKDevice: 0x2a8f52a90>, name:Scale & Co, model:GS-2>")
        XCTAssertEqual(elements[0].attribute("creationDate"), "2024-02-29 07:19:49 -0330")
        XCTAssertEqual(elements[0].attribute("endDate"), "2024-02-29 07:08:32 +0000")
        XCTAssertEqual(elements[0].attribute("value"), "72.50")
        XCTAssertNil(elements[0].attribute("workoutActivityType"))
        XCTAssertEqual(elements[0].metadata.map { "\($0.key)=\($0.value)" }, ["HKWasUserEntered=1", "note=x & y"])
        XCTAssertEqual(elements[1].attribute("device"), "<<HKDevice: 0x2A8F>>", "an upper-case address is kept as written")
        XCTAssertNil(elements[2].sample, "February 30th is not a date the columns can give back")
        XCTAssertEqual(elements[2].attribute("startDate"), "2024-02-30 07:08:32 +0100")
        XCTAssertNotNil(elements[3].sample)
        XCTAssertEqual(elements[3].attribute("value"), "HKCategoryValueSleepAnalysisAsleepCore")
    }

    func testSourceErrorPassesThrough() {
        struct Broken: Error {}
        var calls = 0
        let reader = AppleHealthReader { buffer in
            calls += 1
            if calls > 1 { throw Broken() }
            let head = Data((Self.doctype + "\n<HealthData>").utf8)
            head.copyBytes(to: buffer, count: head.count)
            return head.count
        }
        XCTAssertThrowsError(try reader.read { _ in }) { error in XCTAssertTrue(error is Broken, "\(error)") }
    }

    /// What one element may keep is bounded: a value of more than 1 MiB, nesting deeper than an
    /// export ever does.
    func testLimitsAreRefused() {
        let long = Self.export.replacingOccurrences(of: "value=\"1200\"", with: "value=\"" + String(repeating: "9", count: (1 << 20) + 1) + "\"")
        XCTAssertThrowsError(try Self.read(long)) { error in
            XCTAssertEqual(error as? RecordsError,
                           .malformed("an attribute value at line \(Self.line(4)) is longer than 1 MiB; refused"))
        }
        let deep = "<HealthData>" + String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40) + "</HealthData>"
        XCTAssertThrowsError(try Self.read(deep)) { error in
            XCTAssertTrue("\(error)".contains("nest more than 32 deep"), "\(error)")
        }
    }

    // MARK: Helpers

    static func source(_ xml: String, chunk: Int = .max) -> AppleHealthReader.Source {
        let data = Data(xml.utf8)
        var offset = 0
        return { buffer in
            let count = min(buffer.count, chunk, data.count - offset)
            data.copyBytes(to: buffer, from: offset..<(offset + count))
            offset += count
            return count
        }
    }

    static func read(_ xml: String, chunk: Int = .max) throws -> [AppleHealthElement] {
        var elements: [AppleHealthElement] = []
        try AppleHealthReader(source: source(xml, chunk: chunk)).read { elements.append($0) }
        return elements
    }

    static func describe(_ element: AppleHealthElement) -> String {
        "\(element.kind)@\(element.line) " + element.attributes.map { "\($0.name)=\($0.value)" }.joined(separator: "|")
            + element.metadata.map { " M[\($0.key)=\($0.value)]" }.joined() + element.children.map { " C{\(describe($0))}" }.joined()
    }
}
