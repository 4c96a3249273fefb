import Foundation
import HReaderCrypto
@testable import HReaderStore
import XCTest

/// Queries whose cost must follow what they answer, not the size of the record, by the plan SQLite
/// makes for them on a real vault's schema.
final class QueryPlanTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-plans-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private func plan(_ db: Database, _ sql: String, _ arguments: [DatabaseValueConvertible?] = [Int64(1)]) throws -> [String] {
        try db.query("EXPLAIN QUERY PLAN " + sql, arguments) { $0.string(3) ?? "" }
    }

    /// The summary's "Health cards" line and the timeline's badges start from the cards' few entries
    /// and find each by id; they must not walk every entry of the patient (at 10M samples that walk
    /// was a third of `hreader summary`).
    func testCardVerificationsStartFromTheCardsEntries() throws {
        let db = try Database.open(path: root.appendingPathComponent("v.db").path, key: try SecretBytes.random(count: 32), create: true)
        try Migrator().migrate(db)
        for sql in [HealthCardRepository.verificationCountsSQL, HealthCardRepository.patientVerificationsSQL] {
            let steps = try plan(db, sql)
            XCTAssertEqual(steps.first, "SCAN v", "\(steps)")
            XCTAssertTrue(steps.contains { $0.hasPrefix("SEARCH e USING INTEGER PRIMARY KEY") }, "\(steps)")
        }
    }

    /// The long samples a timeline page begins inside, for every activity series in one statement:
    /// each series is a range of the samples' primary key (series, start), never a walk of the table
    /// (ten million rows) or of a series.
    func testTheOverhangsOfEverySeriesAreRangesOfThePrimaryKey() throws {
        let db = try Database.open(path: root.appendingPathComponent("v.db").path, key: try SecretBytes.random(count: 32), create: true)
        try Migrator().migrate(db)
        let steps = try plan(db, SampleReadings.overhangingSQL, ["[[1,3600],[2,60]]", Int64(1_700_000_000), Int64(1_700_086_400)])
        XCTAssertTrue(steps.contains { $0.hasPrefix("SCAN j") }, "\(steps)")
        XCTAssertTrue(steps.contains { $0 == "SEARCH s USING PRIMARY KEY (series_id=? AND start_epoch>? AND start_epoch<?)" }, "\(steps)")
        XCTAssertFalse(steps.contains { $0.hasPrefix("SCAN s") }, "\(steps)")
    }
}
