import Foundation
import HReaderCrypto
import HReaderModel
import HReaderNet
import HReaderRecords
import HReaderStore

/// What an import did with documents, for the summary.
public struct DocumentImportCounts: Sendable, Equatable {
    /// Bytes stored or replaced.
    public var stored = 0
    /// Already in the vault and unchanged at the source (not fetched again).
    public var unchanged = 0
    /// Fetches that failed: the entry is imported, the document is tried again at the next sync.
    public var failed = 0
    /// Kept as references only (a type not allowed, too large, on another host), by reason.
    public var referenced: [String: Int] = [:]
    /// Bytes stored by this import.
    public var bytes: Int64 = 0
    public var failures: [String] = []
    /// PDFs and images read by the helpers during the import (at most `DocumentLimits.extractPerImport`).
    public var extracted = 0
    /// PDFs and images left waiting for the next import or `documents reindex`.
    public var queued = 0
}

/// Keeps the attachments of imported resources as documents (issue 26): inline `data` decoded, a
/// `url` on the source's own server fetched through that host's serial client with the source's
/// credentials, anything else kept as a reference with the reason. A re-import fetches only what
/// changed: by the attachment's declared size and hash when it gives them, else by the resource's
/// version (asking with the stored ETag), else not at all while the url stays the same. A failed
/// fetch never fails the import; it is counted and tried again next time.
struct DocumentImporter {
    let vault: OpenVault
    let sourceID: Int64
    let limits: DocumentLimits
    /// The source's FHIR server; nil for a file, whose urls are never fetched.
    let server: FHIRClient?
    /// Reads PDFs and images as they are stored; nil leaves them waiting (`documents reindex`).
    var extractor: DocumentTextExtractor? = nil
    /// The one file source of earlier versions, whose documents this source takes over when it
    /// brings them again (`FileSources`).
    var takingOverFrom: Int64? = nil

    /// What to do with one attachment.
    enum Step {
        case unchanged
        /// The bytes are unchanged; what the resource says of them (title, date, version) is kept anew.
        case refresh(DocumentDraft, existing: Int64)
        case keep(DocumentDraft, existing: Int64?, bytes: [UInt8]?)
        case fetch(URL, DocumentDraft, existing: StoredDocument?)
    }

    /// Every attachment of the entries, filed with them (`filed`: the person and the record). `budget`
    /// is what is left of the import's byte limit.
    func run(entries: [MappedEntry], filed: RecordImporter.Filed, counts: inout DocumentImportCounts, budget: inout Int64) async throws {
        for attachment in attachments(of: entries) {
            let step = try plan(attachment, filed: filed, budget: budget)
            switch step {
            case .unchanged, .refresh, .keep:
                try settle(step, counts: &counts, budget: &budget)
            case let .fetch(url, draft, existing):
                guard let server else { continue }
                var fetched = draft
                do {
                    let answer = try await server.attachment(url, contentType: draft.contentType,
                                                             etag: existing?.state == .fetched ? existing?.etag : nil)
                    if answer.notModified {
                        fetched.state = .fetched
                        fetched.etag = answer.etag
                        try vault.write { try vault.documentStore.update(id: existing!.id, fetched) }
                        counts.unchanged += 1
                        continue
                    }
                    fetched.etag = answer.etag
                    if fetched.contentType == nil { fetched.contentType = answer.contentType }   // the server's, made clean by `checked`
                    fetched = Self.checked(fetched, size: Int64(answer.bytes.count), limits: limits, budget: budget)
                    try apply(fetched, existing: existing?.id, bytes: fetched.state == .fetched ? answer.bytes : nil, counts: &counts, budget: &budget)
                } catch let error as NetError {
                    if case .responseTooLarge = error {
                        fetched.state = .reference
                        fetched.reason = "too large: the answer is over the --max-response-size limit"
                        try apply(fetched, existing: existing?.id, bytes: nil, counts: &counts, budget: &budget)
                        continue
                    }
                    // Another place's bytes are not this source's document: a reference, asked again at the next sync.
                    if case let .redirectNotFollowed(_, reason) = error {
                        fetched.state = .reference
                        fetched.reason = reason
                        try apply(fetched, existing: existing?.id, bytes: nil, counts: &counts, budget: &budget)
                        continue
                    }
                    // Failed: kept (with what it had, if anything) and tried again at the next import or sync.
                    counts.failed += 1
                    counts.failures.append("\(draft.origin ?? "a document"): \(error.description)")
                    try vault.write {
                        if let existing, existing.state == .fetched {
                            return   // the bytes it has stay; the declared size/hash left as before so it is asked again
                        }
                        var failed = draft
                        failed.state = .failed
                        failed.reason = error.description
                        failed.attempts = (existing?.attempts ?? 0) + 1
                        if let existing { try vault.documentStore.update(id: existing.id, failed) } else { _ = try vault.documentStore.insert(failed) }
                    }
                }
            }
        }
    }

