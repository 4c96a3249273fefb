import Foundation
import XCTest
import HReaderCrypto
import HReaderModel
@testable import HReaderStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Tests of HReaderStore against the real SQLCipher, on real files in a fresh temporary directory
// (no mocks): encryption at rest, keys, migrations, connection settings, repositories, clinical
// times, concurrent writers and damage detection.

// MARK: - Helpers

/// Asserts that `body` throws a `DatabaseError` for which `check` holds.
private func XCTAssertThrowsDatabaseError<T>(
    _ body: @autoclosure () throws -> T, where check: (DatabaseError) -> Bool, _ what: String,
    file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        guard let error = error as? DatabaseError else {
            return XCTFail("expected a DatabaseError (\(what)), got \(error)", file: file, line: line)
        }
        XCTAssertTrue(check(error), "expected \(what), got \(error)", file: file, line: line)
    }
}

private func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map(Array.init)
}

private func fileMode(_ path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o7777
}

/// The UTF-8, UTF-16LE and UTF-16BE forms of `text`.
private func encodings(of text: String) -> [(String, [UInt8])] {
    let le = text.utf16.flatMap { [UInt8($0 & 0xff), UInt8($0 >> 8)] }
    let be = text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    return [("UTF-8", Array(text.utf8)), ("UTF-16LE", le), ("UTF-16BE", be)]
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    Data(haystack).range(of: Data(needle)) != nil
}

private let sqlitePlaintextHeader = Array("SQLite format 3\u{0}".utf8)

/// Thread-safe collector for what concurrent workers report.
private final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
}

final class StoreTests: XCTestCase {
    private var root: URL!
    private var vault: Vault!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-store-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        vault = Vault(root: root)
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private var dbPath: String { vault.databaseURL.path }

    /// A fresh, migrated vault database under a new random key.
    private func newDatabase() throws -> (Database, SecretBytes) {
        let key = try SecretBytes.random(count: 32)
        return (try vault.openDatabase(key: key, create: true), key)
    }

    private func addPatient(_ db: Database, _ first: String, _ last: String) throws -> Patient {
        try PatientRepository(db).add(NewPatient(firstName: first, lastName: last))
    }

    private func otherSourceID(_ db: Database, kind: String = "fhir", url: String = "https://fhir.example.org/r4") throws -> Int64 {
        try db.execute("""
            INSERT INTO sources (uuid, kind, base_url, display_name, created, updated)
            VALUES (?, ?, ?, 'Example', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')
            """, [UUID().uuidString.lowercased(), kind, url])
        return db.lastInsertRowID
    }

    // MARK: Interrupting a connection

    /// `hreader serve` stops a request whose time is up or whose client went away: `interrupt()` from
    /// another thread ends a running statement with an error that says so (not a damaged file), a
    /// reader beside it is not touched, and the connection goes on working.
    func testInterruptStopsTheRunningStatementFromAnotherThreadAndTheConnectionGoesOn() throws {
        let (db, key) = try newDatabase()
        let beside = try vault.openDatabase(key: key)
        let endless = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"
        // interrupt() is the one call SQLite allows from another thread while the connection runs.
        nonisolated(unsafe) let running = db
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { running.interrupt() }
        let started = Date()
        XCTAssertThrowsError(try db.scalarInt(endless)) { error in
            XCTAssertTrue((error as? DatabaseError)?.isInterruptOrMemory == true, "\(error)")
            XCTAssertFalse((error as? DatabaseError)?.isIntegrityFailure == true)
            XCTAssertTrue(db.diagnose(error) is DatabaseError && (db.diagnose(error) as! DatabaseError).isInterruptOrMemory, "no integrity check for it")
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM patients"), 0, "the connection works after it")
        XCTAssertEqual(try beside.scalarInt("SELECT count(*) FROM patients"), 0)
        // An idle connection that is interrupted is left as it is: its next statement runs.
        beside.interrupt()
        XCTAssertEqual(try beside.scalarInt("SELECT 1"), 1)
    }

    // MARK: Schema and migrations

    /// A long transaction's larger page cache ends with it, even when a caller had set another size; a
    /// smaller one asked inside a larger one leaves the larger in place.
    func testRFC3339FullDatesArePaddedAsTheFormatSays() {
        XCTAssertEqual(RFC3339.date(year: 2026, month: 11, day: 26), "2026-11-26")
        XCTAssertEqual(RFC3339.date(year: 987, month: 3, day: 4), "0987-03-04")
        XCTAssertEqual(RFC3339.date(year: 1, month: 12, day: 31), "0001-12-31")
        // The same digits as the UTC instant's date part.
        XCTAssertEqual(RFC3339.date(year: 1970, month: 1, day: 1), String(RFC3339.utc(0).prefix(10)))
    }

    func testPageCacheIsRestoredAndNestedCallsKeepTheLarger() throws {
        let (db, _) = try newDatabase()
        func size() throws -> Int64? { try db.scalarInt("PRAGMA cache_size") }
        XCTAssertEqual(try size(), -2000)
        try db.withPageCache(kibibytes: 16384) {
            XCTAssertEqual(try size(), -16384)
            try db.withPageCache(kibibytes: 6144) { XCTAssertEqual(try size(), -16384) }
            XCTAssertEqual(try size(), -16384)
        }
        XCTAssertEqual(try size(), -2000)
        try db.execute("PRAGMA cache_size = 100")   // pages: 400 KiB
        struct Failure: Error {}
        XCTAssertThrowsError(try db.withPageCache(kibibytes: 6144) { XCTAssertEqual(try size(), -6144); throw Failure() })
        XCTAssertEqual(try size(), 100, "restored after a failure too")
    }

    func testEmbeddedMigrationsEqualTheSchemaFiles() throws {
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schemaDirectory = packageRoot.appendingPathComponent("schema")
        let files = try FileManager.default.contentsOfDirectory(atPath: schemaDirectory.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        XCTAssertFalse(files.isEmpty, "no schema/*.sql found at \(schemaDirectory.path)")

        let embedded = Migrator.embedded
        XCTAssertEqual(embedded.map(\.name), files, "embedded migrations and schema/ list different files")
        let fileVersions = files.map { Int($0.prefix { $0.isNumber }) }
        XCTAssertEqual(embedded.map(\.version), fileVersions.compactMap { $0 }, "versions differ from the file names'")
        XCTAssertEqual(embedded.map(\.version), Array(1...embedded.count), "versions must run 1, 2, 3… without gaps")
        XCTAssertEqual(Migrator().latestVersion, embedded.count)

        func trimmed(_ s: String) -> String {
            var s = Substring(s)
            while s.last == "\n" || s.last == "\r" { s = s.dropLast() }
            return String(s)
        }
        for migration in embedded {
            let url = schemaDirectory.appendingPathComponent(migration.name)
            let content = try String(contentsOf: url, encoding: .utf8)
            XCTAssertEqual(trimmed(migration.sql), trimmed(content),
                           "\(migration.name) differs from its embedded copy; run scripts/embed-schema.sh")
        }
    }

    func testMigrationsRecordTheLatestVersionAndRunOnlyOnce() throws {
        let migrator = Migrator()
        let key = try SecretBytes.random(count: 32)
        let db = try Database.open(path: dbPath, key: key, create: true)
        XCTAssertEqual(try migrator.currentVersion(of: db), 0)
        XCTAssertEqual(try migrator.migrate(db), Array(1...migrator.latestVersion))
        XCTAssertEqual(try db.scalarInt("PRAGMA user_version"), Int64(migrator.latestVersion))
        XCTAssertEqual(try migrator.migrate(db), [], "a second migrate must apply nothing")
        XCTAssertEqual(try migrator.currentVersion(of: db), migrator.latestVersion)

        let tables = Set(try db.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.string(0)! })
        for table in ["sources", "patients", "entries", "timeline_items", "patient_applets", "applet_data", "audit_log", "settings"] {
            XCTAssertTrue(tables.contains(table), "missing table \(table)")
        }
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM sources WHERE uuid = ?", [manualSourceUUID]), 1)

        // Reopening through the vault applies nothing more and keeps the one manual source.
        let reopened = try vault.openDatabase(key: key)
        XCTAssertEqual(try migrator.migrate(reopened), [])
        XCTAssertEqual(try reopened.scalarInt("SELECT count(*) FROM sources"), 1)
    }

    /// `writeDirtyPages` writes a transaction's pages to the WAL before its commit (documents add does
    /// it while pdftotext runs), and they stay the transaction's: a rollback leaves none of its rows,
    /// a second connection sees none of them before the commit, and a commit keeps them all.
    func testWritingDirtyPagesEarlyNeitherCommitsThemNorLosesThem() throws {
        let key = try SecretBytes.random(count: 32)
        let db = try Database.open(path: dbPath, key: key, create: true)
        try db.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)")
        let wal = dbPath + "-wal"
        func walSize() -> Int { ((try? FileManager.default.attributesOfItem(atPath: wal))?[.size] as? Int) ?? 0 }
        func fill() throws {
            for i in 0..<200 { try db.execute("INSERT INTO blobs (bytes) VALUES (?)", [[UInt8](repeating: UInt8(i % 251), count: 4000)]) }
        }
        struct Abandon: Error {}
        let before = walSize()
        XCTAssertThrowsError(try db.transaction {
            try fill()
            try db.writeDirtyPages()
            XCTAssertGreaterThan(walSize(), before + 150 * 4096, "the pages are in the WAL before the commit")
            let other = try Database.open(path: dbPath, key: key)
            XCTAssertEqual(try other.scalarInt("SELECT count(*) FROM blobs"), 0, "another connection sees nothing uncommitted")
            throw Abandon()
        })
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM blobs"), 0, "a rollback leaves none of them")
        try db.transaction {
            try fill()
            try db.writeDirtyPages()
            try db.execute("INSERT INTO blobs (bytes) VALUES (x'00')")
        }
        XCTAssertEqual(try Database.open(path: dbPath, key: key).scalarInt("SELECT count(*) FROM blobs"), 201)
        try db.writeDirtyPages()   // outside a transaction: nothing to do, no error
    }

