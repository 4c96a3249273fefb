import Foundation
import HReaderCrypto
import XCTest
@testable import HReaderStore

/// hreader's SQLCipher provider (CSQLCipher's PageCrypto.h) writes and reads the same pages as
/// SQLCipher's own: a database written by either opens, reads and passes its checks with the other,
/// and a changed byte is still refused. (Each test runs in a process of its own, as `make test` runs
/// them: the choice is the process's.)
final class PageCryptoTests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("page-crypto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        Database.usePageCrypto(.kept)
        try? FileManager.default.removeItem(at: root)
    }

    /// SQLCipher 4.5 and 4.6 are the versions whose provider hreader knows; with others its own stays.
    var knownVersion: Bool {
        guard let version = Database.libraryCipherVersion() else { return false }
        return version.hasPrefix("4.5.") || version.hasPrefix("4.6.")
    }

    func write(_ path: String, key: SecretBytes, rows: Range<Int>, create: Bool) throws {
        let db = try Database.open(path: path, key: key, create: create)
        try db.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        try db.execute("BEGIN")
        for row in rows {
            try db.execute("INSERT INTO t (id, text) VALUES (?, ?)", [Int64(row), "row \(row) " + String(repeating: "x", count: row % 200)])
        }
        try db.execute("COMMIT")
    }

    func check(_ path: String, key: SecretBytes, rows: Int) throws {
        let db = try Database.open(path: path, key: key)
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM t"), Int64(rows))
        XCTAssertEqual(try db.scalarString("SELECT text FROM t WHERE id = 777"), "row 777 " + String(repeating: "x", count: 777 % 200))
        XCTAssertEqual(try db.integrityProblems(), [])
    }

    func testEitherProviderReadsWhatTheOtherWrote() throws {
        let key = try SecretBytes.random(count: 32)
        let path = root.appendingPathComponent("v.db").path
        XCTAssertFalse(Database.usePageCrypto(.sqlcipher))
        try write(path, key: key, rows: 0..<5_000, create: true)

        XCTAssertEqual(Database.usePageCrypto(.kept), knownVersion, "hreader's provider is in place on SQLCipher 4.5/4.6")
        try check(path, key: key, rows: 5_000)
        try write(path, key: key, rows: 5_000..<10_000, create: false)
        try check(path, key: key, rows: 10_000)

        Database.usePageCrypto(.sqlcipher)
        try check(path, key: key, rows: 10_000)
        // A snapshot (SQLite's backup into a keyed file) written with each reads with the other.
        let snapshot = root.appendingPathComponent("s.db").path
        try Database.open(path: path, key: key).writeSnapshot(to: snapshot, key: key)
        Database.usePageCrypto(.kept)
        try check(snapshot, key: key, rows: 10_000)
    }

    /// SQLCipher frees its mutexes and forgets its provider when its last keyed connection closes; a
    /// provider registered after that used freed mutexes (a test hung on one once). hreader keeps one
    /// keyed connection of its own open, so SQLCipher stays active and the provider can be chosen
    /// again between connections.
    func testTheProviderCanBeChosenAgainAfterEveryConnectionHasClosed() throws {
        try XCTSkipUnless(knownVersion, "SQLCipher's own provider is in use with this version")
        let key = try SecretBytes.random(count: 32)
        let path = root.appendingPathComponent("v.db").path
        try write(path, key: key, rows: 0..<100, create: true)   // opened and closed: no keyed connection of the test's is left
        XCTAssertTrue(Database.pageCryptoProviderRegistered, "SQLCipher still active with every connection of the test's closed")
        for choice in [Database.PageCrypto.sqlcipher, .kept, .sqlcipher, .kept] {
            XCTAssertEqual(Database.usePageCrypto(choice), choice == .kept && knownVersion)
            XCTAssertEqual(try Database.open(path: path, key: key).scalarInt("SELECT count(*) FROM t"), 100)
        }
    }

    func testAChangedByteIsRefusedAndAWrongKeyTooWithHReadersProvider() throws {
        try XCTSkipUnless(knownVersion, "SQLCipher's own provider is in use with this version")
        XCTAssertTrue(Database.usePageCrypto(.kept))
        let key = try SecretBytes.random(count: 32)
        let path = root.appendingPathComponent("v.db").path
        try write(path, key: key, rows: 0..<5_000, create: true)
        XCTAssertThrowsError(try Database.open(path: path, key: try SecretBytes.random(count: 32))) {
            XCTAssertEqual($0 as? Database.OpenFailure, .notADatabaseUnderThisKey)
        }

        // One byte of a page in the middle of the table.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let offset: UInt64 = 4096 * 20 + 100
        try handle.seek(toOffset: offset)
        let byte = try handle.read(upToCount: 1)![0]
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [byte ^ 0x01])
        try handle.close()
        let db = try Database.open(path: path, key: key)
        XCTAssertThrowsError(try db.scalarInt("SELECT sum(length(text)) FROM t"))
        XCTAssertFalse(try db.integrityProblems().isEmpty)
    }
}
