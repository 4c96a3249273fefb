import Foundation
import HReaderCrypto
import HReaderStore

/// Reading pages: hreader's SQLCipher provider (OpenSSL contexts kept per connection) against
/// SQLCipher's own (fetched and keyed for every page), in one process on the same file. Each pass
/// opens a new connection, so every page is read, checked and decrypted; the two alternate, five
/// passes each, and the medians are compared.
func runPageCryptoBenchmarks(scratch: URL) throws {
    say("\n== page crypto: reading every page of a database of a million rows, hreader's provider against SQLCipher's ==")
    let path = scratch.appendingPathComponent("page-crypto.db").path
    defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
    let key = try SecretBytes.random(count: 32)
    let kept = Database.usePageCrypto(.kept)
    do {
        let db = try Database.open(path: path, key: key, create: true)
        try db.execute("CREATE TABLE samples (series INTEGER, start INTEGER, value REAL, note TEXT, PRIMARY KEY (series, start)) WITHOUT ROWID")
        try db.execute("BEGIN")
        for i in 0..<1_000_000 {
            try db.execute("INSERT INTO samples VALUES (?, ?, ?, ?)", [Int64(i % 7), Int64(i), Double(i % 180) + 0.5, "context \(i % 3)"])
        }
        try db.execute("COMMIT")
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
    let pages = try Database.open(path: path, key: key).scalarInt("PRAGMA page_count") ?? 0
    var times: [Database.PageCrypto: [Double]] = [.kept: [], .sqlcipher: []]
    for _ in 0..<5 {
        for choice in [Database.PageCrypto.sqlcipher, .kept] {
            Database.usePageCrypto(choice)
            times[choice]!.append(try seconds {
                let db = try Database.open(path: path, key: key)
                _ = try db.scalarInt("SELECT count(*) FROM samples WHERE value > 1000 OR note = 'none'")
            })
        }
    }
    Database.usePageCrypto(.kept)
    let own = median(times[.sqlcipher]!), ours = median(times[.kept]!)
    row("  SQLCipher's provider (baseline)", ms(own), "\(pages) pages (\(pages * 4096 >> 20) MB), \(String(format: "%.1f µs a page", own / Double(max(pages, 1)) * 1e6))")
    if kept {
        row("  hreader's provider", ms(ours), String(format: "%.2fx the baseline (%.1f µs a page)", ours / own, ours / Double(max(pages, 1)) * 1e6))
    } else {
        row("  hreader's provider", "n/a", "not registered: SQLCipher \(Database.libraryCipherVersion() ?? "?") is not 4.5/4.6")
    }
}
