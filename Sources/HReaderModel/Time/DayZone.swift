import Foundation

/// The zone local days and hours are counted in: the timeline's days and pages, the export's
/// hours and days (`--group`), the tiles' days and a person's age; and the zone the readers place a
/// time written without one in (FHIR, RHEx, Apple Health's activity days, FIT, Health Connect, Fitbit).
///
/// An RFC 3339 time states a fixed offset from UTC, and the timeline's times mostly do (`--at` with an
/// offset). For a fixed offset the calendar arithmetic is done here. Foundation's Calendar would first
/// build the zone through ICU (its canonical zone id), half a millisecond of a short command
/// (docs/cli.md, "Start-up"). The local zone (a bare date, or now) is read through the C library
/// (LocalClock), with its summer time, also without ICU. Another named zone goes to Calendar, and so
/// does any date before 1583: Foundation's Gregorian calendar is Julian before 15 October 1582, which
/// the arithmetic here is not. DayCalendarTests hold the ways to the same answers.
public enum DayZone: Equatable, Sendable {
    case fixed(secondsFromGMT: Int)
    /// The process's local zone.
    case local
    case named(TimeZone)

    /// Foundation's form of the zone, for DayCalendar's fallback alone (instants before 1583, or a C
    /// library that cannot convert one): the local zone is the one the C library reads, by its name.
    public var timeZone: TimeZone {
        switch self {
        case let .fixed(offset): return TimeZone(secondsFromGMT: offset) ?? TimeZone(identifier: "UTC")!
        case .local: return LocalClock.name.flatMap(TimeZone.init(identifier:)) ?? .current
        case let .named(zone): return zone
        }
    }

    /// The zone's name, for a person to read ("times were placed in Europe/Paris"): a named zone's
    /// identifier, a fixed one as "UTC+02:00", and the local zone as the C library was told it (the
    /// zone `date` uses), else "the local zone".
    public var name: String {
        switch self {
        case let .fixed(offset):
            guard offset != 0 else { return "UTC" }
            let minutes = abs(offset) / 60
            let hh = minutes / 60 < 10 ? "0\(minutes / 60)" : "\(minutes / 60)", mm = minutes % 60 < 10 ? "0\(minutes % 60)" : "\(minutes % 60)"
            return "UTC\(offset < 0 ? "-" : "+")\(hh):\(mm)"
        case .local: return LocalClock.name ?? "the local zone"
        case let .named(zone): return zone.identifier
        }
    }
}

/// The one calendar: days, hours and page starts in a DayZone, with Foundation's Calendar made only
/// when it is needed. Every "local day" of hreader is counted here.
///
/// ```swift
/// var calendar = DayCalendar(.fixed(secondsFromGMT: 3600))
/// calendar.day(containing: 1_335_830_400).text               // "2012-05-01"
/// calendar.start(of: .months(1), endingAt: 1_335_830_400)    // 2012-04-01 at the same time of day
/// ```
public struct DayCalendar {
    /// A length of calendar a page spans, counted back from its end as Calendar's
    /// `date(byAdding:)` counts it: days, or months, or years.
    public enum Span: Equatable, Sendable {
        case days(Int)
        case months(Int)
        case years(Int)

        /// The span backwards, as Foundation's `DateComponents`.
        public var dateComponents: DateComponents {
            switch self {
            case let .days(n): return DateComponents(day: -n)
            case let .months(n): return DateComponents(month: -n)
            case let .years(n): return DateComponents(year: -n)
            }
        }
    }

    public let zone: DayZone
    private var foundation: Calendar?

    public init(_ zone: DayZone) { self.zone = zone }

