import Foundation
import HReaderCrypto
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
}
