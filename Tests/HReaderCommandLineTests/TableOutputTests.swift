import XCTest
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
}
