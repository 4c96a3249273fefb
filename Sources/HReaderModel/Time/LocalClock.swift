#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's local time zone as the C library reads it (TZ, else /etc/localtime: tzdata, what `date`
/// shows), for the local days and hours DayCalendar counts. Foundation's `TimeZone.current` would load ICU's
/// zone data and build a Calendar first, about a millisecond of a short command.
///
/// Wall-clock times that happen twice (summer time ending) or never (it starting) are resolved as
/// Foundation's Calendar resolves them (`instant(ofWall:adding:)`). DayCalendarTests hold the two to
/// the same answers in zones with such days.
enum LocalClock {
    /// The local wall clock at `epoch`, as seconds since 1970-01-01T00:00 of that clock; nil when the C
    /// library cannot say.
    static func wall(at epoch: Int64) -> Int64? {
        guard let offset = offset(at: epoch) else { return nil }
        return epoch + offset
    }

    /// The offset from UTC in effect at `epoch`, in seconds.
    static func offset(at epoch: Int64) -> Int64? {
        prepared
        var time = time_t(epoch)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return nil }
        return Int64(parts.tm_gmtoff)
    }

    /// The instant the local clock shows `wall`, as Foundation's Calendar finds it: for a day's start,
    /// the first of a time shown twice (summer time ending), and for a time the clock skips, the moment
    /// of the change (the time read under the offset before it). With `adding`, as Calendar's
    /// `date(byAdding:)` finds a page's start: the second of two, and a time in a whole skipped day
    /// (Samoa, 30 December 2011) the same time the day before.
    static func instant(ofWall wall: Int64, adding: Bool = false) -> Int64? {
        instant(ofWall: wall, adding: adding, offset: offset(at:))
    }

    /// `instant(ofWall:adding:)` for the clock whose offset from UTC at an instant is `offset`: the
    /// local zone's, or a named zone's (DayCalendar's `instant(ofWall:)`).
    static func instant(ofWall wall: Int64, adding: Bool = false, offset: (Int64) -> Int64?) -> Int64? {
        // The offsets well before and after: a clock changes at most once in that span where it matters.
        guard let before = offset(wall - 86_400 - 14 * 3600), let after = offset(wall + 86_400 + 14 * 3600) else { return nil }
        var shown: [Int64] = []
        for candidate in [wall - before, wall - after] where offset(candidate).map({ candidate + $0 }) == wall {
            shown.append(candidate)
        }
        if let first = shown.min(), let last = shown.max() { return adding ? last : first }
        return adding && after - before >= 86_400 ? wall - after : wall - before
    }

    /// Reads TZ once, before the first conversion (localtime_r need not).
    private static let prepared: Void = tzset()

    /// The local zone's name as the C library is told it: `TZ` (a leading ':' dropped; a path into
    /// the zoneinfo tree read as the zone it names), else the zone `/etc/localtime` links into that
    /// tree; nil when neither names one (an empty `TZ` is UTC: "UTC"; a POSIX rule such as
    /// `EST5EDT` is its own name).
    static var name: String? {
        if let tz = getenv("TZ").map({ String(cString: $0) }) {
            var text = Substring(tz)
            if text.hasPrefix(":") { text = text.dropFirst() }
            if text.isEmpty { return "UTC" }
            return zoneName(ofPath: String(text)) ?? (text.hasPrefix("/") ? nil : String(text))
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/etc/localtime", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return zoneName(ofPath: target)
    }

    /// "Europe/Paris" of ".../zoneinfo/Europe/Paris" (also of "zoneinfo/posix/…" and "…/right/…").
    private static func zoneName(ofPath path: String) -> String? {
        guard let range = path.range(of: "zoneinfo/") else { return nil }
        var name = Substring(path[range.upperBound...])
        for prefix in ["posix/", "right/"] where name.hasPrefix(prefix) { name = name.dropFirst(prefix.count) }
        return name.isEmpty ? nil : String(name)
    }
}
