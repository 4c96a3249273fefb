import Foundation
import HReaderCrypto
import HReaderStore
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader rekey`: a fresh data key, so that an old copy of vault.key with an old secret opens
/// neither the current vault.db nor a later one (issue 15, "Revocation does not rotate the data key").
final class RekeyTests: CLITestCase {
    var keyURL: URL { vaultDir.appendingPathComponent("vault.key") }

    /// Opens vault.db in-process with a key file and a password (what a thief with a copy could do).
    func openDirectly(keyFile bytes: Data, password: String) throws -> Database {
        let keyFile = try KeyFile.decode(Array(bytes))
        let (dataKey, _) = try keyFile.unlock(kind: .password, secret: SecretBytes(utf8: password))
        return try Database.open(path: vaultDir.appendingPathComponent("vault.db").path, key: dataKey)
    }

    /// Every table of the database (sources with their credentials, samples, audit log included).
    func dump(_ db: Database) throws -> String {
        var out = ["user_version \(try db.scalarInt("PRAGMA user_version") ?? -1)"]
        let tables = try db.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") { $0.string(0)! }
        for table in tables {
            let columns = try db.query("SELECT name FROM pragma_table_info(?)", [table]) { $0.string(0)! }
            let expr = columns.map { "quote(\"\($0)\")" }.joined(separator: " || '|' || ")
            out += try db.query("SELECT \(expr) FROM \"\(table)\"") { "\(table): " + ($0.string(0) ?? "") }.sorted()
        }
        return out.joined(separator: "\n")
    }

    func fillVault() throws {
        try ok(withPassword(["patients", "add", "--first", "Zebulon", "--last", "Quixotic", "--as", "me"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Xenodochial fever", "--date", "2020-01-02"]))
        try ok(withPassword(["entries", "comment", "1", "--text", "PLAINTEXT-CANARY"]))
        let export = try file("export.xml", """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-01-01 10:00:00 +0000" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 10:00:00 +0000" value="61"/>
             <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Watch" unit="count" creationDate="2024-01-01 11:00:00 +0000" startDate="2024-01-01 10:00:00 +0000" endDate="2024-01-01 11:00:00 +0000" value="1234"/>
            </HealthData>
            """)
        try ok(withPassword(["import", "--apple-health", export, "--patient", "1"]))
        // A source with a token (as 'sources login' stores it), written in-process.
        let keyBytes = try Data(contentsOf: keyURL)
        let db = try openDirectly(keyFile: keyBytes, password: Self.password)
        let sources = SourceRepository(db)
        let id = try sources.findOrCreate(kind: .fhir, baseURL: "https://fhir.example.org/r4", displayName: "Example", now: "2024-01-01T00:00:00Z")
        try sources.setCredentials(id: id, authKind: "bearer", credentials: "{\"token\":\"TOKEN-CANARY-123\"}", now: "2024-01-01T00:00:00Z")
    }

    func testOldKeyFileAndOldPasswordOpenNeitherTheRekeyedNorALaterDatabase() throws {
        try initVault()
        try fillVault()
        let stolen = try Data(contentsOf: keyURL)
        XCTAssertNoThrow(try openDirectly(keyFile: stolen, password: Self.password), "the copy opens the vault before the rekey")

        let rekeyed = try ok(withPassword(["rekey"]))
        XCTAssertTrue(rekeyed.stdout.contains("new data key"), rekeyed.stdout)
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "symptom", "--description", "Written after the rekey"]))

        // In-process: the old key file's slot still opens (it wraps the old key), but that key opens nothing.
        XCTAssertThrowsError(try openDirectly(keyFile: stolen, password: Self.password)) {
            XCTAssertEqual($0 as? Database.OpenFailure, .notADatabaseUnderThisKey)
        }
        // Through the binary: the old key file put back, with the old password: an integrity failure (exit 7).
        let current = try Data(contentsOf: keyURL)
        try stolen.write(to: keyURL)
        let withOld = try hreader(withPassword(["entries", "list", "--patient", "1"]))
        XCTAssertEqual(withOld.status, 7, withOld.stderr)
        XCTAssertTrue(withOld.stderr.contains("cannot be decrypted with this vault's key"), withOld.stderr)
        XCTAssertFalse(withOld.stdout.contains("Xenodochial"))
        try current.write(to: keyURL)
        try ok(withPassword(["check"]))
    }

    func testDataIsUnchangedByARekey() throws {
        try initVault()
        try fillVault()
        let before = try dump(try openDirectly(keyFile: try Data(contentsOf: keyURL), password: Self.password))
        let listBefore = try ok(withPassword(["entries", "list", "--patient", "1", "--json"])).stdout
        let patientsBefore = try ok(withPassword(["patients", "list", "--json"])).stdout
        XCTAssertTrue(before.contains("TOKEN-CANARY-123") && before.contains("apple-health"), "the vault holds what is compared")

        try ok(withPassword(["rekey", "--new-password-file", newPasswordFile]))

        let after = try dump(try openDirectly(keyFile: try Data(contentsOf: keyURL), password: Self.newPassword))
        XCTAssertEqual(after, before)
        let newPassword = ["--password-file", newPasswordFile]
        XCTAssertEqual(try ok(["entries", "list", "--patient", "1", "--json"] + newPassword).stdout, listBefore)
        XCTAssertEqual(try ok(["patients", "list", "--json"] + newPassword).stdout, patientsBefore)
        try ok(["check"] + newPassword)
        // The password changed with it.
        XCTAssertEqual(try hreader(withPassword(["patients", "list"])).status, 3)
    }

    func testNewRecoveryKeyOpensAndTheOldOneDoesNot() throws {
        let oldRecovery = try initVault()
        let result = try ok(withPassword(["rekey", "--json"]))
        let object = try json(result)
        let newRecovery = try XCTUnwrap(object["recovery_key"] as? String)
        XCTAssertNotEqual(newRecovery, oldRecovery)
        XCTAssertEqual((object["key_slots"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }.sorted(), ["password", "recovery"])

        let oldFile = try file("old-recovery", oldRecovery + "\n")
        let refused = try hreader(["recover", "--recovery-key-file", oldFile, "--new-password-file", newPasswordFile])
        XCTAssertEqual(refused.status, 3, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("wrong recovery key"), refused.stderr)
        try ok(withPassword(["patients", "list"]))   // nothing changed

        let newFile = try file("new-recovery", newRecovery + "\n")
        try ok(["recover", "--recovery-key-file", newFile, "--new-password-file", newPasswordFile])
        try ok(["check", "--password-file", newPasswordFile])
        // Shown once: the key file and later output never hold it.
        XCTAssertFalse(try String(contentsOf: keyURL, encoding: .utf8).contains(newRecovery))
    }

    func testSessionsEndAndExtraSlotsAndQuestionsAreDroppedOrAnsweredAgain() throws {
        let questions = try file("questions", "First pet?\tRex\nMother's town?\tLyon\n")
        try initVault(extra: ["--questions-file", questions])
        try ok(withPassword(["key", "add", "--kind", "password", "--label", "laptop", "--new-password-file", newPasswordFile]))
        let unlock = try ok(withPassword(["unlock", "--for", "10m"]))
        let token = try XCTUnwrap(unlock.stdout.split(separator: "=", maxSplits: 1).last).trimmingCharacters(in: .whitespacesAndNewlines)
        try ok(["patients", "list"], env: ["HREADER_SESSION": token])

        let rekeyed = try ok(withPassword(["rekey"]))
        XCTAssertTrue(rekeyed.stderr.contains("\"laptop\""), rekeyed.stderr)
        XCTAssertTrue(rekeyed.stderr.contains("questions slot"), rekeyed.stderr)
        XCTAssertTrue(rekeyed.stderr.contains("Ended 1 unlock session"), rekeyed.stderr)
        let ended = try hreader(["patients", "list"], env: ["HREADER_SESSION": token])
        XCTAssertEqual(ended.status, 3, ended.stderr)
        XCTAssertEqual(try hreader(["patients", "list", "--password-file", newPasswordFile]).status, 3, "the laptop password was dropped")
        let kinds = try json(try ok(["key", "list", "--json"]))["key_slots"] as? [[String: Any]] ?? []
        XCTAssertEqual(kinds.compactMap { $0["kind"] as? String }.sorted(), ["password", "recovery"])
        let answers = try file("answers", "Rex\nLyon\n")
        XCTAssertEqual(try hreader(["recover", "--answers-file", answers, "--new-password-file", newPasswordFile]).status, 3)

        // Answered again: the questions (new ones here) open the rekeyed vault.
        let newQuestions = try file("questions2", "First car?\tBeetle\nFavourite tree?\tOak\n")
        let again = try json(try ok(withPassword(["rekey", "--questions-file", newQuestions, "--json"])))
        XCTAssertEqual((again["key_slots"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }.sorted(), ["password", "questions", "recovery"])
        let newAnswers = try file("answers2", "Beetle\nOak\n")
        try ok(["recover", "--answers-file", newAnswers, "--new-password-file", newPasswordFile])
        try ok(["check", "--password-file", newPasswordFile])
    }

    func testWrongPasswordExits3AndChangesNothing() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        let before = snapshot()
        let wrong = try file("wrong", "Wrong-Pass9\n")
        let result = try hreader(["rekey", "--password-file", wrong])
        XCTAssertEqual(result.status, 3, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertEqual(snapshot(), before)
    }

    func testRefusedWhileAnotherProcessHasTheVaultOpen() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        // serve keeps its connection open for as long as it runs.
        let server = try start(withPassword(["serve", "--port", "0"]))
        defer { kill(server.process.processIdentifier, SIGTERM); _ = server.finish() }
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !((try? String(contentsOf: server.err, encoding: .utf8)) ?? "").contains("http://"),
              !((try? String(contentsOf: server.out, encoding: .utf8)) ?? "").contains("http://") { usleep(50_000) }
        let keyBefore = try Data(contentsOf: keyURL)
        let result = try hreader(withPassword(["rekey"]))
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("open in another hreader process"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: keyURL), keyBefore)
    }

    func testRefusedWithoutWaitingWhileAnotherProcessChangesTheKeys() throws {
        try initVault()
        // What a running passwd or key command holds.
        let fd = open(vaultDir.appendingPathComponent("vault.lock").path, O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let keyBefore = try Data(contentsOf: keyURL)
        let result = try hreader(withPassword(["rekey"]), timeout: 20)
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("changing the vault's keys"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: keyURL), keyBefore)
        flock(fd, LOCK_UN)
        try ok(withPassword(["rekey"]))
    }

    func testNoPlaintextOrLeftoverFilesAfterARekey() throws {
        let recovery = try initVault()
        try fillVault()
        let result = try ok(withPassword(["rekey", "--json"]))
        let newRecovery = try XCTUnwrap(try json(result)["recovery_key"] as? String)
        assertNoPlaintext(["Zebulon", "Quixotic", "PLAINTEXT-CANARY", "Xenodochial", "TOKEN-CANARY-123", Self.password,
                           recovery, newRecovery, newRecovery.replacingOccurrences(of: "-", with: "")])
        let names = try FileManager.default.contentsOfDirectory(atPath: vaultDir.path).sorted()
        XCTAssertEqual(Set(names).subtracting(["vault.db-wal", "vault.db-shm", "sessions"]), ["vault.db", "vault.key", "vault.lock"], "\(names)")
        XCTAssertFalse(try String(contentsOf: keyURL, encoding: .utf8).contains("\"rekey\""), "no pending record is left")
    }

    func testRevokingCommandsOfferRekeyExceptWhenQuietOrJSON() throws {
        let recovery = try initVault()
        let passwd = try ok(withPassword(["passwd", "--new-password-file", newPasswordFile]))
        XCTAssertTrue(passwd.stderr.contains("run 'hreader rekey'"), passwd.stderr)
        let quiet = try ok(["passwd", "--quiet", "--password-file", newPasswordFile, "--new-password-file", passwordFile])
        XCTAssertFalse(quiet.stderr.contains("rekey"), quiet.stderr)
        let recoveryFile = try file("recovery", recovery + "\n")
        let recovered = try ok(["recover", "--recovery-key-file", recoveryFile, "--new-password-file", passwordFile])
        XCTAssertTrue(recovered.stderr.contains("run 'hreader rekey'"), recovered.stderr)
        try ok(withPassword(["key", "add", "--kind", "password", "--label", "laptop", "--new-password-file", newPasswordFile]))
        let slots = try json(try ok(["key", "list", "--json"]))["key_slots"] as? [[String: Any]] ?? []
        let laptop = try XCTUnwrap(slots.first { $0["label"] as? String == "laptop" }?["id"] as? String)
        let removed = try ok(withPassword(["key", "remove", laptop]))
        XCTAssertTrue(removed.stderr.contains("run 'hreader rekey'"), removed.stderr)
    }

    /// A key file left pending by a crash after step 1 (database still under the old key) is rolled
    /// forward by the next open: the database ends under the new key and the old key leaves the file.
    func testAPendingRekeyIsFinishedByTheNextOpen() throws {
        try initVault()
        try fillVault()
        let before = try dump(try openDirectly(keyFile: try Data(contentsOf: keyURL), password: Self.password))
        // Build the state after step 1 in-process.
        var keyFile = try KeyFile.decode(Array(try Data(contentsOf: keyURL)))
        let (oldKey, _) = try keyFile.unlock(kind: .password, secret: SecretBytes(utf8: Self.password))
        let newKey = try SecretBytes.random(count: 32)
        var pending = keyFile.emptyCopy()
        try pending.addSlot(kind: .password, label: "password", secret: SecretBytes(utf8: Self.password), kdf: .scrypt(n: 1024, r: 8, p: 1), dataKey: newKey)
        try pending.setPendingRekey(previous: oldKey, current: newKey)
        try Data(try pending.encoded()).write(to: keyURL)
        keyFile = pending

        try ok(withPassword(["check"]))
        XCTAssertNil(try KeyFile.decode(Array(try Data(contentsOf: keyURL))).pendingRekey, "the rekey was finished")
        XCTAssertEqual(try dump(try openDirectly(keyFile: try Data(contentsOf: keyURL), password: Self.password)), before)
        XCTAssertThrowsError(try Database.open(path: vaultDir.appendingPathComponent("vault.db").path, key: oldKey))
    }
}
