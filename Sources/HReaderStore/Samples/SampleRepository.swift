import CSQLCipher
import Foundation
import HReaderJSON
import HReaderModel

/// Reads Apple Health samples (migration 3) as the entries they stand for: the same content, raw
/// JSON and remote id the mapping gave such a Record when it was an `entries` row, rebuilt from the
/// series and the sample's numbers. Samples carry no user fields: they are the export's.
struct SampleRepository {
    let db: Database

    /// A class: every sample of a page refers to its series, and a struct of ten fields would be
    /// copied (and each string retained) per sample.
    final class Series {
        let id: Int64
        let patientID: Int64
        let sourceID: Int64
        let hkType: String
        let sourceName: String
        let sourceVersion: String
        let device: String
        let unit: String
        let layout: [Substring]
        let layoutCode: UInt64
        let type: EntryType
        let description: String
        let codesText: String
        let maxSpan: Int64
        /// Empty unless asked for: a timeline page without `--detail` does not need them.
        let codes: [String: [String]]

        init(_ s: Statement, withCodes: Bool) {
            id = s.int64(0)!; patientID = s.int64(1)!; sourceID = s.int64(2)!; hkType = s.string(3)!; sourceName = s.string(4)!
            sourceVersion = s.string(5)!; device = s.string(6)!; unit = s.string(7)!
            let layoutText = s.string(8)!
            layout = layoutText.split(separator: ",")
            layoutCode = SampleLayout.layout(layoutText) ?? 0
            type = EntryType(rawValue: s.string(9)!) ?? .observation
            description = s.string(10)!; codesText = s.string(11)!; maxSpan = s.int64(12)!
            codes = withCodes ? CodesJSON.decode(codesText) : [:]
        }
    }

    /// One stored sample, as read.
    struct Sample {
        let seriesID: Int64
        let start: Int64
        let end: Int64
        let valueNumber: Double?
        let valueText: String
        let id: Int64
        let offset: Int
        let endOffset: Int
        let creation: Int64?
        let creationOffset: Int
        let deviceAddress: Int64?
        let extras: String?
    }

    static func isSample(id: Int64) -> Bool { id >= SampleWriter.firstID }

    /// `keep`: the series to build (each reads its layout and strings); nil, all of them.
    func series(patientID: Int64?, withCodes: Bool = true, keep: ((Int64) -> Bool)? = nil) throws -> [Int64: Series] {
        try series(patientID == nil ? "" : " WHERE patient_id = ?", patientID.map { [$0] } ?? [], withCodes: withCodes, keep: keep)
    }

    func series(id: Int64) throws -> Series? {
        try series(" WHERE id = ?", [id])[id]
    }

    private func series(_ condition: String, _ arguments: [DatabaseValueConvertible?], withCodes: Bool = true,
                        keep: ((Int64) -> Bool)? = nil) throws -> [Int64: Series] {
        let sql = "SELECT id, patient_id, source_id, hk_type, source_name, source_version, device, unit, layout, type, description, codes, max_span FROM sample_series"
        var found: [Int64: Series] = [:]
        try db.forEachRow(sql + condition, arguments) { row in
            if let keep, !keep(row.int64(0)!) { return }
            let series = Series(row, withCodes: withCodes)
            found[series.id] = series
        }
        return found
    }

    static let columns = "s.series_id, s.start_epoch, s.end_epoch, s.value, s.id, s.utc_offset, s.end_offset, s.creation_epoch, s.creation_offset, s.device_address, s.extras"

    static func sample(_ s: Statement, full: Bool) -> Sample {
        let isReal = sqlite3_column_type(s.handle, 3) == SQLITE_FLOAT
        let offset = s.int(5)!
        return Sample(seriesID: s.int64(0)!, start: s.int64(1)!, end: s.int64(2)!, valueNumber: isReal ? s.double(3) : nil,
                      valueText: isReal ? "" : (s.string(3) ?? ""), id: s.int64(4)!, offset: offset,
                      endOffset: full ? (s.int(6) ?? offset) : offset, creation: full ? s.int64(7) : nil,
                      creationOffset: full ? (s.int(8) ?? offset) : offset, deviceAddress: full ? s.int64(9) : nil,
                      extras: full ? s.string(10) : nil)
    }

    /// The samples of a patient whose start or end falls in [from, to], by start then id. A sample
    /// starting before `from` can only end in range if it started within its series' longest span.
    func samples(patientID: Int64, from: Int64?, to: Int64?, type: EntryType?, limit: Int?, full: Bool) throws -> [Sample] {
        var out: [Sample] = []
        try forEachSample(patientID: patientID, from: from, to: to, type: type, limit: limit, full: full) { out.append($0) }
        return out
    }

