import Foundation
import XCTest

/// The command line as people type it from git, restic or docker.
final class CommandLineConventionsTests: CLITestCase {
    func testGlobalOptionsWorkBeforeOrAfterTheSubcommand() throws {
        let elsewhere = workDir.appendingPathComponent("elsewhere").path
        try ok(["--vault", elsewhere, "init", "--new-password-file", passwordFile] + CLITestCase.cheapKDF)
        try ok(["--vault=\(elsewhere)", "--password-file", passwordFile, "patients", "add", "--first", "Ada", "--last", "Before"])
        try ok(["patients", "add", "--first", "Bo", "--last", "After", "--vault", elsewhere, "--password-file", passwordFile])
        let before = try json(try ok(["--vault", elsewhere, "--password-file", passwordFile, "--json", "patients", "list"]))
        let after = try json(try ok(["patients", "list", "--json", "--vault", elsewhere, "--password-file", passwordFile]))
        XCTAssertEqual((before["patients"] as? [[String: Any]])?.map { $0["last_name"] as? String }, ["After", "Before"])
        XCTAssertEqual(NSDictionary(dictionary: before), NSDictionary(dictionary: after))
        let status = try json(try ok(["--vault", elsewhere, "status", "--json"]))
        XCTAssertEqual(status["vault"] as? String, elsewhere)
        XCTAssertFalse(FileManager.default.fileExists(atPath: vaultDir.path), "$HREADER_VAULT was not used")
        // An unknown option in front stops the move, and is the usage error it would be anywhere.
        let misplaced = try hreader(["--vault", elsewhere, "--no-such-option", "status"])
        XCTAssertEqual(misplaced.status, 2, misplaced.stderr)
    }

    func testVersionNamesTheLibrariesAndDashDashVersionOnlyHreaders() throws {
        let version = try ok(["version"]).stdout
        XCTAssertTrue(version.hasPrefix("hreader 0."), version)
        for library in ["SQLCipher 4.", "SQLite 3.", "OpenSSL 3."] {
            XCTAssertTrue(version.contains(library), "\(library) in \(version)")
        }
        // `--version` is one word and a number, as git's: it loads no library to ask it.
        let short = try ok(["--version"]).stdout
        XCTAssertTrue(short.range(of: #"^hreader \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil, short)
        XCTAssertTrue(version.hasPrefix(String(short.dropLast()) + " ("), "the same version: \(short) / \(version)")
    }

    func testShellCompletionScripts() throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try ok(["--generate-completion-script", shell]).stdout
            XCTAssertTrue(script.contains("hreader"), shell)
            XCTAssertTrue(script.contains("patients"), "\(shell): subcommands are completed")
        }
    }
}
