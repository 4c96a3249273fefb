import Foundation
import HReaderStore

/// The zone a timeline counts its days and pages in.
///
/// An RFC 3339 time states a fixed offset from UTC, and the timeline's times mostly do (`--at` with an
/// offset, or none: now, in UTC). For a fixed offset the calendar arithmetic is done here. Foundation's
/// Calendar would first build the zone through ICU (its canonical zone id), half a millisecond of a
/// short command (docs/cli.md, "Start-up"). A named zone (the local one, with its summer time) goes to
/// Calendar, and so does any date before 1583: Foundation's Gregorian calendar is Julian before
/// 15 October 1582, which the arithmetic here is not. DayCalendarTests hold both ways to the same answers.
public enum DayZone: Equatable, Sendable {
    case fixed(secondsFromGMT: Int)
    case named(TimeZone)

    public var timeZone: TimeZone {
        switch self {
        case let .fixed(offset): return TimeZone(secondsFromGMT: offset) ?? TimeZone(identifier: "UTC")!
        case let .named(zone): return zone
        }
    }
}

/// Days and page starts in a DayZone, with Foundation's Calendar made only when it is needed.
struct DayCalendar {
    let zone: DayZone
    private var foundation: Calendar?

    init(_ zone: DayZone) { self.zone = zone }

    /// The day holding `epoch`: its first second, the first second of the next day, and its date ("2012-05-01").
    mutating func day(containing epoch: Int64) -> (start: Int64, end: Int64, text: String) {
        if case let .fixed(offset) = zone {
            let day = Self.floorDivide(epoch + Int64(offset), 86_400)
            let civil = CivilDays.date(Int(day))
            if civil.year >= Self.firstGregorianYear {
                let start = day * 86_400 - Int64(offset)
                return (start, start + 86_400, RFC3339.date(year: civil.year, month: civil.month, day: civil.day))
            }
        }
        let calendar = self.calendar()
        let dayStart = calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(epoch)))
        let parts = calendar.dateComponents([.year, .month, .day], from: dayStart)
        let text = RFC3339.date(year: parts.year ?? 0, month: parts.month ?? 0, day: parts.day ?? 0)
        let next = calendar.date(byAdding: .day, value: 1, to: dayStart).map { calendar.startOfDay(for: $0) }
        return (Int64(dayStart.timeIntervalSince1970), Int64((next ?? dayStart).timeIntervalSince1970), text)
    }

    /// Where a page ending at `epoch` starts: one day, 7 days, one month, one year or ten years earlier,
    /// as Calendar's `date(byAdding:)` counts (the same time of day; the 31st a month earlier is the
    /// month's last day).
    mutating func start(of page: TimelinePage, endingAt epoch: Int64) -> Int64 {
        if case let .fixed(offset) = zone {
            switch page {
            case .day: return epoch - 86_400
            case .week: return epoch - 7 * 86_400
            case .month, .year, .decade:
                let local = epoch + Int64(offset)
                let day = Self.floorDivide(local, 86_400)
                let secondOfDay = local - day * 86_400
                let civil = CivilDays.date(Int(day))
                var year = civil.year, month = civil.month
                switch page {
                case .month: if month == 1 { year -= 1; month = 12 } else { month -= 1 }
                case .year: year -= 1
                default: year -= 10
                }
                if year >= Self.firstGregorianYear {
                    let dayOfMonth = min(civil.day, CivilDays.daysIn(month: month, of: year))
                    return Int64(CivilDays.days(year, month, dayOfMonth)) * 86_400 + secondOfDay - Int64(offset)
                }
            }
        }
        let calendar = self.calendar()
        let end = Date(timeIntervalSince1970: TimeInterval(epoch))
        let start = calendar.date(byAdding: page.span, to: end) ?? end
        return Int64(start.timeIntervalSince1970.rounded(.down))
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
