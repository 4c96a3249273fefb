import Foundation
import HReaderModel

/// Full-text search over the entries of the vault (schema/004_search.sql: an FTS5 index kept
/// current by triggers): descriptions, values written as text, doses and reactions, codes, and the
/// user's own comments and directions. Ranked by BM25, descriptions weighing most.
///
///     let hits = try SearchRepository(db).search(SearchQuery("metformin"), patientID: 1)
///     for hit in hits { print(hit.description, hit.snippet) }
public struct SearchRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    public struct Hit: Sendable, Equatable {
        public var entryID: Int64
        public var patientID: Int64
        public var type: EntryType
        public var description: String
        /// The entry's date, else start, else end, as stored (RFC 3339 or a partial date).
        public var date: String?
        /// A short passage around the matches, each match between `SearchQuery.markStart` and `markEnd`.
        public var snippet: String
        /// BM25 (lower is better), comparable with `DocumentHit.rank` to merge the two lists.
        public var rank: Double = 0
    }

    /// A document whose title or readable text matches (schema/006_documents.sql).
    public struct DocumentHit: Sendable, Equatable {
        public var documentID: Int64
        public var patientID: Int64
        public var title: String
        public var date: String?
        public var snippet: String
        public var rank: Double
    }

    /// A match found by ranking alone, before its snippet is made: `id` is the entry (or document)
    /// whose words matched, `shownID` the one readers are shown for it (the fact's shown copy), and
    /// the BM25 rank (lower is better, comparable between entries and documents).
    public struct Ranked: Sendable, Equatable {
        public var id: Int64
        public var shownID: Int64
        public var rank: Double
    }

    /// The best `limit` entries matching `query`, struck entries left out; nil patient: everyone.
    public func search(_ query: SearchQuery, patientID: Int64? = nil, type: EntryType? = nil, limit: Int = 50) throws -> [Hit] {
        try entryHits(try rankEntries(query, patientID: patientID, type: type, limit: limit), query: query)
    }

    /// The best `limit` documents whose title or readable text matches `query`; nil patient: everyone.
    public func searchDocuments(_ query: SearchQuery, patientID: Int64? = nil, limit: Int = 50) throws -> [DocumentHit] {
        try documentHits(try rankDocuments(query, patientID: patientID, limit: limit), query: query)
    }

    // Searching is two steps: ranking by the index alone, then passages (snippets) for the matches
    // that are shown. snippet() reads and tokenizes its row's whole text again: for a common word
    // that cost more than the ranking, so a caller merging entries and documents makes passages only
    // for the merged list's best `limit`.

    /// The best `limit` entries by rank, one per fact (a fact several sources state is one match,
    /// under the copy readers are shown; its best-ranked copy's words make the passage).
    public func rankEntries(_ query: SearchQuery, patientID: Int64? = nil, type: EntryType? = nil, limit: Int = 50) throws -> [Ranked] {
        guard let match = query.ftsExpression else { return [] }
        var filter = ""
        var arguments: [DatabaseValueConvertible?] = [match]
        if let patientID { filter += " AND e.patient_id = ?"; arguments.append(patientID) }
        if let type { filter += " AND e.type = ?"; arguments.append(type.rawValue) }
        // Column weights: description, value, comments, directions, dose, reaction, codes. The index
        // ranks alone first (a common word matches thousands of rows; reading each row to filter it
        // cost more than ranking): the best 4 × limit, filtered; all of them when that leaves too few.
        func sql(cap: Int) -> String { """
            WITH ranked AS (
                SELECT rowid AS id, bm25(entries_search, 10.0, 4.0, 6.0, 3.0, 2.0, 2.0, 1.0) AS rank
                FROM entries_search WHERE entries_search MATCH ?1 ORDER BY rank LIMIT \(cap))
            SELECT e.id, coalesce((SELECT fact_id FROM fact_copies WHERE entry_id = e.id), e.id), r.rank
            FROM ranked r JOIN entries e ON e.id = r.id
            WHERE e.user_deleted = 0\(filter)
            ORDER BY r.rank, e.id
            """ }
        return try Self.best(limit) { cap in
            try db.query(sql(cap: cap), arguments) { Ranked(id: $0.int64(0)!, shownID: $0.int64(1)!, rank: $0.double(2) ?? 0) }
        }
    }

    /// The best `limit` documents by rank.
    public func rankDocuments(_ query: SearchQuery, patientID: Int64? = nil, limit: Int = 50) throws -> [Ranked] {
        guard let match = query.ftsExpression else { return [] }
        var filter = ""
        var arguments: [DatabaseValueConvertible?] = [match]
        if let patientID { filter += " AND d.patient_id = ?"; arguments.append(patientID) }
        func sql(cap: Int) -> String { """
            WITH ranked AS (
                SELECT rowid AS id, bm25(documents_search, 10.0, 4.0) AS rank
                FROM documents_search WHERE documents_search MATCH ?1 ORDER BY rank LIMIT \(cap))
            SELECT d.id, r.rank FROM ranked r JOIN documents d ON d.id = r.id
            WHERE 1\(filter)
            ORDER BY r.rank, d.id
            """ }
        return try Self.best(limit) { cap in
            try db.query(sql(cap: cap), arguments) { Ranked(id: $0.int64(0)!, shownID: $0.int64(0)!, rank: $0.double(1) ?? 0) }
        }
    }

    /// The first `limit` distinct shown ids of `ranked(4 × limit)`, else of `ranked(all)`.
    static func best(_ limit: Int, _ ranked: (_ cap: Int) throws -> [Ranked]) rethrows -> [Ranked] {
        let limit = max(1, limit)
        func distinct(_ all: [Ranked]) -> [Ranked] {
            var seen: Set<Int64> = [], out: [Ranked] = []
            for found in all where out.count < limit && seen.insert(found.shownID).inserted { out.append(found) }
            return out
        }
        let first = distinct(try ranked(4 * limit))
        return first.count >= limit ? first : distinct(try ranked(-1))
    }

    /// The hits of ranked entries, in their order, each with its passage (an entry removed since
    /// it was ranked is left out).
    public func entryHits(_ ranked: [Ranked], query: SearchQuery) throws -> [Hit] {
        guard let match = query.ftsExpression, !ranked.isEmpty else { return [] }
        // The matches are read once more in the index's order, and only the ranked ones joined and
        // given a passage. (Looking each one up by rowid ran the MATCH again per row, expanding a
        // prefix every time: 1.4 ms per document for "kalo*" over 2,000 documents. `+` keeps the
        // rowid test from becoming that lookup.)
        let found = try db.query("""
            SELECT e.id, e.patient_id, e.type, e.description, COALESCE(e.date_text, e.start_text, e.end_text),
                   snippet(entries_search, -1, ?2, ?3, '…', 12)
            FROM entries_search JOIN entries e ON e.id = entries_search.rowid
            WHERE entries_search MATCH ?4 AND +entries_search.rowid IN (SELECT value FROM json_each(?1))
            """, [Self.idList(ranked), SearchQuery.markStart, SearchQuery.markEnd, match]) { s in
            (id: s.int64(0)!, hit: Hit(entryID: 0, patientID: s.int64(1)!, type: EntryType(rawValue: s.string(2) ?? "") ?? .observation,
                                       description: s.string(3) ?? "", date: s.string(4), snippet: s.string(5) ?? ""))
        }
        let byID = Dictionary(found.map { ($0.id, $0.hit) }, uniquingKeysWith: { first, _ in first })
        return ranked.compactMap { ranked in
            byID[ranked.id].map { hit in var hit = hit; hit.entryID = ranked.shownID; hit.rank = ranked.rank; return hit }
        }
    }

    /// The hits of ranked documents, in their order, each with its passage.
    public func documentHits(_ ranked: [Ranked], query: SearchQuery) throws -> [DocumentHit] {
        guard let match = query.ftsExpression, !ranked.isEmpty else { return [] }
        // As for entries.
        let found = try db.query("""
            SELECT d.id, d.patient_id, d.title, d.date_text, snippet(documents_search, -1, ?2, ?3, '…', 12)
            FROM documents_search JOIN documents d ON d.id = documents_search.rowid
            WHERE documents_search MATCH ?4 AND +documents_search.rowid IN (SELECT value FROM json_each(?1))
            """, [Self.idList(ranked), SearchQuery.markStart, SearchQuery.markEnd, match]) { s in
            DocumentHit(documentID: s.int64(0)!, patientID: s.int64(1)!, title: s.string(2) ?? "", date: s.string(3),
                        snippet: Self.oneLine(s.string(4) ?? ""), rank: 0)
        }
        let byID = Dictionary(found.map { ($0.documentID, $0) }, uniquingKeysWith: { first, _ in first })
        return ranked.compactMap { ranked in byID[ranked.id].map { hit in var hit = hit; hit.rank = ranked.rank; return hit } }
    }

    /// `[3,1,2]`: ids as a JSON array, for json_each.
    static func idList(_ ranked: [Ranked]) -> String {
        "[" + ranked.map { String($0.id) }.joined(separator: ",") + "]"
    }

    /// A document's passage on one line, as an entry's is (its text keeps its line breaks).
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\t" }).joined(separator: " ")
    }

    /// Documents in the index (it should equal the number of documents).
    public func indexedDocumentCount() throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM documents_search") ?? 0)
    }

    /// Runs `body` (inside the caller's transaction) with the entries it adds indexed in one statement
    /// at its end instead of one trigger run each: an import's many inserts cost a third less
    /// (schema 5, `search_deferred`). Nested calls index at the outermost end. On an error nothing is
    /// indexed here: the caller's transaction is rolled back with the rows.
    public func deferringIndex<T>(_ body: () throws -> T) throws -> T {
        guard try db.scalarInt("SELECT count(*) FROM search_deferred") == 0 else { return try body() }
        let since = try db.scalarInt("SELECT coalesce(max(id), 0) FROM entries") ?? 0
        try db.execute("INSERT INTO search_deferred (since) VALUES (?)", [since])
        let result: T
        do {
            result = try body()
        } catch {
            try? db.execute("DELETE FROM search_deferred")
            throw error
        }
        try db.execute("""
            INSERT INTO entries_search (rowid, description, value_text, comments, patient_directions, dose, reaction, codes)
            SELECT id, description, value_text, comments, patient_directions, dose, reaction, codes FROM entries WHERE id > ?
            """, [since])
        try db.execute("DELETE FROM search_deferred")
        return result
    }

    /// Entries in the index (it should equal the number of entries).
    public func indexedCount() throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM entries_search") ?? 0)
    }
}

/// What a person typed, as an FTS5 query that cannot be a syntax error: each word a quoted phrase
/// (quotes inside doubled), all of them required, and a word of three letters or more also
/// matching as a prefix ("metf" finds "metformin"). FTS5's own operators are not offered.
public struct SearchQuery: Sendable, Equatable {
    public static let markStart = "\u{2039}"   // ‹
    public static let markEnd = "\u{203A}"     // ›

    public let words: [String]

    public init(_ text: String) {
        words = text.split(whereSeparator: { $0.isWhitespace }).map { word in
            String(word.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) })
        }.filter { word in word.contains { $0.isLetter || $0.isNumber } }
    }

    var ftsExpression: String? {
        guard !words.isEmpty else { return nil }
        return words.map { word in
            let phrase = "\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            return word.count >= 3 ? phrase + " *" : phrase
        }.joined(separator: " ")
    }
}
