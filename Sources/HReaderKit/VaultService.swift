import Foundation
import HReaderCrypto
import HReaderStore

/// The vault's life cycle: create, open, unlock sessions, and manage the key slots.
///
///     let service = VaultService(vault: Vault(root: url))
///     let created = try service.create(password: password, kdf: .scryptDefault)
///     let open = try service.open(.password(password))
public struct VaultService: Sendable {
    public let vault: Vault

    public init(vault: Vault) { self.vault = vault }

    public struct Created: Sendable {
        public let vaultID: String
        /// Shown once; never stored in the clear.
        public let recoveryKey: String
    }

    /// Creates a vault: a random data key, the encrypted database with the schema, and a key file
    /// with a password slot, an optional questions slot, and a recovery slot.
    public func create(password: SecretBytes, questions: [(question: String, answer: String)]? = nil,
                       kdf: KDFParameters = .scryptDefault, now: Date = Date()) throws -> Created {
        do {
            try PasswordPolicy.check(password)
            if let questions { try Self.checkQuestions(questions) }
            try kdf.validateForNewSlot()
            if vault.exists { throw Vault.Failure.alreadyExists(vault.root.path) }
            try vault.createDirectory()
            return try vault.withExclusiveLock {
                try vault.prepareForCreation()
                let dataKey = try SecretBytes.random(count: 32)
                var keyFile = KeyFile.new(now: now)
                // The database is built as vault.db.new, the key file written, and only then is the
                // database renamed: a crash at any point leaves either no vault (and a leftover that
                // the next `init` clears) or a whole one. No existing file is ever deleted.
                do {
                    let db = try vault.createNewDatabase(key: dataKey, migrator: .reconciling)
                    try AuditLog(db).record("vault.init", detail: "kdf \(kdf.name)", now: now)
                }
                try keyFile.addSlot(kind: .password, label: "password", secret: password, kdf: kdf, dataKey: dataKey, now: now)
                if let questions {
                    let secret = try SecretAnswers.normalize(questions.map(\.answer))
                    try keyFile.addSlot(kind: .questions, label: "security questions", questions: questions.map(\.question),
                                        secret: secret, kdf: kdf, dataKey: dataKey, now: now)
                }
                let recovery = try RecoveryKey.generate()
                try keyFile.addSlot(kind: .recovery, label: "recovery key", secret: recovery.secret, kdf: kdf, dataKey: dataKey, now: now)
                try vault.writeKeyFile(keyFile)
                try vault.commitNewDatabase()
                return Created(vaultID: keyFile.vaultID, recoveryKey: recovery.display)
            }
        } catch {
            throw HReaderError.from(error)
        }
    }

    static func checkQuestions(_ questions: [(question: String, answer: String)]) throws {
        guard questions.count >= 2 else { throw HReaderError.usage("give two or more security questions") }
        for q in questions {
            guard !q.question.trimmingCharacters(in: .whitespaces).isEmpty else { throw HReaderError.usage("a security question is empty") }
            guard !q.answer.trimmingCharacters(in: .whitespaces).isEmpty else { throw HReaderError.usage("the answer to '\(q.question)' is empty") }
        }
    }

    /// The key file, readable without any secret (it holds only wrapped keys and public parameters).
    public func keyFile() throws -> KeyFile {
        do { return try vault.readKeyFile() } catch { throw HReaderError.from(error) }
    }

    /// Opens the vault with a credential: unwraps the data key and opens the database.
    public func open(_ credential: Credential) throws -> OpenVault {
        // The session being used is judged by unwrap, which says "expired" rather than "unknown".
        if case let .session(token) = credential { sweepExpiredSessions(sparing: try? UnlockSession.sessionID(in: token)) } else {
            sweepExpiredSessions()
        }
        do {
            return try retryingIfReplaced {
                let read = try vault.readKeyFile()
                let (dataKey, slot) = try unwrap(read, credential)
                let (keyFile, databaseKey) = try finishPendingRekey(read, currentKey: dataKey)
                let db = try vault.openDatabase(key: databaseKey, migrator: .reconciling)
                return OpenVault(vault: vault, db: db, keyFile: keyFile, openedWith: slot, dataKey: databaseKey, slotKey: dataKey)
            }
        } catch {
            throw HReaderError.from(error)
        }
    }

