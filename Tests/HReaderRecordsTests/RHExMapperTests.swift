import Foundation
import XCTest
import HReaderModel
@testable import HReaderRecords

// RHEx/hData records as hReader read them (c32 JSON), with invented patients in the shapes real
// servers send: epoch-second times, `{system: [codes]}`, `{scalar, units}` values as strings,
// statuses and reactions as strings or small objects, and fields that are null.

private let record = #"""
{
  "_id": "5a1000000000000000000001",
  "first": "Ada", "last": "Testwell", "gender": "F",
  "birthdate": 457156800,
  "race": {"name": "Asian", "code": "2028-9", "code_set": "CDC-RE"},
  "ethnicity": {"code": "2186-5", "code_set": "CDC-RE"},
  "languages": ["en-US"],
  "deathdate": null,
  "encounters": [
    {"_id": "e1", "_type": "Encounter", "codes": {"CPT": ["99213"], "ICD-9-CM": ["V70.0"]},
     "description": "Office visit", "facility": {}, "time": 1291266000, "value": {}, "version": 1}
  ],
  "conditions": [
    {"_id": "c1", "codes": {"SNOMED-CT": ["59621000"], "ICD-10-CM": ["I10"]}, "description": "Hypertension",
     "start_time": 1251172800, "end_time": 1262304000, "status": {"code": "55561003", "name": "Active"},
     "time": null, "value": {}}
  ],
  "allergies": [
    {"_id": "a1", "codes": {"RxNorm": ["7980"], "Unknown": ["2798"]}, "description": null,
     "reaction": {"code": "247472004", "codeSystem": "SNOMED-CT", "name": "Hives"},
     "severity": "moderate", "start_time": 1256218090, "status": null, "value": {}},
    {"_id": "a2", "codes": {"Unknown": ["000476"]}, "description": null,
     "reaction": {"code": null, "codeSystem": "Unknown", "codeSystemOid": null}, "severity": null, "value": {}}
  ],
  "medications": [
    {"_id": "m1", "codes": {"RxNorm": ["314076"]}, "description": "Lisinopril", "dose": "20mg",
     "freeTextSig": "ACE inhibitor", "start_time": 1277438400, "end_time": null, "value": {}},
    {"_id": "m2", "codes": {"RxNorm": ["866924"]}, "description": "Metoprolol", "dose": {"value": "25", "unit": "mg"},
     "start_time": 1279598400, "value": {}}
  ],
  "procedures": [
    {"_id": "p1", "codes": {"CPT": ["97802"], "SNOMED-CT": ["61310001"]}, "description": "Nutrition counseling",
     "time": 1277438400, "status": "completed", "value": {}}
  ],
  "results": [
    {"_id": "r1", "codes": {"LOINC": ["2345-7"]}, "description": "Glucose", "status": "completed",
     "time": 1279598400, "value": {"scalar": "6.3", "units": "mmol/L"}},
    {"_id": "r2", "codes": {"LOINC": ["5196-1"]}, "description": "Hepatitis B surface antigen", "status": "completed",
     "time": 1279598400, "value": {"scalar": "negative", "units": null}},
    {"_id": "r3", "codes": {"LOINC": ["6690-2"]}, "description": "White cell count", "status": "completed",
     "time": 1279598400, "value": {}}
  ],
  "vital_signs": [
    {"_id": "v1", "_type": "LabResult", "codes": {"SNOMED-CT": ["271649006"]}, "description": "Systolic Blood Pressure",
     "status": "completed", "time": 1327899600, "value": {"scalar": "118.0", "units": "mm[Hg]"}},
    {"_id": "v2", "_type": "LabResult", "codes": {"SNOMED-CT": ["271650006"]}, "description": "Diastolic Blood Pressure",
     "status": "completed", "time": 1327899600, "value": {"scalar": "68.0", "units": "mm[Hg]"}}
  ],
  "immunizations": [
    {"_id": "i1", "codes": {"CVX": ["140"]}, "description": "Influenza vaccine", "refusalInd": false,
     "time": 1291266000, "value": {}}
  ],
  "social_history": [
    {"_id": "s1", "codes": {"SNOMED-CT": ["160618006"]}, "time": 1277438400, "value": {}}
  ],
  "care_goals": [
    {"_id": "g1", "codes": {"CPT": ["97804"]}, "time": 1277438400, "value": {}}
  ]
}
"""#

private func map(_ text: String, remoteID: String? = nil) throws -> MappedRecord {
    try RHExMapper(zone: .named(TimeZone(identifier: "UTC")!)).map(Data(text.utf8), remoteID: remoteID)
}

private func entry(_ record: MappedRecord, _ remoteID: String, file: StaticString = #filePath, line: UInt = #line) throws -> EntryContent {
    try XCTUnwrap(record.entries.first { $0.remoteID == remoteID }?.content, "no entry \(remoteID)", file: file, line: line)
}

final class RHExMapperTests: XCTestCase {
    func testDemographicsBecomeThePatient() throws {
        let mapped = try map(record)
        let patient = mapped.patient
        XCTAssertEqual(patient.remoteID, "5a1000000000000000000001")
        XCTAssertEqual(patient.content.remoteID, "5a1000000000000000000001")
        XCTAssertEqual(patient.content.firstName, "Ada")
        XCTAssertEqual(patient.content.lastName, "Testwell")
        XCTAssertEqual(patient.content.gender, "female")
        XCTAssertEqual(patient.content.birthDate, "1984-06-27")  // 1984-06-27T04:00:00Z, midnight in New York
        XCTAssertEqual(patient.content.race, "Asian")
        XCTAssertEqual(patient.content.ethnicity, "Not Hispanic or Latino")  // named from its CDC code
        XCTAssertEqual(patient.content.raw, record, "the raw document is the source text")
    }

    func testGenderMaleEmptyRaceAndAFeedIDOverrideTheDocument() throws {
        let mapped = try map(#"""
            {"_id": "x", "first": "Bo", "last": "Example", "gender": "M", "birthdate": -972586800,
             "race": {"code": "", "code_set": "CDC-RE"}, "ethnicity": null}
            """#, remoteID: "feed-id-7")
        XCTAssertEqual(mapped.patient.remoteID, "feed-id-7")
        XCTAssertEqual(mapped.patient.content.gender, "male")
        XCTAssertEqual(mapped.patient.content.birthDate, "1939-03-08")
        XCTAssertNil(mapped.patient.content.race, "an empty code is no race")
        XCTAssertNil(mapped.patient.content.ethnicity)
        XCTAssertTrue(mapped.entries.isEmpty)
    }

    func testEachOfTheEightSectionsBecomesItsEntryType() throws {
        let mapped = try map(record)
        let types = Dictionary(mapped.entries.map { ($0.remoteID, $0.content.type) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(types, [
            "e1": .encounter, "c1": .condition, "a1": .allergy, "a2": .allergy, "m1": .medication, "m2": .medication,
            "p1": .procedure, "r1": .result, "r2": .result, "r3": .result, "v1": .vitalSign, "v2": .vitalSign,
            "i1": .immunization,
        ])
        XCTAssertEqual(mapped.entries.map(\.remoteID), ["e1", "c1", "a1", "a2", "m1", "m2", "p1", "r1", "r2", "r3", "v1", "v2", "i1"],
                       "sections in hReader's order, entries in source order")
    }

    func testEncounterTimeAndCodes() throws {
        let encounter = try entry(try map(record), "e1")
        XCTAssertEqual(encounter.description, "Office visit")
        XCTAssertEqual(encounter.date, ClinicalTime(epoch: 1291266000))
        XCTAssertEqual(encounter.date?.text, "2010-12-02T05:00:00Z")
        XCTAssertEqual(encounter.codes, ["CPT": ["99213"], "ICD-9-CM": ["V70.0"]])
        XCTAssertNil(encounter.start)
    }

    func testConditionStartEndAndStatusObject() throws {
        let condition = try entry(try map(record), "c1")
        XCTAssertEqual(condition.description, "Hypertension")
        XCTAssertEqual(condition.start, ClinicalTime(epoch: 1251172800))
        XCTAssertEqual(condition.end, ClinicalTime(epoch: 1262304000))
        XCTAssertNil(condition.date)
        XCTAssertEqual(condition.status, "Active", "a status object reads as its name")
        XCTAssertEqual(condition.codes, ["SNOMED-CT": ["59621000"], "ICD-10-CM": ["I10"]])
    }

    func testAllergyWithoutDescriptionIsNamedByItsCodeAndReadsReactionAndSeverity() throws {
        let mapped = try map(record)
        let allergy = try entry(mapped, "a1")
        XCTAssertEqual(allergy.description, "Allergy (RxNorm 7980)")
        XCTAssertEqual(allergy.reaction, "Hives")
        XCTAssertEqual(allergy.severity, "moderate")
        XCTAssertEqual(allergy.start, ClinicalTime(epoch: 1256218090))

        let empty = try entry(mapped, "a2")
        XCTAssertEqual(empty.description, "Allergy (Unknown 000476)")
        XCTAssertNil(empty.reaction, "a reaction object without code or name says nothing")
        XCTAssertNil(empty.severity)
    }

    func testMedicationDoseFromStringOrObject() throws {
        let mapped = try map(record)
        let lisinopril = try entry(mapped, "m1")
        XCTAssertEqual(lisinopril.dose, "20mg")
        XCTAssertEqual(lisinopril.start, ClinicalTime(epoch: 1277438400))
        XCTAssertNil(lisinopril.end)
        XCTAssertEqual(lisinopril.codes, ["RxNorm": ["314076"]])
        XCTAssertEqual(try entry(mapped, "m2").dose, "25 mg")
    }

    func testProcedureStatusString() throws {
        let procedure = try entry(try map(record), "p1")
        XCTAssertEqual(procedure.status, "completed")
        XCTAssertEqual(procedure.date, ClinicalTime(epoch: 1277438400))
        XCTAssertEqual(procedure.codes["SNOMED-CT"], ["61310001"])
    }

    func testResultScalarIsANumberWhenItReadsAsOneElseText() throws {
        let mapped = try map(record)
        let glucose = try entry(mapped, "r1")
        XCTAssertEqual(glucose.valueNumber, 6.3)
        XCTAssertNil(glucose.valueText)
        XCTAssertEqual(glucose.unit, "mmol/L")

        let antigen = try entry(mapped, "r2")
        XCTAssertNil(antigen.valueNumber)
        XCTAssertEqual(antigen.valueText, "negative")
        XCTAssertNil(antigen.unit, "null units are no unit")

        let noValue = try entry(mapped, "r3")
        XCTAssertNil(noValue.valueNumber)
        XCTAssertNil(noValue.valueText)
    }

    func testVitalSignValueAndUnits() throws {
        let systolic = try entry(try map(record), "v1")
        XCTAssertEqual(systolic.type, .vitalSign)
        XCTAssertEqual(systolic.description, "Systolic Blood Pressure")
        XCTAssertEqual(systolic.valueNumber, 118)
        XCTAssertEqual(systolic.unit, "mm[Hg]")
        XCTAssertEqual(systolic.date, ClinicalTime(epoch: 1327899600))
        XCTAssertEqual(systolic.status, "completed")
    }

    func testImmunizationCodes() throws {
        let flu = try entry(try map(record), "i1")
        XCTAssertEqual(flu.description, "Influenza vaccine")
        XCTAssertEqual(flu.codes, ["CVX": ["140"]])
        XCTAssertEqual(flu.date, ClinicalTime(epoch: 1291266000))
    }

    func testRawEntryIsTheEntryJSONLosslessly() throws {
        let systolic = try entry(try map(record), "v1")
        XCTAssertEqual(systolic.raw, #"{"_id":"v1","_type":"LabResult","codes":{"SNOMED-CT":["271649006"]},"description":"Systolic Blood Pressure","status":"completed","time":1327899600,"value":{"scalar":"118.0","units":"mm[Hg]"}}"#)
    }

    func testOtherSectionsAreSkippedWithAReasonNotDropped() throws {
        let mapped = try map(record)
        XCTAssertEqual(mapped.skipped, [
            Skip(kind: "social_history", remoteID: "s1", reason: "section social_history is not imported"),
            Skip(kind: "care_goals", remoteID: "g1", reason: "section care_goals is not imported"),
        ], "languages (a list of strings) is demographics, not entries")
    }

    func testEntriesWithoutIDGetAStableHashedID() throws {
        let document = #"""
            {"first": "Cy", "last": "Sample", "gender": "M", "birthdate": 0,
             "results": [
               {"codes": {"LOINC": ["2345-7"]}, "description": "Glucose", "time": 1279598400, "value": {"scalar": "5.1", "units": "mmol/L"}},
               {"codes": {"LOINC": ["2345-7"]}, "description": "Glucose", "time": 1279684800, "value": {"scalar": "5.4", "units": "mmol/L"}}
             ],
             "vital_signs": [
               {"codes": {"LOINC": ["2345-7"]}, "description": "Glucose", "time": 1279598400, "value": {"scalar": "5.1", "units": "mmol/L"}}
             ]}
            """#
        let first = try map(document), second = try map(document)
        let ids = first.entries.map(\.remoteID)
        XCTAssertEqual(ids, second.entries.map(\.remoteID), "the same input gives the same ids")
        XCTAssertEqual(Set(ids).count, 3, "different entries, or the same entry in another section, differ")
        XCTAssertTrue(ids[0].hasPrefix("results#") && ids[0].count == "results#".count + 16, ids[0])
        XCTAssertTrue(ids[2].hasPrefix("vital_signs#"), ids[2])
        XCTAssertEqual(first.entries.map(\.content), second.entries.map(\.content))

        // Member order does not change the id: the hash is over canonical JSON.
        let reordered = try map(#"""
            {"first": "Cy", "last": "Sample", "results": [
               {"value": {"units": "mmol/L", "scalar": "5.1"}, "time": 1279598400, "description": "Glucose", "codes": {"LOINC": ["2345-7"]}}]}
            """#)
        XCTAssertEqual(reordered.entries.first?.remoteID, ids[0])
    }

    func testRepeatedIDsWithinARecordStayDistinctAndStable() throws {
        // Real hData records reuse an `_id` across sections and within one.
        let document = #"""
            {"first": "Fay", "last": "Duplicate",
             "conditions": [{"_id": "x1", "description": "Hypertension"}],
             "medications": [{"_id": "x1", "description": "Aspirin", "dose": "81mg"}],
             "vital_signs": [{"_id": "x1", "description": "Oxygen saturation", "time": 1, "value": {"scalar": "97", "units": "%"}},
                             {"_id": "x1", "description": "Respiration", "time": 1, "value": {"scalar": "18", "units": "/min"}},
                             {"description": "Pulse", "time": 1, "value": {"scalar": "60"}},
                             {"description": "Pulse", "time": 1, "value": {"scalar": "60"}}]}
            """#
        let ids = try map(document).entries.map(\.remoteID)
        XCTAssertEqual(Array(ids.prefix(4)), ["x1", "x1#medications", "x1#vital_signs", "x1#vital_signs#2"])
        XCTAssertEqual(ids[5], ids[4] + "#vital_signs", "an exact repeat is still an entry of its own")
        XCTAssertEqual(Set(ids).count, 6)
        XCTAssertEqual(try map(document).entries.map(\.remoteID), ids)
    }

    func testPatientWithoutIDIsNamedByRecordNumberOrContent() throws {
        let withMRN = try map(#"{"first": "Di", "last": "Fictional", "medical_record_number": "MRN-42"}"#)
        XCTAssertEqual(withMRN.patient.remoteID, "mrn:MRN-42")
        let bare = try map(#"{"first": "Di", "last": "Fictional", "birthdate": 0}"#)
        XCTAssertEqual(bare.patient.remoteID, try map(#"{"birthdate": 0, "last": "Fictional", "first": "Di"}"#).patient.remoteID)
        XCTAssertTrue(bare.patient.remoteID.hasPrefix("patient#"))
    }

    func testLenientTimesAndIDs() throws {
        let mapped = try map(#"""
            {"_id": {"$oid": "5a10"}, "first": "Ed", "last": "Placeholder", "birthdate": "457156800",
             "results": [{"_id": {"$oid": "r9"}, "description": "Glucose", "time": "1279598400",
                          "start_time": "2010-07-20", "value": {"scalar": 5.5, "units": "mmol/L"}}]}
            """#)
        XCTAssertEqual(mapped.patient.remoteID, "5a10")
        XCTAssertEqual(mapped.patient.content.birthDate, "1984-06-27")
        let glucose = try entry(mapped, "r9")
        XCTAssertEqual(glucose.date, ClinicalTime(epoch: 1279598400))
        XCTAssertEqual(glucose.start?.text, "2010-07-20")
        XCTAssertEqual(glucose.valueNumber, 5.5, "a scalar sent as a number")
    }

    func testMalformedRecordsThrowClearErrors() {
        XCTAssertThrowsError(try map("<ClinicalDocument/>")) { error in
            XCTAssertEqual("\(error)", "malformed input: RHEx record is not valid JSON: unexpected '<' at line 1, column 1")
        }
        XCTAssertThrowsError(try map(#"[{"first": "A"}]"#)) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("RHEx record is an array, expected a JSON object"))
        }
        XCTAssertThrowsError(try map(#"{"first": "A", "results": {"scalar": "1"}}"#)) { error in
            XCTAssertEqual(error as? RecordsError, .malformed(#"RHEx record: "results" is an object, expected an array"#))
        }
    }

    func testAnEntryThatIsNotAnObjectIsSkipped() throws {
        let mapped = try map(#"{"first": "A", "last": "B", "results": ["oops", null, {"_id": "r1", "description": "Glucose"}]}"#)
        XCTAssertEqual(mapped.entries.map(\.remoteID), ["r1"])
        XCTAssertEqual(mapped.skipped, [Skip(kind: "results", reason: "results[0] is a string, expected an object")])
    }
}
