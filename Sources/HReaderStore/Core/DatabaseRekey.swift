import CSQLCipher
import Foundation
import HReaderCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Re-encrypting `vault.db` under a new data key (`hreader rekey`).
///
/// SQLCipher's `PRAGMA rekey` rewrites the pages in place. It works on a WAL database here (4.6.1,
/// checkpointed first; RekeyStoreTests checks it), but it is one long write transaction over the live
/// file whose crash recovery mixes pages and journal content under two keys. hreader instead exports
/// the whole database into a new file keyed with the new key (`sqlcipher_export`), fsyncs it and
/// renames it over `vault.db`: the live file is never half re-encrypted, and a crash leaves either
/// the old file whole (and a leftover `vault.db.rekey` that the next try removes) or the new one.
///
///     let rekey = try vault.beginDatabaseRekey(currentKey: old)   // refuses if another process has it open
///     try rekey.commit(newKey: new)                               // export, fsync, rename, fsync the directory
public final class DatabaseRekey {
    let vault: Vault
    private var db: Database?

    init(vault: Vault, db: Database) {
        self.vault = vault
        self.db = db
    }

    /// Writes the database under `newKey` beside the vault and renames it over `vault.db`, then
    /// closes the old connection (its exclusive lock is held until the new file is in place).
    public func commit(newKey: SecretBytes) throws {
        guard let db else { throw Vault.Failure.io("the database rekey was already committed") }
        defer { close() }
        let target = vault.rekeyDatabaseURL
        let previousMask = umask(0o077)
        defer { umask(previousMask) }
        try db.export(to: target.path, key: newKey)
        try Self.fsync(path: target.path)
        // No journal or WAL of the old file may be taken for the new one's. In exclusive locking mode
        // outside WAL there is no WAL, and the rollback journal's header is zeroed (not hot) after
        // every commit; remove what may be there anyway.
        for suffix in ["-wal", "-shm"] { unlink(vault.databaseURL.path + suffix) }
        guard rename(target.path, vault.databaseURL.path) == 0 else {
            throw Vault.Failure.io("cannot rename \(target.path) over \(vault.databaseURL.path)")
        }
        try AtomicFile.syncDirectory(vault.root.path)
    }

    /// Ends the rekey without committing (the old database stays as it was).
    public func close() {
        guard db != nil else { return }
        db = nil
        // The old connection's rollback journal (zeroed header) stays behind in exclusive mode: it
        // would be stray beside the new file.
        vault.removeColdJournal()
        vault.removeRekeyLeftovers()
    }

    static func fsync(path: String) throws {
        guard fsyncFile(path) else { throw Vault.Failure.io("cannot fsync \(path)") }
    }
}

private func createEmptyFile(_ path: String) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard fd >= 0 else { return false }
    close(fd)
    return true
}

private func fsyncFile(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return fsync(fd) == 0
}

extension Vault {
    /// Where `rekey` writes the re-encrypted database before renaming it over `vault.db`.
    public var rekeyDatabaseURL: URL { root.appendingPathComponent("vault.db.rekey") }

    /// Opens `vault.db` with its current key for a rekey, and takes it for this process alone: the
    /// WAL is checkpointed into the file and switched off (which SQLite allows only when no other
    /// connection has the file open), and the exclusive lock is kept until the rekey ends. Throws
    /// `Failure.inUse` when another process has the database open (a `serve`, an import).
    public func beginDatabaseRekey(currentKey: SecretBytes) throws -> DatabaseRekey {
        removeRekeyLeftovers()
        let db = try Database.open(path: databaseURL.path, key: currentKey, busyTimeoutMilliseconds: 3_000)
        do {
            try db.execute("PRAGMA main.locking_mode = EXCLUSIVE")
            _ = try db.scalarString("PRAGMA main.journal_mode = DELETE")
            // Take (and, in exclusive mode, keep) the write lock: nobody opens the old file from here on.
            try db.execute("BEGIN EXCLUSIVE")
            try db.execute("COMMIT")
        } catch let error as DatabaseError where error.isBusy {
            throw Failure.inUse(root.path)
        }
        guard try db.scalarString("PRAGMA main.journal_mode")?.lowercased() == "delete" else {
            throw Failure.inUse(root.path)
        }
        return DatabaseRekey(vault: self, db: db)
    }

    /// Removes a `vault.db.rekey` (and its journal) left by a rekey that was stopped before its rename:
    /// it is under a key that no key file holds, or a copy that will be made again.
    public func removeRekeyLeftovers() {
        for suffix in ["", "-journal", "-wal", "-shm"] { unlink(rekeyDatabaseURL.path + suffix) }
    }

    /// Removes `vault.db-journal` if its header is zeroed (a journal that is not hot: nothing to roll back).
    func removeColdJournal() {
        let path = databaseURL.path + "-journal"
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        let head = handle.readData(ofLength: 28)
        try? handle.close()
        if head.allSatisfy({ $0 == 0 }) { unlink(path) }
    }
}

extension Database {
    /// Copies the whole database (schema, rows, `user_version`) into a new file keyed with `key`.
    func export(to path: String, key: SecretBytes) throws {
        unlink(path)
        // ATTACH opens with the main connection's flags, which lack SQLITE_OPEN_CREATE: an empty file
        // (0600) is a new database to SQLite.
        guard createEmptyFile(path) else { throw Vault.Failure.io("cannot create \(path)") }
        // The raw key literal x'…', bound as a blob so it never becomes a Swift String.
        let literal = key.hexEncoded(prefix: Array("x'".utf8), suffix: Array("'".utf8))
        _ = hreader_page_crypto_install()
        let attach = try prepare("ATTACH DATABASE ? AS rekeyed KEY ?")
        let rc: Int32 = literal.withUnsafeBytes { bytes in
            sqlite3_bind_text(attach.handle, 1, path, -1, SQLITE_TRANSIENT)
            sqlite3_bind_blob(attach.handle, 2, bytes.baseAddress, Int32(bytes.count), SQLITE_TRANSIENT)
            return sqlite3_step(attach.handle)
        }
        sqlite3_reset(attach.handle)
        guard rc == SQLITE_DONE else { throw error(rc, sql: attach.sql) }
        do {
            try execute("PRAGMA rekeyed.cipher_page_size = 4096")
            let version = try scalarInt("PRAGMA main.user_version") ?? 0
            _ = try query("SELECT sqlcipher_export('rekeyed')") { _ in () }
            try execute("PRAGMA rekeyed.user_version = \(version)")
            try execute("DETACH DATABASE rekeyed")
        } catch {
            try? execute("DETACH DATABASE rekeyed")
            throw error
        }
    }
}
