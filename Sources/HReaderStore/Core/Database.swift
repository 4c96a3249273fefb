import CSQLCipher
import Foundation
import HReaderCrypto

/// One SQLCipher connection. Not thread-safe by design: one `Database` belongs to one task at a time
/// (the CLI is one process, one connection); concurrent processes are serialised by SQLite's locks
/// and `busy_timeout`.
///
///     let db = try Database.open(path: url.path, key: dataKey, create: true)
///     try db.transaction { try db.execute("INSERT …", [a, b]) }
public final class Database {
    let handle: OpaquePointer
    public let path: String
    /// Prepared statements reused by `execute(_:_:)` and `query`, keyed by SQL.
    private var statementCache: [String: Statement] = [:]

    /// Oldest SQLCipher hreader accepts (4.5: SHA512 page HMACs, SQLite ≥ 3.36 with UPSERT, JSON, RETURNING).
    public static let minimumCipherVersion = (4, 5)
    static let plaintextHeader: [UInt8] = Array("SQLite format 3\u{0}".utf8)

    public enum OpenFailure: Error, Equatable, Sendable {
        /// The file begins with SQLite's plaintext header: someone else's, or unencrypted. Refused, never upgraded.
        case plaintextDatabase
        /// The key does not open the file (wrong key, or the first page is damaged).
        case notADatabaseUnderThisKey
        case cipherTooOld(String)
        case cipherMissing
        /// The file at the path was replaced (by `hreader rekey`) while this connection waited for its
        /// lock: the connection holds the old, unlinked file. Open again from the key file.
        case fileReplaced
        /// The SQLCipher build lacks FTS5, which the vault's search index needs.
        case fullTextSearchMissing
    }

    init(handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Opens (or with `create`, creates) an encrypted database keyed with the raw 32-byte `key`,
    /// checks the library and the file, and applies the connection settings of DESIGN.md §3.
    /// `key: nil` opens an unkeyed database (benchmarks' baseline only).
    /// Process-wide settings, before SQLite initialises itself on the first open.
    static let configured: Void = { _ = hreader_sqlite3_disable_memory_statistics() }()

    ///
    /// `besideOpenConnection`: this process already has the file open through another connection. The
    /// plaintext check is skipped then: it reads the file through a descriptor of its own, and closing
    /// any descriptor of a file drops every POSIX lock the process holds on it, the other connection's
    /// included (so another process could, say, rekey the vault under it).
    public static func open(path: String, key: SecretBytes?, create: Bool = false, busyTimeoutMilliseconds: Int32 = 10_000,
                            besideOpenConnection: Bool = false) throws -> Database {
        _ = configured
        if key != nil, !besideOpenConnection, try fileStartsWithPlaintextHeader(path) { throw OpenFailure.plaintextDatabase }
        let inodeBefore = inode(of: path)
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard let handle else { throw DatabaseError(code: rc, message: "cannot open database") }
        let db = Database(handle: handle, path: path)
        guard rc == SQLITE_OK else { throw db.error(rc, sql: nil) }
        sqlite3_extended_result_codes(handle, 1)
        // Before the first read: another process may hold a lock (a writer, or a checkpoint on close).
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)

        // Quiet SQLCipher's own logging of HMAC failures (it would print to stderr on a wrong key).
        try? db.execute("PRAGMA cipher_log_source = NONE")
        let version = try db.cipherVersion()
        try checkCipherVersion(version)
        guard hasFullTextSearch else { throw OpenFailure.fullTextSearchMissing }

        if let key {
            // The raw key literal x'…' (64 hex digits) skips SQLCipher's own KDF: the key is already random.
            let literal = key.hexEncoded(prefix: Array("x'".utf8), suffix: Array("'".utf8))
            _ = hreader_page_crypto_install()
            let keyed = literal.withUnsafeBytes { sqlite3_key(handle, $0.baseAddress, Int32($0.count)) }
            guard keyed == SQLITE_OK else { throw db.error(keyed, sql: "sqlite3_key") }
            try db.execute("PRAGMA cipher_page_size = 4096")
        }
        // The first read proves the key: a wrong key or a damaged first page fails here.
        do {
            _ = try db.scalarInt("SELECT count(*) FROM sqlite_schema")
        } catch let error as DatabaseError where error.isIntegrityFailure {
            throw OpenFailure.notADatabaseUnderThisKey
        }
        // Before anything is written (journal mode): `rekey` renames a new file over the path while it
        // holds the old file's exclusive lock, so a connection that waited on that lock sees the old
        // file. Writing to it would lose the writes and could leave a journal beside the new file.
        if let inodeBefore, inode(of: path) != inodeBefore { throw OpenFailure.fileReplaced }
        try db.execute("PRAGMA foreign_keys = ON")
        try db.execute("PRAGMA temp_store = MEMORY")
        try db.execute("PRAGMA secure_delete = ON")
        _ = try db.scalarString("PRAGMA journal_mode = WAL")
        try db.execute("PRAGMA synchronous = NORMAL")
        return db
    }

