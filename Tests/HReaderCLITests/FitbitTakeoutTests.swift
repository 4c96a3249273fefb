import Foundation
import TestSupport
import XCTest

/// `hreader import --file` of Fitbit's data from Google Takeout (`Takeout/Fitbit/Global Export
/// Data/*.json` and `Personal & Account/Profile.csv`), through the real binary, on files the test writes.
final class FitbitTakeoutTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Stepper"]))
    }

    func write(_ path: String, _ text: String) throws {
        let url = workDir.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    /// A Takeout of one account in New York, in pounds, over the night the clocks went forward
    /// (2026-03-08 02:00 EST became 03:00 EDT).
    func takeout(profile: Bool = true) throws -> URL {
        let data = "Takeout/Fitbit/Global Export Data/"
        if profile {
            try write("Takeout/Fitbit/Personal & Account/Profile.csv",
                      "id,full_name,timezone,weight_unit,height_unit\n\"ABC\",\"Ada, Stepper\",America/New_York,POUND,INCH\n")
        }
        try write(data + "steps-2026-03-08.json", """
            [{"dateTime":"03/08/26 01:58:00","value":"12"},{"dateTime":"03/08/26 01:59:00","value":"30"},
             {"dateTime":"03/08/26 03:00:00","value":"45"},{"dateTime":"03/08/26 03:01:00","value":"0"}]
            """)
        try write(data + "distance-2026-03-08.json", """
            [{"dateTime":"03/08/26 01:58:00","value":"913"},{"dateTime":"03/08/26 01:59:00","value":"2286.5"},
             {"dateTime":"03/08/26 03:00:00","value":"0"},{"dateTime":"03/08/26 03:01:00","value":"9000000"}]
            """)
        try write(data + "heart_rate-2026-03-08.json", """
            [{"dateTime":"03/08/26 09:00:05","value":{"bpm":71,"confidence":2}},{"dateTime":"03/08/26 09:00:10","value":{"bpm":74,"confidence":3}}]
            """)
        try write(data + "resting_heart_rate-2026-03-08.json", """
            [{"dateTime":"03/08/26 00:00:00","value":{"date":"03/08/26","value":58.42,"error":6.1}}]
            """)
        try write(data + "weight-2026-03-08.json", """
            [{"logId":1,"weight":165.3,"bmi":24.1,"fat":22.5,"date":"03/08/26","time":"07:15:00","source":"Aria"}]
            """)
        try write(data + "sleep-2026-03-08.json", """
            [{"logId":9,"dateOfSleep":"2026-03-08","startTime":"2026-03-07T23:30:00.000","endTime":"2026-03-08T07:00:00.000","type":"stages",
              "levels":{"data":[{"dateTime":"2026-03-07T23:30:00.000","level":"wake","seconds":600},
                                {"dateTime":"2026-03-07T23:40:00.000","level":"light","seconds":3600},
                                {"dateTime":"2026-03-08T00:40:00.000","level":"deep","seconds":1800},
                                {"dateTime":"2026-03-08T01:10:00.000","level":"rem","seconds":1200}]}}]
            """)
        try write(data + "notes.json", "[]")
        return workDir.appendingPathComponent("Takeout")
    }

    func entries() throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
    }

    func testATakeoutFolderIsReadInTheAccountsZoneAndUnitsAndAgainAddsNothing() throws {
        let folder = try takeout()
        let first = try ok(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        XCTAssertTrue(first.stdout.contains("(Fitbit Takeout, 6 files)"), first.stdout)
        for line in ["Step count: 3 (3 new", "Walking and running distance: 2 (2 new", "skipped 1: a Fitbit distance reading of an impossible distance", "Heart rate: 2 (2 new", "Resting heart rate: 1 (1 new", "Body weight: 1 (1 new",
                     "Body fat percentage: 1 (1 new", "Sleep: 4 (4 new", "times placed in the account's zone, America/New_York"] {
            XCTAssertTrue(first.stdout.contains(line), "\(line): \(first.stdout)")
        }
        let listed = try entries()
        let steps = listed.filter { $0["description"] as? String == "Step count" }.map { ($0["start"] as? String ?? "", $0["value"] as? Double ?? 0) }
        XCTAssertEqual(steps.map(\.0).sorted(), ["2026-03-08T01:58:00-05:00", "2026-03-08T01:59:00-05:00", "2026-03-08T03:00:00-04:00"],
                       "each minute at the offset its wall time had, across the change")
        // Centimetres in the file, metres kept: one division each, the value the file states.
        let distance = listed.filter { $0["description"] as? String == "Walking and running distance" }
            .map { ($0["start"] as? String ?? "", $0["value"] as? Double ?? 0, $0["unit"] as? String ?? "") }.sorted { $0.0 < $1.0 }
        XCTAssertEqual(distance.map(\.0), ["2026-03-08T01:58:00-05:00", "2026-03-08T01:59:00-05:00"])
        XCTAssertEqual(distance.map(\.1), [9.13, 22.865])
        XCTAssertEqual(Set(distance.map(\.2)), ["m"])
        let weight = try XCTUnwrap(listed.first { $0["description"] as? String == "Body weight" })
        XCTAssertEqual(weight["value"] as? Double, 74.979, "165.3 lb in kg, once")
        XCTAssertEqual(weight["unit"] as? String, "kg")
        XCTAssertEqual(listed.first { $0["description"] as? String == "Body fat percentage" }?["value"] as? Double, 0.225)

        let again = try ok(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        XCTAssertTrue(again.stdout.contains(" 0 new entries, 0 updated, 14 unchanged"), again.stdout)
    }

    /// The generator's Takeout (a month, in a zip): every sample it counted is stored, once.
    func testTheGeneratorsTakeoutImportsEverySampleOnce() throws {
        try generatedTakeoutImportsEverySampleOnce(format: "fitbit")
    }

    /// The same with the newer CSV files: their JSON twins add nothing.
    func testTheGeneratorsCSVTakeoutImportsEverySampleOnce() throws {
        try generatedTakeoutImportsEverySampleOnce(format: "fitbit-csv")
    }

    func generatedTakeoutImportsEverySampleOnce(format: String) throws {
        let out = workDir.appendingPathComponent("takeout.zip")
        let counts = workDir.appendingPathComponent("counts.json")
        let generator = Process()
        generator.executableURL = BuiltProducts.url(of: "hreader-health-generator")
        generator.arguments = ["--format", format, "--out", out.path, "--records", "6000", "--days", "30", "--counts", counts.path]
        generator.standardOutput = FileHandle.nullDevice
        try generator.run()
        generator.waitUntilExit()
        XCTAssertEqual(generator.terminationStatus, 0)
        let samples = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(contentsOf: counts)) as? [String: Any])?["samples"] as? Int)
        let first = try ok(withPassword(["import", "--file", out.path, "--patient", "1"]))
        XCTAssertTrue(first.stdout.contains(": 1 patient(s) (0 new, 0 updated, 1 already in the vault), \(samples) new entries"), first.stdout)
        let again = try ok(withPassword(["import", "--file", out.path, "--patient", "1"]))
        XCTAssertTrue(again.stdout.contains(" 0 new entries, 0 updated, \(samples) unchanged"), again.stdout)
    }

    /// Takeout's newer files (`Physical Activity_GoogleData/`): UTC times and each reading's device,
    /// beside JSON day files of the same readings (here on purpose a different count, so a twin read
    /// would show).
    func csvTakeout() throws -> URL {
        let root = "Takeout/Google Health/"
        try write(root + "Personal & Account/Profile.csv", "id,full_name,timezone,weight_unit\n\"ABC\",\"Ada\",America/New_York,POUND\n")
        let json = root + "Global Export Data/"
        try write(json + "steps-2026-03-08.json", #"[{"dateTime":"03/08/26 10:00:00","value":"41"}]"#)
        try write(json + "heart_rate-2026-03-08.json", #"[{"dateTime":"03/08/26 10:00:05","value":{"bpm":72,"confidence":2}}]"#)
        try write(json + "resting_heart_rate-2026-03-08.json", #"[{"dateTime":"03/08/26 00:00:00","value":{"date":"03/08/26","value":58.5,"error":6.1}}]"#)
        try write(json + "distance-2026-03-08.json", #"[{"dateTime":"03/08/26 10:00:00","value":"3040"}]"#)
        let csv = root + "Physical Activity_GoogleData/"
        try write(csv + "heart_rate_2026-03-08.csv",
                  "timestamp,beats per minute,data source\n2026-03-08T14:00:05Z,71,Pixel Watch 2\n2026-03-08T14:00:10.500Z,74,Pixel Watch 2\n")
        // A byte-order mark and CRLF; the watch and the phone counting the same minute; a minute without steps.
        try write(csv + "steps_2026-03-01.csv", "\u{FEFF}timestamp,steps,data source\r\n2026-03-08T14:00:00Z,40,Pixel Watch 2\r\n"
                  + "2026-03-08T14:01:00Z,55,Pixel Watch 2\r\n2026-03-08T14:00:00Z,35,MobileTrack\r\n2026-03-08T14:02:00Z,0,Pixel Watch 2\r\n")
        try write(csv + "oxygen_saturation_2026-03-08.csv",
                  "timestamp,oxygen saturation percentage,data source\n2026-03-08T08:00:00Z,95.5,Pixel Watch 2\n2026-03-08T08:01:00Z,101,Pixel Watch 2\n")
        try write(csv + "oxygen_saturation_2026-03-09.csv", "no data\n")
        try write(csv + "heart_rate_variability_2026-03-08.csv", "timestamp,root mean square of successive differences milliseconds,"
                  + "standard deviation milliseconds,data source\n2026-03-08T08:05:00Z,41.25,52.5,Pixel Watch 2\n")
        try write(csv + "daily_resting_heart_rate.csv", "timestamp,beats per minute\n2026-03-08T00:00:00Z,58.42\n")
        try write(csv + "distance_2026-03-08.csv", "timestamp,distance,data source\n2026-03-08T14:00:00Z,30.4,Pixel Watch 2\n")
        try write(csv + "heart_rate_readme.txt", "heart rate every few seconds\n")
        return workDir.appendingPathComponent("Takeout")
    }

    func testTheNewerCSVFilesKeepDevicesAndOffsetsAndTheirJSONTwinsArePassedOver() throws {
        let folder = try csvTakeout()
        let first = try ok(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        for line in ["Heart rate: 2 (2 new", "Step count: 3 (3 new", "Oxygen saturation: 1 (1 new", "Heart rate variability (RMSSD): 1 (1 new",
                     "Heart rate variability (SDNN): 1 (1 new", "Resting heart rate: 1 (1 new", "Walking and running distance: 1 (1 new",
                     "skipped 1: a Fitbit oxygen_saturation reading of an impossible saturation",
                     "heart_rate: read from Physical Activity_GoogleData's CSV files; its 1 JSON", "steps: read from Physical Activity_GoogleData's CSV files; its 1 JSON",
                     "resting_heart_rate: read from Physical Activity_GoogleData's CSV files; its 1 JSON"] {
            XCTAssertTrue(first.stdout.contains(line), "\(line): \(first.stdout)")
        }
        let listed = try entries()
        func values(_ description: String) -> [(String, Double)] {
            listed.filter { $0["description"] as? String == description }
                .map { (($0["start"] ?? $0["date"]) as? String ?? "", $0["value"] as? Double ?? 0) }.sorted { $0.0 < $1.0 }
        }
        // UTC in the file; the offset New York's clock had at that instant (after the change to summer time).
        // An instant reading shows as its date, an interval's by its start.
        XCTAssertEqual(values("Heart rate").map(\.0), ["2026-03-08T10:00:05-04:00", "2026-03-08T10:00:10-04:00"])
        XCTAssertEqual(values("Heart rate").map(\.1), [71, 74], "the CSV's readings, not the JSON twin's 72")
        XCTAssertEqual(values("Oxygen saturation").map(\.1), [0.955], "95.5 % kept as HealthKit keeps it")
        XCTAssertEqual(values("Heart rate variability (RMSSD)").map(\.1), [41.25])
        XCTAssertEqual(values("Heart rate variability (SDNN)").map(\.1), [52.5])
        XCTAssertEqual(values("Resting heart rate").map(\.0), ["2026-03-08T00:00:00-05:00"], "a day's value on that day in the account's zone")
        XCTAssertEqual(values("Resting heart rate").map(\.1), [58.42])
        XCTAssertEqual(values("Walking and running distance").map(\.1), [30.4], "no CSV read for distance: its JSON is")
        XCTAssertEqual(values("Step count").map(\.1).sorted(), [35, 40, 55])

        // The phone is a phone, not a band because the app is Fitbit's: the watch's minute counts, the phone's same minute does not.
        let order = try json(try ok(withPassword(["sources", "priority", "--json"])))["sources"] as? [[String: Any]] ?? []
        XCTAssertEqual(order.map { $0["name"] as? String }, ["Fitbit", "Fitbit (Pixel Watch 2)", "Fitbit (MobileTrack)"])
        let page = try json(try ok(withPassword(["timeline", "--patient", "1", "--page", "week", "--at", "2026-03-09T00:00:00Z"]), env: ["TZ": "UTC"]))
        let day = (page["activity"] as? [[String: Any]] ?? []).first { $0["day"] as? String == "2026-03-08" && $0["description"] as? String == "Step count" }
        XCTAssertEqual((day?["total"] as? NSNumber)?.doubleValue, 95, "not 130: the phone's 35 fall in a minute the watch counted")

        let again = try ok(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        XCTAssertTrue(again.stdout.contains(" 0 new entries, 0 updated, 10 unchanged"), again.stdout)
    }

    func testACSVFileWithoutItsColumnsImportsNothing() throws {
        let folder = try csvTakeout()
        try write("Takeout/Google Health/Physical Activity_GoogleData/heart_rate_2026-03-09.csv", "time,bpm\n2026-03-09T14:00:05Z,70\n")
        let result = try hreader(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("heart_rate_2026-03-09.csv: no timestamp column"), result.stderr)
        XCTAssertEqual(try entries().count, 0)
    }

    func testAWeightWhoseUnitIsNotStatedIsSkippedNotGuessed() throws {
        let folder = try takeout(profile: false)
        let result = try ok(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        XCTAssertTrue(result.stdout.contains("skipped 1: a Fitbit weight reading whose unit the export does not state"), result.stdout)
        XCTAssertTrue(result.stdout.contains("the export states no zone"), result.stdout)
        XCTAssertFalse(try entries().contains { $0["description"] as? String == "Body weight" })
    }

    func testABrokenFileInTheZipImportsNothing() throws {
        _ = try takeout()
        try write("Takeout/Fitbit/Global Export Data/heart_rate-2026-03-09.json", "[{\"dateTime\": ")
        let zip = workDir.appendingPathComponent("takeout.zip").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.currentDirectoryURL = workDir
        process.arguments = ["python3", "-c", "import shutil; shutil.make_archive('takeout', 'zip', '.', 'Takeout')"]
        try process.run()
        process.waitUntilExit()
        let result = try hreader(withPassword(["import", "--file", zip, "--patient", "1"]))
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("heart_rate-2026-03-09.json"), result.stderr)
        XCTAssertEqual(try entries().count, 0)
    }
}

extension FitbitTakeoutTests {
    /// The exercise log beside the day files: each workout an entry, its details shown, once.
    func testTheExerciseLogImportsWorkoutsOnce() throws {
        let folder = try takeout()
        try write("Takeout/Fitbit/Global Export Data/exercise-0.json", """
            [{"logId":221972911,"activityName":"Walk","activityTypeId":90013,"averageHeartRate":95,"calories":335,
              "distance":2.88054,"distanceUnit":"Kilometer","duration":2998000,"steps":3919,"startTime":"03/08/26 10:30:00"},
             {"logId":253307636,"activityName":"Run","activityTypeId":90009,"calories":655,"distance":2.7,"distanceUnit":"Mile",
              "duration":2707000,"startTime":"03/09/26 06:14:49"}]
            """)
        let first = try ok(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        XCTAssertTrue(first.stdout.contains("(Fitbit Takeout, 7 files)"), first.stdout)
        XCTAssertTrue(first.stdout.contains("Exercise sessions: 2 (2 new"), first.stdout)
        let walk = try XCTUnwrap(try entries().first { $0["description"] as? String == "Walking workout" })
        XCTAssertEqual(walk["start"] as? String, "2026-03-08T10:30:00-04:00")
        XCTAssertEqual(walk["value_text"] as? String, "2.88 km, 335 kcal, average heart rate 95/min, 3919 steps")
        let shown = try ok(withPassword(["entries", "show", "\(walk["id"] as! Int)"]))
        XCTAssertTrue(shown.stdout.contains("details:") && shown.stdout.contains("3919 steps"), shown.stdout)
        let again = try ok(withPassword(["import", "--file", folder.path, "--patient", "1"]))
        XCTAssertTrue(again.stdout.contains(" 0 new entries, 0 updated, 16 unchanged"), again.stdout)
    }
}
