import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// One document as the commands show it.
public struct DocumentInfo: Sendable {
    public var document: StoredDocument
    /// `added by you`, or the resource it came from (`DocumentReference/abc#content[0]`).
    public var origin: String { document.origin ?? "added by you" }
    public var hasText: Bool
}

/// How a document's bytes are handed to a browser (`hreader serve`): the type it is served as (one
/// of the allowed types in its clean form, `DocumentContentType.normalized`, with the charset for
/// text only; anything else as `application/octet-stream`), and whether a browser may show it in
/// place (text, HTML, PDF, images but SVG) or must download it. The web layer adds
/// `Content-Security-Policy: sandbox` in any case.
public struct DocumentDelivery: Sendable, Equatable {
    public var contentType: String
    public var inline: Bool

    public init(_ document: StoredDocument) {
        guard DocumentContentType.isAllowed(document.contentType), let type = DocumentContentType.mediaType(document.contentType) else {
            contentType = "application/octet-stream"
            inline = false
            return
        }
        let charset = type.hasPrefix("text/") ? DocumentContentType.charset(document.contentType) : nil
        contentType = charset.map { "\(type); charset=\($0)" } ?? type
        inline = type.hasPrefix("text/") || type == "application/pdf" || type.hasPrefix("image/")
    }
}

/// What `hreader search` finds: an entry or a document, best first.
public enum RecordSearchHit: Sendable {
    case entry(SearchRepository.Hit)
    case document(SearchRepository.DocumentHit)
    /// A measurement series found by its name or code: listed before the entries and documents.
    case series(SeriesSearchHit)

    public var rank: Double {
        switch self {
        case let .entry(hit): hit.rank
        case let .document(hit): hit.rank
        case .series: -.infinity
        }
    }
}

extension RecordSearchHit {
    /// A hit as `hreader search --json` and `GET /api/search` give it.
    public var jsonValue: JSONValue {
        switch self {
        case let .entry(hit):
            .object([("kind", .string("entry")), ("id", .int(hit.entryID)), ("patient_id", .int(hit.patientID)),
                     ("type", .string(hit.type.rawValue)), ("title", .string(hit.description)), ("snippet", .string(hit.snippet)),
                     ("date", hit.date.map(JSONValue.string) ?? .null)])
        case let .document(hit):
            .object([("kind", .string("document")), ("id", .int(hit.documentID)), ("patient_id", .int(hit.patientID)),
                     ("type", .string("document")), ("title", .string(hit.title)), ("snippet", .string(hit.snippet)),
                     ("date", hit.date.map(JSONValue.string) ?? .null)])
        case let .series(hit):
            .object([("kind", .string("series")), ("id", .int(hit.seriesIDs[0])), ("series_ids", .array(hit.seriesIDs.map { .int($0) })),
                     ("patient_id", .int(hit.patientID)), ("type", .string(hit.type.rawValue)), ("title", .string(hit.description)),
                     ("snippet", .string(hit.snippet)), ("date", hit.last.map { .string($0.text) } ?? .null),
                     ("count", .int(Int64(hit.count))), ("first", hit.first.map { .string($0.text) } ?? .null),
                     ("latest", hit.latest.map { .object([("value", .double($0.value)), ("unit", $0.unit.map(JSONValue.string) ?? .null)]) }
                        ?? hit.latestText.map { .object([("value", .string($0)), ("unit", .null)]) } ?? .null)])
        }
    }
}

extension StoredDocument {
    /// A document as `hreader documents list --json` and `GET /api/patients/P/documents` give it.
    public var jsonObject: JSONObject {
        [("id", .int(id)), ("uuid", .string(uuid)), ("patient_id", .int(patientID)), ("title", .string(title)),
         ("content_type", contentType.map(JSONValue.string) ?? .null), ("size", size.map { .int($0) } ?? .null),
         ("date", date.map { .string($0.text) } ?? .null), ("sha256", sha256.map(JSONValue.string) ?? .null),
         ("origin", .string(origin ?? "added by you")), ("state", .string(state.rawValue)),
         ("reason", reason.map(JSONValue.string) ?? .null), ("text_method", textMethod.map { .string($0.rawValue) } ?? .null),
         ("text_confidence", textConfidence.map { .double(($0 * 10).rounded() / 10) } ?? .null),
         ("text_note", textNote.map(JSONValue.string) ?? .null)]
    }