    static func inode(of path: String) -> UInt64? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return UInt64(info.st_ino)
    }

    static func fileStartsWithPlaintextHeader(_ path: String) throws -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = handle.readData(ofLength: 16)
        return Array(head) == plaintextHeader
    }

    static func checkCipherVersion(_ version: String?) throws {
        guard let version else { throw OpenFailure.cipherMissing }
        let numbers = version.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { throw OpenFailure.cipherMissing }
        if (numbers[0], numbers[1]) < minimumCipherVersion { throw OpenFailure.cipherTooOld(version) }
    }

    /// `PRAGMA cipher_version`, e.g. "4.6.1 community"; nil when the library is not SQLCipher.
    public func cipherVersion() throws -> String? {
        try scalarString("PRAGMA cipher_version")
    }

    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Whether the linked SQLCipher was built with FTS5 (Debian's and Homebrew's are), which the
    /// search index (schema/004_search.sql) needs.
    public static var hasFullTextSearch: Bool { sqlite3_compileoption_used("ENABLE_FTS5") == 1 }

    /// Which code checks and decrypts the pages of connections keyed from now on (CSQLCipher's
    /// PageCrypto.h): hreader's provider, whose OpenSSL contexts are made once per connection, or
    /// SQLCipher's own, which fetches them from OpenSSL's store for every page. The same bytes on disk.
    public enum PageCrypto: Sendable {
        case kept, sqlcipher
    }

    /// Chooses the page crypto for connections keyed after this (the process's setting; tests and
    /// the benchmark compare the two). Returns whether hreader's provider is in place: false with
    /// `.sqlcipher`, or where the SQLCipher installed is not a version it knows (4.5 and 4.6).
    @discardableResult
    public static func usePageCrypto(_ choice: PageCrypto) -> Bool {
        hreader_page_crypto_set_mode(choice == .kept ? hreader_page_crypto_kept : hreader_page_crypto_sqlcipher)
        return hreader_page_crypto_install() == 1
    }

    /// Whether SQLCipher holds a registered provider now (tests: it must after every keyed connection
    /// of the caller's has closed, or a provider registered then would meet freed mutexes).
    static var pageCryptoProviderRegistered: Bool { hreader_page_crypto_registered() == 1 }

    /// The linked library's `cipher_version`, asked of a throw-away in-memory connection.
    public static func libraryCipherVersion() -> String? {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else { return nil }
        let db = Database(handle: handle, path: ":memory:")
        return try? db.cipherVersion()
    }

    // MARK: Running SQL

    public func prepare(_ sql: String) throws -> Statement {
        try Statement(database: self, sql: sql)
    }

    /// Runs one or more statements without parameters (schema, pragmas).
    public func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw DatabaseError(code: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Runs one statement with parameters to completion.
    public func execute(_ sql: String, _ arguments: [DatabaseValueConvertible?]) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// Runs a query and maps each row.
    public func query<T>(_ sql: String, _ arguments: [DatabaseValueConvertible?] = [], _ row: (Statement) throws -> T) throws -> [T] {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        var out: [T] = []
        while try statement.step() { out.append(try row(statement)) }
        return out
    }

    /// Runs a query and hands each row to `row` as it is stepped (nothing is collected).
    public func forEachRow(_ sql: String, _ arguments: [DatabaseValueConvertible?] = [], _ row: (Statement) throws -> Void) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        while try statement.step() { try row(statement) }
    }

    /// Runs `body` with a page cache of at least `kibibytes` (SQLite's default is 2 MB), then the size
    /// it had again: a long write transaction keeps its b-trees' paths in memory instead of spilling
    /// pages to the WAL and reading (decrypting) them back again and again. Nested calls keep the
    /// larger cache.
    public func withPageCache<T>(kibibytes: Int, _ body: () throws -> T) throws -> T {
        let before = try scalarInt("PRAGMA cache_size") ?? -2000
        // Negative sizes are KiB, positive ones pages (of 4 KiB here).
        let current = before < 0 ? Int(-before) : Int(before) * 4
        guard kibibytes > current else { return try body() }
        try execute("PRAGMA cache_size = -\(kibibytes)")
        defer { try? execute("PRAGMA cache_size = \(before)") }
        return try body()
    }

    /// Writes the open write transaction's dirty pages to the WAL now (encrypted, as a commit would)
    /// instead of all at its commit, for a caller that is about to wait on something else: the work is
    /// done meanwhile, and the commit writes only what came after. Does nothing outside a transaction;
    /// SQLite skips a page it cannot write yet (SQLITE_BUSY), which the commit then writes.
    public func writeDirtyPages() throws {
        let status = sqlite3_db_cacheflush(handle)
        guard status == SQLITE_OK || status == SQLITE_BUSY else { throw error(status, sql: "sqlite3_db_cacheflush") }
    }

    /// A prepared statement kept for reuse (pragmas are not cached: some change meaning per call).
    func cachedStatement(_ sql: String) throws -> Statement {
        if let cached = statementCache[sql] { return cached }
        let statement = try prepare(sql)
        if !sql.hasPrefix("PRAGMA") { statementCache[sql] = statement }
        return statement
    }

    public func scalarInt(_ sql: String, _ arguments: [DatabaseValueConvertible?] = []) throws -> Int64? {
        try query(sql, arguments) { $0.int64(0) }.first ?? nil
    }

    public func scalarString(_ sql: String, _ arguments: [DatabaseValueConvertible?] = []) throws -> String? {
        try query(sql, arguments) { $0.string(0) }.first ?? nil
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// Stops the statement this connection is running (from any thread): its step fails with
    /// SQLITE_INTERRUPT and the transaction it was in is rolled back. A connection that runs
    /// nothing is left as it is. For a request whose caller has gone, or that ran past its time.
    public func interrupt() { sqlite3_interrupt(handle) }

    /// Runs `body` in an IMMEDIATE transaction (the write lock is taken up front, so two writers wait
    /// on `busy_timeout` instead of failing mid-way); commits on success, rolls back on any error.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    func error(_ rc: Int32, sql: String?) -> DatabaseError {
        DatabaseError(code: sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : rc,
                      message: String(cString: sqlite3_errmsg(handle)), sql: sql)
    }

    // MARK: Integrity

    /// SQLCipher reports a page that fails its HMAC as a plain SQLITE_ERROR ("SQL logic error"), which
    /// reads like a bug. When an unexpected error occurs, ask `cipher_integrity_check` and, if pages are
    /// damaged, say so.
    public func diagnose(_ error: Error) -> Error {
        guard let e = error as? DatabaseError, !e.isIntegrityFailure, !e.isBusy, !e.isConstraintViolation, !e.isInterruptOrMemory,
              let problems = try? integrityProblems(), !problems.isEmpty else { return error }
        return DatabaseError(code: SQLITE_CORRUPT, message: "\(problems.count) damaged page(s) or record(s): \(problems[0])", sql: e.sql)
    }

    /// Where a vault's space goes, per table, largest first.
    public struct TableSpace: Sendable {
        public let table: String
        public let rows: Int64
        public let bytes: Int64
    }

    /// Bytes per table, largest first. With SQLite's `dbstat` (when the library has it): pages × page
    /// size, the table's indexes included (`exact`). Without it (Debian's SQLCipher is built without
    /// it): the bytes of the values the table holds (text and blobs by length, numbers as 8), indexes
    /// not counted: an estimate that still shows which table the space goes to.
    public func spaceByTable() throws -> (tables: [TableSpace], exact: Bool) {
        let tables = try query("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
            $0.string(0)!
        }
        var rows: [String: Int64] = [:]
        for table in tables { rows[table] = try scalarInt("SELECT count(*) FROM \(Self.quoted(table))") ?? 0 }
        if let pages = try? query("""
            SELECT coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d
            LEFT JOIN sqlite_schema m ON m.name = d.name GROUP BY 1
            """, [], { ($0.string(0) ?? "?", $0.int64(1) ?? 0) }) {
            let spaces = pages.map { TableSpace(table: $0.0, rows: rows[$0.0] ?? 0, bytes: $0.1) }
            return (spaces.sorted { ($0.bytes, $1.table) > ($1.bytes, $0.table) }, true)
        }
        var spaces: [TableSpace] = []
        for table in tables {
            let columns = try query("SELECT name FROM pragma_table_info(?)", [table]) { $0.string(0)! }
            let sizes = columns.map { "coalesce(sum(CASE typeof(\(Self.quoted($0))) WHEN 'text' THEN length(CAST(\(Self.quoted($0)) AS BLOB)) "
                                      + "WHEN 'blob' THEN length(\(Self.quoted($0))) WHEN 'null' THEN 0 ELSE 8 END), 0)" }
            let bytes = columns.isEmpty ? 0 : try scalarInt("SELECT \(sizes.joined(separator: " + ")) FROM \(Self.quoted(table))") ?? 0
            spaces.append(TableSpace(table: table, rows: rows[table] ?? 0, bytes: bytes))
        }
        return (spaces.sorted { ($0.bytes, $1.table) > ($1.bytes, $0.table) }, false)
    }

    private static func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// Checks every page's HMAC (`cipher_integrity_check`), the b-trees (`integrity_check`) and the
    /// foreign keys. Returns the problems found; empty means sound.
    public func integrityProblems() throws -> [String] {
        // Page HMACs first: when they fail, the b-tree checks below cannot read those pages anyway.
        let cipher = try query("PRAGMA cipher_integrity_check") { $0.string(0) ?? "" }
        if !cipher.isEmpty { return cipher }
        do {
            var problems = try query("PRAGMA integrity_check") { $0.string(0) ?? "" }.filter { $0 != "ok" }
            problems += try query("PRAGMA foreign_key_check") { "foreign key violation in \($0.string(0) ?? "?")" }
            return problems
        } catch let error as DatabaseError {
            return ["integrity check stopped: \(error.message)"]
        }
    }
}
