import Foundation
import HReaderRecords
import XCTest

/// `FHIRPatientCheck`: what a server returned for patient A is kept only when it names A, in
/// every form a reference takes; everything else is counted per request and left unmapped.
final class FHIRPatientCheckTests: XCTestCase {
    let base = "https://fhir.example.org/r4"

    func observation(_ id: String, subject: [String: Any]?, contained: [[String: Any]]? = nil, element: String = "subject") -> [String: Any] {
        var resource: [String: Any] = ["resourceType": "Observation", "id": id, "status": "final", "code": ["text": "Heart rate"],
                                       "valueQuantity": ["value": 60, "unit": "/min"], "effectiveDateTime": "2024-01-01T08:00:00Z"]
        if let subject { resource[element] = subject }
        if let contained { resource["contained"] = contained }
        return resource
    }

    let patientA: [String: Any] = ["resourceType": "Patient", "id": "A", "name": [["family": "Quill", "given": ["Ada"]]],
                                   "identifier": [["system": "urn:oid:1.2.3", "value": "MRN-A"]]]

    /// One request's answer (a searchset), checked against A; what is left, mapped.
    func check(_ resources: [[String: Any]], fullUrls: [String?]? = nil, request: String = "Observation?patient=A")
        throws -> (kept: [String], rejected: [FHIRRejectedResources]) {
        var set = FHIRResponseSet()
        let entries = resources.enumerated().map { index, resource -> [String: Any] in
            var entry: [String: Any] = ["resource": resource]
            if let url = fullUrls?[index] { entry["fullUrl"] = url }
            return entry
        }
        let bundle = try JSONSerialization.data(withJSONObject: ["resourceType": "Bundle", "type": "searchset", "entry": entries])
        try set.add(bundle, what: "page")
        let rejected = set.keepOnly(aboutPatient: FHIRPatientCheck(patientID: "A", base: base + "/"), requests: [(request, 0..<set.resourceCount)])
        let batch = set.map(zone: .named(TimeZone(identifier: "UTC")!))
        let kept = batch.records.flatMap { $0.entries.map(\.remoteID) } + batch.unattached.map(\.entry.remoteID)
        return (kept.sorted(), rejected)
    }

    func testEveryFormThatNamesThePatientIsKept() throws {
        let (kept, rejected) = try check([
            patientA,
            observation("relative", subject: ["reference": "Patient/A"]),
            observation("absolute", subject: ["reference": base + "/Patient/A"]),
            observation("versioned", subject: ["reference": "Patient/A/_history/3"]),
            observation("by-identifier", subject: ["identifier": ["system": "urn:oid:1.2.3", "value": "MRN-A"]]),
            observation("contained", subject: ["reference": "#p"],
                        contained: [["resourceType": "Patient", "id": "p", "identifier": [["system": "urn:oid:1.2.3", "value": "MRN-A"]]]]),
            observation("by-full-url", subject: ["reference": "urn:uuid:6a1c0e6e-0000-4000-8000-000000000001"]),
            observation("patient-element", subject: ["reference": "Patient/A"], element: "patient"),
        ], fullUrls: ["urn:uuid:6a1c0e6e-0000-4000-8000-000000000001", nil, nil, nil, nil, nil, nil, nil])
        XCTAssertEqual(rejected, [])
        XCTAssertEqual(kept, ["Observation/absolute", "Observation/by-full-url", "Observation/by-identifier", "Observation/contained",
                              "Observation/patient-element", "Observation/relative", "Observation/versioned"])
    }

    /// A server behind a proxy writes its absolute references with the base its Patient's fullUrl
    /// declares: that base is the server's own too.
    func testTheBaseThePatientsFullUrlDeclaresCounts() throws {
        let (kept, rejected) = try check([patientA, observation("internal", subject: ["reference": "http://internal:8080/fhir/Patient/A"])],
                                         fullUrls: ["http://internal:8080/fhir/Patient/A", nil])
        XCTAssertEqual(rejected, [])
        XCTAssertEqual(kept, ["Observation/internal"])
    }

