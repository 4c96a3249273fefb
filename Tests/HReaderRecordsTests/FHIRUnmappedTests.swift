import Foundation
import XCTest
import HReaderModel
@testable import HReaderRecords

// Resources of types without an entry mapping keep the date and the name the FHIR specification
// gives them (fhirUnmappedTypeTable); invented patients and records.

private let utc = TimeZone(identifier: "UTC")!

/// A Bundle with Patient/u and the given resources, each about it; the entries by remote id.
private func kept(_ resources: [String]) throws -> [String: EntryContent] {
    let entries = resources.map { #"{"resource": \#($0)}"# }.joined(separator: ",\n")
    let bundle = #"""
        {"resourceType": "Bundle", "type": "collection", "entry": [
          {"resource": {"resourceType": "Patient", "id": "u"}},
          \#(entries)]}
        """#
    let batch = try FHIRMapper(zone: .named(utc)).mapBundle(Data(bundle.utf8))
    XCTAssertEqual(batch.records.count, 1)
    let record = try XCTUnwrap(batch.records.first)
    XCTAssertEqual(record.entries.filter { $0.unmappedType != nil }.count, resources.count, "every resource is kept and said so")
    return Dictionary(uniqueKeysWithValues: record.entries.map { ($0.remoteID, $0.content) })
}

final class FHIRUnmappedTests: XCTestCase {
    func testTheTableParsesAndCoversTheCommonTypes() {
        let types = FHIRUnmappedType.byType
        for type in ["QuestionnaireResponse", "MedicationDispense", "MedicationAdministration", "Specimen", "Media",
                     "NutritionOrder", "Goal", "DocumentReference", "Device", "CarePlan", "CareTeam", "Claim",
                     "ExplanationOfBenefit", "ServiceRequest", "FamilyMemberHistory", "Composition", "Coverage",
                     "ImagingStudy", "RiskAssessment", "ClinicalImpression", "Communication", "AdverseEvent",
                     "DetectedIssue", "Flag", "List", "EpisodeOfCare", "Consent", "DeviceRequest",
                     "DeviceUseStatement", "VisionPrescription", "SupplyRequest", "Appointment", "Basic"] {
            XCTAssertNotNil(types[type], type)
        }
        XCTAssertEqual(types["Goal"]?.datePaths.first, ["target", "dueDate"])
        XCTAssertEqual(types["Appointment"]?.datePaths, [["start"]])
        XCTAssertEqual(types["Device"]?.datePaths, [])
        XCTAssertTrue(FHIREntryMapping.supportedTypes.isDisjoint(with: types.keys), "a mapped type is not in the table")
    }

    func testSixTypesThatLostTheirDateKeepDateAndName() throws {
        let entries = try kept([
            #"""
            {"resourceType": "QuestionnaireResponse", "id": "qr", "status": "completed", "subject": {"reference": "Patient/u"},
             "questionnaire": "http://example.org/Questionnaire/phq-9", "authored": "2023-04-05T10:00:00Z"}
            """#,
            #"""
            {"resourceType": "MedicationDispense", "id": "md", "status": "completed", "subject": {"reference": "Patient/u"},
             "medicationCodeableConcept": {"coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "197361", "display": "Amlodipine 5 MG Oral Tablet"}]},
             "whenPrepared": "2023-04-01", "whenHandedOver": "2023-04-02T09:30:00+02:00"}
            """#,
            #"""
            {"resourceType": "Specimen", "id": "sp", "subject": {"reference": "Patient/u"},
             "type": {"coding": [{"system": "http://snomed.info/sct", "code": "119297000", "display": "Blood specimen"}]},
             "collection": {"collectedDateTime": "2023-03-30T07:45:00Z"}}
            """#,
            #"""
            {"resourceType": "Media", "id": "me", "status": "completed", "subject": {"reference": "Patient/u"},
             "createdDateTime": "2023-02-14", "content": {"contentType": "image/jpeg", "title": "Left forearm rash"}}
            """#,
            #"""
            {"resourceType": "NutritionOrder", "id": "no", "status": "active", "intent": "order", "patient": {"reference": "Patient/u"},
             "dateTime": "2023-01-10T12:00:00Z", "oralDiet": {"type": [{"text": "Low sodium diet"}]}}
            """#,
            #"""
            {"resourceType": "Goal", "id": "go", "lifecycleStatus": "active", "subject": {"reference": "Patient/u"},
             "description": {"text": "Reduce weight", "coding": [{"system": "http://snomed.info/sct", "code": "289169006"}]},
             "target": [{"dueDate": "2023-12-31"}]}
            """#,
        ])
        let questionnaire = try XCTUnwrap(entries["QuestionnaireResponse/qr"])
        XCTAssertEqual(questionnaire.description, "QuestionnaireResponse: http://example.org/Questionnaire/phq-9")
        XCTAssertEqual(questionnaire.date?.text, "2023-04-05T10:00:00Z")
        XCTAssertEqual(questionnaire.status, "completed")

        let dispense = try XCTUnwrap(entries["MedicationDispense/md"])
        XCTAssertEqual(dispense.type, .observation)
        XCTAssertEqual(dispense.description, "MedicationDispense: Amlodipine 5 MG Oral Tablet")
        XCTAssertEqual(dispense.date?.text, "2023-04-02T09:30:00+02:00", "handed over, not prepared")
        XCTAssertEqual(dispense.codes, ["RxNorm": ["197361"]])

        let specimen = try XCTUnwrap(entries["Specimen/sp"])
        XCTAssertEqual(specimen.description, "Specimen: Blood specimen")
        XCTAssertEqual(specimen.date?.text, "2023-03-30T07:45:00Z")

        let media = try XCTUnwrap(entries["Media/me"])
        XCTAssertEqual(media.description, "Media: Left forearm rash")
        XCTAssertEqual(media.date?.text, "2023-02-14")

        let nutrition = try XCTUnwrap(entries["NutritionOrder/no"])
        XCTAssertEqual(nutrition.description, "NutritionOrder: Low sodium diet")
        XCTAssertEqual(nutrition.date?.text, "2023-01-10T12:00:00Z")

        let goal = try XCTUnwrap(entries["Goal/go"])
        XCTAssertEqual(goal.description, "Goal: Reduce weight")
        XCTAssertEqual(goal.date?.text, "2023-12-31")
        XCTAssertEqual(goal.codes, ["SNOMED-CT": ["289169006"]])
    }

    func testTypesNamedByTypeCategoryOrReferenceGetTheirLabel() throws {
        let entries = try kept([
            #"""
            {"resourceType": "CareTeam", "id": "ct", "status": "active", "subject": {"reference": "Patient/u"},
             "category": [{"coding": [{"system": "http://loinc.org", "code": "LA27976-2", "display": "Encounter-focused care team"}]}],
             "period": {"start": "2022-06-01", "end": "2022-09-01"}}
            """#,
            #"""
            {"resourceType": "Claim", "id": "cl", "status": "active", "patient": {"reference": "Patient/u"},
             "type": {"coding": [{"code": "professional"}]}, "created": "2022-06-02T10:00:00Z",
             "billablePeriod": {"start": "2022-06-01T09:00:00Z", "end": "2022-06-01T09:30:00Z"},
             "item": [{"sequence": 1, "productOrService": {"coding": [{"system": "http://snomed.info/sct", "code": "185349003", "display": "Encounter for check up"}]}}]}
            """#,
            #"""
            {"resourceType": "ExplanationOfBenefit", "id": "eob", "status": "active", "patient": {"reference": "Patient/u"},
             "type": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/claim-type", "code": "institutional", "display": "Institutional"}]},
             "created": "2022-06-03"}
            """#,
            #"""
            {"resourceType": "Device", "id": "dv", "patient": {"reference": "Patient/u"},
             "deviceName": [{"name": "Home blood pressure monitor", "type": "user-friendly-name"}]}
            """#,
            #"""
            {"resourceType": "DeviceUseStatement", "id": "dus", "status": "active", "subject": {"reference": "Patient/u"},
             "device": {"reference": "Device/dv", "display": "Insulin pump"}, "timingPeriod": {"start": "2021-01-01"}}
            """#,
            #"""
            {"resourceType": "DocumentReference", "id": "dr", "status": "current", "subject": {"reference": "Patient/u"},
             "type": {"coding": [{"system": "http://loinc.org", "code": "18842-5", "display": "Discharge summary"}]},
             "date": "2022-07-01T16:00:00Z", "content": [{"attachment": {"contentType": "application/pdf", "title": "discharge.pdf"}}]}
            """#,
        ])
        let team = try XCTUnwrap(entries["CareTeam/ct"])
        XCTAssertEqual(team.description, "CareTeam: Encounter-focused care team")
        XCTAssertEqual(team.start?.text, "2022-06-01")
        XCTAssertEqual(team.end?.text, "2022-09-01")
        XCTAssertNil(team.date)

        let claim = try XCTUnwrap(entries["Claim/cl"])
        XCTAssertEqual(claim.description, "Claim: Encounter for check up")
        XCTAssertEqual(claim.start?.text, "2022-06-01T09:00:00Z", "the billable period before the claim's creation")
        XCTAssertEqual(claim.codes, ["SNOMED-CT": ["185349003"]])

        let benefit = try XCTUnwrap(entries["ExplanationOfBenefit/eob"])
        XCTAssertEqual(benefit.description, "ExplanationOfBenefit: Institutional")
        XCTAssertEqual(benefit.date?.text, "2022-06-03")

        XCTAssertEqual(entries["Device/dv"]?.description, "Device: Home blood pressure monitor")
        XCTAssertEqual(entries["DeviceUseStatement/dus"]?.description, "DeviceUseStatement: Insulin pump", "a Reference's display")
        XCTAssertEqual(entries["DeviceUseStatement/dus"]?.start?.text, "2021-01-01")

        let document = try XCTUnwrap(entries["DocumentReference/dr"])
        XCTAssertEqual(document.description, "DocumentReference: discharge.pdf", "no description: the attachment's title")
        XCTAssertEqual(document.date?.text, "2022-07-01T16:00:00Z")
    }

    func testATypeOutsideTheTableFallsBackToCodeAndTheUsualDates() throws {
        let entries = try kept([
            #"""
            {"resourceType": "Observationish", "id": "x", "status": "draft", "subject": {"reference": "Patient/u"},
             "code": {"coding": [{"system": "http://loinc.org", "code": "1234-5", "display": "Something new"}]},
             "occurrenceDateTime": "2024-02-03T04:05:06Z"}
            """#,
            #"""
            {"resourceType": "Unheard", "id": "y", "subject": {"reference": "Patient/u"}, "title": "A titled thing",
             "period": {"start": "2024-01-01"}}
            """#,
            #"{"resourceType": "Nameless", "id": "z", "subject": {"reference": "Patient/u"}}"#,
        ])
        XCTAssertEqual(entries["Observationish/x"]?.description, "Observationish: Something new")
        XCTAssertEqual(entries["Observationish/x"]?.codes, ["LOINC": ["1234-5"]])
        XCTAssertEqual(entries["Observationish/x"]?.date?.text, "2024-02-03T04:05:06Z")
        XCTAssertEqual(entries["Unheard/y"]?.description, "Unheard: A titled thing")
        XCTAssertEqual(entries["Unheard/y"]?.start?.text, "2024-01-01")
        XCTAssertEqual(entries["Nameless/z"]?.description, "Nameless")
        XCTAssertNil(entries["Nameless/z"]?.effectiveTime)
    }

    func testAMemberOfAnUnexpectedShapeIsPassedOverNotAnError() throws {
        let entries = try kept([
            #"""
            {"resourceType": "Goal", "id": "g", "subject": {"reference": "Patient/u"},
             "description": {"text": "Walk daily"}, "target": [{"dueDate": "soon"}], "startDate": "2023-05-01"}
            """#,
        ])
        let goal = try XCTUnwrap(entries["Goal/g"])
        XCTAssertEqual(goal.description, "Goal: Walk daily")
        XCTAssertEqual(goal.date?.text, "2023-05-01", "a due date that is not a date gives way to the start date")
    }
}
