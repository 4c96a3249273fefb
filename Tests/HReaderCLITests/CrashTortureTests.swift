import Foundation
import HReaderCrypto
import HReaderStore
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Crash-point torture: the real `hreader` is killed with SIGKILL at points spread over the time of a
/// command (an import from a server, an Apple Health import, a sync, `passwd`, `key add`, `rekey`,
/// `backup`, `restore --replace`), and every interrupted vault must open with the password, pass
/// `hreader check`, and, once the command is run again, hold exactly what an uninterrupted run gives.
///
/// `make test` runs 2 points per command (16 in all); `make torture` sets HREADER_TORTURE_POINTS=100.
/// Each summary line ("torture import-server: 100 points, 93 killed mid-run, 100 survived") is printed.
final class CrashTortureTests: CLITestCase {
    static var points: Int { Int(ProcessInfo.processInfo.environment["HREADER_TORTURE_POINTS"] ?? "") ?? 2 }

    /// A command to interrupt on a copy of a prepared vault.
    struct Scenario {
        let name: String
        /// The KDF of the vault (cheap, unless the command's own key derivation is what a kill should hit).
        var kdf: [String] = CLITestCase.cheapKDF
        /// Run on the prepared vault before the copies are made (data to sync, a patient to import into).
        var prepare: (_ vault: String) throws -> Void = { _ in }
        /// The command, given the vault directory.
        let command: (_ vault: String) -> [String]
        /// After a kill: what makes the vault whole again (by default, the command once more).
        var converge: ((_ vault: String) throws -> Void)?
        /// What an uninterrupted run and a converged one must agree on.
        let fingerprint: (_ vault: String) throws -> String
        /// Looks at the killed vault before anything opens it (to report where the kills landed).
        var observe: ((_ vault: String) -> Void)?
    }

    func torture(_ scenario: Scenario) throws {
        let base = workDir.appendingPathComponent("\(scenario.name)-base").path
        try ok(["init", "--vault", base, "--new-password-file", passwordFile] + scenario.kdf)
        try scenario.prepare(base)

        // The uninterrupted run: the fingerprint to reach, and the time over which to spread the kills.
        let reference = try copy(base, as: "\(scenario.name)-reference")
        let started = Date()
        try ok(scenario.command(reference))
        let duration = max(Date().timeIntervalSince(started), 0.05)
        let expected = try scenario.fingerprint(reference)

        var killed = 0, survived = 0
        for point in 1...Self.points {
            let vault = try copy(base, as: "\(scenario.name)-\(point)")
            let running = try start(scenario.command(vault))
            usleep(useconds_t(duration * Double(point) / Double(Self.points + 1) * 1_000_000))
            kill(running.process.processIdentifier, SIGKILL)
            if running.finish().signaled { killed += 1 }
            scenario.observe?(vault)

            // The old password opens it, or (a passwd that got that far) the new one.
            var check = try hreader(["check", "--vault", vault, "--password-file", passwordFile])
            if check.status == 3 { check = try hreader(["check", "--vault", vault, "--password-file", newPasswordFile]) }
            XCTAssertEqual(check.status, 0, "\(scenario.name) killed at point \(point): check failed: \(check.stderr)")
            if let converge = scenario.converge { try converge(vault) } else { try ok(scenario.command(vault)) }
            let fingerprint = try scenario.fingerprint(vault)
            XCTAssertEqual(fingerprint, expected, "\(scenario.name) killed at point \(point) did not converge")
            if check.status == 0, fingerprint == expected { survived += 1 }
            try? FileManager.default.removeItem(atPath: vault)
        }
        print("torture \(scenario.name): \(Self.points) points, \(killed) killed mid-run, \(survived) survived")
    }

