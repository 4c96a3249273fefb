import HReaderRecords
import XCTest

/// `PNMImage`: what netpbm's converters and `pdftoppm -gray` hand the QR reader, as grey pixels;
/// truncated, oversized and malformed pictures refused before anything is allocated for them.
final class PNMImageTests: XCTestCase {
    func testGreyColourAndBitmapPicturesBecomeGreyPixels() throws {
        let grey = try PNMImage(Array("P5\n# made by a test\n3 1\n255\n".utf8) + [0, 128, 255], maxPixels: 100)
        XCTAssertEqual([grey.width, grey.height], [3, 1])
        XCTAssertEqual(grey.grey, [0, 128, 255])

        // P6: luma of red, green, blue, white; 16-bit samples scaled from maxval.
        let colour = try PNMImage(Array("P6 4 1 255\n".utf8) + [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255], maxPixels: 100)
        XCTAssertEqual(colour.grey, [76, 149, 29, 255])
        let deep = try PNMImage(Array("P5 2 1 65535\n".utf8) + [0xFF, 0xFF, 0x80, 0x00], maxPixels: 100)
        XCTAssertEqual(deep.grey, [255, 127])

        // P4: one bit a pixel, 1 black, each row padded to a byte.
        let bitmap = try PNMImage(Array("P4\n10 2\n".utf8) + [0b1000_0000, 0b0100_0000, 0b0000_0000, 0b1100_0000], maxPixels: 100)
        XCTAssertEqual(bitmap.grey, [0, 255, 255, 255, 255, 255, 255, 255, 255, 0,
                                     255, 255, 255, 255, 255, 255, 255, 255, 0, 0])
    }

    func testTruncatedHugeAndMalformedPicturesAreRefused() {
        func refused(_ bytes: [UInt8], _ why: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try PNMImage(bytes, maxPixels: 1_000_000), file: file, line: line) { error in
                XCTAssertTrue("\(error)".contains(why), "\(error)", file: file, line: line)
            }
        }
        refused(Array("P5 3 2 255\n".utf8) + [1, 2, 3, 4, 5], "ends before its last row")
        refused(Array("P5 100000 100000 255\n".utf8), "more than 1000000 pixels")
        refused(Array("P5 0 5 255\n".utf8), "no pixels")
        refused(Array("P5 3 1 70000\n".utf8) + [1, 2, 3], "out of range")
        refused(Array("P5 12345678 1 255\n".utf8), "too long")
        refused(Array("P3 1 1 255\n1\n".utf8), "magic")
        refused(Array("P5 3 1 255".utf8), "does not end")
        refused(Array("P5 3 # no end".utf8), "lacks a number")
    }
}
