import CSQLCipher
import Foundation
import HReaderModel

/// The numbers of sample series, for the views that chart or total them (a timeline page's vitals
/// and activity, a month's vital charts): a reading is a start, an id and a number, read with three
/// columns from the series' own range of the table. A month of a watch is some 115,000 samples; made
/// into entry rows (a series, strings, codes and an entry type each) they cost four times what the
/// page does with them.
public struct SampleReadings {
    /// What a series' readings are, without the strings only an entry needs.
    public struct Series: Sendable {
        public let id: Int64
        public let sourceID: Int64
        public let type: EntryType
        public let description: String
        /// nil when the series has none (as a sample's entry row says it).
        public let unit: String?
        /// Its longest sample, in seconds (a sample may start before a range and end in it).
        public let maxSpan: Int64
        /// Who wrote its samples, as the source priority names them (`sourceExpression`).
        public let source: String
    }

    /// One sample: when it starts, its entry id and its value as a number. `number` is nil when the
    /// value is text that does not read as one (a category's word); text that does (`"72"`) is read
    /// as the entry's value is (`SampleRepository.value`).
    public struct Reading: Sendable, Equatable {
        public let start: Int64
        public let id: Int64
        public let number: Double?
    }

    /// A series' readings starting in a span: their sum and count where the value is stored as a
    /// number, how many are not (read those with `textReadings`), and when the first starts.
    public struct Total: Sendable {
        public let seriesID: Int64
        public let sum: Double
        public let numbers: Int
        public let others: Int
        /// When the first reading stored as a number starts (nil: none is).
        public let firstStart: Int64?
    }

    let db: Database

    public init(_ db: Database) { self.db = db }

    /// A series' codes, as its entries carry them (a page reads the units of a bare `count` from them).
    public func codes(seriesID: Int64) throws -> [String: [String]] {
        CodesJSON.decode(try db.scalarString("SELECT codes FROM sample_series WHERE id = ?", [seriesID]))
    }

    /// Who wrote a series' samples, for the source priority of activity day totals (issue 40): an SQL
    /// expression over `ss` (the `sample_series` row) and `src` (its `sources` row). Apple Health's
    /// `sourceName` names the device ("Anna's Apple Watch"), a FIT file's is its product ("Garmin
    /// Forerunner 965"); Health Connect's is the app, and one app may write a phone's and a watch's
    /// steps, so there it is "App (Device)"; so too Fitbit's, whose CSV files name each reading's
    /// device ("Fitbit (Pixel Watch 2)", "Fitbit (MobileTrack)": the phone). A series without a name
    /// takes its source's.
    public static let sourceExpression = """
        CASE WHEN (src.base_url LIKE 'health-connect:%' OR src.base_url LIKE 'fitbit:%') AND ss.device <> ''
             THEN ss.source_name || ' (' || ss.device || ')'
             WHEN ss.source_name <> '' THEN ss.source_name ELSE src.display_name END
        """

    /// The patient's series.
    public func series(patientID: Int64) throws -> [Series] {
        try db.query("""
            SELECT ss.id, ss.source_id, ss.type, ss.description, ss.unit, ss.max_span, \(Self.sourceExpression)
            FROM sample_series ss JOIN sources src ON src.id = ss.source_id WHERE ss.patient_id = ? ORDER BY ss.id
            """, [patientID]) { s in
            let unit = s.string(4) ?? ""
            return Series(id: s.int64(0)!, sourceID: s.int64(1)!, type: EntryType(rawValue: s.string(2)!) ?? .observation,
                          description: s.string(3) ?? "", unit: unit.isEmpty ? nil : unit, maxSpan: s.int64(5)!, source: s.string(6) ?? "")
        }
    }

    /// Every source of samples in the vault (any person, any kind), with how many series each wrote,
    /// by name: what `hreader sources priority` orders.
    public func sources() throws -> [(name: String, series: Int)] {
        try db.query("""
            SELECT \(Self.sourceExpression) AS name, count(*) FROM sample_series ss JOIN sources src ON src.id = ss.source_id
            GROUP BY name ORDER BY name
            """) { ($0.string(0) ?? "", Int($0.int64(1) ?? 0)) }
    }

