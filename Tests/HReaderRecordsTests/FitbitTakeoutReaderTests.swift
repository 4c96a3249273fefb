import Foundation
import HReaderModel
@testable import HReaderRecords
import XCTest

/// Fitbit's wall times (no zone in the files) placed in the account's zone through Model's calendar,
/// on the nights the clocks change, east and west of Greenwich.
final class FitbitTakeoutReaderTests: XCTestCase {
    /// The steps of one file, as (epoch, offset in minutes) of each sample's start.
    private func steps(_ times: [String], in zone: String) throws -> [Int64: Int] {
        let reader = FitbitTakeoutReader(zone: .named(try XCTUnwrap(TimeZone(identifier: zone))))
        let lines = times.map { #"{"dateTime":"\#($0)","value":"10"}"# }.joined(separator: ",")
        var found: [Int64: Int] = [:]
        let skipped = try reader.read(Array("[\(lines)]".utf8), metric: .steps, name: "steps-2026-01-01.json") { sample in
            found[sample.start.epoch] = sample.start.offsetMinutes
        }
        XCTAssertEqual(skipped, [:])
        XCTAssertEqual(found.count, times.count, "each time its own instant")
        return found
    }

    /// Berlin: 2026-03-29 02:00 CET became 03:00 CEST, 2026-10-25 03:00 CEST became 02:00 CET.
    func testBerlinsChangesKeepEachOffsetAndReadASkippedTimeAsCalendarDoes() throws {
        let found = try steps(["03/29/26 01:59:00", "03/29/26 02:30:00", "03/29/26 03:00:00", "10/25/26 02:30:00", "10/25/26 03:00:00",
                               "10/26/26 12:00:00"],
                              in: "Europe/Berlin")
        XCTAssertEqual(found, [
            1_774_745_940: 60,    // 01:59+01:00
            1_774_747_800: 120,   // 02:30 never was: 03:30+02:00, read under the offset before
            1_774_746_000: 120,   // 03:00+02:00
            1_792_888_200: 120,   // 02:30 was twice: the first, 02:30+02:00
            1_792_893_600: 60,    // 03:00+01:00
            1_793_012_400: 60,    // the day after, 12:00+01:00
        ])
    }

    /// New York: 2026-03-08 02:00 EST became 03:00 EDT, 2026-11-01 02:00 EDT became 01:00 EST.
    func testNewYorksChangesKeepEachOffsetAndReadASkippedTimeAsCalendarDoes() throws {
        let found = try steps(["03/08/26 01:59:00", "03/08/26 02:30:00", "03/08/26 03:00:00", "11/01/26 01:30:00", "11/01/26 02:00:00"],
                              in: "America/New_York")
        XCTAssertEqual(found, [
            1_772_953_140: -300,   // 01:59-05:00
            1_772_955_000: -240,   // 02:30 never was: 03:30-04:00
            1_772_953_200: -240,   // 03:00-04:00
            1_793_511_000: -240,   // 01:30 was twice: the first, 01:30-04:00
            1_793_516_400: -300,   // 02:00-05:00
        ])
    }

    /// Every quarter hour of the days around each change from 2000 to 2040, in zones with summer
    /// time, half-hour changes and a skipped day, as the reader reads them (a day without a change
    /// looked up once, a day with one through DayCalendar's `instant(ofWall:)`): the instant
    /// Foundation's Calendar finds for the wall time (`date(from:)`), at the offset the zone had then.
    func testWallTimesAreFoundationsAroundEveryChange() throws {
        var compared = 0
        for name in ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Pacific/Apia", "Asia/Kathmandu"] {
            guard let zone = TimeZone(identifier: name) else { continue }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            var utc = Calendar(identifier: .gregorian)
            utc.timeZone = TimeZone(identifier: "UTC")!
            var ours = FitbitTakeoutReader.WallTimes(zone: .named(zone))
            var date = Date(timeIntervalSince1970: 946_684_800)
            while let change = zone.nextDaylightSavingTimeTransition(after: date), change.timeIntervalSince1970 < 2_208_988_800 {
                let at = Int64(change.timeIntervalSince1970)
                for wall in stride(from: at - 36 * 3600, through: at + 36 * 3600, by: 900) {
                    let parts = utc.dateComponents([.year, .month, .day, .hour, .minute], from: Date(timeIntervalSince1970: TimeInterval(wall)))
                    let expected = try XCTUnwrap(calendar.date(from: parts))
                    let epoch = Int64(expected.timeIntervalSince1970)
                    let text = String(format: "%04d-%02d-%02dT%02d:%02d:00", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!)
                    let found = try XCTUnwrap(ours.time(isoLocal: text))
                    XCTAssertEqual(found.epoch, epoch, "\(name) \(text)")
                    XCTAssertEqual(found.offsetMinutes, zone.secondsFromGMT(for: expected) / 60, "\(name) \(text)")
                    compared += 1
                }
                date = change.addingTimeInterval(1)
            }
        }
        if compared == 0 { throw XCTSkip("no zone data on this machine") }
    }

