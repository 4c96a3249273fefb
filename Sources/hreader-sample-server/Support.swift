import Foundation

/// Mutable state shared between event loops and tasks: every access holds the lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// MARK: - Time

enum Clock {
    static func nowEpochMilliseconds() -> Double { Date().timeIntervalSince1970 * 1000 }

    /// `2024-06-01T12:00:00.123Z`, as FHIR's instant.
    static func instant(_ date: Date = Date()) -> String {
        let ms = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let seconds = ms >= 0 ? ms / 1000 : (ms - 999) / 1000
        let millis = Int(ms - seconds * 1000)
        return iso8601(epochSeconds: seconds, fractionMillis: millis)
    }

    /// UTC ISO 8601 from epoch seconds, computed by hand: thread-safe and locale-free.
    static func iso8601(epochSeconds: Int64, fractionMillis: Int? = nil) -> String {
        let days = Int(epochSeconds >= 0 ? epochSeconds / 86_400 : (epochSeconds - 86_399) / 86_400)
        let secondOfDay = Int(epochSeconds - Int64(days) * 86_400)
        let (y, m, d) = civilDate(daysSinceEpoch: days)
        var text = "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2))"
        if let fractionMillis { text += ".\(pad(fractionMillis, 3))" }
        return text + "Z"
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (era-based arithmetic).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let monthIndex = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilDate(daysSinceEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

// MARK: - Randomness

/// Unguessable hex for tokens (the system generator is cryptographically secure).
func randomHex(bytes count: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    var text = ""
    for _ in 0..<count {
        let byte = UInt8.random(in: 0...255, using: &generator)
        text += (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }
    return text
}

/// SplitMix64: a small seeded generator of our own, so the synthetic data is the same on every
/// toolchain for a seed (the standard library's `random(in:using:)` does not promise that).
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ 0x2545_F491_4F6C_DD1D }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound + 1)
        return range.lowerBound + Int(next() % span)
    }

    mutating func double(_ range: ClosedRange<Double>) -> Double {
        let unit = Double(next() >> 11) / Double(1 << 53)
        return range.lowerBound + unit * (range.upperBound - range.lowerBound)
    }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    mutating func hex(_ count: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count { bytes.append(digits[Int(next() % 16)]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

// MARK: - URLs and forms

enum URLText {
    /// Percent-decoding; with `plusAsSpace`, form encoding's `+`. Invalid escapes are kept as written.
    static func decode(_ text: Substring, plusAsSpace: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = hexValue(iterator[iterator.startIndex]),
                let low = hexValue(iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator = iterator.dropFirst(2)
            } else if byte == UInt8(ascii: "+") && plusAsSpace {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `a=1&b=2` into decoded pairs, in order.
    static func parseQuery(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let eq = pair.firstIndex(of: "=") {
                return (decode(pair[..<eq], plusAsSpace: true), decode(pair[pair.index(after: eq)...], plusAsSpace: true))
            }
            return (decode(pair, plusAsSpace: true), "")
        }
    }

    /// Encodes everything but RFC 3986's unreserved characters.
    static func encodeComponent(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

enum XMLText {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}

/// Messages for the person running the server; stdout carries only the `listening` line.
func writeStandardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
