import XCTest
import HReaderModel
@testable import HReaderRecords

/// Every LOINC code hreader writes of its own (the Apple Health and wearables mapping, the export's
/// catalog) is a LOINC code: its last digit is the check digit LOINC computes from the others (the
/// Mod 10 algorithm of LOINC's users' guide). Walking and running distance was written as
/// "41953-8" (no such code: 41953's check digit is 1) until 2026-12-03.
final class LOINCCodeTests: XCTestCase {
    /// LOINC's check digit: the digits in odd places from the right, read as a number, doubled;
    /// the digits of that and those in even places added; ten less the sum's last digit (0 for 10).
    static func checkDigit(_ number: String) -> Int {
        let digits = number.reversed().map { Int(String($0))! }
        let odd = Int(String(stride(from: 0, to: digits.count, by: 2).map { digits[$0] }.reversed().map(String.init).joined()))!
        let even = stride(from: 1, to: digits.count, by: 2).map { digits[$0] }.reduce(0, +)
        let sum = String(odd * 2).map { Int(String($0))! }.reduce(0, +) + even
        return (10 - sum % 10) % 10
    }

    static func isLOINC(_ code: String) -> Bool {
        let parts = code.split(separator: "-")
        guard parts.count == 2, parts[0].count >= 3, parts[1].count == 1, parts[0].allSatisfy(\.isNumber), let check = Int(parts[1]) else { return false }
        return checkDigit(String(parts[0])) == check
    }

    func testTheCheckDigitIsLOINCs() {
        for valid in ["8867-4", "55423-8", "41950-7", "41981-2", "2708-6", "59408-5", "85354-9", "41953-1", "55430-3"] {
            XCTAssertTrue(Self.isLOINC(valid), valid)
        }
        for invalid in ["41953-8", "8867-5", "55423-0", "8867", "x-1"] {
            XCTAssertFalse(Self.isLOINC(invalid), invalid)
        }
    }

    func testEveryCodeOfTheAppleHealthAndWearablesMappingIsALOINCCode() {
        var checked = 0
        for line in appleHealthTypeTable.split(separator: "\n") {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count >= 3, fields[2] != "-" else { continue }
            XCTAssertTrue(Self.isLOINC(fields[2]), "\(fields[0]): \(fields[2])")
            checked += 1
        }
        XCTAssertGreaterThan(checked, 15)
        XCTAssertEqual(AppleHealthMapper.seriesMapping("HKQuantityTypeIdentifierDistanceWalkingRunning").codes["LOINC"], ["55430-3"])
    }

    func testEveryCodeOfTheExportCatalogIsALOINCCode() {
        var checked = 0
        for line in ObservationCatalog.codeTable.split(separator: "\n") {
            let code = line.split(separator: "\t").first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
            guard !code.isEmpty else { continue }
            XCTAssertTrue(Self.isLOINC(code), code)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 15)
    }
}

/// The LOINC codes C-CDA's Problem Type value set names (a Problem Observation's `code` saying what
/// kind of statement it is) are LOINC codes too: "46766-9" was listed, which is none (46766's check
/// digit is 2), until 2026-12-03.
final class ProblemTypeCodeTests: XCTestCase {
    func testEveryLOINCProblemTypeCodeIsALOINCCode() {
        let loinc = CCDAMapping.problemTypeCodes.filter { $0.contains("-") }
        XCTAssertGreaterThan(loinc.count, 10)
        for code in loinc { XCTAssertTrue(LOINCCodeTests.isLOINC(code), code) }
    }
}
