import Foundation
import XCTest
import HReaderJSON
@testable import HReaderRecords

/// Small CDA documents written for these tests, in the shapes of HL7's C-CDA examples and of what
/// vendors send (no third-party file is copied). `Fixtures/ccda/` holds two whole ones.
enum CDAFixture {
    static let r21Templates = """
        <templateId root="2.16.840.1.113883.10.20.22.1.1" extension="2015-08-01"/>
        <templateId root="2.16.840.1.113883.10.20.22.1.2" extension="2015-08-01"/>
        """

    static let patient = """
        <recordTarget><patientRole>
          <id root="2.16.840.1.113883.19.5.99999.2" extension="4242"/>
          <patient><name><given>Ada</given><family>Fixture</family></name>
            <administrativeGenderCode code="F" codeSystem="2.16.840.1.113883.5.1"/><birthTime value="19800101"/></patient>
        </patientRole></recordTarget>
        """

    static func document(templates: String = r21Templates, header: String = patient, body: String,
                         prolog: String = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n") -> String {
        """
        \(prolog)<ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
          <typeId root="2.16.840.1.113883.1.3" extension="POCD_HD000040"/>
        \(templates)
          <id root="2.16.840.1.113883.19.5.99999.1" extension="T-1"/>
          <code code="34133-9" codeSystem="2.16.840.1.113883.6.1"/>
          <title>Test document</title>
          <effectiveTime value="20200102"/>
        \(header)
          <component>\(body)</component>
        </ClinicalDocument>
        """
    }

    static func structured(_ sections: String...) -> String {
        "<structuredBody>" + sections.map { "<component>\($0)</component>" }.joined() + "</structuredBody>"
    }

    static func section(template: String? = nil, code: String? = nil, title: String = "Section", text: String = "",
                        entries: [String] = [], nested: [String] = []) -> String {
        var out = "<section>"
        if let template { out += "<templateId root=\"\(template)\"/>" }
        if let code { out += "<code code=\"\(code)\" codeSystem=\"2.16.840.1.113883.6.1\"/>" }
        out += "<title>\(title)</title><text>\(text)</text>"
        out += entries.map { "<entry>\($0)</entry>" }.joined()
        out += nested.map { "<component>\($0)</component>" }.joined()
        return out + "</section>"
    }

    static func problem(_ code: String, _ name: String, negated: Bool = false, value: String? = nil, id: String? = nil) -> String {
        """
        <act classCode="ACT" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.3"/>
          <code code="CONC" codeSystem="2.16.840.1.113883.5.6"/><statusCode code="active"/>
          <entryRelationship typeCode="SUBJ"><observation classCode="OBS" moodCode="EVN"\(negated ? " negationInd=\"true\"" : "")>
            <templateId root="2.16.840.1.113883.10.20.22.4.4"/>\(id.map { "<id root=\"\($0)\"/>" } ?? "")
            <code code="55607006" codeSystem="2.16.840.1.113883.6.96"/><statusCode code="completed"/>
            <effectiveTime><low value="20150301"/></effectiveTime>
            \(value ?? "<value xsi:type=\"CD\" code=\"\(code)\" codeSystem=\"2.16.840.1.113883.6.96\" displayName=\"\(name)\"/>")
          </observation></entryRelationship>
        </act>
        """
    }

    static func vaccine(_ cvx: String, _ name: String, id: String = "1.2.3.4", extensionValue: String? = "IMM-1", negated: Bool = false,
                        date: String = "20191001", reason: String = "", mood: String = "EVN") -> String {
        """
        <substanceAdministration classCode="SBADM" moodCode="\(mood)"\(negated ? " negationInd=\"true\"" : "")>
          <templateId root="2.16.840.1.113883.10.20.22.4.52"/>
          <id root="\(id)"\(extensionValue.map { " extension=\"\($0)\"" } ?? "")/>
          <statusCode code="completed"/><effectiveTime value="\(date)"/>
          <consumable><manufacturedProduct><manufacturedMaterial>
            <code code="\(cvx)" codeSystem="2.16.840.1.113883.12.292" displayName="\(name)"/>
          </manufacturedMaterial></manufacturedProduct></consumable>
          \(reason)
        </substanceAdministration>
        """
    }

    static let problems = "2.16.840.1.113883.10.20.22.2.5.1", allergies = "2.16.840.1.113883.10.20.22.2.6.1",
               immunizations = "2.16.840.1.113883.10.20.22.2.2.1", results = "2.16.840.1.113883.10.20.22.2.3.1"

    static func file(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ccda").appendingPathComponent(name))
    }
}

final class CCDATests: XCTestCase {
    let utc = TimeZone(identifier: "UTC")!

    func read(_ text: String) throws -> CCDADocument { try CCDADocument.read(Data(text.utf8), what: "test.xml") }

    func resources(_ document: CCDADocument, _ type: String) -> [JSONObject] {
        document.resources.filter { $0["resourceType"]?.string == type }
    }

    func mapped(_ data: Data) throws -> MappedRecord {
        let batch = try FHIRMapper(zone: .named(utc)).map(files: [("test.xml", data, .ccda)])
        XCTAssertEqual(batch.records.count, 1)
        return try XCTUnwrap(batch.records.first)
    }

    func codings(_ concept: JSONValue?) -> [String] {
        (concept?["coding"]?.array ?? []).map { "\($0["system"]?.string ?? "")|\($0["code"]?.string ?? "")" }
    }