    /// Runs an open again (from the key file) when `vault.db` was replaced by a rekey while it waited.
    func retryingIfReplaced<T>(_ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            do {
                return try body()
            } catch Database.OpenFailure.fileReplaced where attempt < 3 {
                attempt += 1
            }
        }
    }

    /// Returns the data key and the slot that opened (nil for a session).
    func unwrap(_ keyFile: KeyFile, _ credential: Credential) throws -> (SecretBytes, KeySlot?) {
        switch credential {
        case let .password(secret):
            let r = try keyFile.unlock(kind: .password, secret: secret); return (r.dataKey, r.slot)
        case let .answers(answers):
            let r = try keyFile.unlock(kind: .questions, secret: try SecretAnswers.normalize(answers)); return (r.dataKey, r.slot)
        case let .recoveryKey(secret):
            let r = try keyFile.unlock(kind: .recovery, secret: secret); return (r.dataKey, r.slot)
        case let .session(token):
            let id = try UnlockSession.sessionID(in: token)
            guard let file = vault.readSession(id: id) else { throw UnlockSession.Failure.invalid }
            do {
                return (try UnlockSession.open(token: token, file: file, vaultID: keyFile.vaultID), nil)
            } catch UnlockSession.Failure.expired {
                vault.removeSession(id: id)
                throw UnlockSession.Failure.expired
            }
        }
    }

    // MARK: Sessions

    public static let maximumSessionLength: TimeInterval = 7 * 24 * 3600

    /// Unwraps the data key once and stores it wrapped under a fresh session key; returns the token.
    public func startSession(_ credential: Credential, for duration: TimeInterval, now: Date = Date()) throws -> (token: String, expires: Date) {
        guard duration > 0, duration <= Self.maximumSessionLength else {
            throw HReaderError.usage("a session lasts between 1 second and 7 days")
        }
        do {
            let keyFile = try vault.readKeyFile()
            let (dataKey, _) = try unwrap(keyFile, credential)
            // Prove the key opens the database before handing out a session. The session keeps the key
            // the slots wrap (during a pending rekey, the new one), which opens the database from then on.
            _ = try retryingIfReplaced {
                let (_, databaseKey) = try finishPendingRekey(keyFile, currentKey: dataKey)
                return try vault.openDatabase(key: databaseKey, migrator: .reconciling)
            }
            let expires = now.addingTimeInterval(duration)
            let session = try UnlockSession.create(dataKey: dataKey, vaultID: keyFile.vaultID, expires: expires)
            try vault.writeSession(id: session.id, file: session.file)
            return (session.token, expires)
        } catch {
            throw HReaderError.from(error)
        }
    }

    /// Ends every session of this vault; returns how many there were.
    @discardableResult
    public func lock() throws -> Int {
        guard vault.exists else { throw HReaderError.from(Vault.Failure.noVault(vault.root.path)) }
        return vault.removeAllSessions()
    }

    /// Whether the unlock session a token names still exists and has not expired (`hreader lock` or
    /// `passwd` removes sessions).
    public func sessionIsLive(_ token: String, now: Date = Date()) -> Bool {
        guard let id = try? UnlockSession.sessionID(in: token), let file = vault.readSession(id: id),
              let expires = UnlockSession.expiry(of: file) else { return false }
        return now < expires
    }

    /// For a long-running process such as `serve`: a check that a vault opened with `credential` should
    /// still be open. Only an unlock session can end from outside (lock, expiry); a password cannot, so
    /// for it there is nothing to check (nil).
    public func stillUnlocked(by credential: Credential) -> (@Sendable () -> Bool)? {
        guard case let .session(token) = credential else { return nil }
        return { self.sessionIsLive(token) }
    }

    /// Sessions still present, with their expiry (expired ones are removed first).
    public func sessions() -> [(id: String, expires: Date?)] {
        sweepExpiredSessions()
        return vault.sessionIDs().map { id in (id, vault.readSession(id: id).flatMap(UnlockSession.expiry(of:))) }
    }

    /// Removes the files of sessions that have expired (or cannot be read): each holds the data key,
    /// wrapped under a key only its token has, and a stolen token should find nothing to open. Run
    /// at every open and by `status`, not only when an expired token is used.
    func sweepExpiredSessions(sparing spared: String? = nil, now: Date = Date()) {
        for id in vault.sessionIDs() where id != spared {
            let expires = vault.readSession(id: id).flatMap(UnlockSession.expiry(of:))
            if expires.map({ $0 <= now }) ?? true { vault.removeSession(id: id) }
        }
    }

    // MARK: Key slots

    /// Replaces the password slot that `current` opens with one for `new`, under the same KDF.
    /// The database is not touched: only the data key's wrapping changes.
    public func changePassword(current: SecretBytes, new: SecretBytes, now: Date = Date()) throws {
        try PasswordPolicy.check(new)
        try updateKeyFile { keyFile in
            let (dataKey, slot) = try keyFile.unlock(kind: .password, secret: current)
            try keyFile.addSlot(kind: .password, label: slot.label, secret: new, kdf: slot.kdf, dataKey: dataKey, replacing: [slot.id], now: now)
            try keyFile.removeSlot(id: slot.id)
        }
        vault.removeAllSessions()
    }

    /// With the security answers or the recovery key, replaces every password slot by one for `newPassword`
    /// and ends all sessions.
    public func recover(with credential: Credential, newPassword: SecretBytes, now: Date = Date()) throws {
        try PasswordPolicy.check(newPassword)
        try updateKeyFile { keyFile in
            let (dataKey, slot) = try unwrap(keyFile, credential)
            let kdf = slot?.kdf ?? .scryptDefault
            let oldPasswords = keyFile.slots.filter { $0.kind == .password }
            try keyFile.addSlot(kind: .password, label: "password", secret: newPassword, kdf: kdf, dataKey: dataKey,
                                replacing: oldPasswords.map(\.id), now: now)
            for old in oldPasswords { try keyFile.removeSlot(id: old.id) }
        }
        vault.removeAllSessions()
    }

    public enum NewSlot: Sendable {
        case password(SecretBytes)
        case questions([(question: String, answer: String)])
        /// A new recovery key; its display form is returned by `addSlot`.
        case recovery
    }

    /// Adds a slot, authorised by the current password. Returns the new slot and, for a recovery slot,
    /// the key to show once.
    public func addSlot(_ new: NewSlot, label: String?, authorizedBy password: SecretBytes, kdf: KDFParameters? = nil,
                        now: Date = Date()) throws -> (slot: KeySlot, recoveryKey: String?) {
        if case let .password(p) = new { try PasswordPolicy.check(p) }
        if case let .questions(q) = new { try Self.checkQuestions(q) }
        var result: (KeySlot, String?)?
        try updateKeyFile { keyFile in
            let (dataKey, opened) = try keyFile.unlock(kind: .password, secret: password)
            let parameters = kdf ?? opened.kdf
            switch new {
            case let .password(secret):
                result = (try keyFile.addSlot(kind: .password, label: label ?? "password", secret: secret, kdf: parameters, dataKey: dataKey, now: now), nil)
            case let .questions(questions):
                let secret = try SecretAnswers.normalize(questions.map(\.answer))
                result = (try keyFile.addSlot(kind: .questions, label: label ?? "security questions", questions: questions.map(\.question),
                                              secret: secret, kdf: parameters, dataKey: dataKey, now: now), nil)
            case .recovery:
                let key = try RecoveryKey.generate()
                result = (try keyFile.addSlot(kind: .recovery, label: label ?? "recovery key", secret: key.secret, kdf: parameters,
                                              dataKey: dataKey, now: now), key.display)
            }
        }
        return result!
    }

    /// Removes a slot, authorised by the current password. The last password slot stays.
    public func removeSlot(id: String, authorizedBy password: SecretBytes) throws {
        try updateKeyFile { keyFile in
            _ = try keyFile.unlock(kind: .password, secret: password)
            let slot = try keyFile.slot(matching: id)
            try keyFile.removeSlot(id: slot.id)
        }
    }

    /// Rewraps the password slot that `password` opens under new KDF parameters (default: today's).
    public func upgradeSlot(password: SecretBytes, to kdf: KDFParameters = .scryptDefault, now: Date = Date()) throws -> KeySlot {
        try kdf.validateForNewSlot()
        var upgraded: KeySlot?
        try updateKeyFile { keyFile in
            let (dataKey, slot) = try keyFile.unlock(kind: .password, secret: password)
            upgraded = try keyFile.addSlot(kind: .password, label: slot.label, secret: password, kdf: kdf, dataKey: dataKey,
                                           replacing: [slot.id], now: now)
            try keyFile.removeSlot(id: slot.id)
        }
        return upgraded!
    }

    /// Read-modify-write of the key file under the vault lock, written atomically. Key changes are not
    /// written to the database's audit log: re-keying must leave the database's bytes untouched (the
    /// slots' `created` times record when each secret was set).
    private func updateKeyFile(_ change: (inout KeyFile) throws -> Void) throws {
        do {
            try vault.withExclusiveLock {
                var keyFile = try vault.readKeyFile()
                try change(&keyFile)
                try vault.writeKeyFile(keyFile)
            }
        } catch {
            throw HReaderError.from(error)
        }
    }
}
