import Foundation
import HReaderModel
import HReaderStore

/// Groups the entries of one person that state the same clinical fact, from different sources
/// (docs/reconciliation.md). Nothing is deleted or rewritten: every copy keeps its row, and
/// `fact_copies` points each copy of a group that is not shown at the one shown (one its source
/// still has, the first by its source's id for it); a shown entry has no row there. Readers show one row per fact
/// (`EntryRepository.list`), and list every copy when asked.
///
/// The grouping is a function of the person's entries and the user's choices only, so it does not
/// depend on the order things were imported in: it is recomputed for the whole person after each
/// import, sync, merge and hand choice.
///
/// A refuted or not-done statement is grouped only with its like, one entered in error never.
///
/// Rules (two entries of one type, never struck; one source's record may state a fact twice too, but
/// two undated entries of one record are two facts). A code is a `system|code` token; a placeholder
/// value (`Unknown`, `UNK`, `NI`, `0`, …: `CodeSystems.isPlaceholder`) is no code. Two entries whose
/// descriptions differ are one fact only when they share a code of a standard terminology (SNOMED CT,
/// RxNorm, LOINC, CVX, UNII, NDC, ICD, CPT: `CodeSystems.isTerminology`); a shared local code alone
/// joins only entries that also say the same thing:
/// - condition: a shared code (system|code) and onset on the same day as written, or both without;
/// - allergy: a shared substance code;
/// - medication: a shared code, or the same normalised name when neither has codes, and
///   overlapping periods;
/// - immunization: a shared code on the same day;
/// - result, vital sign: a shared code at the same instant, with the same value (after unit
///   conversion where the units are of one dimension);
/// - encounter, procedure: a shared code and the same start instant, or both without.
/// The user's splits take an entry out of automatic grouping; joins put two entries in one group.
public struct FactGrouping {
    let db: Database

    public init(_ db: Database) { self.db = db }

    /// Set by hreader-bench alone (this package's, not the library's API), to time the same imports
    /// without reconciliation: its baseline.
    nonisolated(unsafe) package static var skippedForBenchmark = false

    /// The kinds the rules group: those the store's index of facts holds (`entries_facts`, schema 5).
    public static let groupedTypes = EntryRepository.factTypes

    /// A key under which entries may meet their copies: the kind, whether it says something is not
    /// so, a code (or, for a medication without codes, its name), and the part of the time its rule
    /// compares exactly. Codes, names and days are numbers here (interned by `Reading`), so keys are
    /// compared exactly and cost no string.
    struct BucketKey: Hashable {
        var type: UInt8
        var polarity: UInt8
        /// A code's number, or for a medication's name minus one minus the name's number.
        var token: Int32
        var time: Int64
    }

    /// What the keys of an entry are made of, read from the index row without making a string but
    /// for short ones (Swift keeps those of up to 15 bytes inline).
    struct KeyFields {
        let id: Int64
        let type: EntryType
        let typeIndex: UInt8
        /// 0: a plain statement; 1: refuted or not done (meets only its like); 2: entered in error (meets nothing).
        let polarity: UInt8
        /// The day as written (the first ten characters), interned.
        let day: Int32?
        let instant: Int64?
        let start: Int64?
        let end: Int64?
        let tokens: Tokens
        let name: Int32?
    }

    /// An entry's codes as interned tokens, and those of standard terminologies among them.
    struct Tokens {
        let all: [Int32]
        let terminology: [Int32]
        static let none = Tokens(all: [], terminology: [])
    }

    struct Candidate {
        let fields: KeyFields
        let record: (source: Int64, patient: Int64)
        let valueNumber: Double?
        let valueText: String?
        /// As `UnitConversion.normalised` writes it (once a candidate, not once a comparison).
        let unit: String
        let missing: Bool
        let remoteID: String
        var id: Int64 { fields.id }
        var type: EntryType { fields.type }
    }

