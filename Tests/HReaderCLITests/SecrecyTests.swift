import Foundation
import TestSupport
import XCTest

/// Nothing of the user's health data, key material or passwords is ever on disk in plaintext.
final class SecrecyTests: CLITestCase {
    /// The full workflow with the default KDF (scrypt N=2^17), as a user would run it.
    func testFullWorkflowWithDefaultKDFLeavesNoPlaintextInVaultOrTempDirectory() throws {
        let recovery = try initVault(kdf: [])
        let unlock = try ok(["unlock", "--for", "10m", "--password-file", passwordFile])
        let token = try XCTUnwrap(unlock.stdout.split(separator: "=", maxSplits: 1).last).trimmingCharacters(in: .whitespacesAndNewlines)
        let session = ["HREADER_SESSION": token]

        try ok(["patients", "add", "--first", "Zebulon", "--last", "Quixotic", "--birth-date", "1971-03-04", "--as", "me"], env: session)
        try ok(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Xenodochial fever",
                "--code", "SNOMED-CT=SECRETCODE123", "--date", "2020-01-02"], env: session)
        try ok(["entries", "comment", "1", "--text", "PLAINTEXT-CANARY", "--directions", "Hidden-Directions"], env: session)
        let listed = try ok(["entries", "list", "--patient", "1"], env: session)
        XCTAssertTrue(listed.stdout.contains("PLAINTEXT-CANARY"), "the data is really there: \(listed.stdout)")
        // The search index holds these words too (inside the encrypted database).
        let found = try ok(["search", "xenodochial", "canary", "--json"], env: session)
        XCTAssertTrue(found.stdout.contains("Xenodochial fever"), found.stdout)
        try ok(["status"], env: session)

        let secrets = ["Zebulon", "Quixotic", "PLAINTEXT-CANARY", "Xenodochial", "SECRETCODE123", "Hidden-Directions",
                       Self.password, Self.newPassword, recovery, recovery.replacingOccurrences(of: "-", with: ""), token,
                       String(token.suffix(64))]
        func scan() -> [(path: String, data: Data)] { assertNoPlaintext(secrets) }
        let files = scan()
        XCTAssertTrue(files.contains { $0.path.hasSuffix("vault.db") })
        XCTAssertTrue(files.contains { $0.path.hasSuffix("vault.key") })
        XCTAssertTrue(files.contains { $0.path.contains("/sessions/") }, "the session file is there to be scanned")
        // Changing the password ends the sessions; the directory still holds nothing readable.
        try ok(["passwd", "--password-file", passwordFile, "--new-password-file", newPasswordFile])
        XCTAssertFalse(scan().contains { $0.path.contains("/sessions/") })
    }

    /// The scans above can fail: a secret in any encoding they look for is found wherever it lies in
    /// a file (memmem over the bytes, TestSupport's `containsBytes`), and bytes that differ from it in
    /// one place are not taken for it.
    func testTheByteScanFindsASecretWhereverItLies() {
        for form in "PLAINTEXT-CANARY".encodedForms {
            for (before, after) in [(0, 0), (1, 0), (0, 1), (4093, 7), (70_000, 0)] {
                let file = Data(repeating: 0x2A, count: before) + form + Data(repeating: 0x2B, count: after)
                XCTAssertTrue(file.containsBytes(form), "at \(before) of \(file.count)")
                var changed = file
                changed[before + form.count / 2] ^= 0x01
                XCTAssertFalse(changed.containsBytes(form), "one byte changed at \(before + form.count / 2)")
                XCTAssertFalse(file.dropLast(after + 1).containsBytes(form), "its last byte cut")
            }
        }
        XCTAssertFalse(Data().containsBytes(Data("x".utf8)))
    }

    func testVaultFilesArePrivateToTheUser() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        try ok(["unlock", "--password-file", passwordFile])
        var info = stat()
        XCTAssertEqual(stat(vaultDir.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        for (path, _) in filesWithContents(under: vaultDir) {
            XCTAssertEqual(stat(path, &info), 0)
            XCTAssertEqual(info.st_mode & 0o077, 0, "\(path) is readable by others")
        }
    }

    func testRecoveryKeyIsShownOnceAndNeverAgain() throws {
        let recovery = try initVault()
        for command in [["status"], ["key", "list"], ["key", "list", "--json"], ["status", "--json"]] {
            let result = try ok(withPassword(command))
            XCTAssertFalse((result.stdout + result.stderr).contains(recovery))
            XCTAssertFalse((result.stdout + result.stderr).contains(Self.password))
        }
    }
}
