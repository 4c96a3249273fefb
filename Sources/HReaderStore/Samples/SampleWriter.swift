import HReaderModel

/// Writes Apple Health `Record` elements of one patient and source as samples (migration 3): one
/// short row per sample, clustered by series and time, with the series written once. Prepared
/// statements are reused; per sample there is no JSON, no uuid and no lookup unless the row exists.
///
///     let writer = try SampleWriter(db, patientID: 1, recordID: 1, sourceID: 2)
///     if let (outcome, type) = try writer.add(attributes: a, metadata: m, mapping: map) { … } else { /* store as an entry */ }
///     try writer.finish()
public final class SampleWriter {
    /// Sample ids start here; entries' ids (SQLite rowids, from 1) stay far below.
    public static let firstID: Int64 = 1 << 40

    private let db: Database
    private let patientID: Int64
    private let sourceID: Int64
    /// The patient row of the record the samples came with (schema 8: an unmerge gives its series
    /// back); nil only for the schema-3 migration, which runs before the column exists.
    private let recordID: Int64?
    /// A series by its strings and its layout (`SampleLayout`).
    private struct SeriesKey: Hashable {
        var type, sourceName, sourceVersion, device, unit: String
        var layout: UInt64
    }

    private struct KnownSeries {
        var id: Int64
        var type: EntryType
        var span: Int64
        var storedSpan: Int64
        /// Samples this import added to it, not yet added to its `sample_count` (schema 9).
        var added: Int64 = 0
    }

    private var series: [SeriesKey: KnownSeries] = [:]
    /// The series of the last few samples, most recent first: an export lists a type's samples
    /// together (a watch's and a phone's taking turns), so most samples find theirs here by a pointer
    /// comparison (the reader shares the strings) and no hashing. A class: updated in place, never
    /// copied per sample. What `series` holds for these is stale until they leave the list.
    private final class RecentSeries {
        let strings: SampleSeriesStrings
        let key: SeriesKey
        var known: KnownSeries
        /// The day its samples are being totalled, while they come in time order (schema 7).
        var day: DayKey?
        var total = DayTotal(count: 0, sum: 0, seconds: 0, min: 0, max: 0)
        init(strings: SampleSeriesStrings, key: SeriesKey, known: KnownSeries) { self.strings = strings; self.key = key; self.known = known }
    }
    private var recent: [RecentSeries] = []
    private static let recentCount = 8
    /// Day totals of the vital-sign samples added (schema 7, `sample_days`): each recent series totals
    /// its current day, written (added to what the table holds) when the series moves to another day,
    /// leaves the recent list, or at `finish`. A series' samples come in time order, so that is once a
    /// series and day.
    private struct DayKey: Hashable { let series: Int64; let day: Int64 }
    private struct DayTotal { var count: Int64; var sum: Double; var seconds: Double; var min: Double; var max: Double }
    private let keepsDayTotals: Bool
    private let keepsCounts: Bool
    private var nextID: Int64
    private let insert: Statement
    private let update: Statement

    /// `recordID`: the record the samples came with (`patientID`, the person they are shown under,
    /// when the person is their own record). `dayTotals: false`, `counts: false` and `recordID: nil`
    /// for the schema-3 migration, which runs before `sample_days`, the series' record and their
    /// counts exist (schemas 7, 8 and 9 fill them in).
    public init(_ db: Database, patientID: Int64, recordID: Int64?, sourceID: Int64, dayTotals: Bool = true, counts: Bool = true) throws {
        self.db = db
        self.keepsDayTotals = dayTotals
        self.keepsCounts = counts
        self.patientID = patientID
        self.recordID = recordID
        self.sourceID = sourceID
        nextID = max(Self.firstID, (try db.scalarInt("SELECT max(id) FROM samples") ?? 0) + 1)
        insert = try db.prepare("""
            INSERT OR IGNORE INTO samples (series_id, start_epoch, end_epoch, value, id, utc_offset, end_offset, creation_epoch,
                creation_offset, device_address, extras) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
            """)
        update = try db.prepare("""
            UPDATE samples SET utc_offset = ?6, end_offset = ?7, creation_epoch = ?8, creation_offset = ?9, device_address = ?10, extras = ?11
            WHERE series_id = ?1 AND start_epoch = ?2 AND end_epoch = ?3 AND value = ?4
              AND (utc_offset IS NOT ?6 OR end_offset IS NOT ?7 OR creation_epoch IS NOT ?8 OR creation_offset IS NOT ?9
                   OR device_address IS NOT ?10 OR extras IS NOT ?11)
            """)
        try loadSeries()
    }

