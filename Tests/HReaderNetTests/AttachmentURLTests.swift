import Foundation
import XCTest
@testable import HReaderNet

/// An attachment's url is followed only on the source's own server, under its base (issue 26).
final class AttachmentURLTests: XCTestCase {
    func testOnlyUrlsUnderTheServersBaseAreFetched() throws {
        let client = try FHIRClient(base: URL(string: "https://ehr.example.org/api/FHIR/R4")!)
        XCTAssertEqual(client.attachmentURL("Binary/7")?.absoluteString, "https://ehr.example.org/api/FHIR/R4/Binary/7")
        XCTAssertEqual(client.attachmentURL("https://ehr.example.org/api/FHIR/R4/Binary/8")?.absoluteString,
                       "https://ehr.example.org/api/FHIR/R4/Binary/8")
        XCTAssertEqual(client.attachmentURL("/api/FHIR/R4/Binary/9")?.absoluteString, "https://ehr.example.org/api/FHIR/R4/Binary/9")
        for refused in ["https://other.example.org/api/FHIR/R4/Binary/7", "http://ehr.example.org/api/FHIR/R4/Binary/7",
                        "https://ehr.example.org:8443/api/FHIR/R4/Binary/7", "https://ehr.example.org/other/Binary/7",
                        "https://ehr.example.org/api/FHIR/R4/../../x", "#contained", "urn:uuid:1234", "ftp://ehr.example.org/x",
                        "https://ehr.example.org.evil.test/api/FHIR/R4/Binary/7", "//other.example.org/api/FHIR/R4/Binary/7"] {
            XCTAssertNil(client.attachmentURL(refused), refused)
        }
    }
}
