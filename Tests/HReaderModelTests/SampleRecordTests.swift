import XCTest
@testable import HReaderModel

/// The samples' columns as the parsing thread fills them from libxml2's bytes: the fast paths
/// (integers read in place, strings found again by their bytes) give what the plain ones give.
final class SampleRecordTests: XCTestCase {
    private func withBytes<T>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        var text = text
        return text.withUTF8(body)
    }

    func testValuesReadFromBytesAreStoredAsFromText() {
        let texts = ["72", "0", "-3", "-0", "007", "+1", "1e3", "72.5", "72.50", "0.98", "-", "", "123456789012345",
                     "1234567890123456", "-999999999999999", "12a", "HKCategoryValueSeverityModerate", " 7", "7 ", "٣"]
        for text in texts {
            XCTAssertEqual(withBytes(text) { SampleValue.stored($0) }, SampleValue.stored(text), "value \"\(text)\"")
        }
        XCTAssertEqual(withBytes("72") { SampleValue.stored($0) }, .real(72))
        XCTAssertEqual(withBytes("-0") { SampleValue.stored($0) }, .text("-0"), "would not read back")
    }

    func testInternedStringsAreFoundAgainWhateverTheFieldSawLast() {
        var interner = StringInterner()
        let a = withBytes("HKQuantityTypeIdentifierHeartRate") { interner.string($0, field: 1) }
        let b = withBytes("HKQuantityTypeIdentifierStepCount") { interner.string($0, field: 1) }
        let a2 = withBytes("HKQuantityTypeIdentifierHeartRate") { interner.string($0, field: 1) }
        let a3 = withBytes("HKQuantityTypeIdentifierHeartRate") { interner.string($0, field: 2) }
        XCTAssertEqual([a, b, a2, a3], ["HKQuantityTypeIdentifierHeartRate", "HKQuantityTypeIdentifierStepCount",
                                        "HKQuantityTypeIdentifierHeartRate", "HKQuantityTypeIdentifierHeartRate"])
        XCTAssertEqual(withBytes("") { interner.string($0, field: 3) }, "")
        XCTAssertEqual(withBytes("x") { interner.string($0, field: 3) }, "x")
    }

    func testSeriesAlternatingBetweenSourcesAreTheSameObjects() {
        var interner = StringInterner()
        func series(_ source: String) -> SampleSeriesStrings {
            interner.series(type: "HKQuantityTypeIdentifierHeartRate", sourceName: source, sourceVersion: "1", device: "", unit: "count/min")
        }
        let watch = series("Watch"), phone = series("Phone")
        for _ in 0..<20 {
            XCTAssertTrue(series("Watch") === watch)
            XCTAssertTrue(series("Phone") === phone)
        }
        // More sources than the recent ones kept: still one object per series.
        let many = (0..<20).map { series("Source \($0)") }
        XCTAssertTrue(series("Watch") === watch)
        for (i, object) in many.enumerated() { XCTAssertTrue(series("Source \(i)") === object) }
    }
}
