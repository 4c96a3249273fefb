/// How hreader writes numbers as JSON text, in one place: what `JSONValue.double(_:)`,
/// `JSONValue.decimal(_:places:)` and `JSONByteWriter` write, and the grammar the parser accepts.
public enum JSONNumber {
    /// Whether `text` is a JSON number (RFC 8259 §6): `-12`, `0.5`, `1.5E+3`; not `+1`, `.5`, `01`, `1.`.
    public static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard !bytes.isEmpty else { return false }
            let scan = JSONParser.numberEnd(in: bytes, from: 0)
            return scan.error == nil && scan.end == bytes.count
        }
    }

    /// A whole Double below 10^15 in magnitude as an integer (written without a fraction), else nil.
    static func integral(_ value: Double) -> Int64? {
        value == value.rounded() && abs(value) < 1e15 ? Int64(value) : nil
    }

    /// The text of a Double: `120` for a whole number below 10^15, else Swift's shortest form that
    /// reads back as the same Double (`72.25`, `0.1`, `1e+20`); nil for NaN and the infinities.
    public static func text(_ value: Double) -> String? {
        if let whole = integral(value) { return String(whole) }
        return value.isFinite ? String(value) : nil
    }

    /// `value` rounded to `places` decimals (0 to 15), always written with them: `decimal(118, places: 1)`
    /// is `118.0`, `decimal(-0.04, places: 1)` is `0.0`. Needs no Foundation (whose `%.1f` follows the
    /// locale). A value too large to scale is written by `text(_:)`; nil when not finite.
    public static func decimal(_ value: Double, places: Int) -> String? {
        guard value.isFinite else { return nil }
        let places = min(max(places, 0), 15)
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let scaledValue = (abs(value) * scale).rounded()
        guard scaledValue < 9.2e18 else { return text(value) }
        let scaled = Int64(scaledValue)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard places > 0 else { return sign + String(scaled) }
        let whole = scaled / Int64(scale)
        var fraction = String(scaled % Int64(scale))
        while fraction.count < places { fraction = "0" + fraction }
        return "\(sign)\(whole).\(fraction)"
    }
}