    /// How its text was obtained, as `documents list` shows it: `text`, `pdf-text`, `ocr 91%`,
    /// `pending`, or the reason there is none ("no text: install tesseract-ocr").
    public var textSummary: String {
        switch textMethod {
        case nil: return ""
        case .text?: return "text"
        case .pdfText?: return "pdf-text"
        case .ocr?: return "ocr" + (textConfidence.map { " \(Int($0.rounded()))%" } ?? "")
        case .pending?: return "pending"
        case .none?: return textNote ?? "none"
        }
    }
}

extension OpenVault {
    public var documentStore: DocumentRepository { DocumentRepository(db) }

    /// `hreader documents list`: one patient's documents (or everyone's), newest first.
    public func documents(patient: Patient? = nil) throws -> [StoredDocument] {
        try read { try documentStore.list(patientID: patient?.id) }
    }

    /// The document named by `reference` (its id, or uuid).
    public func document(_ reference: String) throws -> StoredDocument {
        try read {
            guard let document = try documentStore.find(reference) else {
                throw HReaderError.usage("no document matches '\(reference)'; see 'hreader documents list'")
            }
            return document
        }
    }

    /// The readable text kept for a document (nil for a PDF, an image, or a document not fetched).
    public func documentText(_ document: StoredDocument) throws -> String? {
        try read { try documentStore.text(id: document.id) }
    }

    /// Hands the document's exact bytes to `write`, one chunk at a time (never whole in memory).
    public func readDocumentBytes(_ document: StoredDocument, _ write: ([UInt8]) throws -> Void) throws {
        guard document.state == .fetched, document.sha256 != nil else {
            throw HReaderError(.failure, "document \(document.id) has no bytes in the vault (\(document.state.rawValue)"
                               + (document.reason.map { ": \($0)" } ?? "") + ")")
        }
        try read { try documentStore.readBytes(id: document.id, write) }
    }

    /// `hreader documents get --out FILE`: the exact bytes into a new file (mode 0600), written beside it
    /// and renamed into place, so a failure (or a refusal) leaves whatever had that name as it was. An
    /// existing file is replaced only with `replacing`.
    public func saveDocument(_ document: StoredDocument, to url: URL, replacing: Bool) throws {
        do {
            try AtomicFile.write(to: url, mode: 0o600, replacing: replacing) { append in try readDocumentBytes(document, append) }
        } catch is AtomicFile.Exists {
            throw HReaderError.usage("\(url.path) exists; give --force to replace it")
        } catch let error as AtomicFile.Error {
            throw HReaderError(.failure, error.description)
        }
    }

