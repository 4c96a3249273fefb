#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Formatting instants as RFC 3339 in UTC without Foundation's formatters (costly to create,
/// and not Sendable, so they cannot be shared).
public enum RFC3339 {
    public static func utc(_ epoch: Int64) -> String {
        var t = time_t(epoch)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = Int(parts.tm_year) + 1900
        let y = year < 0 ? "-" + String(-year) : String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(y)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// "YYYY-MM-DD" (RFC 3339's full-date), without `String(format:)`, whose first call costs a page.
    public static func date(year: Int, month: Int, day: Int) -> String {
        func padded(_ n: Int, _ width: Int) -> String {
            let digits = String(n)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }
}
