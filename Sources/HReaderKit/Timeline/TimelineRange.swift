import Foundation
import HReaderModel

/// hReader's five timeline scopes: each ends at a moment and starts one day, 7 days, one month,
/// one year or ten years earlier (calendar arithmetic in the moment's own time zone).
public enum TimelinePage: String, CaseIterable, Sendable {
    case day, week, month, year, decade

    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The calendar a page spans, back from its end (DayCalendar counts it).
    var span: DayCalendar.Span {
        switch self {
        case .day: return .days(1)
        case .week: return .days(7)
        case .month: return .months(1)
        case .year: return .years(1)
        case .decade: return .years(10)
        }
    }
}

/// An inclusive range of instants, epoch seconds, and the time zone its days are counted in.
public struct TimelineRange: Equatable, Sendable {
    /// The instants a range may start or end at: years 1 to 9999, what RFC 3339 can write. Anything
    /// outside is a mistake or an attack (Int64.min and .max overflowed the chart arithmetic), so
    /// callers that take raw epoch seconds (the web's query strings) refuse it.
    public static let supportedEpochs: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    public let start: Int64
    public let end: Int64
    /// The zone its days are counted in.
    public let zone: DayZone

    /// Days counted in `timeZone`; without one, in the local zone (the same `.local` the CLI and the web
    /// use, not Foundation's `TimeZone.current`, which would be a second way to the same zone).
    public init(start: Int64, end: Int64, timeZone: TimeZone? = nil) {
        self.init(start: start, end: end, zone: timeZone.map(DayZone.named) ?? .local)
    }

    public init(start: Int64, end: Int64, zone: DayZone) {
        self.start = start
        self.end = end
        self.zone = zone
    }

    /// The page ending at `at`, now when nil. The offset written in `at` (e.g. "+02:00") sets the time
    /// zone in which "one month earlier" and its days are counted; a bare date, no offset or now, the
    /// local zone.
    public static func page(_ page: TimelinePage, at: ClinicalTime?, now: Date = Date()) -> TimelineRange {
        let zone = at.map { dayZone(of: $0.text) } ?? .local
        let end = at?.epoch ?? Int64(now.timeIntervalSince1970.rounded(.down))
        var calendar = DayCalendar(zone)
        return TimelineRange(start: calendar.start(of: page.span, endingAt: end), end: end, zone: zone)
    }

    /// Where a page opened without a date ends (the web view's timeline): nil for now, unless nothing
    /// was recorded in the page ending now and something was before (`latest`, epoch seconds): then a
    /// second after the latest record, so that the page shows it rather than an empty stretch (an
    /// export imported weeks after it was made).
    public static func openingEnd(of page: TimelinePage, latest: Int64?, now: Date = Date()) -> Int64? {
        guard let latest, latest < self.page(page, at: nil, now: now).start else { return nil }
        return latest + 1
    }

    /// The range from `from` to `to` (`--from`/`--to`). Its days are counted in the offset both times
    /// state, as a page's are in the offset of `--at`; in the local zone when either states none or
    /// they differ (a range over a change to summer time, written in local times).
    public static func between(_ from: ClinicalTime, _ to: ClinicalTime) -> TimelineRange {
        let zone = dayZone(of: to.text)
        if case .fixed = zone, dayZone(of: from.text) == zone {
            return TimelineRange(start: from.epoch, end: to.epoch, zone: zone)
        }
        return TimelineRange(start: from.epoch, end: to.epoch, zone: .local)
    }

    /// The zone of an RFC 3339 offset ("Z", "+02:00", "-0530"); local when there is none.
    static func dayZone(of text: String) -> DayZone {
        guard text.contains("T") else { return .local }
        if text.hasSuffix("Z") || text.hasSuffix("z") { return .fixed(secondsFromGMT: 0) }
        guard let signIndex = text.lastIndex(where: { $0 == "+" || $0 == "-" }),
              text.distance(from: text.firstIndex(of: "T")!, to: signIndex) > 0 else { return .local }
        let digits = text[text.index(after: signIndex)...].filter(\.isNumber)
        guard digits.count == 4, let hours = Int(digits.prefix(2)), let minutes = Int(digits.suffix(2)) else { return .local }
        let seconds = (hours * 3600 + minutes * 60) * (text[signIndex] == "-" ? -1 : 1)
        // What TimeZone(secondsFromGMT:) accepts; beyond it the local zone, as before.
        return abs(seconds) <= 18 * 3600 ? .fixed(secondsFromGMT: seconds) : .local
    }
}
