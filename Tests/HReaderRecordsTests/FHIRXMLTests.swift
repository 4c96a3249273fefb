import Foundation
import XCTest
import HReaderJSON
@testable import HReaderRecords

// FHIR XML read as the FHIR JSON it stands for: the same Bundle written in both forms (invented
// patient and records) gives the same JSON and the same entries; hostile and malformed XML is refused.

private let utc = TimeZone(identifier: "UTC")!

private let bundleXML = #"""
<?xml version="1.0" encoding="UTF-8"?>
<!-- an IPS-like download -->
<Bundle xmlns="http://hl7.org/fhir" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://hl7.org/fhir bundle.xsd">
  <id value="b1"/>
  <type value="collection"/>
  <entry>
    <fullUrl value="urn:uuid:0c3b1f4e-0000-4000-8000-000000000001"/>
    <resource>
      <Patient>
        <id value="x1"/>
        <extension url="http://hl7.org/fhir/us/core/StructureDefinition/us-core-race">
          <extension url="text">
            <valueString value="Invented race"/>
          </extension>
        </extension>
        <identifier>
          <system value="urn:oid:1.2.3.4"/>
          <value value="12345"/>
        </identifier>
        <active value="true"/>
        <name>
          <use value="official"/>
          <family value="Xmlson"/>
          <given value="Ada"/>
          <given>
            <extension url="http://example.org/fhir/StructureDefinition/name-note">
              <valueString value="second given name withheld"/>
            </extension>
          </given>
        </name>
        <gender value="female"/>
        <birthDate value="1980-02-03"/>
      </Patient>
    </resource>
  </entry>
  <entry>
    <resource>
      <Observation>
        <id value="bp"/>
        <status value="final"/>
        <category>
          <coding>
            <system value="http://terminology.hl7.org/CodeSystem/observation-category"/>
            <code value="vital-signs"/>
          </coding>
        </category>
        <code>
          <coding>
            <system value="http://loinc.org"/>
            <code value="85354-9"/>
            <display value="Blood pressure panel"/>
          </coding>
        </code>
        <subject>
          <reference value="Patient/x1"/>
        </subject>
        <effectiveDateTime value="2024-01-02T08:00:00Z"/>
        <component>
          <code>
            <coding>
              <system value="http://loinc.org"/>
              <code value="8480-6"/>
            </coding>
          </code>
          <valueQuantity>
            <value value="120.0"/>
            <unit value="mmHg"/>
            <system value="http://unitsofmeasure.org"/>
            <code value="mm[Hg]"/>
          </valueQuantity>
        </component>
        <component>
          <code>
            <coding>
              <system value="http://loinc.org"/>
              <code value="8462-4"/>
            </coding>
          </code>
          <valueQuantity>
            <value value="80"/>
            <unit value="mmHg"/>
          </valueQuantity>
        </component>
      </Observation>
    </resource>
  </entry>
  <entry>
    <resource>
      <Observation>
        <id value="hr"/>
        <status value="final"/>
        <code>
          <text value="Heart rate"/>
        </code>
        <subject>
          <reference value="Patient/x1"/>
          <identifier>
            <value value="12345"/>
          </identifier>
        </subject>
        <effectiveDateTime value="2024-01-02T08:01:00Z"/>
        <valueQuantity>
          <value value="72.50"/>
          <unit value="/min"/>
        </valueQuantity>
      </Observation>
    </resource>
  </entry>
  <entry>
    <resource>
      <Condition>
        <id value="c1"/>
        <clinicalStatus>
          <coding>
            <system value="http://terminology.hl7.org/CodeSystem/condition-clinical"/>
            <code value="active"/>
          </coding>
        </clinicalStatus>
        <code>
          <text value="Seasonal allergic rhinitis"/>
        </code>
        <subject>
          <reference value="Patient/x1"/>
        </subject>
        <onsetDateTime value="2015-04">
          <extension url="http://example.org/fhir/StructureDefinition/onset-certainty">
            <valueCode value="probable"/>
          </extension>
        </onsetDateTime>
        <recordedDate id="rd1" value="2016-01-01"/>
      </Condition>
    </resource>
  </entry>
  <entry>
    <resource>
      <MedicationRequest>
        <id value="mr1"/>
        <text>
          <status value="generated"/>
          <div xmlns="http://www.w3.org/1999/xhtml"><p class="dose">Amoxicillin <b>500&#160;mg</b> &amp; water</p><br/></div>
        </text>
        <contained>
          <Medication>
            <id value="med1"/>
            <code>
              <coding>
                <system value="http://www.nlm.nih.gov/research/umls/rxnorm"/>
                <code value="308182"/>
                <display value="Amoxicillin 500 MG Oral Capsule"/>
              </coding>
            </code>
          </Medication>
        </contained>
        <status value="active"/>
        <intent value="order"/>
        <medicationReference>
          <reference value="#med1"/>
        </medicationReference>
        <subject>
          <reference value="Patient/x1"/>
        </subject>
        <authoredOn value="2024-02-01"/>
        <dosageInstruction>
          <sequence value="1"/>
          <doseAndRate>
            <doseQuantity>
              <value value="1"/>
              <unit value="capsule"/>
            </doseQuantity>
          </doseAndRate>
        </dosageInstruction>
      </MedicationRequest>
    </resource>
  </entry>