    /// A vault from before the search index (schema 3) is indexed by its migration; later writes
    /// keep the index current through the triggers (insert, update of a comment, delete).
    func testSearchIndexCoversAnOlderVaultAndFollowsEveryWrite() throws {
        let key = try SecretBytes.random(count: 32)
        let db = try Database.open(path: dbPath, key: key, create: true)
        try Migrator(migrations: Migrator.embedded.filter { $0.version <= 3 }).migrate(db)
        // Written as a schema 3 vault holds them (this build's repositories write later columns).
        try db.execute("""
            INSERT INTO patients (uuid, source_id, remote_id, first_name, last_name, created, updated)
            VALUES ('p-1', 1, 'p-1', 'Ada', 'Quill', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z');
            INSERT INTO entries (uuid, patient_id, source_id, remote_id, type, description, created, updated)
            VALUES ('e-1', 1, 1, 'e-1', 'medication', 'Metformin 500 mg oral tablet', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z');
            """)
        _ = try Self.migrator.migrate(db)
        let patient = try XCTUnwrap(try PatientRepository(db).get(id: 1))
        let entries = EntryRepository(db)
        let old = try XCTUnwrap(try entries.get(id: 1))
        let search = SearchRepository(db)
        XCTAssertEqual(try search.search(SearchQuery("metf")).map(\.entryID), [old.id], "the migration indexed what was there")

        let café = try entries.add(patientID: patient.id, content: EntryContent(type: .observation, description: "Café-au-lait macule"))
        XCTAssertEqual(try search.search(SearchQuery("cafe")).map(\.entryID), [café.id], "accents and case do not matter")
        try entries.setUserFields(id: old.id, UserFields(comments: "take with breakfast"))
        XCTAssertEqual(try search.search(SearchQuery("breakfast metformin")).map(\.entryID), [old.id], "a comment is found with the words it joins")
        XCTAssertEqual(try search.search(SearchQuery("breakfast lunch")), [], "every word must match")
        let hit = try XCTUnwrap(try search.search(SearchQuery("breakfast")).first)
        XCTAssertTrue(hit.snippet.contains("\(SearchQuery.markStart)breakfast\(SearchQuery.markEnd)"), hit.snippet)
        try db.execute("DELETE FROM entries WHERE id = ?", [café.id])
        XCTAssertEqual(try search.search(SearchQuery("cafe")), [])
        XCTAssertEqual(try search.indexedCount(), 1)
        // What a person types is never FTS5 syntax: quotes, operators and stars are only text.
        for hostile in [#"" OR *"#, "NEAR(a b)", "metformin -x", "col:metformin", "\"unbalanced", "*", "AND"] {
            XCTAssertNoThrow(try search.search(SearchQuery(hostile)), hostile)
        }
        XCTAssertEqual(try db.integrityProblems(), [])
    }

    /// Schema 8 gives a vault's documents and sample series their record: a document that of the
    /// entry whose attachment it is, else that of the first merge that moved it; a series the
    /// patient its Apple Health source is keyed by; anything else the person it is shown under.
    func testASchemaSevenVaultGivesDocumentsAndSeriesTheirRecord() throws {
        let key = try SecretBytes.random(count: 32)
        let db = try Database.open(path: dbPath, key: key, create: true)
        try Migrator(migrations: Migrator.embedded.filter { $0.version <= 7 }).migrate(db)
        let t = "'2024-01-01T00:00:00Z'"
        try db.execute("""
            INSERT INTO sources (id, uuid, kind, base_url, display_name, created, updated) VALUES
                (2, 's-2', 'fhir', 'https://a.example/fhir', 'A', \(t), \(t)),
                (3, 's-3', 'apple-health', 'apple-health:p-3', 'Apple Health', \(t), \(t));
            INSERT INTO patients (id, uuid, source_id, remote_id, created, updated) VALUES
                (1, 'p-1', 2, 'keep', \(t), \(t)), (2, 'p-2', 2, 'other', \(t), \(t)), (3, 'p-3', 1, 'third', \(t), \(t));
            UPDATE patients SET merged_into = 1 WHERE id IN (2, 3);
            -- Imported under KEEP while merged, from OTHER's record.
            INSERT INTO entries (id, uuid, patient_id, source_patient_id, source_id, remote_id, type, created, updated)
            VALUES (1, 'e-1', 1, 2, 2, 'DocumentReference/d1', 'observation', \(t), \(t));
            INSERT INTO documents (id, uuid, patient_id, source_id, origin, title, state, created, updated) VALUES
                (1, 'd-1', 1, 2, 'DocumentReference/d1#content[0]', 'imported while merged', 'fetched', \(t), \(t)),
                (2, 'd-2', 1, 1, NULL, 'moved by the merge', 'fetched', \(t), \(t)),
                (3, 'd-3', 1, 1, NULL, 'KEEP''s own', 'fetched', \(t), \(t));
            INSERT INTO patient_merges (keep_id, other_id, undo, merged_at)
            VALUES (1, 2, '{"records":[{"id":2,"merged_into":null}],"moved":{"documents":[2],"sample_series":[2]},"selected":false}', \(t));
            INSERT INTO sample_series (id, patient_id, source_id, hk_type, layout, type, description, codes) VALUES
                (1, 1, 3, 'HKQuantityTypeIdentifierHeartRate', 'type', 'vital_sign', 'Heart rate', '{}'),
                (2, 1, 1, 'HKQuantityTypeIdentifierBodyMass', 'type', 'vital_sign', 'Body mass', '{}'),
                (3, 1, 1, 'HKQuantityTypeIdentifierStepCount', 'type', 'activity', 'Steps', '{}');
            """)
        _ = try Self.migrator.migrate(db)
        XCTAssertEqual(try db.query("SELECT id, source_patient_id FROM documents ORDER BY id") { [$0.int64(0)!, $0.int64(1)!] }, [[1, 2], [2, 2], [3, 1]])
        XCTAssertEqual(try db.query("SELECT id, source_patient_id FROM sample_series ORDER BY id") { [$0.int64(0)!, $0.int64(1)!] }, [[1, 3], [2, 2], [3, 1]])
        // The unmerge now gives OTHER back both documents and its series.
        try PatientMergeRepository(db).unmerge(1)
        XCTAssertEqual(try db.query("SELECT id FROM documents WHERE patient_id = 2 ORDER BY id") { $0.int64(0)! }, [1, 2])
        XCTAssertEqual(try db.query("SELECT id FROM sample_series WHERE patient_id = 2 ORDER BY id") { $0.int64(0)! }, [2])
        XCTAssertEqual(try db.integrityProblems(), [])
    }

