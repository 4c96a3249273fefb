import Foundation
import HReaderCrypto
import HReaderModel

/// What became of a document's bytes (schema/006_documents.sql).
public enum DocumentState: String, Sendable, CaseIterable {
    /// The bytes are in the vault.
    case fetched
    /// A fetch failed (`reason`); the next import or sync tries again.
    case failed
    /// Kept as a reference only, never fetched (`reason`: a type not allowed, too large, another host).
    case reference
}

/// How a document's readable text was obtained (schema/012_document_text.sql).
public enum DocumentTextMethod: String, Sendable, CaseIterable {
    /// Read in process: plain text, HTML, RTF, XML.
    case text
    /// A PDF's own text layer (pdftotext, in a sandboxed child).
    case pdfText = "pdf-text"
    /// Tesseract's OCR of an image or of a PDF's pages without a text layer (in a sandboxed child).
    case ocr
    /// No text, with the reason in `textNote`.
    case none
    /// Waiting for extraction (an import's bound was reached); `documents reindex` does it.
    case pending
}

/// What extraction found for one document, as stored beside its bytes.
public struct DocumentTextResult: Sendable, Equatable {
    public var text: String?
    public var method: DocumentTextMethod
    public var confidence: Double?
    public var note: String?
    public var languages: String?

    public init(text: String?, method: DocumentTextMethod, confidence: Double? = nil, note: String? = nil, languages: String? = nil) {
        self.text = text; self.method = method; self.confidence = confidence; self.note = note; self.languages = languages
    }
}

/// A document's metadata as stored; its bytes are read with `DocumentRepository.readBytes`.
public struct StoredDocument: Sendable, Equatable {
    public var id: Int64
    public var uuid: String
    public var patientID: Int64
    public var sourceID: Int64
    /// `DocumentReference/abc#content[0]`; nil for a document the user added.
    public var origin: String?
    public var url: String?
    public var title: String
    public var contentType: String?
    public var size: Int64?
    public var sha256: String?
    public var date: ClinicalTime?
    public var declaredSize: Int64?
    public var declaredHash: String?
    public var etag: String?
    public var version: String?
    public var state: DocumentState
    public var reason: String?
    public var attempts: Int
    public var created: String
    public var updated: String
    /// How its readable text was obtained (schema 12); nil when nobody looked (not fetched).
    public var textMethod: DocumentTextMethod? = nil
    /// Tesseract's mean word confidence (0 to 100), for `ocr`.
    public var textConfidence: Double? = nil
    /// Why there is no text (`none`), or what was left out.
    public var textNote: String? = nil
    /// The OCR languages the text was read with (`eng+deu`).
    public var textLanguages: String? = nil

    /// Added by the user (`hreader documents add`), not read from a source.
    public var isAddedByUser: Bool { origin == nil }
}

/// The metadata a caller sets (everything but ids, bytes and timestamps).
public struct DocumentDraft: Sendable, Equatable {
    /// The person it is shown under.
    public var patientID: Int64
    /// The patient row of the record it came with (schema 8), when not `patientID` itself: an
    /// unmerge gives it back to that record's person. Set when it is stored; never changed after.
    public var recordID: Int64?
    public var sourceID: Int64
    public var origin: String?
    public var url: String?
    public var title: String
    public var contentType: String?
    public var date: ClinicalTime?
    public var declaredSize: Int64?
    public var declaredHash: String?
    public var etag: String?
    public var version: String?
    public var state: DocumentState
    public var reason: String?
    public var attempts: Int = 0

    public init(patientID: Int64, sourceID: Int64, origin: String? = nil, url: String? = nil, title: String, contentType: String?,
                date: ClinicalTime? = nil, state: DocumentState, reason: String? = nil) {
        self.patientID = patientID; self.sourceID = sourceID; self.origin = origin; self.url = url; self.title = title
        self.contentType = contentType; self.date = date; self.state = state; self.reason = reason
    }

