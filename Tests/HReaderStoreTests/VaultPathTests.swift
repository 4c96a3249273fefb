import Foundation
import XCTest
@testable import HReaderStore

/// `Vault(path:)` names the directory `Vault(root: URL(fileURLWithPath:))` names, without a URL.
final class VaultPathTests: XCTestCase {
    func testPathsAreStandardizedAsFileURLsStandardizeThem() {
        let components = ["a", "b c", ".", "..", "", "ü", "x.y", "...", ".hidden", "v", "~", "~x", "a~"]
        var generator = SystemRandomNumberGenerator()
        var plain = 0
        for round in 0..<5000 {
            var text = (0..<Int.random(in: 1...5, using: &generator)).map { _ in components.randomElement(using: &generator)! }.joined(separator: "/")
            if round % 3 == 0 { text = "/" + text }
            if round % 5 == 0 { text += "/" }
            guard !text.isEmpty else { continue }
            XCTAssertEqual(Vault(path: text).path, Vault(root: URL(fileURLWithPath: text)).path, "'\(text)'")
            if !text.split(separator: "/", omittingEmptySubsequences: false).dropFirst().contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) { plain += 1 }
        }
        XCTAssertGreaterThan(plain, 200, "too few plain paths compared")
        for text in ["/", "v", "/tmp/su/v", "/tmp/su/v/", "./v", "../v", "a//b", "~/v", "~", "~root/v"] {
            XCTAssertEqual(Vault(path: text).path, Vault(root: URL(fileURLWithPath: text)).path, "'\(text)'")
        }
        XCTAssertEqual(Vault(path: "/").keyFilePath, "/vault.key")
        XCTAssertEqual(Vault(path: "/tmp/v/").sessionsPath, "/tmp/v/sessions")
        XCTAssertEqual(Vault(path: "/tmp/v").keyFileURL, URL(fileURLWithPath: "/tmp/v").appendingPathComponent("vault.key"))
    }
}