    /// Recomputes the groups of one person's entries; returns how many entries changed group.
    ///
    /// `touched`: the entries an import, a sync or a hand choice added, changed or struck (nil: every
    /// entry, as after a merge). Only the groups they can change are recomputed: the touched entries,
    /// those that share a key with them, and everything grouped with either (so a group a touched
    /// entry leaves is recomputed whole). Groups are the connected parts of "the same fact", so
    /// nothing else can change.
    ///
    /// Passes over the person's entries (read through the covering index `entries_facts`), so memory
    /// does not grow with the record: the first counts each bucket key, the next finds what a touched
    /// entry meets, the last makes candidates only of the entries that may change group, which are
    /// then compared. A decade of a watch is hundreds of thousands of entries of which almost none
    /// meet another; holding them all took 130 MB at ten million samples.
    @discardableResult
    public func regroup(patientID: Int64, touched: Set<Int64>? = nil) throws -> Int {
        guard !Self.skippedForBenchmark else { return 0 }
        if let touched, touched.isEmpty { return 0 }
        var reading = Reading()
        // A medication without codes (or with placeholders only) compares by name: the few such rows
        // are looked up for their description as the passes meet them.
        let describe = try db.prepare("SELECT description FROM entries WHERE id = ?")
        // The user's choices: small tables, read from their side (a join from entries would read every row).
        let splits = Set(try db.query("""
            SELECT f.entry_id FROM fact_splits f WHERE (SELECT patient_id FROM entries WHERE id = f.entry_id) = ?
            """, [patientID]) { $0.int64(0)! })
        let joins = try db.query("""
            SELECT j.entry_id, j.other_id FROM fact_joins j
            WHERE (SELECT patient_id FROM entries WHERE id = j.entry_id) = ?1 AND (SELECT patient_id FROM entries WHERE id = j.other_id) = ?1
            """, [patientID]) { ($0.int64(0)!, $0.int64(1)!) }
        let joined = Set(joins.flatMap { [$0.0, $0.1] })
        // Only entries of one kind are ever one fact (every bucket key holds the type), so an import's
        // regroup reads only the kinds it can change: those of what it touched, of the facts they were
        // grouped under or that were grouped under them (a copy that changed kind leaves its old group),
        // and of the entries you joined by hand. A lab's results are not compared with the conditions.
        let kinds = try touched.map { try kindsReached(from: $0, joined: joined) }
        // None: nothing touched is of a grouped kind, nor in a group (SQLite cannot use the partial
        // index for an empty kind list, and there is nothing to read).
        if kinds?.isEmpty == true { return 0 }
        func forEachKey(_ f: KeyFields, _ body: (BucketKey) -> Void) {
            guard !splits.contains(f.id) else { return }
            Self.forEachBucketKey(f, body)
        }

        // Pass 1: each entry's keys, as numbers of a key table, and how many entries each key has (1,
        // or 2 meaning "more than one"). Kept compactly (an id and a few key numbers an entry) so that
        // finding what a touched entry meets needs no second reading of the rows.
        var keyNumbers: [BucketKey: Int32] = [:]
        var counts: [UInt8] = []
        var rowIDs: [Int64] = [], rowKeyEnds: [Int32] = [], rowKeys: [Int32] = []
        try forEachRow(patientID: patientID, kinds: kinds, describe: describe, reading: &reading) { f, _ in
            forEachKey(f) { key in
                let number: Int32
                if let known = keyNumbers[key] {
                    number = known
                    counts[Int(number)] = 2
                } else {
                    number = Int32(counts.count)
                    keyNumbers[key] = number
                    counts.append(1)
                }
                rowKeys.append(number)
            }
            rowIDs.append(f.id)
            rowKeyEnds.append(Int32(rowKeys.count))
        }
        // What is stored now: every copy of the person's (one struck or of another kind since still
        // points at its fact: that is how its old group is found, and the pointer goes below).
        let current = try currentCopies(patientID: patientID, seen: rowIDs, touched: touched)
        func meetsAnother(_ f: KeyFields) -> Bool {
            if joined.contains(f.id) { return true }
            var found = false
            forEachKey(f) { if let number = keyNumbers[$0], counts[Int(number)] == 2 { found = true } }
            return found
        }

        // The entries whose group may change: all that meet another, or (given `touched`) the
        // touched ones, those they meet, and everything grouped or joined with either.
        var affected: Set<Int64>?
        // Most of the person touched (a first import): everything.
        if let touched, touched.count * 2 < rowIDs.count {
            var touchedKeys = [Bool](repeating: false, count: counts.count)
            var start = 0
            for (row, end) in rowKeyEnds.enumerated() {
                if touched.contains(rowIDs[row]) { for k in rowKeys[start..<Int(end)] { touchedKeys[Int(k)] = true } }
                start = Int(end)
            }
            var reached = touched
            start = 0
            for (row, end) in rowKeyEnds.enumerated() {
                if rowKeys[start..<Int(end)].contains(where: { counts[Int($0)] == 2 && touchedKeys[Int($0)] }) { reached.insert(rowIDs[row]) }
                start = Int(end)
            }
            var members: [Int64: [Int64]] = [:]   // a shown copy → the copies pointing at it
            for (copy, fact) in current { members[fact, default: []].append(copy) }
            var partners: [Int64: [Int64]] = [:]
            for (a, b) in joins { partners[a, default: []].append(b); partners[b, default: []].append(a) }
            var queue = Array(reached)
            while let id = queue.popLast() {
                let fact = current[id] ?? id
                if reached.insert(fact).inserted { queue.append(fact) }
                for next in members[fact] ?? [] where reached.insert(next).inserted { queue.append(next) }
                for next in partners[id] ?? [] where reached.insert(next).inserted { queue.append(next) }
            }
            affected = reached
        }
        rowIDs = []; rowKeyEnds = []; rowKeys = []

        // The candidates: what may meet another (and, given `touched`, may change group).
        var candidates: [Candidate] = []
        try forEachRow(patientID: patientID, kinds: kinds, describe: describe, reading: &reading, candidates: true) { f, row in
            if let affected, !affected.contains(f.id) { return }
            guard meetsAnother(f) else { return }
            candidates.append(row(f))
        }
        keyNumbers = [:]; counts = []
        candidates.sort { $0.id < $1.id }
        // What they say, for those that meet on a local code only (read from the rows, these few).
        var descriptions: [Int64: String] = [:]
        func description(_ c: Candidate) throws -> String {
            if let known = descriptions[c.id] { return known }
            try describe.bind([c.id])
            let text = try describe.step() ? FoldedText.of(describe.string(0) ?? "") : ""
            describe.reset()
            descriptions[c.id] = text
            return text
        }

        // Candidates are in id order, so a candidate's index stands for it (the smaller id, the smaller index).
        var groups = UnionFind(count: candidates.count)
        var buckets: [BucketKey: [Int]] = [:]
        for (i, c) in candidates.enumerated() {
            forEachKey(c.fields) { buckets[$0, default: []].append(i) }
        }
        // (Candidates are compared in place: a copy of one retains each of its arrays and strings.)
        for members in buckets.values where members.count > 1 {
            for (i, a) in members.enumerated() {
                for b in members[(i + 1)...] where Self.sameFact(candidates[a], candidates[b]) {
                    if !Self.shareTerminologyCode(candidates[a], candidates[b]),
                       !(candidates[a].fields.tokens.all.isEmpty && candidates[b].fields.tokens.all.isEmpty) {
                        guard try description(candidates[a]) == description(candidates[b]) else { continue }
                    }
                    groups.union(a, b)
                }
            }
        }
        if !joins.isEmpty {
            let index = Dictionary(candidates.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { first, _ in first })
            for (a, b) in joins { if let i = index[a], let j = index[b] { groups.union(i, j) } }
        }

        // The shown copy of each group: one its source still has, the first by the id its source
        // gives it (then the local id): the same copy whatever order the sources came in.
        var groupMembers: [Int: [Int]] = [:]
        for i in candidates.indices { groupMembers[groups.find(i), default: []].append(i) }
        var hidden: [Int64: Int64] = [:]
        for group in groupMembers.values where group.count > 1 {
            let shown = candidates[group.min { a, b in
                (candidates[a].missing ? 1 : 0, candidates[a].remoteID, candidates[a].id)
                    < (candidates[b].missing ? 1 : 0, candidates[b].remoteID, candidates[b].id)
            }!].id
            for i in group where candidates[i].id != shown { hidden[candidates[i].id] = shown }
        }
        let remove = try db.prepare("DELETE FROM fact_copies WHERE entry_id = ?")
        let upsert = try db.prepare("INSERT OR REPLACE INTO fact_copies (entry_id, fact_id) VALUES (?, ?)")
        var changed = 0
        // In key order: each write lands next to the last (and so do the checks of its two keys in
        // `entries`); in a dictionary's order 4,800 writes took 50 ms.
        for (entry, fact) in current.sorted(by: { $0.key < $1.key }) where hidden[entry] != fact && (affected?.contains(entry) ?? true) {
            if hidden[entry] == nil {
                try remove.bind([entry]); try remove.step(); remove.reset()
                changed += 1
            }
        }
        for (entry, shown) in hidden.sorted(by: { $0.key < $1.key }) where current[entry] != shown {
            try upsert.bind([entry, shown]); try upsert.step(); upsert.reset()
            changed += 1
        }
        return changed
    }

