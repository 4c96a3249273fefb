import CSQLCipher
import HReaderModel

private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement. Bind parameters by position, step through rows, read typed columns.
///
///     let statement = try db.prepare("SELECT first_name FROM patients WHERE id = ?")
///     try statement.bind([42])
///     while try statement.step() { print(statement.string(0) ?? "") }
public final class Statement {
    let handle: OpaquePointer
    public let sql: String
    private unowned let database: Database

    init(database: Database, sql: String) throws {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(database.handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw database.error(rc, sql: sql) }
        self.handle = stmt
        self.sql = sql
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    public func bind(_ values: [DatabaseValueConvertible?]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        guard Int32(values.count) == sqlite3_bind_parameter_count(handle) else {
            throw DatabaseError(code: SQLITE_RANGE, message: "expected \(sqlite3_bind_parameter_count(handle)) parameters, got \(values.count)", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value?.databaseValue ?? .null {
            case .null: rc = sqlite3_bind_null(handle, index)
            case let .integer(v): rc = sqlite3_bind_int64(handle, index, v)
            case let .real(v): rc = sqlite3_bind_double(handle, index, v)
            case let .text(v): rc = bindText(index, v)
            case let .blob(v): rc = v.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32(v.count), SQLITE_TRANSIENT) }
            }
            guard rc == SQLITE_OK else { throw database.error(rc, sql: sql) }
        }
    }

    // Binding one parameter by its 1-based index, for hot loops that would otherwise build an array of
    // existentials per row. A value of the wrong index is a programming error, caught by the step.
    public func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    public func bind(_ index: Int32, _ value: String?) {
        if let value { bindText(index, value) } else { sqlite3_bind_null(handle, index) }
    }

    public func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    /// Text from the string's own UTF-8 bytes, with their length: passing a Swift String where a C
    /// string is expected copies it into a new NUL-terminated array first, per value. (A string
    /// of more than 2 GiB is refused by SQLite as too big.)
    @discardableResult
    func bindText(_ index: Int32, _ value: String) -> Int32 {
        var value = value
        return value.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_bind_text(handle, index, "", 0, SQLITE_TRANSIENT) }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(bytes.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8))
            }
        }
    }

    public func bind(_ index: Int32, _ value: DatabaseValue) {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case let .integer(v): sqlite3_bind_int64(handle, index, v)
        case let .real(v): sqlite3_bind_double(handle, index, v)
        case let .text(v): bindText(index, v)
        case let .blob(v): v.withUnsafeBytes { _ = sqlite3_bind_blob(handle, index, $0.baseAddress, Int32(v.count), SQLITE_TRANSIENT) }
        }
    }

    /// Advances to the next row; false when done.
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Ends the current run so the statement holds no read lock while cached.
    public func reset() { sqlite3_reset(handle) }

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }
    public func columnName(_ i: Int) -> String { String(cString: sqlite3_column_name(handle, Int32(i))) }

    public func isNull(_ i: Int) -> Bool { sqlite3_column_type(handle, Int32(i)) == SQLITE_NULL }
    /// Whether the column holds a floating-point number (a sample's value is REAL when it reads back as written, else text).
    public func isReal(_ i: Int) -> Bool { sqlite3_column_type(handle, Int32(i)) == SQLITE_FLOAT }
    public func int64(_ i: Int) -> Int64? { isNull(i) ? nil : sqlite3_column_int64(handle, Int32(i)) }
    public func int(_ i: Int) -> Int? { int64(i).map { Int($0) } }
    public func double(_ i: Int) -> Double? { isNull(i) ? nil : sqlite3_column_double(handle, Int32(i)) }
    public func string(_ i: Int) -> String? {
        guard !isNull(i), let text = sqlite3_column_text(handle, Int32(i)) else { return nil }
        return String(cString: text)
    }
    /// The column's text as bytes, without making a String (nil for NULL); valid only inside `body`.
    public func textBytes<T>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T? {
        guard !isNull(i), let text = sqlite3_column_text(handle, Int32(i)) else { return nil }
        return try body(UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, Int32(i)))))
    }

    public func blob(_ i: Int) -> [UInt8]? {
        guard !isNull(i) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(i)))
        guard count > 0, let base = sqlite3_column_blob(handle, Int32(i)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