    /// One sample as the source priority weighs it: its series, when it starts and ends, its number.
    public struct Span: Sendable, Equatable {
        public let seriesID: Int64
        public let start: Int64
        public let end: Int64
        public let number: Double
    }

    /// The readings of `series` that start in [from, to] and read as numbers (stored as one, or as
    /// text that says one), in no particular order: what a day of several sources is weighed from.
    public func spans(of series: [Int64], startingFrom from: Int64, to: Int64) throws -> [Span] {
        let statement = try db.cachedStatement("""
            SELECT series_id, start_epoch, end_epoch, value FROM samples
            WHERE series_id IN (SELECT value FROM json_each(?1)) AND start_epoch BETWEEN ?2 AND ?3
            """)
        defer { statement.reset() }
        statement.bind(1, "[" + series.map(String.init).joined(separator: ",") + "]")
        statement.bind(2, from)
        statement.bind(3, to)
        var spans: [Span] = []
        while try statement.step() {
            guard let number = Self.number(statement, 3) else { continue }
            spans.append(Span(seriesID: sqlite3_column_int64(statement.handle, 0), start: sqlite3_column_int64(statement.handle, 1),
                              end: sqlite3_column_int64(statement.handle, 2), number: number))
        }
        return spans
    }

    /// One series' readings whose start or end falls in [from, to] (the timeline's rule, as
    /// `SampleRepository.forEachSample` reads them), in (start, id) order.
    public func cursor(_ series: Series, from: Int64, to: Int64) throws -> Cursor {
        // The primary key's own order (start, end, value): SQLite streams it; readings that start at
        // the same second are put in id order by the cursor.
        let statement = try db.prepare("""
            SELECT start_epoch, id, value FROM samples WHERE series_id = ? AND start_epoch BETWEEN ? - ? AND ?
              AND (start_epoch >= ? OR end_epoch BETWEEN ? AND ?) ORDER BY start_epoch, end_epoch, value
            """)
        let lo = max(from, -(1 << 52)), hi = min(to, 1 << 52)
        try statement.bind([series.id, lo, series.maxSpan, hi, lo, lo, hi])
        return Cursor(statement: statement)
    }

    /// Readings in (start, id) order from a statement of (start, id, value) rows in start order.
    public struct Cursor {
        let statement: Statement
        /// Readings of the start just handed out that are still to come, in id order (nearly always empty).
        private var tied: [Reading] = []
        private var lookahead: Reading?
        private var exhausted = false

        init(statement: Statement) { self.statement = statement }

        public mutating func next() throws -> Reading? {
            if !tied.isEmpty { return tied.removeFirst() }
            guard let first = try lookahead ?? row() else { return nil }
            lookahead = nil
            guard let second = try row() else { return first }
            if second.start != first.start {
                lookahead = second
                return first
            }
            var group = [first, second]
            while let more = try row() {
                if more.start != first.start { lookahead = more; break }
                group.append(more)
            }
            group.sort { $0.id < $1.id }
            tied = Array(group.dropFirst())
            return group[0]
        }

        private mutating func row() throws -> Reading? {
            guard !exhausted else { return nil }
            guard try statement.step() else {
                exhausted = true
                return nil
            }
            return Reading(start: sqlite3_column_int64(statement.handle, 0), id: sqlite3_column_int64(statement.handle, 1),
                           number: SampleReadings.number(statement, 2))
        }
    }

    /// Totals of the readings of `series` that start in [from, to], one per series that has any.
    /// SQLite adds them (with compensated summation), so a day of a thousand step counts is one row.
    public func totals(of series: [Int64], startingFrom from: Int64, to: Int64) throws -> [Total] {
        let statement = try db.cachedStatement("""
            SELECT series_id, total(value) FILTER (WHERE typeof(value) IN ('real', 'integer')),
                   count(*) FILTER (WHERE typeof(value) IN ('real', 'integer')), count(*) FILTER (WHERE typeof(value) NOT IN ('real', 'integer')),
                   min(start_epoch) FILTER (WHERE typeof(value) IN ('real', 'integer'))
            FROM samples WHERE series_id IN (SELECT value FROM json_each(?1)) AND start_epoch BETWEEN ?2 AND ?3 GROUP BY series_id
            """)
        defer { statement.reset() }
        statement.bind(1, "[" + series.map(String.init).joined(separator: ",") + "]")
        statement.bind(2, from)
        statement.bind(3, to)
        var totals: [Total] = []
        while try statement.step() {
            totals.append(Total(seriesID: statement.int64(0)!, sum: statement.double(1) ?? 0, numbers: statement.int(2) ?? 0,
                                others: statement.int(3) ?? 0, firstStart: statement.int64(4)))
        }
        return totals
    }

