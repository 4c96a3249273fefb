import Foundation
@testable import HReaderKit
import HReaderStore
import XCTest

/// The timeline's own calendar arithmetic for fixed offsets (DayCalendar) gives Foundation's answers.
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
            let calendar = foundation(offset)
            var ours = DayCalendar(.fixed(secondsFromGMT: offset))
            for page in TimelinePage.allCases {
                let end = Date(timeIntervalSince1970: TimeInterval(epoch))
                let expected = Int64(calendar.date(byAdding: page.span, to: end)!.timeIntervalSince1970.rounded(.down))
                XCTAssertEqual(ours.start(of: page, endingAt: epoch), expected, "\(page) page ending at \(epoch), offset \(offset)")
            }
            let dayStart = calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(epoch)))
            let parts = calendar.dateComponents([.year, .month, .day], from: dayStart)
            let next = calendar.startOfDay(for: calendar.date(byAdding: .day, value: 1, to: dayStart)!)
            let day = ours.day(containing: epoch)
            XCTAssertEqual(day.start, Int64(dayStart.timeIntervalSince1970), "day of \(epoch), offset \(offset)")
            XCTAssertEqual(day.end, Int64(next.timeIntervalSince1970), "day of \(epoch), offset \(offset)")
            XCTAssertEqual(day.text, RFC3339.date(year: parts.year!, month: parts.month!, day: parts.day!), "day of \(epoch), offset \(offset)")
        }
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
        XCTAssertEqual(TimelineRange.dayZone(of: "2012-05-01"), .named(.current))
        XCTAssertEqual(TimelineRange.dayZone(of: "2012-05-01T00:00:00+19:00"), .named(.current), "beyond what a time zone can be")
        // A month page at the end of March in a fixed zone ends on the last day of February.
        let page = TimelineRange.page(.month, at: ClinicalTime.parse("2012-03-31T12:00:00+02:00")!)
        XCTAssertEqual(page.start, ClinicalTime.parse("2012-02-29T12:00:00+02:00")!.epoch)
        XCTAssertEqual(page.timeZone.secondsFromGMT(), 7200)
    }
}