    func copy(_ vault: String, as name: String) throws -> String {
        let target = workDir.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: vault, toPath: target)
        return target
    }

    /// Every patient (by name) with the sorted content of their entries.
    func recordFingerprint(_ vault: String) throws -> String {
        let patients = try json(try ok(withPassword(["patients", "list", "--json", "--vault", vault])))["patients"] as! [[String: Any]]
        var lines: [String] = []
        for patient in patients {
            let entries = try json(try ok(withPassword(["entries", "list", "--patient", "\(patient["id"]!)", "--json", "--vault", vault])))["entries"] as! [[String: Any]]
            let content = entries.map { e in ["remote_id", "type", "description", "date", "start", "value"].map { "\(e[$0] ?? "-")" }.joined(separator: "|") }
            lines.append("\(patient["first_name"]!) \(patient["last_name"]!): " + content.sorted().joined(separator: "; "))
        }
        return lines.sorted().joined(separator: "\n")
    }

    func testImportsAndSyncConvergeAfterAKillAnywhere() throws {
        let server = try SampleServer(["--patients", "4", "--delay-ms", "60"], workDir: workDir)
        defer { server.stop() }
        try torture(Scenario(name: "import-server", command: { ["import", "--server", server.fhir, "--all", "--vault", $0, "--password-file", self.passwordFile] },
                             fingerprint: recordFingerprint))
        try torture(Scenario(name: "sync",
                             prepare: { try self.ok(self.withPassword(["import", "--server", server.fhir, "--all", "--vault", $0])) },
                             command: { ["sync", "--vault", $0, "--password-file", self.passwordFile] }, fingerprint: recordFingerprint))

        let export = workDir.appendingPathComponent("export.zip")
        try HealthExportGenerator.write(export, records: 20000, days: 120)
        try torture(Scenario(name: "import-apple-health",
                             command: { ["import", "--apple-health", export.path, "--as", "me", "--vault", $0, "--password-file", self.passwordFile] },
                             fingerprint: { vault in
                                 // 20k entries: their number and the patients (each sample is idempotent by its own
                                 // hash, which AppleHealthTests checks entry by entry).
                                 let counts = try self.json(try self.ok(self.withPassword(["status", "--json", "--vault", vault])))["counts"] as? [String: Int]
                                 return "patients \(counts?["patients"] ?? -1), entries \(counts?["entries"] ?? -1)"
                             }))
    }

    /// `documents add` of a PDF with a text layer killed anywhere (pdftotext reading the file beside the
    /// storing, the one commit of the bytes and their text): the vault checks out and holds the document
    /// whole with its text, or not at all; adding it once more (when it is not there) gives the same.
    func testADocumentAddKilledAnywhereLeavesTheDocumentWholeOrAbsent() throws {
        let lines = (1...200).map { n in (1...30).map { "Page \(n) line \($0): the Heatherwick clinic letter" } }
        let pdf = workDir.appendingPathComponent("long.pdf")
        try DocumentTextExtractionTests.textPDF(lines).write(to: pdf)
        func documents(_ vault: String) throws -> [[String: Any]] {
            try json(try ok(withPassword(["documents", "list", "--json", "--vault", vault])))["documents"] as? [[String: Any]] ?? []
        }
        try torture(Scenario(name: "documents-add",
                             prepare: { try self.ok(self.withPassword(["patients", "add", "--first", "Ada", "--last", "Byron", "--vault", $0])) },
                             command: { ["documents", "add", pdf.path, "--patient", "1", "--vault", $0, "--password-file", self.passwordFile] },
                             converge: { vault in
                                 let found = try documents(vault)
                                 // Whole, or absent: never bytes without their text, nor a text waiting for them.
                                 XCTAssertTrue(found.allSatisfy { $0["text_method"] as? String == "pdf-text" && $0["sha256"] is String }, "\(found)")
                                 if found.isEmpty { try self.ok(self.withPassword(["documents", "add", pdf.path, "--patient", "1", "--vault", vault])) }
                             },
                             fingerprint: { vault in
                                 let found = try documents(vault)
                                 let hits = try self.json(try self.ok(self.withPassword(["search", "heatherwick", "--json", "--vault", vault])))["hits"] as? [Any]
                                 return found.map { "\($0["sha256"] ?? "-") \($0["text_method"] ?? "-")" }.joined(separator: ", ") + "; hits \(hits?.count ?? -1)"
                             }))
    }

    /// `rekey` (with a password change) killed anywhere: in the key derivations, between its two
    /// key-file writes, in the database export or around the rename. Every vault opens with the old or
    /// the new password, passes check (which rolls a pending rekey forward), and holds the same data.
    func testRekeyConvergesAfterAKillAnywhere() throws {
        let export = workDir.appendingPathComponent("rekey-export.zip")
        // A database large enough for the export and the rename to take a good part of the run.
        try HealthExportGenerator.write(export, records: 30000, days: 120)
        nonisolated(unsafe) var states: [String: Int] = [:]
        nonisolated(unsafe) var baseKeyFile = ""
        let opensWith = { (vault: String, password: String) throws -> Bool in
            try self.hreader(["patients", "list", "--vault", vault, "--password-file", password]).succeeded
        }
        try torture(Scenario(
            name: "rekey",
            prepare: { vault in
                try self.ok(["import", "--apple-health", export.path, "--as", "me", "--vault", vault, "--password-file", self.passwordFile])
                try self.ok(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Torture canary", "--date", "2020-01-02",
                             "--vault", vault, "--password-file", self.passwordFile])
                baseKeyFile = try String(contentsOfFile: vault + "/vault.key", encoding: .utf8)
            },
            command: { ["rekey", "--vault", $0, "--password-file", self.passwordFile, "--new-password-file", self.newPasswordFile] },
            converge: { vault in
                // Killed before its first key-file write: the old password still opens it; run it again.
                if try opensWith(vault, self.passwordFile) {
                    try self.ok(["rekey", "--vault", vault, "--password-file", self.passwordFile, "--new-password-file", self.newPasswordFile])
                }
            },
            fingerprint: { vault in
                let status = try self.json(try self.ok(["status", "--json", "--vault", vault, "--password-file", self.newPasswordFile]))
                let counts = status["counts"] as? [String: Int]
                let keyFile = try String(contentsOfFile: vault + "/vault.key", encoding: .utf8)
                let leftovers = try FileManager.default.contentsOfDirectory(atPath: vault).filter { $0.contains(".tmp-") || $0.hasPrefix("vault.db.rekey") }
                return "old \(try opensWith(vault, self.passwordFile)), new \(try opensWith(vault, self.newPasswordFile)), "
                    + "patients \(counts?["patients"] ?? -1), entries \(counts?["entries"] ?? -1), "
                    + "pending \(keyFile.contains("\"rekey\"")), leftovers \(leftovers)"
            },
            observe: { vault in
                // Where the kill landed: before step 1, between 1 and 3 (the database renamed or not), or after.
                let text = (try? String(contentsOfFile: vault + "/vault.key", encoding: .utf8)) ?? ""
                var state = text == baseKeyFile ? "before step 1" : text.contains("\"rekey\"") ? "pending" : "after step 3"
                if state == "pending", let keyFile = try? KeyFile.decode(Array(text.utf8)),
                   let (newKey, _) = try? keyFile.unlock(kind: .password, secret: SecretBytes(utf8: Self.newPassword)) {
                    // Opening here does what any open would do first (journal or WAL recovery), nothing more.
                    let underNew = (try? Database.open(path: vault + "/vault.db", key: newKey)) != nil
                    state += underNew ? ", vault.db renamed (under the new key)" : ", vault.db still under the old key"
                }
                states[state, default: 0] += 1
            }))
        print("torture rekey: where the kills landed: \(states.sorted { $0.key < $1.key })")
        XCTAssertEqual(states.values.reduce(0, +), Self.points)
    }

    func testBackupAndRestoreSurviveAKillAnywhere() throws {
        let export = workDir.appendingPathComponent("export.xml")
        try HealthExportGenerator.write(export, records: 20000, days: 60)
        let fill: (String) throws -> Void = { vault in
            try self.ok(self.withPassword(["patients", "add", "--first", "Torture", "--last", "Backup", "--vault", vault]))
            try self.ok(self.withPassword(["import", "--apple-health", export.path, "--patient", "1", "--vault", vault, "--quiet"]))
        }
        let counts: (String) throws -> String = { vault in
            let counts = try self.json(try self.ok(self.withPassword(["status", "--json", "--vault", vault])))["counts"] as? [String: Int]
            return "patients \(counts?["patients"] ?? -1), entries \(counts?["entries"] ?? -1)"
        }

        // backup --out, killed: the vault stays whole, and at the backup's name there is either nothing
        // or a whole backup, never a part of one.
        let backupOf: (String) -> String = { $0 + ".hrbackup" }
        try torture(Scenario(
            name: "backup", prepare: fill,
            command: { ["backup", "--out", backupOf($0), "--vault", $0, "--password-file", self.passwordFile, "--quiet"] },
            converge: { vault in
                if FileManager.default.fileExists(atPath: backupOf(vault)) {
                    let verify = try self.hreader(self.withPassword(["backup", "--verify", backupOf(vault)]))
                    XCTAssertEqual(verify.status, 0, "a killed backup left a file at its name that does not verify: \(verify.stderr)")
                }
                try self.ok(self.withPassword(["backup", "--out", backupOf(vault), "--vault", vault, "--quiet"]))
            },
            fingerprint: { vault in
                let restored = vault + "-restored"
                try? FileManager.default.removeItem(atPath: restored)
                try self.ok(self.withPassword(["restore", backupOf(vault), "--vault", restored, "--quiet"]))
                defer { try? FileManager.default.removeItem(atPath: restored) }
                return try counts(restored)
            }))

        // restore --replace, killed: the target is the old vault or the restored one, whole either way.
        let backup = workDir.appendingPathComponent("source.hrbackup").path
        try torture(Scenario(
            name: "restore-replace",
            prepare: { vault in
                try fill(vault)
                try self.ok(self.withPassword(["backup", "--out", backup, "--vault", vault, "--quiet"]))
                try self.ok(self.withPassword(["patients", "add", "--first", "After", "--last", "Backup", "--vault", vault]))
            },
            command: { ["restore", backup, "--replace", "--vault", $0, "--password-file", self.passwordFile, "--quiet"] },
            fingerprint: counts))
    }

    func testKeyFileChangesConvergeAfterAKillAnywhere() throws {
        // PBKDF2 at 150k iterations: long enough for the kills to land inside the key derivation and the write.
        let slow = ["--kdf", "pbkdf2", "--pbkdf2-iterations", "150000"]
        try torture(Scenario(
            name: "passwd", kdf: slow,
            command: { ["passwd", "--vault", $0, "--password-file", self.passwordFile, "--new-password-file", self.newPasswordFile] },
            converge: { vault in
                // Either password may open it; the one that does not is the run to finish.
                if try self.hreader(["patients", "list", "--vault", vault, "--password-file", self.passwordFile]).succeeded {
                    try self.ok(["passwd", "--vault", vault, "--password-file", self.passwordFile, "--new-password-file", self.newPasswordFile])
                }
            },
            fingerprint: { vault in
                let old = try self.hreader(["patients", "list", "--vault", vault, "--password-file", self.passwordFile]).status
                let new = try self.hreader(["patients", "list", "--vault", vault, "--password-file", self.newPasswordFile]).status
                return "old \(old), new \(new)"
            }))
        try torture(Scenario(
            name: "key-add", kdf: slow,
            command: { ["key", "add", "--kind", "password", "--label", "laptop", "--vault", $0, "--password-file", self.passwordFile,
                        "--new-password-file", self.newPasswordFile] },
            converge: { vault in
                let slots = try self.json(try self.ok(["key", "list", "--json", "--vault", vault]))["key_slots"] as? [[String: Any]] ?? []
                if !slots.contains(where: { $0["label"] as? String == "laptop" }) {
                    try self.ok(["key", "add", "--kind", "password", "--label", "laptop", "--vault", vault, "--password-file", self.passwordFile,
                                 "--new-password-file", self.newPasswordFile])
                }
            },
            fingerprint: { vault in
                let slots = try self.json(try self.ok(["key", "list", "--json", "--vault", vault]))["key_slots"] as? [[String: Any]] ?? []
                let labels = slots.compactMap { $0["label"] as? String }.sorted()
                let new = try self.hreader(["patients", "list", "--vault", vault, "--password-file", self.newPasswordFile]).status
                return "\(labels) new password \(new)"
            }))
    }
}
