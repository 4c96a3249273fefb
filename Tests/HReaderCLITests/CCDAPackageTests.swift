import Foundation
import TestSupport
import XCTest
import ZIPFoundation
#if canImport(Glibc)
import Glibc
#endif

/// C-CDA documents as portals hand them out packed, through the real binary: an IHE XDM zip
/// ("download my record": IHE_XDM/SUBSET01/ with METADATA.XML, the document, a stylesheet and a
/// README) and a "Blue Button" HTML page carrying the document in a script element.
final class CCDAPackageTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    /// A small C-CDA R2.1 CCD about one invented patient: one problem, one immunization.
    static func document(patient: String = "Wren", family: String = "Halvorsen", mrn: String = "XDM-1001", problem: String = "Essential hypertension") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
          <realmCode code="US"/>
          <typeId root="2.16.840.1.113883.1.3" extension="POCD_HD000040"/>
          <templateId root="2.16.840.1.113883.10.20.22.1.1" extension="2015-08-01"/>
          <templateId root="2.16.840.1.113883.10.20.22.1.2" extension="2015-08-01"/>
          <id root="2.16.840.1.113883.19.5.99999.1" extension="\(mrn)-doc"/>
          <code code="34133-9" codeSystem="2.16.840.1.113883.6.1" displayName="Summarization of Episode Note"/>
          <title>Continuity of Care Document</title>
          <effectiveTime value="20240512093000-0400"/>
          <confidentialityCode code="N" codeSystem="2.16.840.1.113883.5.25"/>
          <recordTarget><patientRole>
            <id root="2.16.840.1.113883.19.5.99999.2" extension="\(mrn)"/>
            <patient><name use="L"><given>\(patient)</given><family>\(family)</family></name>
              <administrativeGenderCode code="F" codeSystem="2.16.840.1.113883.5.1"/><birthTime value="19790611"/></patient>
          </patientRole></recordTarget>
          <author><time value="20240512093000-0400"/><assignedAuthor><id root="2.16.840.1.113883.4.6" extension="1234567893"/>
            <representedOrganization><name>Harbor View Clinic</name></representedOrganization></assignedAuthor></author>
          <custodian><assignedCustodian><representedCustodianOrganization><id root="2.16.840.1.113883.19.5.99999"/>
            <name>Harbor View Clinic</name></representedCustodianOrganization></assignedCustodian></custodian>
          <component><structuredBody>
            <component><section>
              <templateId root="2.16.840.1.113883.10.20.22.2.5.1" extension="2015-08-01"/>
              <code code="11450-4" codeSystem="2.16.840.1.113883.6.1"/><title>Problems</title>
              <text><list><item ID="p1">\(problem)</item></list></text>
              <entry typeCode="DRIV"><act classCode="ACT" moodCode="EVN">
                <templateId root="2.16.840.1.113883.10.20.22.4.3" extension="2015-08-01"/>
                <id root="ec8a6ff8-ed4b-4f7e-82c3-e98e58b45de7"/><code code="CONC" codeSystem="2.16.840.1.113883.5.6"/>
                <statusCode code="active"/><effectiveTime><low value="20180301"/></effectiveTime>
                <entryRelationship typeCode="SUBJ"><observation classCode="OBS" moodCode="EVN">
                  <templateId root="2.16.840.1.113883.10.20.22.4.4" extension="2015-08-01"/>
                  <id root="ab1791b0-5c71-11db-b0de-0800200c9a66"/>
                  <code code="55607006" codeSystem="2.16.840.1.113883.6.96" displayName="Problem"/>
                  <text><reference value="#p1"/></text>
                  <statusCode code="completed"/><effectiveTime><low value="20180301"/></effectiveTime>
                  <value xsi:type="CD" code="59621000" codeSystem="2.16.840.1.113883.6.96" displayName="\(problem)"/>
                </observation></entryRelationship>
              </act></entry>
            </section></component>
            <component><section>
              <templateId root="2.16.840.1.113883.10.20.22.2.2.1" extension="2015-08-01"/>
              <code code="11369-6" codeSystem="2.16.840.1.113883.6.1"/><title>Immunizations</title>
              <text>Influenza vaccine, 2023-10-02</text>
              <entry typeCode="DRIV"><substanceAdministration classCode="SBADM" moodCode="EVN" negationInd="false">
                <templateId root="2.16.840.1.113883.10.20.22.4.52" extension="2015-08-01"/>
                <id root="e6f1ba43-c0ed-4b9b-9f12-f435d8ad8f92"/><statusCode code="completed"/>
                <effectiveTime value="20231002"/>
                <consumable><manufacturedProduct classCode="MANU"><templateId root="2.16.840.1.113883.10.20.22.4.54" extension="2014-06-09"/>
                  <manufacturedMaterial><code code="140" codeSystem="2.16.840.1.113883.12.292"
                    displayName="Influenza, seasonal, injectable, preservative free"/></manufacturedMaterial>
                </manufacturedProduct></consumable>
              </substanceAdministration></entry>
            </section></component>
          </structuredBody></component>
        </ClinicalDocument>

        """
    }

    static func sha1(_ data: Data) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha1sum")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(data)
        try input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(40))
    }

    static func metadata(uri: String, size: Int?, hash: String?, mime: String = "text/xml") -> String {
        var slots = ""
        if let size { slots += #"<rim:Slot name="size"><rim:ValueList><rim:Value>\#(size)</rim:Value></rim:ValueList></rim:Slot>"# }
        if let hash { slots += #"<rim:Slot name="hash"><rim:ValueList><rim:Value>\#(hash)</rim:Value></rim:ValueList></rim:Slot>"# }
        return #"""
            <?xml version="1.0" encoding="UTF-8"?>
            <lcm:SubmitObjectsRequest xmlns:lcm="urn:oasis:names:tc:ebxml-regrep:xsd:lcm:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0">
              <rim:RegistryObjectList>
                <rim:ExtrinsicObject id="Document01" mimeType="\#(mime)" objectType="urn:uuid:7edca82f-054d-47f2-a032-9b2a5b5186c1">
                  \#(slots)<rim:Slot name="URI"><rim:ValueList><rim:Value>\#(uri)</rim:Value></rim:ValueList></rim:Slot>
                </rim:ExtrinsicObject>
              </rim:RegistryObjectList>
            </lcm:SubmitObjectsRequest>
            """#
    }

    /// A zip of `members` (path → bytes), as a portal's download is laid out.
    func zip(_ name: String, _ members: [(String, Data)]) throws -> String {
        let url = workDir.appendingPathComponent(name)
        let archive = try Archive(url: url, accessMode: .create)
        for (path, data) in members {
            try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                data.subdata(in: Int(position)..<(Int(position) + size))
            }
        }
        return url.path
    }

    func patients() throws -> [[String: Any]] {
        try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]] ?? []
    }

    func entries(_ patient: Any) throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "\(patient)", "--json"])))["entries"] as? [[String: Any]] ?? []
    }

    func xdmPackage(document: Data, metadata: String?) throws -> String {
        var members: [(String, Data)] = [
            ("README.TXT", Data("This package was created by Harbor View Clinic's patient portal.\n".utf8)),
            ("INDEX.HTM", Data("<html><body><a href=\"IHE_XDM/SUBSET01/DOC0001.XML\">Document</a></body></html>".utf8)),
            ("IHE_XDM/SUBSET01/DOC0001.XML", document),
            ("IHE_XDM/SUBSET01/CDA.XSL", Data("<xsl:stylesheet xmlns:xsl=\"http://www.w3.org/1999/XSL/Transform\" version=\"1.0\"/>".utf8)),
        ]
        if let metadata { members.append(("IHE_XDM/SUBSET01/METADATA.XML", Data(metadata.utf8))) }
        return try zip("download-\(UUID().uuidString.prefix(6)).zip", members)
    }

    /// The document METADATA.XML names, checked against its size and hash; never the README, the
    /// index page or the stylesheet. The same package again changes nothing.
    func testXDMPackageImportsTheDocumentItsMetadataNames() throws {
        let document = Data(Self.document().utf8)
        let package = try xdmPackage(document: document,
                                     metadata: Self.metadata(uri: "DOC0001.XML", size: document.count, hash: try Self.sha1(document)))
        let result = try ok(withPassword(["import", "--file", package]))
        XCTAssertTrue(result.stdout.contains("IHE_XDM/SUBSET01/DOC0001.XML"), result.stdout)
        let people = try patients()
        XCTAssertEqual(people.count, 1)
        XCTAssertEqual(people.first?["last_name"] as? String, "Halvorsen")
        let stored = try entries(people[0]["id"]!)
        XCTAssertTrue(stored.contains { $0["type"] as? String == "condition" && ($0["description"] as? String ?? "").contains("hypertension") }, "\(stored)")
        XCTAssertTrue(stored.contains { $0["type"] as? String == "immunization" }, "\(stored)")

        let again = try json(try ok(withPassword(["import", "--file", package, "--json"])))["summary"] as? [String: Any]
        XCTAssertEqual((again?["entries"] as? [String: Any])?["inserted"] as? Int, 0, "the same package twice adds nothing")
        XCTAssertEqual(try patients().count, 1)
    }

    /// A document changed after the package was made (its hash or size no longer what
    /// METADATA.XML says) refuses the whole package, nothing written.
    func testXDMDocumentThatDoesNotMatchItsMetadataIsRefused() throws {
        let original = Data(Self.document().utf8)
        let changed = Data(Self.document(problem: "Essential hypertenzion").utf8)
        let package = try xdmPackage(document: changed,
                                     metadata: Self.metadata(uri: "DOC0001.XML", size: original.count, hash: try Self.sha1(original)))
        let result = try hreader(withPassword(["import", "--file", package]))
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("DOC0001.XML does not match the hash"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertEqual(try patients().count, 0)

        let escaping = try xdmPackage(document: original, metadata: Self.metadata(uri: "../../etc/passwd", size: nil, hash: nil))
        let refused = try hreader(withPassword(["import", "--file", escaping]))
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("outside its folder"), refused.stderr)
    }

    /// Without METADATA.XML, every XML document under IHE_XDM/ (the stylesheet is .XSL, the README
    /// and index are outside it).
    func testXDMPackageWithoutMetadataImportsItsXMLDocuments() throws {
        let package = try xdmPackage(document: Data(Self.document().utf8), metadata: nil)
        try ok(withPassword(["import", "--file", package]))
        XCTAssertEqual(try patients().count, 1)
    }

    /// A Blue Button page: the document is taken out of its script element; the page is never run.
    func testBlueButtonPageImportsTheDocumentItCarries() throws {
        let page = """
            <!DOCTYPE html>
            <html><head><title>My health record</title>
            <script type="text/javascript">document.title = "Loading";</script>
            <script type="text/xml" id="bluebutton">
            \(Self.document(patient: "Ines", family: "Abernathy", mrn: "BB-77"))
            </script></head><body><div id="viewer"></div></body></html>
            """
        let result = try ok(withPassword(["import", "--file", try file("record.html", page)]))
        XCTAssertTrue(result.stdout.contains("record.html"), result.stdout)
        XCTAssertEqual(try patients().first?["last_name"] as? String, "Abernathy")
    }

    // MARK: Memory bombs (security review 3, M-1)

    /// Metadata naming one document many times, as `count` ExtrinsicObjects.
    static func metadata(listing uri: String, times count: Int) -> String {
        let objects = (0..<count).map { i in
            #"<rim:ExtrinsicObject id="d\#(i)" mimeType="text/xml"><rim:Slot name="URI"><rim:ValueList><rim:Value>\#(uri)</rim:Value></rim:ValueList></rim:Slot></rim:ExtrinsicObject>"#
        }
        return #"<lcm:SubmitObjectsRequest xmlns:lcm="urn:oasis:names:tc:ebxml-regrep:xsd:lcm:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0"><rim:RegistryObjectList>"#
            + objects.joined() + "</rim:RegistryObjectList></lcm:SubmitObjectsRequest>"
    }

    /// `bytes` of text that deflate about 150 times (under the 250 a member may inflate): a little
    /// random text, then one letter repeated.
    static func compressibleText(_ bytes: Int) -> Data {
        var random = SystemRandomNumberGenerator()
        let noise = (0..<(bytes / 200)).map { _ in UInt8(ascii: "a") + UInt8(random.next() % 26) }
        return Data(noise + [UInt8](repeating: UInt8(ascii: "y"), count: bytes - noise.count))
    }

    /// The review's package: a small zip whose METADATA.XML names one 8 MiB member 40 times. Each
    /// copy was inflated and kept (320 MiB from a zip of under 100 KB); a member listed twice now
    /// refuses the package before anything is inflated.
    func testXDMMetadataListingOneDocumentManyTimesIsRefused() throws {
        let member = Self.compressibleText(8 << 20)
        let package = try zip("listed-40-times.zip", [("IHE_XDM/SUBSET01/METADATA.XML", Data(Self.metadata(listing: "DOC0001.XML", times: 40).utf8)),
                                                      ("IHE_XDM/SUBSET01/DOC0001.XML", member)])
        XCTAssertLessThan(try FileManager.default.attributesOfItem(atPath: package)[.size] as? Int ?? 0, 200_000)
        let (result, peakMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", package]))
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("METADATA.XML lists DOC0001.XML twice; refusing the package"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertLessThan(peakMB, 100, "a package of \(member.count >> 20) MiB listed 40 times took \(peakMB) MB")
        XCTAssertEqual(try patients().count, 0)
    }

    /// One document under two names: two files with the same bytes, or two central-directory
    /// records pointing at one local file (a zip written by hand) refuse the package.
    func testXDMOneDocumentUnderTwoNamesIsRefused() throws {
        let document = Data(Self.document().utf8)
        let twice = try zip("twice.zip", [("IHE_XDM/SUBSET01/DOC0001.XML", document), ("IHE_XDM/SUBSET01/DOC0002.XML", document)])
        let result = try hreader(withPassword(["import", "--file", twice]))
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("DOC0001.XML and IHE_XDM/SUBSET01/DOC0002.XML hold the same data"), result.stderr)

        // The central directory's one record copied under another name of the same length.
        let single = try Data(contentsOf: URL(fileURLWithPath: try zip("single.zip", [("IHE_XDM/SUBSET01/DOC0001.XML", document)])))
        let crafted = try Self.duplicatingCentralRecord(single, renaming: "DOC0001.XML", to: "DOC0009.XML")
        let url = workDir.appendingPathComponent("one-local-file-two-names.zip")
        try crafted.write(to: url)
        let refused = try hreader(withPassword(["import", "--file", url.path]))
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("hold the same data (one file listed twice); refusing the package"), refused.stderr)
        XCTAssertEqual(try patients().count, 0)
    }

    /// All of a package's documents are bounded together (HREADER_PACKAGE_MAX_BYTES, 256 MiB by
    /// default): two documents that fit one by one but not together refuse it, nothing written.
    func testXDMPackageBeyondItsTotalLimitIsRefused() throws {
        var padded = Self.document()
        padded = padded.replacingOccurrences(of: "<title>Continuity of Care Document</title>",
                                             with: "<title>Continuity of Care Document</title><!--" + String(repeating: "x", count: 40_000) + "-->")
        let second = padded.replacingOccurrences(of: "XDM-1001", with: "XDM-1002")
        let package = try zip("two.zip", [("IHE_XDM/SUBSET01/DOC0001.XML", Data(padded.utf8)), ("IHE_XDM/SUBSET01/DOC0002.XML", Data(second.utf8))])
        let refused = try hreader(withPassword(["import", "--file", package]), env: ["HREADER_PACKAGE_MAX_BYTES": "64K"])
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("two.zip inflates to more than 64 KiB in all; refusing it"), refused.stderr)
        XCTAssertEqual(try patients().count, 0)
        // Under the default, both people import.
        try ok(withPassword(["import", "--file", package]))
        XCTAssertEqual(try patients().count, 2, "two people (their record numbers differ)")
    }

    /// A zip with its central directory's first record repeated, the copy naming `to` instead of
    /// `renaming` (of the same length), the end record's counts and sizes mended.
    static func duplicatingCentralRecord(_ zip: Data, renaming old: String, to new: String) throws -> Data {
        let bytes = [UInt8](zip)
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        let end = try XCTUnwrap((0...(bytes.count - 22)).reversed().first { u32($0) == 0x0605_4b50 })
        let directory = u32(end + 16), size = u32(end + 12)
        XCTAssertEqual(u32(directory), 0x0201_4b50)
        let recordLength = 46 + u16(directory + 28) + u16(directory + 30) + u16(directory + 32)
        var copy = Array(bytes[directory..<(directory + recordLength)])
        let name = String(decoding: copy[46..<(46 + u16(directory + 28))], as: UTF8.self)
        copy.replaceSubrange(46..<(46 + name.utf8.count), with: Array(name.replacingOccurrences(of: old, with: new).utf8))
        var out = Array(bytes[..<(directory + size)]) + copy + Array(bytes[(directory + size)...])
        let newEnd = end + copy.count
        func put16(_ value: Int, _ at: Int) { out[at] = UInt8(value & 0xff); out[at + 1] = UInt8(value >> 8) }
        put16(u16(end + 8) + 1, newEnd + 8)
        put16(u16(end + 10) + 1, newEnd + 10)
        let newSize = size + copy.count
        for i in 0..<4 { out[newEnd + 12 + i] = UInt8((newSize >> (8 * i)) & 0xff) }
        return Data(out)
    }
}
