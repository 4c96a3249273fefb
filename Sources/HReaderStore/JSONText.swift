/// JSON string escaping, shared by every JSON writer in hreader (codes column, timeline payloads,
/// lossless records).
public enum JSONText {
    /// Appends `s` to `out` as a JSON string literal.
    public static func quote(_ s: String, into out: inout String) {
        out += "\""
        // Most texts need no escape: appended whole instead of scalar by scalar.
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    public static func quoted(_ s: String) -> String {
        var out = ""
        quote(s, into: &out)
        return out
    }
}
