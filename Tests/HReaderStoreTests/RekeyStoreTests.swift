import Foundation
import XCTest
import HReaderCrypto
@testable import HReaderStore
#if canImport(Glibc)
import Glibc
#endif

/// Re-encrypting vault.db under a new data key (HReaderStore's half of `hreader rekey`), on real
/// SQLCipher files in WAL mode.
final class RekeyStoreTests: XCTestCase {
    var root: URL!
    var vault: Vault { Vault(root: root) }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-rekey-\(UUID().uuidString)")
        try vault.createDirectory()
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    /// A vault database (WAL mode) with the schema and rows in every kind of column, and gaps in the AUTOINCREMENT.
    func makeDatabase(key: SecretBytes) throws {
        do {
            let db = try vault.createNewDatabase(key: key)
            try db.execute("CREATE TABLE extra (id INTEGER PRIMARY KEY AUTOINCREMENT, t TEXT, b BLOB, r REAL)")
            try db.transaction {
                for i in 0..<2000 {
                    try db.execute("INSERT INTO extra (t, b, r) VALUES (?, ?, ?)", ["row \(i) canary-text", [UInt8](repeating: UInt8(i & 0xff), count: 300), Double(i) / 3])
                }
                try db.execute("DELETE FROM extra WHERE id % 7 = 0")
            }
        }
        try vault.commitNewDatabase()
        let db = try vault.openDatabase(key: key)
        try db.execute("INSERT INTO extra (t) VALUES ('written in WAL mode')")
    }

    /// Every table's rows, the schema, user_version and sqlite_sequence, as text.
    func dump(_ db: Database) throws -> String {
        var out = ["user_version \(try db.scalarInt("PRAGMA user_version") ?? -1)"]
        out += try db.query("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_schema ORDER BY name") { $0.string(0) ?? "" }
        let tables = try db.query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") { $0.string(0)! }
        for table in tables {
            let columns = try db.query("SELECT name FROM pragma_table_info(?)", [table]) { $0.string(0)! }
            guard !columns.isEmpty else { continue }
            let expr = columns.map { "quote(\"\($0)\")" }.joined(separator: " || '|' || ")
            out += try db.query("SELECT \(expr) FROM \"\(table)\"") { "\(table): " + ($0.string(0) ?? "") }.sorted()
        }
        return out.joined(separator: "\n")
    }

    func testExportRekeyMovesEveryRowToTheNewKeyAndTheOldKeyOpensNothing() throws {
        let old = try SecretBytes.random(count: 32), new = try SecretBytes.random(count: 32)
        try makeDatabase(key: old)
        let before = try dump(try vault.openDatabase(key: old))

        let rekey = try vault.beginDatabaseRekey(currentKey: old)
        try rekey.commit(newKey: new)

        XCTAssertThrowsError(try Database.open(path: vault.databaseURL.path, key: old)) {
            XCTAssertEqual($0 as? Database.OpenFailure, .notADatabaseUnderThisKey)
        }
        let db = try vault.openDatabase(key: new)
        XCTAssertEqual(try dump(db), before)
        XCTAssertEqual(try db.integrityProblems(), [])
        XCTAssertEqual(try db.scalarString("PRAGMA journal_mode"), "wal")
        let names = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
        XCTAssertFalse(names.contains { $0.hasPrefix("vault.db.rekey") || $0 == "vault.db-journal" }, "\(names)")
        // The new file is encrypted: no plaintext header or row text.
        let bytes = try Data(contentsOf: vault.databaseURL)
        XCTAssertNil(bytes.range(of: Data("SQLite format 3".utf8)))
        XCTAssertNil(bytes.range(of: Data("canary-text".utf8)))
    }

    func testRekeyIsRefusedWhileAnotherConnectionHasTheDatabaseOpen() throws {
        let old = try SecretBytes.random(count: 32)
        try makeDatabase(key: old)
        let other = try vault.openDatabase(key: old)
        XCTAssertThrowsError(try vault.beginDatabaseRekey(currentKey: old)) {
            XCTAssertEqual($0 as? Vault.Failure, .inUse(root.path))
        }
        _ = try other.scalarInt("SELECT count(*) FROM extra")
        // Nothing changed: the old key still opens it and no leftover is there.
        XCTAssertNoThrow(try vault.openDatabase(key: old))
        XCTAssertFalse(FileManager.default.fileExists(atPath: vault.rekeyDatabaseURL.path))
    }

    func testAConnectionThatWaitedOnTheOldFileIsToldItWasReplaced() throws {
        let old = try SecretBytes.random(count: 32), new = try SecretBytes.random(count: 32)
        try makeDatabase(key: old)
        let rekey = try vault.beginDatabaseRekey(currentKey: old)
        let path = vault.databaseURL.path
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Error?
        let thread = Thread {
            started.signal()
            do { _ = try Database.open(path: path, key: old) } catch { outcome = error }
        }
        thread.start()
        started.wait()
        usleep(300_000)   // it waits on the exclusive lock of the old file
        try rekey.commit(newKey: new)
        while thread.isExecuting { usleep(10_000) }
        usleep(50_000)
        XCTAssertEqual(outcome as? Database.OpenFailure, .fileReplaced)
        XCTAssertNoThrow(try vault.openDatabase(key: new))
    }

    /// What the brief asked to check: SQLCipher 4.6's own `PRAGMA rekey` on a WAL database. It works
    /// once the WAL is checkpointed; hreader still exports to a new file (see DatabaseRekey), whose
    /// crash behaviour does not depend on journal recovery across two keys.
    func testPragmaRekeyInWALModeAfterACheckpoint() throws {
        let old = try SecretBytes.random(count: 32)
        try makeDatabase(key: old)
        let before = try dump(try vault.openDatabase(key: old))
        do {
            let db = try vault.openDatabase(key: old)
            _ = try db.query("PRAGMA wal_checkpoint(TRUNCATE)") { _ in () }
            try db.execute("PRAGMA rekey = \"x'\(String(repeating: "ab", count: 32))'\"")
        }
        let newKey = SecretBytes(count: 32) { for i in 0..<32 { $0[i] = 0xab } }
        let db = try vault.openDatabase(key: newKey)
        XCTAssertEqual(try dump(db), before)
        XCTAssertEqual(try db.integrityProblems(), [])
        XCTAssertThrowsError(try Database.open(path: vault.databaseURL.path, key: old))
    }
}
