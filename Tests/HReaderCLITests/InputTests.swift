import Foundation
import XCTest

/// Password sources, usage errors and the shape of error output.
final class InputTests: CLITestCase {
    func testNoTerminalAndNoPasswordSourceFailsAtOnce() throws {
        try initVault()
        let started = Date()
        let result = try hreader(["patients", "list"], timeout: 20)
        XCTAssertEqual(result.status, 3)
        XCTAssertTrue(result.stderr.contains("no terminal"), result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "it waited for input")
        let initResult = try hreader(["init"], env: ["HREADER_VAULT": workDir.appendingPathComponent("v2").path], timeout: 20)
        XCTAssertEqual(initResult.status, 3, initResult.stderr)
    }

    func testPasswordCommandAndEnvironmentVariableOpenTheVault() throws {
        try initVault()
        try ok(["patients", "list", "--password-command", "cat '\(passwordFile)'"])
        try ok(["patients", "list"], env: ["HREADER_PASSWORD": Self.password])
        let failing = try hreader(["patients", "list", "--password-command", "exit 3"])
        XCTAssertEqual(failing.status, 3)
        XCTAssertTrue(failing.stderr.contains("password command failed"), failing.stderr)
        // An explicit source wins over the environment.
        let wrong = try hreader(["patients", "list", "--password-file", passwordFile], env: ["HREADER_PASSWORD": "Wrong-Pass9"])
        XCTAssertEqual(wrong.status, 0, wrong.stderr)
    }

    func testUsageErrorsExit2WithOneLineAndUsage() throws {
        let unknown = try hreader(["patients", "list", "--nonsense"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.hasPrefix("hreader: "), unknown.stderr)
        XCTAssertEqual(try hreader(["frobnicate"]).status, 2)
        XCTAssertEqual(try hreader(["unlock", "--for", "forever"]).status, 2)
        XCTAssertEqual(try hreader(["recover"]).status, 2)
        let help = try hreader(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("init"))
    }

    func testErrorsNeverShowTracesOrSecrets() throws {
        try initVault()
        let wrong = try file("wrong", "Wrong-Pass9\n")
        let result = try hreader(["patients", "list", "--password-file", wrong])
        XCTAssertFalse(result.stderr.contains("Wrong-Pass9"))
        XCTAssertFalse(result.stderr.contains("Fatal error"))
        XCTAssertFalse(result.stderr.contains("Stack"))
        let missing = try hreader(["patients", "list", "--password-file", workDir.appendingPathComponent("nope").path])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("cannot read the password file"), missing.stderr)
    }
}