    /// When the first and the last reading of `series` starting in [from, to] start (nil: none does).
    public func starts(of series: [Int64], from: Int64, to: Int64) throws -> (first: Int64, last: Int64)? {
        var first = Int64.max, last = Int64.min
        for id in series {
            // Each an index lookup at one end of the series' range.
            if let start = try db.scalarInt("SELECT min(start_epoch) FROM samples WHERE series_id = ? AND start_epoch BETWEEN ? AND ?", [id, from, to]) {
                first = min(first, start)
                last = max(last, try db.scalarInt("SELECT max(start_epoch) FROM samples WHERE series_id = ? AND start_epoch BETWEEN ? AND ?", [id, from, to]) ?? start)
            }
        }
        return first <= last ? (first, last) : nil
    }

    /// The readings of a series that start in [from, to] and are not stored as numbers, in (start, id) order.
    public func textReadings(of series: Int64, startingFrom from: Int64, to: Int64) throws -> [Reading] {
        try db.query("""
            SELECT start_epoch, id, value FROM samples WHERE series_id = ? AND start_epoch BETWEEN ? AND ?
              AND typeof(value) NOT IN ('real', 'integer') ORDER BY start_epoch, id
            """, [series, from, to]) { Reading(start: $0.int64(0)!, id: $0.int64(1)!, number: Self.number($0, 2)) }
    }

    /// A long sample a range begins inside: it starts before the range and ends in it.
    public struct Overhang: Sendable, Equatable {
        public let seriesID: Int64
        public let start: Int64
        public let end: Int64
        public let id: Int64
        /// nil when the value is text that does not read as a number.
        public let number: Double?
    }

    /// Each series of ?1 (`[[id, longest span], …]`) searched in its own stretch of the primary key.
    static let overhangingSQL = """
        SELECT s.series_id, s.start_epoch, s.end_epoch, s.id, s.value
        FROM json_each(?1) AS j CROSS JOIN samples AS s
          ON s.series_id = j.value ->> 0 AND s.start_epoch BETWEEN ?2 - (j.value ->> 1) AND ?2 - 1
        WHERE s.end_epoch BETWEEN ?2 AND ?3 ORDER BY s.series_id, s.start_epoch, s.id
        """

    /// The readings of `series` that start before `from` and end in [from, to] (long samples the
    /// range begins inside), in one statement, each series searched back its own longest sample; by
    /// series, then (start, id).
    public func overhanging(_ series: [Series], from: Int64, to: Int64) throws -> [Overhang] {
        let long = series.filter { $0.maxSpan > 0 }
        guard !long.isEmpty else { return [] }
        let statement = try db.cachedStatement(Self.overhangingSQL)
        defer { statement.reset() }
        statement.bind(1, "[" + long.map { "[\($0.id),\($0.maxSpan)]" }.joined(separator: ",") + "]")
        statement.bind(2, from)
        statement.bind(3, to)
        var found: [Overhang] = []
        while try statement.step() {
            found.append(Overhang(seriesID: sqlite3_column_int64(statement.handle, 0), start: sqlite3_column_int64(statement.handle, 1),
                                  end: sqlite3_column_int64(statement.handle, 2), id: sqlite3_column_int64(statement.handle, 3),
                                  number: Self.number(statement, 4)))
        }
        return found
    }

    /// A stored value as the entry's number: a REAL as it is, anything else as its text reads.
    static func number(_ statement: Statement, _ column: Int32) -> Double? {
        switch sqlite3_column_type(statement.handle, column) {
        case SQLITE_FLOAT: return sqlite3_column_double(statement.handle, column)
        case SQLITE_NULL: return nil
        default:
            guard let text = statement.string(Int(column)), let number = Double(text), number.isFinite else { return nil }
            return number
        }
    }
}
