extension ClinicalTime {
    /// `DDDD-DD-DDTDD:DD:DD[.D+](Z|±DD:DD)`, digits and punctuation only, whatever the values.
    static func hasRFC3339Shape(_ text: String) -> Bool {
        let b = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Bool { range.upperBound <= b.count && range.allSatisfy { (0x30...0x39).contains(b[$0]) } }
        guard b.count >= 20, digits(0..<4), b[4] == 0x2D, digits(5..<7), b[7] == 0x2D, digits(8..<10), b[10] == 0x54, digits(11..<13),
              b[13] == 0x3A, digits(14..<16), b[16] == 0x3A, digits(17..<19) else { return false }
        var i = 19
        if b[i] == 0x2E {
            i += 1
            let first = i
            while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
            guard i > first, i < b.count else { return false }
        }
        if b[i] == 0x5A { return i + 1 == b.count }
        return (b[i] == 0x2B || b[i] == 0x2D) && i + 6 == b.count && digits((i + 1)..<(i + 3)) && b[i + 3] == 0x3A && digits((i + 4)..<(i + 6))
    }

    /// `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm)` as epoch seconds (rounded down, as
    /// `ClinicalTime.parse` does), computed directly: Foundation's `ISO8601DateFormatter` costs about
    /// 0.4 ms to create, and an import parses millions.
    /// Nil for any other form, which then goes to the formatter.
    public static func rfc3339Instant(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func number(_ from: Int, _ count: Int) -> Int? {
            var value = 0
            for i in from..<from + count {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                value = value * 10 + Int(b[i] - 0x30)
            }
            return value
        }
        guard let year = number(0, 4), b[4] == 0x2D, let month = number(5, 2), b[7] == 0x2D, let day = number(8, 2),
              b[10] == 0x54, let hour = number(11, 2), b[13] == 0x3A, let minute = number(14, 2), b[16] == 0x3A,
              let second = number(17, 2) else { return nil }
        var i = 19
        if b[i] == 0x2E {  // a fraction, dropped by rounding down
            i += 1
            let digits = i
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            guard i > digits, i < b.count else { return nil }
        }
        var offset = 0
        if b[i] == 0x5A, i + 1 == b.count {
            offset = 0
        } else if b[i] == 0x2B || b[i] == 0x2D, i + 6 == b.count, let hours = number(i + 1, 2), b[i + 3] == 0x3A,
                  let minutes = number(i + 4, 2), hours < 24, minutes < 60 {
            offset = (hours * 3600 + minutes * 60) * (b[i] == 0x2B ? 1 : -1)
        } else {
            return nil
        }
        // Before 1600 Foundation's calendar is Julian, so leave those (rare) dates to `ClinicalTime.parse`.
        guard year >= 1600, (1...12).contains(month), day >= 1, day <= CivilDays.daysIn(month: month, of: year), hour < 24, minute < 60, second < 60 else {
            return nil
        }
        return Int64(CivilDays.days(year, month, day)) * 86400 + Int64(hour * 3600 + minute * 60 + second - offset)
    }
}