    /// The same, one at a time: a decade page reads a million without holding them. Each series is
    /// read in its own order (the table is clustered on series and start, so that is a range scan)
    /// and the series are merged here: one ORDER BY over all of them would have SQLite sort the
    /// whole page in memory first. Ranges of a week or less are few rows, and are sorted by SQLite.
    func forEachSample(patientID: Int64, from: Int64?, to: Int64?, type: EntryType?, limit: Int?, full: Bool,
                       series seriesFilter: ((Int64) -> Bool)? = nil, _ body: (Sample) throws -> Void) throws {
        var seriesSQL = "SELECT id, max_span FROM sample_series WHERE patient_id = ?"
        var seriesArgs: [DatabaseValueConvertible?] = [patientID]
        if let type { seriesSQL += " AND type = ?"; seriesArgs.append(type.rawValue) }
        let spans = try db.query(seriesSQL, seriesArgs) { ($0.int64(0)!, $0.int64(1)!) }.filter { seriesFilter?($0.0) ?? true }
        // A short range (a day or a week page) holds few samples: one statement over every series, its
        // rows sorted by SQLite, costs less than a statement prepared for each series (a watch's export
        // has twenty or more, each prepare tens of microseconds of a page's few milliseconds).
        let lo = max(from ?? Int64.min, -(1 << 52)), hi = min(to ?? Int64.max, 1 << 52)
        if from != nil, to != nil, hi - lo <= Self.sortedRangeSeconds {
            let ids = "[" + spans.map { String($0.0) }.joined(separator: ",") + "]"
            try db.forEachRow("""
                SELECT \(Self.columns) FROM sample_series ss JOIN samples s ON s.series_id = ss.id
                WHERE ss.id IN (SELECT value FROM json_each(?)) AND s.start_epoch BETWEEN ? - ss.max_span AND ?
                  AND (s.start_epoch >= ? OR s.end_epoch BETWEEN ? AND ?)
                ORDER BY s.start_epoch, s.id LIMIT ?
                """, [ids, lo, hi, lo, lo, hi, Int64(limit ?? -1)]) { try body(Self.sample($0, full: full)) }
            return
        }
        var merge = try SampleMerge(db: db, series: spans, from: from, to: to, full: full)
        var remaining = limit ?? Int.max
        while remaining > 0, let sample = try merge.next() {
            try body(sample)
            remaining -= 1
        }
    }

    /// Samples of several series in (start, id) order, one at a time: each series is read in its own
    /// order (the table is clustered on series and start, so that is a range scan) and the series
    /// are merged here, as `forEachSample` hands them out and an export reads them.
    struct SampleMerge {
        private var cursors: [SeriesCursor] = []

        /// `series`: ids and their longest span; `from`/`to` as `forEachSample`'s.
        init(db: Database, series: [(Int64, Int64)], from: Int64?, to: Int64?, full: Bool) throws {
            let lo = max(from ?? Int64.min, -(1 << 52)), hi = min(to ?? Int64.max, 1 << 52)
            var sql = "SELECT \(SampleRepository.columns) FROM samples s WHERE s.series_id = ?"
            if from != nil || to != nil {
                sql += " AND s.start_epoch BETWEEN ? - ? AND ? AND (s.start_epoch >= ? OR s.end_epoch BETWEEN ? AND ?)"
            }
            // The primary key's own order: SQLite streams it, where "start, id" would pass every row
            // through a sorter. Samples of one series that start at the same second (rare) are put in
            // id order here, so the order readers see is (start, id) as before.
            sql += " ORDER BY s.start_epoch, s.end_epoch, s.value"
            for (id, span) in series {
                let statement = try db.prepare(sql)
                try statement.bind(from != nil || to != nil ? [id, lo, span, hi, lo, lo, hi] : [id])
                var cursor = SeriesCursor(statement: statement, full: full)
                if try cursor.advance() { cursors.append(cursor) }
            }
        }

        /// The next sample of all the series: the smallest (start, id) of their heads.
        mutating func next() throws -> Sample? {
            guard !cursors.isEmpty else { return nil }
            var best = 0
            for i in 1..<cursors.count where (cursors[i].head.start, cursors[i].head.id) < (cursors[best].head.start, cursors[best].head.id) {
                best = i
            }
            let sample = cursors[best].head!
            if try !cursors[best].advance() { cursors.remove(at: best) }
            return sample
        }
    }