    /// The person's copies and the facts they point at. Given the rows the first pass saw (the
    /// person's grouped entries), from the narrow `fact_copies` table alone: a copy seen, one
    /// touched (struck, or of another kind now), or one pointing at a fact seen that is the person's.
    /// Without `touched` (after a merge: rows may have changed person) every copy of the person's.
    private func currentCopies(patientID: Int64, seen rowIDs: [Int64], touched: Set<Int64>?) throws -> [Int64: Int64] {
        var current: [Int64: Int64] = [:]
        guard let touched else {
            // The person's entries from the narrow index (their ids are in it), each looked up in
            // fact_copies by its key: no row of entries is read.
            try db.forEachRow("""
                SELECT fc.entry_id, fc.fact_id FROM entries e INDEXED BY entries_patient_type CROSS JOIN fact_copies fc ON fc.entry_id = e.id
                WHERE e.patient_id = ?
                """, [patientID]) { current[$0.int64(0)!] = $0.int64(1)! }
            return current
        }
        let seen = Set(rowIDs)
        var elsewhere: [(Int64, Int64)] = []
        try db.forEachRow("SELECT entry_id, fact_id FROM fact_copies") { row in
            let (copy, fact) = (row.int64(0)!, row.int64(1)!)
            if seen.contains(copy) || touched.contains(copy) { current[copy] = fact } else if seen.contains(fact) { elsewhere.append((copy, fact)) }
        }
        let owner = try db.prepare("SELECT patient_id FROM entries WHERE id = ?")
        for (copy, fact) in elsewhere {
            try owner.bind([copy])
            if try owner.step(), owner.int64(0) == patientID { current[copy] = fact }
            owner.reset()
        }
        return current
    }

