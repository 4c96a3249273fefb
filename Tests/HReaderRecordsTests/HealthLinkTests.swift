import Foundation
import HReaderRecords
import XCTest

/// The link payload, manifest and JWE readers (docs/sharing.md), over inputs written here and a file
/// sealed by Python's `cryptography` (Fuzz/health-link/sealed*.jwe, under 32 bytes of 0x2a).
final class HealthLinkReaderTests: XCTestCase {
    let key = [UInt8](repeating: 0x2a, count: 32)
    var fuzzFolder: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fuzz/health-link") }

    func sealed(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: fuzzFolder.appendingPathComponent(name)), as: UTF8.self)
    }

    func testFileSealedElsewhereOpensAndInflates() throws {
        let opened = try HealthLinkFile.open(try sealed("sealed.jwe"), key: key)
        XCTAssertEqual(opened.contentType, "application/fhir+json")
        XCTAssertEqual(String(decoding: opened.content, as: UTF8.self), #"{"resourceType":"Bundle","type":"collection","entry":[]}"#)
        XCTAssertEqual(try HealthLinkFile.open(try sealed("sealed-plain.jwe"), key: key).content, Array("{}".utf8))
    }

    func testBombWrongKeyAndChangedHeaderAreRefused() throws {
        XCTAssertThrowsError(try HealthLinkFile.open(try sealed("sealed-bomb.jwe"), key: key, maxInflatedBytes: 1 << 20)) { error in
            XCTAssertTrue("\(error)".contains("inflates to more than"), "\(error)")
        }
        XCTAssertThrowsError(try HealthLinkFile.open(try sealed("sealed.jwe"), key: [UInt8](repeating: 1, count: 32)))
        // The header is the associated data: the same header re-encoded otherwise (a space) fails.
        let jwe = try sealed("sealed-plain.jwe")
        let parts = jwe.split(separator: ".", omittingEmptySubsequences: false)
        let header = String(decoding: Data(base64Encoded: String(parts[0]) + "==")!, as: UTF8.self)
        let respaced = Data((header + " ").utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        XCTAssertThrowsError(try HealthLinkFile.open(([respaced] + parts.dropFirst().map(String.init)).joined(separator: "."), key: key))
    }

    func testSealThenOpenRoundTrips() throws {
        let content = Array(String(repeating: "IPS ", count: 1000).utf8)
        let jwe = try HealthLinkFile.seal(content, contentType: HealthLinkFile.fhirJSON, key: key)
        XCTAssertLessThan(jwe.utf8.count, content.count / 4, "DEFLATEd before sealing")
        XCTAssertEqual(try HealthLinkFile.open(jwe, key: key).content, content)
    }

    func testLinkPayloadReadsViewerFormsAndRefusesBadOnes() throws {
        let link = HealthLink(url: "https://shl.example.org/m/1", key: key, expires: 1_900_000_000, flags: "LP", label: "Ada")
        XCTAssertEqual(try HealthLink(text: link.text), link)
        XCTAssertEqual(try HealthLink(text: "  " + link.text(viewer: "https://viewer.example.org/#old") + "\n"), link)
        XCTAssertTrue(link.text(viewer: "https://viewer.example.org/").hasPrefix("https://viewer.example.org/#shlink:/"))
        XCTAssertTrue(link.needsPasscode)
        XCTAssertFalse(link.isDirectFile)
        XCTAssertTrue(link.hasExpired(at: 1_900_000_000))
        XCTAssertFalse(link.hasExpired(at: 1_899_999_999))
        for bad: [String: Any] in [["url": "ftp://x/m", "key": link.key], ["url": "https://x/m", "key": "short"],
                                   ["url": "https://x/m", "key": link.key, "flag": "UP"], ["url": "https://x/m", "key": link.key, "flag": "X"],
                                   ["url": "https://x/m", "key": link.key, "v": 2],
                                   ["url": "https://x/m", "key": link.key, "label": String(repeating: "a", count: 81)]] {
            let data = try JSONSerialization.data(withJSONObject: bad)
            let text = "shlink:/" + data.base64EncodedString().replacingOccurrences(of: "=", with: "")
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            XCTAssertThrowsError(try HealthLink(text: text), "\(bad)")
        }
    }

    func testManifestNeedsExactlyOneOfEmbeddedAndLocation() throws {
        let good = try HealthLinkManifest(Data(#"{"files":[{"contentType":"application/fhir+json","location":"https://x/f"}]}"#.utf8))
        XCTAssertEqual(good.files.first?.location, "https://x/f")
        XCTAssertThrowsError(try HealthLinkManifest(Data(#"{"files":[{"contentType":"a","location":"l","embedded":"e"}]}"#.utf8)))
        XCTAssertThrowsError(try HealthLinkManifest(Data(#"{"files":[{"contentType":"a"}]}"#.utf8)))
        XCTAssertEqual(HealthLinkManifest.remainingAttempts(in: Array(#"{"remainingAttempts":2}"#.utf8)), 2)
    }
}
