import Foundation
import XCTest
import HReaderJSON
import HReaderStore
@testable import HReaderRecords

/// Issue 35's C-CDA reader part: the narrative resolved lazily under a bound (security review 3,
/// M-2), translations read in linear time up to a cap (L-1). The documents are written here.
extension CCDATests {
    /// A Problem Observation named by a SNOMED code, its text a reference into the narrative.
    static func referencingProblem(_ reference: String, code: String = "38341003") -> String {
        """
        <observation classCode="OBS" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.4"/>
          <value xsi:type="CD" code="\(code)" codeSystem="2.16.840.1.113883.6.96"><originalText><reference value="\(reference)"/></originalText></value>
        </observation>
        """
    }

    // MARK: M-2: the narrative index

    func testAReferenceIntoNestedIDsGivesAtMost64KiBOfText() throws {
        // The review's shape: elements with IDs nested 40 deep around 200 KB of text, each referenced.
        let depth = 40
        let narrative = (0..<depth).map { "<content ID=\"c\($0)\">" }.joined() + String(repeating: "word ", count: 40_000)
            + String(repeating: "</content>", count: depth)
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", text: narrative,
            entries: (0..<depth).map { Self.referencingProblem("#c\($0)") }))).utf8)
        let document = try CCDADocument.read(data, what: "nested.xml")
        let conditions = resources(document, "Condition")
        XCTAssertEqual(conditions.count, depth, "every problem is kept, with its code, text or not")
        let texts = conditions.compactMap { $0["code"]?["text"]?.string }
        XCTAssertTrue(texts.first?.hasPrefix("word word word") == true)
        for text in texts { XCTAssertLessThanOrEqual(text.utf8.count, CCDANarrative.maxTextBytes) }
        XCTAssertLessThanOrEqual(texts.reduce(0) { $0 + $1.utf8.count }, 4 * 2 * data.count + (1 << 20), "one allowance for the document")
    }

    func testAThousandReferencesToOneElementSpendOneAllowanceNotAThousandCopies() throws {
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", text: "<paragraph ID=\"big\">" + String(repeating: "a b ", count: 8_000) + "</paragraph>",
            entries: (0..<1_000).map { _ in Self.referencingProblem("#big") }))).utf8)
        let document = try CCDADocument.read(data, what: "many.xml")
        let conditions = resources(document, "Condition")
        XCTAssertEqual(conditions.count, 1_000)
        let texts = conditions.compactMap { $0["code"]?["text"]?.string }
        XCTAssertEqual(texts.first?.utf8.count, 31_999, "the first references get the text")
        // 1,000 copies would be 32 MB; the allowance is four times the document (and 1 MiB).
        XCTAssertLessThan(texts.count, 1_000)
        XCTAssertLessThanOrEqual(texts.reduce(0) { $0 + $1.utf8.count }, 4 * 2 * data.count + (1 << 20))
    }

    func testManyDeepChainsOfIDsReadAndKeepNoMoreThanTheAllowance() throws {
        // 16 chains of 100 nested IDs, each over 66 KB: 1,600 elements whose text reaches the cap.
        // Read each, they would be 100 MB; what is read and kept stays within the document's allowance.
        let chain = (0..<100).map { "<content ID=\"c\($0)-%d\">" }.joined() + String(repeating: "y", count: 66_000)
            + String(repeating: "</content>", count: 100)
        let text = (0..<16).map { chain.replacingOccurrences(of: "%d", with: String($0)) }.joined()
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", text: text))).utf8)
        let root = try CDAElement.read(data, what: "chains.xml")
        let narrative = CCDANarrative(tree: root.tree)
        let allowance = narrative.remaining
        var given = 0
        for chain in 0..<16 {
            for level in 0..<100 { given += narrative.text(forID: "c\(level)-\(chain)")?.utf8.count ?? 0 }
        }
        XCTAssertGreaterThan(given, 0)
        XCTAssertLessThanOrEqual(given, allowance)
        XCTAssertLessThanOrEqual(narrative.keptBytes, allowance)
        XCTAssertLessThan(allowance, 8 * data.count)
    }

    func testTheFirstElementOfAnIDIsTheOneReferencedAndAReferenceToNothingGivesNoText() throws {
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems",
            text: "<list><item><content ID=\"p1\">Hypertension</content></item><item><content ID=\"p1\">Asthma</content></item></list>",
            entries: [Self.referencingProblem("#p1"), Self.referencingProblem("#p2", code: "195967001")]))))
        let conditions = resources(document, "Condition")
        XCTAssertEqual(conditions.map { $0["code"]?["text"]?.string }, ["Hypertension", nil])
    }

    func testATextCutAtTheCapEndsAtACharactersStart() throws {
        // 64 KiB falls inside a three-byte character (2 + 5 × 13,106 + 2 + 2 of its 3 bytes): the cut text is whole characters.
        let text = "ab" + String(repeating: "é€", count: 20_000)
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", text: "<content ID=\"p\">\(text)</content>",
            entries: [Self.referencingProblem("#p")]))))
        let resolved = try XCTUnwrap(resources(document, "Condition").first?["code"]?["text"]?.string)
        XCTAssertEqual(resolved.utf8.count, CCDANarrative.maxTextBytes - 2)
        XCTAssertTrue(text.hasPrefix(resolved))
    }

    // MARK: L-1: translations

    func testTranslationsAreReadOnceEachAndNoMoreThan64() throws {
        let translations = (0..<200).map { "<translation code=\"T\($0 % 100)\" codeSystem=\"1.2.3.4\" displayName=\"t\($0 % 100)\"/>" }.joined()
        let value = "<value xsi:type=\"CD\" code=\"38341003\" codeSystem=\"2.16.840.1.113883.6.96\">\(translations)</value>"
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", entries: [CDAFixture.problem("", "", value: value)]))))
        let codes = codings(resources(document, "Condition").first?["code"])
        XCTAssertEqual(codes.count, 1 + CCDAValues.maxTranslations)
        XCTAssertEqual(codes.first, "http://snomed.info/sct|38341003")
        XCTAssertEqual(codes.dropFirst().first, "urn:oid:1.2.3.4|T0")
        XCTAssertEqual(Set(codes).count, codes.count, "no coding twice")
    }

    func testATranslationRepeatedIsOneCodingAndAnotherDisplayIsAnother() throws {
        let value = """
            <value xsi:type="CD" code="38341003" codeSystem="2.16.840.1.113883.6.96" displayName="Hypertension">
              <translation code="I10" codeSystem="2.16.840.1.113883.6.90" displayName="Essential hypertension"/>
              <translation code="I10" codeSystem="2.16.840.1.113883.6.90" displayName="Essential hypertension"/>
              <translation code="I10" codeSystem="2.16.840.1.113883.6.90"/>
              <translation code="38341003" codeSystem="2.16.840.1.113883.6.96" displayName="Hypertension"/></value>
            """
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", entries: [CDAFixture.problem("", "", value: value)]))))
        let coding = resources(document, "Condition").first?["code"]?["coding"]?.array ?? []
        XCTAssertEqual(coding.map { "\($0["code"]?.string ?? "")|\($0["display"]?.string ?? "")" },
                       ["38341003|Hypertension", "I10|Essential hypertension", "I10|"])
    }

    func testFHIRCodingsRepeatedInAConceptAreOneCode() {
        var concept = Concept(text: "Hypertension")
        for i in 0..<3_000 { concept.codings.append(("http://snomed.info/sct", String(38341003 + i % 1_000), nil)) }
        concept.codings.append(("urn:oid:1.2.3", "38341003", nil))
        XCTAssertEqual(concept.codes["SNOMED-CT"]?.count, 1_000)
        XCTAssertEqual(concept.codes["SNOMED-CT"]?.prefix(2), ["38341003", "38341004"], "in coding order")
        XCTAssertEqual(concept.codes["urn:oid:1.2.3"], ["38341003"], "the same code in another system is another code")
    }
}
