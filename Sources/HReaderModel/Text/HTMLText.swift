/// HTML (and XHTML) escaping, shared by every page hreader writes: the web view, the printable
/// summary and its IPS narratives, the SMART login's answer to the browser. Health data is
/// untrusted text: `&`, `<`, `>`, `"` and `'` always become entities.
public enum HTMLText {
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
