import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// What `documents reindex` did.
public struct ReindexSummary: Sendable, Equatable {
    public var read = 0
    public var withText = 0
    public var withoutText = 0
}

extension OpenVault {
    /// The vault setting for Tesseract's languages (`eng`, `eng+deu`).
    static let ocrLanguagesKey = "ocr_languages"
    public static let defaultOCRLanguages = "eng"

    /// The OCR languages this vault reads with (its setting, else English).
    public func ocrLanguages() throws -> String {
        try read { try settings.value(Self.ocrLanguagesKey) } ?? Self.defaultOCRLanguages
    }

    /// Sets the vault's OCR languages (nil: back to English), checked against what Tesseract has.
    public func setOCRLanguages(_ languages: String?, tools: TextTools = .find()) throws {
        if let languages, let problem = TextTools.problem(languages: languages, installed: tools.languages()) {
            throw HReaderError.usage(problem)
        }
        try write { try settings.set(Self.ocrLanguagesKey, languages) }
    }

    /// The extractor for this vault: its OCR languages unless `languages` is given (checked).
    public func textExtractor(languages given: String? = nil, tools: TextTools = .find()) throws -> DocumentTextExtractor {
        if let given, let problem = TextTools.problem(languages: given, installed: tools.languages()) { throw HReaderError.usage(problem) }
        return DocumentTextExtractor(tools: tools, languages: try given ?? ocrLanguages())
    }

    /// Reads one stored document's text again (by helper, out of process, for a PDF or an image) and
    /// keeps it, indexed for search. The bytes go from the vault to the helpers' stdin one chunk at a
    /// time; no write transaction is open while they run.
    @discardableResult
    public func extractText(_ document: StoredDocument, extractor: DocumentTextExtractor) throws -> DocumentTextResult {
        guard document.state == .fetched, document.sha256 != nil else {
            return DocumentTextResult(text: nil, method: .none, note: "no bytes in the vault")
        }
        // Streamed from the vault to each helper, a chunk at a time: a 50 MB scan is never whole in memory.
        return try extractText(document, bytes: storedBytes(of: document), extractor: extractor)
    }

    /// A stored document's bytes as a stream of its chunks, each read through the vault's door (on
    /// whichever thread reads it), the door left between them.
    func storedBytes(of document: StoredDocument) -> DocumentBytes {
        DocumentBytes { [self] in
            let next = try exclusively { try documentStore.chunks(id: document.id) }
            return { try self.exclusively { try next() } }
        }
    }

    /// As above, with the document's bytes at hand (an import that has just stored them).
    @discardableResult
    func extractText(_ document: StoredDocument, bytes: [UInt8], extractor: DocumentTextExtractor) throws -> DocumentTextResult {
        try extractText(document, bytes: .inMemory(bytes), extractor: extractor)
    }

    /// As above; `layer`: the PDF's text layer read already (`PDFTextLayerRun`), so only its scanned
    /// pages are read from `bytes`.
    @discardableResult
    func extractText(_ document: StoredDocument, bytes: DocumentBytes, extractor: DocumentTextExtractor,
                     layer: Result<[String], Error>? = nil) throws -> DocumentTextResult {
        guard let sha256 = document.sha256 else { return DocumentTextResult(text: nil, method: .none, note: "no bytes in the vault") }
        let result = layer.map { extractor.pdf(bytes, layer: $0) } ?? extractor.extract(bytes, contentType: document.contentType)
        try write {
            // Replaced or removed meanwhile (another process): its own extraction will do.
            guard try documentStore.get(id: document.id)?.sha256 == sha256 else { return }
            try documentStore.setText(id: document.id, result)
            try audit.record("document.text", subject: document.uuid, detail: result.method.rawValue)
        }
        return result
    }

    /// `hreader documents reindex`: reads again the documents whose text is waiting or missing (a
    /// helper installed since), or, with `ocr`, every PDF and image too (a language installed since).
    public func reindexDocuments(patient: Patient? = nil, ocr: Bool = false, extractor: DocumentTextExtractor,
                                 each: (StoredDocument, DocumentTextResult) -> Void = { _, _ in }) throws -> ReindexSummary {
        let candidates = try documents(patient: patient).filter { d in
            guard d.state == .fetched else { return false }
            switch d.textMethod {
            case .pending?, .none?, nil: return true
            case .ocr?, .pdfText?: return ocr
            case .text?: return false
            }
        }
        var summary = ReindexSummary()
        for document in candidates.reversed() {
            let result = try extractText(document, extractor: extractor)
            summary.read += 1
            if result.text != nil && result.method != .none { summary.withText += 1 } else { summary.withoutText += 1 }
            each(document, result)
        }
        return summary
    }

