import Foundation
import HReaderJSON
import XCTest

/// The JSON core every module reads and writes JSON with: what it keeps, what it refuses, and that
/// its two writers agree.
final class JSONCoreTests: XCTestCase {
    private func parse(_ text: String, limits: JSONParser.Limits = .default) throws(JSONError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8), limits: limits)
    }

    private func error(parsing text: String, limits: JSONParser.Limits = .default) -> JSONError? {
        do {
            _ = try parse(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    // MARK: Lossless

    func testParseSerializeParseIsStable() throws {
        let texts = [
            #"{"resourceType":"Observation","valueQuantity":{"value":120.0,"unit":"mm[Hg]"},"note":[{"text":"a\nb"}],"x":null}"#,
            #"[1,-0,0.5,1e3,1E+3,-1.5e-3,12345678901234567890123,true,false,null,"",{},[]]"#,
            #""just a string""#,
            "  \r\n\t[ 1 , { \"a\" : [ ] } ]  \n",
        ]
        for text in texts {
            let value = try parse(text)
            for pretty in [false, true] {
                let written = value.serialized(pretty: pretty)
                let again = try parse(written)
                XCTAssertEqual(again, value, written)
                XCTAssertEqual(again.serialized(pretty: pretty), written, "serializing is stable")
            }
        }
    }

    /// An export writes its Bundle an entry at a time: the pieces are the bytes of the whole.
    func testADocumentWrittenAnElementAtATimeIsTheWholeSerialized() throws {
        let element: JSONValue = .object([("fullUrl", "urn:uuid:1"), ("resource", .object([("a", .array([.int(1), .double(2.5), .null])),
                                                                                           ("deep", .object([("x", .array([.object([("y", "z\n")])]))])),
                                                                                           ("empty", .array([])), ("none", .object([]))]))])
        for count in [1, 3] {
            let elements = [JSONValue](repeating: element, count: count)
            let whole = JSONValue.object([("resourceType", "Bundle"), ("entry", .array(elements))]).serializedBytes(pretty: true)
            var pieces = Array("{\n  \"resourceType\": \"Bundle\",\n  \"entry\": [".utf8)
            for (i, value) in elements.enumerated() {
                pieces += (i > 0 ? ",\n    " : "\n    ").utf8
                value.appendSerialized(to: &pieces, pretty: true, level: 2)
            }
            pieces += "\n  ]\n}".utf8
            XCTAssertEqual(String(decoding: pieces, as: UTF8.self), String(decoding: whole, as: UTF8.self))
        }
    }

    func testNumberLiteralsAreKeptAsWritten() throws {
        let text = #"[120.0,120,1.50,-0,0e0,1E+2,1e-7,12345678901234567890123,0.1000000000000000055511151231257827]"#
        let value = try parse(text)
        XCTAssertEqual(value.serialized(), text)
        XCTAssertEqual(value[0]?.numberText, "120.0")
        XCTAssertEqual(value[0]?.number, 120)
        XCTAssertEqual(value[1]?.int, 120)
        XCTAssertNil(value[0]?.int, "120.0 is not written as an integer")
    }

    func testMemberOrderAndRepeatedNamesAreKept() throws {
        let value = try parse(#"{"z":1,"a":2,"m":3,"a":4}"#)
        XCTAssertEqual(value.object?.keys, ["z", "a", "m", "a"])
        XCTAssertEqual(value["a"], 4, "lookup takes the last member of a name")
        XCTAssertEqual(value.serialized(), #"{"z":1,"a":2,"m":3,"a":4}"#)
        XCTAssertEqual(value.serialized(sortingKeys: true), #"{"a":2,"a":4,"m":3,"z":1}"#)
    }

    func testSubscriptsReadAndChangeInPlace() {
        var value: JSONValue = ["resourceType": "Patient", "name": [["family": "Doe"]]]
        value["id"] = "p1"
        value["resourceType"] = "Person"
        XCTAssertEqual(value["name"]?[0]?["family"]?.string, "Doe")
        XCTAssertNil(value["name"]?[1])
        value["name"] = nil
        XCTAssertEqual(value.serialized(), #"{"resourceType":"Person","id":"p1"}"#)
        var array: JSONValue = [1, 2]
        array["x"] = 3
        XCTAssertEqual(array, [1, 2], "a member set on an array does nothing")
    }

    // MARK: Numbers made in Swift

    func testDoublesAreWrittenAsHreaderAlwaysWroteThem() {
        let cases: [(Double, String)] = [
            (120, "120"), (-3, "-3"), (-0.0, "0"), (72.25, "72.25"), (0.1, "0.1"), (1e20, "1e+20"),
            (999_999_999_999_999, "999999999999999"), (1e15, "1000000000000000.0"), (1.5e-7, "1.5e-07"),
        ]
        for (value, text) in cases {
            XCTAssertEqual(JSONValue.double(value).serialized(), text, "\(value)")
        }
        XCTAssertEqual(JSONValue.double(.nan), .null)
        XCTAssertEqual(JSONValue.double(-.infinity), .null)
        XCTAssertEqual(JSONValue.int(Int64.min).serialized(), "-9223372036854775808")
    }

    func testDecimalsKeepTheirPlaces() {
        XCTAssertEqual(JSONValue.decimal(118, places: 1), .number("118.0"))
        XCTAssertEqual(JSONValue.decimal(0.125, places: 2).numberText, "0.13")
        XCTAssertEqual(JSONValue.decimal(-0.04, places: 1).numberText, "0.0")
        XCTAssertEqual(JSONValue.decimal(-2.5, places: 0).numberText, "-3")
        XCTAssertEqual(JSONValue.decimal(3.14159, places: 3).numberText, "3.142")
        XCTAssertEqual(JSONValue.decimal(.nan, places: 1), .null)
    }

    func testNumberGrammarIsTheParsers() {
        for text in ["0", "-12", "0.5", "1.5E+3", "1e-2", "-0"] { XCTAssertTrue(JSONNumber.isValid(text), text) }
        for text in ["", "+1", ".5", "01", "1.", "1e", "-", "0x10", "1 ", "NaN", "1.5.2"] { XCTAssertFalse(JSONNumber.isValid(text), text) }
    }

    // MARK: Strings

    func testEscapesIncludingSurrogatePairsAndControlCharacters() throws {
        let value = try parse(#"["caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t \u0001\u001f\u007f"]"#)
        XCTAssertEqual(value[0]?.string, "café 😀 \"q\" \\ / \u{08}\u{0C}\n\r\t \u{01}\u{1F}\u{7F}")
        XCTAssertEqual(value.serialized(), #"["café 😀 \"q\" \\ / \u0008\u000c\n\r\t \u0001\u001f"# + "\u{7F}\"]",
                       "C0 controls escaped (\\n, \\r, \\t short), / and DEL written as they are")
        XCTAssertEqual(try parse(#"["\ud800x", "\udc00", "\ud800\u0041"]"#), ["\u{FFFD}x", "\u{FFFD}", "\u{FFFD}A"],
                       "a lone surrogate becomes U+FFFD")
        XCTAssertEqual(try parse("[\"😀 \u{2028}\"]")[0]?.string, "😀 \u{2028}", "UTF-8 as it is")
        XCTAssertEqual(try parse("[\"\u{FEFF}x\"]").serialized(), "[\"\u{FEFF}x\"]",
                       "U+FEFF at the start of a string is kept (Foundation's String(bytes:encoding:), which Records used, dropped it)")
        XCTAssertEqual(JSONText.quoted("tab\there \u{0}"), #""tab\there \u0000""#)
    }

    func testByteOrderMarkIsSkipped() throws {
        XCTAssertEqual(try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("{}".utf8)), .object([]))
    }

    // MARK: Refusals

    func testSyntaxErrorsNameLineAndColumn() {
        let cases: [(String, String)] = [
            ("{\"a\":01}", "invalid number (leading zero) at line 1, column 6"),
            ("[1.]", "invalid number (no digits after '.') at line 1, column 2"),
            ("[1e+]", "invalid number (no digits in the exponent) at line 1, column 2"),
            ("[tru]", "invalid literal (expected true) at line 1, column 2"),
            ("{\"a\" 1}", "expected ':' after member name \"a\" at line 1, column 6"),
            ("{a:1}", "expected a member name in quotes, found 'a' at line 1, column 2"),
            ("[\"\n\"]", "unescaped control character in a string at line 1, column 3"),
            ("[\"\\x\"]", "invalid escape '\\x' in a string at line 1, column 3"),
            ("[\"\\u12\"]", "invalid \\u escape at line 1, column 5"),
            ("[\"abc", "unterminated string at line 1, column 2"),
            ("{} {}", "unexpected data after the JSON value at line 1, column 4"),
            ("[1,]", "unexpected ']' at line 1, column 4"),
            ("[1\n,\n2 3]", "expected ',' or ']' in an array, found '3' at line 3, column 3"),
            ("   ", "no JSON value (empty input) at line 1, column 4"),
        ]
        for (input, message) in cases {
            let error = error(parsing: input)
            XCTAssertEqual(error?.kind, .syntax, input)
            XCTAssertEqual(error?.description, message, input)
        }
        do {
            _ = try JSONParser.parse([0x5B, 0x22, 0xC3, 0x22, 0x5D] as [UInt8])
            XCTFail("invalid UTF-8 accepted")
        } catch {
            XCTAssertEqual(error, JSONError(.syntax, "invalid UTF-8 in a string", at: .init(offset: 1, line: 1, column: 2)))
        }
    }

    func testDepthLimitIsRefusedWithATypedError() throws {
        let limits = JSONParser.Limits(maxDepth: 8)
        XCTAssertNoThrow(try parse(String(repeating: "[", count: 8) + String(repeating: "]", count: 8), limits: limits))
        let deep = String(repeating: "[", count: 9) + String(repeating: "]", count: 9)
        XCTAssertEqual(error(parsing: deep, limits: limits),
                       JSONError(.tooDeep, "nested deeper than 8 levels", at: .init(offset: 8, line: 1, column: 9)))
        let hostile = String(repeating: "{\"a\":[", count: 100_000)
        XCTAssertEqual(error(parsing: hostile)?.kind, .tooDeep, "refused long before the stack runs out")
    }

    /// Asked to (FHIR JSON forbids it), the parser refuses a name an object repeats, at the second
    /// one, in small objects and large ones, nested anywhere; the same name in different objects is fine.
    func testRepeatedNamesAreRefusedWhenAskedWithTheName() throws {
        func refused(_ text: String) -> JSONError? {
            do { _ = try JSONParser.parse(text, duplicateNames: .refused); return nil } catch { return error }
        }
        XCTAssertEqual(refused(#"{"id":"a","x":{"id":"b"},"y":[{"id":"c"},{"id":"d"}]}"#), nil)
        XCTAssertEqual(refused("{\"resourceType\":\"Patient\",\n \"id\":\"a\", \"id\":\"b\"}"),
                       JSONError(.duplicateName, #"the member name "id" appears twice in one object"#, at: .init(offset: 38, line: 2, column: 12)))
        XCTAssertEqual(refused(#"[{"subject":{"reference":"Patient/1","display":"A","reference":"Patient/2"}}]"#)?.message,
                       #"the member name "reference" appears twice in one object"#)
        let many = (0..<40).map { "\"m\($0)\":\($0)" }.joined(separator: ",")
        XCTAssertNil(refused("{" + many + "}"))
        XCTAssertEqual(refused("{" + many + ",\"m7\":0}")?.kind, .duplicateName, "a large object checks with a set")
        XCTAssertEqual(refused("{" + many + ",\"m39\":0}")?.kind, .duplicateName)
        XCTAssertEqual(refused("{\"a\\u0062\":1,\"ab\":2}")?.message, #"the member name "ab" appears twice in one object"#, "names compare unescaped")
        XCTAssertEqual(refused("{\"a\\n\":1,\"a\\n\":2}")?.message, #"the member name "a\n" appears twice in one object"#, "shown escaped, on one line")
        XCTAssertNoThrow(try parse(#"{"id":"a","id":"b"}"#), "kept by default")
    }

    func testSizeLimitIsRefusedWithATypedError() throws {
        let limits = JSONParser.Limits(maxBytes: 16)
        XCTAssertNoThrow(try parse(#"["0123456789ab"]"#, limits: limits))
        let error = error(parsing: #"["0123456789abc"]"#, limits: limits)
        XCTAssertEqual(error?.kind, .tooLarge)
        XCTAssertEqual(error?.description, "too large (17 bytes, the limit is 16)")
    }

    // MARK: Writing

    func testPrettyLayout() throws {
        let value = try parse(#"{"a":[1,{"b":"x"}],"c":{},"d":[],"e":null}"#)
        XCTAssertEqual(value.serialized(pretty: true), """
            {
              "a": [
                1,
                {
                  "b": "x"
                }
              ],
              "c": {},
              "d": [],
              "e": null
            }
            """)
    }

    func testVerbatimTextIsWrittenAsItIs() {
        let raw = #"{ "b" : [ 1.50 , "\u00e9" ] , "a" : { } }"#
        let value: JSONValue = ["raw": .verbatim(raw), "n": 1]
        XCTAssertEqual(value.serialized(), #"{"raw":"# + raw + #","n":1}"#)
        XCTAssertEqual(value.serialized(sortingKeys: true), #"{"n":1,"raw":"# + raw + "}", "its own members keep their order")
        XCTAssertEqual(value.serialized(pretty: true), """
            {
              "raw": {
                "b": [
                  1.50,
                  "\\u00e9"
                ],
                "a": {}
              },
              "n": 1
            }
            """)
    }

    func testStreamingWriterWritesTheTreeSerializersBytes() throws {
        let tree = try parse(#"{"s":"q\" \\ \u0001 é 😀","n":[120.0,-1e3],"o":{"k":[true,false,null]},"e":[],"f":{}}"#)
        let doubles: [Double] = [0, -0.0, 1, -3, 72.25, 0.1, 1e20, 1e15, 999_999_999_999_999, .nan, .infinity, 5e-324]
        let ints: [Int64] = [0, 7, -42, .max, .min]
        let expected: JSONValue = .object([("tree", tree), ("doubles", .array(doubles.map(JSONValue.double))),
                                           ("ints", .array(ints.map(JSONValue.int))), ("raw", .verbatim(#"{"x" : 1.0}"#))])
        for chunk in [1, 7, 64 << 10] {
            var written: [UInt8] = []
            var out = JSONByteWriter(chunkBytes: chunk) { written.append(contentsOf: $0) }
            out.raw("{\"tree\":")
            out.value(tree)
            out.raw(",\"doubles\":[")
            for (i, d) in doubles.enumerated() {
                if i > 0 { out.raw(",") }
                out.double(d)
                try out.flushIfFull()
            }
            out.raw("],")
            out.string("ints")
            out.raw(":[")
            for (i, n) in ints.enumerated() {
                if i > 0 { out.raw(",") }
                out.int(n)
            }
            out.raw("],\"raw\":")
            out.value(.verbatim(#"{"x" : 1.0}"#))
            out.raw("}")
            try out.flush()
            XCTAssertEqual(String(decoding: written, as: UTF8.self), expected.serialized(), "chunks of \(chunk)")
        }
    }

    func testStreamingWriterCanReplaceTerminalControls() throws {
        var written: [UInt8] = []
        var out = JSONByteWriter(replacingControls: true) { written.append(contentsOf: $0) }
        out.value(["DEL\u{7F} CSI\u{9B}2J é \u{1}"])
        try out.flush()
        XCTAssertEqual(String(decoding: written, as: UTF8.self), "[\"DEL\u{FFFD} CSI\u{FFFD}2J é \\u0001\"]")
    }

    // MARK: Foundation

    func testFoundationValuesConvert() throws {
        let decoded = try JSONSerialization.jsonObject(with: Data(#"{"b":[1.0,1.5,true,null,"x"],"a":12345678901234567890}"#.utf8))
        XCTAssertEqual(try JSONValue(foundation: decoded).serialized(), #"{"a":12345678901234567890,"b":[1,1.5,true,null,"x"]}"#)
        XCTAssertEqual(try JSONValue(foundation: ["on": true, "n": 1, "x": 2.5] as [String: Any]).serialized(), #"{"n":1,"on":true,"x":2.5}"#)
        XCTAssertThrowsError(try JSONValue(foundation: ["when": Date()] as [String: Any], path: "item")) { error in
            XCTAssertEqual((error as? JSONError)?.kind, .unrepresentable)
            XCTAssertEqual((error as? JSONError)?.description, "item.when is a Date, which JSON cannot hold")
        }
        XCTAssertThrowsError(try JSONValue(foundation: [Double.nan]))
    }
}
