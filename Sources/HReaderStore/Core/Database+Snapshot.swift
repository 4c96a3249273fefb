import CSQLCipher
import Foundation
import HReaderCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Database {
    /// Copies a consistent snapshot of this database into a new file at `path`, encrypted under `key`
    /// (SQLite's online backup API into a keyed target: the pages are read and authenticated through
    /// this connection, and written re-encrypted with fresh IVs; never a plaintext page on disk).
    ///
    /// Other processes may keep reading and writing meanwhile: this connection holds one read
    /// transaction for the whole copy, so in WAL mode the snapshot is the database as of its first
    /// page, and writers are not blocked. The target is created with `O_EXCL` and mode 0600; it gets
    /// no journal (a half-written target is thrown away, never opened) and keeps temporary tables in
    /// memory. On failure it is removed.
    ///
    /// Returns the snapshot's schema version (`PRAGMA user_version`, read in the same transaction).
    ///
    ///     let schema = try db.writeSnapshot(to: tmp, key: dataKey) { copied, total in show(copied, total) }
    @discardableResult
    public func writeSnapshot(to path: String, key: SecretBytes, pagesPerStep: Int32 = 2048,
                              progress: (_ copiedPages: Int, _ totalPages: Int) -> Void = { _, _ in }) throws -> Int {
        let fd = Glibc_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DatabaseError(code: SQLITE_CANTOPEN, message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
        var done = false
        defer { if !done { unlink(path) } }

        var connection: OpaquePointer?
        let rc = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard let target = connection else { throw DatabaseError(code: rc, message: "cannot open the snapshot file") }
        defer { if let connection { sqlite3_close_v2(connection) } }
        func targetError(_ code: Int32, _ what: String) -> DatabaseError {
            DatabaseError(code: code, message: "\(what): \(String(cString: sqlite3_errmsg(target)))")
        }
        guard rc == SQLITE_OK else { throw targetError(rc, "cannot open the snapshot file") }
        sqlite3_exec(target, "PRAGMA cipher_log_source = NONE", nil, nil, nil)
        let literal = key.hexEncoded(prefix: Array("x'".utf8), suffix: Array("'".utf8))
        _ = hreader_page_crypto_install()
        let keyed = literal.withUnsafeBytes { sqlite3_key(target, $0.baseAddress, Int32($0.count)) }
        guard keyed == SQLITE_OK else { throw targetError(keyed, "cannot key the snapshot") }
        for pragma in ["PRAGMA cipher_page_size = 4096", "PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF",
                       "PRAGMA temp_store = MEMORY"] {
            let code = sqlite3_exec(target, pragma, nil, nil, nil)
            guard code == SQLITE_OK else { throw targetError(code, pragma) }
        }

        // One read transaction over the whole copy: the snapshot. (Without it, a write by another
        // process between two steps would restart the copy from the first page.)
        try execute("BEGIN")
        defer { try? execute("COMMIT") }
        _ = try scalarInt("SELECT count(*) FROM sqlite_schema")
        let schemaVersion = Int(try scalarInt("PRAGMA user_version") ?? 0)

        guard let backup = sqlite3_backup_init(target, "main", handle, "main") else {
            throw targetError(sqlite3_errcode(target), "cannot start the snapshot")
        }
        var step = SQLITE_OK
        var busyRetries = 0
        while true {
            step = sqlite3_backup_step(backup, pagesPerStep)
            if step == SQLITE_OK || step == SQLITE_DONE {
                let total = Int(sqlite3_backup_pagecount(backup))
                progress(total - Int(sqlite3_backup_remaining(backup)), total)
                if step == SQLITE_DONE { break }
            } else if (step == SQLITE_BUSY || step == SQLITE_LOCKED) && busyRetries < 1000 {
                busyRetries += 1
                usleep(10_000)
            } else {
                break
            }
        }
        let finished = sqlite3_backup_finish(backup)
        guard step == SQLITE_DONE, finished == SQLITE_OK else {
            // A page of this database that fails its HMAC ends the copy here; `diagnose` tells damage apart.
            let code = step != SQLITE_DONE && step != SQLITE_OK ? step : finished
            throw DatabaseError(code: sqlite3_extended_errcode(target) != 0 ? sqlite3_extended_errcode(target) : code,
                                message: "the snapshot stopped: \(String(cString: sqlite3_errmsg(target)))")
        }
        let closed = sqlite3_close_v2(target)
        connection = nil
        guard closed == SQLITE_OK else { throw DatabaseError(code: closed, message: "cannot close the snapshot file") }
        done = true
        return schemaVersion
    }
}

#if canImport(Glibc)
private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Glibc.open(path, flags, mode) }
#else
private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Darwin.open(path, flags, mode) }
#endif
