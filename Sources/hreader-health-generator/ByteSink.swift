/// An append-only UTF-8 byte buffer with the few formatters the export needs, kept free of
/// String building on the hot path (a million records must stay fast and small).
struct ByteSink {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    var count: Int { bytes.count }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func raw(_ encoded: [UInt8]) { bytes.append(contentsOf: encoded) }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Text escaped for an XML attribute value or character data.
    mutating func escaped(_ text: String) { bytes.append(contentsOf: ByteSink.escape(text)) }

    static func escape(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for unit in text.utf8 {
            switch unit {
            case UInt8(ascii: "&"): out.append(contentsOf: Array("&amp;".utf8))
            case UInt8(ascii: "<"): out.append(contentsOf: Array("&lt;".utf8))
            case UInt8(ascii: ">"): out.append(contentsOf: Array("&gt;".utf8))
            case UInt8(ascii: "\""): out.append(contentsOf: Array("&quot;".utf8))
            default: out.append(unit)
            }
        }
        return out
    }

    mutating func int(_ value: Int) {
        var number = value
        if number < 0 {
            bytes.append(UInt8(ascii: "-"))
            number = -number
        }
        var divisor = 1
        while number / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8((number / divisor) % 10))
            divisor /= 10
        }
    }

    /// Zero-padded to `width` digits (for non-negative values).
    mutating func padded(_ value: Int, width: Int) {
        var digits = 1
        var limit = 10
        while value >= limit && digits < width {
            digits += 1
            limit *= 10
        }
        for _ in digits..<width { bytes.append(UInt8(ascii: "0")) }
        int(value)
    }

    /// `scaled / 10^places` in plain decimal notation, trailing zeros dropped ("61.2", "72", "0.97").
    mutating func decimal(_ scaled: Int, places: Int) {
        if places == 0 {
            int(scaled)
            return
        }
        var magnitude = scaled
        if magnitude < 0 {
            bytes.append(UInt8(ascii: "-"))
            magnitude = -magnitude
        }
        var power = 1
        for _ in 0..<places { power *= 10 }
        int(magnitude / power)
        var fraction = magnitude % power
        if fraction == 0 { return }
        var kept = places
        while fraction % 10 == 0 {
            fraction /= 10
            kept -= 1
        }
        bytes.append(UInt8(ascii: "."))
        padded(fraction, width: kept)
    }

    /// Swift's shortest round-tripping form, as the real exports print durations ("5.19412346680959").
    mutating func double(_ value: Double) {
        bytes.append(contentsOf: Array(value.description.utf8))
    }

    mutating func hex(_ value: UInt64) {
        let digits: StaticString = "0123456789abcdef"
        var started = false
        var shift = 60
        while shift >= 0 {
            let nibble = Int((value >> UInt64(shift)) & 0xF)
            if nibble != 0 || started || shift == 0 {
                started = true
                digits.withUTF8Buffer { bytes.append($0[nibble]) }
            }
            shift -= 4
        }
    }

    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }
}