    /// Stores one Record given as text attributes; nil when it does not fit the samples' columns
    /// exactly (an attribute they cannot name, a date not in the export's format, an attribute
    /// twice): the caller stores it as an entry.
    public func add(attributes: [(name: String, value: String)], metadata: [(key: String, value: String)],
                    mapping: (String) -> SeriesMapping) throws -> (UpsertOutcome, EntryType)? {
        guard let record = SampleRecord(attributes: attributes, metadata: metadata) else { return nil }
        return try add(record, mapping: mapping)
    }

    /// Stores one Record as a sample: inserted, updated (same sample, other details), or unchanged.
    public func add(_ record: SampleRecord, mapping: (String) -> SeriesMapping) throws -> (UpsertOutcome, EntryType) {
        let start = record.start
        let endEpoch = record.end?.epoch ?? start.epoch
        let known: KnownSeries
        let holder: RecentSeries
        if let hit = recent.firstIndex(where: { $0.strings === record.strings && $0.key.layout == record.layout }) {
            // The series of a recent sample (nearly always): no key built, nothing hashed.
            let entry = recent[hit]
            holder = entry
            entry.known.span = max(entry.known.span, endEpoch - start.epoch)
            known = entry.known
            if hit > 0 { recent.swapAt(hit, hit - 1) }
        } else {
            let key = SeriesKey(type: record.type, sourceName: record.sourceName, sourceVersion: record.sourceVersion,
                                device: record.device, unit: record.unit, layout: record.layout)
            var found: KnownSeries
            if let hit = recent.firstIndex(where: { $0.key == key }) {
                let leaving = recent.remove(at: hit)
                try writeDay(of: leaving)
                found = leaving.known
            } else if let stored = series[key] {
                found = stored
            } else {
                let m = mapping(record.type)
                try db.execute("""
                    INSERT INTO sample_series (patient_id, source_id, hk_type, source_name, source_version, device, unit, layout, type,
                        description, codes\(recordID == nil ? "" : ", source_patient_id")) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?\(recordID == nil ? "" : ", ?"))
                    """, [patientID, sourceID, record.type, record.sourceName, record.sourceVersion, record.device, record.unit,
                          SampleLayout.text(record.layout), m.type.rawValue, m.description, CodesJSON.encode(m.codes)] + (recordID.map { [$0] } ?? []))
                found = KnownSeries(id: db.lastInsertRowID, type: m.type, span: 0, storedSpan: 0)
            }
            found.span = max(found.span, endEpoch - start.epoch)
            if recent.count == Self.recentCount {
                let leaving = recent.removeLast()
                series[leaving.key] = leaving.known
                try writeDay(of: leaving)
            }
            holder = RecentSeries(strings: record.strings, key: key, known: found)
            recent.insert(holder, at: 0)
            known = found
        }

        // ?1…?4 the key, ?5 the new id (the insert's), ?6…?11 the details (offsets only where they
        // differ from the start's).
        func run(_ statement: Statement) throws -> Bool {
            statement.bind(1, known.id)
            statement.bind(2, start.epoch)
            statement.bind(3, endEpoch)
            statement.bind(4, record.value)
            statement.bind(5, nextID)
            statement.bind(6, Int64(start.offsetMinutes))
            statement.bind(7, record.end.flatMap { $0.offsetMinutes == start.offsetMinutes ? nil : Int64($0.offsetMinutes) })
            statement.bind(8, record.creation?.epoch)
            statement.bind(9, record.creation.flatMap { $0.offsetMinutes == start.offsetMinutes ? nil : Int64($0.offsetMinutes) })
            statement.bind(10, record.deviceAddress)
            statement.bind(11, record.extras)
            try statement.step()
            statement.reset()
            return db.changes > 0
        }
        if try run(insert) {
            nextID += 1
            holder.known.added += 1
            if keepsDayTotals, known.type == .vitalSign { try addToDay(holder, start: start.epoch, value: record.value) }
            return (.inserted, known.type)
        }
        if try run(update) { return (.updated, known.type) }
        return (.unchanged, known.type)
    }