    /// `groupedTypes` as an SQL list, in the words and order of the partial index `entries_facts`
    /// (SQLite uses it only for a query whose condition is its own).
    static let groupedTypesSQL = EntryRepository.factTypesSQL

    /// Codes, days and names as small numbers, for one regrouping: each `codes` text of the vault
    /// is read once (a weight is LOINC 29463-7 however often it is taken).
    struct Reading {
        private var tokenIDs: [String: Int32] = [:]
        private var terminology: [Bool] = []
        private var dayIDs: [DayBytes: Int32] = [:]
        private var nameIDs: [String: Int32] = [:]
        /// By the FNV-1a hash of the `codes` text: the text and its tokens.
        private var codes: [UInt64: [(text: [UInt8], tokens: Tokens)]] = [:]

        mutating func tokens(_ text: UnsafeRawBufferPointer) -> Tokens {
            guard text.count > 2 else { return .none }   // "{}"
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in text { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            if let known = codes[hash]?.first(where: { $0.text.elementsEqual(text) }) { return known.tokens }
            let all = FactGrouping.codeTokens(String(decoding: text, as: UTF8.self)).map { token -> Int32 in
                if let id = tokenIDs[token] { return id }
                let id = Int32(tokenIDs.count)
                tokenIDs[token] = id
                terminology.append(FactGrouping.isTerminologyToken(token))
                return id
            }
            let tokens = Tokens(all: all, terminology: all.filter { terminology[Int($0)] })
            codes[hash, default: []].append((Array(text), tokens))
            return tokens
        }

        /// A day as written: the first ten bytes of a date's text ("2019-04-02T…"), as a number.
        mutating func day(_ text: UnsafeRawBufferPointer) -> Int32 {
            var key = DayBytes()
            for (i, byte) in text.prefix(10).enumerated() {
                if i < 8 { key.head |= UInt64(byte) << (8 * i) } else { key.tail |= UInt16(byte) << (8 * (i - 8)) }
            }
            if let id = dayIDs[key] { return id }
            let id = Int32(dayIDs.count)
            dayIDs[key] = id
            return id
        }

        /// Up to ten bytes of text (no NUL among them), packed: compared and hashed without a string.
        struct DayBytes: Hashable {
            var head: UInt64 = 0
            var tail: UInt16 = 0
        }

        /// Medications without codes, by id: their names' numbers (nil: a name that folds to nothing).
        private var medicationNames: [Int64: Int32?] = [:]

        /// The name of a medication without codes, read from its row once a regrouping.
        mutating func medicationName(_ id: Int64, _ describe: Statement) throws -> Int32? {
            if let known = medicationNames[id] { return known }
            try describe.bind([id])
            let text = try describe.step() ? describe.string(0) ?? "" : ""
            describe.reset()
            let number = name(text)
            medicationNames[id] = number
            return number
        }

        /// Nil for a name that folds to nothing.
        mutating func name(_ text: String) -> Int32? {
            let folded = FoldedText.of(text)
            guard !folded.isEmpty else { return nil }
            if let id = nameIDs[folded] { return id }
            let id = Int32(nameIDs.count)
            nameIDs[folded] = id
            return id
        }
    }

