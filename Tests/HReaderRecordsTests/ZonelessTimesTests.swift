import Foundation
import HReaderJSON
import HReaderModel
@testable import HReaderRecords
import XCTest

/// Times written without a zone (FHIR's local date-times, FHIR's and RHEx's bare dates, RHEx's birth
/// date) placed through Model's calendar (`DayCalendar`) in a named zone, whatever TZ the tests run
/// under: the instants Foundation's Calendar finds (`date(from:)`), also in the hours the clocks change.
final class ZonelessTimesTests: XCTestCase {
    private let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Pacific/Apia", "Asia/Kathmandu"]

    /// Berlin: 2026-03-29 02:00 CET became 03:00 CEST, 2026-10-25 03:00 CEST became 02:00 CET.
    func testFHIRLocalDateTimesOnBerlinsChangeNightsAreReadAsCalendarDoes() throws {
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        func observation(_ id: String, _ time: String) -> String {
            #"{"resource": {"resourceType": "Observation", "id": "\#(id)", "status": "final", "code": {"text": "Pulse"}, "#
                + #""subject": {"reference": "Patient/p"}, "effectiveDateTime": "\#(time)", "valueQuantity": {"value": 60}}}"#
        }
        let bundle = #"{"resourceType": "Bundle", "type": "collection", "entry": [{"resource": {"resourceType": "Patient", "id": "p"}}, "#
            + [observation("skipped", "2026-03-29T02:30:00"), observation("twice", "2026-10-25T02:30:00"),
               observation("after", "2026-10-25T03:00:00"), observation("day", "2026-03-29")].joined(separator: ", ") + "]}"
        let record = try XCTUnwrap(FHIRMapper(zone: .named(berlin)).mapBundle(Data(bundle.utf8)).records.first)
        XCTAssertEqual(record.skipped.map(\.reason), [], "each time read (the skipped hour was an error before)")
        func epoch(_ id: String) -> Int64? { record.entries.first { $0.remoteID == "Observation/" + id }?.content.date?.epoch }
        XCTAssertEqual(epoch("skipped"), 1_774_747_800, "02:30 never was: 03:30+02:00, read under the offset before")
        XCTAssertEqual(epoch("twice"), 1_792_888_200, "02:30 was twice: the first, 02:30+02:00")
        XCTAssertEqual(epoch("after"), 1_792_893_600, "03:00+01:00")
        XCTAssertEqual(epoch("day"), 1_774_738_800, "the day starts at 00:00+01:00")
    }

    /// Every quarter hour within three hours of each change from 2000 to 2040, as FHIR's local
    /// date-times, and the days around it as bare dates: Calendar's instants (a bare date on a day the zone
    /// skipped whole, as Apia's 2011-12-30, is no date, as Calendar's day check found).
    func testLocalDateTimesAndBareDatesAreFoundationsAroundEveryChange() throws {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        var compared = 0
        for name in zones {
            guard let zone = TimeZone(identifier: name) else { continue }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            var date = Date(timeIntervalSince1970: 946_684_800)
            while let change = zone.nextDaylightSavingTimeTransition(after: date), change.timeIntervalSince1970 < 2_208_988_800 {
                // The change's wall time (under the offset after it), and the wall times within three hours.
                let at = Int64(change.timeIntervalSince1970) + Int64(zone.secondsFromGMT(for: change))
                for wall in stride(from: at - 3 * 3600, through: at + 3 * 3600, by: 900) {
                    let parts = utc.dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: TimeInterval(wall)))
                    let day = RFC3339.date(year: parts.year!, month: parts.month!, day: parts.day!)
                    let text = day + "T" + (parts.hour! < 10 ? "0" : "") + "\(parts.hour!):" + (parts.minute! < 10 ? "0" : "") + "\(parts.minute!):00"
                    let expected = try XCTUnwrap(calendar.date(from: parts))
                    XCTAssertEqual(FHIRTime.parse(text, zone: .named(zone))?.epoch, Int64(expected.timeIntervalSince1970), "\(name) \(text)")
                    compared += 1
                }
                // The days before, of and after the change, as bare dates.
                for wall in stride(from: at - 86_400, through: at + 86_400, by: 86_400) {
                    let parts = utc.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: TimeInterval(wall)))
                    let day = RFC3339.date(year: parts.year!, month: parts.month!, day: parts.day!)
                    XCTAssertEqual(ClinicalTime.parse(day, zone: .named(zone))?.epoch, Self.calendarsStart(of: day, in: zone), "\(name) \(day)")
                }
                date = change.addingTimeInterval(1)
            }
        }
        if compared == 0 { throw XCTSkip("no zone data on this machine") }
        if let apia = TimeZone(identifier: "Pacific/Apia") {
            XCTAssertNil(ClinicalTime.parse("2011-12-30", zone: .named(apia)), "Apia skipped 30 December 2011")
            XCTAssertEqual(ClinicalTime.parse("2011-12-31", zone: .named(apia))?.epoch, 1_325_239_200, "00:00+14:00")
        }
    }

    /// Dates before 1583, where Foundation's Gregorian calendar is Julian, are still Calendar's.
    func testBareDatesBefore1583AreCalendarsJulianDays() throws {
        for name in ["UTC", "Europe/Berlin", "America/New_York"] {
            let zone = try XCTUnwrap(TimeZone(identifier: name))
            for day in ["1500-02-29", "1582-10-04", "1582-10-15", "1582-12-31", "1200-03-01", "0001-01-01", "1583-01-01", "1700-02-29"] {
                XCTAssertEqual(ClinicalTime.parse(day, zone: .named(zone))?.epoch, Self.calendarsStart(of: day, in: zone), "\(name) \(day)")
            }
        }
    }

    /// RHEx's epoch birth date, a UTC calendar date: Model's civil days from 1583, Calendar's before.
    func testRHExBirthDatesAreCalendarsUTCDays() {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        var generator = SystemRandomNumberGenerator()
        var seconds: [Double] = [0, -1, 86_399, 86_400, -86_400, -12_219_292_800, -12_219_292_801, -12_244_089_600, -62_135_596_800,
                                 -62_135_596_801, 9.999e12, -9.999e12, 456_926_400]
        for _ in 0..<2000 { seconds.append(Double(Int64.random(in: -99_999_999_999...99_999_999_999, using: &generator))) }
        for value in seconds {
            let parts = utc.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: value))
            let expected = RFC3339.date(year: parts.year!, month: parts.month!, day: parts.day!)
            XCTAssertEqual(RHExMapper.birthDate(.string(String(Int64(value)))), expected, "\(Int64(value))")
        }
    }

    /// The start of a bare date as ClinicalTime found it with Foundation's Calendar in `zone`.
    private static func calendarsStart(of day: String, in zone: TimeZone) -> Int64? {
        let numbers = day.split(separator: "-").map { Int($0)! }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let date = calendar.date(from: DateComponents(year: numbers[0], month: numbers[1], day: numbers[2])),
              calendar.component(.day, from: date) == numbers[2] else { return nil }
        return Int64(date.timeIntervalSince1970)
    }
}
