import HReaderJSON
import HReaderKit
import XCTest

/// `JSONValue.verbatim`: a raw resource's text inside a document of ours, written as it is, and
/// laid out like the rest when the document is pretty.
final class VerbatimJSONSummaryTests: XCTestCase {
    func testVerbatimTextIsWrittenAsItIsAndReindentedWhenPretty() throws {
        let raw = #"{"a":[1.50,{"b":"x, {y}: [z] \"q\" \\"}],"c":{},"d":[],"e":"\u00e9"}"#
        let value: JSONValue = .object([("resource", .verbatim(raw)), ("n", .int(2))])
        XCTAssertEqual(value.serialized(), #"{"resource":"# + raw + #","n":2}"#)
        let pretty = value.serialized(pretty: true)
        XCTAssertEqual(pretty, #"""
            {
              "resource": {
                "a": [
                  1.50,
                  {
                    "b": "x, {y}: [z] \"q\" \\"
                  }
                ],
                "c": {},
                "d": [],
                "e": "\u00e9"
              },
              "n": 2
            }
            """#)
        let parsed = try JSONSerialization.jsonObject(with: Data(pretty.utf8)) as? [String: Any]
        XCTAssertEqual(((parsed?["resource"] as? [String: Any])?["a"] as? [Any])?.count, 2)
    }
}
