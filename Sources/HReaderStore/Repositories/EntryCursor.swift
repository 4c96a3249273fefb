import HReaderModel

/// A patient's entries and Apple Health samples in timeline order (`date ?? start ?? end`, then id;
/// undated entries first, as `EntryRepository.list` orders them), read one at a time: what an export
/// of ten million samples walks without holding them. The entries' ids are sorted by SQLite (a
/// clinical record's worth of small rows) and each entry is read when it is reached; the samples
/// stream from their series, merged in.
///
///     var cursor = try EntryCursor(db, patientID: 1, types: [.vitalSign, .activity])
///     while let entry = try cursor.next() { … }
public struct EntryCursor {
    private let ids: Statement
    private let fetch: Statement
    private let samples: SampleRepository
    private var merge: SampleRepository.SampleMerge
    private let series: [Int64: SampleRepository.Series]
    private let from: Int64?
    private let raw: Bool
    private var stored: Entry?
    private var sample: SampleRepository.Sample?
    /// The series of the sample `next` returned last; nil when it returned an entry (or nothing).
    public private(set) var lastSeriesID: Int64?

    /// Entries of `types`, one per fact, struck ones included. With `from`, only those whose time is
    /// at or after it (undated ones left out). `raw: false` leaves the samples' raw JSON unbuilt (an
    /// export never reads it); entries keep theirs.
    public init(_ db: Database, patientID: Int64, types: Set<EntryType>, from: Int64? = nil, raw: Bool = true) throws {
        let typeList = "[" + types.map { "\"\($0.rawValue)\"" }.sorted().joined(separator: ",") + "]"
        ids = try db.prepare("""
            SELECT id FROM entries WHERE patient_id = ? AND type IN (SELECT value FROM json_each(?)) AND \(EntryRepository.shownCopy)
              AND (? IS NULL OR coalesce(date_epoch, start_epoch, end_epoch) >= ?)
            ORDER BY coalesce(date_epoch, start_epoch, end_epoch), id
            """)
        try ids.bind([patientID, typeList, from, from])
        fetch = try db.prepare("SELECT \(EntryRepository.columns) FROM entries WHERE id = ?")
        samples = SampleRepository(db: db)
        series = try samples.series(patientID: patientID).filter { types.contains($0.value.type) }
        let spans = series.values.sorted { $0.id < $1.id }.map { ($0.id, $0.maxSpan) }
        merge = try SampleRepository.SampleMerge(db: db, series: spans, from: from, to: nil, full: true)
        self.from = from
        self.raw = raw
        stored = try nextStored()
        sample = try nextSample()
    }

    /// The next entry or sample; nil at the end. On equal (time, id) the entry goes first.
    public mutating func next() throws -> Entry? {
        if let sample {
            let first = stored.map { (sample.start, sample.id) < ($0.content.effectiveTime?.epoch ?? Int64.min, $0.id) } ?? true
            if first {
                self.sample = try nextSample()
                lastSeriesID = sample.seriesID
                return samples.entry(sample, series[sample.seriesID]!, raw: raw)
            }
        }
        lastSeriesID = nil
        guard let entry = stored else { return nil }
        stored = try nextStored()
        return entry
    }

    private func nextStored() throws -> Entry? {
        guard try ids.step() else { return nil }
        try fetch.bind([ids.int64(0)!])
        defer { fetch.reset() }
        return try fetch.step() ? EntryRepository.row(fetch) : nil
    }

    /// A sample that starts before `from` (a range read also gives those that end after it) is skipped.
    private mutating func nextSample() throws -> SampleRepository.Sample? {
        while let next = try merge.next() {
            if let from, next.start < from { continue }
            return next
        }
        return nil
    }
}
