import CSQLCipher

/// A failed SQLite/SQLCipher call, with the result code, SQLite's message and the SQL that failed.
/// The SQL is ours (statements with `?` parameters); bound values, which may be health data, never appear.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let sql: String?

    public init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The file is not a database under this key, or a page failed its HMAC: damage or tampering.
    public var isIntegrityFailure: Bool {
        let primary = code & 0xff
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }

    public var isBusy: Bool { (code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED }

    public var isConstraintViolation: Bool { (code & 0xff) == SQLITE_CONSTRAINT }

    /// `Database.interrupt()` stopped the statement, or SQLite ran out of the memory it may use: the
    /// request failed, not the file.
    public var isInterruptOrMemory: Bool { (code & 0xff) == SQLITE_INTERRUPT || (code & 0xff) == SQLITE_NOMEM }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " (in: \(sql.prefix(200)))" }
        return text
    }
}
