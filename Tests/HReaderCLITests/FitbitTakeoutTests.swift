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
        let out = workDir.appendingPathComponent("takeout.zip")
        let counts = workDir.appendingPathComponent("counts.json")
        let generator = Process()
        generator.executableURL = BuiltProducts.url(of: "hreader-health-generator")
        generator.arguments = ["--format", "fitbit", "--out", out.path, "--records", "6000", "--days", "30", "--counts", counts.path]
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