    func testOtherPatientsAreCountedAndLeftOut() throws {
        let (kept, rejected) = try check([
            patientA,
            observation("mine", subject: ["reference": "Patient/A"]),
            observation("b1", subject: ["reference": "Patient/B"]),
            observation("b2", subject: ["reference": base + "/Patient/B"]),
            observation("b3", subject: ["identifier": ["system": "urn:oid:1.2.3", "value": "MRN-B"]]),
        ])
        XCTAssertEqual(kept, ["Observation/mine"])
        XCTAssertEqual(rejected.count, 1)
        XCTAssertEqual(rejected.first?.request, "Observation?patient=A")
        XCTAssertEqual(rejected.first?.aboutOthers, 3)
        XCTAssertEqual(rejected.first?.uncheckedCount, 0)
        XCTAssertEqual(FHIRRejectedResources.warnings(rejected),
                       ["the server returned 3 resources about other patients for Observation?patient=A; they were not imported"])
    }

    /// What cannot be checked is not filed either: no patient, a Group, another server's Patient
    /// with the same id, a contained Patient without an identifier, an identifier of another system.
    func testWhatCannotBeCheckedIsLeftOutWithItsReason() throws {
        let (kept, rejected) = try check([
            patientA,
            observation("nobody", subject: nil),
            observation("group", subject: ["reference": "Group/g1"]),
            observation("elsewhere", subject: ["reference": "https://other.example.net/fhir/Patient/A"]),
            observation("anonymous", subject: ["reference": "#p"], contained: [["resourceType": "Patient", "id": "p"]]),
            observation("other-system", subject: ["identifier": ["system": "urn:oid:9.9", "value": "MRN-A"]]),
            ["resourceType": "Practitioner", "id": "dr", "name": [["family": "Who"]]],
        ])
        XCTAssertEqual(kept, [])
        let reasons = rejected.first?.unchecked ?? [:]
        XCTAssertEqual(rejected.first?.aboutOthers, 0)
        XCTAssertEqual(reasons["it names no patient"], 1)
        XCTAssertEqual(reasons["it names a Patient at another server"], 1)
        XCTAssertEqual(reasons["it names the patient by an identifier the Patient does not carry"], 1)
        XCTAssertEqual(rejected.first?.uncheckedCount, 5, "\(reasons)")
    }

    /// Counts per request, so the message names the request that showed the fault; Medication
    /// resources (not about anyone) stay for the medication entries that reference them.
    func testRequestsAreJudgedApartAndMedicationsStay() throws {
        var set = FHIRResponseSet()
        let page: (Any) throws -> Data = { try JSONSerialization.data(withJSONObject: $0) }
        try set.add(page(patientA), what: "patient")
        try set.add(page(["resourceType": "Bundle", "type": "searchset", "entry": [
            ["resource": observation("b", subject: ["reference": "Patient/B"])],
        ]]), what: "observations")
        try set.add(page(["resourceType": "Bundle", "type": "searchset", "entry": [
            ["resource": ["resourceType": "Medication", "id": "m1", "code": ["text": "Metformin 500 mg"]]],
            ["resource": ["resourceType": "MedicationRequest", "id": "mr", "status": "active", "intent": "order",
                          "medicationReference": ["reference": "Medication/m1"], "subject": ["reference": "Patient/A"]]],
        ]]), what: "medications")
        let rejected = set.keepOnly(aboutPatient: FHIRPatientCheck(patientID: "A", base: base),
                                    requests: [("Patient/A", 0..<1), ("Observation?patient=A", 1..<2), ("MedicationRequest?patient=A", 2..<4)])
        XCTAssertEqual(rejected.map(\.request), ["Observation?patient=A"])
        let record = try XCTUnwrap(set.map().records.first)
        XCTAssertEqual(record.entries.map(\.content.description), ["Metformin 500 mg"])
    }
}
