import XCTest
@testable import HReaderRecords

/// A source's raw resource placed in a document of ours (the IPS summary): nothing changes but the
/// references, the id and what the caller replaces.
final class FHIRResourceTextTests: XCTestCase {
    func testNotAResourceIsNil() {
        XCTAssertNil(FHIRResourceText(raw: #"{"element":"Record","type":"HKQuantityTypeIdentifierHeartRate"}"#))
        XCTAssertNil(FHIRResourceText(raw: #"{"description":"Asthma","codes":{}}"#))
        XCTAssertNil(FHIRResourceText(raw: "not json"))
        XCTAssertNil(FHIRResourceText(raw: "[]"))
    }

    func testReferencesAreRewrittenAndEverythingElseIsKeptAsWritten() throws {
        var resource = try XCTUnwrap(FHIRResourceText(raw: """
            {"resourceType":"Observation","id":"o1","status":"final","valueQuantity":{"value":36.80,"unit":"Cel"},
             "subject":{"reference":"http://x.example/fhir/Patient/p1/_history/3"},
             "performer":[{"reference":"Practitioner/dr","display":"Dr Who"},{"reference":"Organization/o"},
                          {"reference":"Organization/q","identifier":{"value":"Q"}}],
             "hasMember":[{"reference":"Observation/o2"}],
             "contained":[{"resourceType":"Device","id":"d","owner":{"reference":"Organization/o"}}],
             "device":{"reference":"#d"}}
            """))
        XCTAssertEqual(resource.resourceType, "Observation")
        XCTAssertEqual(resource.id, "o1")
        var seen: [String] = []
        resource.rewriteReferences { reference, member in
            seen.append("\(member) \(reference)")
            switch reference {
            case "Observation/o2": return "urn:uuid:2"
            case _ where member == "subject": return "urn:uuid:p"
            default: return nil
            }
        }
        XCTAssertEqual(seen.sorted(), ["hasMember Observation/o2", "owner Organization/o", "performer Organization/o", "performer Organization/q",
                                       "performer Practitioner/dr", "subject http://x.example/fhir/Patient/p1/_history/3"],
                       "every reference but the local one is asked about, with the member that holds it")
        XCTAssertEqual(resource.serialized(), """
            {"resourceType":"Observation","id":"o1","status":"final","valueQuantity":{"value":36.80,"unit":"Cel"},\
            "subject":{"reference":"urn:uuid:p"},\
            "performer":[{"display":"Dr Who"},{"display":"Organization/o"},{"identifier":{"value":"Q"}}],\
            "hasMember":[{"reference":"urn:uuid:2"}],\
            "contained":[{"resourceType":"Device","id":"d","owner":{"display":"Organization/o"}}],\
            "device":{"reference":"#d"}}
            """)
    }

    func testIDAndAReplacedMember() throws {
        var resource = try XCTUnwrap(FHIRResourceText(raw: """
            {"resourceType":"MedicationRequest","status":"active","medicationReference":{"reference":"Medication/m"},"subject":{"reference":"Patient/p"}}
            """))
        XCTAssertNil(resource.id)
        XCTAssertEqual(resource.reference("medicationReference"), "Medication/m")
        resource.setID("e-1")
        try resource.replace("medicationReference", with: "medicationCodeableConcept", json: #"{"text":"Lisinopril 10 mg"}"#)
        XCTAssertEqual(resource.serialized(), """
            {"resourceType":"MedicationRequest","id":"e-1","status":"active","medicationCodeableConcept":{"text":"Lisinopril 10 mg"},\
            "subject":{"reference":"Patient/p"}}
            """)
        XCTAssertThrowsError(try resource.replace("status", with: "status", json: "{"))
    }

    func testShortSystemNamesBecomeFHIRURIs() {
        XCTAssertEqual(FHIRResourceText.systemURI(forKey: "LOINC"), "http://loinc.org")
        XCTAssertEqual(FHIRResourceText.systemURI(forKey: "SNOMED-CT"), "http://snomed.info/sct")
        XCTAssertEqual(FHIRResourceText.systemURI(forKey: "RxNorm"), "http://www.nlm.nih.gov/research/umls/rxnorm")
        XCTAssertEqual(FHIRResourceText.systemURI(forKey: "CVX"), "http://hl7.org/fhir/sid/cvx")
        XCTAssertEqual(FHIRResourceText.systemURI(forKey: "com.apple.health"), "com.apple.health")
        XCTAssertNil(FHIRResourceText.systemURI(forKey: "Unknown"))
    }
}