    /// Ranges up to this long are read with one sorted statement (8 days: a week page in any zone).
    static let sortedRangeSeconds: Int64 = 8 * 86_400

    /// One series' samples in (start, id) order from a statement in (start, end, value) order; with
    /// `descending`, in (start, id) descending order from a statement in the reverse of that.
    struct SeriesCursor {
        let statement: Statement
        let full: Bool
        var descending = false
        /// Samples with the head's start still to come, in id order (nearly always empty).
        private var tied: [Sample] = []
        /// The row read past the head's start, not handed out yet.
        private var lookahead: Sample?
        /// The statement said done (stepping it again would start it over).
        private var exhausted = false
        private(set) var head: Sample! = nil

        init(statement: Statement, full: Bool, descending: Bool = false) {
            self.statement = statement; self.full = full; self.descending = descending
        }

        /// Moves to the next sample; false at the end.
        mutating func advance() throws -> Bool {
            if !tied.isEmpty {
                head = tied.removeFirst()
                return true
            }
            guard let first = try lookahead ?? next() else { return false }
            lookahead = nil
            var group = [first]
            while let row = try next() {
                if row.start != first.start { lookahead = row; break }
                group.append(row)
            }
            if group.count > 1 { group.sort { descending ? $0.id > $1.id : $0.id < $1.id } }
            head = group.removeFirst()
            tied = group
            return true
        }

        private mutating func next() throws -> Sample? {
            guard !exhausted else { return nil }
            if try statement.step() { return SampleRepository.sample(statement, full: full) }
            exhausted = true
            return nil
        }
    }

    /// The series' sample that starts last, when it starts at or after `from`.
    func latest(seriesID: Int64, from: Int64) throws -> Sample? {
        try db.query("""
            SELECT \(Self.columns) FROM samples s WHERE s.series_id = ? AND s.start_epoch >= ?
            ORDER BY s.start_epoch DESC, s.end_epoch DESC LIMIT 1
            """, [seriesID, from]) { Self.sample($0, full: true) }.first
    }

    func get(id: Int64) throws -> Entry? {
        guard let sample = try db.query("SELECT \(Self.columns) FROM samples s WHERE s.id = ?", [id], { Self.sample($0, full: true) }).first,
              let series = try series(id: sample.seriesID) else { return nil }
        return entry(sample, series)
    }

    /// Samples stored, from the series' counts (schema 9): one row a series, not a walk over millions.
    func count(patientID: Int64?) throws -> Int {
        if let patientID {
            return Int(try db.scalarInt("SELECT sum(sample_count) FROM sample_series WHERE patient_id = ?", [patientID]) ?? 0)
        }
        return Int(try db.scalarInt("SELECT sum(sample_count) FROM sample_series") ?? 0)
    }

    /// A patient's samples by the entry type they read as, from the series' counts.
    func countsByType(patientID: Int64) throws -> [EntryType: Int] {
        var counts: [EntryType: Int] = [:]
        try db.forEachRow("SELECT type, sum(sample_count) FROM sample_series WHERE patient_id = ? GROUP BY type", [patientID]) { row in
            let type = EntryType(rawValue: row.string(0)!) ?? .observation
            counts[type, default: 0] += Int(row.int64(1) ?? 0)
        }
        return counts.filter { $0.value > 0 }
    }

    /// One series' samples newest first, by (start, id) descending: the primary key read backwards.
    func newestFirst(seriesID: Int64) throws -> SeriesCursor {
        let statement = try db.prepare("""
            SELECT \(Self.columns) FROM samples s WHERE s.series_id = ? ORDER BY s.start_epoch DESC, s.end_epoch DESC, s.value DESC
            """)
        try statement.bind([seriesID])
        return SeriesCursor(statement: statement, full: true, descending: true)
    }

    func latestTime(patientID: Int64) throws -> Int64? {
        try db.scalarInt("""
            SELECT max((SELECT max(start_epoch) FROM samples WHERE series_id = ss.id)) FROM sample_series ss WHERE ss.patient_id = ?
            """, [patientID])
    }

    // MARK: Projection

    /// The entry's value as the mapping gave it: a number when the text reads as one, else the text in words.
    static func value(_ sample: Sample) -> (number: Double?, text: String?) {
        if let number = sample.valueNumber { return (number, nil) }
        return value(text: sample.valueText)
    }

    /// A value stored as text, as an entry shows it: the number it reads as (`"72.50"`), else its words
    /// (`HKCategoryValueSleepAnalysisAsleepCore` → "Asleep core"); nil for an empty text.
    static func value(text: String) -> (number: Double?, text: String?) {
        if let number = Double(text), number.isFinite { return (number, nil) }
        return (nil, text.isEmpty ? nil : HealthKitText.readable(text))
    }

