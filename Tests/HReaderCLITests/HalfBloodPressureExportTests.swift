import Foundation
import XCTest

/// A blood-pressure panel whose diastolic reading was absent at the source, imported from a file and
/// exported with `--out` through the real binary: the panel goes out with the systolic reading and
/// the diastolic as absent (its code and the source's dataAbsentReason), never as `valueString "109"`,
/// and it is valid FHIR R4 (fhir.resources, as ExportTests checks).
final class HalfBloodPressureExportTests: CLITestCase {
    func testAHalfReadingIsExportedAsAPanelWithTheAbsentComponentSaidSo() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Hal", "--last", "Ving", "--birth-date", "1970-01-01"]))
        let bundle = #"""
            {"resourceType": "Bundle", "type": "collection", "entry": [{"resource": {
              "resourceType": "Observation", "id": "half", "status": "final",
              "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}]}],
              "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9"}], "text": "Blood pressure"},
              "effectiveDateTime": "2026-10-01T08:00:00Z",
              "component": [
                {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6"}]},
                 "valueQuantity": {"value": 109, "unit": "mmHg", "system": "http://unitsofmeasure.org", "code": "mm[Hg]"}},
                {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4"}]},
                 "dataAbsentReason": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/data-absent-reason", "code": "not-performed"}]}}]}}]}
            """#
        try ok(withPassword(["import", "--file", try file("half.json", bundle), "--patient", "1"]))

        let entries = try XCTUnwrap(json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as? [[String: Any]])
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries.first?["description"] as? String, "Systolic Blood Pressure")

        // The summary's tile and the timeline show the half reading as what it is.
        let summary = try json(try ok(withPassword(["summary", "--json", "--patient", "1"])))
        let tile = (summary["tiles"] as? [[String: Any]] ?? []).first { $0["identifier"] as? String == "org.mitre.hreader.bloodpressure" }
        XCTAssertEqual(tile?["value"] as? String, "109/?", "not a whole reading: \(String(describing: tile))")
        let timeline = try json(try ok(withPassword(["timeline", "--patient", "1", "--from", "2026-09-01", "--to", "2026-11-01"])))
        let vitals = timeline["vitals"] as? [[String: Any]] ?? []
        XCTAssertEqual(vitals.map { $0["description"] as? String }, ["Systolic Blood Pressure"], "\(vitals)")
        XCTAssertEqual((vitals.first?["values"] as? [NSNumber])?.map(\.doubleValue), [109])

        let out = workDir.appendingPathComponent("export.json")
        try ok(withPassword(["export", "--patient", "1", "--out", out.path]), env: ["TZ": "UTC"])
        let exported = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any])
        let observations = (exported["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            .filter { $0["resourceType"] as? String == "Observation" }
        XCTAssertEqual(observations.count, 1)
        let panel = try XCTUnwrap(observations.first)
        let code = ((panel["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String
        XCTAssertEqual(code, "85354-9")
        XCTAssertFalse(panel.keys.contains { $0.hasPrefix("value") }, "a panel has no value of its own: \(panel)")
        let components = try XCTUnwrap(panel["component"] as? [[String: Any]])
        XCTAssertEqual(components.count, 2)
        let systolic = components[0], diastolic = components[1]
        XCTAssertEqual(((systolic["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String, "8480-6")
        XCTAssertEqual(((systolic["valueQuantity"] as? [String: Any])?["value"] as? NSNumber)?.doubleValue, 109)
        XCTAssertEqual(((diastolic["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String, "8462-4")
        XCTAssertNil(diastolic["valueQuantity"])
        let reason = ((diastolic["dataAbsentReason"] as? [String: Any])?["coding"] as? [[String: Any]])?.first
        XCTAssertEqual(reason?["system"] as? String, "http://terminology.hl7.org/CodeSystem/data-absent-reason")
        XCTAssertEqual(reason?["code"] as? String, "not-performed", "the source's reason")

        try validateFHIR([exported])
    }

}