    /// The same for an input without a server (a file): inline data is kept, urls are references.
    func runLocal(entries: [MappedEntry], filed: RecordImporter.Filed, counts: inout DocumentImportCounts, budget: inout Int64) throws {
        for attachment in attachments(of: entries) {
            try settle(try plan(attachment, filed: filed, budget: budget), counts: &counts, budget: &budget)
        }
    }

    /// Carries out a step that needs no server (a fetch is left to `run`).
    private func settle(_ step: Step, counts: inout DocumentImportCounts, budget: inout Int64) throws {
        switch step {
        case .unchanged:
            counts.unchanged += 1
        case let .refresh(draft, existing):
            try vault.write { try vault.documentStore.update(id: existing, draft) }
            counts.unchanged += 1
        case let .keep(draft, existing, bytes):
            try apply(draft, existing: existing, bytes: bytes, counts: &counts, budget: &budget)
        case .fetch:
            break
        }
    }

    /// The attachments of DocumentReference, DiagnosticReport and Media entries.
    func attachments(of entries: [MappedEntry]) -> [FHIRAttachments.Attachment] {
        entries.flatMap { entry -> [FHIRAttachments.Attachment] in
            guard let raw = entry.content.raw else { return [] }
            return FHIRAttachments.attachments(raw: raw, remoteID: entry.remoteID)
        }
    }

    func plan(_ attachment: FHIRAttachments.Attachment, filed: RecordImporter.Filed, budget: Int64) throws -> Step {
        if let legacy = takingOverFrom, legacy != sourceID {
            try vault.write { try vault.documentStore.move(patientID: filed.person, origin: attachment.origin, from: legacy, to: sourceID) }
        }
        let existing = try vault.read { try vault.documentStore.find(patientID: filed.person, sourceID: sourceID, origin: attachment.origin) }
        // Kept only in its clean form; a type that is not one is refused below.
        var draft = DocumentDraft(patientID: filed.person, sourceID: sourceID, origin: attachment.origin, url: attachment.url,
                                  title: attachment.title, contentType: DocumentContentType.normalized(attachment.contentType),
                                  date: attachment.date.flatMap { ClinicalTime.parse($0) }, state: .fetched)
        draft.recordID = filed.record
        draft.declaredSize = attachment.size
        draft.declaredHash = attachment.hash
        draft.version = attachment.version
        draft.etag = existing?.etag
        draft.attempts = existing?.attempts ?? 0

        /// The bytes stay; the metadata is written again only when it changed.
        func same(_ existing: StoredDocument) -> Step {
            var kept = draft
            kept.state = .fetched
            kept.reason = nil
            kept.attempts = 0
            kept.etag = existing.etag
            if kept.contentType == nil { kept.contentType = existing.contentType }
            var stored = DocumentDraft(existing)
            stored.recordID = kept.recordID   // set once, when it was stored
            return kept == stored ? .unchanged : .refresh(kept, existing: existing.id)
        }
        func reference(_ reason: String) -> Step {
            var kept = draft
            kept.state = .reference
            kept.reason = reason
            if let existing, existing.state == .reference, existing.reason == reason, existing.url == kept.url { return .unchanged }
            return .keep(kept, existing: existing?.id, bytes: nil)
        }
        if let type = attachment.contentType, !DocumentContentType.isAllowed(type) {
            return reference(DocumentContentType.refusal(type))
        }
        if let size = attachment.size, size > limits.perDocument {
            return reference("too large: \(size) bytes, over the \(limits.perDocument) byte limit for a document")
        }
        if let data = attachment.data {
            guard Int64(data.utf8.count) / 4 * 3 <= limits.perDocument + 3 else {
                return reference("too large: over the \(limits.perDocument) byte limit for a document")
            }
            guard let decoded = Data(base64Encoded: data, options: .ignoreUnknownCharacters) else {
                return reference("the inline data is not base64")
            }
            let bytes = [UInt8](decoded)
            if draft.contentType == nil {
                draft.contentType = DocumentContentType.guess(fileName: "", prefix: Array(bytes.prefix(16))) ?? "application/octet-stream"
                if !DocumentContentType.isAllowed(draft.contentType) { return reference(DocumentContentType.refusal(draft.contentType)) }
            }
            if let existing, existing.state == .fetched, existing.sha256 == DocumentRepository.hex(SHA256.hash(bytes)) {
                return same(existing)
            }
            let checked = Self.checked(draft, size: Int64(bytes.count), limits: limits, budget: budget)
            return .keep(checked, existing: existing?.id, bytes: checked.state == .fetched ? bytes : nil)
        }
        guard let link = attachment.url else { return .unchanged }
        guard let server else {
            return reference("a url in an imported file is not fetched (\(Self.hostOf(link) ?? "no host"))")
        }
        guard let url = server.attachmentURL(link) else {
            return reference("on another host or outside this server's FHIR base (\(Self.hostOf(link) ?? "not a server url")): never fetched with this source's credentials")
        }
        if let existing, existing.state == .fetched, existing.url == attachment.url {
            if attachment.size != nil || attachment.hash != nil {
                if existing.declaredSize == attachment.size && existing.declaredHash == attachment.hash { return same(existing) }
            } else if attachment.version == nil || attachment.version == existing.version {
                return same(existing)
            }
        }
        if budget <= 0 {
            var failed = draft
            failed.state = .failed
            failed.reason = "the import's limit for documents (\(limits.perImport) bytes) was reached; fetched at the next sync"
            return .keep(failed, existing: existing?.id, bytes: nil)
        }
        return .fetch(url, draft, existing: existing)
    }

