import HReaderModel

/// What a view of one person reads when it shows a few things out of everything: the newest readings
/// of a kind, counts, the kinds there are. Each is an indexed read whose cost follows what is shown
/// (issue 41): a person with ten million Apple Health samples reads as fast as one with ten.
extension EntryRepository {
    /// What every entry of one kind shares: a tile tells the kinds it shows by these (blood pressure
    /// by its description, total cholesterol by description or LOINC code), so it can choose the kinds
    /// before reading a single entry. An Apple Health series is one kind.
    public struct Kind: Sendable {
        public let type: EntryType
        public let description: String
        public let codes: [String: [String]]

        public init(type: EntryType, description: String, codes: [String: [String]]) {
            self.type = type; self.description = description; self.codes = codes
        }
    }

    /// A patient's current entries and Apple Health samples of `types` (not struck through, one entry
    /// per fact, as `list` shows them), newest first: by `date ?? start ?? end` and id, both
    /// descending, undated entries last. `body` returns false once it has what it needs; nothing
    /// beyond that is read.
    ///
    /// With `kinds`, only the kinds it accepts are read, each from its end of `entries_patient_kind`
    /// or its series' samples, so a tile that wants the last four blood pressures reads about four
    /// of each kind it accepts. Without, every entry of the types is a candidate: their ids are sorted
    /// by time (a clinical record's worth of small rows) and the samples of every series merged in.
    ///
    ///     try entries.forEachNewest(patientID: 1, types: [.vitalSign], kinds: { $0.description == "BMI" }) { entry in
    ///         latest.append(entry)
    ///         return latest.count < 4
    ///     }
    public func forEachNewest(patientID: Int64, types: [EntryType], kinds accepts: ((Kind) -> Bool)? = nil,
                              _ body: (Entry) throws -> Bool) throws {
        let typeList = "[" + types.map { "\"\($0.rawValue)\"" }.joined(separator: ",") + "]"
        var sources: [NewestSource] = []

        if let accepts {
            let kinds = try db.query("""
                SELECT DISTINCT type, description, codes FROM entries INDEXED BY entries_patient_kind
                WHERE patient_id = ? AND type IN (SELECT value FROM json_each(?))
                """, [patientID, typeList]) { ($0.string(0)!, $0.string(1)!, $0.string(2)!) }
            for (type, description, codes) in kinds
            where accepts(Kind(type: EntryType(rawValue: type) ?? .observation, description: description, codes: CodesJSON.decode(codes))) {
                let statement = try db.prepare("""
                    SELECT \(Self.columns) FROM entries INDEXED BY entries_patient_kind
                    WHERE patient_id = ? AND type = ? AND description = ? AND codes = ? AND user_deleted = 0 AND \(Self.shownCopy)
                    ORDER BY coalesce(date_epoch, start_epoch, end_epoch) DESC, id DESC
                    """)
                try statement.bind([patientID, type, description, codes])
                try sources.append(NewestSource { try statement.step() ? Self.row(statement) : nil })
            }
        } else {
            let ids = try db.prepare("""
                SELECT id FROM entries WHERE patient_id = ? AND type IN (SELECT value FROM json_each(?)) AND user_deleted = 0 AND \(Self.shownCopy)
                ORDER BY coalesce(date_epoch, start_epoch, end_epoch) DESC, id DESC
                """)
            try ids.bind([patientID, typeList])
            let fetch = try db.prepare("SELECT \(Self.columns) FROM entries WHERE id = ?")
            try sources.append(NewestSource {
                guard try ids.step() else { return nil }
                try fetch.bind([ids.int64(0)!])
                defer { fetch.reset() }
                return try fetch.step() ? Self.row(fetch) : nil
            })
        }

        let samples = SampleRepository(db: db)
        for series in try samples.series(patientID: patientID).values.sorted(by: { $0.id < $1.id })
        where types.contains(series.type) && accepts?(Kind(type: series.type, description: series.description, codes: series.codes)) ?? true {
            var cursor = try samples.newestFirst(seriesID: series.id)
            try sources.append(NewestSource { try cursor.advance() ? samples.entry(cursor.head, series) : nil })
        }

        // The newest head of all the sources goes next; a handful of sources, so a linear pick.
        sources.removeAll { $0.head == nil }
        while !sources.isEmpty {
            var best = 0
            for i in 1..<sources.count where sources[i].key > sources[best].key { best = i }
            guard try body(sources[best].head!) else { return }
            if try !sources[best].advance() { sources.remove(at: best) }
        }
    }