    /// `hreader documents add`: the file's bytes read and stored in chunks (a file of any size within
    /// the limit never sits whole in memory), under the manual source ("added by you"), its readable
    /// text extracted when it is text, HTML or RTF. One transaction: a failure leaves nothing.
    ///
    /// A PDF's text layer is read by `pdftotext` (`extractor`'s, in its sandbox) from the file itself
    /// while the bytes are stored (`PDFTextLayerRun`), and kept in the same transaction when it is the
    /// whole answer (no page left for OCR), has come within `extractor.textLayerWait`, and was read from
    /// the very bytes stored (their SHA-256). Otherwise the document is committed `pending` and read
    /// before this returns, its scanned pages by OCR (or all of it again from the vault, when the file
    /// changed meanwhile), in a transaction of its own; so is an image. Without `extractor` a PDF or an
    /// image is left waiting for `documents reindex`. `textLayer`: that reading, started by the caller
    /// before it opened the vault (`PDFTextLayerRun.start(adding:…)`); used, or stopped.
    public func addDocument(file url: URL, patient: Patient, title: String? = nil, date: ClinicalTime? = nil,
                            contentType given: String? = nil, limits: DocumentLimits = DocumentLimits(),
                            extractor: DocumentTextExtractor? = nil, textLayer started: PDFTextLayerRun? = nil) throws -> StoredDocument {
        // Whatever way this ends, a reading started by the caller ends with it (a no-op once it has answered).
        defer { started?.cancel() }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { throw HReaderError.usage("cannot read \(url.path)") }
        defer { try? handle.close() }
        let pieceSize = DocumentRepository.chunkSize
        let first = [UInt8](handle.readData(ofLength: pieceSize))
        if let given, DocumentContentType.normalized(given) == nil {
            throw HReaderError.usage("--content-type takes a media type such as text/plain or application/pdf")
        }
        guard let contentType = DocumentContentType.normalized(given) ?? DocumentContentType.guess(fileName: url.lastPathComponent, prefix: first) else {
            throw HReaderError.badInput("cannot tell what kind of document \(url.lastPathComponent) is; give --content-type")
        }
        guard DocumentContentType.isAllowed(contentType) else {
            throw HReaderError.badInput("\(url.lastPathComponent): \(DocumentContentType.refusal(contentType))")
        }
        let readsText = DocumentContentType.hasReadableText(contentType)
        let isPDF = DocumentContentType.mediaType(contentType) == "application/pdf"
        // Started before the transaction (by the caller, or here): pdftotext parses on the other core while
        // the bytes are encrypted.
        let textLayer = isPDF ? extractor.flatMap { extractor in
            started ?? extractor.tools.pdftotext.flatMap { PDFTextLayerRun.start(file: url, pdftotext: $0, limits: extractor.limits, maxBytes: limits.perDocument) }
        } : nil
        // Stopped (and its thread ended) on any way out; a no-op once it has answered.
        defer { textLayer?.cancel() }
        var textRead = false
        var textBytes: [UInt8]? = readsText ? [] : nil
        let id: Int64 = try write {
            let draft = DocumentDraft(patientID: patient.id, sourceID: try documentStore.manualSourceID(),
                                      title: title ?? url.deletingPathExtension().lastPathComponent, contentType: contentType,
                                      date: date ?? ClinicalTime(epoch: Int64(Date().timeIntervalSince1970)), state: .fetched)
            let id = try documentStore.insert(draft)
            var pending: [UInt8]? = first
            let stored: (size: Int64, sha256: String)
            do {
                stored = try documentStore.writeBytes(id: id, limit: limits.perDocument) {
                    let piece: [UInt8]
                    if let waiting = pending { piece = waiting; pending = nil } else { piece = [UInt8](handle.readData(ofLength: pieceSize)) }
                    if piece.isEmpty { return nil }
                    if textBytes != nil {
                        if textBytes!.count + piece.count <= DocumentText.maxInputBytes { textBytes! += piece } else { textBytes = nil }
                    }
                    return piece
                }
            } catch let error as DocumentRepository.TooLarge {
                throw HReaderError.badInput("\(url.lastPathComponent) is larger than the \(error.limit >> 20) MiB limit for a document "
                                            + "(HREADER_DOCUMENT_MAX_BYTES)")
            }
            if readsText {
                let text = textBytes.flatMap { DocumentText.readable($0, contentType: contentType) }
                try documentStore.setText(id: id, text.map { DocumentTextResult(text: $0, method: .text) }
                    ?? DocumentTextResult(text: nil, method: .none, note: textBytes == nil ? "too large to read as text" : "no readable text"))
            } else if isPDF, let extractor, let result = try Self.textLayerInTime(textLayer, of: stored.sha256, extractor: extractor,
                                                                             whileWaiting: { try db.writeDirtyPages() }) {
                try documentStore.setText(id: id, result)
                try audit.record("document.text", subject: try documentStore.get(id: id)?.uuid, detail: result.method.rawValue)
                textRead = true
            } else if DocumentTextExtractor.needsHelper(contentType) {
                try documentStore.markPending(id: id)
            } else {
                try documentStore.setText(id: id, DocumentTextResult(text: nil, method: .none, note: "no readable text in this kind of document"))
            }
            try audit.record("document.add", subject: patient.uuid)
            return id
        }
        if !textRead, let extractor, DocumentTextExtractor.needsHelper(contentType), let stored = try read({ try documentStore.get(id: id) }) {
            if let layer = textLayer?.wait(), layer.sha256 == stored.sha256 {
                // Read in time for OCR only, or late: only the scanned pages (if any) are read again, from the vault.
                try extractText(stored, bytes: storedBytes(of: stored), extractor: extractor,
                                layer: layer.pages)
            } else {
                try extractText(stored, extractor: extractor)
            }
        }
        return try read { try documentStore.get(id: id)! }
    }

