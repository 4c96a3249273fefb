import Foundation
import HReaderRecords
import XCTest

/// The packaging of clinical documents: an IHE XDM package's METADATA.XML, and a Blue Button
/// page that carries its document in a script element.
final class DocumentPackageTests: XCTestCase {
    static func metadata(_ documents: [(id: String, mime: String, uri: [String], size: Int?, hash: String?)], doctype: String = "") -> Data {
        let objects = documents.map { document -> String in
            var slots = ""
            if let size = document.size { slots += #"<rim:Slot name="size"><rim:ValueList><rim:Value>\#(size)</rim:Value></rim:ValueList></rim:Slot>"# }
            if let hash = document.hash { slots += #"<rim:Slot name="hash"><rim:ValueList><rim:Value>\#(hash)</rim:Value></rim:ValueList></rim:Slot>"# }
            slots += #"<rim:Slot name="URI"><rim:ValueList>"# + document.uri.map { "<rim:Value>\($0)</rim:Value>" }.joined() + "</rim:ValueList></rim:Slot>"
            return #"""
              <rim:ExtrinsicObject id="\#(document.id)" mimeType="\#(document.mime)" objectType="urn:uuid:7edca82f-054d-47f2-a032-9b2a5b5186c1">
                <rim:Slot name="creationTime"><rim:ValueList><rim:Value>20240102030405</rim:Value></rim:ValueList></rim:Slot>
                \#(slots)
                <rim:Name><rim:LocalizedString value="Continuity of Care Document"/></rim:Name>
              </rim:ExtrinsicObject>
            """#
        }.joined(separator: "\n")
        return Data(#"""
            <?xml version="1.0" encoding="UTF-8"?>\#(doctype)
            <lcm:SubmitObjectsRequest xmlns:lcm="urn:oasis:names:tc:ebxml-regrep:xsd:lcm:3.0" xmlns:rim="urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0">
              <rim:RegistryObjectList>
              \#(objects)
                <rim:RegistryPackage id="SubmissionSet01"/>
              </rim:RegistryObjectList>
            </lcm:SubmitObjectsRequest>
            """#.utf8)
    }

    func testMetadataNamesEachDocumentWithSizeHashAndType() throws {
        let data = Self.metadata([
            ("Document01", "text/xml", ["DOC0001.XML"], 1234, "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709"),
            ("Document02", "application/pdf", ["DOC0002.PDF"], nil, nil),
            ("Document03", "text/xml", ["1|folder/long-", "2|name.xml"], 9, nil),
        ])
        let documents = try XDMMetadata.documents(in: data)
        XCTAssertEqual(documents, [
            .init(uri: "DOC0001.XML", size: 1234, sha1: "da39a3ee5e6b4b0d3255bfef95601890afd80709", mimeType: "text/xml"),
            .init(uri: "DOC0002.PDF", size: nil, sha1: nil, mimeType: "application/pdf"),
            .init(uri: "folder/long-name.xml", size: 9, sha1: nil, mimeType: "text/xml"),
        ])
    }

    func testMetadataWithEntitiesOrBrokenXMLIsRefused() {
        let entities = Self.metadata([("D", "text/xml", ["&x;"], nil, nil)], doctype: #"<!DOCTYPE lcm [<!ENTITY x "DOC0001.XML">]>"#)
        XCTAssertThrowsError(try XDMMetadata.documents(in: entities)) { error in
            XCTAssertTrue("\(error)".contains("declares entities"), "\(error)")
        }
        XCTAssertThrowsError(try XDMMetadata.documents(in: Data("<lcm:SubmitObjectsRequest><rim:Ex".utf8)))
    }

    func testBlueButtonPageGivesTheDocumentOfItsScript() throws {
        let document = #"<?xml version="1.0"?><ClinicalDocument xmlns="urn:hl7-org:v3"><title>CCD</title></ClinicalDocument>"#
        let page = """
            <!DOCTYPE html>
            <html><head><script src="viewer.js"></script><SCRIPT type="text/javascript">var x = "<ClinicalDocument";</SCRIPT>
            <script type="text/xml" id="ccda">
            \(document)
            </script></head><body>Loading…</body></html>
            """
        XCTAssertTrue(BlueButtonPage.isHTML(Data(page.utf8)))
        XCTAssertEqual(BlueButtonPage.embeddedDocument(in: Data(page.utf8)).map { String(decoding: $0, as: UTF8.self) }, document)
        XCTAssertNil(BlueButtonPage.embeddedDocument(in: Data("<html><script>alert(1)</script></html>".utf8)))
        XCTAssertFalse(BlueButtonPage.isHTML(Data(document.utf8)))
    }
}
