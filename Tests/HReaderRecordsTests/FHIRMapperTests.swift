import Foundation
import XCTest
import HReaderJSON
import HReaderModel
@testable import HReaderRecords

// FHIR R4 JSON with invented patients: a Bundle holding a Patient and one resource of each supported
// type, blood pressure with components, partial dates, transaction Bundles with urn:uuid references,
// NDJSON, resources the mapper does not support, and malformed input.

private let utc = TimeZone(identifier: "UTC")!

private func mapBundle(_ text: String) throws -> MappedBatch {
    try FHIRMapper(zone: .named(utc)).mapBundle(Data(text.utf8))
}

private func only(_ batch: MappedBatch, file: StaticString = #filePath, line: UInt = #line) throws -> MappedRecord {
    XCTAssertEqual(batch.records.count, 1, "records", file: file, line: line)
    return try XCTUnwrap(batch.records.first, file: file, line: line)
}

private func entry(_ record: MappedRecord, _ remoteID: String, file: StaticString = #filePath, line: UInt = #line) throws -> EntryContent {
    try XCTUnwrap(record.entries.first { $0.remoteID == remoteID }?.content, "no entry \(remoteID)", file: file, line: line)
}

private let everything = #"""
{
  "resourceType": "Bundle", "type": "searchset",
  "entry": [
    {"fullUrl": "https://fhir.example/Patient/p1", "resource": {
      "resourceType": "Patient", "id": "p1",
      "extension": [
        {"url": "http://hl7.org/fhir/us/core/StructureDefinition/us-core-race", "extension": [
          {"url": "ombCategory", "valueCoding": {"system": "urn:oid:2.16.840.1.113883.6.238", "code": "2106-3", "display": "White"}},
          {"url": "text", "valueString": "White"}]},
        {"url": "http://hl7.org/fhir/us/core/StructureDefinition/us-core-ethnicity", "extension": [
          {"url": "ombCategory", "valueCoding": {"system": "urn:oid:2.16.840.1.113883.6.238", "code": "2135-2"}}]}
      ],
      "name": [
        {"use": "old", "family": "Formerly", "given": ["Gale"]},
        {"use": "usual", "given": ["Gus"], "family": "Invented"},
        {"use": "official", "family": "Invented", "given": ["Gale", "Augusta"]}
      ],
      "gender": "female", "birthDate": "1970-05-06"}},
    {"resource": {"resourceType": "Observation", "id": "hr", "status": "final",
      "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}]}],
      "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4", "display": "Heart rate"}]},
      "subject": {"reference": "Patient/p1"}, "effectiveDateTime": "2021-03-04T08:15:00+01:00",
      "valueQuantity": {"value": 72.0, "unit": "beats/minute", "system": "http://unitsofmeasure.org", "code": "/min"}}},
    {"resource": {"resourceType": "Observation", "id": "glucose", "status": "final",
      "category": [{"coding": [{"code": "laboratory"}]}],
      "code": {"text": "Glucose [Mass/volume] in Blood", "coding": [{"system": "http://loinc.org", "code": "2339-0", "display": "Glucose"}]},
      "subject": {"reference": "Patient/p1"}, "issued": "2021-03-05T10:00:00Z",
      "valueQuantity": {"value": 95, "system": "http://unitsofmeasure.org", "code": "mg/dL"}}},
    {"resource": {"resourceType": "Observation", "id": "steps", "status": "final",
      "category": [{"coding": [{"code": "activity"}]}],
      "code": {"coding": [{"system": "http://loinc.org", "code": "55423-8", "display": "Number of steps"}]},
      "subject": {"reference": "Patient/p1"},
      "effectivePeriod": {"start": "2021-03-04T00:00:00Z", "end": "2021-03-05T00:00:00Z"},
      "valueInteger": 8042}},
    {"resource": {"resourceType": "Observation", "id": "smoking", "status": "final",
      "category": [{"coding": [{"code": "social-history"}]}],
      "code": {"coding": [{"system": "http://loinc.org", "code": "72166-2", "display": "Tobacco smoking status"}]},
      "subject": {"reference": "Patient/p1"}, "effectiveDateTime": "2021-03-04",
      "valueCodeableConcept": {"coding": [{"system": "http://snomed.info/sct", "code": "266919005", "display": "Never smoked tobacco"}]}}},
    {"resource": {"resourceType": "Condition", "id": "htn",
      "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "active"}]},
      "code": {"coding": [{"system": "http://snomed.info/sct", "code": "59621000", "display": "Essential hypertension"},
                          {"system": "http://hl7.org/fhir/sid/icd-10-cm", "code": "I10"}]},
      "subject": {"reference": "Patient/p1"}, "onsetDateTime": "2015-06", "abatementDateTime": "2019-01-02",
      "recordedDate": "2015-07-01"}},
    {"resource": {"resourceType": "AllergyIntolerance", "id": "pcn",
      "clinicalStatus": {"coding": [{"code": "active"}]}, "criticality": "high",
      "code": {"text": "Penicillin", "coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "7980"}]},
      "patient": {"reference": "Patient/p1"}, "recordedDate": "2010-02-03",
      "reaction": [{"manifestation": [{"coding": [{"system": "http://snomed.info/sct", "code": "247472004", "display": "Hives"}]},
                                      {"text": "Itching"}], "severity": "moderate"}]}},
    {"resource": {"resourceType": "MedicationRequest", "id": "rx1", "status": "active", "intent": "order",
      "medicationCodeableConcept": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "314076", "display": "lisinopril 10 MG Oral Tablet"}]},
      "subject": {"reference": "Patient/p1"}, "authoredOn": "2020-01-15",
      "dosageInstruction": [{"text": "1 tablet by mouth daily"}]}},
    {"resource": {"resourceType": "MedicationRequest", "id": "rx2", "status": "stopped", "intent": "order",
      "contained": [{"resourceType": "Medication", "id": "med",
                     "code": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "866924", "display": "Metoprolol succinate 25 MG"}]}}],
      "medicationReference": {"reference": "#med"},
      "subject": {"reference": "Patient/p1"}, "authoredOn": "2020-02-01T09:00:00Z",
      "dosageInstruction": [{"doseAndRate": [{"doseQuantity": {"value": 25, "unit": "mg"}}]}]}},
    {"fullUrl": "https://fhir.example/Medication/asa", "resource": {"resourceType": "Medication", "id": "asa",
      "code": {"text": "Aspirin 81 mg", "coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "243670"}]}}},
    {"resource": {"resourceType": "MedicationStatement", "id": "ms1", "status": "active",
      "medicationReference": {"reference": "Medication/asa"}, "subject": {"reference": "Patient/p1"},
      "effectivePeriod": {"start": "2019-05-01"},
      "dosage": [{"doseAndRate": [{"doseRange": {"low": {"value": 1, "unit": "tablet"}, "high": {"value": 2, "unit": "tablet"}}}]}]}},
    {"resource": {"resourceType": "Encounter", "id": "enc1", "status": "finished",
      "class": {"system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "AMB", "display": "ambulatory"},
      "type": [{"coding": [{"system": "http://snomed.info/sct", "code": "185349003", "display": "Encounter for check up"}]}],
      "subject": {"reference": "Patient/p1"},
      "period": {"start": "2021-03-04T08:00:00+01:00", "end": "2021-03-04T08:30:00+01:00"}}},
    {"resource": {"resourceType": "Encounter", "id": "enc2", "status": "finished",
      "class": {"code": "EMER", "display": "emergency"}, "subject": {"reference": "Patient/p1"}}},
    {"resource": {"resourceType": "Immunization", "id": "flu", "status": "completed",
      "vaccineCode": {"coding": [{"system": "http://hl7.org/fhir/sid/cvx", "code": "140", "display": "Influenza, seasonal, injectable, preservative free"}]},
      "patient": {"reference": "Patient/p1"}, "occurrenceDateTime": "2020-10-01"}},
    {"resource": {"resourceType": "Procedure", "id": "appx", "status": "completed",
      "code": {"coding": [{"system": "http://snomed.info/sct", "code": "80146002", "display": "Appendectomy"}]},
      "subject": {"reference": "Patient/p1"},
      "performedPeriod": {"start": "2002-07-01T10:00:00Z", "end": "2002-07-01T11:30:00Z"}}},
    {"resource": {"resourceType": "DiagnosticReport", "id": "cbc", "status": "final",
      "code": {"coding": [{"system": "http://loinc.org", "code": "58410-2", "display": "CBC panel"}]},
      "subject": {"reference": "Patient/p1"}, "effectiveDateTime": "2021-03-05",
      "conclusion": "Within normal limits"}},
    {"resource": {"resourceType": "Practitioner", "id": "dr1", "name": [{"family": "Madeup"}]}},
    {"resource": {"resourceType": "Organization", "id": "org1", "name": "Example Clinic"}},
    {"resource": {"resourceType": "CarePlan", "id": "cp1", "subject": {"reference": "Patient/p1"}}}
  ]
}
"""#

final class FHIRMapperTests: XCTestCase {
    func testPatientDemographicsFromOfficialNameAndUSCoreExtensions() throws {
        let patient = try only(try mapBundle(everything)).patient
        XCTAssertEqual(patient.remoteID, "p1")
        XCTAssertEqual(patient.content.remoteID, "p1")
        XCTAssertEqual(patient.content.firstName, "Gale Augusta")
        XCTAssertEqual(patient.content.lastName, "Invented")
        XCTAssertEqual(patient.content.gender, "female")
        XCTAssertEqual(patient.content.birthDate, "1970-05-06")
        XCTAssertEqual(patient.content.race, "White")
        XCTAssertEqual(patient.content.ethnicity, "Hispanic or Latino", "named from the OMB code when no display")
        XCTAssertTrue(patient.content.raw?.hasPrefix(#"{"resourceType":"Patient","id":"p1","extension":"#) ?? false)
    }

    func testUsualNameWhenThereIsNoOfficialOneAndTextAlone() throws {
        let usual = try only(try mapBundle(#"""
            {"resourceType": "Patient", "id": "u", "name": [{"use": "old", "family": "Was", "given": ["X"]},
                                                             {"use": "usual", "family": "Now", "given": ["Yan"]}]}
            """#)).patient.content
        XCTAssertEqual([usual.firstName, usual.lastName], ["Yan", "Now"])
        let text = try only(try mapBundle(#"{"resourceType": "Patient", "id": "t", "name": [{"text": "Zed Quincy Nobody"}]}"#)).patient.content
        XCTAssertEqual([text.firstName, text.lastName], ["Zed Quincy", "Nobody"])
    }

    func testEverySupportedResourceTypeMapsToItsEntry() throws {
        let record = try only(try mapBundle(everything))
        XCTAssertEqual(record.entries.map(\.remoteID), [
            "Observation/hr", "Observation/glucose", "Observation/steps", "Observation/smoking", "Condition/htn",
            "AllergyIntolerance/pcn", "MedicationRequest/rx1", "MedicationRequest/rx2", "MedicationStatement/ms1",
            "Encounter/enc1", "Encounter/enc2", "Immunization/flu", "Procedure/appx", "DiagnosticReport/cbc",
            "CarePlan/cp1",   // no mapping, kept as an observation
        ])
        XCTAssertEqual(record.entries.map(\.content.type), [
            .vitalSign, .result, .activity, .observation, .condition, .allergy, .medication, .medication, .medication,
            .encounter, .encounter, .immunization, .procedure, .result, .observation,
        ])
    }

    /// An IPS document's "no information about …" resources stand for empty sections: skipped with the
    /// code, while "no known allergies" is information and is kept.
    func testIPSNoInformationStatementsAreSkippedAndNoKnownAllergiesKept() throws {
        let ips = "http://hl7.org/fhir/uv/ips/CodeSystem/absent-unknown-uv-ips"
        let record = try only(try mapBundle("""
            {"resourceType": "Bundle", "type": "document", "entry": [
              {"fullUrl": "urn:uuid:8e2f0c5a-0000-4000-8000-000000000001", "resource": {"resourceType": "Patient", "id": "p"}},
              {"resource": {"resourceType": "Condition", "id": "none", "code": {"coding": [{"system": "\(ips)", "code": "no-problem-info"}]},
                            "subject": {"reference": "urn:uuid:8e2f0c5a-0000-4000-8000-000000000001"}}},
              {"resource": {"resourceType": "MedicationStatement", "id": "nomed", "status": "unknown",
                            "medicationCodeableConcept": {"coding": [{"system": "\(ips)", "code": "no-medication-info"}]},
                            "subject": {"reference": "Patient/p"}}},
              {"resource": {"resourceType": "AllergyIntolerance", "id": "nka", "code": {"coding": [{"system": "\(ips)", "code": "no-known-allergies"}]},
                            "patient": {"reference": "Patient/p"}}}
            ]}
            """))
        XCTAssertEqual(record.entries.map(\.remoteID), ["AllergyIntolerance/nka"])
        XCTAssertEqual(record.skipped.map(\.remoteID), ["Condition/none", "MedicationStatement/nomed"])
        XCTAssertTrue(record.skipped.allSatisfy { $0.reason.contains("no information") }, "\(record.skipped)")
    }

    func testObservationValuesAndTimes() throws {
        let record = try only(try mapBundle(everything))
        let heartRate = try entry(record, "Observation/hr")
        XCTAssertEqual(heartRate.description, "Heart rate")
        XCTAssertEqual(heartRate.valueNumber, 72)
        XCTAssertEqual(heartRate.unit, "beats/minute")
        XCTAssertEqual(heartRate.status, "final")
        XCTAssertEqual(heartRate.codes, ["LOINC": ["8867-4"]])
        XCTAssertEqual(heartRate.date?.text, "2021-03-04T08:15:00+01:00", "the offset is kept")
        XCTAssertEqual(heartRate.date?.epoch, 1614842100)
        XCTAssertTrue(heartRate.raw?.contains(#""value":72.0"#) ?? false, "the raw resource keeps the literal 72.0")

        let glucose = try entry(record, "Observation/glucose")
        XCTAssertEqual(glucose.description, "Glucose [Mass/volume] in Blood", "code.text before the display")
        XCTAssertEqual(glucose.unit, "mg/dL", "the UCUM code when there is no unit")
        XCTAssertEqual(glucose.date?.text, "2021-03-05T10:00:00Z", "issued when there is no effective time")

        let steps = try entry(record, "Observation/steps")
        XCTAssertEqual(steps.valueNumber, 8042)
        XCTAssertNil(steps.date)
        XCTAssertEqual(steps.start?.text, "2021-03-04T00:00:00Z")
        XCTAssertEqual(steps.end?.text, "2021-03-05T00:00:00Z")

        let smoking = try entry(record, "Observation/smoking")
        XCTAssertEqual(smoking.valueText, "Never smoked tobacco")
        XCTAssertNil(smoking.valueNumber)
        XCTAssertEqual(smoking.date?.text, "2021-03-04")
    }

    func testStringBooleanAndIntegerValues() throws {
        let batch = try mapBundle(#"""
            {"resourceType": "Bundle", "type": "collection", "entry": [
              {"resource": {"resourceType": "Patient", "id": "v"}},
              {"resource": {"resourceType": "Observation", "id": "s", "subject": {"reference": "Patient/v"},
                            "code": {"text": "Note"}, "valueString": "feeling fine"}},
              {"resource": {"resourceType": "Observation", "id": "b", "subject": {"reference": "Patient/v"},
                            "code": {"text": "Fasting"}, "valueBoolean": true}},
              {"resource": {"resourceType": "Observation", "id": "i", "subject": {"reference": "Patient/v"},
                            "code": {"coding": [{"system": "http://example.org/codes", "code": "pain"}]}, "valueInteger": 1}}]}
            """#)
        let record = try only(batch)
        XCTAssertEqual(try entry(record, "Observation/s").valueText, "feeling fine")
        XCTAssertEqual(try entry(record, "Observation/b").valueText, "true")
        XCTAssertNil(try entry(record, "Observation/b").valueNumber, "true is not the number 1")
        let integer = try entry(record, "Observation/i")
        XCTAssertEqual(integer.valueNumber, 1)
        XCTAssertEqual(integer.description, "pain", "the code when there is neither text nor display")
        XCTAssertEqual(integer.codes, ["http://example.org/codes": ["pain"]], "an unknown system keeps its URI")
        XCTAssertEqual(integer.type, .observation)
    }

    func testConditionAllergyAndMedications() throws {
        let record = try only(try mapBundle(everything))
        let condition = try entry(record, "Condition/htn")
        XCTAssertEqual(condition.description, "Essential hypertension")
        XCTAssertEqual(condition.status, "active")
        XCTAssertEqual(condition.codes, ["SNOMED-CT": ["59621000"], "ICD-10-CM": ["I10"]])
        XCTAssertEqual(condition.start?.text, "2015-06")
        XCTAssertEqual(condition.end?.text, "2019-01-02")
        XCTAssertNil(condition.date, "recordedDate only when there is no onset")

        let allergy = try entry(record, "AllergyIntolerance/pcn")
        XCTAssertEqual(allergy.description, "Penicillin")
        XCTAssertEqual(allergy.codes, ["RxNorm": ["7980"]])
        XCTAssertEqual(allergy.reaction, "Hives, Itching")
        XCTAssertEqual(allergy.severity, "moderate", "the reaction's severity before the criticality")
        XCTAssertEqual(allergy.status, "active")
        XCTAssertEqual(allergy.date?.text, "2010-02-03", "recordedDate without onset")

        let lisinopril = try entry(record, "MedicationRequest/rx1")
        XCTAssertEqual(lisinopril.description, "lisinopril 10 MG Oral Tablet")
        XCTAssertEqual(lisinopril.dose, "1 tablet by mouth daily")
        XCTAssertEqual(lisinopril.date?.text, "2020-01-15")
        XCTAssertEqual(lisinopril.status, "active")

        let metoprolol = try entry(record, "MedicationRequest/rx2")
        XCTAssertEqual(metoprolol.description, "Metoprolol succinate 25 MG", "from the contained Medication")
        XCTAssertEqual(metoprolol.codes, ["RxNorm": ["866924"]])
        XCTAssertEqual(metoprolol.dose, "25 mg")
        XCTAssertEqual(metoprolol.status, "stopped")

        let aspirin = try entry(record, "MedicationStatement/ms1")
        XCTAssertEqual(aspirin.description, "Aspirin 81 mg", "from the Medication elsewhere in the Bundle")
        XCTAssertEqual(aspirin.codes, ["RxNorm": ["243670"]])
        XCTAssertEqual(aspirin.dose, "1–2 tablet")
        XCTAssertEqual(aspirin.start?.text, "2019-05-01")
    }

    func testAllergyCriticalityWhenTheReactionHasNoSeverity() throws {
        let record = try only(try mapBundle(#"""
            {"resourceType": "Bundle", "entry": [
              {"resource": {"resourceType": "Patient", "id": "c"}},
              {"resource": {"resourceType": "AllergyIntolerance", "id": "nuts", "patient": {"reference": "Patient/c"},
                            "criticality": "high", "code": {"text": "Peanut"}, "onsetDateTime": "1999"}}]}
            """#))
        let allergy = try entry(record, "AllergyIntolerance/nuts")
        XCTAssertEqual(allergy.severity, "high")
        XCTAssertNil(allergy.reaction)
        XCTAssertEqual(allergy.start?.text, "1999")
    }

    func testEncounterImmunizationProcedureAndReport() throws {
        let record = try only(try mapBundle(everything))
        let checkUp = try entry(record, "Encounter/enc1")
        XCTAssertEqual(checkUp.description, "Encounter for check up")
        XCTAssertEqual(checkUp.codes, ["SNOMED-CT": ["185349003"]])
        XCTAssertEqual(checkUp.start?.text, "2021-03-04T08:00:00+01:00")
        XCTAssertEqual(checkUp.end?.text, "2021-03-04T08:30:00+01:00")
        XCTAssertEqual(checkUp.status, "finished")
        XCTAssertEqual(try entry(record, "Encounter/enc2").description, "emergency", "the class when there is no type")

        let flu = try entry(record, "Immunization/flu")
        XCTAssertEqual(flu.codes, ["CVX": ["140"]])
        XCTAssertEqual(flu.date?.text, "2020-10-01")
        XCTAssertEqual(flu.status, "completed")

        let appendectomy = try entry(record, "Procedure/appx")
        XCTAssertEqual(appendectomy.description, "Appendectomy")
        XCTAssertEqual(appendectomy.start?.epoch, 1025517600)
        XCTAssertEqual(appendectomy.end?.epoch, 1025523000)

        let report = try entry(record, "DiagnosticReport/cbc")
        XCTAssertEqual(report.type, .result)
        XCTAssertEqual(report.valueText, "Within normal limits")
        XCTAssertEqual(report.codes, ["LOINC": ["58410-2"]])
        XCTAssertEqual(report.date?.text, "2021-03-05")
    }

    func testUnsupportedResourcesAreKeptOrSkippedAndCounted() throws {
        let batch = try mapBundle(everything)
        XCTAssertEqual(batch.skipped, [
            Skip(kind: "Medication", remoteID: "Medication/asa",
                 reason: "Medication resources are read only through the medication entries that reference them"),
            Skip(kind: "Practitioner", remoteID: "Practitioner/dr1", reason: "unsupported resource type Practitioner (not about a patient)"),
            Skip(kind: "Organization", remoteID: "Organization/org1", reason: "unsupported resource type Organization (not about a patient)"),
        ])
        XCTAssertEqual(batch.records[0].skipped, [])
        XCTAssertEqual(batch.records[0].entries.filter { $0.unmappedType != nil }.map(\.remoteID), ["CarePlan/cp1"],
                       "a resource about the patient of a type without a mapping is kept and said so")
        let carePlan = try entry(batch.records[0], "CarePlan/cp1")
        XCTAssertEqual(carePlan.type, .observation)
        XCTAssertTrue(carePlan.description.hasPrefix("CarePlan"), carePlan.description)
        XCTAssertTrue(carePlan.raw?.contains("\"resourceType\":\"CarePlan\"") == true, "the raw resource is kept")
        XCTAssertEqual(batch.allSkipped.count, 3)
        XCTAssertEqual(batch.entryCount, 15)
        XCTAssertTrue(batch.unattached.isEmpty)
    }

    func testBloodPressureComponentsBecomeOneReading() throws {
        let record = try only(try mapBundle(#"""
            {"resourceType": "Bundle", "type": "collection", "entry": [
              {"resource": {"resourceType": "Patient", "id": "bp"}},
              {"resource": {"resourceType": "Observation", "id": "bp1", "status": "final",
                "category": [{"coding": [{"code": "vital-signs"}]}],
                "code": {"coding": [{"system": "http://loinc.org", "code": "85354-9", "display": "Blood pressure panel with all children optional"}]},
                "subject": {"reference": "Patient/bp"}, "effectiveDateTime": "2022-01-02T07:30:00Z",
                "component": [
                  {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4", "display": "Diastolic blood pressure"}]},
                   "valueQuantity": {"value": 80, "unit": "mm[Hg]", "code": "mm[Hg]"}},
                  {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6", "display": "Systolic blood pressure"}]},
                   "valueQuantity": {"value": 120, "unit": "mm[Hg]", "code": "mm[Hg]"}}]}}]}
            """#))
        let bp = try entry(record, "Observation/bp1")
        XCTAssertEqual(bp.type, .vitalSign)
        XCTAssertEqual(bp.description, "Blood pressure")
        XCTAssertEqual(bp.valueText, "120/80", "systolic first, whatever the order of the components")
        XCTAssertNil(bp.valueNumber)
        XCTAssertEqual(bp.unit, "mm[Hg]")
        XCTAssertEqual(bp.codes, ["LOINC": ["85354-9", "8462-4", "8480-6"]])
        let raw = try XCTUnwrap(bp.raw)
        XCTAssertTrue(raw.contains(#""component":[{"code":{"coding":[{"system":"http://loinc.org","code":"8462-4""#), raw)
        XCTAssertTrue(raw.contains(#""valueQuantity":{"value":120,"unit":"mm[Hg]","code":"mm[Hg]"}"#), raw)
    }

    func testComponentsWithDifferentUnitsAreNamed() throws {
        let record = try only(try mapBundle(#"""
            {"resourceType": "Bundle", "entry": [
              {"resource": {"resourceType": "Patient", "id": "c"}},
              {"resource": {"resourceType": "Observation", "id": "o", "subject": {"reference": "Patient/c"},
                "code": {"text": "Sleep"},
                "component": [{"code": {"text": "Duration"}, "valueQuantity": {"value": 7.5, "unit": "h"}},
                              {"code": {"text": "Quality"}, "valueString": "good"}]}}]}
            """#))
        let sleep = try entry(record, "Observation/o")
        XCTAssertEqual(sleep.valueText, "Duration: 7.5 h; Quality: good")
        XCTAssertNil(sleep.unit)
    }

    func testPartialDatesAreKeptAsWritten() throws {
        let record = try only(try mapBundle(#"""
            {"resourceType": "Bundle", "entry": [
              {"resource": {"resourceType": "Patient", "id": "d", "birthDate": "1970"}},
              {"resource": {"resourceType": "Condition", "id": "year", "subject": {"reference": "Patient/d"},
                            "code": {"text": "Asthma"}, "onsetDateTime": "2012"}},
              {"resource": {"resourceType": "Condition", "id": "month", "subject": {"reference": "Patient/d"},
                            "code": {"text": "Eczema"}, "onsetDateTime": "2012-05"}},
              {"resource": {"resourceType": "Immunization", "id": "fraction", "patient": {"reference": "Patient/d"},
                            "vaccineCode": {"text": "Tetanus"}, "occurrenceDateTime": "2012-05-01T10:00:00.123456-04:00"}}]}
            """#))
        XCTAssertEqual(record.patient.content.birthDate, "1970")
        let year = try entry(record, "Condition/year").start
        XCTAssertEqual(year?.text, "2012")
        XCTAssertEqual(year?.epoch, 1325376000, "the start of 2012 in the mapper's zone (UTC here)")
        let month = try entry(record, "Condition/month").start
        XCTAssertEqual(month?.text, "2012-05")
        XCTAssertEqual(month?.epoch, 1335830400)
        let fraction = try entry(record, "Immunization/fraction").date
        XCTAssertEqual(fraction?.text, "2012-05-01T10:00:00.123456-04:00")
        XCTAssertEqual(fraction?.epoch, 1335880800)
    }

    func testTransactionBundleResolvesURNReferences() throws {
        let batch = try mapBundle(#"""
            {"resourceType": "Bundle", "type": "transaction", "entry": [
              {"fullUrl": "urn:uuid:6f1e0c3a-0000-4000-8000-000000000001",
               "resource": {"resourceType": "Patient", "name": [{"family": "Urnson", "given": ["Una"]}]},
               "request": {"method": "POST", "url": "Patient"}},
              {"fullUrl": "urn:uuid:6f1e0c3a-0000-4000-8000-000000000002",
               "resource": {"resourceType": "Observation", "status": "final",
                 "subject": {"reference": "urn:uuid:6f1e0c3a-0000-4000-8000-000000000001"},
                 "code": {"text": "Body weight"}, "valueQuantity": {"value": 61.2, "unit": "kg"}},
               "request": {"method": "POST", "url": "Observation"}},
              {"request": {"method": "DELETE", "url": "Observation/old"}}]}
            """#)
        let record = try only(batch)
        XCTAssertEqual(record.patient.remoteID, "urn:uuid:6f1e0c3a-0000-4000-8000-000000000001", "no id: the fullUrl")
        XCTAssertEqual(record.patient.content.lastName, "Urnson")
        XCTAssertEqual(record.entries.map(\.remoteID), ["urn:uuid:6f1e0c3a-0000-4000-8000-000000000002"])
        XCTAssertEqual(record.entries.first?.content.valueNumber, 61.2)
        XCTAssertEqual(batch.skipped, [Skip(kind: "Bundle.entry", reason: "Bundle.entry[2] has no resource (request: DELETE Observation/old)")])
    }

    func testSearchsetWithAbsoluteAndVersionedReferences() throws {
        let batch = try mapBundle(#"""
            {"resourceType": "Bundle", "type": "searchset", "entry": [
              {"fullUrl": "https://fhir.example/r4/Patient/42", "resource": {"resourceType": "Patient", "id": "42"},
               "search": {"mode": "match"}},
              {"resource": {"resourceType": "Observation", "id": "a", "code": {"text": "A"},
                            "subject": {"reference": "https://fhir.example/r4/Patient/42"}}},
              {"resource": {"resourceType": "Observation", "id": "b", "code": {"text": "B"},
                            "subject": {"reference": "Patient/42/_history/3"}}},
              {"resource": {"resourceType": "Observation", "id": "c", "code": {"text": "C"},
                            "subject": {"reference": "https://other.example/Patient/42"}}}]}
            """#)
        XCTAssertEqual(try only(batch).entries.map(\.remoteID), ["Observation/a", "Observation/b", "Observation/c"])
    }

    func testNDJSONWithTwoPatients() throws {
        let ndjson = """
            {"resourceType":"Patient","id":"n1","name":[{"family":"Linewise","given":["Nia"]}],"gender":"female"}
            {"resourceType":"Patient","id":"n2","name":[{"family":"Rowan","given":["Oto"]}],"gender":"male"}

            {"resourceType":"Observation","id":"o1","subject":{"reference":"Patient/n2"},"code":{"text":"Weight"},"valueQuantity":{"value":80,"unit":"kg"}}\r
            {"resourceType":"Observation","id":"o2","subject":{"reference":"Patient/n1"},"code":{"text":"Weight"},"valueQuantity":{"value":55,"unit":"kg"}}
            {"resourceType":"Condition","id":"c1","subject":{"reference":"Patient/n1"},"code":{"text":"Migraine"}}
            """
        let batch = try FHIRMapper(zone: .named(utc)).mapNDJSON(Data(ndjson.utf8))
        XCTAssertEqual(batch.records.map(\.patient.remoteID), ["n1", "n2"])
        XCTAssertEqual(batch.records[0].entries.map(\.remoteID), ["Observation/o2", "Condition/c1"])
        XCTAssertEqual(batch.records[1].entries.map(\.remoteID), ["Observation/o1"])
        XCTAssertEqual(batch.records[1].entries[0].content.valueNumber, 80)
        XCTAssertEqual(batch.records[1].patient.content.gender, "male")
    }

    func testNDJSONErrorsNameTheLine() {
        let ndjson = "{\"resourceType\":\"Patient\",\"id\":\"n1\"}\n{\"resourceType\":\"Observation\",\"id\":\n"
        XCTAssertThrowsError(try FHIRMapper().mapNDJSON(Data(ndjson.utf8))) { error in
            XCTAssertEqual(error as? RecordsError,
                           .malformed("NDJSON line 2 is not valid JSON: unexpected end of input at line 1, column 36"))
        }
        XCTAssertThrowsError(try FHIRMapper().mapNDJSON(Data("[1,2]\n".utf8))) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("NDJSON line 1 is an array, expected a resource (an object)"))
        }
    }

    func testEntriesWhosePatientIsNotInTheInputAreReturnedUnattached() throws {
        let batch = try mapBundle(#"""
            {"resourceType": "Bundle", "type": "searchset", "entry": [
              {"resource": {"resourceType": "Observation", "id": "w", "subject": {"reference": "Patient/elsewhere"},
                            "code": {"text": "Weight"}, "valueQuantity": {"value": 70, "unit": "kg"}}},
              {"resource": {"resourceType": "Observation", "id": "nobody", "code": {"text": "Noise"}}}]}
            """#)
        XCTAssertTrue(batch.records.isEmpty)
        XCTAssertEqual(batch.unattached.map(\.patientReference), ["Patient/elsewhere", nil])
        XCTAssertEqual(batch.unattached.map(\.entry.remoteID), ["Observation/w", "Observation/nobody"])
        XCTAssertEqual(batch.entryCount, 2)
    }

    func testASingleResourceIsMapped() throws {
        let batch = try mapBundle(#"{"resourceType": "Patient", "id": "solo", "name": [{"family": "Alone", "given": ["Ona"]}]}"#)
        XCTAssertEqual(try only(batch).patient.content.firstName, "Ona")
    }

    func testResourcesFromJSONSerialization() throws {
        let resources: [[String: Any]] = [
            ["resourceType": "Patient", "id": "js", "name": [["family": "Serial", "given": ["Jo"]]]],
            ["resourceType": "Observation", "id": "t", "subject": ["reference": "Patient/js"], "code": ["text": "Fasting"],
             "valueBoolean": true],
            ["resourceType": "Observation", "id": "n", "subject": ["reference": "Patient/js"], "code": ["text": "Count"],
             "valueInteger": 1],
        ]
        let record = try only(try FHIRMapper().mapResources(resources.map { try JSONValue(foundation: $0) }))
        XCTAssertEqual(record.patient.content.lastName, "Serial")
        XCTAssertEqual(try entry(record, "Observation/t").valueText, "true")
        XCTAssertEqual(try entry(record, "Observation/n").valueNumber, 1)

        let decoded = try JSONSerialization.jsonObject(with: Data(#"[{"resourceType":"Observation","id":"d","code":{"text":"X"},"valueBoolean":false,"valueQuantity":null}]"#.utf8)) as! [[String: Any]]
        let unattached = try FHIRMapper().mapResources(decoded.map { try JSONValue(foundation: $0) }).unattached
        XCTAssertEqual(unattached.first?.entry.content.valueText, "false", "JSONSerialization's booleans stay booleans")

        XCTAssertThrowsError(try FHIRMapper().mapResources([["id": "x"]])) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("resources[0] has no resourceType"))
        }
    }

    func testRemoteIDsAreStableAndDistinct() throws {
        let first = try mapBundle(everything), second = try mapBundle(everything)
        XCTAssertEqual(first.records[0].entries, second.records[0].entries)
        let ids = first.records[0].entries.map(\.remoteID)
        XCTAssertEqual(Set(ids).count, ids.count)

        let anonymous = #"{"resourceType": "Bundle", "entry": [{"resource": {"resourceType": "Observation", "code": {"text": "A"}}}, {"resource": {"resourceType": "Observation", "code": {"text": "B"}}}]}"#
        let a = try mapBundle(anonymous).unattached.map(\.entry.remoteID), b = try mapBundle(anonymous).unattached.map(\.entry.remoteID)
        XCTAssertEqual(a, b)
        XCTAssertNotEqual(a[0], a[1])
        XCTAssertTrue(a[0].hasPrefix("Observation#"), a[0])
    }

    // MARK: - Malformed input

    func testNotJSONIsAClearError() {
        XCTAssertThrowsError(try mapBundle("<Bundle xmlns=\"http://hl7.org/fhir\"/>")) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("FHIR JSON is not valid JSON: unexpected '<' at line 1, column 1"))
        }
        XCTAssertThrowsError(try mapBundle("{\"resourceType\": \"Bundle\",\n \"entry\": [}")) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("FHIR JSON is not valid JSON: unexpected '}' at line 2, column 12"))
        }
        XCTAssertThrowsError(try mapBundle("")) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("FHIR JSON is not valid JSON: no JSON value (empty input) at line 1, column 1"))
        }
        XCTAssertThrowsError(try mapBundle("[]")) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("FHIR JSON is an array, expected a Bundle or a resource (an object)"))
        }
    }

    func testABundleWithoutEntriesIsEmptyNotAnError() throws {
        let batch = try mapBundle(#"{"resourceType": "Bundle", "type": "searchset", "total": 0}"#)
        XCTAssertTrue(batch.records.isEmpty && batch.unattached.isEmpty && batch.skipped.isEmpty)
    }

    func testStructuralErrorsNameWhereTheyAre() {
        let cases: [(String, String)] = [
            (#"{"resourceType": "Bundle", "entry": [{"resource": {"resourceType": "Patient", "id": "1"}}, {"resource": {"id": "2"}}]}"#,
             "Bundle.entry[1].resource has no resourceType"),
            (#"{"resourceType": "Bundle", "entry": {"resource": {}}}"#, "Bundle.entry is an object, expected an array"),
            (#"{"resourceType": "Bundle", "entry": [42]}"#, "Bundle.entry[0] is a number, expected an object"),
            (#"{"resourceType": "Bundle", "entry": [{"resource": "Patient/1"}]}"#, "Bundle.entry[0].resource is a string, expected an object"),
            (#"{"resourceType": 7}"#, "resource.resourceType is a number, expected a resource type name"),
            (#"{"id": "no-type"}"#, "resource has no resourceType"),
        ]
        for (input, message) in cases {
            XCTAssertThrowsError(try mapBundle(input), input) { error in
                XCTAssertEqual(error as? RecordsError, .malformed(message), input)
            }
        }
    }

    func testAWrongTypedFieldSkipsThatResourceWithItsPath() throws {
        let batch = try mapBundle(#"""
            {"resourceType": "Bundle", "entry": [
              {"resource": {"resourceType": "Patient", "id": "w"}},
              {"resource": {"resourceType": "Observation", "id": "bad", "subject": {"reference": "Patient/w"},
                            "code": {"text": "Weight"}, "valueQuantity": {"value": "70", "unit": "kg"}}},
              {"resource": {"resourceType": "Observation", "id": "badcode", "subject": {"reference": "Patient/w"},
                            "code": "weight"}},
              {"resource": {"resourceType": "Observation", "id": "baddate", "subject": {"reference": "Patient/w"},
                            "code": {"text": "Weight"}, "effectiveDateTime": "yesterday"}},
              {"resource": {"resourceType": "Observation", "id": "good", "subject": {"reference": "Patient/w"},
                            "code": {"text": "Weight"}, "valueQuantity": {"value": 70, "unit": "kg"}}}]}
            """#)
        let record = try only(batch)
        XCTAssertEqual(record.entries.map(\.remoteID), ["Observation/good"])
        XCTAssertEqual(record.skipped, [
            Skip(kind: "Observation", remoteID: "Observation/bad",
                 reason: "Bundle.entry[1].resource (Observation/bad).valueQuantity.value is a string, expected a number"),
            Skip(kind: "Observation", remoteID: "Observation/badcode",
                 reason: "Bundle.entry[2].resource (Observation/badcode).code is a string, expected an object"),
            Skip(kind: "Observation", remoteID: "Observation/baddate",
                 reason: #"Bundle.entry[3].resource (Observation/baddate).effectiveDateTime is not a FHIR date or dateTime: "yesterday""#),
        ])
    }

    func testAPatientWithAWrongTypedNameIsSkippedAndItsEntriesStayUnattached() throws {
        let batch = try mapBundle(#"""
            {"resourceType": "Bundle", "entry": [
              {"resource": {"resourceType": "Patient", "id": "p", "name": "Just A String"}},
              {"resource": {"resourceType": "Condition", "id": "c", "subject": {"reference": "Patient/p"}, "code": {"text": "Gout"}}}]}
            """#)
        XCTAssertTrue(batch.records.isEmpty)
        XCTAssertEqual(batch.skipped, [Skip(kind: "Patient", remoteID: "p",
                                            reason: "Bundle.entry[0].resource (Patient/p).name is a string, expected an array")])
        XCTAssertEqual(batch.unattached.map(\.patientReference), ["Patient/p"])
    }

    func testDeepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertThrowsError(try mapBundle(deep)) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("FHIR JSON is not valid JSON: nested deeper than 512 levels at line 1, column 513"))
        }
    }
}
