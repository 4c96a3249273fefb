import XCTest
@testable import HReaderModel

/// Apple Health's time texts are written byte by byte (an export writes millions): the same bytes as
/// the plain interpolation they replaced, over centuries, offsets either side of UTC and odd years.
final class AppleHealthDateTests: XCTestCase {
    func testTextsAreTheInterpolatedOnesByteForByte() {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        func four(_ v: Int) -> String { v < 10 ? "000\(v)" : v < 100 ? "00\(v)" : v < 1000 ? "0\(v)" : "\(v)" }
        func text(_ epoch: Int64, _ offset: Int) -> String {
            let c = AppleHealthDate.civil(epoch, offset), o = abs(offset)
            return "\(four(c.year))-\(two(c.month))-\(two(c.day)) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) "
                + "\(offset < 0 ? "-" : "+")\(two(o / 60))\(two(o % 60))"
        }
        func rfc3339(_ epoch: Int64, _ offset: Int) -> String {
            let c = AppleHealthDate.civil(epoch, offset), o = abs(offset)
            let zone = offset == 0 ? "Z" : "\(offset < 0 ? "-" : "+")\(two(o / 60)):\(two(o % 60))"
            return "\(four(c.year))-\(two(c.month))-\(two(c.day))T\(two(c.hour)):\(two(c.minute)):\(two(c.second))\(zone)"
        }
        var epochs: [Int64] = [0, -1, 86_399, 951_782_400, 1_794_268_800, 253_402_300_799, 253_402_300_800, -62_135_596_800, -62_167_219_200,
                               -62_198_755_200, 32_503_680_000_00]
        var state: UInt64 = 42
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            epochs.append(Int64(bitPattern: state >> 20) % 20_000_000_000)
        }
        for epoch in epochs {
            for offset in [0, 60, -300, 330, 345, -570, 840, -720, 1439, -1439, 6000] {
                XCTAssertEqual(AppleHealthDate.text(epoch, offsetMinutes: offset), text(epoch, offset), "\(epoch) \(offset)")
                XCTAssertEqual(AppleHealthDate.rfc3339(epoch, offsetMinutes: offset), rfc3339(epoch, offset), "\(epoch) \(offset)")
            }
        }
    }
}
