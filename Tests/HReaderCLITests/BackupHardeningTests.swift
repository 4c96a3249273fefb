import Foundation
import HReaderCrypto
import HReaderKit
import HReaderStore
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The backup findings of the security review (issue 23, M1, M2, L1, L2), each through the real
/// binary as a user would meet it.
extension BackupTests {
    // MARK: Helpers

    /// `original` with its key file replaced by `keyFile` (the header's `key_file_bytes` and length
    /// adjusted; the MAC left as it was, so the file is no longer authentic).
    func backup(_ original: Data, withKeyFile keyFile: Data) throws -> Data {
        let r = regions(of: original)
        var header = try JSONSerialization.jsonObject(with: original[r.header]) as! [String: Any]
        header["key_file_bytes"] = keyFile.count
        let json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
        let n = json.count
        return original.prefix(12) + Data([UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)])
            + json + keyFile + original[r.database] + original[r.mac]
    }

    /// A key file as JSON `object` with its checksum computed as docs/formats.md defines it (SHA-256
    /// over the canonical form: sorted keys, no white space, `/` not escaped, no `checksum` member).
    func keyFileWithChecksum(_ object: [String: Any]) throws -> Data {
        var body = object
        body["checksum"] = nil
        let canonical = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes])
        body["checksum"] = "sha256:" + SHA256.hash(Array(canonical)).map { String(format: "%02x", $0) }.joined()
        return try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted])
    }

    /// The key file `keyFile` with its first password slot repeated until there are `count` slots,
    /// each with its own id and the KDF `kdf` (JSON members), checksum recomputed.
    func keyFile(_ keyFile: Data, repeatingItsPasswordSlot count: Int, kdf: [String: Any]) throws -> Data {
        var object = try JSONSerialization.jsonObject(with: keyFile) as! [String: Any]
        let slot = (object["slots"] as! [[String: Any]]).first { $0["kind"] as? String == "password" }!
        object["slots"] = (0..<count).map { _ -> [String: Any] in
            var copy = slot
            copy["id"] = UUID().uuidString.lowercased()
            var k = kdf
            k["salt"] = (slot["kdf"] as! [String: Any])["salt"]
            copy["kdf"] = k
            return copy
        }
        return try keyFileWithChecksum(object)
    }

    // MARK: M1: every byte used is a byte authenticated

    /// M1: restore read `vault.key` from the backup at open, then MACed the file's bytes as they were
    /// later, and installed the copy it read first. Here the file holds, at open, the genuine backup
    /// with its recovery slot removed (the key file re-checksummed and padded to the same length), and
    /// the password command puts the genuine bytes back before it prints the password: the MAC then
    /// passed over bytes the restore did not use, and the restored vault lacked its recovery slot.
    func testABackupChangedWhileThePasswordIsReadRestoresNothing() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Zebulon", "--last", "Quixotic"]))
        try backup()
        let genuine = try Data(contentsOf: backupFile)
        let r = regions(of: genuine)
        var keyFile = try KeyFile.decode(Array(genuine[r.keyFile]))
        let recovery = try XCTUnwrap(keyFile.slots.first { $0.kind == .recovery })
        try keyFile.removeSlot(id: recovery.id)
        var stripped = try keyFile.encoded()
        XCTAssertLessThan(stripped.count, r.keyFile.count)
        stripped += [UInt8](repeating: 0x20, count: r.keyFile.count - stripped.count)   // JSON white space
        XCTAssertNoThrow(try KeyFile.decode(stripped), "the stripped key file is a valid key file")
        var swapped = genuine
        swapped.replaceSubrange(r.keyFile, with: stripped)
        XCTAssertEqual(swapped.count, genuine.count)

        let genuinePath = workDir.appendingPathComponent("genuine.hrbackup").path
        try genuine.write(to: URL(fileURLWithPath: genuinePath))
        let path = workDir.appendingPathComponent("swapped.hrbackup").path
        // Rewrites the backup in place (same inode: `>` truncates and writes), then prints the password.
        let command = "cat '\(genuinePath)' > '\(path)' && cat '\(passwordFile)'"
        let parent = workDir.appendingPathComponent("targets")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)

        try swapped.write(to: URL(fileURLWithPath: path))
        let restore = try hreader(["restore", path, "--vault", parent.appendingPathComponent("vault").path, "--password-command", command])
        XCTAssertEqual(restore.status, 7, "a key file that was swapped back after it was read must not be installed: \(restore.stderr)")
        XCTAssertEqual(restore.stderr.split(separator: "\n").count, 1, restore.stderr)
        XCTAssertTrue(restore.stderr.contains("tampered"), restore.stderr)
        XCTAssertEqual(strayEntries(in: parent, expected: []), [], "nothing is restored")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), genuine, "the command did put the genuine bytes back")

        try swapped.write(to: URL(fileURLWithPath: path))
        let verify = try hreader(["backup", "--verify", path, "--password-command", command])
        XCTAssertEqual(verify.status, 7, "verify vouched for a key file it did not authenticate: \(verify.stderr)")
        XCTAssertEqual(strayEntries(in: childTemp, expected: []), [])

        // The genuine file, left alone, restores with its recovery slot.
        try ok(withPassword(["restore", path, "--vault", parent.appendingPathComponent("vault").path]))
        let restored = try KeyFile.decode(Array(try Data(contentsOf: parent.appendingPathComponent("vault/vault.key"))))
        XCTAssertTrue(restored.slots.contains { $0.kind == .recovery })
    }

    // MARK: M2: a backup taken while a rekey is pending

    /// M2: while a rekey stays pending (another process has the database open, so the backup's own
    /// open cannot finish it), the key file's slots wrap the new key and the database is still under
    /// the previous one. The backup used to be keyed and MACed with the previous key next to a key
    /// file that unwraps the new one: it was written (exit 0), and `--verify` and `restore` then called
    /// it tampered with. It is now taken under the key the slots wrap, without the pending record.
    func testABackupTakenWhileARekeyIsPendingVerifiesAndRestores() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Zebulon", "--last", "Quixotic"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Xenodochial fever"]))
        let before = try dump(vaultDir)
        let keyURL = vaultDir.appendingPathComponent("vault.key")
        let keyFile = try KeyFile.decode(Array(try Data(contentsOf: keyURL)))
        let (oldKey, _) = try keyFile.unlock(kind: .password, secret: SecretBytes(utf8: Self.password))

        // Another process (this one) has the database open, under the previous key, for the time of the backup.
        do {
            let holder = try Database.open(path: vaultDir.appendingPathComponent("vault.db").path, key: oldKey)
            XCTAssertEqual(try holder.scalarInt("SELECT count(*) FROM patients"), 1)
            // The state after a rekey's step 1 (as RekeyTests builds it): new slots, the old key pending.
            let newKey = try SecretBytes.random(count: 32)
            var pending = keyFile.emptyCopy()
            try pending.addSlot(kind: .password, label: "password", secret: SecretBytes(utf8: Self.password),
                                kdf: .scrypt(n: 1024, r: 8, p: 1), dataKey: newKey)
            try pending.setPendingRekey(previous: oldKey, current: newKey)
            try Data(try pending.encoded()).write(to: keyURL)

            try backup()
            XCTAssertNotNil(try KeyFile.decode(Array(try Data(contentsOf: keyURL))).pendingRekey,
                            "the rekey stayed pending while the database was in use (the state this test is about)")
            withExtendedLifetime(holder) {}
        }

        let verified = try hreader(withPassword(["backup", "--verify", backupFile.path]))
        XCTAssertEqual(verified.status, 0, "a backup hreader wrote must verify: \(verified.stderr)")
        let restoredDir = workDir.appendingPathComponent("restored/vault")
        let restored = try hreader(withPassword(["restore", backupFile.path, "--vault", restoredDir.path]))
        XCTAssertEqual(restored.status, 0, restored.stderr)
        XCTAssertEqual(try dump(restoredDir), before, "every table comes back equal")
        let restoredKeyFile = try KeyFile.decode(Array(try Data(contentsOf: restoredDir.appendingPathComponent("vault.key"))))
        XCTAssertNil(restoredKeyFile.pendingRekey, "the backup holds nothing under the previous key")
        XCTAssertThrowsError(try Database.open(path: restoredDir.appendingPathComponent("vault.db").path, key: oldKey),
                             "the restored database is under the new key")
        // The vault itself finishes its rekey at the next open, now that nobody else has it open.
        try ok(withPassword(["check"]))
        XCTAssertNil(try KeyFile.decode(Array(try Data(contentsOf: keyURL))).pendingRekey)
    }

    // MARK: L1: a header whose lengths overflow

    /// L1: `database_bytes` near 2^63 made the sum of the lengths overflow, and restore and
    /// `--verify` trapped (SIGILL, a stack trace) before asking for any password. Now: damaged, exit 7,
    /// one line. The other lengths at their extremes too.
    func testAHeaderWhoseLengthsOverflowIsDamagedNotACrash() throws {
        try initVault()
        try backup()
        let original = try Data(contentsOf: backupFile)
        let r = regions(of: original)
        func withHeader(padding: Int = 0, _ edit: (inout [String: Any]) -> Void) throws -> Data {
            var header = try JSONSerialization.jsonObject(with: original[r.header]) as! [String: Any]
            edit(&header)
            let json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys, .withoutEscapingSlashes])
                + Data(repeating: 0x20, count: padding)   // JSON white space: the header may be up to 64 KiB
            let n = json.count
            return original.prefix(12) + Data([UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)])
                + json + original[r.keyFile.lowerBound...]
        }
        // The largest multiple of the page size below 2^63: with the other lengths (prefix, header, key
        // file, MAC) more than 4095 bytes together, the file's length no longer fits in 64 bits.
        let nearMax = Int.max - Int.max % 4096
        try assertRefusedAsDamaged(try withHeader { $0["database_bytes"] = nearMax; $0["key_file_bytes"] = 1 << 20 },
                                   "database_bytes \(nearMax) and a 1 MiB key file")
        try assertRefusedAsDamaged(try withHeader(padding: 8192) { $0["database_bytes"] = nearMax }, "database_bytes \(nearMax) and an 8 KiB header")
        try assertRefusedAsDamaged(try withHeader { $0["database_bytes"] = nearMax }, "database_bytes \(nearMax)")
        try assertRefusedAsDamaged(try withHeader { $0["database_bytes"] = nearMax - 4096 * 1024 }, "database_bytes just below 2^63")
        try assertRefusedAsDamaged(try withHeader { $0["database_bytes"] = -4096 }, "a negative database_bytes")
        try assertRefusedAsDamaged(try withHeader { $0["key_file_bytes"] = Int.max }, "key_file_bytes Int.max")
        try assertRefusedAsDamaged(try withHeader { $0["database_bytes"] = 1e300 }, "database_bytes 1e300")
        try assertRefusedAsDamaged(try withHeader { $0["schema_version"] = Int.max }, "schema_version Int.max")
        let crafted = workDir.appendingPathComponent("damaged.hrbackup")
        try withHeader { $0["database_bytes"] = nearMax; $0["key_file_bytes"] = 1 << 20 }.write(to: crafted)
        let verify = try hreader(["backup", "--verify", crafted.path])   // no password anywhere: refused before asking
        XCTAssertEqual(verify.status, 7, verify.stderr)
        XCTAssertTrue(verify.stderr.contains("damaged"), verify.stderr)
        XCTAssertFalse(verify.stderr.contains("Fatal error"), verify.stderr)
    }

    // MARK: L2: KDF work bounded before any KDF runs

    /// L2: a backup whose key file holds many slots, each asking for the most PBKDF2 work the old
    /// range allowed (100,000,000 iterations, about 30 s each here), kept `--verify` and `restore`
    /// deriving for hours before the MAC was ever checked. The key file's slots and KDF work are now
    /// bounded when it is read, before any KDF runs: damaged, exit 7, at once.
    func testABackupWhoseKeyFileAsksForHoursOfKDFWorkIsRefusedBeforeAnyKDFRuns() throws {
        try initVault()
        try backup()
        let original = try Data(contentsOf: backupFile)
        let genuineKeyFile = original[regions(of: original).keyFile]
        let cases: [(String, Data)] = [
            ("2000 slots of 100,000,000 PBKDF2 iterations",
             try keyFile(genuineKeyFile, repeatingItsPasswordSlot: 2000, kdf: ["name": "pbkdf2-sha256", "iterations": 100_000_000])),
            ("one slot of 100,000,001 PBKDF2 iterations (beyond what any version wrote)",
             try keyFile(genuineKeyFile, repeatingItsPasswordSlot: 1, kdf: ["name": "pbkdf2-sha256", "iterations": 100_000_001])),
            ("9 slots of 16,777,216 PBKDF2 iterations (each at the cap, together over the total)",
             try keyFile(genuineKeyFile, repeatingItsPasswordSlot: 9, kdf: ["name": "pbkdf2-sha256", "iterations": 1 << 24])),
            ("33 cheap slots",
             try keyFile(genuineKeyFile, repeatingItsPasswordSlot: 33, kdf: ["name": "scrypt", "n": 1024, "r": 8, "p": 1])),
        ]
        let parent = workDir.appendingPathComponent("targets")
        let path = workDir.appendingPathComponent("crafted.hrbackup")
        for (what, crafted) in cases {
            try backup(original, withKeyFile: crafted).write(to: path)
            try? FileManager.default.removeItem(at: parent)
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            let started = Date()
            let verify = try hreader(withPassword(["backup", "--verify", path.path]), timeout: 20)
            XCTAssertEqual(verify.status, 7, "\(what): \(verify.stderr)")
            XCTAssertEqual(verify.stderr.split(separator: "\n").count, 1, verify.stderr)
            XCTAssertTrue(verify.stderr.contains("key file is damaged"), "\(what): \(verify.stderr)")
            let restore = try hreader(withPassword(["restore", path.path, "--vault", parent.appendingPathComponent("vault").path]), timeout: 20)
            XCTAssertEqual(restore.status, 7, "\(what): \(restore.stderr)")
            XCTAssertEqual(strayEntries(in: parent, expected: []), [])
            XCTAssertLessThan(Date().timeIntervalSince(started), 30, "\(what): refused without deriving")
        }
    }

    /// L2 in the vault itself: a `vault.key` with more slots or more KDF work than an unlock may
    /// take is damaged (exit 7) before any KDF runs, and `key add` will not write one.
    func testAVaultKeyFileBeyondTheSlotAndWorkCapsIsDamaged() throws {
        try initVault()
        let keyURL = vaultDir.appendingPathComponent("vault.key")
        let genuine = try Data(contentsOf: keyURL)
        for (what, crafted) in [
            ("33 slots", try keyFile(genuine, repeatingItsPasswordSlot: 33, kdf: ["name": "scrypt", "n": 1024, "r": 8, "p": 1])),
            ("a slot of 100,000,001 PBKDF2 iterations",
             try keyFile(genuine, repeatingItsPasswordSlot: 1, kdf: ["name": "pbkdf2-sha256", "iterations": 100_000_001])),
            ("nine slots at the per-slot cap", try keyFile(genuine, repeatingItsPasswordSlot: 9, kdf: ["name": "pbkdf2-sha256", "iterations": 1 << 24])),
        ] {
            try crafted.write(to: keyURL)
            let result = try hreader(withPassword(["patients", "list"]), timeout: 20)
            XCTAssertEqual(result.status, 7, "\(what): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        }
        // At the caps exactly: 32 slots decode (and the genuine one, first, opens the vault).
        var object = try JSONSerialization.jsonObject(with: genuine) as! [String: Any]
        let many = try JSONSerialization.jsonObject(with: try keyFile(genuine, repeatingItsPasswordSlot: 31,
                                                                      kdf: ["name": "scrypt", "n": 1024, "r": 8, "p": 1])) as! [String: Any]
        object["slots"] = Array((object["slots"] as! [[String: Any]]).prefix(1)) + (many["slots"] as! [[String: Any]])
        try keyFileWithChecksum(object).write(to: keyURL)
        try ok(withPassword(["patients", "list"]))
        let add = try hreader(withPassword(["key", "add", "--kind", "password", "--label", "one too many", "--new-password-file", newPasswordFile]))
        XCTAssertEqual(add.status, 2, add.stderr)
        XCTAssertTrue(add.stderr.contains("at most 32 slots"), add.stderr)
        XCTAssertEqual(try JSONSerialization.jsonObject(with: try Data(contentsOf: keyURL)) as? NSDictionary,
                       try JSONSerialization.jsonObject(with: try keyFileWithChecksum(object)) as? NSDictionary, "vault.key is unchanged")
        // Replacing a slot at the cap is not adding one: passwd and key upgrade still work with 32 slots.
        try ok(withPassword(["passwd", "--new-password-file", newPasswordFile]))
        try ok(["key", "upgrade", "--scrypt-n", "2048", "--password-file", newPasswordFile])
        let after = try KeyFile.decode(Array(try Data(contentsOf: keyURL)))
        XCTAssertEqual(after.slots.count, 32)
        XCTAssertEqual(after.slots.last?.kdf, .scrypt(n: 2048, r: 8, p: 1))
    }
}