    /// The person's entries of the kinds grouped, never struck, one at a time: what their keys are
    /// made of, and a way to read the rest of the row into a candidate (only for the few that need it).
    /// The grouped kinds of the `touched` entries and of the entries in `joined`, of the facts they
    /// are or point at, and of every copy of those facts (from the narrow `fact_copies`). A group is
    /// of one kind unless a hand-made join crossed kinds: then a touched copy's siblings may be of
    /// another kind than it and its fact, and must be read to be grouped again.
    private func kindsReached(from touched: Set<Int64>, joined: Set<Int64>) throws -> [EntryType] {
        let ids = "[" + touched.union(joined).map(String.init).joined(separator: ",") + "]"
        let names = Set(try db.query("""
            WITH t(id) AS (SELECT value FROM json_each(?1)),
                 f(id) AS (SELECT id FROM t UNION SELECT fact_id FROM fact_copies WHERE entry_id IN (SELECT id FROM t))
            SELECT type FROM entries WHERE id IN (SELECT id FROM f)
            UNION SELECT type FROM entries WHERE id IN (SELECT entry_id FROM fact_copies WHERE fact_id IN (SELECT id FROM f))
            """, [ids]) { $0.string(0) ?? "" })
        return Self.groupedTypes.filter { names.contains($0.rawValue) }
    }

