import Foundation
import HReaderCrypto
import HReaderModel
import HReaderStore
import XCTest

/// Re-imports and syncs update in place: the source's content changes, the user's own fields never do,
/// and entries a full snapshot no longer holds are marked, not deleted.
final class UpsertTests: XCTestCase {
    private var root: URL!
    private var db: Database!
    private var sourceID: Int64 = 0
    private var patientID: Int64 = 0

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-upsert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        db = try Vault(root: root).openDatabase(key: try SecretBytes.random(count: 32), create: true)
        sourceID = try SourceRepository(db).findOrCreate(kind: .fhir, baseURL: "https://fhir.example.org/r4",
                                                         displayName: "Example", now: "2024-01-01T00:00:00Z")
        let (patient, outcome) = try PatientRepository(db).upsert(sourceID: sourceID, remoteID: "pat-1",
                                                                  NewPatient(firstName: "Ann", lastName: "Lee", raw: "{}"))
        XCTAssertEqual(outcome, .inserted)
        patientID = patient.id
    }

    override func tearDownWithError() throws {
        db = nil
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private func content(_ description: String, raw: String) -> EntryContent {
        EntryContent(type: .condition, description: description, date: ClinicalTime.parse("2020-01-01"), raw: raw)
    }

    private func upsert(_ remoteID: String, _ description: String, raw: String) throws -> UpsertOutcome {
        try EntryRepository(db).upsert(patientID: patientID, sourceID: sourceID, remoteID: remoteID,
                                       content: content(description, raw: raw))
    }

    /// Text is bound from the string's own bytes with their length (no C-string copy): the empty
    /// string stays empty (not NULL), composed and astral characters and long values come back whole,
    /// through both binding paths (the entry insert and the array one).
    func testTextIsStoredByteForByte() throws {
        let long = String(repeating: "ünï ✓ 𝄞 ", count: 50_000)
        for (i, text) in ["", "é", "e\u{301}", long].enumerated() {
            XCTAssertEqual(try upsert("text-\(i)", text, raw: text), .inserted)
            let stored = try db.query("SELECT description, raw, typeof(raw) FROM entries WHERE remote_id = ?", ["text-\(i)"]) {
                ($0.string(0), $0.string(1), $0.string(2))
            }
            XCTAssertEqual(stored.first?.0, text)
            XCTAssertEqual(stored.first?.1, text)
            XCTAssertEqual(stored.first?.2, "text")
            XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM entries WHERE description = ?", [text]), 1)
        }
    }

    func testSourceAndPatientAreFoundAgainNotDuplicated() throws {
        let again = try SourceRepository(db).findOrCreate(kind: .fhir, baseURL: "https://fhir.example.org/r4",
                                                          displayName: "Example", now: "2024-02-01T00:00:00Z")
        XCTAssertEqual(again, sourceID)
        let repository = PatientRepository(db)
        XCTAssertEqual(try repository.upsert(sourceID: sourceID, remoteID: "pat-1", NewPatient(firstName: "Ann", lastName: "Lee", raw: "{}")).1, .unchanged)
        let (renamed, outcome) = try repository.upsert(sourceID: sourceID, remoteID: "pat-1",
                                                       NewPatient(firstName: "Ann", lastName: "Lee-Park", relationship: .child, raw: "{\"v\":2}"))
        XCTAssertEqual(outcome, .updated)
        XCTAssertEqual(renamed.lastName, "Lee-Park")
        XCTAssertEqual(renamed.relationship, .other, "the user's choice of relationship is kept on update")
        XCTAssertEqual(try repository.count(), 1)
    }

    func testReimportUpdatesContentInPlaceAndNeverTouchesUserFields() throws {
        XCTAssertEqual(try upsert("c-1", "Asthma", raw: #"{"v":1}"#), .inserted)
        let entries = EntryRepository(db)
        let id = try XCTUnwrap(entries.list(patientID: patientID).first?.id)
        let user = UserFields(comments: "mild", patientDose: "2 puffs", deleted: true)
        try entries.setUserFields(id: id, user)

        XCTAssertEqual(try upsert("c-1", "Asthma", raw: #"{"v":1}"#), .unchanged)
        XCTAssertEqual(try upsert("c-1", "Asthma, intermittent", raw: #"{"v":2}"#), .updated)
        let after = try XCTUnwrap(entries.get(id: id))
        XCTAssertEqual(after.content.description, "Asthma, intermittent")
        XCTAssertEqual(after.content.raw, #"{"v":2}"#)
        XCTAssertEqual(after.user, user, "comments, patient comments and the strike-through survive")
        XCTAssertEqual(try entries.count(patientID: patientID), 1)
    }

    func testEntriesASnapshotNoLongerHoldsAreMarkedNotDeletedAndClearedWhenTheyReturn() throws {
        for id in ["a", "b", "c"] { _ = try upsert(id, "Entry \(id)", raw: "{\"id\":\"\(id)\"}") }
        let entries = EntryRepository(db)
        XCTAssertEqual(try entries.markMissing(recordID: patientID, sourceID: sourceID, keeping: ["a", "c"]), 1)
        var all = try entries.list(patientID: patientID)
        XCTAssertEqual(all.count, 3, "nothing is deleted")
        XCTAssertEqual(all.filter { $0.missingAtSource != nil }.map(\.remoteID), ["b"])
        XCTAssertEqual(try entries.markMissing(recordID: patientID, sourceID: sourceID, keeping: ["a", "c"]), 0, "marked once")
        // Entries from other sources (the user's own) are never marked.
        try entries.add(patientID: patientID, content: content("Typed in", raw: ""))
        XCTAssertEqual(try entries.markMissing(recordID: patientID, sourceID: sourceID, keeping: ["a", "c"]), 0)
        // The server has it again: the mark goes.
        XCTAssertEqual(try upsert("b", "Entry b", raw: #"{"id":"b"}"#), .updated)
        all = try entries.list(patientID: patientID)
        XCTAssertTrue(all.allSatisfy { $0.missingAtSource == nil })
    }

    /// An import's new entries are indexed for search in one statement at its end; rows it updates or
    /// removes meanwhile, and older rows it changes, leave the index exactly matching the rows.
    func testAnImportsEntriesAreIndexedAtItsEndAndTheIndexMatchesTheRows() throws {
        let entries = EntryRepository(db)
        let old = try entries.add(patientID: patientID, content: content("Older asthma note", raw: "{}"))
        let search = SearchRepository(db)
        try db.transaction {
            try search.deferringIndex {
                _ = try upsert("a", "Metformin tablet", raw: #"{"a":1}"#)
                _ = try upsert("b", "Lisinopril tablet", raw: #"{"b":1}"#)
                XCTAssertEqual(try search.search(SearchQuery("metformin")), [], "not indexed row by row")
                _ = try upsert("a", "Metformin extended release", raw: #"{"a":2}"#)
                try entries.removeFromSource(recordID: patientID, sourceID: sourceID, remoteID: "b")
                try entries.setUserFields(id: old.id, UserFields(comments: "wheezing at night"))
            }
        }
        let a = try XCTUnwrap(try db.scalarInt("SELECT id FROM entries WHERE remote_id = 'a'"))
        XCTAssertEqual(try search.search(SearchQuery("extended")).map(\.entryID), [a])
        XCTAssertEqual(try search.search(SearchQuery("tablet")), [], "the first words were replaced before the end")
        XCTAssertEqual(try search.search(SearchQuery("lisinopril")), [], "removed within the import")
        XCTAssertEqual(try search.search(SearchQuery("wheezing")).map(\.entryID), [old.id])
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM search_deferred"), 0)
        // FTS5 compares its index with the rows it indexes: an error if they differ.
        try db.execute("INSERT INTO entries_search (entries_search, rank) VALUES ('integrity-check', 1)")

        // A failing import leaves nothing deferred (and its transaction takes its rows back).
        struct Refused: Error {}
        XCTAssertThrowsError(try db.transaction {
            try search.deferringIndex { _ = try upsert("c", "Warfarin", raw: "{}"); throw Refused() }
        })
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM search_deferred"), 0)
        _ = try upsert("d", "Omeprazole capsule", raw: "{}")
        XCTAssertEqual(try search.search(SearchQuery("omeprazole")).count, 1, "indexed row by row again")
        try db.execute("INSERT INTO entries_search (entries_search, rank) VALUES ('integrity-check', 1)")
    }
}