    public init(_ stored: StoredDocument) {
        self.init(patientID: stored.patientID, sourceID: stored.sourceID, origin: stored.origin, url: stored.url, title: stored.title,
                  contentType: stored.contentType, date: stored.date, state: stored.state, reason: stored.reason)
        declaredSize = stored.declaredSize; declaredHash = stored.declaredHash; etag = stored.etag; version = stored.version
        attempts = stored.attempts
    }
}

/// Documents and their bytes (schema/006_documents.sql). The bytes go in and come out in chunks of
/// at most `chunkSize`, so a document of any size is never whole in memory; the readable text sits
/// beside them and is indexed for search (`documents_search`, kept by triggers).
///
///     let documents = DocumentRepository(db)
///     let id = try documents.insert(DocumentDraft(patientID: 1, sourceID: 1, title: "Scan", contentType: "application/pdf", state: .fetched))
///     let (size, sha256) = try documents.writeBytes(id: id, limit: 64 << 20) { handle.readData(ofLength: 1 << 16) … }
///     try documents.readBytes(id: id) { chunk in out.write(chunk) }
public struct DocumentRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    /// The largest chunk row.
    public static let chunkSize = 256 * 1024

    /// The source of documents the user added (migration 1's `manual` source).
    public func manualSourceID() throws -> Int64 {
        guard let id = try db.scalarInt("SELECT id FROM sources WHERE kind = 'manual' ORDER BY id LIMIT 1") else {
            throw DatabaseError(code: 1, message: "the vault has no manual source", sql: nil)
        }
        return id
    }

    /// More bytes than the limit were offered; nothing of them is kept (the caller's transaction rolls back or it removes the row).
    public struct TooLarge: Error, Sendable { public let limit: Int64 }

    static let columns = """
        id, uuid, patient_id, source_id, origin, url, title, content_type, size, sha256, date_text, date_epoch, \
        declared_size, declared_hash, etag, version, state, reason, attempts, created, updated, \
        text_method, text_confidence, text_note, text_languages
        """

    static func row(_ s: Statement) -> StoredDocument {
        StoredDocument(id: s.int64(0)!, uuid: s.string(1)!, patientID: s.int64(2)!, sourceID: s.int64(3)!, origin: s.string(4),
                       url: s.string(5), title: s.string(6) ?? "", contentType: s.string(7), size: s.int64(8), sha256: s.string(9),
                       date: EntryRepository.time(s, 10, 11), declaredSize: s.int64(12), declaredHash: s.string(13), etag: s.string(14),
                       version: s.string(15), state: DocumentState(rawValue: s.string(16) ?? "") ?? .failed, reason: s.string(17),
                       attempts: s.int(18) ?? 0, created: s.string(19)!, updated: s.string(20)!,
                       textMethod: s.string(21).flatMap(DocumentTextMethod.init(rawValue:)), textConfidence: s.double(22),
                       textNote: s.string(23), textLanguages: s.string(24))
    }

    /// Every document of one patient (or everyone), newest first.
    public func list(patientID: Int64? = nil) throws -> [StoredDocument] {
        var sql = "SELECT \(Self.columns) FROM documents"
        var arguments: [DatabaseValueConvertible?] = []
        if let patientID { sql += " WHERE patient_id = ?"; arguments.append(patientID) }
        sql += " ORDER BY date_epoch IS NULL, date_epoch DESC, id DESC"
        return try db.query(sql, arguments, Self.row)
    }

    public func get(id: Int64) throws -> StoredDocument? {
        try db.query("SELECT \(Self.columns) FROM documents WHERE id = ?", [id], Self.row).first
    }

    /// A document by its id or uuid (or a unique uuid prefix of 8 characters or more).
    public func find(_ reference: String) throws -> StoredDocument? {
        if let id = Int64(reference) { return try get(id: id) }
        let prefix = reference.lowercased()
        guard prefix.count >= 8, prefix.allSatisfy({ $0.isHexDigit || $0 == "-" }) else { return nil }
        let found = try db.query("SELECT \(Self.columns) FROM documents WHERE uuid >= ? AND uuid < ? LIMIT 2", [prefix, prefix + "\u{7f}"], Self.row)
        return found.count == 1 ? found[0] : nil
    }

    /// The document a source's attachment became, for this patient.
    public func find(patientID: Int64, sourceID: Int64, origin: String) throws -> StoredDocument? {
        try db.query("SELECT \(Self.columns) FROM documents WHERE patient_id = ? AND source_id = ? AND origin = ? ORDER BY id LIMIT 1",
                     [patientID, sourceID, origin], Self.row).first
    }

    public func insert(_ draft: DocumentDraft, now: Date = Date()) throws -> Int64 {
        let stamp = Timestamps.now(now)
        try db.execute("""
            INSERT INTO documents (uuid, patient_id, source_id, origin, url, title, content_type, date_text, date_epoch,
                                   declared_size, declared_hash, etag, version, state, reason, attempts, created, updated, source_patient_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [try SecureRandom.uuidString(), draft.patientID, draft.sourceID, draft.origin, draft.url, draft.title, draft.contentType,
                  draft.date?.text, draft.date?.epoch, draft.declaredSize, draft.declaredHash, draft.etag, draft.version,
                  draft.state.rawValue, draft.reason, Int64(draft.attempts), stamp, stamp, draft.recordID ?? draft.patientID])
        return db.lastInsertRowID
    }

    /// Gives a person's document of one source (by its origin) to another source, which brings it
    /// now, unless that source has one of that origin already.
    public func move(patientID: Int64, origin: String, from: Int64, to: Int64) throws {
        guard try find(patientID: patientID, sourceID: to, origin: origin) == nil else { return }
        try db.execute("UPDATE documents SET source_id = ? WHERE patient_id = ? AND source_id = ? AND origin = ?", [to, patientID, from, origin])
    }

    /// Sets the metadata (the bytes, size and hash stay as they are).
    public func update(id: Int64, _ draft: DocumentDraft, now: Date = Date()) throws {
        try db.execute("""
            UPDATE documents SET url = ?, title = ?, content_type = ?, date_text = ?, date_epoch = ?, declared_size = ?,
                   declared_hash = ?, etag = ?, version = ?, state = ?, reason = ?, attempts = ?, updated = ?
            WHERE id = ?
            """, [draft.url, draft.title, draft.contentType, draft.date?.text, draft.date?.epoch, draft.declaredSize, draft.declaredHash,
                  draft.etag, draft.version, draft.state.rawValue, draft.reason, Int64(draft.attempts), Timestamps.now(now), id])
    }

    /// Replaces the document's bytes with what `next` hands out (any piece size; nil at the end),
    /// stored in chunks of `chunkSize`, and records their size and SHA-256. More than `limit`
    /// bytes throws `TooLarge` (call inside a transaction, which then rolls back).
    @discardableResult
    public func writeBytes(id: Int64, limit: Int64? = nil, _ next: () throws -> [UInt8]?) throws -> (size: Int64, sha256: String) {
        try db.execute("DELETE FROM document_chunks WHERE document_id = ?", [id])
        let insert = try db.prepare("INSERT INTO document_chunks (document_id, seq, bytes) VALUES (?, ?, ?)")
        let hasher = SHA256.Incremental()
        var pending: [UInt8] = []
        pending.reserveCapacity(Self.chunkSize)
        var size: Int64 = 0
        var seq: Int64 = 0
        func flush() throws {
            guard !pending.isEmpty else { return }
            insert.reset()
            try insert.bind([id, seq, DatabaseValue.blob(pending)])
            _ = try insert.step()
            seq += 1
            pending.removeAll(keepingCapacity: true)
        }
        while let piece = try next() {
            guard !piece.isEmpty else { continue }
            size += Int64(piece.count)
            if let limit, size > limit { throw TooLarge(limit: limit) }
            hasher.update(piece)
            var offset = 0
            while offset < piece.count {
                let take = min(Self.chunkSize - pending.count, piece.count - offset)
                pending.append(contentsOf: piece[offset..<(offset + take)])
                offset += take
                if pending.count == Self.chunkSize { try flush() }
            }
        }
        try flush()
        let digest = Self.hex(hasher.finish())
        try db.execute("UPDATE documents SET size = ?, sha256 = ?, updated = ? WHERE id = ?", [size, digest, Timestamps.now(), id])
        return (size, digest)
    }

    /// Hands the stored bytes to `body` in order, one chunk at a time.
    public func readBytes(id: Int64, _ body: ([UInt8]) throws -> Void) throws {
        let select = try db.prepare("SELECT bytes FROM document_chunks WHERE document_id = ? ORDER BY seq")
        try select.bind([id])
        while try select.step() { try body(select.blob(0) ?? []) }
    }

    /// The stored bytes one chunk at a time, pulled: each call gives the next chunk, nil at the end
    /// (for a consumer that asks, such as a child process's stdin). The statement stays open until
    /// the end is reached or the function is released.
    public func chunks(id: Int64) throws -> () throws -> [UInt8]? {
        let select = try db.prepare("SELECT bytes FROM document_chunks WHERE document_id = ? ORDER BY seq")
        try select.bind([id])
        var done = false
        return {
            guard !done else { return nil }
            if try select.step() { return select.blob(0) ?? [] }
            done = true
            select.reset()
            return nil
        }
    }

    /// Drops the bytes (a document now kept as a reference only).
    public func removeBytes(id: Int64) throws {
        try db.execute("DELETE FROM document_chunks WHERE document_id = ?", [id])
        try db.execute("UPDATE documents SET size = NULL, sha256 = NULL WHERE id = ?", [id])
    }

    /// Stores text read in process (`text`), or none (the method left unset for a caller to set).
    public func setText(id: Int64, _ text: String?) throws {
        try db.execute("UPDATE documents SET text = ?, text_method = CASE WHEN ? IS NULL THEN NULL ELSE 'text' END, text_confidence = NULL, "
                       + "text_note = NULL, text_languages = NULL WHERE id = ?", [text, text, id])
    }

    /// Stores what extraction found: the text (indexed for search by the triggers) and how it was obtained.
    public func setText(id: Int64, _ result: DocumentTextResult) throws {
        try db.execute("""
            UPDATE documents SET text = ?, text_method = ?, text_confidence = ?, text_note = ?, text_languages = ? WHERE id = ?
            """, [result.text, result.method.rawValue, result.confidence, result.note, result.languages, id])
    }

    /// Marks a document as waiting for extraction (its text, if any, stays until the new one is read).
    public func markPending(id: Int64) throws {
        try db.execute("UPDATE documents SET text_method = 'pending', text_note = NULL WHERE id = ?", [id])
    }

    /// The ids of documents waiting for extraction, oldest first (of one patient, or everyone's).
    public func pending(patientID: Int64? = nil, limit: Int = Int(Int32.max)) throws -> [Int64] {
        try db.query("SELECT id FROM documents WHERE text_method = 'pending' AND (? IS NULL OR patient_id = ?) ORDER BY id LIMIT ?",
                     [patientID, patientID, Int64(limit)]) { $0.int64(0)! }
    }

    public func text(id: Int64) throws -> String? {
        try db.scalarString("SELECT text FROM documents WHERE id = ?", [id])
    }

    public func remove(id: Int64) throws {
        try db.execute("DELETE FROM documents WHERE id = ?", [id])
    }

    /// Documents whose stored bytes do not hash to their recorded SHA-256 (or size): `hreader check`.
    public func damaged() throws -> [(id: Int64, problem: String)] {
        let stored = try db.query("SELECT id, size, sha256 FROM documents WHERE sha256 IS NOT NULL") { ($0.int64(0)!, $0.int64(1), $0.string(2)!) }
        var problems: [(Int64, String)] = []
        for (id, size, sha256) in stored {
            let hasher = SHA256.Incremental()
            var count: Int64 = 0
            try readBytes(id: id) { chunk in hasher.update(chunk); count += Int64(chunk.count) }
            if count != size { problems.append((id, "document \(id) holds \(count) bytes, \(size ?? 0) were stored")) }
            else if Self.hex(hasher.finish()) != sha256 { problems.append((id, "document \(id)'s bytes do not match their SHA-256")) }
        }
        return problems
    }

    public func count() throws -> Int { Int(try db.scalarInt("SELECT count(*) FROM documents") ?? 0) }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 0x0f)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