    /// The draft as a reference when its type is not allowed or its bytes are over a limit; its type in
    /// the clean form (`DocumentContentType.normalized`), or none when what was given is not one.
    static func checked(_ draft: DocumentDraft, size: Int64, limits: DocumentLimits, budget: Int64) -> DocumentDraft {
        var checked = draft
        checked.contentType = DocumentContentType.normalized(draft.contentType)
        if let type = draft.contentType, !DocumentContentType.isAllowed(type) {
            checked.state = .reference
            checked.reason = DocumentContentType.refusal(type)
        } else if size > limits.perDocument {
            checked.state = .reference
            checked.reason = "too large: \(size) bytes, over the \(limits.perDocument) byte limit for a document"
        } else if size > budget {
            checked.state = .failed
            checked.reason = "the import's limit for documents (\(limits.perImport) bytes) was reached; fetched at the next sync"
        } else {
            checked.state = .fetched
            checked.reason = nil
            checked.attempts = 0
        }
        return checked
    }

    /// Stores the draft (and its bytes, in chunks, with their readable text) in one transaction.
    func apply(_ draft: DocumentDraft, existing: Int64?, bytes: [UInt8]?, counts: inout DocumentImportCounts, budget: inout Int64) throws {
        let storedID: Int64 = try vault.write {
            let store = vault.documentStore
            let id: Int64
            if let existing { try store.update(id: existing, draft); id = existing } else { id = try store.insert(draft) }
            if let bytes {
                var offset = 0
                try store.writeBytes(id: id) {
                    guard offset < bytes.count else { return nil }
                    let end = min(bytes.count, offset + DocumentRepository.chunkSize)
                    defer { offset = end }
                    return Array(bytes[offset..<end])
                }
                if DocumentTextExtractor.needsHelper(draft.contentType) {
                    try store.markPending(id: id)
                } else if let text = DocumentText.readable(bytes, contentType: draft.contentType) {
                    try store.setText(id: id, DocumentTextResult(text: text, method: .text))
                } else {
                    try store.setText(id: id, DocumentTextResult(text: nil, method: .none, note: DocumentContentType.hasReadableText(draft.contentType)
                                                                 ? "no readable text" : "no readable text in this kind of document"))
                }
            } else if draft.state == .reference {
                try store.removeBytes(id: id)
                try store.setText(id: id, nil)
            }
            return id
        }
        // A PDF or an image is read by the helpers now, while this import's bound allows; the rest
        // wait for the next import or `documents reindex`.
        if draft.state == .fetched, let bytes, DocumentTextExtractor.needsHelper(draft.contentType), let extractor {
            if counts.extracted < limits.extractPerImport {
                counts.extracted += 1
                if let stored = try vault.read({ try vault.documentStore.get(id: storedID) }) {
                    try vault.extractText(stored, bytes: bytes, extractor: extractor)
                }
            } else {
                counts.queued += 1
            }
        }
        switch draft.state {
        case .fetched:
            counts.stored += 1
            counts.bytes += Int64(bytes?.count ?? 0)
            budget -= Int64(bytes?.count ?? 0)
        case .reference:
            counts.referenced[draft.reason ?? "kept as a reference", default: 0] += 1
        case .failed:
            counts.failed += 1
            counts.failures.append("\(draft.origin ?? "a document"): \(draft.reason ?? "not fetched")")
        }
    }

    static func hostOf(_ reference: String) -> String? {
        guard let url = URL(string: reference), let host = url.host else { return nil }
        return url.port.map { "\(host):\($0)" } ?? host
    }
}