    /// A PDF's text to keep in the transaction of its bytes: known at once without `pdftotext`, else the
    /// text layer `run` read when it has answered within `extractor.textLayerWait`, from bytes whose
    /// SHA-256 is `sha256`, and needs no OCR. Nil: read after the commit.
    /// `whileWaiting` runs first when `pdftotext` is still writing: the bytes' pages are encrypted and
    /// written to the WAL beside it rather than at the commit, after it (docs/performance.md).
    private static func textLayerInTime(_ run: PDFTextLayerRun?, of sha256: String, extractor: DocumentTextExtractor,
                                        whileWaiting: () throws -> Void) throws -> DocumentTextResult? {
        guard extractor.tools.pdftotext != nil else { return extractor.pdfWithoutOCR(.success([])) }
        guard let run else { return nil }
        if run.wait(until: .now()) == nil { try whileWaiting() }
        guard let layer = run.wait(until: .now() + extractor.textLayerWait), layer.sha256 == sha256 else { return nil }
        return extractor.pdfWithoutOCR(layer.pages)
    }

    /// `hreader documents remove`: the document, its bytes and its text.
    public func removeDocument(_ document: StoredDocument) throws {
        try write {
            try documentStore.remove(id: document.id)
            try audit.record("document.remove", subject: document.uuid)
        }
    }

    /// `hreader search` over entries and documents together: the two ranked lists merged by their
    /// BM25 ranks. With an entry `type`, documents are left out.
    /// Measurement series whose name or code matches come first (`SeriesSearchHit`), then the rest.
    public func searchRecords(_ text: String, patient: Patient? = nil, type: EntryType? = nil, limit: Int = 50) throws -> [RecordSearchHit] {
        let query = try Self.searchQuery(text)
        let series = try read { try seriesHits(query, patientID: patient?.id, type: type) }.prefix(limit).map(RecordSearchHit.series)
        guard series.count < limit else { return series }
        return try series + rankedRecords(query, patient: patient, type: type, limit: limit - series.count)
    }

    /// Entries and documents, best first.
    private func rankedRecords(_ query: SearchQuery, patient: Patient?, type: EntryType?, limit: Int) throws -> [RecordSearchHit] {
        guard type == nil else {
            return try read { try SearchRepository(db).search(query, patientID: patient?.id, type: type, limit: limit) }.map(RecordSearchHit.entry)
        }
        // Both lists ranked, merged, cut to `limit`; passages are made for those shown only. The two
        // indexes are ranked at once, the documents' on the companion connection: for a word in every
        // document and most entries, ranking is most of a search (14 + 20 ms one after the other).
        return try read {
            let index = SearchRepository(db)
            let (rankedEntries, rankedDocuments) = try readingTwoAtOnce({
                try index.rankEntries(query, patientID: patient?.id, limit: limit)
            }, companion: { other in
                try SearchRepository(other.db).rankDocuments(query, patientID: patient?.id, limit: limit)
            })
            let entries = rankedEntries.map { (found: $0, isDocument: false) }
            let documents = rankedDocuments.map { (found: $0, isDocument: true) }
            let shown = (entries + documents).enumerated().sorted { a, b in
                a.element.found.rank != b.element.found.rank ? a.element.found.rank < b.element.found.rank : a.offset < b.offset
            }.prefix(limit).map(\.element)
            let entryHits = Dictionary(try index.entryHits(shown.filter { !$0.isDocument }.map(\.found), query: query)
                .map { ($0.entryID, $0) }, uniquingKeysWith: { first, _ in first })
            let documentHits = Dictionary(try index.documentHits(shown.filter(\.isDocument).map(\.found), query: query)
                .map { ($0.documentID, $0) }, uniquingKeysWith: { first, _ in first })
            // In the merged order (a match removed since it was ranked has no hit, and is left out).
            return shown.compactMap { item -> RecordSearchHit? in
                item.isDocument ? documentHits[item.found.id].map(RecordSearchHit.document)
                    : entryHits[item.found.shownID].map(RecordSearchHit.entry)
            }
        }
    }

    /// `hreader check`: documents whose bytes no longer match their SHA-256.
    public func damagedDocuments() throws -> [String] {
        try read { try documentStore.damaged().map(\.problem) }
    }
}
