import Foundation
import XCTest
import HReaderModel
@testable import HReaderRecords

// A blood-pressure panel with one reading missing (its component carries only a dataAbsentReason)
// is stored as the reading that is there, never as a whole "120/80" or a bare "109".

private func panel(_ components: String, code: String = "85354-9") throws -> EntryContent {
    let bundle = #"""
        {"resourceType": "Bundle", "type": "collection", "entry": [
          {"resource": {"resourceType": "Patient", "id": "h"}},
          {"resource": {"resourceType": "Observation", "id": "bp", "status": "final",
            "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}]}],
            "code": {"coding": [{"system": "http://loinc.org", "code": "\#(code)"}], "text": "Blood pressure systolic and diastolic"},
            "subject": {"reference": "Patient/h"}, "effectiveDateTime": "2024-05-06T07:08:00Z",
            "component": [\#(components)]}}]}
        """#
    let batch = try FHIRMapper(zone: .named(TimeZone(identifier: "UTC")!)).mapBundle(Data(bundle.utf8))
    return try XCTUnwrap(batch.records.first?.entries.first?.content)
}

private let systolic109 = #"""
    {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6", "display": "Systolic blood pressure"}]},
     "valueQuantity": {"value": 109, "unit": "mmHg", "system": "http://unitsofmeasure.org", "code": "mm[Hg]"}}
    """#
private let diastolicAbsent = #"""
    {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4", "display": "Diastolic blood pressure"}]},
     "dataAbsentReason": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/data-absent-reason", "code": "not-performed"}]}}
    """#

final class FHIRHalfBloodPressureTests: XCTestCase {
    func testAPanelWithoutItsDiastolicIsTheSystolicReadingAlone() throws {
        let bp = try panel(systolic109 + "," + diastolicAbsent, code: "55284-4")
        XCTAssertEqual(bp.type, .vitalSign)
        XCTAssertEqual(bp.description, "Systolic Blood Pressure", "what it is, as the timeline names a panel's systolic series")
        XCTAssertEqual(bp.valueNumber, 109)
        XCTAssertNil(bp.valueText, "no \"109\" that reads as a whole reading, no \"109/80\"")
        XCTAssertEqual(bp.unit, "mmHg")
        XCTAssertEqual(bp.codes, ["LOINC": ["55284-4", "8480-6"]], "the panel's code and the reading's; not the absent diastolic's")
        XCTAssertEqual(bp.date?.text, "2024-05-06T07:08:00Z")
        XCTAssertTrue(bp.raw?.contains("not-performed") == true, "raw keeps the absent component and its reason")
    }

    func testAPanelWithoutItsSystolicIsTheDiastolicReadingAlone() throws {
        let bp = try panel(#"""
            {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6"}]},
             "dataAbsentReason": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/data-absent-reason", "code": "unknown"}]}},
            {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4"}]}, "valueQuantity": {"value": 71, "unit": "mm[Hg]"}}
            """#)
        XCTAssertEqual(bp.description, "Diastolic Blood Pressure")
        XCTAssertEqual(bp.valueNumber, 71)
        XCTAssertEqual(bp.codes, ["LOINC": ["85354-9", "8462-4"]])
    }

    func testAPanelWhoseOtherComponentIsLeftOutIsAHalfReadingToo() throws {
        let bp = try panel(systolic109)
        XCTAssertEqual(bp.description, "Systolic Blood Pressure")
        XCTAssertEqual(bp.valueNumber, 109)
    }

    func testAPanelWithBothReadingsIsUnchanged() throws {
        let bp = try panel(systolic109 + #"""
            , {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4"}]}, "valueQuantity": {"value": 70, "unit": "mmHg"}}
            """#)
        XCTAssertEqual(bp.description, "Blood pressure systolic and diastolic")
        XCTAssertEqual(bp.valueText, "109/70")
        XCTAssertNil(bp.valueNumber)
    }

    func testAPanelWithNeitherReadingHasNoValue() throws {
        let bp = try panel(diastolicAbsent)
        XCTAssertEqual(bp.description, "Blood pressure systolic and diastolic")
        XCTAssertNil(bp.valueText)
        XCTAssertNil(bp.valueNumber)
        XCTAssertEqual(bp.codes, ["LOINC": ["85354-9"]])
    }
}