    // MARK: Recognition and the XML policy

    func testRecognizesAClinicalDocumentOnlyInTheHL7V3Namespace() throws {
        XCTAssertTrue(CCDADocument.recognizes(try CDAFixture.file("ccd-r21.xml")))
        XCTAssertTrue(CCDADocument.recognizes(Data(CDAFixture.document(body: CDAFixture.structured()).utf8)))
        XCTAssertFalse(CCDADocument.recognizes(Data("<ClinicalDocument><title>x</title></ClinicalDocument>".utf8)))
        XCTAssertFalse(CCDADocument.recognizes(Data("<Patient xmlns=\"http://hl7.org/fhir\"><id value=\"1\"/></Patient>".utf8)))
        XCTAssertFalse(CCDADocument.recognizes(Data("{\"resourceType\": \"Patient\"}".utf8)))
    }

    func testAUTF8ByteOrderMarkAndCRLFLineEndsAreRead() throws {
        let text = CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", entries: [CDAFixture.problem("38341003", "Hypertension")])))
        let data = Data([0xEF, 0xBB, 0xBF]) + Data(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        XCTAssertTrue(CCDADocument.recognizes(data))
        let document = try CCDADocument.read(data, what: "bom.ccd")
        XCTAssertEqual(resources(document, "Condition").count, 1)
    }

    func testADoctypeThatDeclaresEntitiesAndEntityReferencesAreRefused() throws {
        let bomb = """
            <?xml version="1.0"?><!DOCTYPE ClinicalDocument [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>
            <ClinicalDocument xmlns="urn:hl7-org:v3"><title>&b;</title></ClinicalDocument>
            """
        XCTAssertTrue(CCDADocument.recognizes(Data(bomb.utf8)), "recognized, so that the refusal names the reason")
        XCTAssertThrowsError(try read(bomb)) { error in
            XCTAssertTrue("\(error)".contains("DOCTYPE"), "\(error)")
        }
        let reference = CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(title: "&unknown;")))
        XCTAssertThrowsError(try read(reference))
    }

    func testMalformedXMLAndADocumentWithoutAPatientAreMalformedErrors() throws {
        XCTAssertThrowsError(try read("<ClinicalDocument xmlns=\"urn:hl7-org:v3\"><title>")) { error in
            guard case RecordsError.malformed(let message) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("not well-formed"), message)
        }
        XCTAssertThrowsError(try read(CDAFixture.document(header: "", body: CDAFixture.structured()))) { error in
            XCTAssertTrue("\(error)".contains("recordTarget"), "\(error)")
        }
    }

    // MARK: Kinds and header

    func testTheDocumentKindIsToldByItsTemplateIDs() throws {
        let body = CDAFixture.structured()
        XCTAssertEqual(try read(CDAFixture.document(body: body)).kind, "C-CDA R2.1 CCD")
        XCTAssertEqual(try read(CDAFixture.document(templates: """
            <templateId root="2.16.840.1.113883.10.20.22.1.1"/><templateId root="2.16.840.1.113883.10.20.22.1.2"/>
            """, body: body)).kind, "C-CDA R1.1 CCD")
        XCTAssertEqual(try read(CDAFixture.document(templates: """
            <templateId root="2.16.840.1.113883.10.20.22.1.1" extension="2015-08-01"/>
            <templateId root="2.16.840.1.113883.10.20.22.1.8" extension="2015-08-01"/>
            """, body: body)).kind, "C-CDA R2.1 Discharge Summary")
        XCTAssertEqual(try read(CDAFixture.document(templates: "<templateId root=\"2.16.840.1.113883.10.20.1\"/>", body: body)).kind, "CCD 1.0")
        XCTAssertEqual(try CCDADocument.read(try CDAFixture.file("c32.xml"), what: "c32.xml").kind, "HITSP C32")
    }

    func testR21CCDGivesThePatientFirstAndOneResourcePerEntry() throws {
        let document = try CCDADocument.read(try CDAFixture.file("ccd-r21.xml"), what: "ccd-r21.xml")
        XCTAssertEqual(document.kind, "C-CDA R2.1 CCD")
        XCTAssertEqual(document.producer, "Riverbend Health Network")
        XCTAssertEqual(document.date, "2012-05-15T10:30:00-05:00")
        let patient = try XCTUnwrap(document.resources.first)
        XCTAssertEqual(patient["resourceType"]?.string, "Patient")
        XCTAssertEqual(patient["identifier"]?[0]?["system"]?.string, "urn:oid:2.16.840.1.113883.19.5.99999.2")
        XCTAssertEqual(patient["identifier"]?[0]?["value"]?.string, "998991")
        XCTAssertEqual(patient["name"]?[0]?["family"]?.string, "Quarrington")
        XCTAssertEqual(patient["name"]?[0]?["given"], ["Isolde", "M"])
        XCTAssertEqual(patient["gender"]?.string, "female")
        XCTAssertEqual(patient["birthDate"]?.string, "1975-05-01")
        var types: [String: Int] = [:]
        for resource in document.resources.dropFirst() { types[resource["resourceType"]!.string!, default: 0] += 1 }
        XCTAssertEqual(types, ["AllergyIntolerance": 2, "Condition": 3, "MedicationStatement": 1, "MedicationRequest": 1, "Immunization": 2,
                               "Observation": 5, "Procedure": 1, "Encounter": 1, "ServiceRequest": 1])
        XCTAssertTrue(document.resources.allSatisfy { ($0["id"]?.string?.count ?? 0) > 0 })
        let problems = try XCTUnwrap(document.sections.first { $0.kind == "problems" })
        XCTAssertEqual(problems.imported, 3)
        XCTAssertEqual(problems.skipped, ["a problem whose value is a nullFlavor or a placeholder (no problem named)": 1])
        XCTAssertEqual(document.notes.map(\.title), ["Functional Status"])

        // Codes with their FHIR systems, translations as extra codings, RxNorm from manufacturedMaterial.
        let hypertension = try XCTUnwrap(resources(document, "Condition").first)
        XCTAssertEqual(codings(hypertension["code"]), ["http://snomed.info/sct|59621000", "http://hl7.org/fhir/sid/icd-10-cm|I10"])
        XCTAssertEqual(hypertension["clinicalStatus"]?["coding"]?[0]?["code"]?.string, "active")
        XCTAssertEqual(hypertension["onsetDateTime"]?.string, "2008-03-12")
        let lisinopril = try XCTUnwrap(resources(document, "MedicationStatement").first)
        XCTAssertEqual(codings(lisinopril["medicationCodeableConcept"]), ["http://www.nlm.nih.gov/research/umls/rxnorm|314076"])
        XCTAssertEqual(lisinopril["dosage"]?[0]?["text"]?.string, "Lisinopril 10 mg by mouth once daily", "the sig from the narrative")
        let influenza = try XCTUnwrap(resources(document, "Immunization").first)
        XCTAssertEqual(codings(influenza["vaccineCode"]), ["http://hl7.org/fhir/sid/cvx|140"])
        let vitals = resources(document, "Observation").filter { $0["category"]?[0]?["coding"]?[0]?["code"]?.string == "vital-signs" }
        XCTAssertEqual(vitals.count, 3)
        XCTAssertEqual(vitals.last?["effectiveDateTime"]?.string, "2012-05-15T10:30:00-05:00", "the organizer's time when the observation has none")
        let hemoglobin = try XCTUnwrap(resources(document, "Observation").first { $0["category"]?[0]?["coding"]?[0]?["code"]?.string == "laboratory" })
        XCTAssertEqual(hemoglobin["valueQuantity"]?["value"], .number("13.2"))
        XCTAssertEqual(hemoglobin["valueQuantity"]?["system"]?.string, "http://unitsofmeasure.org")
        XCTAssertEqual(hemoglobin["referenceRange"]?[0]?["low"]?["value"], .number("12.0"))
    }

    func testC32SectionsAreFoundByTheirCCD10TemplateIDsAndOldCVXOID() throws {
        let document = try CCDADocument.read(try CDAFixture.file("c32.xml"), what: "c32.xml")
        XCTAssertEqual(document.producer, "Northfield Community Clinic", "the author's organization when there is no custodian")
        XCTAssertEqual(resources(document, "Condition").first?["code"]?["text"]?.string, "Gout")
        XCTAssertEqual(resources(document, "Condition").first?["onsetDateTime"]?.string, "2007-03")
        XCTAssertEqual(codings(resources(document, "Immunization").first?["vaccineCode"]), ["http://hl7.org/fhir/sid/cvx|09"])
        XCTAssertEqual(resources(document, "Immunization").first?["occurrenceDateTime"]?.string, "2008-11")
        XCTAssertEqual(resources(document, "MedicationStatement").count, 1)
        XCTAssertEqual(codings(resources(document, "AllergyIntolerance").first?["code"]), ["http://snomed.info/sct|409137002"],
                       "a negated drug allergy without a substance is 'no known drug allergy'")
    }

    func testSectionsAreFoundByEitherTemplateOfTheirKind() throws {
        // Entries optional (…22.2.5), entries required (…22.2.5.1), CCD 1.0 (…10.20.1.11), HITSP C83 (…83.103).
        for template in ["2.16.840.1.113883.10.20.22.2.5", "2.16.840.1.113883.10.20.22.2.5.1", "2.16.840.1.113883.10.20.1.11",
                         "2.16.840.1.113883.3.88.11.83.103"] {
            let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
                template: template, title: "Diagnoses", entries: [CDAFixture.problem("38341003", "Hypertension")]))))
            XCTAssertEqual(document.sections.map(\.kind), ["problems"], template)
            XCTAssertEqual(resources(document, "Condition").count, 1, template)
        }
    }

    func testSectionsWithoutTemplateIDsAreFoundByTheirLOINCCode() throws {
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            code: "11450-4", title: "Problem List", entries: [CDAFixture.problem("38341003", "Hypertension")]))))
        XCTAssertEqual(document.sections.map(\.kind), ["problems"])
        XCTAssertEqual(resources(document, "Condition").count, 1)
    }

    func testNestedSectionsAreReadEachByItsOwnKind() throws {
        let results = CDAFixture.section(template: CDAFixture.results, title: "Lab results", entries: ["""
            <observation classCode="OBS" moodCode="EVN"><code code="2345-7" codeSystem="2.16.840.1.113883.6.1" displayName="Glucose"/>
              <statusCode code="completed"/><effectiveTime value="20200101"/><value xsi:type="PQ" value="95" unit="mg/dL"/></observation>
            """])
        let problems = CDAFixture.section(code: "11450-4", title: "Problems", entries: [CDAFixture.problem("38341003", "Hypertension")])
        let document = try read(CDAFixture.document(body: CDAFixture.structured(
            CDAFixture.section(code: "51848-0", title: "Assessment and plan", text: "Doing well.", nested: [results, problems]))))
        XCTAssertEqual(document.sections.map(\.title), ["Assessment and plan", "Lab results", "Problems"])
        XCTAssertEqual(resources(document, "Observation").count, 1)
        XCTAssertEqual(resources(document, "Condition").count, 1)
        XCTAssertEqual(document.notes.map(\.text), ["Doing well."], "the unread section's narrative is kept as a note")
    }

    // MARK: Nothing invented

    func testANegatedProblemIsARefutedConditionNeverAnActiveOne() throws {
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems", entries: [CDAFixture.problem("73211009", "Diabetes mellitus", negated: true)]))).utf8)
        let condition = try XCTUnwrap(resources(try CCDADocument.read(data, what: "t"), "Condition").first)
        XCTAssertEqual(condition["verificationStatus"]?["coding"]?[0]?["code"]?.string, "refuted")
        XCTAssertNil(condition["clinicalStatus"], "no clinical status beside a refutation")
        let entry = try XCTUnwrap(try mapped(data).entries.first)
        XCTAssertEqual(entry.content.status, "refuted")
    }

    func testANegatedAllergyIsNoKnownAllergyWithoutASubstanceAndRefutedWithOne() throws {
        func allergy(_ substance: String) -> String {
            """
            <act classCode="ACT" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.30"/><statusCode code="active"/>
              <entryRelationship typeCode="SUBJ"><observation classCode="OBS" moodCode="EVN" negationInd="true">
                <templateId root="2.16.840.1.113883.10.20.22.4.7"/><code code="ASSERTION" codeSystem="2.16.840.1.113883.5.4"/>
                <value xsi:type="CD" code="419199007" codeSystem="2.16.840.1.113883.6.96"/>
                <participant typeCode="CSM"><participantRole><playingEntity>\(substance)</playingEntity></participantRole></participant>
              </observation></entryRelationship>
            </act>
            """
        }
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.allergies, title: "Allergies",
            entries: [allergy("<code nullFlavor=\"NA\"/>"), allergy("<code code=\"7980\" codeSystem=\"2.16.840.1.113883.6.88\" displayName=\"Penicillin\"/>")]))).utf8)
        let allergies = resources(try CCDADocument.read(data, what: "t"), "AllergyIntolerance")
        XCTAssertEqual(codings(allergies.first?["code"]), ["http://snomed.info/sct|716186003"])
        XCTAssertEqual(allergies.last?["verificationStatus"]?["coding"]?[0]?["code"]?.string, "refuted")
        let entries = try mapped(data).entries
        XCTAssertEqual(entries.map(\.content.description), ["No known allergy", "Penicillin (refuted)"], "the name says it where only the name is shown")
        XCTAssertEqual(entries.last?.content.status, "refuted", "never an active allergy to penicillin")
    }

    func testARefusedVaccineIsNotDoneWithItsReason() throws {
        let reason = """
            <entryRelationship typeCode="RSON"><observation classCode="OBS" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.53"/>
              <code code="PATOBJ" codeSystem="2.16.840.1.113883.5.8" displayName="patient objection"/></observation></entryRelationship>
            """
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.immunizations, title: "Immunizations",
            entries: [CDAFixture.vaccine("33", "Pneumococcal", negated: true, reason: reason),
                      CDAFixture.vaccine("140", "Influenza", extensionValue: "IMM-2", mood: "INT")]))).utf8)
        let document = try CCDADocument.read(data, what: "t")
        let immunization = try XCTUnwrap(resources(document, "Immunization").first)
        XCTAssertEqual(immunization["status"]?.string, "not-done")
        XCTAssertEqual(codings(immunization["statusReason"]), ["http://terminology.hl7.org/CodeSystem/v3-ActReason|PATOBJ"])
        XCTAssertEqual(resources(document, "Immunization").count, 1, "a planned vaccine is not one given")
        XCTAssertEqual(document.sections.first?.skipped, ["a planned immunization (moodCode INT), not one given": 1])
        XCTAssertEqual(try mapped(data).entries.first?.content.status, "not-done")
        XCTAssertEqual(try mapped(data).entries.first?.content.description, "Pneumococcal (not done)")
    }

    func testPlaceholdersAreSkippedAndCountedWithTheirReasons() throws {
        let medication = """
            <substanceAdministration classCode="SBADM" moodCode="EVN"><statusCode code="active"/>
              <consumable><manufacturedProduct><manufacturedMaterial><code nullFlavor="UNK"/><name>Not on file</name></manufacturedMaterial>
              </manufacturedProduct></consumable></substanceAdministration>
            """
        let document = try read(CDAFixture.document(body: CDAFixture.structured(
            CDAFixture.section(template: CDAFixture.problems, title: "Problems", entries: [
                CDAFixture.problem("", "", value: "<value xsi:type=\"CD\" nullFlavor=\"NI\"/>"),
                CDAFixture.problem("", "", value: "<value xsi:type=\"CD\" nullFlavor=\"OTH\"><originalText>No information</originalText></value>"),
            ]),
            CDAFixture.section(template: "2.16.840.1.113883.10.20.22.2.1.1", title: "Medications", entries: [medication]))))
        XCTAssertEqual(document.resources.count, 1, "the Patient only")
        XCTAssertEqual(document.sections[0].skipped, ["a problem whose value is a nullFlavor or a placeholder (no problem named)": 2])
        XCTAssertEqual(document.sections[1].skipped, ["a medication whose drug is a nullFlavor or a placeholder (no drug named)": 1])

        // A vendor's placeholder beside a generic code, and a narrative that only says there is nothing.
        let encounter = """
            <encounter classCode="ENC" moodCode="EVN"><code code="371531000" codeSystem="2.16.840.1.113883.6.96" displayName="encounter report">
              <originalText><reference value="#e1"/></originalText></code></encounter>
            """
        let vendor = try read(CDAFixture.document(body: CDAFixture.structured(
            CDAFixture.section(template: "2.16.840.1.113883.10.20.22.2.22.1", title: "Encounters",
                               text: "<content ID=\"e1\">No encounter diagnosis data is applicable</content>", entries: [encounter]),
            CDAFixture.section(template: "2.16.840.1.113883.10.20.22.2.14", title: "Functional status", text: "Not available."))))
        let emptyTable = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.results, title: "Results",
            text: "<table><thead><tr><th>Test</th><th>Value</th><th>Date</th></tr></thead><tbody/></table>"))))
        XCTAssertEqual(emptyTable.notes, [])
        XCTAssertEqual(emptyTable.sections.first?.skipped, ["the section's narrative is a table with headers and no rows": 1])
        XCTAssertEqual(vendor.resources.count, 1, "the Patient only")
        XCTAssertEqual(vendor.notes, [])
        XCTAssertEqual(vendor.sections.map(\.skipped), [["an encounter with neither a type nor a time": 1],
                                                       ["the section's narrative says only that there is nothing (\"Not available.\")": 1]])
    }

    func testVendorPlaceholderWordingIsToldFromRealNames() {
        for placeholder in ["Not on file", "No information", "No medication data is applicable", "No encounter diagnosis data is applicable",
                            "Instruction excluded/not available", "Not applicable", "none recorded.", "UNKNOWN", "No Information About Results",
                            "No vitals taken", "Not indicated"] {
            XCTAssertTrue(CCDAValues.isPlaceholderText(placeholder), placeholder)
        }
        for name in ["No known allergies", "No complications", "Nonspecific chest pain", "Noscapine 3 MG/ML Oral Solution", "Unknown etiology fever",
                     "Not pregnant", "Information technology worker"] {
            XCTAssertFalse(CCDAValues.isPlaceholderText(name), name)
        }
    }

    /// The word matcher says what the regular expressions in its documentation say, on wordings
    /// that match, nearly match, and differ only by a space, a letter or a word too many.
    func testThePlaceholderMatcherAgreesWithItsRegularExpressions() {
        let patterns = [
            "^no( [a-z/&-]+){0,4} (data|information|info)( (is|was))?( (applicable|available|recorded|on file|documented|reported|found))?$",
            "(excluded/)?not (applicable|available|on file|recorded|documented|indicated)$", "^(data|information) (not|un)available$",
            "^no (data|information|info) (about|on|for|regarding)( [a-z/&-]+){1,4}$", "^no [a-z]+ (taken|recorded|reported|documented|on file)$",
        ]
        var texts = ["no data", "no info", "no information", "no medication data is applicable", "no encounter diagnosis data is applicable",
                     "no a b c d data", "no a b c d e data", "no data was found", "no data is on file", "no data on file", "no data is",
                     "no data was available", "no data is was", "no x/y & z-w info recorded", "no data data", "no data  is applicable",
                     "instruction excluded/not available", "cannot applicable", "not indicated", "xnot on file", "not on files",
                     "data notavailable", "data unavailable", "data not available", "information unavailable", "info unavailable",
                     "no information about results", "no info regarding a b c d", "no info regarding a b c d e", "no data on", "no data for x1",
                     "no vitals taken", "no vital-signs taken", "no vitals on file", "no vitals on", "no v recorded", "no  vitals taken",
                     "no vitals taken ", "no\tdata", "no café data", "no données data", "nodata", "no", "", " no data", "no data\u{301}",
                     "no known allergies", "no complications", "not pregnant", "unknown etiology fever", "no data is applicable to me"]
        texts += texts.map { $0 + " x" } + texts.map { "x " + $0 }
        for text in texts {
            let expected = patterns.contains { text.range(of: $0, options: .regularExpression) != nil }
            XCTAssertEqual(CCDAValues.matchesPlaceholderPattern(text), expected, text)
        }
    }

    func testANarrativeOnlySectionIsKeptAsANoteOfItsKindNeverAsACodedFact() throws {
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, code: "11450-4", title: "Problems",
            text: "<list><item>Migraine since 2010</item><item>Seasonal rhinitis</item></list>"))).utf8)
        let document = try CCDADocument.read(data, what: "t")
        XCTAssertTrue(resources(document, "Condition").isEmpty)
        XCTAssertEqual(document.notes.first?.text, "Migraine since 2010\nSeasonal rhinitis")
        let entry = try XCTUnwrap(try mapped(data).entries.first)
        XCTAssertEqual(entry.content.type, .condition)
        XCTAssertEqual(entry.content.status, FHIRMapper.narrativeStatus)
        XCTAssertTrue(entry.content.description.contains("narrative"), entry.content.description)
        XCTAssertEqual(entry.content.valueText, "Migraine since 2010\nSeasonal rhinitis")
        XCTAssertEqual(entry.content.codes, ["LOINC": ["11450-4"]], "the section's code only, no problem code")

        // Entries that all turn out to be placeholders (a vaccine named only by a reference that points
        // nowhere): what the narrative says is kept as a note, beside the skip.
        let broken = CDAFixture.vaccine("140", "Influenza").replacingOccurrences(
            of: "<code code=\"140\" codeSystem=\"2.16.840.1.113883.12.292\" displayName=\"Influenza\"/>",
            with: "<code nullFlavor=\"NI\"><originalText><reference value=\"#missing\"/></originalText></code>")
        let vaccines = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.immunizations, code: "11369-6", title: "Immunizations", text: "Influenza vaccine, October 2019", entries: [broken]))))
        XCTAssertTrue(resources(vaccines, "Immunization").isEmpty)
        XCTAssertEqual(vaccines.notes.map(\.type), [.immunization])
        XCTAssertEqual(vaccines.sections.first?.skipped, ["an immunization whose vaccine is a nullFlavor or a placeholder (no vaccine named)": 1])
        XCTAssertEqual(vaccines.sections.first?.summary, "Immunizations: narrative kept as a note, 1 skipped")
    }

    func testANonXMLBodyIsKeptAsADocumentReferenceWithTheAttachmentInline() throws {
        let pdf = Data("%PDF-1.4 invented".utf8).base64EncodedString()
        let data = Data(CDAFixture.document(body: """
            <nonXMLBody><text mediaType="application/pdf" representation="B64">\n\(pdf.prefix(8))\n\(pdf.dropFirst(8))\n</text></nonXMLBody>
            """).utf8)
        let document = try CCDADocument.read(data, what: "t")
        let reference = try XCTUnwrap(resources(document, "DocumentReference").first)
        XCTAssertEqual(reference["content"]?[0]?["attachment"]?["contentType"]?.string, "application/pdf")
        XCTAssertEqual(reference["content"]?[0]?["attachment"]?["data"]?.string, pdf)
        let entry = try XCTUnwrap(try mapped(data).entries.first)
        XCTAssertEqual(entry.unmappedType, "DocumentReference")
        XCTAssertTrue(entry.content.raw?.contains(pdf) == true)

        // A large embedded PDF: recognized from its first bytes, read whole.
        let large = Data(repeating: 0x25, count: 800 << 10).base64EncodedString()  // over the 1 MiB recognition reads
        let big = Data(CDAFixture.document(body: "<nonXMLBody><text mediaType=\"application/pdf\" representation=\"B64\">\(large)</text></nonXMLBody>").utf8)
        XCTAssertTrue(CCDADocument.recognizes(big))
        XCTAssertEqual(resources(try CCDADocument.read(big, what: "big"), "DocumentReference").first?["content"]?[0]?["attachment"]?["data"]?.string?.count,
                       large.count)
    }

    func testVendorShapesAreReadWithoutLosingWhatTheySay() throws {
        // The problem in `code` with no value; a negated generic "Problem" (no known problems); a
        // CCD 1.0 manufacturedLabeledDrug; a PQ whose value is not a number.
        let inCode = """
            <observation classCode="OBS" moodCode="EVN"><templateId root="2.16.840.1.113883.10.20.22.4.4"/>
              <code code="38341003" codeSystem="2.16.840.1.113883.6.96" displayName="Hypertension"/><statusCode code="completed"/></observation>
            """
        let noProblems = CDAFixture.problem("55607006", "Problem", negated: true)
        let labeled = """
            <substanceAdministration classCode="SBADM" moodCode="EVN"><statusCode code="active"/>
              <consumable><manufacturedProduct><manufacturedLabeledDrug><code code="197361" codeSystem="2.16.840.1.113883.6.88"
                displayName="amlodipine 5 MG Oral Tablet"/></manufacturedLabeledDrug></manufacturedProduct></consumable></substanceAdministration>
            """
        let pressure = """
            <observation classCode="OBS" moodCode="EVN"><code code="85354-9" codeSystem="2.16.840.1.113883.6.1" displayName="Blood pressure"/>
              <statusCode code="completed"/><effectiveTime value="20200101"/><value xsi:type="PQ" value="120/80" unit="mm[Hg]"/></observation>
            """
        let document = try read(CDAFixture.document(body: CDAFixture.structured(
            CDAFixture.section(template: CDAFixture.problems, title: "Problems", entries: [inCode, noProblems]),
            CDAFixture.section(template: "2.16.840.1.113883.10.20.22.2.1.1", title: "Medications", entries: [labeled]),
            CDAFixture.section(template: "2.16.840.1.113883.10.20.22.2.4.1", title: "Vitals", entries: [pressure]))))
        XCTAssertEqual(codings(resources(document, "Condition").first?["code"]), ["http://snomed.info/sct|38341003"])
        XCTAssertEqual(resources(document, "Condition").count, 1)
        XCTAssertEqual(document.sections[0].skipped, ["a statement that there are no known problems (a negated \"Problem\"), not a record": 1])
        XCTAssertEqual(codings(resources(document, "MedicationStatement").first?["medicationCodeableConcept"]),
                       ["http://www.nlm.nih.gov/research/umls/rxnorm|197361"])
        XCTAssertEqual(resources(document, "Observation").first?["valueString"]?.string, "120/80 mm[Hg]")
    }

    func testAStatementMarkedUnknownIsNoRecord() throws {
        // HL7's "unknown if pregnant" and "immunization status unknown" shapes: the statement itself has a nullFlavor.
        let pregnancy = """
            <observation classCode="OBS" moodCode="EVN" nullFlavor="UNK"><templateId root="2.16.840.1.113883.10.20.15.3.8"/>
              <code code="ASSERTION" codeSystem="2.16.840.1.113883.5.4"/><statusCode code="completed"/><effectiveTime value="20110410"/>
              <value xsi:type="CD" code="77386006" codeSystem="2.16.840.1.113883.6.96" displayName="Pregnancy"/></observation>
            """
        let vaccine = CDAFixture.vaccine("88", "Influenza").replacingOccurrences(of: "moodCode=\"EVN\"", with: "moodCode=\"EVN\" nullFlavor=\"NI\"")
        let document = try read(CDAFixture.document(body: CDAFixture.structured(
            CDAFixture.section(template: "2.16.840.1.113883.10.20.22.2.17", title: "Social history", entries: [pregnancy]),
            CDAFixture.section(template: CDAFixture.immunizations, title: "Immunizations", entries: [vaccine]))))
        XCTAssertEqual(document.resources.count, 1, "the Patient only")
        XCTAssertEqual(document.sections.map(\.skipped), [["a statement the document marks unknown (nullFlavor UNK), not a record": 1],
                                                         ["a statement the document marks unknown (nullFlavor NI), not a record": 1]])
    }

    func testMedicationsInAnOrganizerFreeTextAndNoMedicationAtAll() throws {
        func administration(_ material: String, negated: Bool = false, text: String = "") -> String {
            """
            <substanceAdministration classCode="SBADM" moodCode="EVN"\(negated ? " negationInd=\"true\"" : "")>\(text)<statusCode code="active"/>
              <consumable><manufacturedProduct><manufacturedMaterial>\(material)</manufacturedMaterial></manufacturedProduct></consumable>
            </substanceAdministration>
            """
        }
        let azithromycin = "<code code=\"308460\" codeSystem=\"2.16.840.1.113883.6.88\" displayName=\"azithromycin 250 MG Oral Tablet\"/>"
        let course = "<organizer classCode=\"CLUSTER\" moodCode=\"EVN\"><statusCode code=\"active\"/>"
            + "<component>\(administration(azithromycin))</component><component>\(administration(azithromycin))</component></organizer>"
        let freeText = administration("<code nullFlavor=\"UNK\"/>", text: "<text><reference value=\"#m1\"/></text>")
        let none = administration("<code code=\"410942007\" codeSystem=\"2.16.840.1.113883.6.96\" displayName=\"Drug or medicament\"/>", negated: true)
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: "2.16.840.1.113883.10.20.22.2.1.1", title: "Medications", text: "<paragraph ID=\"m1\">Trial drug X, one tab daily</paragraph>",
            entries: [course, freeText, none]))))
        let statements = resources(document, "MedicationStatement")
        XCTAssertEqual(statements.count, 3, "both parts of the course, and the free-text medication")
        XCTAssertEqual(statements.last?["medicationCodeableConcept"]?["text"]?.string, "Trial drug X, one tab daily")
        XCTAssertEqual(document.sections[0].skipped, ["a statement that no medication is taken (negationInd), not a record": 1])
    }

    func testResultsBeyondAValueAndInUnitsOutsideUCUMKeepTheirMeaning() throws {
        func result(_ value: String) -> String {
            """
            <observation classCode="OBS" moodCode="EVN"><code code="30934-4" codeSystem="2.16.840.1.113883.6.1" displayName="BNP"/>
              <statusCode code="completed"/><effectiveTime value="20200101"/>\(value)</observation>
            """
        }
        let document = try read(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.results, title: "Results", entries: [
                result("<value xsi:type=\"IVL_PQ\"><low value=\"0\" unit=\"pg/mL\"/><high value=\"5\" unit=\"pg/mL\"/></value>"),
                result("<value xsi:type=\"IVL_PQ\"><low value=\"500\" unit=\"mg/dL\" inclusive=\"false\"/></value>"),
                result("<value xsi:type=\"PQ\" nullFlavor=\"OTH\"><translation value=\"152\" nullFlavor=\"OTH\"><originalText>THOUS/MCL</originalText></translation></value>"),
            ]))))
        let values = resources(document, "Observation").map { $0["valueQuantity"] }
        XCTAssertEqual(values.map { $0?["comparator"]?.string }, ["<=", ">", nil])
        XCTAssertEqual(values.last??["unit"]?.string, "THOUS/MCL")
        let entries = try mapped(Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.results, title: "Results",
            entries: [result("<value xsi:type=\"IVL_PQ\"><high value=\"5\" unit=\"pg/mL\"/></value>")]))).utf8)).entries
        XCTAssertEqual(entries.first?.content.valueText, "<=5", "never the exact number 5")
        XCTAssertNil(entries.first?.content.valueNumber)
    }

    func testRaceAndEthnicityBecomeTheUSCoreExtensionsThePatientMappingReads() throws {
        let record = try mapped(try CDAFixture.file("ccd-r21.xml"))
        XCTAssertEqual(record.patient.content.race, "White")
        XCTAssertEqual(record.patient.content.ethnicity, "Not Hispanic or Latino")
        XCTAssertEqual(record.patient.identifiers, ["urn:oid:2.16.840.1.113883.19.5.99999.2|998991"])
    }

    // MARK: Identity

    func testEntriesWhoseIDsRepeatAreAllKeptWithStableDistinctIDs() throws {
        let text = CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.immunizations, title: "Immunizations",
            entries: (1...3).map { CDAFixture.vaccine("140", "Influenza", date: "201\($0)1001") })))
        let first = try read(text), second = try read(text)
        let ids = resources(first, "Immunization").compactMap { $0["id"]?.string }
        XCTAssertEqual(ids.count, 3)
        XCTAssertEqual(Set(ids).count, 3)
        XCTAssertEqual(ids, resources(second, "Immunization").compactMap { $0["id"]?.string })
        XCTAssertTrue(ids.allSatisfy { $0.range(of: "^[A-Za-z0-9.-]{1,64}$", options: .regularExpression) != nil }, "FHIR ids: \(ids)")
        XCTAssertEqual(try mapped(Data(text.utf8)).entries.count, 3)
    }

    func testIdentifiersKeepRootAndExtensionAndARootAloneIsTheValue() throws {
        func identifier(_ xml: String) throws -> JSONObject? {
            CCDAValues.identifier(try CDAElement.read(Data("<id xmlns=\"urn:hl7-org:v3\" \(xml)/>".utf8), what: "t"))
        }
        XCTAssertEqual(try identifier("root=\"1.2.3\" extension=\"X\""), ["system": "urn:oid:1.2.3", "value": "X"])
        XCTAssertEqual(try identifier("root=\"1.2.3\""), ["system": "urn:ietf:rfc:3986", "value": "urn:oid:1.2.3"])
        XCTAssertEqual(try identifier("root=\"36E3E930-7B14-11DB-9FE1-0800200C9A66\""),
                       ["system": "urn:ietf:rfc:3986", "value": "urn:uuid:36e3e930-7b14-11db-9fe1-0800200c9a66"])
        XCTAssertNil(try identifier("nullFlavor=\"NI\""))
    }

    // MARK: Values

    /// libxml2 hands an escaped `&` of an attribute over as `&#38;` when it substitutes no
    /// entities: the name a vendor gave ("Salt &amp; pepper") is read with its one `&`.
    func testAnEscapedAmpersandInAnAttributeIsReadAsOneAmpersand() throws {
        let data = Data(CDAFixture.document(body: CDAFixture.structured(CDAFixture.section(
            template: CDAFixture.problems, title: "Problems",
            entries: [CDAFixture.problem("38341003", "Hypertension &amp; renal disease &#38; more")]))).utf8)
        let document = try CCDADocument.read(data, what: "t")
        let condition = try XCTUnwrap(resources(document, "Condition").first)
        XCTAssertEqual(condition["code"]?["coding"]?.array?.first?["display"]?.string, "Hypertension & renal disease & more")
    }

    func testTimesKeepTheirPrecisionAndATimeWithoutAnOffsetKeepsItsDateOnly() {
        XCTAssertEqual(CCDAValues.fhirDateTime("2012"), "2012")
        XCTAssertEqual(CCDAValues.fhirDateTime("201205"), "2012-05")
        XCTAssertEqual(CCDAValues.fhirDateTime("20120515"), "2012-05-15")
        XCTAssertEqual(CCDAValues.fhirDateTime("20120515103000-0500"), "2012-05-15T10:30:00-05:00")
        XCTAssertEqual(CCDAValues.fhirDateTime("201205151030+0100"), "2012-05-15T10:30:00+01:00")
        XCTAssertEqual(CCDAValues.fhirDateTime("20120515103000.123-0500"), "2012-05-15T10:30:00.123-05:00")
        XCTAssertEqual(CCDAValues.fhirDateTime("20120515103000"), "2012-05-15", "FHIR has no dateTime with a time and no zone")
        XCTAssertNil(CCDAValues.fhirDateTime("20121340"))
        XCTAssertNil(CCDAValues.fhirDateTime("20120230"))
        XCTAssertNil(CCDAValues.fhirDateTime("2012051"))
        XCTAssertNil(CCDAValues.fhirDateTime("20120515250000-0500"))
    }

    func testOriginalTextReferencesResolveIntoTheSectionNarrative() throws {
        let document = try CCDADocument.read(try CDAFixture.file("ccd-r21.xml"), what: "t")
        let texts = resources(document, "Condition").compactMap { $0["code"]?["text"]?.string }
        XCTAssertEqual(texts, ["Essential hypertension", "Asthma", "Diabetes mellitus ruled out"])
        XCTAssertEqual(resources(document, "AllergyIntolerance").first?["reaction"]?[0]?["manifestation"]?[0]?["text"]?.string, "Hives")
    }

    func testTheSameBytesGiveTheSameResources() throws {
        let data = try CDAFixture.file("ccd-r21.xml")
        XCTAssertEqual(try CCDADocument.read(data, what: "a").resources, try CCDADocument.read(data, what: "b").resources)
    }
}