</Bundle>
"""#

/// The same Bundle as FHIR JSON, members in the order the XML gives them.
private let bundleJSON = #"""
{"resourceType": "Bundle", "id": "b1", "type": "collection", "entry": [
  {"fullUrl": "urn:uuid:0c3b1f4e-0000-4000-8000-000000000001", "resource": {"resourceType": "Patient", "id": "x1",
    "extension": [{"url": "http://hl7.org/fhir/us/core/StructureDefinition/us-core-race",
                   "extension": [{"url": "text", "valueString": "Invented race"}]}],
    "identifier": [{"system": "urn:oid:1.2.3.4", "value": "12345"}],
    "active": true,
    "name": [{"use": "official", "family": "Xmlson", "given": ["Ada", null],
              "_given": [null, {"extension": [{"url": "http://example.org/fhir/StructureDefinition/name-note", "valueString": "second given name withheld"}]}]}],
    "gender": "female", "birthDate": "1980-02-03"}},
  {"resource": {"resourceType": "Observation", "id": "bp", "status": "final",
    "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}]}],
    "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9", "display": "Blood pressure panel"}]},
    "subject": {"reference": "Patient/x1"}, "effectiveDateTime": "2024-01-02T08:00:00Z",
    "component": [
      {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6"}]},
       "valueQuantity": {"value": 120.0, "unit": "mmHg", "system": "http://unitsofmeasure.org", "code": "mm[Hg]"}},
      {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4"}]}, "valueQuantity": {"value": 80, "unit": "mmHg"}}]}},
  {"resource": {"resourceType": "Observation", "id": "hr", "status": "final", "code": {"text": "Heart rate"},
    "subject": {"reference": "Patient/x1", "identifier": {"value": "12345"}}, "effectiveDateTime": "2024-01-02T08:01:00Z",
    "valueQuantity": {"value": 72.50, "unit": "/min"}}},
  {"resource": {"resourceType": "Condition", "id": "c1",
    "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "active"}]},
    "code": {"text": "Seasonal allergic rhinitis"}, "subject": {"reference": "Patient/x1"},
    "onsetDateTime": "2015-04",
    "_onsetDateTime": {"extension": [{"url": "http://example.org/fhir/StructureDefinition/onset-certainty", "valueCode": "probable"}]},
    "recordedDate": "2016-01-01", "_recordedDate": {"id": "rd1"}}},
  {"resource": {"resourceType": "MedicationRequest", "id": "mr1",
    "text": {"status": "generated", "div": "<div xmlns=\"http://www.w3.org/1999/xhtml\"><p class=\"dose\">Amoxicillin <b>500\u00a0mg</b> &amp; water</p><br/></div>"},
    "contained": [{"resourceType": "Medication", "id": "med1",
      "code": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "308182", "display": "Amoxicillin 500 MG Oral Capsule"}]}}],
    "status": "active", "intent": "order", "medicationReference": {"reference": "#med1"},
    "subject": {"reference": "Patient/x1"}, "authoredOn": "2024-02-01",
    "dosageInstruction": [{"sequence": 1, "doseAndRate": [{"doseQuantity": {"value": 1, "unit": "capsule"}}]}]}}
]}
"""#

private func json(_ text: String) throws -> JSONValue { try JSONParser.parse(Data(text.utf8)) }
private func xml(_ text: String) throws -> JSONValue { try FHIRXML.parse(Data(text.utf8)) }

private func assertMalformed(_ text: String, mentions fragments: [String], file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertThrowsError(try FHIRMapper(zone: .named(utc)).mapXML(Data(text.utf8)), file: file, line: line) { error in
        let message = "\(error)"
        guard case RecordsError.malformed = error else { return XCTFail("not RecordsError.malformed: \(message)", file: file, line: line) }
        for fragment in fragments {
            XCTAssertTrue(message.contains(fragment), "'\(fragment)' not in: \(message)", file: file, line: line)
        }
    }
}

final class FHIRXMLTests: XCTestCase {
    func testTheXMLBundleIsTheSameJSONAsItsJSONForm() throws {
        let converted = try xml(bundleXML)
        let expected = try json(bundleJSON)
        XCTAssertEqual(converted, expected, "\n\(converted.serialized())\n\(expected.serialized())")
        XCTAssertEqual(try FHIRXML.jsonText(Data(bundleXML.utf8)), expected.serialized())
    }

    func testTheXMLBundleMapsToTheSameEntriesAsTheJSON() throws {
        let mapper = FHIRMapper(zone: .named(utc))
        let fromXML = try mapper.mapXML(Data(bundleXML.utf8))
        let fromJSON = try mapper.mapBundle(Data(bundleJSON.utf8))
        XCTAssertEqual(fromXML.records.count, 1)
        XCTAssertEqual(fromJSON.records.count, 1)
        let (x, j) = (try XCTUnwrap(fromXML.records.first), try XCTUnwrap(fromJSON.records.first))
        XCTAssertEqual(x.patient.remoteID, "x1")
        XCTAssertEqual(x.patient.content.firstName, "Ada")
        XCTAssertEqual(x.patient.content.lastName, "Xmlson")
        XCTAssertEqual(x.patient.content.birthDate, "1980-02-03")
        XCTAssertEqual(x.patient.content.race, "Invented race")
        XCTAssertEqual(x.patient.content.raw, j.patient.content.raw)
        XCTAssertEqual(x.entries, j.entries)
        XCTAssertEqual(x.skipped, j.skipped)
        XCTAssertEqual(fromXML.skipped, fromJSON.skipped)

        let entries = Dictionary(uniqueKeysWithValues: x.entries.map { ($0.remoteID, $0.content) })
        XCTAssertEqual(entries.count, 4)
        XCTAssertEqual(entries["Observation/bp"]?.valueText, "120.0/80")
        XCTAssertEqual(entries["Observation/hr"]?.valueNumber, 72.5)
        XCTAssertTrue(entries["Observation/hr"]?.raw?.contains(#""value":72.50"#) == true, "the decimal as written")
        XCTAssertEqual(entries["Condition/c1"]?.start?.text, "2015-04")
        XCTAssertEqual(entries["MedicationRequest/mr1"]?.description, "Amoxicillin 500 MG Oral Capsule", "the contained Medication")
        XCTAssertEqual(entries["MedicationRequest/mr1"]?.codes, ["RxNorm": ["308182"]])
    }

    func testASingleResourceAndTheRepeatingRule() throws {
        let encounter = try xml(#"""
            <Encounter xmlns="http://hl7.org/fhir">
              <id value="e1"/>
              <status value="finished"/>
              <class><system value="http://terminology.hl7.org/CodeSystem/v3-ActCode"/><code value="AMB"/></class>
              <type><text value="Check-up"/></type>
              <serviceType><text value="General practice"/></serviceType>
              <subject><reference value="Patient/p"/></subject>
              <participant><individual><display value="Dr Who"/></individual></participant>
              <period><start value="2024-03-01T09:00:00Z"/></period>
              <location><location><display value="Room 1"/></location></location>
              <location><location><display value="Room 2"/></location></location>
            </Encounter>
            """#)
        XCTAssertEqual(encounter, try json(#"""
            {"resourceType": "Encounter", "id": "e1", "status": "finished",
             "class": {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "AMB"},
             "type": [{"text": "Check-up"}], "serviceType": {"text": "General practice"},
             "subject": {"reference": "Patient/p"}, "participant": [{"individual": {"display": "Dr Who"}}],
             "period": {"start": "2024-03-01T09:00:00Z"},
             "location": [{"location": {"display": "Room 1"}}, {"location": {"display": "Room 2"}}]}
            """#), "Encounter.type repeats, class and serviceType do not; an element that occurs twice is an array")
    }

    func testNumbersAndBooleansFollowTheElementsTable() throws {
        let converted = try xml(#"""
            <Observation xmlns="http://hl7.org/fhir">
              <identifier><value value="007"/></identifier>
              <valueInteger value="12"/>
              <referenceRange><low><value value="-1.5e2"/></low><text value="5"/></referenceRange>
              <extension url="u"><valueBoolean value="false"/></extension>
              <extension url="v"><valueDecimal value="+3"/></extension>
            </Observation>
            """#)
        XCTAssertEqual(converted, try json(#"""
            {"resourceType": "Observation", "identifier": [{"value": "007"}], "valueInteger": 12,
             "referenceRange": [{"low": {"value": -1.5e2}, "text": "5"}],
             "extension": [{"url": "u", "valueBoolean": false}, {"url": "v", "valueDecimal": "+3"}]}
            """#), "an identifier's value stays text; a number that is not a JSON number stays as written")
    }

    func testADoctypeWithEntitiesIsRefusedAndNothingIsRead() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-fhir-xxe-\(UUID().uuidString)")
        try "TOP-SECRET-CONTENT".write(to: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: secret) }
        assertMalformed(#"""
            <?xml version="1.0"?>
            <!-- a comment first -->
            <!DOCTYPE Patient [
              <!ENTITY xxe SYSTEM "file://\#(secret.path)">
              <!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
            ]>
            <Patient xmlns="http://hl7.org/fhir"><id value="p"/><gender value="&xxe;&b;"/></Patient>
            """#, mentions: ["DOCTYPE", "line 3", "refused"])
        // Even a bare DOCTYPE: FHIR XML never has one.
        assertMalformed(#"<!DOCTYPE Patient><Patient xmlns="http://hl7.org/fhir"/>"#, mentions: ["DOCTYPE"])
    }

    func testMalformedAndForeignXMLAreClearErrors() {
        assertMalformed("<Patient xmlns=\"http://hl7.org/fhir\">\n  <id value=\"p\">\n</Patient>", mentions: ["not well-formed", "line 3"])
        assertMalformed(#"<ClinicalDocument xmlns="urn:hl7-org:v3"><id root="1"/></ClinicalDocument>"#,
                        mentions: ["not FHIR", "ClinicalDocument", "urn:hl7-org:v3"])
        assertMalformed("<Patient xmlns=\"http://hl7.org/fhir\">\n<gender>female</gender></Patient>", mentions: ["text in <gender>", "line 2"])
        assertMalformed(#"<Patient xmlns="http://hl7.org/fhir"><name><family value="X"/></name><x:y xmlns:x="urn:other"/></Patient>"#,
                        mentions: ["urn:other"])
        assertMalformed(#"{"resourceType": "Patient"}"#, mentions: ["not well-formed"])
        assertMalformed("", mentions: ["empty"])
    }

    func testDeepNestingIsAnErrorNotACrash() {
        let depth = 5_000
        let text = #"<Basic xmlns="http://hl7.org/fhir">"# + String(repeating: #"<extension url="u">"#, count: depth)
            + String(repeating: "</extension>", count: depth) + "</Basic>"
        assertMalformed(text, mentions: ["deeper"])
    }
}
