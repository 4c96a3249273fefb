import Foundation
import XCTest
import HReaderCrypto
import HReaderModel
@testable import HReaderStore

/// Documents' bytes in chunks inside the database (schema/006_documents.sql).
final class DocumentStoreTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-documents-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private func database() throws -> Database {
        try Vault(root: root).openDatabase(key: try SecretBytes.random(count: 32), create: true)
    }

    func testBytesGoInAndComeOutInChunksWithTheirHashAndDamageIsFound() throws {
        let db = try database()
        let patient = try PatientRepository(db).add(NewPatient(firstName: "Ada", lastName: "Byron"))
        let documents = DocumentRepository(db)
        let id = try documents.insert(DocumentDraft(patientID: patient.id, sourceID: try documents.manualSourceID(), title: "Scan",
                                                    contentType: "application/pdf", state: .fetched))
        var bytes = [UInt8](repeating: 0, count: 700_000)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 31 &+ i >> 9) }
        var offset = 0
        let (size, sha256) = try documents.writeBytes(id: id) {
            guard offset < bytes.count else { return nil }
            let end = min(bytes.count, offset + 100_003)
            defer { offset = end }
            return Array(bytes[offset..<end])
        }
        XCTAssertEqual(size, 700_000)
        XCTAssertEqual(sha256, DocumentRepository.hex(SHA256.hash(bytes)))
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM document_chunks WHERE document_id = ?", [id]), 3, "256 KiB chunks")
        XCTAssertEqual(try db.scalarInt("SELECT max(length(bytes)) FROM document_chunks"), Int64(DocumentRepository.chunkSize))
        var back: [UInt8] = []
        try documents.readBytes(id: id) { back += $0 }
        XCTAssertEqual(back, bytes)
        XCTAssertEqual(try documents.damaged().count, 0)

        XCTAssertThrowsError(try documents.writeBytes(id: id, limit: 10) { [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }) { error in
            XCTAssertTrue(error is DocumentRepository.TooLarge)
        }
        offset = 0
        try documents.writeBytes(id: id) {
            guard offset == 0 else { return nil }
            offset = 1
            return bytes
        }
        try db.execute("UPDATE document_chunks SET bytes = zeroblob(10) WHERE document_id = ? AND seq = 1", [id])
        XCTAssertEqual(try documents.damaged().map(\.id), [id])

        try documents.remove(id: id)
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM document_chunks"), 0, "the chunks go with the document")
    }

    func testTitleAndTextAreSearchedAndRemovedFromTheIndex() throws {
        let db = try database()
        let patient = try PatientRepository(db).add(NewPatient(firstName: "Ada", lastName: "Byron"))
        let documents = DocumentRepository(db)
        let id = try documents.insert(DocumentDraft(patientID: patient.id, sourceID: try documents.manualSourceID(), title: "Letter",
                                                    contentType: "text/plain", state: .fetched))
        try documents.setText(id: id, "The cardiologist suggests metformin.")
        let search = SearchRepository(db)
        XCTAssertEqual(try search.searchDocuments(SearchQuery("metf")).map(\.documentID), [id])
        XCTAssertEqual(try search.searchDocuments(SearchQuery("letter")).map(\.documentID), [id])
        XCTAssertEqual(try search.searchDocuments(SearchQuery("metformin"), patientID: patient.id + 1).count, 0)
        try documents.remove(id: id)
        XCTAssertEqual(try search.searchDocuments(SearchQuery("metformin")).count, 0)
        XCTAssertEqual(try search.indexedDocumentCount(), 0)
    }

    /// Schema 12 says how each document's text was obtained: a vault from before keeps its text as
    /// `text`, its fetched PDFs and images wait for extraction, everything else has none; the queue
    /// lists the waiting ones, and storing a result takes one off it and into the search index.
    func testASchemaElevenVaultQueuesItsPapersForExtraction() throws {
        let path = root.appendingPathComponent("v.db").path
        let db = try Database.open(path: path, key: try SecretBytes.random(count: 32), create: true)
        try Migrator(migrations: Migrator.embedded.filter { $0.version <= 11 }).migrate(db)
        let patient = try PatientRepository(db).add(NewPatient(firstName: "Ada", lastName: "Byron"))
        let documents = DocumentRepository(db)
        func add(_ title: String, _ type: String, state: DocumentState = .fetched, text: String? = nil) throws -> Int64 {
            let id = try documents.insert(DocumentDraft(patientID: patient.id, sourceID: try documents.manualSourceID(), title: title,
                                                        contentType: type, state: state))
            try db.execute("UPDATE documents SET text = ? WHERE id = ?", [text, id])
            return id
        }
        let note = try add("note", "text/plain", text: "Plain words")
        let scan = try add("scan", "application/pdf")
        let photo = try add("photo", "image/jpeg")
        let zip = try add("zip", "application/zip")
        let failed = try add("failed", "application/pdf", state: .failed)
        try Migrator().migrate(db)
        let method = { (id: Int64) in try documents.get(id: id)?.textMethod }
        XCTAssertEqual(try method(note), .text)
        XCTAssertEqual(try method(scan), .pending)
        XCTAssertEqual(try method(photo), .pending)
        XCTAssertEqual(try method(zip), DocumentTextMethod.none)
        XCTAssertNil(try method(failed), "nothing to read yet")
        XCTAssertEqual(try documents.pending(), [scan, photo])
        XCTAssertEqual(try documents.pending(limit: 1), [scan])

        try documents.setText(id: scan, DocumentTextResult(text: "Scanned Gallimaufry letter", method: .ocr, confidence: 91.5, languages: "eng"))
        XCTAssertEqual(try documents.pending(), [photo])
        let stored = try XCTUnwrap(try documents.get(id: scan))
        XCTAssertEqual(stored.textConfidence, 91.5)
        XCTAssertEqual(stored.textLanguages, "eng")
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM documents_search WHERE documents_search MATCH 'gallimaufry'"), 1)
    }
}
