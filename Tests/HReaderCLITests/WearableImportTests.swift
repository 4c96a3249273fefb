import FITWriter
import Foundation
import TestSupport
import XCTest

/// `hreader import --file` of a Garmin watch's FIT files (a file, a folder, Garmin's zip of zips),
/// through the real binary: the FIT files are written by the tests (`FITWriter`).
final class WearableImportTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    let start = FITWriter.time("2026-03-01T07:00:00Z")

    @discardableResult
    func fit(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = workDir.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
        return url.path
    }

    func entries(_ patient: Any) throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "\(patient)", "--json"])))["entries"] as! [[String: Any]]
    }

    /// Writes a zip with Python's zipfile (an independent writer): members name → bytes. `streamed`
    /// writes it as a writer that cannot seek back does, each member's sizes after its data.
    func zip(_ name: String, _ members: [(String, Data)], streamed: Bool = false) throws -> String {
        let dir = workDir.appendingPathComponent("zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var script = "import io, zipfile, sys\n"
        if streamed {
            script += "class U(io.RawIOBase):\n    def __init__(s, f): s.f = f\n    def writable(s): return True\n    def write(s, b): return s.f.write(b)\n"
            script += "z = zipfile.ZipFile(U(open(sys.argv[1], 'wb')), 'w', zipfile.ZIP_DEFLATED)\n"
        } else {
            script += "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
        }
        for (i, member) in members.enumerated() {
            let path = dir.appendingPathComponent("m\(i)")
            try member.1.write(to: path)
            script += "z.write('\(path.path)', '\(member.0)')\n"
        }
        script += "z.close()\n"
        let out = workDir.appendingPathComponent(name).path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, out]
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        try FileManager.default.removeItem(at: dir)
        return out
    }

    func testImportsAnActivityAsSamplesWithLOINCAndAgainAddsNothing() throws {
        let path = try fit("run.fit", FITExamples.activity(start: start, heartRates: (0..<120).map { UInt8(110 + $0 % 40) }))
        let first = try ok(withPassword(["import", "--file", path, "--as", "me"]))
        XCTAssertTrue(first.stdout.contains("Imported run.fit (FIT): 1 patient(s) (1 new"), first.stdout)
        XCTAssertTrue(first.stdout.contains("Heart rate: 120 (120 new, 0 updated, 0 unchanged)"), first.stdout)
        XCTAssertTrue(first.stdout.contains("Heart rate variability (SDNN): 1 (1 new"), first.stdout)
        XCTAssertTrue(first.stdout.contains("Exercise sessions: 1 (1 new"), first.stdout)
        XCTAssertTrue(first.stdout.contains("messages read but not mapped: message 65280 1"), first.stdout)

        let me = try XCTUnwrap((try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]])?
            .first { $0["relationship"] as? String == "me" }?["id"] as? Int)
        let listed = try entries(me)
        let heart = listed.filter { $0["description"] as? String == "Heart rate" }
        XCTAssertEqual(heart.count, 120)
        XCTAssertEqual((heart.first?["codes"] as? [String: [String]])?["LOINC"], ["8867-4"])
        XCTAssertEqual(heart.first?["unit"] as? String, "count/min")
        XCTAssertTrue(listed.contains { $0["description"] as? String == "Running workout" && $0["type"] as? String == "activity" })
        // The session is a `workouts` item of the timeline, its distance and energy beside its duration.
        let page = try json(try ok(withPassword(["timeline", "--patient", "\(me)", "--from", "2026-03-01", "--to", "2026-03-02",
                                                 "--types", "workouts"])))
        let workouts = try XCTUnwrap(page["workouts"] as? [[String: Any]], "\(page)")
        XCTAssertEqual(workouts.map { $0["description"] as? String }, ["Running workout"])
        XCTAssertEqual(workouts.first?["date"] as? Int, Int(start) + 631_065_600)   // FIT's epoch is 1989-12-31
        XCTAssertGreaterThan(workouts.first?["end_date"] as? Int ?? 0, workouts.first?["date"] as? Int ?? 0)
        let details = workouts.first?["details"] as? String ?? ""
        XCTAssertTrue(details.hasPrefix("5 km, 320 kcal"), details)

        let again = try ok(withPassword(["import", "--file", path, "--as", "me"]))
        XCTAssertTrue(again.stdout.contains("0 new entries, 0 updated, 122 unchanged"), again.stdout)
        XCTAssertEqual(try entries(me).count, listed.count)
        // Into a patient named: the same person's source, nothing new.
        let named = try ok(withPassword(["import", "--file", path, "--patient", "\(me)"]))
        XCTAssertTrue(named.stdout.contains("0 new entries"), named.stdout)
    }

    func testAFolderAndGarminsZipOfZipsAreReadFileByFile() throws {
        let day1 = FITExamples.monitoring(start: start, readings: 10)
        let day2 = FITExamples.monitoring(start: start + 86_400, readings: 10)
        try fit("garmin/2026-03-01.fit", day1)
        try fit("garmin/sub/2026-03-02.FIT", day2)
        try fit("garmin/notes.txt", Array("not a fit".utf8))
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Runner"]))
        let folder = try ok(withPassword(["import", "--file", workDir.appendingPathComponent("garmin").path, "--patient", "1"]))
        XCTAssertTrue(folder.stdout.contains("(2 FIT files)"), folder.stdout)
        XCTAssertTrue(folder.stdout.contains("Step count: 20 (20 new"), folder.stdout)
        XCTAssertTrue(folder.stdout.contains("Sleep: 6 (6 new"), folder.stdout)

        let inner = try zip("UploadedFiles_0-_Part1.zip", [("a.fit", Data(day1)), ("b.fit", Data(day2))])
        let export = try zip("garmin-export.zip", [("DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip", try Data(contentsOf: URL(fileURLWithPath: inner))),
                                                   ("DI_CONNECT/readme.json", Data("{}".utf8))])
        let zipped = try ok(withPassword(["import", "--file", export, "--patient", "1"]))
        XCTAssertTrue(zipped.stdout.contains("0 new entries"), "the same files from the zip add nothing: \(zipped.stdout)")
        XCTAssertTrue(zipped.stdout.contains("passed over 1 member(s)"), zipped.stdout)
        let steps = try entries(1).filter { $0["description"] as? String == "Step count" }
            .compactMap { $0["value"] as? Double }
        XCTAssertEqual(steps.count, 20)
        // The day's walking in a day's file: 10 readings of 120 steps.
        XCTAssertEqual(steps.reduce(0, +), 2400)
    }

    /// The zip inside Garmin's zip is read in order as it inflates, never held: one written as a
    /// streaming writer writes it (sizes after each member) reads as well; one cut before its
    /// central directory is refused whole, naming it, and stores nothing.
    func testAStreamedZipInsideIsReadAndOneCutShortStoresNothing() throws {
        let day1 = FITExamples.monitoring(start: start, readings: 10)
        let day2 = FITExamples.monitoring(start: start + 86_400, readings: 10)
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Runner"]))
        let part = "DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip"
        let inner = try Data(contentsOf: URL(fileURLWithPath: try zip("inner.zip", [("a.fit", Data(day1)), ("notes.txt", Data("x".utf8)), ("b.fit", Data(day2))],
                                                                      streamed: true)))
        let directory = try XCTUnwrap(inner.range(of: Data([0x50, 0x4B, 0x01, 0x02]))).lowerBound
        let cut = try zip("cut.zip", [(part, inner.prefix(upTo: directory))])
        let refused = try hreader(withPassword(["import", "--file", cut, "--patient", "1"]))
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("UploadedFiles_0-_Part1.zip: the zip ends without its central directory"), refused.stderr)
        XCTAssertEqual(try entries(1).count, 0)

        let whole = try ok(withPassword(["import", "--file", try zip("garmin-export.zip", [(part, inner)]), "--patient", "1"]))
        XCTAssertTrue(whole.stdout.contains("Step count: 20 (20 new"), whole.stdout)
        XCTAssertTrue(whole.stdout.contains("passed over 1 member(s)"), whole.stdout)
    }

    func testADamagedFileImportsNothingAndSaysWhichFile() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Runner"]))
        try fit("batch/1.fit", FITExamples.activity(start: start, heartRates: [90, 91]))
        var bad = FITExamples.activity(start: start + 7200, heartRates: [92, 93])
        bad[40] ^= 0xFF
        try fit("batch/2.fit", bad)
        let before = snapshot()
        let result = try hreader(withPassword(["import", "--file", workDir.appendingPathComponent("batch").path, "--patient", "1"]))
        XCTAssertEqual(result.status, 5)
        XCTAssertTrue(result.stderr.contains("2.fit: damaged FIT file: the file's CRC does not match"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertEqual(try entries(1).count, 0, "the good file before it was not kept either")
        _ = before

        var lying = FITWriter()
        lying.define(local: 0, global: 20, fields: [(253, 4, 0x86), (3, 1, 0x02)])
        lying.data(local: 0, [.uint(UInt64(start)), .uint(70)])
        let liar = try fit("liar.fit", lying.file(statedDataSize: 1 << 30))
        let lied = try hreader(withPassword(["import", "--file", liar, "--patient", "1"]))
        XCTAssertEqual(lied.status, 5)
        XCTAssertTrue(lied.stderr.contains("the header states 1073741824 bytes of data"), lied.stderr)
        let truncated = try fit("cut.fit", Array(FITExamples.activity(start: start, heartRates: [90, 91]).prefix(60)))
        XCTAssertEqual(try hreader(withPassword(["import", "--file", truncated, "--patient", "1"])).status, 5)
    }

    /// A year of a watch as Garmin exports it (365 daily files in a zip inside the zip, about 120,000
    /// samples) imports in flat memory: one file at a time, so its peak is that of a tenth of it, and
    /// every sample the generator wrote is stored.
    func testAYearOfDailyFilesImportsInFlatMemory() throws {
        func generate(_ name: String, records: Int, days: Int) throws -> (path: String, samples: Int) {
            let out = workDir.appendingPathComponent(name)
            let counts = workDir.appendingPathComponent(name + ".json")
            let generator = Process()
            generator.executableURL = BuiltProducts.url(of: "hreader-health-generator")
            generator.arguments = ["--format", "fit", "--out", out.path, "--records", String(records), "--days", String(days), "--counts", counts.path]
            generator.standardOutput = FileHandle.nullDevice
            try generator.run()
            generator.waitUntilExit()
            XCTAssertEqual(generator.terminationStatus, 0)
            let summary = try JSONSerialization.jsonObject(with: Data(contentsOf: counts)) as? [String: Any]
            return (out.path, summary?["samples"] as? Int ?? -1)
        }
        let small = try generate("small.zip", records: 12_000, days: 36)
        let large = try generate("large.zip", records: 120_000, days: 365)
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Small"]))
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Large"]))
        let (smallRun, smallMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", small.path, "--patient", "1"]))
        XCTAssertEqual(smallRun.status, 0, smallRun.stderr)
        let (largeRun, largeMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", large.path, "--patient", "2"]))
        XCTAssertEqual(largeRun.status, 0, largeRun.stderr)
        XCTAssertTrue(largeRun.stdout.contains("\(large.samples) new entries"), "\(large.samples): \(largeRun.stdout)")
        XCTAssertLessThan(largeMB, smallMB + 16, "ten times the files, the same memory (\(smallMB) MB for a tenth)")
        XCTAssertLessThan(largeMB, 100)
    }

    func testAFileNamesNoOneSoAPatientMustBeGiven() throws {
        let path = try fit("run.fit", FITExamples.activity(start: start, heartRates: [90]))
        let result = try hreader(withPassword(["import", "--file", path]))
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("give --patient P or --as me"), result.stderr)
    }

    func testNothingOfTheFileIsLeftInPlaintext() throws {
        let marker = "Zyxwv Marker Watch"
        let path = try fit("run.fit", FITExamples.activity(start: start, heartRates: [90, 91, 92], product: marker))
        try ok(withPassword(["import", "--file", path, "--as", "me"]))
        let shown = try ok(withPassword(["sources", "list"]))
        XCTAssertTrue(shown.stdout.contains("Garmin FIT (Garmin \(marker))"), shown.stdout)
        // The file brings no patient of its own; its records are filed under the person `--as me` made.
        let line = shown.stdout.split(separator: "\n").first { $0.contains("Garmin FIT") } ?? ""
        XCTAssertTrue(line.contains("  1 patient(s)  "), String(line))
        let scanned = assertNoPlaintext([marker])
        XCTAssertFalse(scanned.isEmpty)
    }
}