    /// The newest current entry of each kind of `type` dated at or after `from` (epoch seconds),
    /// Apple Health samples left out: the kinds from `entries_patient_kind`, then one row read per
    /// kind from its end of that index, however many older ones it has (a clinician's summary shows
    /// the latest result of each test).
    public func newestOfEachKind(patientID: Int64, type: EntryType, from: Int64) throws -> [Entry] {
        let kinds = try db.query("""
            SELECT DISTINCT description, codes FROM entries INDEXED BY entries_patient_kind WHERE patient_id = ? AND type = ?
            """, [patientID, type.rawValue]) { ($0.string(0)!, $0.string(1)!) }
        let newest = try db.prepare("""
            SELECT \(Self.columns) FROM entries INDEXED BY entries_patient_kind
            WHERE patient_id = ? AND type = ? AND description = ? AND codes = ? AND coalesce(date_epoch, start_epoch, end_epoch) >= ?
                  AND user_deleted = 0 AND \(Self.shownCopy)
            ORDER BY coalesce(date_epoch, start_epoch, end_epoch) DESC, id DESC LIMIT 1
            """)
        return try kinds.compactMap { description, codes in
            try newest.bind([patientID, type.rawValue, description, codes, from])
            defer { newest.reset() }
            return try newest.step() ? Self.row(newest) : nil
        }
    }

    /// One source of `forEachNewest`: a kind's entries, or a series' samples, at its newest unread one.
    private struct NewestSource {
        let next: () throws -> Entry?
        private(set) var head: Entry?

        init(_ next: @escaping () throws -> Entry?) throws {
            self.next = next
            head = try next()
        }

        /// (time, id); undated entries before everything.
        var key: (Int64, Int64) { (head?.content.effectiveTime?.epoch ?? Int64.min, head?.id ?? Int64.min) }

        mutating func advance() throws -> Bool {
            head = try next()
            return head != nil
        }
    }

    /// The ids of a patient's Apple Health series of `type` whose kind `accepts`: a view that reads a
    /// range of samples reads only these (the activity tile, only the step counts).
    public func sampleSeriesIDs(patientID: Int64, type: EntryType, kinds accepts: (Kind) -> Bool) throws -> Set<Int64> {
        Set(try SampleRepository(db: db).series(patientID: patientID).values.filter {
            $0.type == type && accepts(Kind(type: $0.type, description: $0.description, codes: $0.codes))
        }.map(\.id))
    }

    /// How many entries of each type a patient has, as `list` would list them (one per fact, struck
    /// ones included, samples too): a COUNT over the entries' type index and the series' counts.
    public func countsByType(patientID: Int64) throws -> [EntryType: Int] {
        var counts = try SampleRepository(db: db).countsByType(patientID: patientID)
        try db.forEachRow("SELECT type, count(*) FROM entries WHERE patient_id = ? AND \(Self.shownCopy) GROUP BY type", [patientID]) { row in
            counts[EntryType(rawValue: row.string(0)!) ?? .observation, default: 0] += Int(row.int64(1)!)
        }
        return counts
    }

    /// The order of `firstEntries`: newest first, undated last, then by id.
    public enum Order: Sendable {
        /// By `start ?? date` (hReader's order of medications).
        case start
        /// By `date ?? start ?? end` (the timeline's).
        case effective

        var time: String {
            switch self {
            case .start: "coalesce(start_epoch, date_epoch)"
            case .effective: "coalesce(date_epoch, start_epoch, end_epoch)"
            }
        }
    }

