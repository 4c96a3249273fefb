import Foundation
import XCTest
@testable import HReaderRecords

// Property lists read without Foundation: XML and binary plists give the same values (binary ones
// written by Foundation, the reference writer), and damaged or hostile files are refused with a
// message naming what is wrong, never a trap, a hang or a huge tree.

private let sampleXML = #"""
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<!-- an applet list, as hReader's -->
<array>
  <dict>
    <key>identifier</key><string>org.example.sample</string>
    <key>display_name</key><string>Tom &amp; Jerry &lt;3 &#x1F600; <![CDATA[<raw>]]></string>
    <key>spaces</key><string>  kept as written
</string>
    <key>empty</key><string/>
    <key>small</key><integer>7</integer>
    <key>negative</key><integer>-300000</integer>
    <key>large</key><integer>9223372036854775807</integer>
    <key>smallest</key><integer>-9223372036854775808</integer>
    <key>hex</key><integer>0x1F</integer>
    <key>real</key><real>72.25</real>
    <key>tiny</key><real>-1.5e-7</real>
    <key>on</key><true/>
    <key>off</key><false/>
    <key>when</key><date>2011-03-04T05:06:07Z</date>
    <key>bytes</key><data>
      AAEC
      /w==
    </data>
    <key>nested</key><array><array/><dict/><string>deep</string></array>
    <key>long</key><array>
      <integer>0</integer><integer>1</integer><integer>2</integer><integer>3</integer><integer>4</integer>
      <integer>5</integer><integer>6</integer><integer>7</integer><integer>8</integer><integer>9</integer>
      <integer>10</integer><integer>11</integer><integer>12</integer><integer>13</integer><integer>14</integer>
      <integer>15</integer><integer>16</integer>
    </array>
  </dict>
