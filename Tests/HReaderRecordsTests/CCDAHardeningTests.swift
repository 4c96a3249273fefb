import Foundation
import XCTest
import HReaderJSON
@testable import HReaderRecords

/// Issue 35's C-CDA reader part: the narrative resolved lazily under a bound (security review 3,
/// M-2), translations read in linear time up to a cap (L-1), placeholder codes that never become
/// codes, allergies and drugs named by their product's name, and medications whose `text` points to a
/// table row. The documents are written here, in the shapes of the vendors' documents the issue names.
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

    func testACutTextCountsTheLineEndsAndBarsItAddsToTheCap() throws {
        // Found by the ccda-narrative fuzz check: text of exactly the cap and the line end of a
        // <br/> between its runs made one byte more than the cap.
        let run = String(repeating: "x", count: 40_000)
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems",
            text: "<content ID=\"p\">\(run)<br/>\(run)</content><table><tr ID=\"r\"><td>\(run)</td><td>\(run)</td></tr></table>",
            entries: [Self.referencingProblem("#p"), Self.referencingProblem("#r", code: "195967001")]))))
        let texts = resources(document, "Condition").compactMap { $0["code"]?["text"]?.string }
        XCTAssertEqual(texts.count, 2)
        for text in texts { XCTAssertLessThanOrEqual(text.utf8.count, CCDANarrative.maxTextBytes) }
        XCTAssertEqual(texts.first?.split(separator: "\n").first?.utf8.count, 40_000)
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

    // MARK: Placeholder codes

    func testPlaceholderCodesAreToldFromRealOnes() {
        for placeholder in ["Unknown", "UNKNOWN", " unk ", "UNK", "NI", "na", "N/A", "NA", "0", "00", "000-0", "", "  ", "none", "None",
                            "nullFlavor", "NULL", "ASKU", "NAV", "NASK", "MSK", "OTH", "Not available", "No information"] {
            XCTAssertTrue(FHIRCodes.isPlaceholder(code: placeholder), placeholder.debugDescription)
        }
        for code in ["38341003", "8867-4", "I10", "A00.0", "T0", "10", "0.5", "NAD", "N", "UN", "K", "1564HD0N96", "R00-R99", "NKA",
                     "716186003", "no-known-allergies", "no-allergy-info"] {
            XCTAssertFalse(FHIRCodes.isPlaceholder(code: code), code)
        }
    }

    /// One vendor's CCD: four allergens coded `Unknown` in UNII, each named by its displayName and
    /// its narrative cell, and a fifth with a real RxNorm code.
    static func allergy(_ substance: String, id: String) -> String {
        """
        <act classCode="ACT" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.30"/><id root="\(id)"/>
          <code code="48765-2" codeSystem="2.16.840.1.113883.6.1"/><statusCode code="active"/>
          <entryRelationship typeCode="SUBJ"><observation classCode="OBS" moodCode="EVN">
            <templateId root="2.16.840.1.113883.10.20.22.4.7"/><id root="\(id).1"/><code code="ASSERTION" codeSystem="2.16.840.1.113883.5.4"/>
            <statusCode code="completed"/><effectiveTime><low value="20100223"/></effectiveTime>
            <value xsi:type="CD" code="419199007" codeSystem="2.16.840.1.113883.6.96" displayName="Allergy to substance"/>
            <participant typeCode="CSM"><participantRole classCode="MANU"><playingEntity classCode="MMAT">\(substance)</playingEntity>
            </participantRole></participant>
          </observation></entryRelationship>
        </act>
        """
    }

    func testAllergensCodedUnknownKeepTheirNamesAndNoCode() throws {
        let unii = "codeSystem=\"2.16.840.1.113883.4.9\" codeSystemName=\"UNII\""
        let entries = [
            Self.allergy("<code code=\"Unknown\" displayName=\"Ragweed\" \(unii)><originalText><reference value=\"#a0\"/></originalText></code><name/>", id: "1.1"),
            Self.allergy("<code code=\"Unknown\" displayName=\"Latex\" \(unii)/>", id: "1.2"),
            Self.allergy("<code code=\"UNK\" displayName=\"Unknown\" \(unii)><originalText><reference value=\"#a2\"/></originalText></code>", id: "1.3"),
            Self.allergy("<code code=\"0\" displayName=\"Birds\" \(unii)/>", id: "1.4"),
            Self.allergy("<code code=\"214256\" displayName=\"Acetaminophen / Codeine\" codeSystem=\"2.16.840.1.113883.6.88\"/>", id: "1.5"),
        ]
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.allergies, title: "Allergies",
            text: "<table><tbody><tr><td ID=\"a0\">Ragweed</td></tr><tr><td ID=\"a2\">Cheese</td></tr></tbody></table>", entries: entries))).utf8)
        let document = try CCDADocument.read(data, what: "vendor.xml")
        let allergies = resources(document, "AllergyIntolerance")
        XCTAssertEqual(allergies.map { $0["code"]?["text"]?.string }, ["Ragweed", "Latex", "Cheese", "Birds", nil])
        XCTAssertEqual(allergies.map { codings($0["code"]) }, [[], [], [], [], ["http://www.nlm.nih.gov/research/umls/rxnorm|214256"]])
        let entries2 = try mapped(data).entries.filter { $0.content.type == .allergy }
        XCTAssertEqual(entries2.map(\.content.description), ["Ragweed", "Latex", "Cheese", "Birds", "Acetaminophen / Codeine"])
        XCTAssertEqual(entries2.map(\.content.codes), [[:], [:], [:], [:], ["RxNorm": ["214256"]]])
    }

    func testFHIRPlaceholderCodesAreNoEntryCodesAndTheirDisplayNamesTheEntry() throws {
        let bundle = """
            {"resourceType": "Bundle", "type": "collection", "entry": [
              {"resource": {"resourceType": "Patient", "id": "p1", "name": [{"family": "Fixture"}]}},
              {"resource": {"resourceType": "AllergyIntolerance", "id": "a1", "patient": {"reference": "Patient/p1"},
                "code": {"coding": [{"system": "http://fdasis.nlm.nih.gov", "code": "Unknown", "display": "Ragweed"}]}}},
              {"resource": {"resourceType": "AllergyIntolerance", "id": "a2", "patient": {"reference": "Patient/p1"},
                "code": {"coding": [{"system": "http://fdasis.nlm.nih.gov", "code": "UNK", "display": "Latex"},
                                    {"system": "http://snomed.info/sct", "code": "111088007", "display": "Latex"}]}}},
              {"resource": {"resourceType": "Condition", "id": "c1", "subject": {"reference": "Patient/p1"},
                "code": {"coding": [{"system": "http://snomed.info/sct", "code": "0"}], "text": "Back pain"}}}]}
            """
        let batch = try FHIRMapper(zone: .named(utc)).mapBundle(Data(bundle.utf8))
        let entries = try XCTUnwrap(batch.records.first).entries
        XCTAssertEqual(entries.map(\.content.description), ["Ragweed", "Latex", "Back pain"])
        XCTAssertEqual(entries.map(\.content.codes), [[:], ["SNOMED-CT": ["111088007"]], [:]])
    }

    func testANarrativeNoteKeepsItsSectionsCodeOnlyWhenItIsOne() throws {
        let data = Data(CDAFixture.document(body: CDAFixture.structured(
            CDAFixture.section(code: "UNK", title: "Family history", text: "Father: hypertension."),
            CDAFixture.section(code: "10157-6", title: "Family history", text: "Mother: asthma."))).utf8)
        let notes = try mapped(data).entries.filter { $0.content.status == FHIRMapper.narrativeStatus }
        XCTAssertEqual(notes.map(\.content.codes), [[:], ["LOINC": ["10157-6"]]])
    }

    // MARK: Allergies named by their product

    func testAnAllergyWithAPlaceholderCodeIsNamedByItsProductsName() throws {
        // The VA's C32: code UNK, its originalText "Coded Allergy Name Not Available", the product's name beside it.
        let substance = """
            <code code="UNK" nullFlavor="UNK"><originalText><reference value="#coded1"/></originalText></code><name>LATEX STRAP</name>
            """
        let unnamed = "<code nullFlavor=\"UNK\"><originalText><reference value=\"#coded1\"/></originalText></code><name>Not available</name>"
        let refuted = Self.allergy(substance, id: "2.2").replacingOccurrences(of: "<observation classCode=\"OBS\" moodCode=\"EVN\">",
                                                                             with: "<observation classCode=\"OBS\" moodCode=\"EVN\" negationInd=\"true\">")
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.allergies, title: "Allergies",
            text: "<table><tbody><tr><td><content ID=\"allergy1\">LATEX STRAP</content></td>"
                + "<td><content ID=\"coded1\">Coded Allergy Name Not Available</content></td></tr></tbody></table>",
            entries: [Self.allergy(substance, id: "2.1"), refuted, Self.allergy(unnamed, id: "2.3")]))))
        let allergies = resources(document, "AllergyIntolerance")
        XCTAssertEqual(allergies.map { $0["code"]?["text"]?.string }, ["LATEX STRAP", "LATEX STRAP"])
        XCTAssertEqual(allergies.map { $0["code"]?["coding"] }, [nil, nil], "no code invented")
        XCTAssertEqual(allergies.last?["verificationStatus"]?["coding"]?[0]?["code"]?.string, "refuted", "a negated one stays refuted")
        XCTAssertEqual(document.sections.first?.skipped, ["an allergy whose substance is a nullFlavor or a placeholder (no substance named)": 1])
    }

    func testAMedicationWhoseCodesTextIsAPlaceholderIsNamedByItsMaterialsName() throws {
        let administration = """
            <substanceAdministration classCode="SBADM" moodCode="EVN"><statusCode code="active"/>
              <consumable><manufacturedProduct><manufacturedMaterial>
                <code code="Unknown" displayName="Unknown" codeSystem="2.16.840.1.113883.6.88"><originalText>Unknown</originalText>
                  <translation code="86679" displayName="12 Hour Decongestant 120 MG CP12" codeSystem="2.16.840.1.113883.6.253"/></code>
                <name>12 Hour Decongestant</name>
              </manufacturedMaterial></manufacturedProduct></consumable></substanceAdministration>
            """
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: "2.16.840.1.113883.10.20.22.2.1.1", title: "Medications", entries: [administration]))))
        let drug = resources(document, "MedicationStatement").first?["medicationCodeableConcept"]
        XCTAssertEqual(drug?["text"]?.string, "12 Hour Decongestant")
        XCTAssertEqual(codings(drug), ["urn:oid:2.16.840.1.113883.6.253|86679"])
    }

    // MARK: Medications whose text is a table row

    /// One vendor's medications section: a table of Material, RxNorm code, generic name,
    /// strength, dates and SIG, each entry's `text` pointing to its whole row.
    static let medicationTable = """
        <table><thead><tr><th>Material</th><th>RXnormCode</th><th>GenericName</th><th>ProductStrength</th><th>StartDate</th>
        <th>StopDate</th><th>SIG</th></tr></thead><tbody>
        <tr ID="Med1"><td>Lisinopril oral tablet</td><td>RxNorm: 314076</td><td>lisinopril</td><td>10 mg</td><td>Not Indicated</td>
          <td>Not Indicated</td></tr>
        <tr ID="Med2"><td>Metformin oral tablet</td><td>RxNorm: 861007</td><td>metformin</td><td>500 mg</td><td>2007-08-06</td>
          <td>Not Indicated</td><td>1 tablet twice daily with meals</td></tr>
        <tr ID="Med3"><td>Trial drug X</td><td/><td/><td/><td/><td/><td/></tr>
        </tbody></table>
        """

    static func medication(_ material: String, text: String) -> String {
        """
        <substanceAdministration classCode="SBADM" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.16"/>
          <text><reference value="\(text)"/></text><statusCode code="completed"/>
          <effectiveTime xsi:type="IVL_TS"><low nullFlavor="NI"/><high nullFlavor="NI"/></effectiveTime>
          <consumable><manufacturedProduct><manufacturedMaterial>\(material)</manufacturedMaterial></manufacturedProduct></consumable>
        </substanceAdministration>
        """
    }

    func testAMedicationWhoseTextIsItsTableRowIsNamedByItsCodeAndItsSigIsTheSigCell() throws {
        let rxnorm = "codeSystem=\"2.16.840.1.113883.6.88\" codeSystemName=\"RxNorm\""
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: "2.16.840.1.113883.10.20.22.2.1.1", title: "Medications", text: Self.medicationTable, entries: [
                Self.medication("<code code=\"314076\" \(rxnorm) displayName=\"lisinopril 10 mg\"/>", text: "#Med1"),
                Self.medication("<code code=\"861007\" \(rxnorm) displayName=\"metformin 500 mg\"/>", text: "#Med2"),
                Self.medication("<code nullFlavor=\"UNK\"/>", text: "#Med3"),
            ]))).utf8)
        let document = try CCDADocument.read(data, what: "medications.xml")
        let statements = resources(document, "MedicationStatement")
        XCTAssertEqual(statements.count, 3)
        XCTAssertEqual(statements.map { $0["medicationCodeableConcept"]?["coding"]?[0]?["display"]?.string ?? $0["medicationCodeableConcept"]?["text"]?.string },
                       ["lisinopril 10 mg", "metformin 500 mg", "Trial drug X"])
        XCTAssertNil(statements[0]["dosage"], "the row has no SIG cell: no sig")
        XCTAssertEqual(statements[1]["dosage"]?[0]?["text"]?.string, "1 tablet twice daily with meals")
        XCTAssertEqual(statements[0]["note"]?[0]?["text"]?.string,
                       "Lisinopril oral tablet | RxNorm: 314076 | lisinopril | 10 mg | Not Indicated | Not Indicated", "the row is kept")
        let entries = try mapped(data).entries.filter { $0.content.type == .medication }
        XCTAssertEqual(entries.map(\.content.description), ["lisinopril 10 mg", "metformin 500 mg", "Trial drug X"])
        XCTAssertEqual(entries.map(\.content.dose), [nil, "1 tablet twice daily with meals", nil])
    }

    func testAMedicationRowWithoutHeadersStillNamesAnUncodedDrugAndASigReferenceIsTheSig() throws {
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: "2.16.840.1.113883.10.20.22.2.1.1", title: "Medications",
            text: "<table><tbody><tr ID=\"m1\"><td>Trial drug Y</td><td>once daily</td></tr></tbody></table>"
                + "<paragraph ID=\"sig2\">Two puffs as needed</paragraph><table><thead><tr><th>Drug</th><th>Fill Instructions</th></tr></thead>"
                + "<tbody><tr ID=\"m3\"><td>Albuterol inhaler</td><td>Dispense 1 inhaler</td></tr></tbody></table>",
            entries: [
                Self.medication("<code nullFlavor=\"UNK\"/>", text: "#m1"),
                Self.medication("<code code=\"745752\" codeSystem=\"2.16.840.1.113883.6.88\" displayName=\"albuterol inhaler\"/>", text: "#sig2"),
                Self.medication("<code nullFlavor=\"UNK\"/>", text: "#m3"),
            ]))).utf8)
        let statements = resources(try CCDADocument.read(data, what: "m.xml"), "MedicationStatement")
        XCTAssertEqual(statements.map { $0["medicationCodeableConcept"]?["text"]?.string },
                       ["Trial drug Y | once daily", nil, "Albuterol inhaler"], "the whole row when no header names the drug's column")
        XCTAssertEqual(statements.map { $0["dosage"]?[0]?["text"]?.string }, [nil, "Two puffs as needed", nil], "fill instructions are no sig")
    }
}
