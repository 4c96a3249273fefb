import HReaderJSON
import HReaderRecords
import XCTest

/// Who wrote a FHIR file (`FHIRDocumentAuthor`), in the shapes of IPS and US Core documents.
final class FHIRDocumentAuthorTests: XCTestCase {
    func author(_ json: String) throws -> String? {
        FHIRDocumentAuthor.name(of: try XCTUnwrap(try JSONParser.parse(json).object))
    }

    func testADocumentIsWrittenByItsCustodianElseItsAuthor() throws {
        // IPS: the custodian by urn:uuid fullUrl.
        XCTAssertEqual(try author(#"""
            {"resourceType":"Bundle","type":"document","entry":[
              {"fullUrl":"urn:uuid:1","resource":{"resourceType":"Composition","author":[{"reference":"urn:uuid:3"}],"custodian":{"reference":"urn:uuid:2"}}},
              {"fullUrl":"urn:uuid:2","resource":{"resourceType":"Organization","name":"  Gastroenterology @ Home "}},
              {"fullUrl":"urn:uuid:3","resource":{"resourceType":"Practitioner","name":[{"family":"Cure","given":["Anna"]}]}}]}
            """#), "Gastroenterology @ Home")
        // No custodian: the first author, by a relative reference, a Practitioner's name.
        XCTAssertEqual(try author(#"""
            {"resourceType":"Bundle","type":"document","entry":[
              {"resource":{"resourceType":"Composition","author":[{"reference":"Practitioner/p1"}]}},
              {"fullUrl":"https://ehr.example/fhir/Practitioner/p1","resource":{"resourceType":"Practitioner","id":"p1","name":[{"prefix":["Dr"],"given":["Anna"],"family":"Cure"}]}}]}
            """#), "Dr Anna Cure")
        // A reference's display wins; a reference to nothing the Bundle holds names nobody.
        XCTAssertEqual(try author(#"{"resourceType":"Bundle","type":"document","entry":[{"resource":{"resourceType":"Composition","custodian":{"display":"Harbor View Clinic"}}}]}"#),
                       "Harbor View Clinic")
        XCTAssertNil(try author(#"{"resourceType":"Bundle","type":"document","entry":[{"resource":{"resourceType":"Composition","custodian":{"reference":"Organization/x"}}}]}"#))
    }

    func testOtherBundlesByTheirMetaSourceElseNobody() throws {
        XCTAssertEqual(try author(#"{"resourceType":"Bundle","type":"collection","meta":{"source":"https://portal.example.org/fhir"},"entry":[]}"#),
                       "https://portal.example.org/fhir")
        XCTAssertNil(try author(##"{"resourceType":"Bundle","type":"searchset","meta":{"source":"#a1b2"},"entry":[]}"##), "an internal tag")
        XCTAssertNil(try author(#"{"resourceType":"Bundle","type":"collection","entry":[]}"#))
        XCTAssertNil(try author(#"{"resourceType":"Condition","id":"c"}"#))
    }
}
