import Foundation
import HReaderCrypto
import HReaderModel
@testable import HReaderStore
import XCTest

/// The sample writer keeps the series of the last few samples in memory (and the rest in a
/// dictionary that is stale for those): with more series taking turns than it keeps, every series
/// is still written once, every sample once, and each series' longest span reaches the vault.
final class SampleWriterTests: XCTestCase {
    private var root: URL!
    private var db: Database!
    private var sourceID: Int64 = 0
    private var patientID: Int64 = 0

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-samplewriter-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        db = try Vault(root: root).openDatabase(key: try SecretBytes.random(count: 32), create: true)
        sourceID = try SourceRepository(db).findOrCreate(kind: .appleHealth, baseURL: "apple-health:test",
                                                         displayName: "Health", now: "2024-01-01T00:00:00Z")
        patientID = try PatientRepository(db).add(NewPatient(firstName: "Ann", lastName: "Lee", raw: "{}")).id
    }

    override func tearDownWithError() throws {
        db = nil
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// Records as the reader makes them: one interner, so a series' strings are shared objects.
    private func records(sources: Int, rounds: Int) -> [SampleRecord] {
        var interner = StringInterner()
        var out: [SampleRecord] = []
        for round in 0..<rounds {
            for source in 0..<sources {
                // Source s lasts s or s + 1 minutes, and s + 2 in the last round only: its longest
                // span, (s + 2) minutes, is then known only to the series kept in memory.
                let minutes = source + (round == rounds - 1 ? 2 : round % 2)
                let attributes = [("type", "HKQuantityTypeIdentifierHeartRate"), ("sourceName", "Source \(source)"),
                                  ("unit", "count/min"),
                                  ("startDate", String(format: "2024-01-%02d 08:00:00 +0100", round + 1)),
                                  ("endDate", String(format: "2024-01-%02d 08:%02d:00 +0100", round + 1, minutes)),
                                  ("value", "\(60 + source)")]
                var parser = SampleRecordParser()
                for (name, value) in attributes {
                    var value = value
                    XCTAssertTrue(value.withUTF8 { parser.add(field: SampleLayout.code(name)!, $0, interner: &interner) })
                }
                out.append(parser.finish(interner: &interner)!)
            }
        }
        return out
    }

    func testMoreSeriesTakingTurnsThanItKeepsAreEachWrittenOnceWithTheirLongestSpan() throws {
        let sources = 12, rounds = 9
        let all = records(sources: sources, rounds: rounds)
        let mapping = { (_: String) in SeriesMapping(type: .vitalSign, description: "Heart rate", codes: [:]) }
        for pass in 0..<2 {
            try db.transaction {
                let writer = try SampleWriter(db, patientID: patientID, recordID: patientID, sourceID: sourceID)
                for record in all {
                    let (outcome, type) = try writer.add(record, mapping: mapping)
                    XCTAssertEqual(outcome, pass == 0 ? .inserted : .unchanged)
                    XCTAssertEqual(type, .vitalSign)
                }
                try writer.finish()
            }
        }
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM samples"), Int64(sources * rounds))
        XCTAssertEqual(try db.scalarInt("SELECT count(DISTINCT id) FROM samples"), Int64(sources * rounds))
        let spans = try db.query("SELECT source_name, max_span FROM sample_series ORDER BY id", []) { ($0.string(0)!, $0.int64(1)!) }
        XCTAssertEqual(spans.map(\.0), (0..<sources).map { "Source \($0)" })
        XCTAssertEqual(spans.map(\.1), (0..<sources).map { Int64(($0 + 2) * 60) })
    }

    func testAnyRangeReadsTheSamplesStartingOrEndingInItInStartThenIdOrderShortOrLong() throws {
        // Twelve series a day for nine days, every series of a day starting at the same second (ties
        // broken by id) and lasting up to fourteen minutes: ranges of a week or less take one sorted
        // statement, longer ones the per-series merge; both must give what a scan of every sample says.
        let mapping = { (_: String) in SeriesMapping(type: .vitalSign, description: "Heart rate", codes: [:]) }
        try db.transaction {
            let writer = try SampleWriter(db, patientID: patientID, recordID: patientID, sourceID: sourceID)
            for record in records(sources: 12, rounds: 9) { _ = try writer.add(record, mapping: mapping) }
            try writer.finish()
        }
        let repository = SampleRepository(db: db)
        let all = try repository.samples(patientID: patientID, from: nil, to: nil, type: nil, limit: nil, full: true)
        XCTAssertEqual(all.count, 12 * 9)
        let day0: Int64 = 1_704_092_400   // 2024-01-01 08:00 +0100
        let windows: [(Int64, Int64, Int?)] = [
            (day0, day0, nil), (day0 + 30, day0 + 300, nil), (day0 + 86_400 * 3 + 60, day0 + 86_400 * 3 + 60, nil),
            (day0 - 86_400, day0 + 86_400, nil), (day0 + 600, day0 + 86_400 * 8 - 1, nil), (day0, day0 + 86_400 * 8, 17),
            (day0 - 3600, day0 + 86_400 * 9, nil), (day0 + 30, day0 + 86_400 * 9, 40), (day0 + 86_400 * 2 + 601, day0 + 86_400 * 5, nil),
        ]
        for (from, to, limit) in windows {
            let expected = all.filter { (from...to).contains($0.start) || (from...to).contains($0.end) }
                .sorted { ($0.start, $0.id) < ($1.start, $1.id) }.prefix(limit ?? .max)
            let read = try repository.samples(patientID: patientID, from: from, to: to, type: nil, limit: limit, full: true)
            XCTAssertEqual(read.map(\.id), expected.map(\.id), "\(from)...\(to) limit \(limit.map(String.init) ?? "none")")
            XCTAssertEqual(read.map(\.end), expected.map(\.end))
            XCTAssertFalse(read.isEmpty, "\(from)...\(to) has samples")
        }
        // The two paths over the same short range agree (the longer range read, then cut to it).
        let shortRange = try repository.samples(patientID: patientID, from: day0, to: day0 + 86_400, type: nil, limit: nil, full: true)
        let longRange = try repository.samples(patientID: patientID, from: day0 - 86_400 * 30, to: day0 + 86_400, type: nil, limit: nil, full: true)
            .filter { (day0...(day0 + 86_400)).contains($0.start) || (day0...(day0 + 86_400)).contains($0.end) }
        XCTAssertEqual(shortRange.map(\.id), longRange.map(\.id))
    }

    /// `entries list` streams (`forEachListed`): entries (dated, undated, a fact's hidden copy, a
    /// struck one) and samples, for any type, range and `copies`, in exactly the order and number
    /// `list` gives them.
    func testTheStreamedListingIsTheListing() throws {
        let mapping = { (_: String) in SeriesMapping(type: .vitalSign, description: "Heart rate", codes: [:]) }
        let entries = EntryRepository(db)
        let day0: Int64 = 1_704_092_400   // 2024-01-01 08:00 +0100, the first samples' start
        try db.transaction {
            let writer = try SampleWriter(db, patientID: patientID, recordID: patientID, sourceID: sourceID)
            for record in records(sources: 5, rounds: 6) { _ = try writer.add(record, mapping: mapping) }
            try writer.finish()
            for i in 0..<40 {
                let type: EntryType = [.condition, .vitalSign, .encounter, .medication][i % 4]
                let time = ClinicalTime(epoch: day0 + Int64(i % 8) * 43_200 + (i % 3 == 0 ? 0 : 1_800))
                let content = EntryContent(type: type, description: "Entry \(i)", date: i % 7 == 0 ? nil : time,
                                           start: i % 5 == 0 ? time : nil, end: i % 9 == 0 ? ClinicalTime(epoch: day0 + 86_400 * 4) : nil)
                let id = try entries.insert(patientID: patientID, content: content)
                if i % 6 == 1 { try db.execute("INSERT INTO fact_copies (entry_id, fact_id) VALUES (?, ?)", [id, id - 1]) }
                if i % 11 == 2 { try db.execute("UPDATE entries SET user_deleted = 1 WHERE id = ?", [id]) }
            }
        }
        let ranges: [(Int64?, Int64?)] = [(nil, nil), (day0, nil), (nil, day0 + 86_400), (day0 + 3_600, day0 + 86_400 * 2),
                                          (day0 + 86_400 * 3, day0 + 86_400 * 3 + 60), (day0 - 86_400 * 30, day0 + 86_400 * 30)]
        var compared = 0
        for (from, to) in ranges {
            for type in [nil, EntryType.vitalSign, .condition] {
                for copies in [false, true] {
                    let listed = try entries.list(patientID: patientID, type: type, from: from, to: to, copies: copies)
                    var streamed: [Entry] = []
                    try entries.forEachListed(patientID: patientID, type: type, from: from, to: to, copies: copies) { streamed.append($0) }
                    XCTAssertEqual(streamed.map(\.id), listed.map(\.id), "from \(from.map(String.init) ?? "-") to \(to.map(String.init) ?? "-") type \(type?.rawValue ?? "-") copies \(copies)")
                    XCTAssertEqual(streamed.map(\.content.description), listed.map(\.content.description))
                    compared += listed.count
                }
            }
        }
        XCTAssertGreaterThan(compared, 500, "the ranges hold entries and samples")
        let whole = try entries.list(patientID: patientID)
        XCTAssertTrue(whole.contains { EntryRepository.isSample($0) } && whole.contains { !EntryRepository.isSample($0) })
    }
}

