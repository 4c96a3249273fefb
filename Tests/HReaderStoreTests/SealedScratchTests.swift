import Foundation
import XCTest
@testable import HReaderStore

/// A foreign database copied sealed (AES-256-CTR under the process's key) and read through the
/// sealed VFS: the same rows as the plain file, no plaintext on disk, the file gone once open.
final class SealedScratchTests: XCTestCase {
    var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("sealed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: root) }

    /// A plain SQLite database in WAL mode (as Android writes them), of a few hundred pages, by Python's sqlite3.
    func plainDatabase(rows: Int) throws -> [UInt8] {
        let url = root.appendingPathComponent("plain.db")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE steps_record_table (row_id INTEGER PRIMARY KEY, app TEXT, count INTEGER)")
            db.executemany("INSERT INTO steps_record_table (app, count) VALUES (?, ?)", [("Qwzx Marker Pedometer", i) for i in range(int(sys.argv[2]))])
            db.commit()
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()
            """, url.path, String(rows)]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        defer { try? FileManager.default.removeItem(at: url) }
        return [UInt8](try Data(contentsOf: url))
    }

    func testASealedCopyReadsAsThePlainDatabaseAndLeavesNothing() throws {
        let bytes = try plainDatabase(rows: 20_000)
        XCTAssertEqual(bytes[18], 2, "written in WAL mode")
        let scratch = try SealedScratch(in: root)
        // Chunks of odd sizes: the key stream continues across them.
        var offset = 0, size = 1
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            try bytes[offset..<end].withUnsafeBytes { try scratch.write($0) }
            offset = end
            size = size * 3 + 7
        }
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: scratch.path))
        XCTAssertEqual(onDisk.count, bytes.count)
        XCTAssertNil(onDisk.range(of: Data("Qwzx Marker".utf8)), "sealed: no plaintext on disk")
        XCTAssertNil(onDisk.range(of: Data("SQLite format 3".utf8)))

        let db = try Database.openForeign(sealed: scratch)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path), [], "removed once open")
        XCTAssertEqual(try db.scalarInt("SELECT count(*) FROM steps_record_table"), 20_000)
        XCTAssertEqual(try db.scalarInt("SELECT sum(count) FROM steps_record_table"), 19_999 * 20_000 / 2)
        XCTAssertEqual(try db.scalarString("SELECT app FROM steps_record_table WHERE row_id = 12345"), "Qwzx Marker Pedometer")
        // Read-only in every way.
        XCTAssertThrowsError(try db.execute("DELETE FROM steps_record_table"))
    }

    func testWhatIsNoDatabaseIsRefusedAndLeftoversAreSwept() throws {
        let scratch = try SealedScratch(in: root)
        try Array("not a database at all, however long it goes on".utf8).withUnsafeBytes { try scratch.write($0) }
        XCTAssertThrowsError(try Database.openForeign(sealed: scratch)) { error in
            XCTAssertEqual(error as? Database.ForeignFailure, .notSQLite)
        }
        // A copy a process left behind (it died: no one holds its lock) goes with the next one made.
        let left = root.appendingPathComponent(SealedScratch.prefix + "0123" + SealedScratch.suffix)
        try Data([1, 2, 3]).write(to: left)
        let next = try SealedScratch(in: root)
        XCTAssertFalse(FileManager.default.fileExists(atPath: left.path))
        XCTAssertTrue(FileManager.default.fileExists(atPath: next.path), "its own is kept")
    }
}
