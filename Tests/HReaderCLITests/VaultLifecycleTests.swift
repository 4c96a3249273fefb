import Foundation
import HReaderStore
import XCTest

/// Creating, opening, damaging and re-keying a vault, through the real binary.
final class VaultLifecycleTests: CLITestCase {
    /// Where a command looks for the vault: --vault, else $HREADER_VAULT, else $XDG_DATA_HOME/hreader,
    /// else ~/.local/share/hreader; relative paths from the working directory, `.` and `..` resolved.
    /// The "no vault" line names the place it looked.
    func testTheVaultIsLookedForWhereTheFlagAndTheEnvironmentSay() throws {
        let home = workDir.path, data = workDir.appendingPathComponent("data").path
        let cases: [(arguments: [String], env: [String: String], expected: String)] = [
            (["status"], ["HREADER_VAULT": "", "XDG_DATA_HOME": "", "HOME": home], home + "/.local/share/hreader"),
            (["status"], ["HREADER_VAULT": "", "XDG_DATA_HOME": data, "HOME": home], data + "/hreader"),
            (["status"], ["HREADER_VAULT": data + "/v/./w/../x/", "XDG_DATA_HOME": data], data + "/v/x"),
            (["status", "--vault", "/nowhere/v"], ["HREADER_VAULT": data + "/v"], "/nowhere/v"),
            (["--vault=relative/v", "status"], [:], FileManager.default.currentDirectoryPath + "/relative/v"),
        ]
        for c in cases {
            let result = try hreader(c.arguments, env: c.env)
            XCTAssertEqual(result.status, 4, "\(c): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("no vault at \(c.expected);"), "\(c): \(result.stderr)")
        }
    }

    func testInitRefusesAnExistingVaultAndCommandsWithoutOneExit4() throws {
        let none = try hreader(withPassword(["patients", "list"]))
        XCTAssertEqual(none.status, 4)
        XCTAssertTrue(none.stderr.contains("no vault"), none.stderr)
        // With a session the key file is not read ahead of the open: "no vault" still comes first, not
        // a complaint about the session.
        let token = "hrs1." + String(repeating: "0", count: 32) + "." + String(repeating: "0", count: 64)
        let noneWithSession = try hreader(["patients", "list"], env: ["HREADER_SESSION": token])
        XCTAssertEqual(noneWithSession.status, 4, noneWithSession.stderr)
        XCTAssertTrue(noneWithSession.stderr.contains("no vault"), noneWithSession.stderr)
        try initVault()
        let again = try hreader(["init", "--new-password-file", passwordFile] + Self.cheapKDF)
        XCTAssertEqual(again.status, 4)
        XCTAssertTrue(again.stderr.contains("already exists"))
    }

    func testInitNeverTakesOverADatabaseWhoseKeyFileIsMissing() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        let keyURL = vaultDir.appendingPathComponent("vault.key")
        try FileManager.default.removeItem(at: keyURL)
        let before = snapshot()
        let opened = try hreader(withPassword(["patients", "list"]))
        XCTAssertEqual(opened.status, 7)
        XCTAssertTrue(opened.stderr.contains("restore vault.key"), opened.stderr)
        let again = try hreader(["init", "--new-password-file", passwordFile] + Self.cheapKDF)
        XCTAssertEqual(again.status, 7, again.stderr)
        XCTAssertEqual(snapshot(), before, "init changed a database it did not make")
    }

    func testInitRefusesANonEmptyDirectoryAndLeavesIt() throws {
        try FileManager.default.createDirectory(at: vaultDir, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: vaultDir.appendingPathComponent("notes.txt"))
        chmod(vaultDir.path, 0o755)
        let result = try hreader(["init", "--new-password-file", passwordFile] + Self.cheapKDF)
        XCTAssertEqual(result.status, 4, result.stderr)
        var info = stat()
        stat(vaultDir.path, &info)
        XCTAssertEqual(info.st_mode & 0o777, 0o755, "init changed the mode of a directory it does not own")
    }