    /// The day holding `epoch`: its first second, the first second of the next day, and its date ("2012-05-01").
    public mutating func day(containing epoch: Int64) -> (start: Int64, end: Int64, text: String) {
        if let clock = WallClock(zone), let wall = clock.wall(at: epoch) {
            let day = Self.floorDivide(wall, 86_400)
            let civil = CivilDays.date(Int(day))
            if civil.year >= Self.firstGregorianYear, let start = clock.instant(ofWall: day * 86_400),
               let end = clock.instant(ofWall: (day + 1) * 86_400) {
                return (start, end, RFC3339.date(year: civil.year, month: civil.month, day: civil.day))
            }
        }
        let calendar = self.calendar()
        let dayStart = calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(epoch)))
        let parts = calendar.dateComponents([.year, .month, .day], from: dayStart)
        let text = RFC3339.date(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0)
        let next = calendar.date(byAdding: .day, value: 1, to: dayStart).map { calendar.startOfDay(for: $0) }
        return (Int64(dayStart.timeIntervalSince1970), Int64((next ?? dayStart).timeIntervalSince1970), text)
    }

    /// The hour holding `epoch`, in real seconds: the clock's reading at `epoch` less its minutes and
    /// seconds, an hour long (the second 01:00 of a night the clocks go back is its own hour).
    public mutating func hour(containing epoch: Int64) -> (start: Int64, end: Int64) {
        if let clock = WallClock(zone), let wall = clock.wall(at: epoch) {
            let start = epoch - (wall - Self.floorDivide(wall, 3600) * 3600)
            return (start, start + 3600)
        }
        let found = calendar().dateInterval(of: .hour, for: Date(timeIntervalSince1970: TimeInterval(epoch)))
        let start = found.map { Int64($0.start.timeIntervalSince1970) } ?? epoch - Self.floorDivide(epoch, 3600) * 3600
        return (start, start + 3600)
    }

    /// The zone's offset from UTC at `epoch`, in seconds east.
    public static func offset(of zone: DayZone, at epoch: Int64) -> Int64 {
        if let clock = WallClock(zone), let wall = clock.wall(at: epoch) { return wall - epoch }
        return Int64(zone.timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(epoch))))
    }

    /// The instant the zone's clock shows `wall` (seconds since that clock's 1970-01-01T00:00), and
    /// the zone's offset from UTC then: for a time recorded without a zone (a wearable's wall clock).
    /// A time the clock shows twice (summer time ending) is the first of the two; a time it skips
    /// (summer time starting) is read under the offset before the change, so 02:30 on the night
    /// 02:00 became 03:00 is 03:30 of the new offset. Both as Foundation's Calendar reads a wall
    /// time (`date(from:)`); FitbitTakeoutReaderTests hold the two to the same answers.
    ///
    /// ```swift
    /// let berlin = DayCalendar(.named(TimeZone(identifier: "Europe/Berlin")!))
    /// berlin.instant(ofWall: 1_774_751_400)   // 2026-03-29T02:30, which Berlin skipped:
    ///                                         // (epoch: 1_774_747_800, offset: 7200), 03:30+02:00
    /// ```
    public func instant(ofWall wall: Int64) -> (epoch: Int64, offset: Int64) {
        let zone = self.zone
        func offset(_ epoch: Int64) -> Int64 { Self.offset(of: zone, at: epoch) }
        let epoch = LocalClock.instant(ofWall: wall, offset: offset) ?? wall - offset(wall)
        return (epoch, offset(epoch))
    }

    /// Where a page of `span` ending at `epoch` starts: one day, 7 days, one month, one year or ten
    /// years earlier, as Calendar's `date(byAdding:)` counts (the same time of day; the 31st a month
    /// earlier is the month's last day).
    public mutating func start(of span: Span, endingAt epoch: Int64) -> Int64 {
        if let clock = WallClock(zone), let wall = clock.wall(at: epoch) {
            let day = Self.floorDivide(wall, 86_400)
            if let earlier = Self.day(day, before: span),
               let start = clock.instant(ofWall: earlier * 86_400 + (wall - day * 86_400), adding: true) {
                return start
            }
        }
        let calendar = self.calendar()
        let end = Date(timeIntervalSince1970: TimeInterval(epoch))
        let start = calendar.date(byAdding: span.dateComponents, to: end) ?? end
        return Int64(start.timeIntervalSince1970.rounded(.down))
    }

    /// The day (days since 1970-01-01 of any clock) of a date as Foundation's Gregorian calendar
    /// names it: proleptic Gregorian from 1583 (CivilDays), Julian before 15 October 1582 as Calendar
    /// counts it. Nil for a day the month does not have ("2012-02-30").
    static func day(year: Int, month: Int, day: Int) -> Int64? {
        guard (1...12).contains(month), day >= 1 else { return nil }
        if year >= firstGregorianYear {
            return day <= CivilDays.daysIn(month: month, of: year) ? Int64(CivilDays.days(year, month, day)) : nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day)),
              calendar.component(.day, from: date) == day else { return nil }
        return floorDivide(Int64(date.timeIntervalSince1970.rounded(.down)), 86_400)
    }

    /// The day (days since 1970-01-01) a page of `span` ending on `day` starts on; nil when that is
    /// before 1583.
    static func day(_ day: Int64, before span: Span) -> Int64? {
        let civil = CivilDays.date(Int(day))
        var year = civil.year, month = civil.month
        let earlier: Int64
        switch span {
        case let .days(n):
            earlier = day - Int64(n)
        case let .months(n), let .years(n):
            if case .months = span {
                let months = year * 12 + (month - 1) - n
                year = Int(floorDivide(Int64(months), 12))
                month = months - year * 12 + 1
            } else {
                year -= n
            }
            // The 31st a month earlier is the month's last day.
            earlier = Int64(CivilDays.days(year, month, min(civil.day, CivilDays.daysIn(month: month, of: year))))
        }
        return CivilDays.date(Int(earlier)).year >= firstGregorianYear ? earlier : nil
    }

    /// A zone's wall clock without Foundation: a fixed offset, or the local zone through the C library.
    private enum WallClock {
        case fixed(Int64)
        case local

        init?(_ zone: DayZone) {
            switch zone {
            case let .fixed(offset): self = .fixed(Int64(offset))
            case .local: self = .local
            case .named: return nil
            }
        }

        /// The clock's reading at `epoch`, as seconds since its own 1970-01-01T00:00.
        func wall(at epoch: Int64) -> Int64? {
            switch self {
            case let .fixed(offset): return epoch + offset
            case .local: return LocalClock.wall(at: epoch)
            }
        }

        /// The instant the clock reads `wall` (see LocalClock for times read twice or never).
        func instant(ofWall wall: Int64, adding: Bool = false) -> Int64? {
            switch self {
            case let .fixed(offset): return wall - offset
            case .local: return LocalClock.instant(ofWall: wall, adding: adding)
            }
        }
    }

    private mutating func calendar() -> Calendar {
        if let foundation { return foundation }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone.timeZone
        foundation = calendar
        return calendar
    }

    /// The first whole year Foundation's Gregorian calendar counts as Gregorian.
    static let firstGregorianYear = 1583

    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
}
