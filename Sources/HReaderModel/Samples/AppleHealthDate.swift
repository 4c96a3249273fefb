/// Apple Health's own time format, `yyyy-MM-dd HH:mm:ss ±HHMM`, as an instant and the offset it was
/// written with, and back: what lets a sample keep numbers and still give its text back exactly.
public enum AppleHealthDate {
    /// The instant (epoch seconds) and the offset (minutes east of UTC); nil when `text` is not in the format.
    /// With `exact`, only a text that `text(_:offsetMinutes:)` gives back unchanged.
    public static func parse(_ text: String, exact: Bool = false) -> (epoch: Int64, offsetMinutes: Int)? {
        var text = text
        return text.withUTF8 { parse($0, exact: exact) }
    }

    /// The same over UTF-8 bytes (the parser's buffers: no string is made).
    public static func parse(_ b: UnsafeBufferPointer<UInt8>, exact: Bool = false) -> (epoch: Int64, offsetMinutes: Int)? {
        guard b.count == 25, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x20,
              b[20] == 0x2B || b[20] == 0x2D else { return nil }
        func number(_ from: Int, _ to: Int) -> Int? {
            var value = 0
            for i in from..<to {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                value = value * 10 + Int(b[i] - 0x30)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 7), let day = number(8, 10), let hour = number(11, 13),
              let minute = number(14, 16), let second = number(17, 19), let offsetHours = number(21, 23),
              let offsetMinutes = number(23, 25), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
              second < 61, offsetHours < 24, offsetMinutes < 60 else { return nil }
        let offset = (b[20] == 0x2D ? -1 : 1) * (offsetHours * 60 + offsetMinutes)
        if exact {
            // What `text(_:offsetMinutes:)` writes back unchanged: a real day, no leap second, no "-0000".
            guard day <= CivilDays.daysIn(month: month, of: year), second < 60, offset != 0 || b[20] == 0x2B else { return nil }
        }
        let epoch = Int64(CivilDays.days(year, month, day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset * 60)
        return (epoch, offset)
    }

    /// The parts of the wall-clock time at `offsetMinutes`.
    static func civil(_ epoch: Int64, _ offsetMinutes: Int) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let local = epoch + Int64(offsetMinutes) * 60
        let days = Int(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
        let seconds = Int(local - Int64(days) * 86_400)
        let (y, m, d) = CivilDays.date(days)
        return (y, m, d, seconds / 3600, seconds / 60 % 60, seconds % 60)
    }

    /// `yyyy-MM-dd HH:mm:ss ±HHMM` (`+0000` for UTC).
    public static func text(_ epoch: Int64, offsetMinutes: Int) -> String {
        let o = abs(offsetMinutes)
        return written(epoch, offsetMinutes, between: 0x20) { out in
            out.append(0x20)
            out.append(offsetMinutes < 0 ? 0x2D : 0x2B)
            digits(o / 60, 2, &out)
            digits(o % 60, 2, &out)
        }
    }

    /// The same instant as RFC 3339 keeping the offset (`Z` for UTC), as the mapping stores it.
    public static func rfc3339(_ epoch: Int64, offsetMinutes: Int) -> String {
        let o = abs(offsetMinutes)
        return written(epoch, offsetMinutes, between: 0x54) { out in
            guard offsetMinutes != 0 else { return out.append(0x5A) }
            out.append(offsetMinutes < 0 ? 0x2D : 0x2B)
            digits(o / 60, 2, &out)
            out.append(0x3A)
            digits(o % 60, 2, &out)
        }
    }

    /// `yyyy-MM-dd`, `between`, `HH:mm:ss`, then the zone as `zone` writes it: bytes, not
    /// interpolated strings (a sample's entry writes two or three of these, an export millions).
    private static func written(_ epoch: Int64, _ offsetMinutes: Int, between: UInt8, zone: (inout [UInt8]) -> Void) -> String {
        let c = civil(epoch, offsetMinutes)
        var out: [UInt8] = []
        out.reserveCapacity(25)
        if c.year < 0 { out += "000".utf8 }
        digits(c.year, 4, &out)
        out.append(0x2D)
        digits(c.month, 2, &out)
        out.append(0x2D)
        digits(c.day, 2, &out)
        out.append(between)
        digits(c.hour, 2, &out)
        out.append(0x3A)
        digits(c.minute, 2, &out)
        out.append(0x3A)
        digits(c.second, 2, &out)
        zone(&out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` in at least `count` digits, zero-padded (a negative or longer one as it is).
    private static func digits(_ value: Int, _ count: Int, _ out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        guard value >= 0, value < divisor * 10 else { return out += String(value).utf8 }
        var rest = value
        while divisor > 0 {
            out.append(0x30 + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}

/// HealthKit identifiers in words, and the content hash behind Apple Health remote ids: shared by
/// the mapping (HReaderRecords) and the samples' reads (here), so both say the same.
public enum HealthKitText {
    /// `HKQuantityTypeIdentifierUnderwaterDepth` → "Underwater depth";
    /// `HKCategoryValueSeverityModerate` → "Moderate".
    public static func readable(_ identifier: String) -> String {
        var name = identifier
        for prefix in ["HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier", "HKWorkoutActivityType",
                       "HKCategoryValueSeverity", "HKCategoryValueSleepAnalysis", "HKCategoryValue", "HKDataType"] where name.hasPrefix(prefix) {
            name.removeFirst(prefix.count)
            break
        }
        guard !name.isEmpty, name != identifier || identifier.hasPrefix("HK") else { return identifier }
        var words = ""
        for (i, character) in name.enumerated() {
            if character.isUppercase, i > 0 { words += " " + character.lowercased() } else { words.append(character) }
        }
        return words.prefix(1).uppercased() + words.dropFirst()
    }

    /// FNV-1a, 64 bits, over the UTF-8 bytes, as 16 lower-case hex digits. Not cryptographic: it
    /// names content, it does not protect it.
    public static func fnv1a64(_ text: String) -> String { hex(fnv1a64Hash(text)) }

    /// `from`: the hash of the text before this one (FNV-1a reads its bytes in one run).
    static func fnv1a64Hash(_ text: String, from start: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var hash = start
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func hex(_ hash: UInt64) -> String {
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The remote id of an Apple Health element: a hash of what it says. Attributes not given count as "".
    public static func remoteID(kind: String, _ attribute: (String) -> String?) -> String {
        remoteID(hash: remoteIDHash(kind: kind, attribute))
    }

    /// The hash a remote id writes: the id in eight bytes, for sets of many of them.
    public static func remoteIDHash(kind: String, _ attribute: (String) -> String?) -> UInt64 {
        // The hash of kind, then each attribute, separated by U+001F, fed a piece at a time.
        var hash = fnv1a64Hash(kind)
        for name in remoteIDAttributes {
            hash = fnv1a64Hash("\u{1F}", from: hash)
            if let value = attribute(name) { hash = fnv1a64Hash(value, from: hash) }
        }
        return hash
    }

    private static let remoteIDAttributes = ["type", "workoutActivityType", "sourceName", "startDate", "endDate", "value", "unit", "duration"]

    public static func remoteID(hash: UInt64) -> String { "HK:" + hex(hash) }
}
