import Foundation
import XCTest

/// Issue 35's C-CDA reader part through the real binary: the narrative index and references under a
/// memory bound (security review 3, M-2), a code with thousands of translations (L-1), and the
/// vendor shapes whose placeholder codes, product names and table rows named entries wrongly.
/// Every document is generated here or is hreader's own fixture (`vendor-codes.xml`).
extension CCDAImportTests {
    /// The review's M-2 reproduction, smaller: a section narrative of `depth` nested `<content>`
    /// elements (each with an `ID` when `ids`) around `runs` runs of 256 KiB of text, and a problem
    /// whose originalText refers to each level.
    static func nestedNarrative(depth: Int, runs: Int, ids: Bool) -> String {
        var text = (0..<depth).map { ids ? "<content ID=\"c\($0)\">" : "<content>" }.joined()
        let run = String(repeating: "x", count: 256 << 10)
        for _ in 0..<runs { text += run + "<br/>" }
        text += String(repeating: "</content>", count: depth)
        let entries = (0..<depth).map { level in
            """
            <entry><observation classCode="OBS" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.4"/>
            <value xsi:type="CD" code="38341003" codeSystem="2.16.840.1.113883.6.96"><originalText><reference value="#c\(level)"/></originalText></value></observation></entry>
            """
        }.joined()
        return document(section: "<templateId root=\"2.16.840.1.113883.10.20.22.2.5.1\"/><title>Problems</title><text>\(text)</text>\(entries)")
    }

    static func document(section: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
        <recordTarget><patientRole><id root="2.16.840.1.113883.19.5" extension="p35"/>
        <patient><name><given>Nell</given><family>Probe</family></name></patient></patientRole></recordTarget>
        <component><structuredBody><component><section>\(section)</section></component></structuredBody></component></ClinicalDocument>
        """
    }

    func testNestedIDsAndReferencesToEachCostLittleMoreMemoryThanTheSameDocumentWithoutIDs() throws {
        // Before the fix every ID stored the text of all it held (651 MB for the review's 4 MB), and
        // each reference handed out all of it: 140 levels over 512 KiB took hundreds of MB.
        let plain = try file("nested.xml", Self.nestedNarrative(depth: 140, runs: 2, ids: false))
        let nested = try file("nested-ids.xml", Self.nestedNarrative(depth: 140, runs: 2, ids: true))
        let (without, withoutMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", plain]))
        XCTAssertEqual(without.status, 0, without.stderr)
        let (with, withMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", nested]))
        XCTAssertEqual(with.status, 0, with.stderr)
        XCTAssertTrue(with.stdout.contains("Problems: 140 imported"), with.stdout)
        XCTAssertGreaterThan(withoutMB, 0)
        XCTAssertLessThan(withMB, 2 * withoutMB, "peak RSS with IDs \(withMB) MB, without \(withoutMB) MB")
    }

    func testACodeWithThousandsOfTranslationsImportsWithTheFirst64() throws {
        func problem(translations: Int) -> String {
            let value = (0..<translations).map { "<translation code=\"T\($0)\" codeSystem=\"1.2.3.4\"/>" }.joined(separator: "\n")
            return Self.document(section: """
                <templateId root="2.16.840.1.113883.10.20.22.2.5.1"/><title>Problems</title><text>Hypertension</text>
                <entry><observation classCode="OBS" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.4"/>
                <value xsi:type="CD" code="38341003" codeSystem="2.16.840.1.113883.6.96" displayName="Hypertension">\(value)</value></observation></entry>
                """)
        }
        let (small, smallMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", try file("one.xml", problem(translations: 1))]))
        XCTAssertEqual(small.status, 0, small.stderr)
        // 4,000 took 8 s before (quadratic); 8,000 took 35 s.
        let (many, manyMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", try file("many.xml", problem(translations: 4_000))]))
        XCTAssertEqual(many.status, 0, many.stderr)
        XCTAssertLessThan(manyMB, 1.5 * smallMB, "peak RSS \(manyMB) MB with 4,000 translations, \(smallMB) MB with one")
        // Both files state the same problem (one fact, two copies): every copy is read.
        let copies = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--copies", "--json"])))["entries"] as? [[String: Any]] ?? []
        let codes = copies.compactMap { $0["codes"] as? [String: [String]] }.sorted { ($0["urn:oid:1.2.3.4"]?.count ?? 0) < ($1["urn:oid:1.2.3.4"]?.count ?? 0) }
        XCTAssertEqual(codes.map { $0["urn:oid:1.2.3.4"]?.count }, [1, 64])
        XCTAssertEqual(codes.last?["urn:oid:1.2.3.4"]?.last, "T63")
        XCTAssertEqual(codes.last?["SNOMED-CT"], ["38341003"])
    }

    func testVendorPlaceholderCodesProductNamesAndTableRowsNameEachEntryOnce() throws {
        let result = try ok(withPassword(["import", "--file", try fixture("vendor-codes.xml"), "--as", "me"]))
        XCTAssertTrue(result.stdout.contains("Allergies: 6 imported"), result.stdout)
        let all = try entries()
        let allergies = all.filter { $0["type"] as? String == "allergy" }
        XCTAssertEqual(Set(allergies.compactMap { $0["description"] as? String }),
                       ["Ragweed", "Latex", "Cheese", "Birds", "Acetaminophen / Codeine", "ADHESIVE BANDAGE"])
        // No allergen is coded "Unknown": four different ones are not one coded fact.
        XCTAssertEqual(allergies.compactMap { ($0["codes"] as? [String: [String]]).flatMap { $0.isEmpty ? nil : $0 } },
                       [["RxNorm": ["214256"]]])
        // The medications tile reads the drug and its sig, never the narrative's table row.
        let summary = try json(try ok(withPassword(["summary", "--json", "--patient", "1"])))
        let tiles = (summary["tiles"] as? [[String: Any]]) ?? []
        let medications = try XCTUnwrap(tiles.first { $0["identifier"] as? String == "org.mitre.hreader.medications" })
        XCTAssertEqual(medications["lines"] as? [String], ["metformin 500 mg 1 tablet twice daily with meals", "lisinopril 10 mg"])
    }
}
