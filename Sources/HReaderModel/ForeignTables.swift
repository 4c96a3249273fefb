/// A database another app wrote (an Android Health Connect export, docs/wearables.md), as the readers
/// of HReaderRecords see it: its tables, their columns, and the rows of a query one at a time. It is
/// HReaderStore's `Database.openForeign` (the project's one SQLite, read-only and defensive); the
/// readers map rows and need no SQLite of their own.
///
///     try tables.readRows("SELECT time, count FROM steps_record_table") { row in
///         print(row.int64(0) ?? 0, row.double(1) ?? 0)
///     }
public protocol ForeignTables {
    /// The names of the database's tables (not SQLite's own).
    func tableNames() throws -> [String]
    /// A table's column names.
    func columnNames(of table: String) throws -> [String]
    /// Runs a query and hands each row to `row` as it is stepped (nothing is collected).
    func readRows(_ sql: String, _ row: (any ForeignRow) throws -> Void) throws
}

/// One row of a `ForeignTables` query: its columns by index, nil for NULL.
public protocol ForeignRow {
    func int64(_ i: Int) -> Int64?
    func double(_ i: Int) -> Double?
    func string(_ i: Int) -> String?
    func blob(_ i: Int) -> [UInt8]?
}