    /// The uuid readers see: a UUID version 8 (custom) naming the sample id, not random.
    static func uuid(_ id: Int64) -> String {
        let hex = String(id, radix: 16)
        return "00000000-0000-8000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }

    /// `words` keeps the category values in words already made (a page repeats a handful).
    func timelineRow(_ sample: Sample, _ series: Series, withCodes: Bool, words: inout [String: String]) -> TimelineRow {
        var (number, text): (Double?, String?) = (sample.valueNumber, nil)
        if number == nil {
            if let word = words[sample.valueText] {
                text = word
            } else {
                (number, text) = Self.value(sample)
                if let text { words[sample.valueText] = text }
            }
        }
        return TimelineRow(id: sample.id, storedUUID: nil, sourceID: series.sourceID, type: series.type,
                           description: series.description, time: sample.start, valueNumber: number, valueText: text,
                           unit: series.unit.isEmpty ? nil : series.unit, codes: withCodes ? series.codes : [:])
    }

    /// The Record element's attributes, exactly as the export wrote them, and its metadata entries.
    func element(_ sample: Sample, _ series: Series) -> (attributes: [(name: String, value: String)], metadata: [(key: String, value: String)]) {
        let record = record(sample, series)
        let (attributes, metadata) = (record.attributes, record.metadata)
        return (attributes, metadata)
    }

    /// The Record element of a sample: its series' strings and layout, its own numbers.
    func record(_ sample: Sample, _ series: Series) -> SampleRecord {
        var record = SampleRecord()
        record.strings = SampleSeriesStrings(type: series.hkType, sourceName: series.sourceName, sourceVersion: series.sourceVersion,
                                             device: series.device, unit: series.unit)
        record.layout = series.layoutCode
        record.start = SampleRecord.Time(epoch: sample.start, offsetMinutes: sample.offset)
        record.end = SampleRecord.Time(epoch: sample.end, offsetMinutes: sample.endOffset)
        record.creation = SampleRecord.Time(epoch: sample.creation ?? sample.start, offsetMinutes: sample.creationOffset)
        record.deviceAddress = sample.deviceAddress
        record.value = sample.valueNumber.map { .real($0) } ?? .text(sample.valueText)
        record.extras = sample.extras
        return record
    }

    /// The entry a sample reads as. `raw: false` leaves out its raw JSON, for a reader that never
    /// looks at it (an export of millions).
    func entry(_ sample: Sample, _ series: Series, raw withRaw: Bool = true) -> Entry {
        let record = record(sample, series)
        let raw = withRaw ? Self.raw(record.attributes, record.metadata) : nil
        let (number, text) = Self.value(sample)
        var content = EntryContent(type: series.type, description: series.description, codes: series.codes,
                                   valueNumber: number, valueText: text, unit: series.unit.isEmpty ? nil : series.unit, raw: raw)
        let start = ClinicalTime(text: AppleHealthDate.rfc3339(sample.start, offsetMinutes: sample.offset), epoch: sample.start)
        if series.layout.contains("endDate"), sample.end != sample.start {
            content.start = start
            content.end = ClinicalTime(text: AppleHealthDate.rfc3339(sample.end, offsetMinutes: sample.endOffset), epoch: sample.end)
        } else {
            content.date = start
        }
        let remoteID = HealthKitText.remoteID(kind: "Record") { record.attribute($0) }
        let stamp = RFC3339.utc(sample.creation ?? sample.start)
        return Entry(id: sample.id, uuid: Self.uuid(sample.id), patientID: series.patientID, sourceID: series.sourceID, remoteID: remoteID,
                     content: content, user: UserFields(), missingAtSource: nil, created: stamp, updated: stamp)
    }

    /// The Record element as the entry's raw JSON: its attributes in document order, then its metadata.
    static func raw(_ attributes: [(name: String, value: String)], _ metadata: [(key: String, value: String)]) -> String {
        var raw = "{\"element\":\"Record\""
        for (name, value) in attributes {
            raw += ","
            JSONText.quote(name, into: &raw)
            raw += ":"
            JSONText.quote(value, into: &raw)
        }
        if !metadata.isEmpty {
            raw += ",\"metadata\":{"
            for (i, entry) in metadata.enumerated() {
                if i > 0 { raw += "," }
                JSONText.quote(entry.key, into: &raw)
                raw += ":"
                JSONText.quote(entry.value, into: &raw)
            }
            raw += "}"
        }
        raw += "}"
        return raw
    }
}
