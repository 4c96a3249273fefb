import Foundation
import HReaderCrypto
@testable import HReaderKit
import HReaderModel
import HReaderRecords
import HReaderStore
import TestSupport
import XCTest

/// Apple Health samples (migration 3): stored compactly, yet the export's Record elements come
/// back exactly, and a vault of schema 2 moves its Record entries there with nothing lost.
final class SamplesTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-samples-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private func generate(records: Int) throws -> URL {
        let xml = root.appendingPathComponent("export.xml")
        try HealthExportGenerator.write(xml, records: records, days: 30)
        return xml
    }

    private func openVault() throws -> OpenVault {
        let service = VaultService(vault: Vault(root: root.appendingPathComponent("vault")))
        let password = SecretBytes(Array("Samples-Passw0rd".utf8))
        _ = try service.create(password: password, kdf: .pbkdf2SHA256(iterations: 600_000))
        return try service.open(.password(password))
    }

    /// The day totals (schema 7) hold exactly what the vital-sign samples sum to, after an import and
    /// after the migration that builds them for an older vault; a chart of a year drawn from them is the
    /// one drawn from every sample (buckets on whole days), and one whose range starts and ends inside a
    /// day counts every reading once.
    func testDayTotalsMatchTheSamplesAndDrawTheSameChart() throws {
        let xml = root.appendingPathComponent("export.xml")
        try HealthExportGenerator.write(xml, records: 30_000, days: 420)
        var vault = try openVault()
        _ = try vault.importAppleHealth(xml, into: nil)
        let aggregate = """
            SELECT series_id, day, count(*), sum(value), sum(start_epoch - day * 86400), min(value), max(value)
            FROM (SELECT s.series_id, s.start_epoch, s.value, (s.start_epoch - ((s.start_epoch % 86400) + 86400) % 86400) / 86400 AS day
                  FROM samples s JOIN sample_series ss ON ss.id = s.series_id WHERE ss.type = 'vital_sign')
            GROUP BY 1, 2 ORDER BY 1, 2
            """
        func rows(_ sql: String) throws -> [String] {
            try vault.inDatabase { db in
                try db.query(sql) { r in (0..<7).map { i in r.double(i).map { String(format: "%.6f", $0) } ?? "nil" }.joined(separator: " ") }
            }
        }
        let expected = try rows(aggregate)
        XCTAssertGreaterThan(expected.count, 400, "a few vital-sign series over 420 days")
        let stored = "SELECT series_id, day, count, value_sum, second_sum, min_value, max_value FROM sample_days ORDER BY 1, 2"
        XCTAssertEqual(try rows(stored), expected)

        let patient = try XCTUnwrap(try vault.allPatients().first)
        let latest = try XCTUnwrap(try vault.inDatabase { try EntryRepository($0).latestTime(patientID: patient.id) })
        let lastMidnight = (latest / 86_400 + 1) * 86_400
        // 400 whole days in 100 buckets of 4 days: a day never straddles two buckets.
        let aligned = TimelineRange(start: lastMidnight - 400 * 86_400, end: lastMidnight, timeZone: TimeZone(identifier: "UTC")!)
        let fromTotals = try vault.vitalSeries(patient: patient, range: aligned, maximumPoints: 100)
        let fromSamples = try vault.vitalSeries(patient: patient, range: aligned, maximumPoints: 100, dayTotals: false)
        XCTAssertFalse(fromTotals.isEmpty)
        XCTAssertEqual(fromTotals.map(\.description), fromSamples.map(\.description))
        for (a, b) in zip(fromTotals, fromSamples) {
            XCTAssertEqual(a.readings, b.readings, a.description)
            XCTAssertEqual(a.minimum, b.minimum, accuracy: 1e-9, a.description)
            XCTAssertEqual(a.maximum, b.maximum, accuracy: 1e-9, a.description)
            XCTAssertEqual(a.unit, b.unit)
            XCTAssertEqual(a.points.count, b.points.count, a.description)
            for (p, q) in zip(a.points, b.points) {
                XCTAssertEqual(p.time, q.time, accuracy: 1e-3, a.description)
                XCTAssertEqual(p.value, q.value, accuracy: 1e-6, a.description)
            }
        }
        // Starting and ending at noon: the partial days are read sample by sample, nothing twice.
        let noon = TimelineRange(start: aligned.start + 43_200, end: aligned.end - 43_200, timeZone: TimeZone(identifier: "UTC")!)
        let partial = try vault.vitalSeries(patient: patient, range: noon, maximumPoints: 100)
        let partialSamples = try vault.vitalSeries(patient: patient, range: noon, maximumPoints: 100, dayTotals: false)
        XCTAssertEqual(partial.map(\.readings), partialSamples.map(\.readings))
        XCTAssertTrue(partial.allSatisfy { $0.points.count <= 100 })

        // A vault from before schema 7 gets its totals when it is opened (the schemas after it taken out first).
        try vault.inDatabase { db in
            try db.execute("DROP INDEX entries_patient_source")   // schema 13
            try db.execute("DROP INDEX documents_text_pending")   // schema 12
            for column in ["text_method", "text_confidence", "text_note", "text_languages"] {
                try db.execute("ALTER TABLE documents DROP COLUMN \(column)")
            }
            for table in ["shares", "entry_verifications", "card_revocation_lists", "card_issuer_keys", "card_issuers"] {
                try db.execute("DROP TABLE \(table)")   // schemas 11 and 10
            }
            try db.execute("DROP INDEX entries_patient_kind")
            try db.execute("ALTER TABLE sample_series DROP COLUMN sample_count")
            for table in ["documents", "sample_series"] {
                try db.execute("DROP INDEX \(table == "documents" ? "documents_record" : "sample_series_record")")
                try db.execute("ALTER TABLE \(table) DROP COLUMN source_patient_id")
            }
            try db.execute("DROP TABLE sample_days")
            try db.execute("PRAGMA user_version = 6")
        }
        vault = try VaultService(vault: Vault(root: root.appendingPathComponent("vault")))
            .open(.password(SecretBytes(Array("Samples-Passw0rd".utf8))))
        XCTAssertEqual(try rows(stored), expected)
    }

    func testRecordElementsComeBackExactlyFromTheVault() throws {
        let xml = try generate(records: 4000)
        let vault = try openVault()
        let summary = try vault.importAppleHealth(xml, into: nil)
        XCTAssertGreaterThan(summary.imports.inserted, 0)

        // The input: each top-level Record (blood pressure aside: correlations take it back), the last one per remote id.
        var expected: [String: (attributes: [(name: String, value: String)], metadata: [(key: String, value: String)])] = [:]
        let input = try FileHandle(forReadingFrom: xml)
        try AppleHealthReader(source: { buffer in
            let data = input.readData(ofLength: buffer.count)
            buffer.copyBytes(from: data)
            return data.count
        }).read { element in
            guard element.kind == .record, let type = element.attribute("type"), !type.hasPrefix("HKQuantityTypeIdentifierBloodPressure") else { return }
            expected[AppleHealthMapper.remoteID(element)] = (element.attributes, element.metadata)
        }
        XCTAssertGreaterThan(expected.count, 1000)

        let patient = try XCTUnwrap(vault.allPatients().first)
        var rebuilt = 0
        var withMetadata = 0
        do {
            for entry in try vault.inDatabase({ try EntryRepository($0).list(patientID: patient.id) }) where EntryRepository.isSample(entry) {
                let record = try XCTUnwrap(try vault.inDatabase { try EntryRepository($0).appleHealthRecord(id: entry.id) })
                let want = try XCTUnwrap(expected[entry.remoteID], "a sample's remote id is the one the Record had as an entry")
                XCTAssertEqual(record.attributes.map { "\($0.name)=\($0.value)" }, want.attributes.map { "\($0.name)=\($0.value)" })
                XCTAssertEqual(record.metadata.map { "\($0.key)=\($0.value)" }, want.metadata.map { "\($0.key)=\($0.value)" })
                if !record.metadata.isEmpty { withMetadata += 1 }
                rebuilt += 1
            }
        }
        XCTAssertEqual(rebuilt, expected.count, "every Record of the export became a sample")
        XCTAssertGreaterThan(withMetadata, 0)

        // The same export again adds nothing.
        let again = try vault.importAppleHealth(xml, into: patient)
        XCTAssertEqual(again.imports.inserted, 0)
        XCTAssertEqual(again.imports.updated, 0)
    }

    /// Blood-pressure Records wait in memory for their correlation, up to a limit; past it they are
    /// stored and removed again. Either way the vault ends the same, each reading counted once.
    func testBloodPressurePastThePendingLimitEndsTheSame() throws {
        let xml = try generate(records: 4000)
        var contents: [[String]] = []
        for limit in [OpenVault.pendingLimit, 3, 0] {
            try? FileManager.default.removeItem(at: root.appendingPathComponent("vault"))
            let vault = try openVault()
            let summary = try vault.importAppleHealth(xml, into: nil, pendingLimit: limit, progress: { _ in })
            XCTAssertGreaterThan(summary.partOfCorrelation, 10, "the export repeats correlations' readings (limit \(limit))")
            let patient = try XCTUnwrap(vault.allPatients().first)
            XCTAssertEqual(summary.imports.inserted, try vault.inDatabase { try EntryRepository($0).list(patientID: patient.id) }.count)
            contents.append(try vault.inDatabase { try EntryRepository($0).list(patientID: patient.id) }.map { "\($0.remoteID) \($0.content.type) \($0.content.description) \($0.content.valueText ?? "") \($0.content.valueNumber ?? 0) \($0.content.raw ?? "")" }.sorted())
            let again = try vault.importAppleHealth(xml, into: patient, pendingLimit: limit, progress: { _ in })
            XCTAssertEqual(again.imports.inserted, 0, "limit \(limit)")
            XCTAssertEqual(again.imports.updated, 0, "limit \(limit)")
        }
        for other in contents.dropFirst() {
            XCTAssertEqual(other.count, contents[0].count)
            XCTAssertEqual(Array(Set(other).symmetricDifference(contents[0]).sorted().prefix(3)), [], "entries that differ")
        }
    }

    func testSchemaTwoVaultMovesItsRecordEntriesIntoSamplesWithNothingLost() throws {
        let vault = Vault(root: root.appendingPathComponent("v2"))
        try FileManager.default.createDirectory(at: vault.root, withIntermediateDirectories: false)
        let key = try SecretBytes.random(count: 32)
        let schemaTwo = Migrator(migrations: Migrator.embedded.filter { $0.version <= 2 })
        var db: Database? = try vault.openDatabase(key: key, create: true, migrator: schemaTwo)
        XCTAssertEqual(try schemaTwo.currentVersion(of: db!), 2)

        // The readers of this build read the samples tables too: empty ones stand in for them at schema 2.
        try db!.execute("""
            CREATE TEMP TABLE sample_series (id INTEGER PRIMARY KEY, patient_id, source_id, hk_type, source_name, source_version, device,
                unit, layout, type, description, codes, max_span, sample_count DEFAULT 0);
            CREATE TEMP TABLE samples (series_id, start_epoch, end_epoch, value, id, utc_offset, end_offset, creation_epoch, creation_offset,
                device_address, extras);
            ALTER TABLE patients ADD COLUMN merged_into INTEGER;
            ALTER TABLE entries ADD COLUMN source_patient_id INTEGER;
            CREATE TEMP TABLE fact_copies (entry_id INTEGER PRIMARY KEY, fact_id INTEGER);
            """)
        let source = try SourceRepository(db!).findOrCreate(kind: .appleHealth, baseURL: "apple-health:test", displayName: "Apple Health",
                                                            now: "2024-01-01T00:00:00Z")
        let patient = try PatientRepository(db!).upsert(sourceID: source, remoteID: "me", NewPatient(firstName: "Me", lastName: "Test")).0
        func record(_ attributes: [(String, String)], metadata: [(String, String)] = []) -> AppleHealthElement {
            AppleHealthElement(kind: .record, attributes: attributes.map { (name: $0.0, value: $0.1) },
                               metadata: metadata.map { (key: $0.0, value: $0.1) }, line: 1)
        }
        let elements = [
            record([("type", "HKQuantityTypeIdentifierHeartRate"), ("sourceName", "Watch"), ("sourceVersion", "10.1"), ("unit", "count/min"),
                    ("creationDate", "2024-03-01 08:00:05 +0100"), ("startDate", "2024-03-01 08:00:00 +0100"), ("endDate", "2024-03-01 08:00:00 +0100"),
                    ("value", "72")], metadata: [("HKMetadataKeyHeartRateMotionContext", "1")]),
            record([("type", "HKQuantityTypeIdentifierStepCount"), ("sourceName", "Phone & Co"), ("unit", "count"),
                    ("startDate", "2024-03-01 09:00:00 -0500"), ("endDate", "2024-03-01 09:10:00 -0500"), ("value", "1200")]),
            record([("type", "HKQuantityTypeIdentifierBodyMass"), ("sourceName", "Scale"),
                    ("device", "<<HKDevice: 0x2a8f52a90>, name:Smart Scale <GS-2>, manufacturer:Generator Health & Co.>"), ("unit", "kg"),
                    ("startDate", "2024-03-02 07:00:00 +0000"), ("endDate", "2024-03-02 07:00:00 +0000"), ("value", "72.50")]),
            record([("type", "HKCategoryTypeIdentifierHeadache"), ("sourceName", "Phone"),
                    ("startDate", "2024-03-02 10:00:00 +0200"), ("endDate", "2024-03-02 12:00:00 +0200"), ("value", "HKCategoryValueSeverityModerate")]),
            record([("type", "HKQuantityTypeIdentifierBloodPressureSystolic"), ("sourceName", "Cuff"), ("unit", "mmHg"),
                    ("startDate", "2024-03-03 07:00:00 +0000"), ("endDate", "2024-03-03 07:00:00 +0000"), ("value", "120")]),
            record([("type", "HKQuantityTypeIdentifierHeartRate"), ("sourceName", "Watch"), ("unit", "count/min"),
                    ("startDate", "2024-03-04 08:00:00 +0100"), ("endDate", "2024-03-04 08:00:00 +0100"), ("value", "80")]),
            record([("type", "HKQuantityTypeIdentifierHeartRate"), ("sourceName", "Watch"), ("unit", "count/min"),
                    ("startDate", "2024-03-05 08:00:00 +0100"), ("endDate", "2024-03-05 08:00:00 +0100"), ("value", "81")]),
        ]
        let mapper = AppleHealthMapper()
        let entries = EntryRepository(db!)
        for element in elements {
            guard case let .entry(mapped) = mapper.record(element) else { return XCTFail("not mapped") }
            try entries.upsert(patientID: patient.id, sourceID: source, remoteID: mapped.remoteID, content: mapped.content)
        }
        // The user's own: a comment on one Record entry, a strike on another, and an entry by hand with a comment.
        let listed = try entries.list(patientID: patient.id)
        try entries.setUserFields(id: listed[5].id, UserFields(comments: "after the run"))
        try entries.setUserFields(id: listed[6].id, UserFields(deleted: true))
        try entries.add(patientID: patient.id, content: EntryContent(type: .condition, description: "Asthma", date: ClinicalTime(epoch: 1_709_300_000)),
                        user: UserFields(comments: "mild"))

        func codes(_ codes: [String: [String]]) -> String { codes.keys.sorted().map { "\($0)=\(codes[$0]!)" }.joined(separator: ",") }
        func contents(_ db: Database) throws -> [EntryContent] { try EntryRepository(db).list(patientID: patient.id).map(\.content) }
        func seen(_ db: Database) throws -> (entries: [String], timeline: [String], count: Int, latest: Int64?) {
            let entries = EntryRepository(db)
            let list = try entries.list(patientID: patient.id).map {
                "\($0.remoteID)|\(String(describing: $0.content.raw))|\($0.user)|\($0.sourceID)|\($0.patientID)|\(codes($0.content.codes))"
            }
            XCTAssertEqual(try entries.list(patientID: patient.id).map(\.content.codes).count, list.count)
            let timeline = try entries.timelineRows(patientID: patient.id, from: 0, to: 2_000_000_000, withCodes: true).map {
                "\($0.type)|\($0.description)|\($0.time)|\(String(describing: $0.valueNumber))|\(String(describing: $0.valueText))|\(String(describing: $0.unit))|\(codes($0.codes))"
            }
            return (list, timeline, try entries.count(patientID: patient.id), try entries.latestTime(patientID: patient.id))
        }
        let before = try seen(db!)
        let contentsBefore = try contents(db!)
        // The stand-ins for migration 5's columns go before it adds them.
        try db!.execute("""
            ALTER TABLE patients DROP COLUMN merged_into;
            ALTER TABLE entries DROP COLUMN source_patient_id;
            DROP TABLE temp.fact_copies;
            """)
        db = nil

        db = try vault.openDatabase(key: key, migrator: .reconciling)
        XCTAssertEqual(try Migrator().currentVersion(of: db!), Migrator().latestVersion)
        let after = try seen(db!)
        XCTAssertEqual(after.entries, before.entries)
        XCTAssertEqual(try contents(db!), contentsBefore)
        XCTAssertEqual(after.timeline, before.timeline)
        XCTAssertEqual(after.count, before.count)
        XCTAssertEqual(after.latest, before.latest)
        // Four Records moved (heart rate, steps, body mass, headache); blood pressure and the annotated two stayed entries.
        XCTAssertEqual(try db!.scalarInt("SELECT count(*) FROM samples"), 4)
        XCTAssertEqual(try db!.scalarInt("SELECT count(*) FROM entries"), 4)
        let moved = try EntryRepository(db!).list(patientID: patient.id).filter(EntryRepository.isSample)
        XCTAssertEqual(moved.count, 4)
        let heartRate = try XCTUnwrap(EntryRepository(db!).appleHealthRecord(id: moved[0].id))
        XCTAssertEqual(heartRate.attributes.map(\.value), elements[0].attributes.map(\.value))
        XCTAssertEqual(heartRate.metadata.map(\.value), ["1"])
    }
}