    /// The CSV files' instants: UTC or an offset, a fraction dropped; a time that states no offset,
    /// or is no time, names no instant. Compared with Foundation's ISO 8601 reading of the same text.
    func testCSVTimesAreInstantsOnlyWithAnOffset() throws {
        let iso = ISO8601DateFormatter()
        for text in ["2026-03-08T14:00:05Z", "2026-03-08T14:00:05+05:30", "2026-03-08T14:00:05-04:00", "1999-12-31T23:59:59Z", "2040-02-29T00:00:00+14:00"] {
            let expected = try XCTUnwrap(iso.date(from: text), text)
            XCTAssertEqual(FitbitCSVReader.instant(text), Int64(expected.timeIntervalSince1970), text)
        }
        XCTAssertEqual(FitbitCSVReader.instant("2026-03-08T14:00:05.750Z"), 1_772_978_405)
        XCTAssertEqual(FitbitCSVReader.instant("2026-03-08T14:00:05-0400"), 1_772_992_805)
        for text in ["2026-03-08T14:00:05", "2026-03-08", "2026-13-08T14:00:05Z", "2026-03-08T14:00:05Zjunk", "2026-03-08T14:00:05.Z",
                     "2026-03-08T14:00:05+5", "03/08/26 14:00:05", "", "no data"] {
            XCTAssertNil(FitbitCSVReader.instant(text), text)
        }
    }

    func testCSVFilesAreKnownByTheirNames() {
        XCTAssertEqual(FitbitCSVReader.metric(ofFileNamed: "heart_rate_2026-03-08.csv"), .heartRate)
        XCTAssertEqual(FitbitCSVReader.metric(ofFileNamed: "heart_rate_variability_2026-03-01.csv"), .heartRateVariability)
        XCTAssertEqual(FitbitCSVReader.metric(ofFileNamed: "steps_2026-03-01.csv"), .steps)
        XCTAssertEqual(FitbitCSVReader.metric(ofFileNamed: "oxygen_saturation_2026-03-01.csv"), .oxygenSaturation)
        XCTAssertEqual(FitbitCSVReader.metric(ofFileNamed: "daily_resting_heart_rate.csv"), .restingHeartRate)
        for name in ["daily_resting_heart_rate_2026-03-01.csv", "heart_rate.csv", "distance_2026-03-01.csv", "daily_oxygen_saturation.csv",
                     "heart_rate_readme.txt", "heart_rate-2026-03-08.json", "_2026-03-08.csv"] {
            XCTAssertNil(FitbitCSVReader.metric(ofFileNamed: name), name)
        }
    }

    /// Readings of a file: each in its device's series, at its instant with the zone's offset then.
    func testCSVReadingsKeepTheirDevicesAndTheZonesOffset() throws {
        let reader = FitbitCSVReader(zone: .named(try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))))
        let text = "timestamp,data source,steps\n2026-03-29T00:59:00Z,Charge 6,12\n2026-03-29T01:00:00Z,MobileTrack,30\nbroken\n2026-03-29T01:01:00Z,Charge 6,\n"
        var found: [SampleRecord] = []
        let skipped = try reader.read(Array(text.utf8), metric: .steps, name: "steps_2026-03-01.csv") { found.append($0) }
        XCTAssertEqual(found.map(\.device), ["Charge 6", "MobileTrack"])
        XCTAssertEqual(found.map(\.start.offsetMinutes), [60, 120], "the change at 01:00 UTC")
        XCTAssertEqual(found.map { $0.end.map { $0.epoch - found[0].start.epoch } }, [60, 120])
        XCTAssertEqual(skipped, ["a Fitbit steps reading without a readable timestamp": 1, "a Fitbit steps reading without a value": 1])
        XCTAssertEqual(try reader.read(Array("no data".utf8), metric: .heartRate, name: "heart_rate_2026-03-01.csv") { _ in XCTFail("no reading") }, [:])
        XCTAssertThrowsError(try reader.read(Array("timestamp,bpm\n2026-03-29T00:59:00Z,60\n".utf8), metric: .heartRate, name: "heart_rate_2026-03-01.csv") { _ in })
    }
}