    /// At the end of an import or sync: the PDFs and images still waiting (left by this run's bound or
    /// an earlier one's) are read while the run's bound allows; `counts.queued` is then what still waits.
    func readWaitingDocuments(_ counts: inout DocumentImportCounts, limits: DocumentLimits) throws {
        let room = max(0, limits.extractPerImport - counts.extracted)
        if room > 0 { counts.extracted += try extractPending(limit: room, extractor: try textExtractor()) }
        counts.queued = try read { try documentStore.pending().count }
    }

    /// Reads the documents an import left waiting, oldest first, at most `limit` of them.
    func extractPending(limit: Int, extractor: DocumentTextExtractor) throws -> Int {
        let ids = try read { try documentStore.pending(limit: limit) }
        for id in ids {
            guard let document = try read({ try documentStore.get(id: id) }) else { continue }
            try extractText(document, extractor: extractor)
        }
        return ids.count
    }

    // MARK: Lab values, proposed

    /// `hreader documents propose`: the lines of a document's text that read as a lab result.
    public func labProposals(_ document: StoredDocument) throws -> [LabLine] {
        guard let text = try documentText(document) else { return [] }
        return LabLines.proposals(in: text)
    }

    /// `hreader documents propose --accept N…`: the chosen proposals (numbered from 1, as listed)
    /// stored as `result` entries of the document's patient, dated as the document, each with the
    /// document as its provenance (a FHIR Observation `derivedFrom` the document).
    public func acceptLabProposals(_ document: StoredDocument, numbers: [Int]) throws -> [Entry] {
        let proposals = try labProposals(document)
        guard !numbers.isEmpty else { return [] }
        for number in numbers where !(1...max(proposals.count, 1)).contains(number) || proposals.isEmpty {
            throw HReaderError.usage("no proposal \(number) for document \(document.id) (\(proposals.count) proposed); see 'hreader documents propose \(document.id)'")
        }
        let patient = try patient(String(document.patientID))
        var added: [Entry] = []
        for number in Array(Set(numbers)).sorted() {
            let line = proposals[number - 1]
            var range = ""
            if let low = line.low, let high = line.high { range = " (reference \(Self.number(low)) - \(Self.number(high)))" }
            var content = EntryContent(type: .result, description: line.name, status: "final", date: document.date)
            content.valueNumber = line.value
            content.valueText = line.valueText + range
            content.unit = line.unit
            content.raw = Self.observation(line, document: document).serialized(sortingKeys: true)
            // Where it came from, where the user sees it (`entries show`), beside the raw Observation's `derivedFrom`.
            let provenance = UserFields(comments: "From document \(document.id) (\(document.title)), line \(line.line): \(line.text)")
            added.append(try addEntry(patient: patient, content: content, user: provenance))
        }
        try write { try audit.record("document.propose.accept", subject: document.uuid, detail: "\(added.count) results") }
        return added
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// The accepted line as a FHIR Observation, derived from the document.
    static func observation(_ line: LabLine, document: StoredDocument) -> JSONValue {
        var object: JSONObject = [
            "resourceType": "Observation", "status": "final",
            "category": .array([.object(["coding": .array([.object(["system": "http://terminology.hl7.org/CodeSystem/observation-category",
                                                                      "code": "laboratory"])])])]),
            "code": .object(["text": .string(line.name)]),
            "valueQuantity": .object(["value": .double(line.value), "unit": .string(line.unit)]),
            "derivedFrom": .array([.object(["reference": .string("urn:hreader:document|\(document.uuid)"), "display": .string(document.title)])]),
            "note": .array([.object(["text": .string("Proposed from line \(line.line) of the document and accepted: \(line.text)")])]),
        ]
        if let date = document.date { object["effectiveDateTime"] = .string(date.text) }
        if line.low != nil || line.high != nil {
            var range: JSONObject = [:]
            if let low = line.low { range["low"] = .object(["value": .double(low), "unit": .string(line.unit)]) }
            if let high = line.high { range["high"] = .object(["value": .double(high), "unit": .string(line.unit)]) }
            object["referenceRange"] = .array([.object(range)])
        }
        return .object(object)
    }
}
