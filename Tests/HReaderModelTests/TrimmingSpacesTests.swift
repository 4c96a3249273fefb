import Foundation
import XCTest
@testable import HReaderModel

/// `trimmingSpaces` trims as Foundation does, without it; times are read through it.
final class TrimmingSpacesTests: XCTestCase {
    func testTrimsWhatFoundationsWhitespacesTrimForEveryScalar() {
        // Every scalar of the Basic Multilingual Plane and the first supplementary one, around a time and alone.
        var checked = 0
        for value in UInt32(0)...0x1FFFF {
            // The zero-width space is in the Linux Foundation's older table and not in Apple's: trimmed always.
            guard let scalar = Unicode.Scalar(value), value != 0x200B else { continue }
            for text in ["\(scalar)2012-05-01\(scalar)", "\(scalar)", "\(scalar)\u{301}x", " \(scalar)\t"] {
                XCTAssertEqual(text.trimmingSpaces(), text.trimmingCharacters(in: .whitespaces), "U+\(String(value, radix: 16))")
                XCTAssertEqual(text.dropFirst(0).trimmingSpaces(), text.trimmingCharacters(in: .whitespaces), "U+\(String(value, radix: 16))")
            }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 120_000)
    }

    func testParsesTimesWithSpacesAroundThem() {
        XCTAssertEqual(ClinicalTime.parse(" \t2012-05-01T10:00:00Z\u{3000}")?.epoch, 1_335_866_400)
        XCTAssertEqual(ClinicalTime.parse("\u{A0}2012-05-01T10:00:00Z")?.text, "2012-05-01T10:00:00Z")
        XCTAssertNil(ClinicalTime.parse("  "))
        XCTAssertEqual(ClinicalTime.parse("\u{200B}2012-05-01T10:00:00Z")?.epoch, 1_335_866_400)
        XCTAssertNil(ClinicalTime.parse("2012-05-01T10:00:00Z\n"), "a newline is not a space: Foundation's .whitespaces keeps it")
    }
}
