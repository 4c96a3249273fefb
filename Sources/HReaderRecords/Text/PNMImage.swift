/// A netpbm picture (PBM P4, PGM P5, PPM P6: what `pngtopnm`, `jpegtopnm` and `pdftoppm -gray` write)
/// as 8-bit grey pixels, row after row: what zbar reads QR codes in. Untrusted bytes (a converter fed
/// a hostile picture writes what it likes): sizes are checked against the bytes there are before
/// anything is allocated, and a picture of more than `maxPixels` is refused.
public struct PNMImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width * height` samples, 0 black to 255 white.
    public let grey: [UInt8]

    public struct Failure: Error, CustomStringConvertible, Sendable, Equatable {
        public let description: String
    }

    public init(_ bytes: [UInt8], maxPixels: Int) throws {
        var at = 0
        func fail(_ why: String) -> Failure { Failure(description: "not a PNM picture: \(why)") }
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), [UInt8(ascii: "4"), UInt8(ascii: "5"), UInt8(ascii: "6")].contains(bytes[1]) else {
            throw fail("no P4, P5 or P6 magic")
        }
        let kind = bytes[1]
        at = 2
        func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D || b == 0x0B || b == 0x0C }
        /// A header number: after white space and `#` comments, up to 7 digits.
        func number() throws -> Int {
            while at < bytes.count, isSpace(bytes[at]) || bytes[at] == UInt8(ascii: "#") {
                if bytes[at] == UInt8(ascii: "#") { while at < bytes.count, bytes[at] != 0x0A, bytes[at] != 0x0D { at += 1 } } else { at += 1 }
            }
            var value = 0, digits = 0
            while at < bytes.count, bytes[at] >= UInt8(ascii: "0"), bytes[at] <= UInt8(ascii: "9") {
                guard digits < 7 else { throw fail("a number in its header is too long") }
                value = value * 10 + Int(bytes[at] - UInt8(ascii: "0"))
                at += 1; digits += 1
            }
            guard digits > 0 else { throw fail("its header lacks a number") }
            return value
        }
        let width = try number(), height = try number()
        let maxval = kind == UInt8(ascii: "4") ? 1 : try number()
        guard width > 0, height > 0 else { throw fail("it has no pixels") }
        guard width <= maxPixels / height else { throw Failure(description: "the picture has more than \(maxPixels) pixels") }
        guard maxval >= 1, maxval <= 65535 else { throw fail("its largest sample \(maxval) is out of range") }
        // One white-space byte ends the header.
        guard at < bytes.count, isSpace(bytes[at]) else { throw fail("its header does not end") }
        at += 1
        let samples = kind == UInt8(ascii: "6") ? 3 : 1, sampleBytes = maxval > 255 ? 2 : 1
        let rowBytes = kind == UInt8(ascii: "4") ? (width + 7) / 8 : width * samples * sampleBytes
        guard bytes.count - at >= rowBytes * height else { throw fail("it ends before its last row") }

        var grey = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            let row = at + y * rowBytes
            for x in 0..<width {
                switch kind {
                case UInt8(ascii: "4"):
                    // PBM: 1 is black.
                    grey[y * width + x] = bytes[row + x / 8] & (0x80 >> UInt8(x % 8)) != 0 ? 0 : 255
                default:
                    func sample(_ i: Int) -> Int {
                        let offset = row + (x * samples + i) * sampleBytes
                        return sampleBytes == 2 ? Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) : Int(bytes[offset])
                    }
                    // ITU-R BT.601 luma, scaled from maxval to 255.
                    let luma = samples == 3 ? (299 * sample(0) + 587 * sample(1) + 114 * sample(2)) / 1000 : sample(0)
                    grey[y * width + x] = UInt8(min(255, luma * 255 / maxval))
                }
            }
        }
        self.width = width
        self.height = height
        self.grey = grey
    }
}
