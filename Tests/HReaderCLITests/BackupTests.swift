import Foundation
import HReaderCrypto
import HReaderKit
import HReaderStore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader backup --out`, `backup --verify` and `restore`, run as the real binary over real SQLCipher
/// vaults: what comes back is what went in, table by table; nothing readable reaches the disk; any
/// changed byte is refused without leaving anything behind.
final class BackupTests: CLITestCase {
    static let token = "bearer-canary-7a1b2c3d"
    /// Known plaintext that the vault holds (names, a code, a comment, a token) and that no file may show.
    static let canaries = ["Zebulon", "Quixotic", "PLAINTEXT-CANARY", "Xenodochial", "SECRETCODE123", "Hidden-Directions",
                           "Timeline-Canary", token]

    var backupFile: URL { workDir.appendingPathComponent("out/health.hrbackup") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try FileManager.default.createDirectory(at: backupFile.deletingLastPathComponent(), withIntermediateDirectories: true)
    }

    // MARK: Fixtures

    /// A vault with something in every table: patients, entries with the user's own fields, a timeline
    /// item, applets, a FHIR server's source with its stored token and the patients' identities, and
    /// Apple Health samples. Returns the recovery key.
    @discardableResult
    func populatedVault(server: SampleServer? = nil) throws -> String {
        let recovery = try initVault()
        try ok(withPassword(["patients", "add", "--first", "Zebulon", "--last", "Quixotic", "--birth-date", "1971-03-04", "--as", "me"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Xenodochial fever",
                             "--code", "SNOMED-CT=SECRETCODE123", "--date", "2020-01-02"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Heart rate",
                             "--value", "72", "--unit", "/min", "--date", "2020-01-03T08:00:00Z"]))
        try ok(withPassword(["entries", "comment", "1", "--text", "PLAINTEXT-CANARY", "--directions", "Hidden-Directions"]))
        try ok(withPassword(["entries", "strike", "2"]))
        try ok(withPassword(["timeline", "add", "--patient", "1", "--key", "Levels", "--at", "2020-01-04T12:00:00Z", "pain=6",
                             "note=Timeline-Canary"]))
        try ok(withPassword(["applets", "add", "org.mitre.hreader.bmi", "--patient", "1"]))
        if let server {
            let tokenFile = try file("token", Self.token)
            try ok(withPassword(["import", "--server", server.fhir, "--all", "--token-file", tokenFile]))
        }
        let export = try generateAppleHealthExport(records: 400)
        try ok(withPassword(["import", "--apple-health", export.path, "--patient", "1"]))
        return recovery
    }

    func generateAppleHealthExport(records: Int) throws -> URL {
        let export = workDir.appendingPathComponent("export-\(records).xml")
        try HealthExportGenerator.write(export, records: records, days: 20)
        return export
    }

    /// Every table of a vault, row by row (each value `quote()`d, so types count), rows sorted; and
    /// the schema version. Read in this process through HReaderKit with the password.
    func dump(_ vault: URL, password: String = CLITestCase.password) throws -> [String: [String]] {
        let open = try VaultService(vault: Vault(root: vault)).open(.password(SecretBytes(utf8: password)))
        return try open.inDatabase { db in
            let tables = try db.query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") { $0.string(0)! }
            var out: [String: [String]] = ["user_version": ["\(try db.scalarInt("PRAGMA user_version") ?? -1)"]]
            for table in tables {
                let columns = try db.query("SELECT name FROM pragma_table_info(?)", [table]) { $0.string(0)! }
                let row = columns.map { "quote(\"\($0)\")" }.joined(separator: " || '|' || ")
                out[table] = try db.query("SELECT \(row) FROM \"\(table)\"") { $0.string(0) ?? "NULL" }.sorted()
            }
            return out
        }
    }

    /// The files under `directory` whose bytes show a canary or SQLite's plaintext header.
    func plaintextLeaks(under directories: [URL], secrets: [String]) -> [String] {
        var leaks: [String] = []
        for directory in directories {
            for (path, data) in filesWithContents(under: directory) {
                for secret in secrets where secret.encodedForms.contains(where: { data.containsBytes($0) }) {
                    leaks.append("\(path) shows \(secret)")
                }
                if data.containsBytes(Data("SQLite format 3".utf8)) { leaks.append("\(path) has a plaintext SQLite header") }
            }
        }
        return leaks
    }

    /// The names in `directory` other than `expected`.
    func strayEntries(in directory: URL, expected: Set<String>) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !expected.contains($0) }
    }

    @discardableResult
    func backup(_ extra: [String] = []) throws -> [String: Any] {
        try json(try ok(withPassword(["backup", "--out", backupFile.path, "--json"] + extra)))
    }

    // MARK: Round trip

    func testBackupThenRestoreGivesBackEveryTableEqual() throws {
        let server = try SampleServer(["--patients", "2"], workDir: workDir)
        defer { server.stop() }
        try populatedVault(server: server)
        let before = try dump(vaultDir)
        for table in ["patients", "entries", "samples", "sample_series", "sources", "timeline_items", "patient_applets",
                      "patient_identities", "audit_log"] {
            XCTAssertFalse(before[table]?.isEmpty ?? true, "the fixture leaves \(table) empty")
        }
        XCTAssertTrue(before["sources"]!.contains { $0.contains(Self.token) }, "the server's token is stored in the vault")
        XCTAssertTrue(before["entries"]!.contains { $0.contains("PLAINTEXT-CANARY") }, "the comment is stored")

        let written = try backup()
        XCTAssertEqual(written["backup"] as? String, backupFile.path)
        XCTAssertEqual(written["bytes"] as? Int, (try FileManager.default.attributesOfItem(atPath: backupFile.path)[.size] as? Int))
        XCTAssertEqual(written["schema_version"] as? Int, Migrator().latestVersion)
        var info = stat()
        XCTAssertEqual(stat(backupFile.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "the backup is private to the user")
        XCTAssertEqual(strayEntries(in: backupFile.deletingLastPathComponent(), expected: ["health.hrbackup"]), [], "no temporary file is left")
        XCTAssertEqual(try dump(vaultDir), before, "a backup does not write to the vault")

        let verified = try json(try ok(withPassword(["backup", "--verify", backupFile.path, "--json"])))
        XCTAssertEqual(verified["sound"] as? Bool, true)
        XCTAssertEqual(verified["vault_id"] as? String, written["vault_id"] as? String)

        let restoredDir = workDir.appendingPathComponent("restored/vault")
        let restored = try json(try ok(withPassword(["restore", backupFile.path, "--vault", restoredDir.path, "--json"])))
        XCTAssertEqual(restored["vault"] as? String, restoredDir.path)
        XCTAssertTrue(restored["replaced_vault_kept_at"] is NSNull)
        XCTAssertEqual(try dump(restoredDir), before, "every table comes back equal")
        XCTAssertEqual(try Data(contentsOf: restoredDir.appendingPathComponent("vault.key")),
                       try Data(contentsOf: vaultDir.appendingPathComponent("vault.key")), "the key file comes back byte for byte")
        XCTAssertEqual(stat(restoredDir.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        try ok(withPassword(["check", "--vault", restoredDir.path]))
        // What the user sees is the same too.
        let listed = try ok(withPassword(["entries", "list", "--patient", "1", "--vault", restoredDir.path]))
        XCTAssertTrue(listed.stdout.contains("PLAINTEXT-CANARY"))
        XCTAssertEqual(strayEntries(in: restoredDir.deletingLastPathComponent(), expected: ["vault"]), [], "no staging directory is left")
    }

    func testGlobalOptionsSessionsQuietAndLeadingOptionsWorkAsOnOtherCommands() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace"]))
        // An unlock session opens the vault for a backup, as for any command.
        let token = try XCTUnwrap(try ok(["unlock", "--password-file", passwordFile]).stdout
            .split(separator: "=", maxSplits: 1).last).trimmingCharacters(in: .whitespacesAndNewlines)
        let quiet = try ok(["backup", "--out", backupFile.path, "--quiet"], env: ["HREADER_SESSION": token])
        XCTAssertEqual(quiet.stdout + quiet.stderr, "", "--quiet prints nothing; a pipe gets no progress")
        let noisy = try ok(["--vault", vaultDir.path, "--password-file", passwordFile, "backup", "--out", backupFile.path])
        XCTAssertTrue(noisy.stderr.contains("Wrote a backup"), noisy.stderr)
        XCTAssertFalse(noisy.stderr.contains("\r"), "no progress line when stderr is not a terminal")
        // A backup is opened with a secret, never with a session (which belongs to a vault directory).
        let withSession = try hreader(["backup", "--verify", backupFile.path], env: ["HREADER_SESSION": token])
        XCTAssertEqual(withSession.status, 3, withSession.stderr)
        try ok(["--password-file", passwordFile, "backup", "--verify", backupFile.path, "--quiet"])
        let target = workDir.appendingPathComponent("second")
        try ok(["--vault", target.path, "--password-file", passwordFile, "restore", backupFile.path, "--quiet"])
        XCTAssertEqual(try json(try ok(withPassword(["patients", "list", "--json", "--vault", target.path])))["patients"].map { ($0 as! [Any]).count }, 1)
        // Usage errors.
        XCTAssertEqual(try hreader(["backup"]).status, 2)
        XCTAssertEqual(try hreader(["backup", "--out", backupFile.path, "--verify", backupFile.path]).status, 2)
        XCTAssertEqual(try hreader(withPassword(["backup", "--verify", workDir.appendingPathComponent("missing").path])).status, 2)
    }

    func testRestoredVaultAndBackupOpenWithTheRecoveryKey() throws {
        let recovery = try populatedVault()
        let before = try dump(vaultDir)
        try backup()
        let recoveryFile = try file("recovery", recovery + "\n")
        try ok(["backup", "--verify", backupFile.path, "--recovery-key-file", recoveryFile])
        let target = workDir.appendingPathComponent("by-recovery")
        try ok(["restore", backupFile.path, "--vault", target.path, "--recovery-key-file", recoveryFile])
        XCTAssertEqual(try dump(target), before)
        // The restored vault keeps every slot: the recovery key sets a new password there.
        try ok(["recover", "--vault", target.path, "--recovery-key-file", recoveryFile, "--new-password-file", newPasswordFile])
        XCTAssertEqual(try dump(target, password: Self.newPassword), before)
        let wrongKey = try file("wrong-recovery", "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH\n")
        XCTAssertEqual(try hreader(["backup", "--verify", backupFile.path, "--recovery-key-file", wrongKey]).status, 3)
    }

    // MARK: Secrecy

    func testNoPlaintextInTheBackupOrAnyFileWrittenDuringBackupAndRestore() throws {
        let server = try SampleServer(["--patients", "2"], workDir: workDir)
        defer { server.stop() }
        let recovery = try populatedVault(server: server)
        // A bigger vault, so that the scans below catch the temporary files while they exist.
        let export = try generateAppleHealthExport(records: 30_000)
        try ok(withPassword(["import", "--apple-health", export.path, "--patient", "1"]))
        try FileManager.default.removeItem(at: export)
        let secrets = Self.canaries + [Self.password, recovery, recovery.replacingOccurrences(of: "-", with: "")]
        let restoredDir = workDir.appendingPathComponent("restored/vault")
        let watched = [backupFile.deletingLastPathComponent(), restoredDir.deletingLastPathComponent(), childTemp]
        try FileManager.default.createDirectory(at: restoredDir.deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertEqual(plaintextLeaks(under: [vaultDir], secrets: secrets), [])

        // While each command runs: whenever a new temporary file or directory appears (the snapshot, the
        // backup being written, verify's copy, restore's staging vault), the process is stopped, every
        // file is scanned, and it goes on.
        var caught: [String] = []
        for command in [withPassword(["backup", "--out", backupFile.path]),
                        withPassword(["backup", "--verify", backupFile.path]),
                        withPassword(["restore", backupFile.path, "--vault", restoredDir.path])] {
            let running = try start(command)
            let pid = running.process.processIdentifier
            var seen = Set<String>()
            while running.process.isRunning {
                let names = watched.flatMap { directory in
                    ((try? FileManager.default.subpathsOfDirectory(atPath: directory.path)) ?? []).map { directory.path + "/" + $0 }
                }.filter { $0.contains(".tmp-") || $0.contains("hreader-verify-") || $0.contains(".restore-") }
                let fresh = Set(names).subtracting(seen)
                guard !fresh.isEmpty else { usleep(500); continue }
                kill(pid, SIGSTOP)
                seen.formUnion(fresh)
                caught += fresh.map { URL(fileURLWithPath: $0).lastPathComponent }
                XCTAssertEqual(plaintextLeaks(under: watched, secrets: secrets), [], "while \(command[0]) \(command[1]) ran")
                kill(pid, SIGCONT)
            }
            let result = running.finish()
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        print("temporary files scanned while they existed: \(caught.sorted())")
        XCTAssertFalse(caught.isEmpty, "the scans saw the temporary files")
        XCTAssertEqual(plaintextLeaks(under: watched + [vaultDir], secrets: secrets), [])
        XCTAssertTrue(filesWithContents(under: backupFile.deletingLastPathComponent()).count == 1)
        XCTAssertEqual(try dump(restoredDir), try dump(vaultDir), "and the data is really in there")
    }

    // MARK: Consistency under a concurrent writer

    func testBackupTakenWhileAnImportWritesIsAConsistentSnapshot() throws {
        // An import from a slow server writes one transaction per patient; backups taken meanwhile must
        // each hold whole patients only, and pass every check.
        let server = try SampleServer(["--patients", "8", "--delay-ms", "40"], workDir: workDir)
        defer { server.stop() }
        try initVault()
        let importing = try start(withPassword(["import", "--server", server.fhir, "--all"]))
        var backups: [URL] = []
        var duringImport = 0
        while importing.process.isRunning || backups.count < 2 {
            let file = workDir.appendingPathComponent("out/during-\(backups.count).hrbackup")
            let result = try hreader(withPassword(["backup", "--out", file.path, "--quiet"]))
            XCTAssertEqual(result.status, 0, result.stderr)
            if importing.process.isRunning { duringImport += 1 }
            backups.append(file)
            if backups.count > 60 { break }
        }
        let imported = importing.finish()
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertGreaterThanOrEqual(duringImport, 2, "backups were taken while the import was writing")

        let complete = try entryCountsByPatient(vaultDir)
        XCTAssertEqual(complete.count, 8)
        var partial = 0
        for (index, file) in backups.enumerated() {
            let target = workDir.appendingPathComponent("restored-\(index)")
            try ok(withPassword(["restore", file.path, "--vault", target.path, "--quiet"]))
            try ok(withPassword(["check", "--vault", target.path]))
            let counts = try entryCountsByPatient(target)
            for (patient, count) in counts {
                XCTAssertEqual(count, complete[patient], "backup \(index) holds part of \(patient)'s import")
            }
            if counts.count < complete.count { partial += 1 }
        }
        print("\(backups.count) backups, \(duringImport) during the import, \(partial) taken before its end")
    }

    /// Entries per patient (by name), through the CLI.
    func entryCountsByPatient(_ vault: URL) throws -> [String: Int] {
        let patients = try json(try ok(withPassword(["patients", "list", "--json", "--vault", vault.path])))["patients"] as? [[String: Any]] ?? []
        var counts: [String: Int] = [:]
        for patient in patients {
            let entries = try json(try ok(withPassword(["entries", "list", "--patient", "\(patient["id"]!)", "--json", "--vault", vault.path])))["entries"] as? [Any] ?? []
            counts["\(patient["first_name"] ?? "") \(patient["last_name"] ?? "")"] = entries.count
        }
        return counts
    }

    // MARK: Damage

    /// The byte offsets of a backup's regions: header JSON, key file, database, MAC.
    func regions(of data: Data) -> (header: Range<Int>, keyFile: Range<Int>, database: Range<Int>, mac: Range<Int>) {
        let headerLength = data[12..<16].reduce(0) { $0 << 8 | Int($1) }
        let header = try! JSONSerialization.jsonObject(with: data[16..<(16 + headerLength)]) as! [String: Any]
        let keyFileStart = 16 + headerLength, keyFileBytes = header["key_file_bytes"] as! Int
        let databaseStart = keyFileStart + keyFileBytes, databaseBytes = header["database_bytes"] as! Int
        return (16..<keyFileStart, keyFileStart..<databaseStart, databaseStart..<(databaseStart + databaseBytes),
                (databaseStart + databaseBytes)..<data.count)
    }

    /// Restore and verify of `damaged` both exit 7, and leave no vault, staging directory or temporary file.
    func assertRefusedAsDamaged(_ damaged: Data, _ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let path = workDir.appendingPathComponent("damaged.hrbackup")
        try damaged.write(to: path)
        let parent = workDir.appendingPathComponent("targets")
        try? FileManager.default.removeItem(at: parent)
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let restore = try hreader(withPassword(["restore", path.path, "--vault", parent.appendingPathComponent("vault").path]))
        XCTAssertEqual(restore.status, 7, "restore of a backup with \(what): \(restore.stderr)", file: file, line: line)
        XCTAssertEqual(restore.stderr.split(separator: "\n").count, 1, "one line: \(restore.stderr)", file: file, line: line)
        XCTAssertEqual(strayEntries(in: parent, expected: []), [], "restore of a backup with \(what) left something", file: file, line: line)
        let verify = try hreader(withPassword(["backup", "--verify", path.path]))
        XCTAssertEqual(verify.status, 7, "verify of a backup with \(what): \(verify.stderr)", file: file, line: line)
        XCTAssertEqual(strayEntries(in: childTemp, expected: []), [], "verify left a temporary file", file: file, line: line)
    }

    func testAFlippedByteAnywhereInABackupExits7AndRestoresNothing() throws {
        try populatedVault()
        try backup()
        let original = try Data(contentsOf: backupFile)
        let r = regions(of: original)
        let positions: [(String, Int)] = [
            ("the magic", 0), ("the format version", 11), ("the header length", 15), ("the header's first byte", r.header.lowerBound),
            ("the header", (r.header.lowerBound + r.header.upperBound) / 2), ("the key file's first byte", r.keyFile.lowerBound),
            ("the key file", (r.keyFile.lowerBound + r.keyFile.upperBound) / 2), ("the key file's last byte", r.keyFile.upperBound - 1),
            ("the database's salt", r.database.lowerBound), ("the database's first page", r.database.lowerBound + 100),
            ("a database page", (r.database.lowerBound + r.database.upperBound) / 2), ("the database's last byte", r.database.upperBound - 1),
            ("the MAC", r.mac.lowerBound), ("the last byte", original.count - 1),
        ]
        XCTAssertEqual(r.mac.count, 32)
        for (what, offset) in positions {
            var damaged = original
            damaged[offset] ^= 0x01
            try assertRefusedAsDamaged(damaged, "a flipped bit in \(what) (offset \(offset))")
        }
        // A byte of the key file's white space that stays valid JSON (newline → tab) passes the key file's
        // own checksum, which covers its canonical form; the backup's MAC still catches it.
        let keyFile = original[r.keyFile]
        if let newline = keyFile.firstIndex(of: 0x0a) {
            var damaged = original
            damaged[newline] = 0x09
            try assertRefusedAsDamaged(damaged, "a newline of the key file turned into a tab")
        }
        // And the untouched backup still restores.
        try ok(withPassword(["restore", backupFile.path, "--vault", workDir.appendingPathComponent("fine").path]))
    }

    func testATruncatedOrExtendedBackupExits7AndRestoresNothing() throws {
        try populatedVault()
        try backup()
        let original = try Data(contentsOf: backupFile)
        let r = regions(of: original)
        for length in [0, 7, 15, r.header.lowerBound + 5, r.keyFile.lowerBound + 10, r.database.lowerBound + 4096,
                       r.database.upperBound, original.count - 1] {
            try assertRefusedAsDamaged(original.prefix(length), "only its first \(length) of \(original.count) bytes")
        }
        try assertRefusedAsDamaged(original + Data([0]), "a byte appended")
        // A whole page cut out of the database, the header's length adjusted: the MAC still catches it.
        var header = try JSONSerialization.jsonObject(with: original[r.header]) as! [String: Any]
        header["database_bytes"] = (header["database_bytes"] as! Int) - 4096
        let json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        var cut = original.prefix(12) + Data([UInt8(json.count >> 24), UInt8(json.count >> 16 & 0xff), UInt8(json.count >> 8 & 0xff), UInt8(json.count & 0xff)])
        cut += json + original[r.keyFile] + original[r.database.lowerBound..<(r.database.upperBound - 4096)] + original[r.mac]
        try assertRefusedAsDamaged(cut, "its last database page cut out")
    }

    /// A damaged page under a valid MAC (as only someone holding the data key could make, or a bug) is
    /// still refused: restore checks every page's SQLCipher HMAC before the target takes its name, and
    /// removes the staging directory and the parent directories it created.
    func testADamagedPageUnderAValidMACIsRefusedByThePageCheck() throws {
        try populatedVault()
        try backup()
        let original = try Data(contentsOf: backupFile)
        let r = regions(of: original)
        let keyFile = try KeyFile.decode(Array(try Data(contentsOf: vaultDir.appendingPathComponent("vault.key"))))
        let dataKey = try keyFile.unlock(kind: .password, secret: SecretBytes(utf8: Self.password)).dataKey

        /// The MAC as docs/formats.md defines it, computed here from the primitives.
        func resealed(_ data: Data) throws -> Data {
            let headerLength = data[12..<16].reduce(0) { $0 << 8 | Int($1) }
            let header = try JSONSerialization.jsonObject(with: data[16..<(16 + headerLength)]) as! [String: Any]
            let salt = Array(Data(base64Encoded: header["salt"] as! String)!)
            let macKey = try HKDF.sha256(key: dataKey, salt: salt, info: Array("hreader-backup|1|mac|\(header["vault_id"]!)".utf8))
            let body = Array(data.prefix(data.count - 32))
            return Data(body + (try HMACSHA256.authenticate(body, key: macKey)))
        }
        XCTAssertEqual(try resealed(original), original, "the MAC is computed as documented")

        var damaged = original
        damaged[r.database.lowerBound + 3 * 4096 + 700] ^= 0x01
        let path = workDir.appendingPathComponent("resealed.hrbackup")
        try resealed(damaged).write(to: path)
        let parent = workDir.appendingPathComponent("targets")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let restore = try hreader(withPassword(["restore", path.path, "--vault", parent.appendingPathComponent("new/deeper/vault").path]))
        XCTAssertEqual(restore.status, 7, restore.stderr)
        XCTAssertTrue(restore.stderr.contains("integrity check"), restore.stderr)
        XCTAssertEqual(strayEntries(in: parent, expected: []), [], "the staging directory and the created parents are gone")
        let verify = try hreader(withPassword(["backup", "--verify", path.path]))
        XCTAssertEqual(verify.status, 7, verify.stderr)
        XCTAssertEqual(strayEntries(in: childTemp, expected: []), [])

        // A header that lies about the schema, resealed, is refused too.
        var header = try JSONSerialization.jsonObject(with: original[r.header]) as! [String: Any]
        header["schema_version"] = (header["schema_version"] as! Int) + 1
        let json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        let length = json.count
        var lying = original.prefix(12) + Data([UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)])
        lying += json + original[r.keyFile.lowerBound...]
        try resealed(lying).write(to: path)
        let lied = try hreader(withPassword(["restore", path.path, "--vault", parent.appendingPathComponent("vault").path]))
        XCTAssertEqual(lied.status, 7, lied.stderr)
        XCTAssertEqual(strayEntries(in: parent, expected: []), [])
    }

    func testAWrongPasswordExits3AndRestoresNothing() throws {
        try populatedVault()
        try backup()
        let parent = workDir.appendingPathComponent("targets")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let target = parent.appendingPathComponent("vault")
        let restore = try hreader(["restore", backupFile.path, "--vault", target.path, "--password-file", newPasswordFile])
        XCTAssertEqual(restore.status, 3, restore.stderr)
        XCTAssertEqual(strayEntries(in: parent, expected: []), [], "nothing is written")
        let verify = try hreader(["backup", "--verify", backupFile.path, "--password-file", newPasswordFile])
        XCTAssertEqual(verify.status, 3, verify.stderr)
        // No password at all and no terminal: a clear error, not a hang.
        let none = try hreader(["restore", backupFile.path, "--vault", target.path])
        XCTAssertEqual(none.status, 3, none.stderr)
    }

    // MARK: Targets

    func testRestoreRefusesAnExistingVaultWithoutReplaceAndKeepsTheReplacedOneAside() throws {
        try populatedVault()
        let backedUp = try dump(vaultDir)
        try backup()
        // The vault moves on after the backup.
        try ok(withPassword(["patients", "add", "--first", "After", "--last", "Backup"]))
        let current = try dump(vaultDir)
        let files = snapshot()

        let refused = try hreader(withPassword(["restore", backupFile.path]))
        XCTAssertEqual(refused.status, 4, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--replace"), refused.stderr)
        XCTAssertEqual(snapshot(), files, "the vault is untouched")

        let replaced = try json(try ok(withPassword(["restore", backupFile.path, "--replace", "--json"])))
        XCTAssertEqual(try dump(vaultDir), backedUp, "the backup's content is in place")
        let kept = try XCTUnwrap(replaced["replaced_vault_kept_at"] as? String)
        XCTAssertTrue(URL(fileURLWithPath: kept).lastPathComponent.hasPrefix("vault.replaced-"), kept)
        XCTAssertEqual(try dump(URL(fileURLWithPath: kept)), current, "the replaced vault is kept aside, whole")
        XCTAssertEqual(strayEntries(in: workDir, expected: []).filter { $0.hasPrefix(".vault") }, [], "no staging directory is left")

        // A directory with something else in it is never taken, --replace or not; an empty one is.
        let other = workDir.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: other.appendingPathComponent("notes.txt"))
        for extra in [[], ["--replace"]] {
            XCTAssertEqual(try hreader(withPassword(["restore", backupFile.path, "--vault", other.path] + extra)).status, 4)
        }
        XCTAssertEqual(try String(contentsOf: other.appendingPathComponent("notes.txt"), encoding: .utf8), "mine")
        let empty = workDir.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        try ok(withPassword(["restore", backupFile.path, "--vault", empty.path]))
        XCTAssertEqual(try dump(empty), backedUp)
    }

    func testBackupReplacesOnlyAnOlderBackupAndNeverWritesIntoTheVault() throws {
        try populatedVault()
        try backup()
        try ok(withPassword(["patients", "add", "--first", "Second", "--last", "Backup"]))
        try backup()
        let target = workDir.appendingPathComponent("latest")
        try ok(withPassword(["restore", backupFile.path, "--vault", target.path]))
        XCTAssertEqual(try dump(target), try dump(vaultDir), "the older backup was replaced")

        let notes = workDir.appendingPathComponent("out/notes.txt")
        try Data("keep me".utf8).write(to: notes)
        let refused = try hreader(withPassword(["backup", "--out", notes.path]))
        XCTAssertEqual(refused.status, 1, refused.stderr)
        XCTAssertEqual(try String(contentsOf: notes, encoding: .utf8), "keep me")
        XCTAssertEqual(try hreader(withPassword(["backup", "--out", vaultDir.appendingPathComponent("inside.hrbackup").path])).status, 2)
        XCTAssertEqual(try hreader(withPassword(["backup", "--out", workDir.appendingPathComponent("nowhere/x.hrbackup").path])).status, 2)
    }
}
