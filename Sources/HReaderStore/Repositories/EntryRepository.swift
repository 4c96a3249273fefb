import Foundation
import HReaderCrypto
import HReaderModel

/// Entries of a patient's record, with the source's content and the user's own fields kept apart.
public struct EntryRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    /// The kinds of entry the index of facts holds (`entries_facts`, schema 5: the partial index the
    /// grouping of copies of one fact reads, docs/reconciliation.md), as its `WHERE` names them.
    public static let factTypes: [EntryType] = [.condition, .allergy, .medication, .immunization, .result, .vitalSign, .encounter, .procedure]
    /// The same list as SQL: a query spells the index's condition out so that SQLite uses it.
    /// Written out without `joined(separator:)`, whose generic call looks up a conformance at first use.
    public static let factTypesSQL = factTypes.dropFirst().reduce("'" + factTypes[0].rawValue + "'") { $0 + ", '" + $1.rawValue + "'" }

    static let columns = """
        id, uuid, patient_id, source_id, remote_id, type, description, status, date_text, date_epoch, start_text, \
        start_epoch, end_text, end_epoch, codes, value_number, value_text, unit, dose, reaction, severity, raw, comments, \
        patient_quantity, patient_dose, patient_directions, patient_prescriber, user_deleted, missing_at_source, created, updated
        """

    static func time(_ s: Statement, _ text: Int, _ epoch: Int) -> ClinicalTime? {
        guard let t = s.string(text), let e = s.int64(epoch) else { return nil }
        return ClinicalTime(text: t, epoch: e)
    }

    static func row(_ s: Statement) -> Entry {
        let codes = CodesJSON.decode(s.string(14))
        let content = EntryContent(
            type: EntryType(rawValue: s.string(5)!) ?? .observation, description: s.string(6) ?? "", status: s.string(7),
            date: time(s, 8, 9), start: time(s, 10, 11), end: time(s, 12, 13), codes: codes,
            valueNumber: s.double(15), valueText: s.string(16), unit: s.string(17), dose: s.string(18),
            reaction: s.string(19), severity: s.string(20), raw: s.string(21))
        let user = UserFields(comments: s.string(22), patientQuantity: s.string(23), patientDose: s.string(24),
                              patientDirections: s.string(25), patientPrescriber: s.string(26), deleted: s.int(27) == 1)
        return Entry(id: s.int64(0)!, uuid: s.string(1)!, patientID: s.int64(2)!, sourceID: s.int64(3)!, remoteID: s.string(4)!,
                     content: content, user: user, missingAtSource: s.string(28), created: s.string(29)!, updated: s.string(30)!)
    }

    static func encodeCodes(_ codes: [String: [String]]) -> String { CodesJSON.encode(codes) }

    /// The rows a reader shows: an entry of its own, or the shown copy of a fact (migration 5: the
    /// other copies are in `fact_copies`).
    public static let shownCopy = "NOT EXISTS (SELECT 1 FROM fact_copies WHERE fact_copies.entry_id = entries.id)"

    /// Adds an entry and reads it back. Without a source it is the user's own (the manual source, a
    /// fresh remote id).
    @discardableResult
    public func add(patientID: Int64, content: EntryContent, user: UserFields = UserFields(), sourceID: Int64? = nil,
                    remoteID: String? = nil, now: Date = Date()) throws -> Entry {
        let id = try insert(patientID: patientID, content: content, user: user, sourceID: sourceID, remoteID: remoteID, now: now)
        return try get(id: id)!
    }

    /// Adds an entry; returns its local id (for bulk work, without reading it back).
    @discardableResult
    public func insert(patientID: Int64, content: EntryContent, user: UserFields = UserFields(), sourceID: Int64? = nil,
                       remoteID: String? = nil, now: Date = Date()) throws -> Int64 {
        try insert(patientID: patientID, content: content, user: user, sourceID: sourceID, remoteID: remoteID, now: now, ifNew: false)
        return db.lastInsertRowID
    }

    /// With `ifNew`, an entry whose (patient, source, remote id) exists is left alone: returns
    /// whether a row was inserted (one statement where a lookup and an insert would be two).
    /// `recordID` is the patient row of the source's record that states the entry (migration 5):
    /// the person itself, but for a record merged into another person.
    @discardableResult
    func insert(patientID: Int64, recordID: Int64? = nil, content: EntryContent, user: UserFields = UserFields(), sourceID: Int64?,
                remoteID: String?, now: Date, ifNew: Bool) throws -> Bool {
        let uuid = try SecureRandom.uuidString()
        let source = try sourceID ?? SourceRepository(db).manualSourceID()
        let stamp = Timestamps.now(now)
        let c = content
        // Bound value by value: an import writes thousands of rows, and an array of 30 existentials
        // per row cost more than the row's own insert.
        let statement = try db.cachedStatement(ifNew ? Self.insertIfNewSQL : Self.insertSQL)
        defer { statement.reset() }
        statement.bind(1, uuid)
        statement.bind(2, patientID)
        statement.bind(3, source)
        statement.bind(4, remoteID ?? uuid)
        statement.bind(5, c.type.rawValue)
        statement.bind(6, c.description)
        statement.bind(7, c.status)
        statement.bind(8, c.date?.text)
        statement.bind(9, c.date?.epoch)
        statement.bind(10, c.start?.text)
        statement.bind(11, c.start?.epoch)
        statement.bind(12, c.end?.text)
        statement.bind(13, c.end?.epoch)
        statement.bind(14, Self.encodeCodes(c.codes))
        statement.bind(15, c.valueNumber)
        statement.bind(16, c.valueText)
        statement.bind(17, c.unit)
        statement.bind(18, c.dose)
        statement.bind(19, c.reaction)
        statement.bind(20, c.severity)
        statement.bind(21, c.raw)
        statement.bind(22, user.comments)
        statement.bind(23, user.patientQuantity)
        statement.bind(24, user.patientDose)
        statement.bind(25, user.patientDirections)
        statement.bind(26, user.patientPrescriber)
        statement.bind(27, Int64(user.deleted ? 1 : 0))
        statement.bind(28, stamp)
        statement.bind(29, stamp)
        statement.bind(30, recordID ?? patientID)
        try statement.step()
        return db.changes > 0
    }

    private static let insertColumns = """
        INTO entries (uuid, patient_id, source_id, remote_id, type, description, status, date_text, date_epoch,
            start_text, start_epoch, end_text, end_epoch, codes, value_number, value_text, unit, dose, reaction, severity,
            raw, comments, patient_quantity, patient_dose, patient_directions, patient_prescriber, user_deleted,
            created, updated, source_patient_id)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    private static let insertSQL = "INSERT " + insertColumns
    private static let insertIfNewSQL = "INSERT OR IGNORE " + insertColumns

    public func get(id: Int64) throws -> Entry? {
        if SampleRepository.isSample(id: id) { return try SampleRepository(db: db).get(id: id) }
        return try db.query("SELECT \(Self.columns) FROM entries WHERE id = ?", [id], Self.row).first
    }

    /// The Apple Health `Record` element a sample was imported from, rebuilt: its attributes in
    /// document order and its metadata entries, exactly as the export wrote them. Nil for entries.
    public func appleHealthRecord(id: Int64) throws -> (attributes: [(name: String, value: String)], metadata: [(key: String, value: String)])? {
        let samples = SampleRepository(db: db)
        guard SampleRepository.isSample(id: id),
              let sample = try db.query("SELECT \(SampleRepository.columns) FROM samples s WHERE s.id = ?", [id], { SampleRepository.sample($0, full: true) }).first,
              let series = try samples.series(id: sample.seriesID) else { return nil }
        return samples.element(sample, series)
    }

    /// Whether the entry is an Apple Health sample (migration 3): the export's, taking no user fields.
    public static func isSample(_ entry: Entry) -> Bool { SampleRepository.isSample(id: entry.id) }

    /// Finds an entry by local id, uuid, or a uuid prefix of at least 8 characters.
    public func find(_ reference: String) throws -> Entry? {
        // An all-digit reference is a local id first, else a uuid prefix that happens to be digits.
        if let id = Int64(reference), let found = try get(id: id) { return found }
        let lowered = reference.lowercased()
        guard lowered.count >= 8 else { return nil }
        let matches = try db.query("SELECT \(Self.columns) FROM entries WHERE substr(uuid, 1, ?) = ? LIMIT 2",
                                   [lowered.count, lowered], Self.row)
        return matches.count == 1 ? matches[0] : nil
    }

    /// A patient's entries in timeline order; with a range, those whose date, start or end falls in
    /// [from, to] (epoch seconds, inclusive), each found through its own index.
    /// `limit` and `offset` page through the answer in that order (the web API's paging).
    /// `samples: false` leaves Apple Health samples out (a summary reads only the latest of each
    /// series, through `latestSamples`). A fact several sources state is one entry, the copy
    /// `FactGrouping` shows; `copies: true` lists every stored copy.
    public func list(patientID: Int64, type: EntryType? = nil, from: Int64? = nil, to: Int64? = nil,
                     limit: Int? = nil, offset: Int = 0, samples includeSamples: Bool = true, copies: Bool = false) throws -> [Entry] {
        var (sql, args) = Self.listing(Self.columns, patientID: patientID, type: type, from: from, to: to, copies: copies)
        // Entries and samples are each read in timeline order and merged; a page needs at most
        // offset + limit of each.
        let wanted = limit.map { $0 + offset }
        if let wanted { sql += " LIMIT ?"; args.append(wanted) }
        let stored = try db.query(sql, args, Self.row)
        guard includeSamples else { return Array(stored.dropFirst(offset).prefix(limit ?? Int.max)) }
        let samples = SampleRepository(db: db)
        let found = try samples.samples(patientID: patientID, from: from, to: to, type: type, limit: wanted, full: true)
        guard !found.isEmpty else { return Array(stored.dropFirst(offset).prefix(limit ?? Int.max)) }
        let series = try samples.series(patientID: patientID)
        let merged = Self.merge(stored, found.map { samples.entry($0, series[$0.seriesID]!) }) {
            ($0.content.effectiveTime?.epoch ?? Int64.min, $0.id)
        }
        return Array(merged.dropFirst(offset).prefix(limit ?? Int.max))
    }

    /// `list` one entry at a time, in its order, without holding them: the entries' ids and times
    /// are sorted by SQLite (a clinical record's worth of small rows) and each row is read when it
    /// is reached; the samples stream from their series (`forEachSample`), merged in, without the
    /// raw JSON a listing never shows. What `entries list` prints of a decade of a watch, in memory
    /// that does not grow with it.
    public func forEachListed(patientID: Int64, type: EntryType? = nil, from: Int64? = nil, to: Int64? = nil, copies: Bool = false,
                              _ body: (Entry) throws -> Void) throws {
        let (sql, args) = Self.listing("id, coalesce(date_epoch, start_epoch, end_epoch)", patientID: patientID, type: type,
                                       from: from, to: to, copies: copies)
        // (time, id) as `list` merges them: an undated entry first.
        let keys = try db.query(sql, args) { ($0.int64(1) ?? Int64.min, $0.int64(0)!) }
        let fetch = try db.prepare("SELECT \(Self.columns) FROM entries WHERE id = ?")
        var next = 0
        /// The stored entries up to `key` (all that are left, given none).
        func stored(upTo key: (Int64, Int64)?) throws {
            while next < keys.count, key.map({ keys[next] <= $0 }) ?? true {
                try fetch.bind([keys[next].1])
                if try fetch.step() { try body(Self.row(fetch)) }
                fetch.reset()
                next += 1
            }
        }
        let samples = SampleRepository(db: db)
        let series = try samples.series(patientID: patientID)
        try samples.forEachSample(patientID: patientID, from: from, to: to, type: type, limit: nil, full: true) { sample in
            let entry = samples.entry(sample, series[sample.seriesID]!, raw: false)
            try stored(upTo: (entry.content.effectiveTime?.epoch ?? Int64.min, entry.id))
            try body(entry)
        }
        try stored(upTo: nil)
    }

    /// The statement `list` and `forEachListed` read the stored entries with: `columns` of the
    /// patient's entries (of `type`, one per fact unless `copies`) whose date, start or end lies in
    /// `from...to`, in timeline order.
    static func listing(_ columns: String, patientID: Int64, type: EntryType?, from: Int64?, to: Int64?,
                        copies: Bool) -> (sql: String, arguments: [DatabaseValueConvertible?]) {
        var sql: String
        var args: [DatabaseValueConvertible?]
        if from != nil || to != nil {
            // One index search per time column (SQLite's planner would otherwise scan the patient's
            // rows through entries_patient_type): the cost follows the size of the answer.
            let lo = from ?? Int64.min, hi = to ?? Int64.max
            sql = """
                SELECT \(columns) FROM entries WHERE id IN (
                    SELECT id FROM entries INDEXED BY entries_patient_date WHERE patient_id = ? AND date_epoch BETWEEN ? AND ?
                    UNION SELECT id FROM entries INDEXED BY entries_patient_start WHERE patient_id = ? AND start_epoch BETWEEN ? AND ?
                    UNION SELECT id FROM entries INDEXED BY entries_patient_end WHERE patient_id = ? AND end_epoch BETWEEN ? AND ?)
                """
            args = [patientID, lo, hi, patientID, lo, hi, patientID, lo, hi]
        } else {
            sql = "SELECT \(columns) FROM entries WHERE patient_id = ?"
            args = [patientID]
        }
        if let type { sql += " AND type = ?"; args.append(type.rawValue) }
        if !copies { sql += " AND \(shownCopy)" }
        return (sql + " ORDER BY coalesce(date_epoch, start_epoch, end_epoch), id", args)
    }

    /// Two lists sorted by `key`, merged in that order.
    static func merge<T>(_ a: [T], _ b: [T], by key: (T) -> (Int64, Int64)) -> [T] {
        guard !a.isEmpty else { return b }
        guard !b.isEmpty else { return a }
        var out: [T] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count, j < b.count {
            if key(b[j]) < key(a[i]) { out.append(b[j]); j += 1 } else { out.append(a[i]); i += 1 }
        }
        out.append(contentsOf: a[i...])
        out.append(contentsOf: b[j...])
        return out
    }

    /// The latest Apple Health sample of each of a patient's series of `type` that starts at or after
    /// `from`: one read per series through the samples' primary key, however many samples it holds.
    public func latestSamples(patientID: Int64, type: EntryType, from: Int64) throws -> [Entry] {
        let samples = SampleRepository(db: db)
        let series = try samples.series(patientID: patientID)
        return try series.values.filter { $0.type == type }.sorted { $0.id < $1.id }.compactMap { one in
            try samples.latest(seriesID: one.id, from: from).map { samples.entry($0, one) }
        }
    }

    /// The sources a patient's entries and samples came from.
    public func sourceIDs(patientID: Int64) throws -> Set<Int64> {
        Set(try db.query("""
            SELECT DISTINCT source_id FROM entries WHERE patient_id = ?
            UNION SELECT DISTINCT source_id FROM sample_series WHERE patient_id = ?
            """, [patientID, patientID]) { $0.int64(0)! })
    }

    /// The latest `date ?? start ?? end` among a patient's entries that are not struck.
    public func latestTime(patientID: Int64) throws -> Int64? {
        let stored = try db.scalarInt("""
            SELECT max(coalesce(date_epoch, start_epoch, end_epoch)) FROM entries WHERE patient_id = ? AND user_deleted = 0
            """, [patientID])
        let sampled = try SampleRepository(db: db).latestTime(patientID: patientID)
        return [stored, sampled].compactMap { $0 }.max()
    }

    /// Entries and samples.
    public func count(patientID: Int64? = nil) throws -> Int {
        let samples = try SampleRepository(db: db).count(patientID: patientID)
        if let patientID { return samples + Int(try db.scalarInt("SELECT count(*) FROM entries WHERE patient_id = ?", [patientID]) ?? 0) }
        return samples + Int(try db.scalarInt("SELECT count(*) FROM entries") ?? 0)
    }

    /// Replaces the user's own fields of an entry; the source's content is untouched.
    public func setUserFields(id: Int64, _ user: UserFields, now: Date = Date()) throws {
        guard !SampleRepository.isSample(id: id) else {
            throw DatabaseError(code: 1, message: "entry \(id) is an Apple Health sample; samples take no comments or strike-throughs", sql: nil)
        }
        try db.execute("""
            UPDATE entries SET comments = ?, patient_quantity = ?, patient_dose = ?, patient_directions = ?,
                               patient_prescriber = ?, user_deleted = ?, updated = ? WHERE id = ?
            """, [user.comments, user.patientQuantity, user.patientDose, user.patientDirections, user.patientPrescriber,
                  user.deleted, Timestamps.now(now), id])
        // A struck entry leaves its fact in the regrouping that follows in the same transaction
        // (`FactGrouping.regroup(touched:)`), which finds its group by its `fact_copies` pointers:
        // they stay until then.
    }
}

extension EntryRepository {
    /// One stored copy of a fact: the entry and the source it came from.
    public struct Copy: Sendable, Equatable {
        public var entryID: Int64
        public var sourceID: Int64
        public var sourceName: String

        public init(entryID: Int64, sourceID: Int64, sourceName: String) {
            self.entryID = entryID; self.sourceID = sourceID; self.sourceName = sourceName
        }
    }

    /// Every copy of the fact an entry states (the entry alone when no other source states it),
    /// the shown copy first, then the entry asked about.
    public func copies(of entryID: Int64) throws -> [Copy] {
        guard !SampleRepository.isSample(id: entryID) else { return [] }
        let fact = try factID(of: entryID) ?? entryID
        return try db.query("""
            SELECT e.id, e.source_id, s.display_name FROM entries e JOIN sources s ON s.id = e.source_id
            WHERE e.id IN (?1, ?2) OR e.id IN (SELECT entry_id FROM fact_copies WHERE fact_id = ?1)
            ORDER BY e.id = ?1 DESC, e.id = ?2 DESC, e.id
            """, [fact, entryID]) { Copy(entryID: $0.int64(0)!, sourceID: $0.int64(1)!, sourceName: $0.string(2) ?? "") }
    }

    /// For each fact of a patient that several copies state: its shown entry id → the copies' source
    /// names (each once, the shown copy's first) and how many copies there are.
    public func factSources(patientID: Int64) throws -> [Int64: (names: [String], copies: Int)] {
        var out: [Int64: (names: [String], copies: Int)] = [:]
        try db.query("""
            SELECT f.fact_id, sf.display_name, sc.display_name FROM fact_copies f
            JOIN entries c ON c.id = f.entry_id JOIN entries r ON r.id = f.fact_id
            JOIN sources sc ON sc.id = c.source_id JOIN sources sf ON sf.id = r.source_id
            WHERE c.patient_id = ? ORDER BY f.fact_id, f.entry_id
            """, [patientID]) { ($0.int64(0)!, $0.string(1) ?? "", $0.string(2) ?? "") }.forEach { fact, shownName, copyName in
            var entry = out[fact] ?? ([shownName], 1)
            if !entry.names.contains(copyName) { entry.names.append(copyName) }
            entry.copies += 1
            out[fact] = entry
        }
        return out
    }

    /// The fact an entry belongs to (its group's shown copy), nil when it is a fact of its own.
    public func factID(of entryID: Int64) throws -> Int64? {
        if let shown = try db.scalarInt("SELECT fact_id FROM fact_copies WHERE entry_id = ?", [entryID]) { return shown }
        return try db.scalarInt("SELECT 1 FROM fact_copies WHERE fact_id = ? LIMIT 1", [entryID]) != nil ? entryID : nil
    }
}

/// The columns a timeline needs, without the raw source document or the user's notes.
public struct TimelineRow: Sendable {
    public let id: Int64
    /// The entry's uuid; a sample's is made from its id when asked for (most rows of a page are vitals and activity, which show none).
    public var uuid: String { storedUUID ?? SampleRepository.uuid(id) }
    let storedUUID: String?
    /// Whether it is a sample (of a series) rather than an `entries` row.
    public var isSample: Bool { SampleRepository.isSample(id: id) }
    public let sourceID: Int64
    public let type: EntryType
    public let description: String
    /// date ?? start ?? end, epoch seconds.
    public let time: Int64
    public let valueNumber: Double?
    public let valueText: String?
    public let unit: String?
    public let codes: [String: [String]]
    /// The entry's end, when it states one (a workout's, a stay's); nil for samples.
    public var end: Int64? = nil
}

extension EntryRepository {
    /// Entries of a patient whose date, start or end falls in [from, to], ordered by date ?? start ?? end,
    /// without struck entries; each time column is searched through its own index. Codes are decoded only
    /// when asked for.
    public func timelineRows(patientID: Int64, from: Int64, to: Int64, type: EntryType? = nil, withCodes: Bool = false) throws -> [TimelineRow] {
        var rows: [TimelineRow] = []
        try forEachTimelineRow(patientID: patientID, from: from, to: to, type: type, withCodes: withCodes) { rows.append($0) }
        return rows
    }

    /// The same rows handed over one at a time: the entries (a clinical record's worth) are read
    /// first, the samples (maybe millions) stream from their cursor, merged in (time, id) order.
    /// `series` picks the sample series read (all by default); `entries: false` reads samples only.
    public func forEachTimelineRow(patientID: Int64, from: Int64, to: Int64, type: EntryType? = nil, withCodes: Bool = false,
                                   series seriesFilter: ((Int64) -> Bool)? = nil, entries includeEntries: Bool = true,
                                   _ body: (TimelineRow) throws -> Void) throws {
        var args: [DatabaseValueConvertible?] = [patientID, from, to, patientID, from, to, patientID, from, to]
        if let type { args.append(type.rawValue) }
        let sql = """
            SELECT id, uuid, source_id, type, description, coalesce(date_epoch, start_epoch, end_epoch) AS t,
                   value_number, value_text, unit, \(withCodes ? "codes" : "NULL"), end_epoch
            FROM entries WHERE id IN (
                SELECT id FROM entries INDEXED BY entries_patient_date WHERE patient_id = ? AND date_epoch BETWEEN ? AND ?
                UNION SELECT id FROM entries INDEXED BY entries_patient_start WHERE patient_id = ? AND start_epoch BETWEEN ? AND ?
                UNION SELECT id FROM entries INDEXED BY entries_patient_end WHERE patient_id = ? AND end_epoch BETWEEN ? AND ?)
              AND user_deleted = 0 AND \(Self.shownCopy)\(type == nil ? "" : " AND type = ?")
            ORDER BY t, id
            """
        let stored = !includeEntries ? [] : try db.query(sql, args) { s in
            TimelineRow(id: s.int64(0)!, storedUUID: s.string(1)!, sourceID: s.int64(2)!, type: EntryType(rawValue: s.string(3)!) ?? .observation,
                        description: s.string(4) ?? "", time: s.int64(5)!, valueNumber: s.double(6), valueText: s.string(7),
                        unit: s.string(8), codes: withCodes ? CodesJSON.decode(s.string(9)) : [:], end: s.int64(10))
        }
        let samples = SampleRepository(db: db)
        // Only the series the caller reads (a timeline page reads its vital signs and activity as
        // numbers, and builds none of theirs here).
        let series = try samples.series(patientID: patientID, withCodes: withCodes, keep: seriesFilter)
        var next = 0   // the next stored row; on equal (time, id) it goes first
        if !series.isEmpty {
            var words: [String: String] = [:]
            var last: SampleRepository.Series?
            try samples.forEachSample(patientID: patientID, from: from, to: to, type: type, limit: nil, full: false,
                                      series: seriesFilter) { sample in
                if last?.id != sample.seriesID { last = series[sample.seriesID] }
                let row = samples.timelineRow(sample, last!, withCodes: withCodes, words: &words)
                while next < stored.count, (stored[next].time, stored[next].id) <= (row.time, row.id) {
                    try body(stored[next])
                    next += 1
                }
                try body(row)
            }
        }
        while next < stored.count {
            try body(stored[next])
            next += 1
        }
    }
}
