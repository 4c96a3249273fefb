import Foundation
@testable import HReaderKit
import HReaderModel
import XCTest

/// The timeline's own calendar arithmetic (DayCalendar) gives Foundation's answers: for fixed offsets,
/// and for the local zone read through the C library (LocalClock), in zones with summer time, with it
/// starting and ending at midnight, with half-hour changes and with a day skipped.
final class DayCalendarTests: XCTestCase {
    private func foundation(_ offset: Int) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offset)!
        return calendar
    }

    private let offsets = [0, 3600, -18_000, 19_800, 20_700, -34_200, 50_400, -43_200, 18 * 3600, -18 * 3600]

    func testPageStartsAreFoundationsForRandomInstantsAndOffsets() {
        var generator = SystemRandomNumberGenerator()
        let range = TimelineRange.supportedEpochs
        for round in 0..<20_000 {
            let offset = offsets.randomElement(using: &generator)!
            // Most anywhere in years 1 to 9999; some near the ends of months, leap days and the 1582 switch.
            var epoch = Int64.random(in: (range.lowerBound + 11 * 366 * 86_400)...(range.upperBound - 86_400), using: &generator)
            switch round % 4 {
            case 1:
                let year = Int.random(in: 1583...9998, using: &generator), month = Int.random(in: 1...12, using: &generator)
                let days = CivilDays.days(year, month, min([1, 28, 29, 30, 31].randomElement(using: &generator)!, CivilDays.daysIn(month: month, of: year)))
                epoch = Int64(days) * 86_400 + Int64.random(in: 0..<86_400, using: &generator) - Int64(offset)
            case 2: epoch = Int64.random(in: -12_900_000_000 ... -11_900_000_000, using: &generator)   // 1561 to 1592
            default: break
            }
            var ours = DayCalendar(.fixed(secondsFromGMT: offset))
            assertFoundations(&ours, foundation(offset), at: epoch, "offset \(offset)")
        }
    }

    /// The pages ending at `epoch` and the day holding it, ours against `calendar`'s; `skipping` leaves
    /// out a page whose Foundation start it is given.
    private func assertFoundations(_ ours: inout DayCalendar, _ calendar: Calendar, at epoch: Int64, _ zone: String,
                                   skipping: (TimelinePage, Int64) -> Bool = { _, _ in false }) {
        for page in TimelinePage.allCases {
            let end = Date(timeIntervalSince1970: TimeInterval(epoch))
            let expected = Int64(calendar.date(byAdding: page.span.dateComponents, to: end)!.timeIntervalSince1970.rounded(.down))
            if skipping(page, expected) { continue }
            XCTAssertEqual(ours.start(of: page.span, endingAt: epoch), expected, "\(page) page ending at \(epoch), \(zone)")
        }
        let dayStart = calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(epoch)))
        let parts = calendar.dateComponents([.year, .month, .day], from: dayStart)
        let next = calendar.startOfDay(for: calendar.date(byAdding: .day, value: 1, to: dayStart)!)
        let day = ours.day(containing: epoch)
        XCTAssertEqual(day.start, Int64(dayStart.timeIntervalSince1970), "day of \(epoch), \(zone)")
        XCTAssertEqual(day.end, Int64(next.timeIntervalSince1970), "day of \(epoch), \(zone)")
        XCTAssertEqual(day.text, RFC3339.date(year: parts.year!, month: parts.month!, day: parts.day!), "day of \(epoch), \(zone)")
    }

    /// The local zone through the C library against Foundation's Calendar in the same named zone: the
    /// days holding, and the pages ending at, random instants and instants around each change of the
    /// zone's offset (where a time of day happens twice or never). Each zone is set as TZ for the C
    /// library; a machine without tzdata for a zone skips it.
    func testTheLocalZoneThroughTheCLibraryIsFoundations() throws {
        let zones = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Havana", "America/Santiago",
                     "Asia/Kathmandu", "Pacific/Apia", "Africa/Casablanca", "UTC"]
        // Foundation keeps the zone it first finds as the process's: find it before TZ changes, so that
        // the Calendars made here, and the tests after this one, keep the machine's.
        _ = TimeZone.current
        let saved = ProcessInfo.processInfo.environment["TZ"]
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        var compared = 0
        var generator = SystemRandomNumberGenerator()
        for name in zones where FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/\(name)") {
            setenv("TZ", name, 1)
            tzset()
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = try XCTUnwrap(TimeZone(identifier: name))
            // Random instants from 1990 to 2040, and every quarter hour for a day around each change.
            var instants = (0..<400).map { _ in Int64.random(in: 631_152_000...2_208_988_800, using: &generator) }
            var date = Date(timeIntervalSince1970: 631_152_000)
            while let change = calendar.timeZone.nextDaylightSavingTimeTransition(after: date), change.timeIntervalSince1970 < 2_208_988_800 {
                let at = Int64(change.timeIntervalSince1970)
                instants += stride(from: at - 13 * 3600, through: at + 13 * 3600, by: 900).map { $0 }
                date = change.addingTimeInterval(1)
            }
            var ours = DayCalendar(.local)
            for epoch in instants {
                // Samoa skipped 30 December 2011. Foundation counts a week across it as 168 hours (eight
                // dates), and a month or years back onto the missing date give the day after; here a week
                // is seven dates and the missing date gives the day before. The day page agrees.
                assertFoundations(&ours, calendar, at: epoch, name) { page, start in
                    name == "Pacific/Apia" && page != .day && abs(start - 1_325_239_200) < 8 * 86_400
                }
                compared += 1
            }
        }
        if compared == 0 { throw XCTSkip("no tzdata (/usr/share/zoneinfo) on this machine") }
    }

    /// The civil-day arithmetic the fixed offsets use (CivilDays, shared with RFC 3339 and Apple Health times).
    func testCivilDaysRoundTrip() {
        for days in stride(from: -719_162, through: 2_932_896, by: 97) {
            let civil = CivilDays.date(days)
            XCTAssertEqual(CivilDays.days(civil.year, civil.month, civil.day), days)
        }
        XCTAssertEqual(CivilDays.date(0).year, 1970)
        XCTAssertEqual(CivilDays.days(2000, 3, 1), 11_017)
    }

    func testTheZoneOfAnOffsetIsFixedAndABareDateIsLocal() {
        XCTAssertEqual(TimelineRange.dayZone(of: "2012-05-01T00:00:00Z"), .fixed(secondsFromGMT: 0))
        XCTAssertEqual(TimelineRange.dayZone(of: "2012-05-01T00:00:00+02:00"), .fixed(secondsFromGMT: 7200))
        XCTAssertEqual(TimelineRange.dayZone(of: "2012-05-01T00:00:00-0530"), .fixed(secondsFromGMT: -19_800))
        XCTAssertEqual(TimelineRange.dayZone(of: "2012-05-01"), .local)
        XCTAssertEqual(TimelineRange.dayZone(of: "2012-05-01T00:00:00+19:00"), .local, "beyond what a time zone can be")
        XCTAssertEqual(TimelineRange.page(.day, at: nil).zone, .local, "now: the local zone")
        // A month page at the end of March in a fixed zone ends on the last day of February.
        let page = TimelineRange.page(.month, at: ClinicalTime.parse("2012-03-31T12:00:00+02:00")!)
        XCTAssertEqual(page.start, ClinicalTime.parse("2012-02-29T12:00:00+02:00")!.epoch)
        XCTAssertEqual(page.zone, .fixed(secondsFromGMT: 7200))
    }

    /// The name a note gives a zone: the local zone as the C library is told it (TZ, else the
    /// zoneinfo file /etc/localtime links to), not Foundation's `TimeZone.current`.
    func testAZonesNameIsTheOneTheCLibraryIsGiven() throws {
        XCTAssertEqual(DayZone.fixed(secondsFromGMT: 0).name, "UTC")
        XCTAssertEqual(DayZone.fixed(secondsFromGMT: 19_800).name, "UTC+05:30")
        XCTAssertEqual(DayZone.fixed(secondsFromGMT: -34_200).name, "UTC-09:30")
        XCTAssertEqual(DayZone.named(try XCTUnwrap(TimeZone(identifier: "Europe/Paris"))).name, "Europe/Paris")
        let saved = ProcessInfo.processInfo.environment["TZ"]
        defer { if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") } }
        for (tz, name) in [("Europe/Paris", "Europe/Paris"), (":America/New_York", "America/New_York"),
                           ("/usr/share/zoneinfo/posix/Asia/Tokyo", "Asia/Tokyo"), ("", "UTC"), ("EST5EDT", "EST5EDT"),
                           ("/etc/some-file", "the local zone")] {
            setenv("TZ", tz, 1)
            XCTAssertEqual(DayZone.local.name, name, tz)
        }
    }
}
