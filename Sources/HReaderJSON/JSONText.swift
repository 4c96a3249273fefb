/// JSON string escaping, the one rule every JSON writer in hreader follows (the tree serializer,
/// `JSONByteWriter`, the codes column, the Apple Health samples' metadata): `"` `\` and the C0
/// controls are escaped (`\n`, `\r`, `\t`, else `\u00XX` in lower case); everything else, `/`
/// and non-ASCII included, is written as it is.
public enum JSONText {
    /// Appends `s` to `out` as a JSON string literal.
    public static func quote(_ s: String, into out: inout String) {
        // Most texts need no escape: appended whole.
        guard s.utf8.contains(where: needsEscape) else {
            out += "\""
            out += s
            out += "\""
            return
        }
        var bytes: [UInt8] = []
        quote(s, into: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    public static func quoted(_ s: String) -> String {
        var out = ""
        quote(s, into: &out)
        return out
    }

    /// Appends `s` to `out` as a JSON string literal in UTF-8.
    public static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for (i, byte) in bytes.enumerated() where needsEscape(byte) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                escape(byte, into: &out)
                runStart = i + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always) static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func escape(_ byte: UInt8, into out: inout [UInt8]) {
        let backslash = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""), backslash: out += [backslash, byte]
        case 0x0A: out += [backslash, UInt8(ascii: "n")]
        case 0x0D: out += [backslash, UInt8(ascii: "r")]
        case 0x09: out += [backslash, UInt8(ascii: "t")]
        default:
            let hex: StaticString = "0123456789abcdef"
            out += [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)]]
        }
    }
}