/// Schema 14: walking and running distance was coded with 41953-8, which is no LOINC code; a vault
/// from before has its series and entries of the mapping recoded to 55430-3, and nothing else.
final class WalkingDistanceCodeMigrationTests: XCTestCase {
    func testASchemaThirteenVaultHasItsWalkingDistanceRecoded() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-loinc-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: root) }
        let db = try Database.open(path: root.appendingPathComponent("v.db").path, key: try SecretBytes.random(count: 32), create: true)
        try Migrator(migrations: Migrator.embedded.filter { $0.version <= 13 }).migrate(db)
        let source = try SourceRepository(db).findOrCreate(kind: .appleHealth, baseURL: "apple-health:test", displayName: "Health",
                                                           now: "2024-01-01T00:00:00Z")
        let patient = try PatientRepository(db).add(NewPatient(firstName: "Ann", lastName: "Lee", raw: "{}")).id
        let old = #"{"LOINC":["41953-8"],"com.apple.health":["HKQuantityTypeIdentifierDistanceWalkingRunning"]}"#
        let steps = #"{"LOINC":["55423-8"],"com.apple.health":["HKQuantityTypeIdentifierStepCount"]}"#
        for (type, codes) in [("HKQuantityTypeIdentifierDistanceWalkingRunning", old), ("HKQuantityTypeIdentifierStepCount", steps)] {
            try db.execute("""
                INSERT INTO sample_series (patient_id, source_id, hk_type, layout, type, description, codes, source_patient_id)
                VALUES (?, ?, ?, 'type', 'activity', 'd', ?, ?)
                """, [patient, source, type, codes, patient])
        }
        let entries = EntryRepository(db)
        var distance = EntryContent(type: .activity, description: "Walking and running distance")
        distance.codes = ["LOINC": ["41953-8"], "com.apple.health": ["HKQuantityTypeIdentifierDistanceWalkingRunning"]]
        let mapped = try entries.insert(patientID: patient, content: distance, sourceID: source, remoteID: "HK:1")
        // A server's own code is its own, whatever it is: only what the mapping wrote is recoded.
        var foreign = EntryContent(type: .observation, description: "Something a server coded so")
        foreign.codes = ["LOINC": ["41953-8"]]
        let kept = try entries.insert(patientID: patient, content: foreign)

        try Migrator().migrate(db)
        XCTAssertEqual(try db.query("SELECT codes FROM sample_series ORDER BY id") { $0.string(0)! },
                       [#"{"LOINC":["55430-3"],"com.apple.health":["HKQuantityTypeIdentifierDistanceWalkingRunning"]}"#, steps])
        XCTAssertEqual(try entries.get(id: mapped)?.content.codes["LOINC"], ["55430-3"])
        XCTAssertEqual(try entries.get(id: kept)?.content.codes["LOINC"], ["41953-8"])
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM entries_search WHERE entries_search MATCH '\"55430\"'"), 1,
                       "the search index has the new code")
    }
}