    private func forEachRow(patientID: Int64, kinds: [EntryType]? = nil, describe: Statement, reading: inout Reading, candidates: Bool = false,
                            _ body: (KeyFields, (KeyFields) -> Candidate) throws -> Void) throws {
        // Read through `entries_facts` alone (schema 5): every column here is in that index. The passes
        // that only make keys ask for the key's columns alone (a step copies every column it selects).
        let extra = candidates ? ", source_id, source_patient_id, value_number, value_text, unit, missing_at_source, remote_id" : ""
        try db.forEachRow("""
            SELECT id, type, date_text, start_text, date_epoch, start_epoch, end_epoch, codes, status\(extra)
            FROM entries INDEXED BY entries_facts WHERE patient_id = ? AND user_deleted = 0 AND type IN (\(Self.groupedTypesSQL))\(kinds.map {
                " AND type IN (" + $0.map { "'\($0.rawValue)'" }.joined(separator: ", ") + ")" } ?? "")
            """, [patientID]) { s in
            let id = s.int64(0)!
            let type = (s.textBytes(1) { Self.entryType($0) } ?? nil) ?? .observation
            // A condition's day is its onset's (start), others' their date's: the first ten characters as written.
            let dayColumn = type == .condition ? (s.isNull(3) ? 2 : 3) : type == .immunization ? (s.isNull(2) ? 3 : 2) : nil
            let day = dayColumn.flatMap { column in s.textBytes(column) { reading.day($0) } }
            let polarity: UInt8 = s.textBytes(8) { status in
                if Self.equalsIgnoringCase(status, "entered-in-error") { return 2 }
                return Self.equalsIgnoringCase(status, "refuted") || Self.equalsIgnoringCase(status, "not-done") ? 1 : 0
            } ?? 0
            let tokens = s.textBytes(7) { reading.tokens($0) } ?? .none
            let fields = KeyFields(id: id, type: type, typeIndex: UInt8(Self.groupedTypes.firstIndex(of: type) ?? 255), polarity: polarity,
                                   day: day, instant: s.int64(4) ?? s.int64(5), start: s.int64(5) ?? s.int64(4),
                                   end: s.int64(6), tokens: tokens,
                                   name: type == .medication && tokens.all.isEmpty ? try reading.medicationName(id, describe) : nil)
            try body(fields) { fields in
                precondition(candidates, "a candidate is read only by the pass that selects its columns")
                return Candidate(fields: fields, record: (s.int64(9)!, s.int64(10)!), valueNumber: s.double(11),
                                 valueText: type == .result || type == .vitalSign ? s.string(12) : nil,
                                 unit: UnitConversion.normalised(s.string(13)),
                                 missing: !s.isNull(14), remoteID: s.string(15) ?? "")
            }
        }
    }

    /// The grouped kind a `type` column names, read from its bytes.
    static func entryType(_ bytes: UnsafeRawBufferPointer) -> EntryType? {
        for (type, name) in groupedTypeNames where bytes.elementsEqual(name) { return type }
        return nil
    }

    /// The grouped kinds with the bytes of their names, made once.
    static let groupedTypeNames: [(EntryType, [UInt8])] = groupedTypes.map { ($0, Array($0.rawValue.utf8)) }

    /// ASCII case folded (a status as sources write it: "Entered-In-Error").
    static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ text: String) -> Bool {
        bytes.count == text.utf8.count && zip(bytes, text.utf8).allSatisfy { ($0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0) == $1 }
    }

    /// The user says an entry is a fact of its own: it leaves its group and no rule groups it again
    /// (re-imports and sync keep the choice); joins made with it before are forgotten.
    public func split(entryID: Int64) throws {
        try db.execute("INSERT OR IGNORE INTO fact_splits (entry_id) VALUES (?)", [entryID])
        try db.execute("DELETE FROM fact_joins WHERE entry_id = ?1 OR other_id = ?1", [entryID])
    }

    /// The user says two entries state one fact: their groups become one, whatever the rules say.
    public func join(_ a: Int64, _ b: Int64) throws {
        guard a != b else { return }
        try db.execute("INSERT OR IGNORE INTO fact_joins (entry_id, other_id) VALUES (?, ?)", [min(a, b), max(a, b)])
    }

