import Foundation
import XCTest
import HReaderJSON
import HReaderModel
@testable import HReaderRecords

// The JSON reader under both mappers: strict syntax, exact round trips of what matters in a raw
// resource (member order, number literals, text), and clear errors.

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Data(text.utf8), what: "input") }

    func testRoundTripKeepsMemberOrderNumberLiteralsAndText() throws {
        let text = #"{"z":1,"a":[120.0,-0.5e-3,0,true,false,null],"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n\t","e":{}}"#
        XCTAssertEqual(try parse(text).serialized(),
                       "{\"z\":1,\"a\":[120.0,-0.5e-3,0,true,false,null],\"s\":\"café 😀 \\\"q\\\" \\\\ / \\n\\t\",\"e\":{}}")
    }

    func testCanonicalFormSortsKeys() throws {
        XCTAssertEqual(try parse(#"{"b": {"d": 1, "c": 2}, "a": []}"#).serialized(sortingKeys: true), #"{"a":[],"b":{"c":2,"d":1}}"#)
    }

    func testControlCharactersAreEscapedOnOutput() throws {
        XCTAssertEqual(try parse(#"["\u0001"]"#).serialized(), #"["\u0001"]"#)
    }

    func testLoneSurrogateBecomesReplacementCharacter() throws {
        XCTAssertEqual(try parse(#"["\ud800x"]"#), .array([.string("\u{FFFD}x")]))
    }

    func testByteOrderMarkIsIgnored() throws {
        XCTAssertEqual(try JSONParser.parse(Data([0xEF, 0xBB, 0xBF] + Array("{}".utf8))), .object(JSONObject()))
    }

    func testSyntaxErrors() {
        let cases: [(String, String)] = [
            ("{\"a\":01}", "invalid number (leading zero) at line 1, column 6"),
            ("[1.]", "invalid number (no digits after '.') at line 1, column 2"),
            ("[tru]", "invalid literal (expected true) at line 1, column 2"),
            ("{\"a\" 1}", "expected ':' after member name \"a\" at line 1, column 6"),
            ("{a:1}", "expected a member name in quotes, found 'a' at line 1, column 2"),
            ("[\"\n\"]", "unescaped control character in a string at line 1, column 3"),
            ("[\"\\x\"]", "invalid escape '\\x' in a string at line 1, column 3"),
            ("[\"abc", "unterminated string at line 1, column 2"),
            ("{} {}", "unexpected data after the JSON value at line 1, column 4"),
            ("[1,]", "unexpected ']' at line 1, column 4"),
        ]
        for (input, message) in cases {
            XCTAssertThrowsError(try parse(input), input) { error in
                XCTAssertEqual(error as? RecordsError, .malformed("input is not valid JSON: \(message)"), input)
            }
        }
        XCTAssertThrowsError(try JSONParser.parse(Data([0x5B, 0x22, 0xFF, 0x22, 0x5D]), what: "input")) { error in
            XCTAssertEqual(error as? RecordsError, .malformed("input is not valid JSON: invalid UTF-8 in a string at line 1, column 2"))
        }
    }

    func testNumberTextIsStrict() {
        XCTAssertEqual(NumberText.parse(" 6.3 "), 6.3)
        XCTAssertEqual(NumberText.parse(".5"), 0.5)
        XCTAssertEqual(NumberText.parse("-1e3"), -1000)
        for text in ["nan", "inf", "0x1p3", "", "-", "1.2.3", "12 mg", "e5"] {
            XCTAssertNil(NumberText.parse(text), text)
        }
    }

    func testFastInstantParsingAgreesWithClinicalTime() {
        let utc = TimeZone(identifier: "UTC")!
        for text in ["2021-03-04T08:15:00+01:00", "2021-03-04T08:15:00Z", "2012-05-01T10:00:00.123456-04:00",
                     "1960-01-01T00:00:00.5Z", "2000-02-29T23:59:59+14:00", "1969-12-31T23:59:59.999Z"] {
            XCTAssertNotNil(FHIRTime.instant(text), text)
            XCTAssertEqual(FHIRTime.parse(text, zone: .named(utc)), ClinicalTime.parse(text, zone: .named(utc)), text)
        }
        for text in ["2021-02-29T00:00:00Z", "2021-03-04T24:00:00Z", "2021-03-04T08:15:00", "2021-03-04T08:15:00+0100",
                     "2021-03-04T08:15:00.Z", "2021-03-04 08:15:00Z", "2021-03-04", "0001-01-01T00:00:00Z"] {
            XCTAssertNil(FHIRTime.instant(text), text)
        }
        XCTAssertEqual(FHIRTime.parse("2021-03-04T08:15:00", zone: .named(utc))?.epoch, 1614845700, "no offset: read in the given zone")
        // A combining mark after a digit made Foundation's DateFormatter trap (found by the fuzzer).
        XCTAssertNil(FHIRTime.parse("2024-03-01T08:00:0\u{0365}", zone: .named(utc)))
    }

    func testFNV1aMatchesKnownVectors() {
        XCTAssertEqual(StableID.fnv1a64(""), "cbf29ce484222325")
        XCTAssertEqual(StableID.fnv1a64("a"), "af63dc4c8601ec8c")
        XCTAssertEqual(StableID.fnv1a64("foobar"), "85944171f73967e8")
    }
}
