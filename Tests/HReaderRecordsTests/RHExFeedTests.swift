import Foundation
import HReaderRecords
import XCTest

final class RHExFeedTests: XCTestCase {
    func testReadsIdsAsHReaderDid() throws {
        let feed = """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>Records</title><id>tag:example.invalid,2013:records</id>
              <entry><id>tag:example.invalid,2013:record/4f4e9fcb</id><title>Quinlan, Ada</title>
                <link rel="alternate" href="http://127.0.0.1:1/records/4f4e9fcb"/></entry>
              <entry><id>abc123</id><title><![CDATA[O'Brien & Sons, Bram]]></title>
                <link href="http://127.0.0.1:1/records/ignored"/></entry>
              <entry><id>plain</id><title>Solo</title></entry>
            </feed>
            """
        let entries = try RHExFeed.parse(Data(feed.utf8))
        XCTAssertEqual(entries.map(\.id), ["4f4e9fcb", "abc123", "plain"])
        XCTAssertEqual(entries[0].name.first, "Ada")
        XCTAssertEqual(entries[0].name.last, "Quinlan")
        XCTAssertEqual(entries[1].name.last, "O'Brien & Sons")
        XCTAssertEqual(entries[2].name.last, "Solo")
        XCTAssertEqual(entries[2].name.first, "")
    }

    func testEmptyFeed() throws {
        XCTAssertEqual(try RHExFeed.parse(Data(#"<feed xmlns="http://www.w3.org/2005/Atom"><title>none</title></feed>"#.utf8)), [])
    }

    func testMalformedAndNonAtomInputIsAnError() {
        XCTAssertThrowsError(try RHExFeed.parse(Data("<feed><entry><id>x</id></feed>".utf8)))
        XCTAssertThrowsError(try RHExFeed.parse(Data("<html><body>Please sign in</body></html>".utf8)))
        XCTAssertThrowsError(try RHExFeed.parse(Data("{\"not\": \"xml\"}".utf8)))
        XCTAssertThrowsError(try RHExFeed.parse(Data()))
    }

    /// A hostile feed: a DTD with attribute declarations (which crash Foundation's XMLParser on
    /// Linux), an external entity pointing at a local file, and nested entities. Nothing is read
    /// from disk and the parser neither crashes nor expands the file into a title.
    func testHostileDoctypeIsHarmless() throws {
        let secret = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-xxe-\(UUID().uuidString)")
        try "TOP-SECRET-CONTENT".write(to: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: secret) }
        let feed = """
            <?xml version="1.0"?>
            <!DOCTYPE feed [
              <!ATTLIST entry kind CDATA #REQUIRED other CDATA #IMPLIED>
              <!ENTITY xxe SYSTEM "file://\(secret.path)">
              <!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
            ]>
            <feed xmlns="http://www.w3.org/2005/Atom"><entry kind="x"><id>one</id><title>&xxe;&c;, Eve</title></entry></feed>
            """
        let entries = (try? RHExFeed.parse(Data(feed.utf8))) ?? []
        XCTAssertFalse(entries.contains { $0.title.contains("TOP-SECRET") })
    }
}
