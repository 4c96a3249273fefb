/// Lower-case hexadecimal, by table: `String(format: "%02x")` goes through Foundation's formatter
/// for every byte, which an export that names millions of resources by their digest cannot afford.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// "9f2c…", two digits a byte.
    public static func lowercase(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes { append(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first 16 bytes as a UUID's text, "8-4-4-4-12" hex digits.
    public static func uuid(_ bytes: [UInt8]) -> String {
        precondition(bytes.count >= 16, "a UUID is 16 bytes")
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in bytes.prefix(16).enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            append(byte, to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0xF)])
    }
}
