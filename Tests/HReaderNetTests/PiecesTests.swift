import Foundation
@testable import HReaderNet
import XCTest

/// The small rules the clients rest on: origins, what messages may show of a URL, Retry-After.
final class PiecesTests: XCTestCase {
    func testOriginIsSchemeHostAndPortWithDefaults() {
        XCTAssertEqual(Origin(URL(string: "https://Fhir.Example.org/r4/Patient")!)?.description, "https://fhir.example.org:443")
        XCTAssertEqual(Origin(URL(string: "http://127.0.0.1:8080/fhir")!)?.description, "http://127.0.0.1:8080")
        XCTAssertEqual(Origin(URL(string: "https://a.example:443/x")!), Origin(URL(string: "https://a.example/y")!))
        XCTAssertNotEqual(Origin(URL(string: "https://a.example/")!), Origin(URL(string: "http://a.example/")!))
        XCTAssertNil(Origin(URL(string: "file:///etc/passwd")!))
        XCTAssertNil(Origin(URL(string: "ftp://a.example/")!))
    }

    func testCredentialsGoInTheClearOnlyToThisMachineUnlessTheUserAllowsIt() throws {
        for url in ["https://fhir.example.org/r4", "http://127.0.0.1:8080/fhir", "http://127.9.9.9/x", "http://localhost:3000/",
                    "http://[::1]:8080/fhir"] {
            XCTAssertNoThrow(try Authenticator.checkTransport(URL(string: url)!, allowInsecure: false), url)
        }
        for url in ["http://fhir.example.org/r4", "http://10.0.0.5/fhir", "http://127.0.0.1.example.org/fhir", "http://128.0.0.1/"] {
            XCTAssertThrowsError(try Authenticator.checkTransport(URL(string: url)!, allowInsecure: false), url) { error in
                XCTAssertTrue("\(error)".contains("in the clear"), "\(error)")
            }
            XCTAssertNoThrow(try Authenticator.checkTransport(URL(string: url)!, allowInsecure: true), "--insecure-http: \(url)")
        }
        // Applied before a credential is attached: a bearer token for a plain-http host is never put on the request.
        let auth = Authenticator(.bearer(token: "s3cret"), placement: .header)
        var request = HTTPRequest(url: URL(string: "http://fhir.example.org/r4/Patient")!)
        XCTAssertThrowsError(try auth.apply(to: &request, using: HTTPTransport(configuration: NetworkConfiguration())))
        XCTAssertNil(request.header("authorization"))
    }

    func testMessagesNeverShowTokensOrUserInfo() {
        let url = URL(string: "https://user:pw@rhex.example/records/1/c32/1.json?access_token=s3cret&x=1&refresh_token=r3fresh&code=c0de")!
        let shown = url.redactedForDisplay
        for secret in ["s3cret", "r3fresh", "c0de", "user", "pw@"] {
            XCTAssertFalse(shown.contains(secret), shown)
        }
        XCTAssertTrue(shown.contains("x=1"), shown)
        XCTAssertTrue(shown.contains("access_token=REDACTED"), shown)
    }

    func testRetryAfterInSecondsOrAsAnHTTPDate() {
        func response(_ value: String?) -> HTTPResponse {
            HTTPResponse(status: 429, headers: value.map { ["retry-after": $0] } ?? [:], body: Data(), url: URL(string: "http://x.example/")!)
        }
        XCTAssertEqual(APIClient.retryAfter(response("3")), 3)
        XCTAssertNil(APIClient.retryAfter(response(nil)))
        XCTAssertNil(APIClient.retryAfter(response("soon")))
        XCTAssertNil(APIClient.retryAfter(response("Fri, 01 Mar 2024 08:00:0\u{0365} GMT")), "not ASCII: never given to DateFormatter")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        let later = APIClient.retryAfter(response(formatter.string(from: Date().addingTimeInterval(30)))) ?? -1
        XCTAssertTrue((25...31).contains(later), "\(later)")
        XCTAssertEqual(APIClient.retryAfter(response(formatter.string(from: Date().addingTimeInterval(-60)))), 0, "a date in the past means now")
    }

    func testServiceBaseDropsTrailingSlashesAndRefusesOtherSchemes() throws {
        XCTAssertEqual(try Origin.serviceBase(URL(string: "http://127.0.0.1:1/fhir//")!).absoluteString, "http://127.0.0.1:1/fhir")
        XCTAssertThrowsError(try Origin.serviceBase(URL(string: "file:///tmp/x")!))
    }
}