    func testInitRefusesAnotherUsersDirectory() throws {
        guard geteuid() == 0 else { throw XCTSkip("needs root to give the directory to another user") }
        try FileManager.default.createDirectory(at: vaultDir, withIntermediateDirectories: true)
        chown(vaultDir.path, 65534, 65534)
        chmod(vaultDir.path, 0o777)
        let result = try hreader(["init", "--new-password-file", passwordFile] + Self.cheapKDF)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("belongs to another user"), result.stderr)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vaultDir.path), [], "nothing written there")
    }

    func testInitStoppedBeforeItsLastRenameIsFinishedByTheNextOpen() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        // The state after a crash between writing vault.key and renaming vault.db.new.
        try FileManager.default.moveItem(at: vaultDir.appendingPathComponent("vault.db"), to: vaultDir.appendingPathComponent("vault.db.new"))
        let listed = try json(try ok(withPassword(["patients", "list", "--json"])))
        XCTAssertEqual((listed["patients"] as? [Any])?.count, 1)
        XCTAssertTrue(FileManager.default.fileExists(atPath: vaultDir.appendingPathComponent("vault.db").path))
    }

    func testWeakPasswordIsRefusedByPolicy() throws {
        for weak in ["short1A", "alllowercase1", "ALLUPPERCASE1", "NoDigitsHere"] {
            let path = try file("weak", weak + "\n")
            let result = try hreader(["init", "--new-password-file", path] + Self.cheapKDF)
            XCTAssertEqual(result.status, 2, "'\(weak)' was accepted")
            XCTAssertTrue(result.stderr.contains("at least 8 characters"), result.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: vaultDir.appendingPathComponent("vault.key").path))
    }

    func testCheapKDFParametersWarnBelowTheOWASPMinimum() throws {
        let result = try hreader(["init", "--new-password-file", passwordFile, "--kdf", "pbkdf2", "--pbkdf2-iterations", "1000"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("below the OWASP minimum"), result.stderr)
        let slots = try json(try ok(["key", "list", "--json"]))["key_slots"] as? [[String: Any]]
        XCTAssertEqual(slots?.first?["kdf"] as? String, "pbkdf2-sha256 1000 iterations")
    }

    func testWrongPasswordExits3AndChangesNothing() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        let before = snapshot()
        let wrong = try file("wrong", "Wrong-Pass9\n")
        for command in [["patients", "list"], ["patients", "add", "--first", "C", "--last", "D"], ["unlock"],
                        ["passwd", "--new-password-file", newPasswordFile]] {
            let result = try hreader(command + ["--password-file", wrong])
            XCTAssertEqual(result.status, 3, "\(command): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("wrong password"), result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
        }
        XCTAssertEqual(snapshot(), before, "a wrong password changed the vault's files")
    }

    func testFlippedByteAnywhereInKeyFileExits7SayingItIsDamaged() throws {
        try initVault()
        let keyURL = vaultDir.appendingPathComponent("vault.key")
        let original = try Data(contentsOf: keyURL)
        // A spread of offsets: the header, slot fields, base64 blobs, the checksum, the end.
        let offsets = Set(stride(from: 0, to: original.count, by: max(1, original.count / 40)) + [original.count - 2])
        for offset in offsets.sorted() {
            var damaged = original
            damaged[offset] ^= 0x01
            try damaged.write(to: keyURL)
            let result = try hreader(withPassword(["patients", "list"]))
            XCTAssertFalse(result.signaled, "crashed at offset \(offset)")
            XCTAssertEqual(result.status, 7, "offset \(offset): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("key file"), "offset \(offset): \(result.stderr)")
        }
        try original.write(to: keyURL)
        try ok(withPassword(["patients", "list"]))
    }

    func testFlippedByteInsideADatabasePageExits7WithoutACrash() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        for i in 0..<30 {
            try ok(withPassword(["entries", "add", "--patient", "1", "--type", "result", "--description", "Result \(i) " + String(repeating: "x", count: 300)]))
        }
        let dbURL = vaultDir.appendingPathComponent("vault.db")
        var bytes = try Data(contentsOf: dbURL)
        XCTAssertGreaterThan(bytes.count, 4096 * 4)
        // Inside every page but the first (the entries table's among them, beside the search
        // index's), well clear of the page header.
        for page in 1..<(bytes.count / 4096) { bytes[page * 4096 + 1500] ^= 0x40 }
        try bytes.write(to: dbURL)
        let listed = try hreader(withPassword(["entries", "list", "--patient", "1"]))
        XCTAssertFalse(listed.signaled)
        XCTAssertEqual(listed.status, 7, listed.stderr)
        XCTAssertTrue(listed.stderr.contains("damaged"), listed.stderr)
        let check = try hreader(withPassword(["check"]))
        XCTAssertFalse(check.signaled)
        XCTAssertEqual(check.status, 7, check.stderr)
    }

    func testDamagedFirstPageExits7() throws {
        try initVault()
        let dbURL = vaultDir.appendingPathComponent("vault.db")
        var bytes = try Data(contentsOf: dbURL)
        bytes[100] ^= 0xff
        try bytes.write(to: dbURL)
        let result = try hreader(withPassword(["patients", "list"]))
        XCTAssertEqual(result.status, 7, result.stderr)
    }

    func testPlaintextDatabaseInPlaceOfTheVaultIsRefusedNotUpgraded() throws {
        try initVault()
        let dbURL = vaultDir.appendingPathComponent("vault.db")
        try FileManager.default.removeItem(at: dbURL)
        let plain = try Database.open(path: dbURL.path, key: nil, create: true)
        try plain.execute("CREATE TABLE t(x); INSERT INTO t VALUES ('hello')")
        try plain.execute("PRAGMA journal_mode = DELETE")
        let before = try Data(contentsOf: dbURL)
        let result = try hreader(withPassword(["patients", "list"]))
        XCTAssertEqual(result.status, 7, result.stderr)
        XCTAssertTrue(result.stderr.contains("plaintext"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: dbURL), before, "the plaintext file was modified")
    }

    func testPasswdLeavesDatabaseBytesUntouchedAndOnlyTheNewPasswordOpens() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        let dbURL = vaultDir.appendingPathComponent("vault.db")
        let dbBefore = try Data(contentsOf: dbURL)
        try ok(["passwd", "--password-file", passwordFile, "--new-password-file", newPasswordFile])
        XCTAssertEqual(try Data(contentsOf: dbURL), dbBefore, "passwd rewrote the database")
        XCTAssertEqual(try hreader(withPassword(["patients", "list"])).status, 3)
        let listed = try ok(["patients", "list", "--json", "--password-file", newPasswordFile])
        XCTAssertEqual((try json(listed)["patients"] as? [Any])?.count, 1)
    }

    func testKillDuringPasswdAlwaysLeavesAVaultTheOldOrNewPasswordOpens() throws {
        // PBKDF2 with 150k iterations makes each passwd take long enough for kills to land inside it.
        let result = try hreader(["init", "--new-password-file", passwordFile, "--kdf", "pbkdf2", "--pbkdf2-iterations", "150000"])
        XCTAssertEqual(result.status, 0, result.stderr)
        var current = passwordFile, other = newPasswordFile
        var killed = 0, completed = 0
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<16 {
            let running = try start(["passwd", "--password-file", current, "--new-password-file", other])
            usleep(UInt32.random(in: 0...160_000, using: &generator))
            kill(running.process.processIdentifier, SIGKILL)
            let outcome = running.finish()
            if outcome.signaled { killed += 1 } else { completed += 1; XCTAssertEqual(outcome.status, 0, outcome.stderr) }
            let withCurrent = try hreader(["patients", "list", "--password-file", current])
            let withOther = try hreader(["patients", "list", "--password-file", other])
            XCTAssertTrue(withCurrent.succeeded != withOther.succeeded,
                          "exactly one password must open the vault: \(withCurrent.stderr) / \(withOther.stderr)")
            if withOther.succeeded { swap(&current, &other) }
            let names = try FileManager.default.contentsOfDirectory(atPath: vaultDir.path)
            XCTAssertTrue(names.contains("vault.key"))
        }
        XCTAssertGreaterThan(killed, 0, "no kill landed during passwd; the test proved nothing")
        try ok(["check", "--password-file", current])
        _ = completed
    }

    func testSecurityQuestionsRecoverTheVaultWithForgivingAnswers() throws {
        let questions = try file("questions", "Name of your first pet?\tFluffy the Cat\nCity you were born in?\tSão Paulo\n")
        try initVault(extra: ["--questions-file", questions])
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        let wrongAnswers = try file("wrong-answers", "Fluffy\nSão Paulo\n")
        let bad = try hreader(["recover", "--answers-file", wrongAnswers, "--new-password-file", newPasswordFile])
        XCTAssertEqual(bad.status, 3, bad.stderr)
        // Case, spacing and decomposed accents are forgiven.
        let answers = try file("answers", "  fluffy  THE cat \nSa\u{0303}o paulo\n")
        try ok(["recover", "--answers-file", answers, "--new-password-file", newPasswordFile])
        XCTAssertEqual(try hreader(withPassword(["patients", "list"])).status, 3, "the old password still opens after recovery")
        try ok(["patients", "list", "--password-file", newPasswordFile])
    }

    func testRecoveryKeyRecoversTheVaultAndEndsSessions() throws {
        let recovery = try initVault()
        try ok(["unlock", "--password-file", passwordFile])
        let typed = try file("recovery", recovery.lowercased().replacingOccurrences(of: "-", with: " ") + "\n")
        try ok(["recover", "--recovery-key-file", typed, "--new-password-file", newPasswordFile])
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: vaultDir.appendingPathComponent("sessions").path).isEmpty)
        try ok(["patients", "list", "--password-file", newPasswordFile])
        let wrong = try file("wrong-recovery", String(recovery.reversed()) + "\n")
        XCTAssertEqual(try hreader(["recover", "--recovery-key-file", wrong, "--new-password-file", passwordFile]).status, 3)
    }

    func testSessionOpensWithoutAnyPasswordAndLockEndsIt() throws {
        try initVault()
        let unlock = try ok(["unlock", "--for", "5m", "--password-file", passwordFile])
        XCTAssertTrue(unlock.stdout.hasPrefix("export HREADER_SESSION=hrs1."), unlock.stdout)
        let token = String(unlock.stdout.dropFirst("export HREADER_SESSION=".count)).trimmingCharacters(in: .whitespacesAndNewlines)
        // No password source at all: only the session can open the vault, so no KDF can have run.
        try ok(["patients", "add", "--first", "A", "--last", "B"], env: ["HREADER_SESSION": token])
        let forged = String(token.dropLast(4)) + "0000"
        XCTAssertEqual(try hreader(["patients", "list"], env: ["HREADER_SESSION": forged]).status, 3)
        try ok(["lock"])
        let after = try hreader(["patients", "list"], env: ["HREADER_SESSION": token])
        XCTAssertEqual(after.status, 3)
        XCTAssertTrue(after.stderr.contains("unlock"), after.stderr)
    }

    func testExpiredSessionExits3AndSaysToUnlockAgain() throws {
        try initVault()
        let unlock = try ok(["unlock", "--for", "1s", "--password-file", passwordFile])
        let token = String(unlock.stdout.dropFirst("export HREADER_SESSION=".count)).trimmingCharacters(in: .whitespacesAndNewlines)
        sleep(2)
        let result = try hreader(["patients", "list"], env: ["HREADER_SESSION": token])
        XCTAssertEqual(result.status, 3)
        XCTAssertTrue(result.stderr.contains("expired") && result.stderr.contains("hreader unlock"), result.stderr)
    }

    func testExpiredSessionFilesAreSweptByTheNextOpenAndByStatus() throws {
        try initVault()
        let sessions = vaultDir.appendingPathComponent("sessions")
        try ok(["unlock", "--for", "1s", "--password-file", passwordFile])
        try ok(["unlock", "--for", "10m", "--password-file", passwordFile])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: sessions.path).count, 2)
        sleep(2)
        // Nobody uses the expired token: a password open removes its file all the same.
        try ok(withPassword(["patients", "list"]))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: sessions.path).count, 1, "the live session stays")
        try ok(["unlock", "--for", "1s", "--password-file", passwordFile])
        sleep(2)
        let status = try json(try ok(["status", "--json"]))
        XCTAssertEqual(status["sessions"] as? Int, 1)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: sessions.path).count, 1, "status swept it")
    }

    func testKeySlotsAddRemoveAndTheLastPasswordSlotStays() throws {
        try initVault()
        try ok(["key", "add", "--kind", "password", "--label", "laptop", "--password-file", passwordFile,
                "--new-password-file", newPasswordFile])
        try ok(["patients", "list", "--password-file", newPasswordFile])
        var slots = try json(try ok(["key", "list", "--json"]))["key_slots"] as! [[String: Any]]
        XCTAssertEqual(slots.filter { $0["kind"] as? String == "password" }.count, 2)
        let first = slots.first { $0["kind"] as? String == "password" && $0["label"] as? String == "password" }!["id"] as! String
        try ok(["key", "remove", String(first.prefix(8)), "--password-file", newPasswordFile])
        XCTAssertEqual(try hreader(withPassword(["patients", "list"])).status, 3)
        slots = try json(try ok(["key", "list", "--json"]))["key_slots"] as! [[String: Any]]
        let last = slots.first { $0["kind"] as? String == "password" }!["id"] as! String
        let refused = try hreader(["key", "remove", last, "--password-file", newPasswordFile])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("last password slot"), refused.stderr)
        // Key management needs the password itself, never just a session.
        let unlock = try ok(["unlock", "--password-file", newPasswordFile])
        let token = String(unlock.stdout.dropFirst("export HREADER_SESSION=".count)).trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(try hreader(["key", "add", "--kind", "recovery"], env: ["HREADER_SESSION": token]).status, 3)
    }

    func testKeyUpgradeRaisesTheSlotKDF() throws {
        try initVault()
        try ok(["key", "upgrade", "--kdf", "pbkdf2", "--password-file", passwordFile])
        let slots = try json(try ok(["key", "list", "--json"]))["key_slots"] as! [[String: Any]]
        let password = slots.first { $0["kind"] as? String == "password" }!
        XCTAssertEqual(password["kdf"] as? String, "pbkdf2-sha256 600000 iterations")
        XCTAssertEqual(password["meets_minimum"] as? Bool, true)
        try ok(withPassword(["patients", "list"]))
    }

    func testTwoProcessesWritingAtOnceBothSucceedAndTheVaultStaysSound() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        let script = """
            for i in $(seq 1 12); do "$HREADER" entries add --patient 1 --type result --description "w$1-$i" \
              --password-file "$PW" || exit 1; done
            """
        var writers: [Process] = []
        for w in 1...2 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", script, "sh", String(w)]
            p.environment = environment(["HREADER": Self.binary.path, "PW": passwordFile])
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            writers.append(p)
        }
        for p in writers { p.waitUntilExit(); XCTAssertEqual(p.terminationStatus, 0) }
        let entries = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [Any]
        XCTAssertEqual(entries.count, 24)
        try ok(withPassword(["check"]))
    }
}
