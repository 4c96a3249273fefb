import Foundation
import XCTest
@testable import HReaderRecords

/// Documents' readable text (issue 26): plain text in its charset, HTML and RTF reduced to text,
/// and the attachments FHIR resources carry.
final class DocumentTextTests: XCTestCase {
    func testHTMLDropsScriptStyleAndHeadAndShowsLinksAsText() {
        let html = """
            <!DOCTYPE html><html><head><title>Hidden title</title><style>p { color: red }</style></head>
            <body><h1>Visit</h1><p>Take <b>metformin</b>&nbsp;500&#160;mg &amp; rest &mdash; &#x20AC;5 &bogus;</p>
            <script type="text/javascript">alert("Scriptwhistle") // </p></script><SCRIPT>steal()</SCRIPT >
            <ul><li>one<li>two</ul><p>See <a href="https://example.org/a?b=1&amp;c=2">the leaflet</a>
            and <a href="javascript:alert(1)">this</a>.</p><!-- a <script> in a comment --></body></html>
            """
        XCTAssertEqual(HTMLPlainText.text(html), """
            Visit

            Take metformin 500 mg & rest — €5 &bogus;

            • one
            • two

            See the leaflet (https://example.org/a?b=1&c=2) and this.
            """)
    }

    func testHTMLOfBrokenMarkupIsReadToTheEndWithoutScript() {
        XCTAssertEqual(HTMLPlainText.text("a < b <p x='1>2'>c</p><script>never"), "a < b\nc")
        XCTAssertEqual(HTMLPlainText.text("<scripts>kept</scripts><script/>never"), "kept", "<script/> opens a script, as in a browser")
        XCTAssertEqual(HTMLPlainText.text("x &#0; &#xD800; &#1114112; y"), "x \u{FFFD} \u{FFFD} \u{FFFD} y")
    }

    func testRTFSkipsDestinationsAndDecodesEscapes() {
        let rtf = #"{\rtf1\ansi\ansicpg1252{\fonttbl{\f0 Arial;}}{\colortbl;\red0;}{\*\generator W;}{\info{\title T}}"#
            + #"Caf\'e9 \u8364? \u-10179?\u-8703? \ldblquote q\rdblquote\par{\pict\pngblip 8950}second\tab x\line y\'93z\'94}"#
        XCTAssertEqual(RTFPlainText.text(Array(rtf.utf8)), "Café € 😁 “q”\nsecond\tx\ny“z”")
    }

