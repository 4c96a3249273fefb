import XCTest
import HReaderJSON
@testable import hreader

/// `Output.table`: one line per row, whatever the cells hold, fitted to a terminal's width.
final class TableOutputTests: XCTestCase {
    let rows = [["ID", "DESCRIPTION", "VALUE"],
                ["1", "Problems: the document's section narrative (no coded entries)", "Asthma\nsince 2009\r\n\tmild, intermittent"],
                ["22", "Glucose", "5.4 mmol/L"]]

    func testEveryRowIsOneLineAndFitsTheWidth() {
        let lines = Output.tableLines(rows.map { $0.map(Output.oneLine) }, width: 40)
        XCTAssertEqual(lines.count, 3)
        for line in lines {
            XCTAssertFalse(line.contains(where: \.isNewline), line)
            XCTAssertLessThanOrEqual(line.count, 40, line)
        }
        XCTAssertTrue(lines[1].hasPrefix("1   Problems: the d"), lines[1])
        XCTAssertTrue(lines[1].contains("…"), lines[1])
        XCTAssertTrue(lines[2].hasSuffix("5.4 mmol/L"), "short cells stay whole: \(lines[2])")
    }

    func testPipedOutputKeepsWholeCellsOnOneLine() {
        let lines = Output.tableLines(rows.map { $0.map(Output.oneLine) }, width: nil)
        XCTAssertTrue(lines[1].hasSuffix("Asthma since 2009 mild, intermittent"), lines[1])
        XCTAssertEqual(lines.count, 3)
    }

    /// A listing streamed in batches writes the bytes `Output.json` writes for the whole value:
    /// nested objects, strings to escape, keys out of order, an empty list.
    func testStreamedJSONIsByteForByteTheWholeValue() {
        let items: [JSONValue] = (0..<7).map { i in
            .object([("type", .string("result")), ("id", .int(Int64(i))), ("description", .string("Glucose \"fasting\"\n\(i)")),
                     ("codes", .object([("LOINC", .strings(["2345-7"]))])), ("sources", .array(i % 2 == 0 ? [] : [.object([("name", .string("Lab"))])]))])
        }
        for batches in [[7], [1, 6], [3, 0, 4], [1, 1, 1, 1, 1, 1, 1], [0]] {
            var written = ""
            let stream = Output.JSONArrayStream("entries") { written += $0 }
            var start = 0
            for size in batches { stream.append(Array(items[start..<min(items.count, start + size)])); start += size }
            stream.finish()
            let whole: JSONValue = .object([("entries", .array(Array(items.prefix(start))))])
            XCTAssertEqual(written, whole.serialized(pretty: true, sortingKeys: true) + "\n", "batches \(batches)")
        }
    }

    /// Streamed tables take the widths of their first rows; piped, a longer cell later stays whole.
    func testStreamedTableKeepsTheFirstWidthsAndWholeCellsWhenPiped() {
        let widths = Output.columnWidths(rows.map { $0.map(Output.oneLine) }, width: nil)
        let later = Output.tableLines([["333", "A much longer description than any before it, kept whole", "1"]], widths: widths, cut: false)
        XCTAssertTrue(later[0].hasPrefix("333  A much longer description than any before it, kept whole"), later[0])
        let cut = Output.tableLines([["333", String(repeating: "x", count: 200), "1"]], widths: widths, cut: true)
        XCTAssertTrue(cut[0].contains("…"), cut[0])
    }
}
