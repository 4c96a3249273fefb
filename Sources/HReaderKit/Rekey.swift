import Foundation
import HReaderCrypto
import HReaderStore

/// `hreader rekey`: move the vault to a fresh data key, so that an old copy of `vault.key` and an
/// old secret open neither the current `vault.db` nor any later one.
///
/// The key file and the database cannot be replaced together atomically, so the rekey goes in three
/// steps, each one crash-safe on its own (docs/security.md, "Rekey"):
///
/// 1. `vault.key` is written (atomically) with the new slots, all wrapping the new data key, and a
///    pending record: the old data key wrapped under the new one.
/// 2. The database is exported under the new key to `vault.db.rekey`, fsynced and renamed over `vault.db`.
/// 3. `vault.key` is written again without the pending record: the old key is gone.
///
/// Whoever opens a vault whose key file is pending (after a crash between 1 and 3) unwraps the new
/// key from a slot, the old one from the pending record, and rolls the rekey forward: steps 2 (if
/// `vault.db` is still under the old key) and 3.
extension VaultService {
    public struct Rekeyed: Sendable {
        public let vaultID: String
        /// The new recovery key: shown once; the old one no longer opens anything.
        public let recoveryKey: String
        /// The new key slots.
        public let slots: [KeySlot]
        /// Slots of the old key file that have no counterpart in the new one (extra passwords, and the
        /// security questions unless they were answered again).
        public let dropped: [KeySlot]
        public let sessionsEnded: Int
    }

    /// Re-encrypts the vault under a fresh data key, authorised by the current password (`newPassword`
    /// changes it at the same time). The password slot that opened keeps its label and KDF; a new
    /// recovery key replaces the old; the security questions are kept only if `questions` answers
    /// them again; other password slots are dropped; every unlock session ends.
    ///
    /// `keyFileWritten` is called as soon as the new key file is durable (step 1), before the long
    /// re-encryption: from then on only the new recovery key works, so it must be shown then, not
    /// only at the end (a rekey stopped later is finished by the next open).
    public func rekey(password: SecretBytes, newPassword: SecretBytes? = nil,
                      questions: [(question: String, answer: String)]? = nil, now: Date = Date(),
                      keyFileWritten: (Rekeyed) -> Void = { _ in }) throws -> Rekeyed {
        if let newPassword { try PasswordPolicy.check(newPassword) }
        if let questions { try Self.checkQuestions(questions) }
        do {
            return try vault.withExclusiveLockIfFree {
                var keyFile = try vault.readKeyFile()
                let (slotKey, opened) = try keyFile.unlock(kind: .password, secret: password)
                // A rekey stopped by a crash is finished first: the database is then under `slotKey`.
                if keyFile.pendingRekey != nil {
                    keyFile = try finishPendingRekey(keyFile, currentKey: slotKey, mustFinish: true).keyFile
                }
                let oldKey = slotKey

                // Nothing is written before the database is ours alone.
                let databaseRekey = try vault.beginDatabaseRekey(currentKey: oldKey)
                defer { databaseRekey.close() }

                let newKey = try SecretBytes.random(count: 32)
                var fresh = keyFile.emptyCopy()
                let kdf = opened.kdf
                let passwordSlot = try fresh.addSlot(kind: .password, label: opened.label, secret: newPassword ?? password,
                                                     kdf: kdf, dataKey: newKey, now: now)
                var kept: Set<String> = [opened.id]
                if let questions {
                    let secret = try SecretAnswers.normalize(questions.map(\.answer))
                    let label = keyFile.slots.first(where: { $0.kind == .questions })?.label ?? "security questions"
                    try fresh.addSlot(kind: .questions, label: label, questions: questions.map(\.question),
                                      secret: secret, kdf: kdf, dataKey: newKey, now: now)
                    for slot in keyFile.slots where slot.kind == .questions { kept.insert(slot.id) }
                }
                let recovery = try RecoveryKey.generate()
                try fresh.addSlot(kind: .recovery, label: "recovery key", secret: recovery.secret, kdf: kdf, dataKey: newKey, now: now)
                for slot in keyFile.slots where slot.kind == .recovery { kept.insert(slot.id) }
                _ = passwordSlot

                // Sessions hold the old key wrapped: end them before anything else changes.
                let sessions = vault.removeAllSessions()
                try fresh.setPendingRekey(previous: oldKey, current: newKey)
                try vault.writeKeyFile(fresh)                       // 1: new slots + the old key under the new
                let result = Rekeyed(vaultID: fresh.vaultID, recoveryKey: recovery.display, slots: fresh.slots,
                                     dropped: keyFile.slots.filter { !kept.contains($0.id) }, sessionsEnded: sessions)
                keyFileWritten(result)
                try databaseRekey.commit(newKey: newKey)            // 2: vault.db under the new key
                fresh.clearPendingRekey()
                try vault.writeKeyFile(fresh)                       // 3: the old key is gone
                return result
            }
        } catch {
            throw HReaderError.from(error)
        }
    }

    /// For a key file with a pending rekey, opened with `currentKey` (the key its slots wrap): rolls the
    /// rekey forward under the vault lock, and returns the key file as it now is and the key that opens
    /// `vault.db`. When another process has the database open (it cannot, short of one opened before the
    /// rekey began) the rekey stays pending unless `mustFinish`, and the old key is returned.
    func finishPendingRekey(_ keyFile: KeyFile, currentKey: SecretBytes, mustFinish: Bool = false) throws -> (keyFile: KeyFile, databaseKey: SecretBytes) {
        guard keyFile.pendingRekey != nil else { return (keyFile, currentKey) }
        let work = { () throws -> (keyFile: KeyFile, databaseKey: SecretBytes) in
            var keyFile = try vault.readKeyFile()
            guard keyFile.pendingRekey != nil else { return (keyFile, currentKey) }
            let previous = try keyFile.previousDataKey(current: currentKey)
            let underNewKey: Bool
            do {
                _ = try Database.open(path: vault.databaseURL.path, key: currentKey)
                underNewKey = true
            } catch Database.OpenFailure.notADatabaseUnderThisKey {
                underNewKey = false
            }
            if !underNewKey {
                let databaseRekey: DatabaseRekey
                do {
                    databaseRekey = try vault.beginDatabaseRekey(currentKey: previous)
                } catch Vault.Failure.inUse where !mustFinish {
                    return (keyFile, previous)
                }
                defer { databaseRekey.close() }
                do {
                    try databaseRekey.commit(newKey: currentKey)
                } catch where !mustFinish {
                    // Out of space, an I/O error: the vault still opens (with whichever key vault.db is
                    // under now) and the rekey stays pending for the next open.
                    let renamed = (try? Database.open(path: vault.databaseURL.path, key: currentKey)) != nil
                    return (keyFile, renamed ? currentKey : previous)
                }
            }
            keyFile.clearPendingRekey()
            try vault.writeKeyFile(keyFile)
            return (keyFile, currentKey)
        }
        // `rekey` itself already holds the lock (flock is per open file description: taking it again would wait forever).
        return mustFinish ? try work() : try vault.withExclusiveLock(work)
    }
}