    func testRTFSkipsBinaryDataAndSurvivesDeepNesting() {
        let rtf = "{\\rtf1 a\\bin3 {}x\\b" + String(repeating: "{", count: 1000) + "deep" + String(repeating: "}", count: 1000) + " b}"
        XCTAssertEqual(RTFPlainText.text(Array(rtf.utf8)), "a b")
        XCTAssertEqual(RTFPlainText.text(Array(#"{\rtf1\uc2\u233 XYz}"#.utf8)), "éz")
    }

    func testPlainTextFollowsItsCharset() {
        XCTAssertEqual(DocumentText.decode([0x43, 0x61, 0x66, 0xE9], charset: "iso-8859-1"), "Café")
        XCTAssertEqual(DocumentText.decode([0x93, 0x71, 0x94, 0x80], charset: nil), "“q”€", "not UTF-8 and no charset: Windows-1252")
        XCTAssertEqual(DocumentText.decode([0xEF, 0xBB, 0xBF] + Array("naïve".utf8), charset: "utf-8"), "naïve")
        XCTAssertEqual(DocumentText.decode([0xFF, 0xFE, 0x41, 0x00, 0xE9, 0x00], charset: nil), "Aé")
        XCTAssertEqual(DocumentText.readable(Array("<p>a</p>".utf8), contentType: "text/html; charset=utf-8"), "a")
        XCTAssertEqual(DocumentText.readable(Array("<ClinicalDocument><title>T</title><text>Body</text></ClinicalDocument>".utf8),
                                             contentType: "application/hl7-v3+xml"), "T Body")
        XCTAssertNil(DocumentText.readable(Array("%PDF-1.4".utf8), contentType: "application/pdf"))
    }

    func testContentTypesAllowedAndGuessed() {
        for allowed in ["text/plain", "text/html; charset=utf-8", "text/rtf", "application/pdf", "image/jpeg", "application/hl7-v3+xml", "TEXT/XML"] {
            XCTAssertTrue(DocumentContentType.isAllowed(allowed), allowed)
        }
        for refused in [nil, "application/x-msdownload", "application/zip", "image/svg+xml", "application/javascript"] {
            XCTAssertFalse(DocumentContentType.isAllowed(refused), refused ?? "nil")
        }
        XCTAssertEqual(DocumentContentType.guess(fileName: "scan.bin", prefix: Array("%PDF-1.7".utf8)), "application/pdf")
        XCTAssertEqual(DocumentContentType.guess(fileName: "letter.rtf", prefix: []), "text/rtf")
        XCTAssertNil(DocumentContentType.guess(fileName: "archive.zip", prefix: [0x50, 0x4B]))
    }

    /// A source's content type reaches the command line's tables and the web view's header: only RFC 6838's
    /// `type/subtype` with a plain charset is kept, lower-cased; well-formed other parameters are dropped,
    /// and anything else is refused whole (security review 3, L-6).
    func testContentTypesAreReadStrictlyAndKeptInTheirCleanForm() {
        let clean: [(String, String)] = [
            ("text/plain", "text/plain"),
            ("Text/HTML;Charset=\"UTF-8\"; format=flowed", "text/html; charset=utf-8"),
            (" text/plain ; charset=ISO-8859-1 ", "text/plain; charset=iso-8859-1"),
            ("text/plain; profile=\"a;b \\\"c\\\"\"; charset=utf-8", "text/plain; charset=utf-8"),
            ("text/plain; charset=\"utf 8\"", "text/plain"),
            ("text/plain; charset=utf-8; charset=latin1", "text/plain; charset=utf-8"),
            ("text/plain;", "text/plain"),
            ("application/hl7-v3+xml", "application/hl7-v3+xml"),
            ("application/vnd.ms-excel", "application/vnd.ms-excel"),
        ]
        for (given, kept) in clean {
            XCTAssertEqual(DocumentContentType.normalized(given), kept, given)
        }
        XCTAssertEqual(DocumentContentType.mediaType("Text/HTML;Charset=UTF-8"), "text/html")
        XCTAssertEqual(DocumentContentType.charset("Text/HTML;Charset=UTF-8"), "utf-8")

        let hostile = "text/html\r\nSet-Cookie: hreader_session=attacker; Path=/\r\nX-Injected: 1"
        for refused in [hostile, "text/html; charset=utf-8\r\nX-Injected: 1", "text/html\n", "text /html", "text/ html", "text/html x",
                        "text", "*/*", "text/*", "/plain", "-text/plain", "text/plain; charset", "text/plain; =x", "text/plain; a=b c",
                        "text/plain; a=\"unterminated", "text/plain; a=\"caf\u{E9}\"", "t\u{EB}xt/plain", "text/plain\u{0}", "text/plain\u{7F}",
                        "", "   ", String(repeating: "a", count: 128) + "/plain", "text/plain; x=" + String(repeating: "y", count: 250)] {
            XCTAssertNil(DocumentContentType.normalized(refused), refused.debugDescription)
            XCTAssertNil(DocumentContentType.mediaType(refused), refused.debugDescription)
            XCTAssertFalse(DocumentContentType.isAllowed(refused), refused.debugDescription)
        }
        XCTAssertEqual(DocumentContentType.refusal(hostile), "the content type is not a media type (type/subtype, RFC 6838)",
                       "the source's text is not repeated")
        XCTAssertEqual(DocumentContentType.refusal(nil), "no content type given")
    }

    func testAttachmentsOfDocumentReferenceDiagnosticReportAndMedia() {
        let reference = #"{"resourceType":"DocumentReference","id":"d1","meta":{"versionId":"3"},"description":"Visit note","date":"2024-01-02T03:04:05Z","#
            + #""content":[{"attachment":{"contentType":"text/plain","data":"aGk="}},{"attachment":{"contentType":"text/html","url":"Binary/7","size":12,"hash":"abc="}},{"format":{}}]}"#
        let found = FHIRAttachments.attachments(raw: reference, remoteID: "DocumentReference/d1")
        XCTAssertEqual(found.map(\.origin), ["DocumentReference/d1#content[0]", "DocumentReference/d1#content[1]"])
        XCTAssertEqual(found[0].data, "aGk=")
        XCTAssertEqual(found[1].url, "Binary/7")
        XCTAssertEqual(found[1].size, 12)
        XCTAssertEqual(found[1].hash, "abc=")
        XCTAssertEqual(found[1].version, "3")
        XCTAssertEqual(found[1].title, "Visit note")
        XCTAssertEqual(found[1].date, "2024-01-02T03:04:05Z")
        let report = #"{"resourceType":"DiagnosticReport","id":"r","code":{"text":"Chest X-ray"},"effectiveDateTime":"2024","presentedForm":[{"contentType":"application/pdf","url":"Binary/9"}]}"#
        XCTAssertEqual(FHIRAttachments.attachments(raw: report, remoteID: "DiagnosticReport/r").map(\.title), ["Chest X-ray"])
        let media = #"{"resourceType":"Media","id":"m","content":{"contentType":"image/png","data":"iVBO","title":"Rash"}}"#
        XCTAssertEqual(FHIRAttachments.attachments(raw: media, remoteID: "Media/m").map(\.origin), ["Media/m#content"])
        XCTAssertEqual(FHIRAttachments.attachments(raw: #"{"resourceType":"Observation"}"#, remoteID: "Observation/o"), [])
        XCTAssertEqual(FHIRAttachments.binary(Array(#"{"resourceType":"Binary","contentType":"text/plain","data":"aGk="}"#.utf8))?.data, "aGk=")
        XCTAssertNil(FHIRAttachments.binary(Array(#"{"resourceType":"Patient"}"#.utf8)))
    }

    func testByteSearchFindsMarkersByteForByte() {
        XCTAssertTrue(ByteSearch.contains(any: ["\"attachment\"", "\"presentedForm\""], in: #"{"a":"Ünïcode ✓","presentedForm":[]}"#))
        XCTAssertTrue(ByteSearch.contains(any: ["\"Media\""], in: "xx\"Media\""), "at the very end")
        XCTAssertFalse(ByteSearch.contains(any: ["\"attachment\""], in: #"{"attachments":1}"#))
        XCTAssertFalse(ByteSearch.contains(any: ["\"Media\""], in: "\"Medi"), "longer than the text")
        XCTAssertFalse(ByteSearch.contains(any: ["\"Media\""], in: ""))
        // A combining accent inside the name makes it another name.
        XCTAssertFalse(ByteSearch.contains(any: ["\"attachment\""], in: "\"attachme\u{301}nt\""))
        let page = Array("<html><SCRIPT type=x>a</script><script>".utf8)
        XCTAssertEqual(ByteSearch.find("<script", in: page, ignoringCase: true), 6)
        XCTAssertEqual(ByteSearch.find("<script", in: page, from: 7, ignoringCase: true), 31)
        XCTAssertEqual(ByteSearch.find("<script", in: page), 31, "case matters unless ignored")
        XCTAssertEqual(ByteSearch.find("<script", in: page, from: 31), 31, "a match at the start offset")
        XCTAssertEqual(ByteSearch.find("a</", in: page, from: 20), 21)
        XCTAssertNil(ByteSearch.find("<script", in: page, from: 32))
        XCTAssertNil(ByteSearch.find("", in: page))
    }
}