    /// The grouping of facts is Kit's (`Migrator.reconciling`, FactGroupingTests); the store's own steps
    /// are tested here with a regrouping that does nothing.
    static let migrator = Migrator(regroup: { _, _ in })

    /// Migrations 5 and 8 regroup everyone's facts: a migrator without the rules refuses a vault of
    /// people at the first of them, and the vault stays at the schema it had; an empty vault needs none.
    func testAVaultOfPeopleIsNotMigratedPastARegroupingWithoutTheRules() throws {
        let key = try SecretBytes.random(count: 32)
        let db = try Database.open(path: dbPath, key: key, create: true)
        try Migrator(migrations: Migrator.embedded.filter { $0.version <= 4 }).migrate(db)
        try db.execute("""
            INSERT INTO patients (uuid, source_id, remote_id, first_name, last_name, created, updated)
            VALUES ('p-1', 1, 'p-1', 'Ada', 'Quill', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')
            """)
        XCTAssertThrowsError(try Migrator().migrate(db)) { error in
            XCTAssertEqual(error as? Migrator.Failure, .regroupingNeeded(version: 5))
        }
        XCTAssertEqual(try Migrator().currentVersion(of: db), 4, "migration 5 rolled back whole")
        nonisolated(unsafe) var regrouped: [Int64] = []
        XCTAssertEqual(try Migrator(regroup: { _, id in regrouped.append(id) }).migrate(db), Array(5...Migrator().latestVersion))
        XCTAssertEqual(regrouped, [1, 1], "each person, at 5 and at 8")

        let empty = try Database.open(path: root.appendingPathComponent("empty.db").path, key: key, create: true)
        XCTAssertEqual(try Migrator().migrate(empty), Array(1...Migrator().latestVersion))
    }