    /// The keys under which an entry may meet its copies: every code (or, for a medication without
    /// codes, its name), with the part of the time its rule compares exactly.
    static func forEachBucketKey(_ f: KeyFields, _ body: (BucketKey) -> Void) {
        // A statement that something is not so (a refuted allergy, a vaccine not given) is never one
        // fact with one that it is: the two meet only their like; a record entered in error, nothing.
        if f.polarity == 2 { return }
        let time: Int64
        switch f.type {
        case .condition, .immunization: time = f.day.map(Int64.init) ?? -1
        case .result, .vitalSign: guard let instant = f.instant else { return }; time = instant
        case .encounter, .procedure: time = f.start ?? Int64.min
        default: time = 0
        }
        if f.tokens.all.isEmpty {
            guard f.type == .medication, let name = f.name else { return }
            body(BucketKey(type: f.typeIndex, polarity: f.polarity, token: -1 - name, time: 0))
            return
        }
        for token in f.tokens.all { body(BucketKey(type: f.typeIndex, polarity: f.polarity, token: token, time: time)) }
    }

    /// Whether two entries met in a bucket state one fact.
    static func sameFact(_ a: Candidate, _ b: Candidate) -> Bool {
        guard a.type == b.type else { return false }
        if a.record == b.record {
            // Within one record only a dated restatement is one fact (two undated procedures are two).
            switch a.type {
            case .condition, .immunization: if a.fields.day == nil { return false }
            case .encounter, .procedure: if a.fields.start == nil { return false }
            default: break
            }
        }
        switch a.type {
        case .condition, .immunization: return a.fields.day == b.fields.day
        case .allergy: return true
        case .medication:
            let aStart = a.fields.start ?? Int64.min, aEnd = a.fields.end ?? Int64.max
            let bStart = b.fields.start ?? Int64.min, bEnd = b.fields.end ?? Int64.max
            return aStart <= bEnd && bStart <= aEnd
        case .result, .vitalSign:
            guard a.fields.instant == b.fields.instant else { return false }
            return sameValue(a, b)
        case .encounter, .procedure: return a.fields.start == b.fields.start
        default: return false
        }
    }

    static func sameValue(_ a: Candidate, _ b: Candidate) -> Bool {
        switch (a.valueNumber, b.valueNumber) {
        case (nil, nil):
            return normalisedName(a.valueText ?? "") == normalisedName(b.valueText ?? "")
        case let (x?, y?):
            return UnitConversion.sameNormalisedQuantity(x, a.unit, y, b.unit)
        default:
            return false
        }
    }

    /// The `codes` column ({"LOINC":["29463-7"],…}, as CodesJSON writes it) as system|code tokens,
    /// placeholders (`Unknown`, `UNK`, …) left out: vaults written before they were kept out.
    static func codeTokens(_ text: String?) -> [String] {
        guard let text, text != "{}" else { return [] }
        return CodesJSON.decode(text).flatMap { system, values in
            values.filter { !CodeSystems.isPlaceholder($0) }.map { "\(system)|\($0)" }
        }
    }

    static func isTerminologyToken(_ token: String) -> Bool {
        guard let bar = token.firstIndex(of: "|") else { return false }
        return CodeSystems.isTerminology(String(token[..<bar]))
    }

    /// Whether two entries share a code of a standard terminology.
    static func shareTerminologyCode(_ a: Candidate, _ b: Candidate) -> Bool {
        a.fields.tokens.terminology.contains { b.fields.tokens.terminology.contains($0) }
    }

    /// Lowercased, accents and punctuation folded, runs of spaces as one (`FoldedText`).
    static func normalisedName(_ text: String) -> String { FoldedText.of(text) }
}

/// Disjoint sets over the numbers 0..<count (candidates by their place), for grouping.
struct UnionFind {
    private var parent: [Int]

    init(count: Int) { parent = Array(0..<count) }

    mutating func find(_ i: Int) -> Int {
        var root = i
        while parent[root] != root { root = parent[root] }
        var node = i
        while parent[node] != root { let up = parent[node]; parent[node] = root; node = up }
        return root
    }

    /// Joins two sets; the smaller number becomes the root, so the result does not depend on order.
    mutating func union(_ a: Int, _ b: Int) {
        let ra = find(a), rb = find(b)
        guard ra != rb else { return }
        if ra < rb { parent[rb] = ra } else { parent[ra] = rb }
    }
}