    /// The first `limit` of a patient's entries of a clinical `type` (medications, immunizations:
    /// never Apple Health samples, which are measurements), one per fact, in `order`; with `current`,
    /// struck ones left out. The order is found in the covering index `entries_facts` (a grouped
    /// kind's entries that are not struck) and the struck ones' few rows, and only the `limit`
    /// rows shown are read: each carries its source document.
    public func firstEntries(patientID: Int64, type: EntryType, order: Order, current: Bool, limit: Int) throws -> [Entry] {
        let ordered = "ORDER BY \(order.time) IS NULL, \(order.time) DESC, id LIMIT ?"
        guard Self.factTypes.contains(type) else {
            return try db.query("""
                SELECT \(Self.columns) FROM entries WHERE patient_id = ? AND type = ? AND \(Self.shownCopy)\(current ? " AND user_deleted = 0" : "")
                \(ordered)
                """, [patientID, type.rawValue, limit], Self.row)
        }
        var keys = try db.query("""
            SELECT id, \(order.time) FROM entries INDEXED BY entries_facts
            WHERE patient_id = ? AND type = ? AND user_deleted = 0 AND type IN (\(Self.factTypesSQL)) AND \(Self.shownCopy) \(ordered)
            """, [patientID, type.rawValue, limit]) { ($0.int64(0)!, $0.int64(1)) }
        if !current {
            keys += try db.query("""
                SELECT id, \(order.time) FROM entries WHERE patient_id = ? AND type = ? AND user_deleted != 0 AND \(Self.shownCopy) \(ordered)
                """, [patientID, type.rawValue, limit]) { ($0.int64(0)!, $0.int64(1)) }
            // As SQLite orders them: newest first, undated last, then by id.
            keys.sort { a, b in
                switch (a.1, b.1) {
                case let (x?, y?) where x != y: return x > y
                case (nil, _?): return false
                case (_?, nil): return true
                default: return a.0 < b.0
                }
            }
        }
        let fetch = try db.prepare("SELECT \(Self.columns) FROM entries WHERE id = ?")
        return try keys.prefix(limit).compactMap { key -> Entry? in
            try fetch.bind([key.0])
            defer { fetch.reset() }
            return try fetch.step() ? Self.row(fetch) : nil
        }
    }

    /// A patient's *current* entries of a clinical `type` (conditions, allergies): one per fact, not
    /// struck, no status in `inactiveStatuses` (compared in lower case), not ended before `now`. The
    /// first `limit` newest first in `order` (undated last), and how many there are: a summary shows a
    /// few, and reads no more than it shows.
    public func current(patientID: Int64, type: EntryType, order: Order, inactiveStatuses: Set<String>, now: Int64,
                        limit: Int) throws -> (entries: [Entry], total: Int) {
        precondition(Self.factTypes.contains(type), "read through the grouping index, which holds the grouped kinds only")
        let statuses = inactiveStatuses.sorted()
        // Through the covering index `entries_facts` (status, dates and ids are in it), whose own
        // condition is written out so that SQLite may use it: no row is read but the `limit` shown
        // (a row carries its source document: 1,429 conditions were 6,000 pages).
        let condition = """
            patient_id = ? AND type = ? AND user_deleted = 0 AND type IN (\(Self.factTypesSQL)) AND \(Self.shownCopy)
            AND (status IS NULL OR lower(status) NOT IN (\(statuses.map { _ in "?" }.joined(separator: ", "))))
            AND (end_epoch IS NULL OR end_epoch >= ?)
            """
        let args: [DatabaseValueConvertible?] = [patientID, type.rawValue] + statuses + [now]
        let ids = try db.query("""
            SELECT id FROM entries INDEXED BY entries_facts WHERE \(condition) ORDER BY \(order.time) IS NULL, \(order.time) DESC, id LIMIT ?
            """, args + [limit]) { $0.int64(0)! }
        let fetch = try db.prepare("SELECT \(Self.columns) FROM entries WHERE id = ?")
        let entries = try ids.compactMap { id -> Entry? in
            try fetch.bind([id])
            defer { fetch.reset() }
            return try fetch.step() ? Self.row(fetch) : nil
        }
        let total = ids.count < limit ? ids.count
            : Int(try db.scalarInt("SELECT count(*) FROM entries INDEXED BY entries_facts WHERE \(condition)", args) ?? 0)
        return (entries, total)
    }

    /// How many entries and samples of `type` a patient has, one per fact; `current`: not struck
    /// through; `dated`: with a date, start or end (a sample always is, and never struck).
    public func count(patientID: Int64, type: EntryType, current: Bool = false, dated: Bool = false) throws -> Int {
        var sql = "SELECT count(*) FROM entries WHERE patient_id = ? AND type = ? AND \(Self.shownCopy)"
        // Not struck, of a grouped kind: counted in the covering index `entries_facts` (its condition
        // written out so that SQLite may use it), without reading a row.
        if current { sql += " AND user_deleted = 0" + (Self.factTypes.contains(type) ? " AND type IN (\(Self.factTypesSQL))" : "") }
        if dated { sql += " AND coalesce(date_epoch, start_epoch, end_epoch) IS NOT NULL" }
        let stored = Int(try db.scalarInt(sql, [patientID, type.rawValue]) ?? 0)
        return stored + (try SampleRepository(db: db).countsByType(patientID: patientID)[type] ?? 0)
    }
}