extension FitbitTakeoutReaderTests {
    /// The exercise log (`exercise-<n>.json`): workouts as the other sources' sessions, distances in the
    /// unit each states, at the account's offset; one without a start or with a week-long duration skipped.
    func testTheExerciseLogBecomesWorkoutsInTheirOwnUnits() throws {
        XCTAssertTrue(FitbitTakeoutReader.isExerciseFile("exercise-1700.json"))
        XCTAssertFalse(FitbitTakeoutReader.isExerciseFile("exercise-2026-03-01.json"))
        XCTAssertFalse(FitbitTakeoutReader.isExerciseFile("exercise-.json"))
        let reader = FitbitTakeoutReader(zone: .named(try XCTUnwrap(TimeZone(identifier: "America/New_York"))))
        let json = """
            [{"logId":221972911,"activityName":"Walk","activityTypeId":90013,"averageHeartRate":95,"calories":335,
              "distance":2.88054,"distanceUnit":"Kilometer","duration":2998000,"steps":3919,"logType":"tracker",
              "source":{"type":"tracker","name":"Charge HR"},"startTime":"03/08/26 01:30:00","elevationGain":27.432,"hasGps":false},
             {"logId":253307636,"activityName":"Run","activityTypeId":90009,"calories":655,"distance":2.7,"distanceUnit":"Mile",
              "duration":2707000,"startTime":"06/22/26 06:14:49"},
             {"logId":3,"activityName":"Yoga","duration":1800000},
             {"logId":4,"activityName":"Walk","duration":900000000,"startTime":"06/23/26 06:00:00"},
             {"logId":5,"activityName":"Bike","duration":600000,"distance":4,"distanceUnit":"Furlong","startTime":"06/24/26 06:00:00"}]
            """
        var entries: [MappedEntry] = []
        let skipped = try reader.readExercises(Array(json.utf8), name: "exercise-0.json") { entries.append($0) }
        XCTAssertEqual(skipped, ["a Fitbit exercise without a readable startTime": 1, "a Fitbit exercise without a plausible duration": 1,
                                 "a Fitbit exercise distance whose unit the file does not state": 1])
        XCTAssertEqual(entries.map(\.content.description), ["Walking workout", "Running workout", "Cycling workout"])
        let walk = entries[0]
        XCTAssertEqual(walk.remoteID, "fitbit:exercise:221972911")
        // 01:30 EST; 49 min 58 s later the clocks have gone forward: 03:19:58 EDT.
        XCTAssertEqual(walk.content.start?.text, "2026-03-08T01:30:00-05:00")
        XCTAssertEqual(walk.content.end?.text, "2026-03-08T03:19:58-04:00")
        XCTAssertEqual(walk.content.valueNumber, 49.97)
        XCTAssertEqual(walk.content.unit, "min")
        XCTAssertEqual(walk.content.valueText, "2.88 km, 335 kcal, average heart rate 95/min, 3919 steps, climbing 27 m")
        XCTAssertEqual(walk.content.codes, ["com.fitbit": ["activity:90013"]])
        // 2.7 miles, in metres once: 4,345.2 m.
        XCTAssertEqual(entries[1].content.valueText, "4.35 km, 655 kcal")
        XCTAssertTrue(entries[1].content.raw?.contains("\"distance_m\":4345.2") ?? false, entries[1].content.raw ?? "")
        XCTAssertEqual(entries[2].content.valueText, nil, "a distance in an unknown unit is not guessed")
        XCTAssertThrowsError(try reader.readExercises(Array("{}".utf8), name: "exercise-1.json") { _ in })
    }
}