    private func addToDay(_ holder: RecentSeries, start: Int64, value: DatabaseValue) throws {
        let number: Double
        switch value {
        case let .real(v): number = v
        case let .integer(v): number = Double(v)
        default: return
        }
        let (day, second) = SampleDayTotals.day(of: start)
        let key = DayKey(series: holder.known.id, day: day)
        if holder.day != key {
            try writeDay(of: holder)
            holder.day = key
            holder.total = DayTotal(count: 0, sum: 0, seconds: 0, min: number, max: number)
        }
        holder.total.count += 1
        holder.total.sum += number
        holder.total.seconds += Double(second)
        holder.total.min = Swift.min(holder.total.min, number)
        holder.total.max = Swift.max(holder.total.max, number)
    }

    /// Adds the series' current day total to `sample_days`.
    private func writeDay(of holder: RecentSeries) throws {
        guard let key = holder.day, holder.total.count > 0 else { return }
        try SampleDayTotals(db).add(series: key.series, day: key.day, count: holder.total.count, sum: holder.total.sum,
                                    seconds: holder.total.seconds, minimum: holder.total.min, maximum: holder.total.max)
        holder.day = nil
        holder.total.count = 0
    }

    /// Forgets the series it knows and reads them again (after a rollback to a savepoint). The
    /// samples added but not yet counted are forgotten too, those before the savepoint with those
    /// after: only the schema-3 migration rolls back, and it keeps no counts (schema 9 counts them).
    func forgetSeries() throws {
        precondition(!keepsCounts, "a writer that keeps the series' counts is never rolled back to a savepoint")
        series = [:]
        recent = []
        nextID = max(Self.firstID, (try db.scalarInt("SELECT max(id) FROM samples") ?? 0) + 1)
        try loadSeries()
    }

    private func loadSeries() throws {
        for row in try db.query("""
            SELECT id, hk_type, source_name, source_version, device, unit, layout, type, max_span FROM sample_series
            WHERE patient_id = ? AND source_id = ?
            """, [patientID, sourceID], { s in
                (SampleLayout.layout(s.string(6)!).map { SeriesKey(type: s.string(1)!, sourceName: s.string(2)!, sourceVersion: s.string(3)!,
                                                                device: s.string(4)!, unit: s.string(5)!, layout: $0) },
                 s.int64(0)!, EntryType(rawValue: s.string(7)!) ?? .observation, s.int64(8)!)
            }) {
            if let key = row.0 { series[key] = KnownSeries(id: row.1, type: row.2, span: row.3, storedSpan: row.3) }
        }
    }

    /// Writes what the series learnt (their longest span, for range reads; how many samples they
    /// gained). Call before the transaction ends.
    public func finish() throws {
        for entry in recent { try writeDay(of: entry) }
        for entry in recent { series[entry.key] = entry.known }
        recent = []
        for (key, s) in series where s.span > s.storedSpan {
            try db.execute("UPDATE sample_series SET max_span = max(max_span, ?) WHERE id = ?", [s.span, s.id])
            series[key]!.storedSpan = s.span
        }
        for (key, s) in series where s.added > 0 {
            if keepsCounts { try db.execute("UPDATE sample_series SET sample_count = sample_count + ? WHERE id = ?", [s.added, s.id]) }
            series[key]!.added = 0
        }
    }
}