    func testASchemaOneVaultGainsPatientIdentitiesAndOneFileSourceInPlace() throws {
        let key = try SecretBytes.random(count: 32)
        let db = try Database.open(path: dbPath, key: key, create: true)
        try Migrator(migrations: Migrator.embedded.filter { $0.version == 1 }).migrate(db)
        // What a version-1 hreader left: the same FHIR file imported from two paths (two file
        // sources, two copies of one person), a server's patient, an RHEx patient, entries with the
        // user's own fields.
        let stamp = "2026-01-01T00:00:00Z"
        for (id, kind, base) in [(2, "file", "file:///home/a/Downloads/ada.json"), (3, "file", "file:///home/a/Desktop/ada.json"),
                                 (4, "fhir", "https://fhir.example.org/r4"), (5, "rhex", "https://rhex.example.org")] {
            try db.execute("INSERT INTO sources (id, uuid, kind, base_url, display_name, created, updated) VALUES (?, ?, ?, ?, 'x', ?, ?)",
                           [id, UUID().uuidString.lowercased(), kind, base, stamp, stamp])
        }
        let adaRaw = #"{"resourceType":"Patient","id":"p1","identifier":[{"system":"urn:mrn","value":"42"},{"value":"no-system"}]}"#
        for (id, source, remote, raw) in [(1, 2, "p1", adaRaw), (2, 3, "p1", adaRaw),
                                          (3, 4, "srv-9", #"{"resourceType":"Patient","id":"srv-9"}"#), (4, 5, "rec-1", #"{"first":"R"}"#)] {
            try db.execute("""
                INSERT INTO patients (id, uuid, source_id, remote_id, first_name, last_name, raw, created, updated)
                VALUES (?, ?, ?, ?, 'Ada', 'Quill', ?, ?, ?)
                """, [id, UUID().uuidString.lowercased(), source, remote, raw, stamp, stamp])
        }
        for (id, patient, source) in [(1, 1, 2), (2, 2, 3), (3, 3, 4)] {
            try db.execute("""
                INSERT INTO entries (id, uuid, patient_id, source_id, remote_id, type, description, comments, user_deleted, created, updated)
                VALUES (?, ?, ?, ?, 'Condition/c1', 'condition', 'Gout', 'my note', 1, ?, ?)
                """, [id, UUID().uuidString.lowercased(), patient, source, stamp, stamp])
        }
        let entriesBefore = try db.query("SELECT id, patient_id, remote_id, description, comments, user_deleted FROM entries ORDER BY id") {
            "\($0.int64(0)!) \($0.int64(1)!) \($0.string(2)!) \($0.string(3)!) \($0.string(4)!) \($0.int64(5)!)"
        }

        XCTAssertEqual(try Self.migrator.migrate(db), Array(2...Migrator().latestVersion))

        let identities = try db.query("SELECT kind, value, patient_id FROM patient_identities ORDER BY patient_id, kind, value") {
            "\($0.int64(2)!) \($0.string(0)!) \($0.string(1)!)"
        }
        XCTAssertEqual(identities, ["1 identifier urn:mrn|42", "1 reference file|Patient/p1", "2 identifier urn:mrn|42",
                                    "2 reference file|Patient/p1", "3 reference https://fhir.example.org/r4|Patient/srv-9"],
                       "identifiers without a system name no one; RHEx records have no FHIR id")
        let fileSources = try db.query("SELECT id, base_url FROM sources WHERE kind = 'file' ORDER BY id") { "\($0.int64(0)!) \($0.string(1)!)" }
        XCTAssertEqual(fileSources.count, 2, "one source for files, and the old one whose patient collides stays: \(fileSources)")
        XCTAssertEqual(fileSources.last?.hasSuffix(" file:"), true)
        let filesID = try XCTUnwrap(db.scalarInt("SELECT id FROM sources WHERE kind = 'file' AND base_url = 'file:'"))
        XCTAssertEqual(try db.query("SELECT source_id FROM patients ORDER BY id") { $0.int64(0)! }, [filesID, 3, 4, 5])
        XCTAssertEqual(try db.query("SELECT source_id FROM entries ORDER BY id") { $0.int64(0)! }, [filesID, filesID, 4])
        let entriesAfter = try db.query("SELECT id, patient_id, remote_id, description, comments, user_deleted FROM entries ORDER BY id") {
            "\($0.int64(0)!) \($0.int64(1)!) \($0.string(2)!) \($0.string(3)!) \($0.string(4)!) \($0.int64(5)!)"
        }
        XCTAssertEqual(entriesAfter, entriesBefore, "nothing lost, the user's fields kept")
        XCTAssertEqual(try db.scalarString("PRAGMA foreign_key_check"), nil)
    }

    func testVaultNewerThanTheBinaryIsRefused() throws {
        let latest = Migrator().latestVersion
        let key = try SecretBytes.random(count: 32)
        do {
            let db = try vault.openDatabase(key: key, create: true)
            try db.execute("PRAGMA user_version = \(latest + 1)")
        }
        XCTAssertThrowsError(try vault.openDatabase(key: key)) { error in
            XCTAssertEqual(error as? Migrator.Failure, .vaultNewerThanBinary(vault: latest + 1, supported: latest))
        }
        let db = try Database.open(path: dbPath, key: key)
        XCTAssertThrowsError(try Migrator().migrate(db)) { error in
            XCTAssertEqual(error as? Migrator.Failure, .vaultNewerThanBinary(vault: latest + 1, supported: latest))
        }
        XCTAssertEqual(try db.scalarInt("PRAGMA user_version"), Int64(latest + 1), "a refused vault must not be changed")
    }

    // MARK: Encryption and keys

    func testDatabaseFilesAreEncryptedAndHoldNoInsertedPlaintext() throws {
        let canaries = ["Zebulon", "Quixotic", "Zebulon Quixotic", "PLAINTEXT-CANARY", "Xylophonic migraine"]
        func scan(_ when: String) {
            for suffix in ["", "-wal", "-shm"] {
                guard let bytes = fileBytes(dbPath + suffix) else { continue }
                for canary in canaries {
                    for (name, needle) in encodings(of: canary) {
                        XCTAssertFalse(contains(bytes, needle), "\(when): vault.db\(suffix) holds \(canary) in \(name)")
                    }
                }
            }
        }
        do {
            let (db, _) = try newDatabase()
            let patient = try addPatient(db, "Zebulon", "Quixotic")
            try EntryRepository(db).add(patientID: patient.id,
                                        content: EntryContent(type: .symptom, description: "Xylophonic migraine",
                                                              date: ClinicalTime.parse("2012-05-01T10:00:00Z")),
                                        user: UserFields(comments: "PLAINTEXT-CANARY"))
            // Still open: the WAL holds the new pages.
            XCTAssertTrue(FileManager.default.fileExists(atPath: dbPath + "-wal"))
            for suffix in ["", "-wal", "-shm"] {
                XCTAssertEqual(fileMode(dbPath + suffix), 0o600, "vault.db\(suffix) must be mode 0600")
            }
            scan("while open")
        }
        let head = try XCTUnwrap(fileBytes(dbPath)).prefix(16)
        XCTAssertEqual(head.count, 16)
        XCTAssertNotEqual(Array(head), sqlitePlaintextHeader, "vault.db starts with the plaintext SQLite header")
        scan("after close")
    }

    func testWrongKeyIsRefusedAsNotADatabaseUnderThisKey() throws {
        let key = try SecretBytes.random(count: 32)
        do {
            let db = try vault.openDatabase(key: key, create: true)
            _ = try addPatient(db, "Ada", "Lovelace")
        }
        let before = fileBytes(dbPath)
        let wrong = try SecretBytes.random(count: 32)
        XCTAssertThrowsError(try Database.open(path: dbPath, key: wrong)) { error in
            XCTAssertEqual(error as? Database.OpenFailure, .notADatabaseUnderThisKey, "got \(error)")
        }
        XCTAssertThrowsError(try vault.openDatabase(key: wrong)) { error in
            XCTAssertEqual(error as? Database.OpenFailure, .notADatabaseUnderThisKey, "got \(error)")
        }
        // A key differing in one bit is just as wrong.
        var nearly = key.withUnsafeBytes { Array($0) }
        nearly[31] ^= 0x01
        XCTAssertThrowsError(try Database.open(path: dbPath, key: SecretBytes(nearly))) { error in
            XCTAssertEqual(error as? Database.OpenFailure, .notADatabaseUnderThisKey, "got \(error)")
        }
        XCTAssertEqual(fileBytes(dbPath), before, "a refused open must not change the file")
        // The right key still opens it, data intact.
        let db = try vault.openDatabase(key: key)
        XCTAssertEqual(try PatientRepository(db).all().map(\.displayName), ["Ada Lovelace"])
    }

    func testPlaintextSQLiteFileIsRefusedWhenOpenedWithAKey() throws {
        let path = root.appendingPathComponent("plain.db").path
        do {
            let plain = try Database.open(path: path, key: nil, create: true)
            try plain.execute("CREATE TABLE t (x TEXT); INSERT INTO t VALUES ('hello');")
            _ = try plain.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try XCTUnwrap(fileBytes(path))
        XCTAssertEqual(Array(before.prefix(16)), sqlitePlaintextHeader, "fixture should be a plaintext SQLite file")
        XCTAssertThrowsError(try Database.open(path: path, key: try SecretBytes.random(count: 32))) { error in
            XCTAssertEqual(error as? Database.OpenFailure, .plaintextDatabase, "got \(error)")
        }
        XCTAssertEqual(fileBytes(path), before, "a refused plaintext file must not be changed (never upgraded)")
    }

    func testMissingDatabaseIsReportedWithoutCreate() throws {
        XCTAssertThrowsError(try vault.openDatabase(key: try SecretBytes.random(count: 32))) { error in
            XCTAssertEqual(error as? Vault.Failure, .databaseMissing(dbPath))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dbPath))
    }

    func testConnectionSettingsAreInForceAfterOpen() throws {
        let key = try SecretBytes.random(count: 32)
        _ = try vault.openDatabase(key: key, create: true)
        for db in [try vault.openDatabase(key: key), try Database.open(path: dbPath, key: key)] {
            XCTAssertEqual(try db.scalarInt("PRAGMA foreign_keys"), 1)
            XCTAssertEqual(try db.scalarString("PRAGMA journal_mode"), "wal")
            XCTAssertEqual(try db.scalarInt("PRAGMA temp_store"), 2)
            XCTAssertEqual(try db.scalarInt("PRAGMA secure_delete"), 1)
            XCTAssertEqual(try db.scalarString("PRAGMA cipher_page_size"), "4096")
            XCTAssertGreaterThan(try db.scalarInt("PRAGMA busy_timeout") ?? 0, 0)
            let version = try XCTUnwrap(try db.cipherVersion())
            XCTAssertTrue(version.hasPrefix("4."), "cipher_version \(version)")
            // Foreign keys are really enforced.
            XCTAssertThrowsDatabaseError(
                try db.execute("INSERT INTO timeline_items (uuid, patient_id, type, data, time_epoch, created) VALUES ('u', 9999, 'levels', '{}', 0, 'now')"),
                where: \.isConstraintViolation, "a foreign key violation")
        }
    }

    // MARK: Patients

    func testPatientPickerIsAlphabeticalByLastThenFirstNameIgnoringCase() throws {
        let (db, _) = try newDatabase()
        let repo = PatientRepository(db)
        for (first, last) in [("bob", "smith"), ("alice", "Smith"), ("Zed", "adams"), ("carl", "Brown"), ("Amy", "brown")] {
            _ = try addPatient(db, first, last)
        }
        XCTAssertEqual(try repo.all().map(\.displayOrder), [0, 0, 0, 0, 0])
        XCTAssertEqual(try repo.all().map(\.displayName), ["Zed adams", "Amy brown", "carl Brown", "alice Smith", "bob smith"])
        XCTAssertEqual(try repo.count(), 5)
    }

    func testMovingAPatientReordersAndLaterPatientsGoToTheEnd() throws {
        let (db, _) = try newDatabase()
        let repo = PatientRepository(db)
        let bob = try addPatient(db, "Bob", "Smith")
        _ = try addPatient(db, "Zed", "Adams")
        _ = try addPatient(db, "Carl", "Brown")
        XCTAssertEqual(try repo.all().map(\.firstName), ["Zed", "Carl", "Bob"])

        try repo.move(id: bob.id, to: 1)
        XCTAssertEqual(try repo.all().map(\.firstName), ["Bob", "Zed", "Carl"])
        XCTAssertEqual(try repo.all().map(\.displayOrder), [1, 2, 3])

        // Alphabetically first, but added after a reorder: goes to the end.
        let aaron = try addPatient(db, "Aaron", "Aardvark")
        XCTAssertEqual(try repo.all().map(\.firstName), ["Bob", "Zed", "Carl", "Aaron"])
        let dora = try addPatient(db, "Dora", "Aaberg")
        XCTAssertEqual(try repo.all().map(\.firstName), ["Bob", "Zed", "Carl", "Aaron", "Dora"])

        try repo.move(id: aaron.id, to: 2)
        XCTAssertEqual(try repo.all().map(\.firstName), ["Bob", "Aaron", "Zed", "Carl", "Dora"])
        try repo.move(id: bob.id, to: 99)   // past the end: clamps to last
        XCTAssertEqual(try repo.all().map(\.firstName), ["Aaron", "Zed", "Carl", "Dora", "Bob"])
        try repo.move(id: dora.id, to: 0)   // before the start: clamps to first
        XCTAssertEqual(try repo.all().map(\.firstName), ["Dora", "Aaron", "Zed", "Carl", "Bob"])
        XCTAssertEqual(try repo.all().map(\.displayOrder), [1, 2, 3, 4, 5])
        // Moving a patient that does not exist changes nothing.
        try repo.move(id: 424_242, to: 1)
        XCTAssertEqual(try repo.all().map(\.firstName), ["Dora", "Aaron", "Zed", "Carl", "Bob"])
    }

    func testFindPatientByIdUUIDAndUUIDPrefix() throws {
        let (db, _) = try newDatabase()
        let repo = PatientRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        let alan = try addPatient(db, "Alan", "Turing")
        XCTAssertEqual(try repo.find(String(ada.id)), ada)
        XCTAssertEqual(try repo.find(String(alan.id)), alan)
        XCTAssertEqual(try repo.find(ada.uuid), ada)
        XCTAssertEqual(try repo.find(ada.uuid.uppercased()), ada)
        XCTAssertEqual(try repo.get(id: alan.id), alan)
        // An 8-character prefix (this test avoids an all-digit prefix, which reads as a local id;
        // see testAllDigitUUIDPrefixFindsThePatientOrEntryWhenNoSuchLocalID).
        for patient in [ada, alan] {
            let prefix = String(patient.uuid.prefix(8))
            let usable = prefix.allSatisfy(\.isNumber) ? String(patient.uuid.prefix(9)) : prefix
            XCTAssertEqual(try repo.find(usable), patient)
            XCTAssertEqual(try repo.find(usable.uppercased()), patient)
        }
        XCTAssertNil(try repo.find(String(ada.uuid.prefix(7))), "7 characters is too short")
        XCTAssertNil(try repo.find("99999"))
        XCTAssertNil(try repo.find("ffffffff-ffff"))

        // An ambiguous prefix finds nothing rather than the wrong patient.
        try db.execute("UPDATE patients SET uuid = 'abcdef12-0000-4000-8000-000000000001' WHERE id = ?", [ada.id])
        try db.execute("UPDATE patients SET uuid = 'abcdef12-0000-4000-8000-000000000002' WHERE id = ?", [alan.id])
        XCTAssertNil(try repo.find("abcdef12"))
        XCTAssertEqual(try repo.find("abcdef12-0000-4000-8000-000000000002")?.id, alan.id)
        XCTAssertEqual(try repo.find("ABCDEF12-0000-4000-8000-000000000001")?.id, ada.id)
    }

    func testAllDigitUUIDPrefixFindsThePatientOrEntryWhenNoSuchLocalID() throws {
        // About 2% of random UUIDs begin with eight decimal digits; their 8-character prefix must
        // still find the patient (or entry) when none has that number as its local id.
        let (db, _) = try newDatabase()
        let repo = PatientRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        try db.execute("UPDATE patients SET uuid = '12345678-0000-4000-8000-000000000001' WHERE id = ?", [ada.id])
        XCTAssertEqual(try repo.find("12345678")?.id, ada.id, "patient by all-digit uuid prefix")
        // And a real local id still wins.
        XCTAssertEqual(try repo.find(String(ada.id))?.id, ada.id)

        let entries = EntryRepository(db)
        let entry = try entries.add(patientID: ada.id, content: EntryContent(type: .symptom, description: "Headache"))
        try db.execute("UPDATE entries SET uuid = '87654321-0000-4000-8000-000000000001' WHERE id = ?", [entry.id])
        XCTAssertEqual(try entries.find("87654321")?.id, entry.id, "entry by all-digit uuid prefix")
        XCTAssertEqual(try entries.find(String(entry.id))?.id, entry.id)
    }

    func testRemovingAPatientCascadesToItsEntriesAndTimelineItems() throws {
        let (db, _) = try newDatabase()
        let patients = PatientRepository(db), entries = EntryRepository(db), items = TimelineItemRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        let alan = try addPatient(db, "Alan", "Turing")
        for patient in [ada, alan] {
            for i in 0..<3 {
                try entries.add(patientID: patient.id, content: EntryContent(type: .condition, description: "c\(i)"))
            }
            try items.add(patientID: patient.id, type: "levels", data: #"{"pain":"5"}"#, time: 100)
        }
        try db.execute("INSERT INTO patient_applets (patient_id, applet, position) VALUES (?, 'org.mitre.hreader.bp', 1)", [ada.id])
        try db.execute("INSERT INTO applet_data (applet, patient_id, key, value, updated) VALUES ('org.mitre.hreader.bp', ?, 'k', x'00', 'now')", [ada.id])
        XCTAssertEqual(try entries.count(), 6)

        try patients.remove(id: ada.id)
        XCTAssertNil(try patients.get(id: ada.id))
        XCTAssertEqual(try entries.count(patientID: ada.id), 0)
        XCTAssertEqual(try entries.count(patientID: alan.id), 3)
        XCTAssertEqual(try entries.count(), 3)
        XCTAssertEqual(try items.list(patientID: ada.id, from: 0, to: 1000), [])
        XCTAssertEqual(try items.list(patientID: alan.id, from: 0, to: 1000).count, 1)
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM patient_applets"), 0)
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM applet_data"), 0)
        XCTAssertEqual(try db.integrityProblems(), [])
    }

    // MARK: Entries

    func testEntriesAddAndListWithTypeFilter() throws {
        let (db, _) = try newDatabase()
        let repo = EntryRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        let alan = try addPatient(db, "Alan", "Turing")
        let content = EntryContent(type: .result, description: "LDL cholesterol", status: "final",
                                   date: ClinicalTime.parse("2012-05-01T08:00:00Z"),
                                   codes: ["LOINC": ["13457-7"], "SNOMED-CT": ["113079009"]],
                                   valueNumber: 129.5, valueText: "129.5", unit: "mg/dL", raw: #"{"resourceType":"Observation"}"#)
        let added = try repo.add(patientID: ada.id, content: content, user: UserFields(comments: "fasting"))
        XCTAssertEqual(added.content, content)
        XCTAssertEqual(added.user, UserFields(comments: "fasting"))
        XCTAssertEqual(added.sourceID, try SourceRepository(db).manualSourceID())
        XCTAssertEqual(added.remoteID, added.uuid, "a manual entry's remote id is its uuid")
        XCTAssertEqual(try repo.get(id: added.id), added)
        XCTAssertEqual(try repo.find(added.uuid), added)
        XCTAssertEqual(try repo.find(String(added.id)), added)

        try repo.add(patientID: ada.id, content: EntryContent(type: .medication, description: "Aspirin 81 mg"))
        try repo.add(patientID: ada.id, content: EntryContent(type: .medication, description: "Metformin 500 mg"))
        try repo.add(patientID: ada.id, content: EntryContent(type: .vitalSign, description: "Heart rate", valueNumber: 61, unit: "/min"))
        try repo.add(patientID: alan.id, content: EntryContent(type: .medication, description: "Other patient's"))

        XCTAssertEqual(try repo.list(patientID: ada.id).count, 4)
        XCTAssertEqual(Set(try repo.list(patientID: ada.id, type: .medication).map(\.content.description)),
                       ["Aspirin 81 mg", "Metformin 500 mg"])
        XCTAssertEqual(try repo.list(patientID: ada.id, type: .vitalSign).map(\.content.description), ["Heart rate"])
        XCTAssertEqual(try repo.list(patientID: ada.id, type: .allergy), [])
        XCTAssertEqual(try repo.list(patientID: alan.id).map(\.content.description), ["Other patient's"])
        XCTAssertEqual(try repo.count(patientID: ada.id), 4)
        XCTAssertEqual(try db.scalarString("SELECT type FROM entries WHERE description = 'Heart rate'"), "vital_sign")
    }

    func testRangeFilterMatchesDateStartOrEndAndOrdersByEffectiveTime() throws {
        let (db, _) = try newDatabase()
        let repo = EntryRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        func add(_ name: String, date: Int64? = nil, start: Int64? = nil, end: Int64? = nil) throws {
            try repo.add(patientID: ada.id, content: EntryContent(
                type: .encounter, description: name, date: date.map { ClinicalTime(epoch: $0) },
                start: start.map { ClinicalTime(epoch: $0) }, end: end.map { ClinicalTime(epoch: $0) }))
        }
        try add("only end", end: 3000)
        try add("only start", start: 2000)
        try add("only date", date: 1000)
        try add("start before, end inside", start: 100, end: 2500)
        try add("date inside, start before", date: 2800, start: 50)
        try add("spans the range, neither end inside", start: 500, end: 5000)
        try add("after", date: 9000)
        try add("before", start: 10, end: 20)
        try add("no time at all")

        let names = { (from: Int64?, to: Int64?) in try repo.list(patientID: ada.id, from: from, to: to).map(\.content.description) }
        // Ordered by coalesce(date, start, end): "date inside, start before" sits at its date, 2800.
        XCTAssertEqual(try names(900, 3500),
                       ["start before, end inside", "only date", "only start", "date inside, start before", "only end"])
        // Bounds are inclusive.
        XCTAssertEqual(try names(1000, 3000),
                       ["start before, end inside", "only date", "only start", "date inside, start before", "only end"])
        XCTAssertEqual(try names(1001, 2999),
                       ["start before, end inside", "only start", "date inside, start before"])
        XCTAssertEqual(try names(3001, 4999), [])
        // Open-ended ranges.
        XCTAssertEqual(try names(5000, nil), ["spans the range, neither end inside", "after"])
        XCTAssertEqual(try names(nil, 60), ["before", "date inside, start before"])
        // Without a range: everything, timeless entries first (NULL sorts first), then by effective time.
        XCTAssertEqual(try names(nil, nil).count, 9)
        XCTAssertEqual(try names(nil, nil).last, "after")
    }

    func testSetUserFieldsChangesOnlyTheUsersFields() throws {
        let (db, _) = try newDatabase()
        let repo = EntryRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        let content = EntryContent(type: .medication, description: "Lisinopril 10 mg", status: "active",
                                   start: ClinicalTime.parse("2011-03-01", zone: .named(TimeZone(identifier: "UTC")!)),
                                   codes: ["RxNorm": ["314076"]], dose: "10 mg", raw: #"{"id":"m1"}"#)
        let original = try repo.add(patientID: ada.id, content: content, sourceID: try otherSourceID(db), remoteID: "m1",
                                    now: Date(timeIntervalSince1970: 1_600_000_000))
        let user = UserFields(comments: "take in the morning", patientQuantity: "30", patientDose: "1 tablet",
                              patientDirections: "with water", patientPrescriber: "Dr. Who", deleted: true)
        try repo.setUserFields(id: original.id, user, now: Date(timeIntervalSince1970: 1_700_000_000))
        let updated = try XCTUnwrap(try repo.get(id: original.id))
        XCTAssertEqual(updated.user, user)
        XCTAssertEqual(updated.content, original.content)
        XCTAssertEqual(updated.uuid, original.uuid)
        XCTAssertEqual(updated.remoteID, "m1")
        XCTAssertEqual(updated.sourceID, original.sourceID)
        XCTAssertEqual(updated.created, original.created)
        XCTAssertNotEqual(updated.updated, original.updated)

        // Clearing them works too.
        try repo.setUserFields(id: original.id, UserFields())
        XCTAssertEqual(try repo.get(id: original.id)?.user, UserFields())
        XCTAssertEqual(try repo.get(id: original.id)?.content, content)
    }

    func testEntryRemoteIDIsUniquePerPatientAndSource() throws {
        let (db, _) = try newDatabase()
        let repo = EntryRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        let alan = try addPatient(db, "Alan", "Turing")
        let manual = try SourceRepository(db).manualSourceID()
        let fhir = try otherSourceID(db)
        let content = EntryContent(type: .allergy, description: "Penicillin")
        try repo.add(patientID: ada.id, content: content, sourceID: manual, remoteID: "r1")
        XCTAssertThrowsDatabaseError(try repo.add(patientID: ada.id, content: content, sourceID: manual, remoteID: "r1"),
                                     where: \.isConstraintViolation, "a UNIQUE violation")
        // The same remote id from another source, or for another patient, is a different entry.
        try repo.add(patientID: ada.id, content: content, sourceID: fhir, remoteID: "r1")
        try repo.add(patientID: alan.id, content: content, sourceID: manual, remoteID: "r1")
        XCTAssertEqual(try repo.count(), 3)
        // Unknown types and patients are refused by the schema.
        XCTAssertThrowsDatabaseError(
            try db.execute("UPDATE entries SET type = 'horoscope' WHERE patient_id = ?", [ada.id]),
            where: \.isConstraintViolation, "a CHECK violation")
        XCTAssertThrowsDatabaseError(try repo.add(patientID: 424_242, content: content), where: \.isConstraintViolation,
                                     "a foreign key violation")
    }

    // MARK: Clinical times

    func testClinicalTimeParsesPartialDatesAtLocalMidnight() throws {
        let newYork = try XCTUnwrap(TimeZone(identifier: "America/New_York"))
        let utc = try XCTUnwrap(TimeZone(identifier: "UTC"))
        // 2012-01-01T00:00:00Z = 1325376000; 2012-05-01T00:00:00Z = 1335830400.
        XCTAssertEqual(ClinicalTime.parse("2012", zone: .named(utc)), ClinicalTime(text: "2012", epoch: 1_325_376_000))
        XCTAssertEqual(ClinicalTime.parse("2012", zone: .named(newYork)), ClinicalTime(text: "2012", epoch: 1_325_376_000 + 5 * 3600))
        XCTAssertEqual(ClinicalTime.parse("2012-05", zone: .named(utc)), ClinicalTime(text: "2012-05", epoch: 1_335_830_400))
        XCTAssertEqual(ClinicalTime.parse("2012-05", zone: .named(newYork)), ClinicalTime(text: "2012-05", epoch: 1_335_830_400 + 4 * 3600))
        XCTAssertEqual(ClinicalTime.parse("2012-05-01", zone: .named(newYork)),
                       ClinicalTime(text: "2012-05-01", epoch: 1_335_830_400 + 4 * 3600))
        let tokyo = try XCTUnwrap(TimeZone(identifier: "Asia/Tokyo"))
        XCTAssertEqual(ClinicalTime.parse("2012-05-01", zone: .named(tokyo))?.epoch, 1_335_830_400 - 9 * 3600)
        XCTAssertEqual(ClinicalTime.parse("2012-02-29", zone: .named(utc))?.epoch, 1_330_473_600)
        XCTAssertEqual(ClinicalTime.parse("1969-12-31", zone: .named(utc))?.epoch, -86_400)
    }

    func testClinicalTimeParsesDateTimesWithOffsetsExactly() throws {
        // 2012-05-01T21:30:00Z = 1335830400 + 21.5 h = 1335907800.
        let expected: Int64 = 1_335_907_800
        XCTAssertEqual(ClinicalTime.parse("2012-05-01T23:30:00+02:00"),
                       ClinicalTime(text: "2012-05-01T23:30:00+02:00", epoch: expected))
        // The zone argument does not affect a time with an explicit offset.
        XCTAssertEqual(ClinicalTime.parse("2012-05-01T23:30:00+02:00", zone: .named(TimeZone(identifier: "Asia/Tokyo")!))?.epoch, expected)
        XCTAssertEqual(ClinicalTime.parse("2012-05-01T21:30:00Z")?.epoch, expected)
        XCTAssertEqual(ClinicalTime.parse("2012-05-01T16:30:00-05:00")?.epoch, expected)
        // Fractional seconds: the instant's whole second.
        XCTAssertEqual(ClinicalTime.parse("2012-05-01T23:30:00.750+02:00"),
                       ClinicalTime(text: "2012-05-01T23:30:00.750+02:00", epoch: expected))
        XCTAssertEqual(ClinicalTime.parse("2012-05-01T21:30:00.5Z")?.epoch, expected)
        XCTAssertEqual(ClinicalTime.parse("2012-05-01T21:30:59.999Z")?.epoch, expected + 59)
        // Before 1600 (Foundation's calendar is Julian there) the formatter still reads the RFC 3339 shape.
        XCTAssertNotNil(ClinicalTime.parse("1500-03-01T12:00:00Z"))
        // ClinicalTime(epoch:) writes RFC 3339 in UTC.
        XCTAssertEqual(ClinicalTime(epoch: expected).text, "2012-05-01T21:30:00Z")
    }

    func testClinicalTimeRejectsInvalidText() {
        for text in ["2012-13", "2012-00", "2012-02-30", "2013-02-29", "2012-04-31", "2012-05-32", "yesterday", "",
                     "2012-5", "12-05-01", "2012-05-01-01", "2012/05/01", "20120501", "2012-05-01T25:00:00Z",
                     "2012-05-01Tnoon", "２０１２",
                     // Shapes Foundation's ISO 8601 parser would read (a signed six-digit year, no seconds,
                     // a compact offset, a week date): RFC 3339 only.
                     "-629999-01-01T00:00:00Z", "+2012-05-01T00:00:00Z", "2012-05-01T10:00Z", "2012-05-01T10:00:00+0200",
                     "2012-W18-2T10:00:00Z", "2012-05-01T10:00:00.Z", "2012-05-01T10:00:00+02"] {
            XCTAssertNil(ClinicalTime.parse(text, zone: .named(TimeZone(identifier: "UTC")!)), "accepted \(text.debugDescription)")
        }
    }

    // MARK: Timeline items

    func testTimelineItemsInRangeComeInTimeOrder() throws {
        let (db, _) = try newDatabase()
        let repo = TimelineItemRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        let alan = try addPatient(db, "Alan", "Turing")
        try repo.add(patientID: ada.id, type: "levels", data: #"{"pain":"7"}"#, time: 300)
        try repo.add(patientID: ada.id, type: "medication", data: #"{"name":"Aspirin"}"#, time: 100)
        try repo.add(patientID: ada.id, type: "levels", data: #"{"pain":"5"}"#, time: 200)
        try repo.add(patientID: ada.id, type: "levels", data: #"{"pain":"9"}"#, time: 5000)
        try repo.add(patientID: alan.id, type: "levels", data: #"{"pain":"1"}"#, time: 150)

        let inRange = try repo.list(patientID: ada.id, from: 100, to: 300)
        XCTAssertEqual(inRange.map(\.time), [100, 200, 300])
        XCTAssertEqual(inRange.map(\.data), [#"{"name":"Aspirin"}"#, #"{"pain":"5"}"#, #"{"pain":"7"}"#])
        XCTAssertEqual(try repo.list(patientID: ada.id, from: 101, to: 299).map(\.time), [200])
        XCTAssertEqual(try repo.list(patientID: ada.id, from: 0, to: 10_000, types: ["levels"]).map(\.time), [200, 300, 5000])
        XCTAssertEqual(try repo.list(patientID: ada.id, from: 0, to: 10_000, types: ["medication", "regimen"]).map(\.type), ["medication"])
        XCTAssertEqual(try repo.list(patientID: alan.id, from: 0, to: 10_000).map(\.data), [#"{"pain":"1"}"#])
    }

    func testTimelineItemDataMustBeAJSONObject() throws {
        let (db, _) = try newDatabase()
        let repo = TimelineItemRepository(db)
        let ada = try addPatient(db, "Ada", "Lovelace")
        for data in ["[1, 2]", #""pain""#, "42", "null", "true", "not json", "", "{\"unterminated\": "] {
            XCTAssertThrowsDatabaseError(try repo.add(patientID: ada.id, type: "levels", data: data, time: 1),
                                         where: \.isConstraintViolation, "a CHECK violation for \(data.debugDescription)")
        }
        XCTAssertEqual(try repo.list(patientID: ada.id, from: 0, to: 10).count, 0)
        XCTAssertEqual(try repo.add(patientID: ada.id, type: "levels", data: "{}", time: 1).data, "{}")
    }

    // MARK: Concurrency

    func testTwoConnectionsWritingConcurrentlyBothSucceed() throws {
        let key = try SecretBytes.random(count: 32)
        let patientID: Int64
        do {
            let db = try vault.openDatabase(key: key, create: true)
            patientID = try addPatient(db, "Ada", "Lovelace").id
        }
        let path = dbPath
        let perWorker = 60
        let failures = Collector()
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            do {
                // Each worker has its own connection, as a separate process would.
                let db = try Database.open(path: path, key: key)
                let entries = EntryRepository(db)
                for i in 0..<perWorker {
                    try db.transaction {
                        // Read then write inside one transaction: needs the write lock from the start.
                        let before = try entries.count(patientID: patientID)
                        try entries.add(patientID: patientID, content: EntryContent(
                            type: .observation, description: "worker \(worker) #\(i)", valueNumber: Double(before)))
                        try AuditLog(db).record("test write", subject: "worker \(worker)")
                        let after = try entries.count(patientID: patientID)
                        if after != before + 1 { failures.add("worker \(worker) #\(i): count went \(before) → \(after) inside a transaction") }
                    }
                }
            } catch {
                failures.add("worker \(worker): \(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
        let db = try vault.openDatabase(key: key)
        XCTAssertEqual(try EntryRepository(db).count(patientID: patientID), 2 * perWorker)
        XCTAssertEqual(try AuditLog(db).count(), 2 * perWorker)
        // Each transaction saw a distinct count: writes were serialised, none lost.
        let seen = try db.query("SELECT value_number FROM entries ORDER BY id") { Int($0.double(0)!) }
        XCTAssertEqual(seen, Array(0..<(2 * perWorker)))
        XCTAssertEqual(try db.integrityProblems(), [])
    }

    // MARK: Damage

    /// A closed, checkpointed vault database with enough rows to span many pages.
    private func populatedClosedDatabase() throws -> (key: SecretBytes, patientID: Int64) {
        let key = try SecretBytes.random(count: 32)
        let db = try vault.openDatabase(key: key, create: true)
        let patientID = try addPatient(db, "Ada", "Lovelace").id
        let repo = EntryRepository(db)
        try db.transaction {
            for i in 0..<200 {
                try repo.add(patientID: patientID, content: EntryContent(
                    type: .result, description: "result \(i) " + String(repeating: "x", count: 300),
                    date: ClinicalTime(epoch: Int64(1_300_000_000 + i * 86_400)), valueNumber: Double(i)))
            }
        }
        XCTAssertEqual(try db.integrityProblems(), [])
        _ = try db.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) }
        return (key, patientID)
    }

    /// The schema object (type, name, table) whose root is page `page`.
    private func objectWithRootPage(_ page: Int, key: SecretBytes) throws -> (type: String, name: String, table: String)? {
        let db = try Database.open(path: dbPath, key: key)
        return try db.query("SELECT type, name, tbl_name FROM sqlite_schema WHERE rootpage = ?", [page]) {
            ($0.string(0)!, $0.string(1)!, $0.string(2)!)
        }.first
    }

    private func flipByte(at offset: Int) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: dbPath))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try XCTUnwrap(try handle.read(upToCount: 1)).first!
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: [byte ^ 0x01])
    }

    /// Asserts that the integrity check reports damage: a non-empty list, or a thrown integrity failure.
    private func assertIntegrityCheckReportsDamage(key: SecretBytes, file: StaticString = #filePath, line: UInt = #line) throws {
        let db = try vault.openDatabase(key: key)
        do {
            let problems = try db.integrityProblems()
            XCTAssertFalse(problems.isEmpty, "integrityProblems() found nothing wrong", file: file, line: line)
        } catch let error as DatabaseError {
            XCTAssertTrue(error.isIntegrityFailure,
                          "integrityProblems() threw \(error), which is not an integrity failure (exit 7), instead of reporting the damage",
                          file: file, line: line)
        }
    }

    func testFlippedByteInPageThreeIsReportedByReadingAndIntegrityCheckNotACrash() throws {
        let (key, patientID) = try populatedClosedDatabase()
        XCTAssertEqual(fileBytes(dbPath + "-wal")?.count ?? 0, 0, "the WAL should be empty after a TRUNCATE checkpoint and close")
        XCTAssertGreaterThan(fileBytes(dbPath)?.count ?? 0, 4096 * 4)
        let owner = try XCTUnwrap(try objectWithRootPage(3, key: key), "no schema object is rooted at page 3")
        try flipByte(at: 4096 * 2 + 1000)

        // Reading the data on page 3 fails as an integrity failure.
        do {
            let db = try vault.openDatabase(key: key)
            let read = owner.type == "index"
                ? "SELECT count(*) FROM \"\(owner.table)\" INDEXED BY \"\(owner.name)\""
                : "SELECT * FROM \"\(owner.name)\" NOT INDEXED"
            XCTAssertThrowsDatabaseError(try db.query(read) { $0.columnCount }, where: \.isIntegrityFailure,
                                         "an integrity failure reading \(owner.type) \(owner.name) on page 3")
            // Data on other pages stays readable.
            XCTAssertEqual(try EntryRepository(db).list(patientID: patientID).count, 200)
        }
        try assertIntegrityCheckReportsDamage(key: key)
    }

    func testFlippedByteInATablesRootPageMakesReadingItAnIntegrityFailure() throws {
        let (key, patientID) = try populatedClosedDatabase()
        let rootPage: Int64
        do {
            let db = try Database.open(path: dbPath, key: key)
            rootPage = try XCTUnwrap(try db.scalarInt("SELECT rootpage FROM sqlite_schema WHERE name = 'entries'"))
        }
        XCTAssertGreaterThan(rootPage, 1)
        try flipByte(at: Int(rootPage - 1) * 4096 + 1000)
        do {
            let db = try vault.openDatabase(key: key)
            XCTAssertThrowsDatabaseError(try EntryRepository(db).list(patientID: patientID), where: \.isIntegrityFailure,
                                         "an integrity failure listing entries")
            XCTAssertThrowsDatabaseError(try db.scalarInt("SELECT sum(length(description)) FROM entries NOT INDEXED"),
                                         where: \.isIntegrityFailure, "an integrity failure scanning the entries table")
            // The patients table is elsewhere and still reads.
            XCTAssertEqual(try PatientRepository(db).all().map(\.displayName), ["Ada Lovelace"])
        }
        try assertIntegrityCheckReportsDamage(key: key)
    }
}

/// hreader refuses SQLCipher older than 4.5 (Debian 12's main archive has 3.4.1) and any plain SQLite.
final class CipherVersionTests: XCTestCase {
    func testOldOrMissingSQLCipherIsRefused() {
        XCTAssertThrowsError(try Database.checkCipherVersion("3.4.1")) { XCTAssertEqual($0 as? Database.OpenFailure, .cipherTooOld("3.4.1")) }
        XCTAssertThrowsError(try Database.checkCipherVersion("4.4.3 community"))
        XCTAssertThrowsError(try Database.checkCipherVersion(nil)) { XCTAssertEqual($0 as? Database.OpenFailure, .cipherMissing) }
        XCTAssertNoThrow(try Database.checkCipherVersion("4.5.0 community"))
        XCTAssertNoThrow(try Database.checkCipherVersion("4.6.1 community"))
        XCTAssertNoThrow(try Database.checkCipherVersion("5.0.0"))
    }

    func testTheLinkedLibraryIsSQLCipherFourFiveOrNewer() throws {
        let version = try XCTUnwrap(Database.libraryCipherVersion(), "the linked SQLite is not SQLCipher")
        XCTAssertNoThrow(try Database.checkCipherVersion(version))
    }
}
