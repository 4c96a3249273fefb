import Foundation
import XCTest

/// `hreader import --file`: RHEx c32 records and FHIR Bundles/NDJSON, through the real binary.
final class ImportTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    /// An RHEx/hData c32 record shaped as hReader's servers sent them, with invented people and values.
    static func rhexRecord(systolicDescription: String = "Systolic Blood Pressure") -> String {
        """
        {"_id": "rec-0001", "first": "Ophelia", "last": "Testcase", "gender": "F", "birthdate": 315532800,
         "race": {"code": "2106-3", "code_set": "CDC-RE", "name": "White"}, "ethnicity": {"name": "Not Hispanic or Latino"},
         "encounters": [{"_id": "e1", "description": "Office visit", "time": 1262340000, "codes": {"CPT": ["99213"]}},
                        {"_id": "e2", "description": "Follow-up", "start_time": 1265018400, "end_time": 1265022000}],
         "conditions": [{"_id": "c1", "description": "Hypertension", "status": "active", "start_time": 1230768000,
                         "codes": {"SNOMED-CT": ["59621000"]}}],
         "allergies": [{"_id": "a1", "description": "Penicillin", "time": 946684800, "reaction": {"value": "Hives"},
                        "severity": {"value": "Moderate"}}],
         "medications": [{"_id": "m1", "description": "Lisinopril 10 MG", "time": 1262340000, "dose": {"value": "10", "unit": "mg"},
                          "codes": {"RxNorm": ["314076"]}}],
         "procedures": [{"_id": "p1", "description": "Appendectomy", "time": 631152000}],
         "results": [{"_id": "r1", "description": "LDL Cholesterol", "time": 1262340000, "value": {"scalar": "131", "units": "mg/dL"},
                      "codes": {"LOINC": ["13457-7"]}},
                     {"_id": "r2", "description": "Urine culture", "time": 1262340600, "value": {"scalar": "negative", "units": null}}],
         "vital_signs": [{"_id": "v1", "description": "\(systolicDescription)", "time": 1262340000, "value": {"scalar": "142.0", "units": "mm[Hg]"}},
                         {"_id": "v2", "description": "Diastolic Blood Pressure", "time": 1262340000, "value": {"scalar": "91.0", "units": "mm[Hg]"}},
                         {"_id": "v3", "description": "BMI", "time": 1262340000, "value": {"scalar": "27.4", "units": null}},
                         {"_id": "v4", "description": "Systolic Blood Pressure", "time": 1265018400, "value": {"scalar": "135.0", "units": "mm[Hg]"}}],
         "immunizations": [{"_id": "i1", "description": "Influenza vaccine", "time": 1254355200, "codes": {"CVX": ["88"]}}],
         "care_goals": [{"description": "Lower blood pressure"}]}
        """
    }

    func entries(_ patient: String = "1") throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", patient, "--json"])))["entries"] as! [[String: Any]]
    }

    func testRHExRecordImportsOneEntryPerSectionElementAndReportsWhatItSkipped() throws {
        let path = try file("record.json", Self.rhexRecord())
        let result = try ok(withPassword(["import", "--file", path, "--as", "spouse"]))
        XCTAssertTrue(result.stdout.contains("13 new entries"), result.stdout)
        XCTAssertTrue(result.stdout.contains("care_goals"), "skipped sections are reported: \(result.stdout)")
        let patients = try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
        XCTAssertEqual(patients.count, 1)
        XCTAssertEqual(patients[0]["first_name"] as? String, "Ophelia")
        XCTAssertEqual(patients[0]["gender"] as? String, "female")
        XCTAssertEqual(patients[0]["birth_date"] as? String, "1980-01-01")
        XCTAssertEqual(patients[0]["relationship"] as? String, "spouse")
        let all = try entries()
        var byType: [String: Int] = [:]
        for e in all { byType[e["type"] as! String, default: 0] += 1 }
        XCTAssertEqual(byType, ["encounter": 2, "condition": 1, "allergy": 1, "medication": 1, "procedure": 1, "result": 2,
                                "vital_sign": 4, "immunization": 1])
        let ldl = all.first { $0["description"] as? String == "LDL Cholesterol" }!
        XCTAssertEqual(ldl["value"] as? Double, 131)
        XCTAssertEqual(ldl["unit"] as? String, "mg/dL")
        XCTAssertEqual(ldl["codes"] as? [String: [String]], ["LOINC": ["13457-7"]])
        XCTAssertEqual(all.first { $0["description"] as? String == "Urine culture" }!["value"] as? String, "negative")
    }

    func testReimportUpdatesInPlaceAndKeepsTheUsersOwnFields() throws {
        let path = try file("record.json", Self.rhexRecord())
        try ok(withPassword(["import", "--file", path]))
        let lisinopril = try entries().first { $0["description"] as? String == "Lisinopril 10 MG" }!
        let id = String(lisinopril["id"] as! Int)
        try ok(withPassword(["entries", "comment", id, "--text", "only half a tablet", "--dose", "5 mg"]))
        try ok(withPassword(["entries", "strike", "1"]))
        // The server's record changes: a description is corrected.
        try file("record.json", Self.rhexRecord(systolicDescription: "Systolic blood pressure (corrected)"))
        let again = try ok(withPassword(["import", "--file", path]))
        XCTAssertTrue(again.stdout.contains("0 new entries, 1 updated, 12 unchanged"), again.stdout)
        let after = try entries()
        XCTAssertEqual(after.count, 13, "no duplicates")
        let kept = after.first { String($0["id"] as! Int) == id }!
        XCTAssertEqual(kept["comments"] as? String, "only half a tablet")
        XCTAssertEqual((kept["patient_comments"] as? [String: String])?["dose"], "5 mg")
        XCTAssertEqual(after.first { $0["id"] as? Int == 1 }!["struck"] as? Bool, true)
        XCTAssertTrue(after.contains { $0["description"] as? String == "Systolic blood pressure (corrected)" })
    }

    func testTimelineOfAnImportedRecordListsEveryDatedEntryOnceInDateOrder() throws {
        try ok(withPassword(["import", "--file", try file("record.json", Self.rhexRecord())]))
        let payload = try json(try ok(withPassword(["timeline", "--patient", "1", "--from", "1900-01-01", "--to", "2030-01-01"])))
        var listed = 0
        for key in ["allergies", "conditions", "encounters", "immunizations", "medications", "procedures", "results"] {
            let items = payload[key] as? [[String: Any]] ?? []
            let dates = items.map { $0["date"] as! Int }
            XCTAssertEqual(dates, dates.sorted(), "\(key) in date order")
            listed += items.count
        }
        let vitals = payload["vitals"] as! [[String: Any]]
        listed += vitals.reduce(0) { $0 + ($1["values"] as! [Any]).count }
        XCTAssertEqual(listed, 13, "every dated entry exactly once")
        XCTAssertEqual(vitals.map { $0["description"] as! String }, ["BMI", "Systolic Blood Pressure", "Diastolic Blood Pressure"])
        XCTAssertEqual(vitals[1]["values"] as? [Double], [142, 135])
        let encounters = payload["encounters"] as! [[String: Any]]
        XCTAssertEqual(encounters.map { $0["date"] as! Int }, [1_262_340_000, 1_265_018_400], "start time when there is no time")
    }

    func testFHIRBundleAndNDJSONImportWithBloodPressureOnTheTimeline() throws {
        let bundle = """
        {"resourceType": "Bundle", "type": "searchset", "entry": [
          {"fullUrl": "urn:uuid:p-1", "resource": {"resourceType": "Patient", "id": "pat-1", "name": [{"family": "Fhirsen", "given": ["Fiona", "F."]}],
                                                   "gender": "female", "birthDate": "1975-04"}},
          {"resource": {"resourceType": "Observation", "id": "bp-1", "status": "final",
            "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}]}],
            "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9", "display": "Blood pressure panel"}], "text": "Blood pressure"},
            "subject": {"reference": "urn:uuid:p-1"}, "effectiveDateTime": "2021-03-04T08:00:00+01:00",
            "component": [
              {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6"}]}, "valueQuantity": {"value": 128, "unit": "mm[Hg]"}},
              {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4"}]}, "valueQuantity": {"value": 84, "unit": "mm[Hg]"}}]}},
          {"resource": {"resourceType": "Condition", "id": "c-1", "code": {"text": "Migraine"}, "subject": {"reference": "Patient/pat-1"},
                        "onsetDateTime": "2019"}},
          {"resource": {"resourceType": "Practitioner", "id": "dr-1"}}]}
        """
        let result = try ok(withPassword(["import", "--file", try file("bundle.json", bundle)]))
        XCTAssertTrue(result.stdout.contains("FHIR JSON"), result.stdout)
        XCTAssertTrue(result.stdout.contains("Practitioner"), "unsupported types are counted: \(result.stdout)")
        let vitals = try json(try ok(withPassword(["timeline", "--patient", "1", "--page", "year", "--at", "2021-12-31"])))["vitals"] as! [[String: Any]]
        XCTAssertEqual(vitals.map { $0["description"] as! String }, ["Systolic Blood Pressure", "Diastolic Blood Pressure"])
        XCTAssertEqual(vitals.map { $0["values"] as! [Double] }, [[128], [84]])
        let conditions = try entries().filter { $0["type"] as? String == "condition" }
        XCTAssertEqual(conditions.first?["start"] as? String, "2019", "partial dates keep their precision")

        let ndjson = """
        {"resourceType": "Patient", "id": "n-1", "name": [{"family": "One", "given": ["Ada"]}]}
        {"resourceType": "Patient", "id": "n-2", "name": [{"family": "Two", "given": ["Bo"]}]}
        {"resourceType": "Immunization", "id": "im-1", "status": "completed", "vaccineCode": {"text": "Tetanus"}, "patient": {"reference": "Patient/n-2"}, "occurrenceDateTime": "2020-02-02"}
        """
        let second = try ok(withPassword(["import", "--file", try file("bulk.ndjson", ndjson), "--json"]))
        let summary = try json(second)["summary"] as! [String: Any]
        XCTAssertEqual((summary["patients"] as? [String: Any])?["created"] as? Int, 2)
        let patients = try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
        XCTAssertEqual(patients.count, 3)
    }

    func testMalformedFilesExit5AndWriteNothing() throws {
        let cases = [
            ("not-json.json", "this is not json"),
            ("truncated.json", #"{"resourceType": "Bundle", "entry": [{"resource": {"resourceType": "Patient", "id": "x""#),
            ("no-type.json", #"{"resourceType": "Bundle", "entry": [{"resource": {"id": "x"}}]}"#),
        ]
        for (name, text) in cases {
            let result = try hreader(withPassword(["import", "--file", try file(name, text)]))
            XCTAssertEqual(result.status, 5, "\(name): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(name), result.stderr)
        }
        let counts = try json(try ok(withPassword(["status", "--json"])))["counts"] as! [String: Int]
        XCTAssertEqual(counts["patients"], 0)
        XCTAssertEqual(counts["entries"], 0)
        XCTAssertEqual(try hreader(withPassword(["import", "--file", workDir.appendingPathComponent("missing.json").path])).status, 2)
    }

    /// FHIR JSON names each member once. Read leniently, `"id"` twice or a Reference with two
    /// `reference`s (the one checked, and another that reached the IPS pointing outside the vault)
    /// were kept: now the file is refused, naming the member, and nothing is written.
    func testFHIRJSONThatRepeatsAMemberNameIsRefusedNamingIt() throws {
        let patient = #"{"resourceType": "Patient", "id": "p1", "name": [{"family": "Twice", "given": ["Ada"]}]}"#
        let cases: [(String, String, String)] = [
            ("id-twice.json", #"{"resourceType": "Patient", "id": "p1", "name": [{"family": "Twice"}], "id": "p2"}"#, #""id""#),
            ("two-references.json", """
                {"resourceType": "Bundle", "type": "collection", "entry": [{"resource": \(patient)},
                 {"resource": {"resourceType": "Condition", "id": "c1", "code": {"text": "Asthma"},
                  "subject": {"reference": "Patient/p1", "reference": "https://elsewhere.example/fhir/Patient/9"}}}]}
                """, #""reference""#),
            ("repeated.ndjson", patient + "\n" + #"{"resourceType": "Condition", "code": {"text": "A", "text": "B"}, "subject": {"reference": "Patient/p1"}}"#,
             #""text""#),
        ]
        for (name, text, member) in cases {
            let result = try hreader(withPassword(["import", "--file", try file(name, text)]))
            XCTAssertEqual(result.status, 5, "\(name): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(name), result.stderr)
            XCTAssertTrue(result.stderr.contains("the member name \(member) appears twice in one object"), result.stderr)
        }
        let counts = try json(try ok(withPassword(["status", "--json"])))["counts"] as! [String: Int]
        XCTAssertEqual(counts["patients"], 0)
        XCTAssertEqual(counts["entries"], 0)
    }

    func testFHIRXMLFilesImportLikeTheirJSONAndEntitiesAreRefused() throws {
        let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <Bundle xmlns="http://hl7.org/fhir">
          <type value="collection"/>
          <entry>
            <fullUrl value="urn:uuid:7d000000-0000-4000-8000-000000000001"/>
            <resource>
              <Patient>
                <id value="x-1"/>
                <identifier><system value="urn:example:mrn"/><value value="XML-1"/></identifier>
                <name><use value="official"/><family value="Marklund"/><given value="Xenia"/></name>
                <birthDate value="1979-03-04"/>
              </Patient>
            </resource>
          </entry>
          <entry>
            <resource>
              <Observation>
                <id value="w-1"/>
                <status value="final"/>
                <code><coding><system value="http://loinc.org"/><code value="29463-7"/><display value="Body weight"/></coding></code>
                <subject><reference value="urn:uuid:7d000000-0000-4000-8000-000000000001"/></subject>
                <effectiveDateTime value="2022-02-02T08:00:00Z"/>
                <valueQuantity><value value="61.50"/><unit value="kg"/></valueQuantity>
              </Observation>
            </resource>
          </entry>
        </Bundle>
        """
        let result = try ok(withPassword(["import", "--file", try file("ips.xml", xml)]))
        XCTAssertTrue(result.stdout.contains("FHIR XML"), result.stdout)
        let weight = try XCTUnwrap(try entries().first)
        XCTAssertEqual(weight["description"] as? String, "Body weight")
        XCTAssertEqual(weight["value"] as? Double, 61.5)

        let hostile = """
        <?xml version="1.0"?>
        <!DOCTYPE Bundle [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>
        <Patient xmlns="http://hl7.org/fhir"><id value="&b;"/></Patient>
        """
        let refused = try hreader(withPassword(["import", "--file", try file("bomb.xml", hostile)]))
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("bomb.xml"), refused.stderr)
        XCTAssertEqual(try json(try ok(withPassword(["status", "--json"])))["counts"].flatMap { ($0 as? [String: Int])?["patients"] }, 1)
    }

    func testControlCharactersFromRecordsNeverReachTheTerminal() throws {
        // A Condition whose text would write the clipboard (OSC 52), ring the bell and clear the screen.
        let hostile = "Gout\u{1B}]52;c;SGVsbG8=\u{07}\u{1B}[2J\r\u{9B}31m"
        let resource = try JSONSerialization.data(withJSONObject: [
            "resourceType": "Condition", "id": "esc", "code": ["text": hostile], "onsetDateTime": "2020"])
        try ok(withPassword(["patients", "add", "--first", "Local", "--last", "Person"]))
        try ok(withPassword(["import", "--file", try file("esc.json", String(decoding: resource, as: UTF8.self)), "--patient", "1"]))
        for arguments in [["entries", "list", "--patient", "1"], ["entries", "list", "--patient", "1", "--json"], ["summary", "--patient", "1"],
                          ["timeline", "--patient", "1", "--page", "decade", "--at", "2021-01-01"]] {
            let output = try ok(withPassword(arguments))
            for control in ["\u{1B}", "\u{07}", "\r", "\u{9B}"] {
                XCTAssertFalse(output.stdout.contains(control), "\(arguments.joined(separator: " ")) printed \(control.unicodeScalars.first!.value)")
            }
        }
        XCTAssertTrue(try ok(withPassword(["entries", "list", "--patient", "1"])).stdout.contains("Gout"), "the text itself is still shown")
        // An error naming hostile input is cleaned too.
        let badName = try hreader(withPassword(["import", "--file", try file("x\u{1B}[2J.json", "not json")]))
        XCTAssertEqual(badName.status, 5)
        XCTAssertFalse(badName.stderr.contains("\u{1B}"), badName.stderr)
    }

    func testPatientOptionPutsEntriesUnderAnExistingPatient() throws {
        try ok(withPassword(["patients", "add", "--first", "Local", "--last", "Person"]))
        let labs = """
        {"resourceType": "Observation", "id": "lab-1", "status": "final",
         "category": [{"coding": [{"code": "laboratory"}]}], "code": {"text": "Potassium"},
         "valueQuantity": {"value": 4.1, "unit": "mmol/L"}, "effectiveDateTime": "2022-01-01T10:00:00Z"}
        """
        try ok(withPassword(["import", "--file", try file("lab.json", labs), "--patient", "1"]))
        let all = try entries()
        XCTAssertEqual(all.map { $0["description"] as? String }, ["Potassium"])
        XCTAssertEqual(all.first?["type"] as? String, "result")
    }
}