</array>
</plist>
"""#

private let sampleValue = PropertyList.array([.dictionary([
    "identifier": .string("org.example.sample"),
    "display_name": .string("Tom & Jerry <3 😀 <raw>"),
    "spaces": .string("  kept as written\n"),
    "empty": .string(""),
    "small": .integer(7),
    "negative": .integer(-300_000),
    "large": .integer(.max),
    "smallest": .integer(.min),
    "hex": .integer(31),
    "real": .real(72.25),
    "tiny": .real(-1.5e-7),
    "on": .bool(true),
    "off": .bool(false),
    // 2011-03-04T05:06:07Z is 1299215167 s after 1970.
    "when": .date(1_299_215_167 - 978_307_200),
    "bytes": .data([0, 1, 2, 255]),
    "nested": .array([.array([]), .dictionary([:]), .string("deep")]),
    "long": .array((0...16).map { .integer(Int64($0)) }),
])])

final class PropertyListTests: XCTestCase {
    func read(_ text: String) throws -> PropertyList { try PropertyList.read(Data(text.utf8)) }

    func assertRefused(_ data: Data, mentions expected: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try PropertyList.read(data), file: file, line: line) { error in
            guard case RecordsError.malformed(let message) = error else {
                return XCTFail("not a RecordsError: \(error)", file: file, line: line)
            }
            for text in expected {
                XCTAssertTrue(message.contains(text), "expected '\(text)' in: \(message)", file: file, line: line)
            }
        }
    }

    func assertRefused(_ text: String, mentions expected: [String], file: StaticString = #filePath, line: UInt = #line) {
        assertRefused(Data(text.utf8), mentions: expected, file: file, line: line)
    }

    func plist(_ body: String) -> String { "<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\n\(body)\n</plist>" }

    // MARK: XML

    func testXMLPlistReadsEveryTypeWithEntitiesCDATAAndWhitespaceAsWritten() throws {
        XCTAssertEqual(try read(sampleXML), sampleValue)
        XCTAssertEqual(PropertyList.format(of: Data(sampleXML.utf8)), .xml)
    }

    func testABareRootValueAndUTF16DocumentsAreRead() throws {
        XCTAssertEqual(try read("<array><string>a</string></array>"), .array([.string("a")]))
        let utf16 = "<?xml version=\"1.0\" encoding=\"UTF-16\"?><plist><string>é 😀</string></plist>"
        var bytes: [UInt8] = [0xFF, 0xFE]
        for unit in utf16.utf16 { bytes += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        XCTAssertEqual(try PropertyList.read(Data(bytes)), .string("é 😀"))
    }

    func testRealsAsAppleWritesThemIncludingNaNAndInfinities() throws {
        XCTAssertEqual(try read(plist("<real>+infinity</real>")), .real(.infinity))
        XCTAssertEqual(try read(plist("<real>-inf</real>")), .real(-.infinity))
        guard case .real(let nan) = try read(plist("<real>nan</real>")) else { return XCTFail() }
        XCTAssertTrue(nan.isNaN)
        XCTAssertEqual(try read(plist("<real> 3 </real>")), .real(3))
    }

    func testMalformedXMLPlistsAreRefusedNamingTheProblemAndLine() {
        let cases: [(String, [String])] = [
            ("<plist><array><dict><key>identifier</key>", ["not well-formed"]),
            (plist("<dict><key>a</key><string>1</string>\n<key>a</key><string>2</string></dict>"), ["key 'a' twice", "line 4"]),
            (plist("<dict><key>a</key></dict>"), ["key 'a' without a value"]),
            (plist("<dict><string>no key</string></dict>"), ["needs a <key>"]),
            (plist("<dict><key>a</key><key>b</key><true/></dict>"), ["two <key>s in a row"]),
            (plist("<array><key>k</key></array>"), ["<key> outside a <dict>"]),
            (plist("<array>loose text</array>"), ["text outside a value"]),
            (plist("<array><set/></array>"), ["<set>", "do not have"]),
            (plist("<string>a<b/>c</string>"), ["element <b> inside <string>"]),
            (plist("<integer>12abc</integer>"), ["<integer>12abc</integer>", "not an integer"]),
            (plist("<integer>9223372036854775808</integer>"), ["64 bits"]),
            (plist("<integer>-9223372036854775809</integer>"), ["64 bits"]),
            (plist("<integer>0x</integer>"), ["not an integer"]),
            (plist("<real>0x1p3</real>"), ["not a number"]),
            (plist("<date>2011-02-30T00:00:00Z</date>"), ["not a date"]),
            (plist("<date>2011-03-04 05:06:07</date>"), ["not a date"]),
            (plist("<data>not base64!</data>"), ["not base64"]),
            (plist("<true>yes</true>"), ["not empty"]),
            (plist(""), ["<plist> holds no value"]),
            ("<plist/>", ["<plist> holds no value"]),
            (plist("<string>a</string><string>b</string>"), ["more than one value"]),
            (plist("<array>" + String(repeating: "<array>", count: 33) + String(repeating: "</array>", count: 34)), ["deeper than 32"]),
            ("( { identifier = org.example.d; } )", ["not an XML or binary property list"]),
            ("", ["not an XML or binary property list"]),
        ]
        for (text, expected) in cases { assertRefused(text, mentions: expected) }
    }

    /// Entities: a DOCTYPE that declares any (a "billion laughs" file) is refused outright, as is a
    /// reference to one that is not declared. Before this reader, Foundation expanded none either,
    /// but the rule is now ours and the same as the Apple Health reader's.
    func testDoctypeDeclarationsAndEntityReferencesAreRefused() {
        let laughs = """
        <?xml version="1.0"?>
        <!DOCTYPE plist [
          <!ENTITY a "ha">
          <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
          <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
        ]>
        <plist><string>&c;</string></plist>
        """
        assertRefused(laughs, mentions: ["DOCTYPE"])
        assertRefused("<?xml version=\"1.0\"?>\n<!DOCTYPE plist [ <!ELEMENT plist ANY> ]>\n<plist><true/></plist>", mentions: ["DOCTYPE"])
        // In UTF-16 the bytes cannot be scanned: libxml2's DOCTYPE node tells instead.
        let utf16 = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<!DOCTYPE plist [ <!ELEMENT plist ANY> ]>\n<plist><true/></plist>"
        assertRefused(Data([0xFE, 0xFF] + utf16.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }), mentions: ["DOCTYPE"])
        XCTAssertEqual(try PropertyList.read(Data(#"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "x[y].dtd"><plist><true/></plist>"#.utf8)), .bool(true))
        assertRefused(plist("<string>&undeclared;</string>"), mentions: ["not well-formed"])
        assertRefused(Data(count: PropertyList.maxBytes + 1), mentions: ["more than the \(PropertyList.maxBytes)"])
    }

    // MARK: Binary

    /// Foundation, the reference writer, writes the sample as a binary plist; it reads back equal.
    func testBinaryPlistsFoundationWritesReadAsTheSameValues() throws {
        let object = try PropertyListSerialization.propertyList(from: Data(sampleXML.utf8), options: [], format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        XCTAssertEqual(PropertyList.format(of: binary), .binary)
        XCTAssertEqual(try PropertyList.read(binary), sampleValue)

        // Integers of every width, a Float-sized real, and long strings in both encodings (counts past 15).
        let more: [String: Any] = [
            "u8": 200, "u16": 60_000, "u32": 4_000_000_000, "i64": -5_000_000_000,
            "ascii": String(repeating: "x", count: 300), "utf16": String(repeating: "é", count: 20) + "😀",
            "float": Float(1.5) as Any, "many": Array(0..<300),
        ]
        let moreBinary = try PropertyListSerialization.data(fromPropertyList: more, format: .binary, options: 0)
        guard case .dictionary(let read) = try PropertyList.read(moreBinary) else { return XCTFail("not a dictionary") }
        XCTAssertEqual(read["u8"], .integer(200))
        XCTAssertEqual(read["u16"], .integer(60_000))
        XCTAssertEqual(read["u32"], .integer(4_000_000_000))
        XCTAssertEqual(read["i64"], .integer(-5_000_000_000))
        XCTAssertEqual(read["ascii"], .string(String(repeating: "x", count: 300)))
        XCTAssertEqual(read["utf16"], .string(String(repeating: "é", count: 20) + "😀"))
        XCTAssertEqual(read["float"], .real(1.5))
        XCTAssertEqual(read["many"], .array((0..<300).map { .integer(Int64($0)) }))
    }

    /// A binary plist built by hand: `objects` in order, the last one's index as the top object.
    func binary(_ objects: [[UInt8]], top: Int? = nil, referenceSize: UInt8 = 1, offsetSize: UInt8 = 1) -> Data {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects { offsets.append(bytes.count); bytes += object }
        let table = bytes.count
        for offset in offsets { bytes += (0..<Int(offsetSize)).reversed().map { UInt8(truncatingIfNeeded: offset >> (8 * $0)) } }
        func eight(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        bytes += [0, 0, 0, 0, 0, 0, offsetSize, referenceSize] + eight(objects.count) + eight(top ?? objects.count - 1) + eight(table)
        return Data(bytes)
    }

    func testHandBuiltBinaryPlistsWithWideIntegersReadAsFoundationWritesThem() throws {
        // A 16-byte integer (how an unsigned value is written) within Int64, and a negative one.
        XCTAssertEqual(try PropertyList.read(binary([[0x14] + [UInt8](repeating: 0, count: 15) + [42]])), .integer(42))
        XCTAssertEqual(try PropertyList.read(binary([[0x14] + [UInt8](repeating: 0xFF, count: 16)])), .integer(-1))
        // One object shared by two places is read twice (a tree, not a cycle).
        XCTAssertEqual(try PropertyList.read(binary([[0x51, 0x61], [0xA2, 0, 0]])), .array([.string("a"), .string("a")]))
    }

    /// A binary plist that refers to one 40 KB string 100,000 times (a 141 KB file) stood for 4 GB
    /// of strings once read, within the 100,000-value limit: strings and data are counted, each
    /// time they are referred to, against 16 MiB.
    func testOneLongStringReferredToManyTimesIsRefusedByItsBytes() throws {
        let hostile = Self.manyReferences(to: 40 << 10, count: 100_000)
        XCTAssertLessThan(hostile.count, 150_000)
        assertRefused(hostile, mentions: ["more than 16 MiB of strings and data"])
        // As data too. (An XML plist is counted the same way, but cannot pass the limit: it holds
        // each value's bytes once, and the file is at most 4 MiB.)
        var asData = [UInt8](hostile)
        asData[8] = 0x4F
        assertRefused(Data(asData), mentions: ["more than 16 MiB of strings and data"])
        // Fewer references are read.
        guard case .array(let items) = try PropertyList.read(Self.manyReferences(to: 40 << 10, count: 100)) else { return XCTFail("not an array") }
        XCTAssertEqual(items.count, 100)
    }

    /// A binary plist of one ASCII string of `bytes` bytes and an array that refers to it `count` times.
    static func manyReferences(to bytes: Int, count: Int) -> Data {
        func be(_ value: Int, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var file = Array("bplist00".utf8)
        let string = [0x5F, 0x12] + be(bytes, 4) + [UInt8](repeating: UInt8(ascii: "x"), count: bytes)
        let array = [0xAF, 0x12] + be(count, 4) + [UInt8](repeating: 0, count: count)
        file += string
        file += array
        let table = file.count
        file += be(8, 4) + be(8 + string.count, 4)
        file += [0, 0, 0, 0, 0, 0, 4, 1] + be(2, 8) + be(1, 8) + be(table, 8)
        return Data(file)
    }

    func testDamagedOrHostileBinaryPlistsAreRefused() {
        let cases: [(Data, [String])] = [
            (Data("bplist00".utf8), ["too short"]),
            // An array that contains itself.
            (binary([[0xA1, 0]]), ["contains itself"]),
            // Two arrays that contain each other.
            (binary([[0xA1, 1], [0xA1, 0]]), ["contains itself"]),
            // 12 levels of 10 references to the level below: 10^12 values from a 150-byte file.
            (binary([[0x09]] + (1...12).map { [0xAA] + [UInt8](repeating: UInt8($0 - 1), count: 10) }), ["more than 100000 values"]),
            (binary([[0xC1, 1], [0x09]], top: 0), ["set"]),
            (binary([[0x80, 0x01]]), ["UID", "keyed archive"]),
            (binary([[0x00]]), ["null or fill"]),
            (binary([[0x15, 0]]), ["integer of 32 bytes"]),
            (binary([[0x14] + [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 8)]), ["beyond 64 bits"]),
            (binary([[0x24, 0, 0]]), ["real of an unknown size"]),
            (binary([[0x5F, 0x10, 5, 0x61]]), ["runs past the objects"]),
            (binary([[0x5F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]]), ["count larger than the file"]),
            (binary([[0x5F, 0x51, 0x61]]), ["count that is not an integer"]),
            (binary([[0x51, 0xC1]]), ["ASCII string with other bytes"]),
            (binary([[0x61, 0xD8, 0x00]]), ["not valid UTF-16"]),
            (binary([[0xA1, 7]]), ["refers to an object that does not exist"]),
            (binary([[0x09], [0xD1, 0, 0]]), ["key that is not a string"]),
            (binary([[0x51, 0x61], [0x09], [0xD2, 0, 0, 1, 1]]), ["key 'a' twice"]),
            (binary([[0x09]], top: 1), ["top object"]),
            (binary([[0x09]], offsetSize: 0), ["offsets of 0"]),
            (binary([[0x7C]]), ["unknown marker 0x7c"]),
            (binary((0..<34).map { [0xA1, UInt8($0 + 1)] } + [[0x09]], top: 0), ["deeper than 32"]),
        ]
        for (data, expected) in cases { assertRefused(data, mentions: expected) }

        // Offsets pointing into the header, the offset table and past the end.
        var intoHeader = [UInt8](binary([[0x09]]))
        intoHeader[9] = 2
        assertRefused(Data(intoHeader), mentions: ["offset outside the objects"])
        var tableTooFar = [UInt8](binary([[0x09]]))
        tableTooFar[tableTooFar.count - 1] = 0xF0
        assertRefused(Data(tableTooFar), mentions: ["offset table does not fit"])
        var hugeCount = [UInt8](binary([[0x09]]))
        hugeCount[hugeCount.count - 32 + 8] = 0x7F
        assertRefused(Data(hugeCount), mentions: ["offset table does not fit"])
    }
}
