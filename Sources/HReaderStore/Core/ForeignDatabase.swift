import CSQLCipher
import Foundation
import HReaderModel

/// A SQLite database that someone else wrote (an Android Health Connect export, docs/wearables.md),
/// read as untrusted bytes: never from a file of its own on disk, never written, never able to
/// reach anything else.
///
/// Either the bytes are copied into SQLite's memory and opened with `sqlite3_deserialize` (read-only)
/// in an unkeyed in-memory connection of the project's one SQLite library (SQLCipher without a key
/// reads plain SQLite: no second SQLite is linked, DESIGN.md §1), or, for a database of any size in
/// flat memory, they are written as they come into a `SealedScratch` file (AES-256-CTR under a key
/// that lives only in the process's memory) and read through its VFS: either way the plaintext never
/// touches the disk, not even as a temporary file (`temp_store` is memory). The connection is defensive: no ATTACH
/// (`SQLITE_LIMIT_ATTACHED` 0), no triggers or views run, the schema is not trusted (its functions
/// cannot have side effects), `query_only`, and an authorizer that allows reading and nothing else
/// (no PRAGMA, no writes, no ATTACH, no transactions).
///
///     let db = try Database.openForeign(bytes)
///     let rows = try db.query("SELECT count FROM steps_record_table") { $0.int64(0) }
extension Database {
    /// The largest foreign database read (it is held in memory while it is read).
    public static let maxForeignBytes = 1 << 30

    public enum ForeignFailure: Error, Equatable {
        case tooLarge(Int)
        case notSQLite
        case unreadable(String)
    }

    public static func openForeign(_ bytes: [UInt8]) throws -> Database {
        _ = configured
        guard bytes.count <= maxForeignBytes else { throw ForeignFailure.tooLarge(bytes.count) }
        guard bytes.starts(with: plaintextHeader), bytes.count >= 512 else { throw ForeignFailure.notSQLite }
        let db = try openUndefended(":memory:", flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, vfs: nil, path: ":memory:")
        let handle = db.handle
        // SQLite owns (and frees) the copy; read-only: nothing can change it.
        guard let buffer = sqlite3_malloc64(UInt64(bytes.count)) else { throw ForeignFailure.unreadable("out of memory") }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        // A database written in WAL mode (Android's are) says so in its header (bytes 18 and 19 are 2);
        // an in-memory database cannot use a WAL, and an export is one file: the copy is read as the
        // rollback-journal database it is once checkpointed.
        let header = buffer.assumingMemoryBound(to: UInt8.self)
        if header[18] == 2 && header[19] == 2 { header[18] = 1; header[19] = 1 }
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE) | UInt32(SQLITE_DESERIALIZE_READONLY)
        let loaded = sqlite3_deserialize(handle, "main", buffer.assumingMemoryBound(to: UInt8.self), Int64(bytes.count), Int64(bytes.count), flags)
        guard loaded == SQLITE_OK else { throw ForeignFailure.unreadable(String(cString: sqlite3_errmsg(handle))) }
        try defend(db)
        return db
    }

    /// Opens a sealed scratch copy (its writing finished) read-only through the sealed VFS, defended
    /// as `openForeign(_:)` is; the file is removed from its directory once open (the connection
    /// keeps reading it), so nothing of it outlives the connection.
    public static func openForeign(sealed scratch: SealedScratch) throws -> Database {
        _ = configured
        try scratch.finish()
        let path = scratch.path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? scratch.path
        defer { scratch.remove() }
        let db = try openUndefended("file:\(path)?immutable=1", flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
                                    vfs: HREADER_SEALED_VFS, path: scratch.path)
        try defend(db)
        return db
    }

    /// An unkeyed connection that cannot attach, run triggers or views, trust the schema or load
    /// extensions; `defend` finishes it.
    private static func openUndefended(_ filename: String, flags: Int32, vfs: String?, path: String) throws -> Database {
        var handle: OpaquePointer?
        let rc = sqlite3_open_v2(filename, &handle, flags, vfs)
        guard let handle else { throw DatabaseError(code: rc, message: "cannot open \(path)") }
        let db = Database(handle: handle, path: path)
        guard rc == SQLITE_OK else { throw ForeignFailure.unreadable(String(cString: sqlite3_errmsg(handle))) }
        sqlite3_extended_result_codes(handle, 1)
        try? db.execute("PRAGMA cipher_log_source = NONE")
        try db.execute("PRAGMA temp_store = MEMORY")
        sqlite3_limit(handle, SQLITE_LIMIT_ATTACHED, 0)
        for (option, value) in [(SQLITE_DBCONFIG_DEFENSIVE, 1), (SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0), (SQLITE_DBCONFIG_ENABLE_TRIGGER, 0),
                                (SQLITE_DBCONFIG_ENABLE_VIEW, 0), (SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0)] {
            _ = hreader_sqlite3_db_config_flag(handle, option, Int32(value))
        }
        return db
    }

    /// Read-only in every way, and proves the file is a database.
    private static func defend(_ db: Database) throws {
        let handle = db.handle
        try db.execute("PRAGMA query_only = 1")
        sqlite3_set_authorizer(handle, { _, action, _, _, _, _ in
            switch action {
            case SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE: SQLITE_OK
            default: SQLITE_DENY
            }
        }, nil)
        do {
            _ = try db.scalarInt("SELECT count(*) FROM sqlite_schema")
        } catch {
            throw ForeignFailure.unreadable("\(error)")
        }
    }

    /// The names of the database's tables (not SQLite's own).
    public func tableNames() throws -> [String] {
        try query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") { $0.string(0) ?? "" }
    }

    /// A table's column names (read from the statement, not by PRAGMA, which the authorizer refuses).
    public func columnNames(of table: String) throws -> [String] {
        let statement = try prepare("SELECT * FROM \"\(table.replacingOccurrences(of: "\"", with: "\"\""))\" LIMIT 0")
        return (0..<statement.columnCount).map { statement.columnName($0) }
    }
}

/// The Health Connect reader (HReaderRecords) reads a foreign database through `ForeignTables`, so the
/// mapping module needs no SQLite.
extension Database: ForeignTables {
    public func readRows(_ sql: String, _ row: (any ForeignRow) throws -> Void) throws {
        let statement = try prepare(sql)
        defer { statement.reset() }
        while try statement.step() { try row(statement) }
    }
}

extension Statement: ForeignRow {}