/// Comparing measured values across sources that write units differently (UCUM and the common
/// spellings): within one dimension, by a factor (and, for temperatures, an offset).
public enum UnitConversion {
    /// unit spelling → (dimension, factor to the dimension's base, offset added after the factor).
    static let units: [String: (dimension: String, factor: Double, offset: Double)] = [
        "kg": ("mass", 1000, 0), "g": ("mass", 1, 0), "mg": ("mass", 0.001, 0), "ug": ("mass", 1e-6, 0),
        "[lb_av]": ("mass", 453.59237, 0), "lb": ("mass", 453.59237, 0), "lbs": ("mass", 453.59237, 0),
        "[oz_av]": ("mass", 28.349523125, 0), "oz": ("mass", 28.349523125, 0),
        "m": ("length", 100, 0), "cm": ("length", 1, 0), "mm": ("length", 0.1, 0),
        "[in_i]": ("length", 2.54, 0), "in": ("length", 2.54, 0), "[ft_i]": ("length", 30.48, 0), "ft": ("length", 30.48, 0),
        "cel": ("temperature", 1, 0), "°c": ("temperature", 1, 0), "degc": ("temperature", 1, 0),
        "[degf]": ("temperature", 5.0 / 9.0, -32 * 5.0 / 9.0), "°f": ("temperature", 5.0 / 9.0, -32 * 5.0 / 9.0),
        "degf": ("temperature", 5.0 / 9.0, -32 * 5.0 / 9.0),
        "l": ("volume", 1000, 0), "dl": ("volume", 100, 0), "ml": ("volume", 1, 0),
        "mg/dl": ("mass concentration", 10, 0), "g/dl": ("mass concentration", 10000, 0), "g/l": ("mass concentration", 1000, 0),
        "mg/l": ("mass concentration", 1, 0),
        "mmol/l": ("substance concentration", 1, 0), "umol/l": ("substance concentration", 0.001, 0),
        "mm[hg]": ("pressure", 1, 0), "mmhg": ("pressure", 1, 0), "kpa": ("pressure", 7.500617, 0),
        "/min": ("rate", 1, 0), "{beats}/min": ("rate", 1, 0), "beats/min": ("rate", 1, 0), "bpm": ("rate", 1, 0),
        "{breaths}/min": ("rate", 1, 0), "count/min": ("rate", 1, 0),
        "kg/m2": ("mass per area", 1, 0), "kg/m^2": ("mass per area", 1, 0),
    ]

    /// Whether two measured values are one quantity: equal in one unit, or equal to the rounding
    /// a conversion brings (0.1 %) in two units of one dimension.
    public static func sameQuantity(_ a: Double, _ unitA: String?, _ b: Double, _ unitB: String?) -> Bool {
        sameNormalisedQuantity(a, normalised(unitA), b, normalised(unitB))
    }

    /// A unit as compared: without the spaces around it, lowercased.
    static func normalised(_ unit: String?) -> String {
        guard let unit else { return "" }
        // (Foundation's trimming goes through NSString: it cost more than the comparisons it served.)
        let trimmed = unit.drop { $0.isWhitespace && !$0.isNewline }.reversed().drop { $0.isWhitespace && !$0.isNewline }.reversed()
        return String(trimmed).lowercased()
    }

    /// `sameQuantity` of units already `normalised`.
    static func sameNormalisedQuantity(_ a: Double, _ ua: String, _ b: Double, _ ub: String) -> Bool {
        if ua == ub { return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1) }
        guard let x = units[ua], let y = units[ub], x.dimension == y.dimension else { return false }
        let ca = a * x.factor + x.offset, cb = b * y.factor + y.offset
        return abs(ca - cb) <= 1e-3 * max(abs(ca), abs(cb), 1e-9)
    }
}

extension Migrator {
    /// The migrator every vault Kit opens runs: its migrations regroup facts by `FactGrouping`'s rules
    /// where the schema asks for it (5 and 8).
    public static let reconciling = Migrator(regroup: { db, patientID in try FactGrouping(db).regroup(patientID: patientID) })
}
