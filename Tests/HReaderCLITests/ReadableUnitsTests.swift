import HReaderKit
import HReaderRecords
import XCTest

/// UCUM as people write it, and lab flags in words (ReadableUnits, ResultFlag).
final class ReadableUnitsTests: XCTestCase {
    func testUCUMReadsAsPeopleWriteIt() {
        let cases: [(String, String)] = [
            ("10*9/L", "×10⁹/L"), ("10*3/uL", "×10³/µL"), ("10^12/L", "×10¹²/L"), ("10*-3", "×10⁻³"),
            ("ug/dL", "µg/dL"), ("umol/L", "µmol/L"), ("m[iU]/mL", "mIU/mL"), ("[iU]/L", "IU/L"), ("u[IU]/mL", "µIU/mL"),
            ("mL/min/{1.73_m2}", "mL/min/1.73 m²"), ("{cells}/uL", "cells/µL"), ("g/m2", "g/m²"), ("[in_i]", "in"),
            ("mm[Hg]", "mmHg"), ("kg/m2", "kg/m²"), ("Cel", "°C"),
            // What people already write stays.
            ("mg/dL", "mg/dL"), ("U/L", "U/L"), ("%", "%"), ("mmol/L", "mmol/L"), ("units", "units"), ("count", "count"),
            ("fL", "fL"), ("pg", "pg"), ("Glucose in mg per dL", "Glucose in mg per dL"),
        ]
        for (ucum, written) in cases { XCTAssertEqual(ReadableUnits.readable(ucum), written, ucum) }
        XCTAssertEqual(ReadableUnits.quantity(5.2, unit: "10*12/L", codes: [:]).text, "5.2 ×10¹²/L")
    }

    func testFlagsReadInWords() {
        XCTAssertEqual(ResultFlag.words("N"), "normal")
        XCTAssertEqual(ResultFlag.words("LL"), "critically low")
        XCTAssertEqual(ResultFlag.words("h"), "high")
        XCTAssertEqual(ResultFlag.words("LX"), "below the low threshold")
        XCTAssertEqual(ResultFlag.words("ZZ"), "ZZ", "a code no table knows stays as it is")
    }
}
