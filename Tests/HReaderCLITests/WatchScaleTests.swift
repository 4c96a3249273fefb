import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The views of a whole person at a watch's scale (issue 41): `summary` with every built-in tile,
/// `patients show`, the web patient page and a day-grouped export, run by the real binary on a vault
/// of a few hundred thousand generated Apple Health samples, each under a bound on the child's peak
/// memory that a view loading the whole record breaks: the child runs under `ulimit -v` (512 MiB of
/// address space, about 150 MiB of which is the binary and its libraries before it reads anything) and
/// its peak resident memory must stay within 64 MiB (before issue 41 these views took 0.45 to 0.8 GB
/// here). What they show is checked against what the record holds, read through bounded queries.
/// Timings are printed, never asserted. The generated export ends on 2026-11-20; a second, small
/// one adds steps and symptoms of the days before the test runs, so the activity and TBI tiles, which
/// look back from now, have samples to show.
final class WatchScaleTests: CLITestCase {
    /// Records of the generated export: about 200,000 samples over 400 days, the last on 2026-11-19.
    static let records = 200_000
    /// The peak a view may reach: DESIGN's goal for the views at ten million samples.
    static let boundMB = 64.0
    /// The child's address space (`ulimit -v`), in KiB: what a streamed export's threads reserve fits.
    static let addressSpaceKB = 512 * 1024

    /// The vault every test of the class reads, generated and imported once per build and day (about
    /// 15 s of a debug build): its directory and what the import printed. `make test` runs each test
    /// in a process of its own, so the vault is kept in the temporary directory, named by the test
    /// binary's build time and the day (the recent samples are relative to it), made under a lock by
    /// the first process that needs it and reused by the others; the previous builds' are removed then.
    nonisolated(unsafe) private static var shared: (root: URL, imported: String)?

    /// The environment that points a command at the shared vault.
    func onShared() throws -> [String: String] {
        if Self.shared == nil {
            let temporary = FileManager.default.temporaryDirectory
            let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            let built = Int((try? FileManager.default.attributesOfItem(atPath: binary.path)[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)
            let day = Int(Date().timeIntervalSince1970) / 86_400
            let name = "hreader-watch-scale-\(getuid())-\(built)-\(day)"
            let root = temporary.appendingPathComponent(name)
            let lock = open(temporary.appendingPathComponent("hreader-watch-scale-\(getuid()).lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            guard lock >= 0 else { throw NSError(domain: "watch-scale", code: Int(errno)) }
            defer { close(lock) }
            flock(lock, LOCK_EX)
            let ready = root.appendingPathComponent("imported.txt")
            if !FileManager.default.fileExists(atPath: ready.path) {
                for old in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
                where old.hasPrefix("hreader-watch-scale-\(getuid())-") && !old.hasSuffix(".lock") {
                    try? FileManager.default.removeItem(at: temporary.appendingPathComponent(old))
                }
                try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let env = ["HREADER_VAULT": root.appendingPathComponent("vault").path]
                let export = root.appendingPathComponent("export.zip")
                let started = Date()
                try HealthExportGenerator.write(export, records: Self.records, days: 400)
                try ok(["init", "--new-password-file", passwordFile] + Self.cheapKDF, env: env)
                var imported = try ok(withPassword(["import", "--apple-health", export.path, "--as", "me"]), env: env).stdout
                try? FileManager.default.removeItem(at: export)
                let recent = root.appendingPathComponent("recent.xml")
                try Self.recentExport(now: started).write(to: recent, atomically: true, encoding: .utf8)
                imported += try ok(withPassword(["import", "--apple-health", recent.path, "--as", "me"]), env: env).stdout
                for applet in ["org.mitre.hreader.bmi", "org.mitre.hreader.vital-sign.oxygen-saturation", "org.mitre.hreader.vital-sign.respiratory-rate",
                               "org.mitre.hreader.vital-sign.total-cholesterol", "org.mitre.hreader.encounters", "org.mitre.hreader.immunizations",
                               "org.mitre.hreader.functionalstatus", "org.mitre.hreader.tbi", "org.hreader.activity"] {
                    try ok(withPassword(["applets", "add", applet, "--patient", "1"]), env: env)
                }
                print(String(format: "watch scale: generated and imported %d records in %.1f s", Self.records, Date().timeIntervalSince(started)))
                // Written last: its presence says the vault is whole.
                try imported.write(to: ready, atomically: true, encoding: .utf8)
            }
            Self.shared = (root, try String(contentsOf: ready, encoding: .utf8))
        }
        return ["HREADER_VAULT": Self.shared!.root.appendingPathComponent("vault").path]
    }

    /// Steps every hour of the last eight days and a headache a day over the last ten, as a watch and
    /// a phone write them, up to `now` (UTC times): what the tiles that look back from now read.
    static func recentExport(now: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss '+0000'"
        let hour = Int64(now.timeIntervalSince1970) / 3600 * 3600
        var records: [String] = []
        for h in stride(from: Int64(8 * 24), through: 1, by: -1) {
            let start = Date(timeIntervalSince1970: TimeInterval(hour - h * 3600))
            let (from, to) = (formatter.string(from: start), formatter.string(from: start.addingTimeInterval(600)))
            records.append(#"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="Recent Watch" unit="count" startDate="\#(from)" endDate="\#(to)" value="\#(100 + h % 17 * 13)"/>"#)
            if h % 24 == 0 && h <= 10 * 24 {
                records.append(#"<Record type="HKCategoryTypeIdentifierHeadache" sourceName="Recent Watch" startDate="\#(from)" endDate="\#(to)" value="HKCategoryValueSeverityModerate"/>"#)
            }
        }
        return AppleHealthTests.doctype + "\n<HealthData locale=\"en_US\">\n" + #"<ExportDate value="\#(formatter.string(from: now))"/>"# + "\n"
            + records.joined(separator: "\n") + "\n</HealthData>\n"
    }

    /// Runs a view on the shared vault under the memory bounds; its output.
    func bounded(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> CLIResult {
        let env = try onShared()
        let started = Date()
        let (result, peakMB) = try hreaderMeasuringMemory(withPassword(arguments), env: env, addressSpaceKB: Self.addressSpaceKB)
        print(String(format: "watch scale: hreader %@: %.2f s, peak %.1f MB", arguments.joined(separator: " "), Date().timeIntervalSince(started), peakMB))
        XCTAssertEqual(result.status, 0, "hreader \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        XCTAssertLessThanOrEqual(peakMB, Self.boundMB, "hreader \(arguments.joined(separator: " ")) reads more than it shows", file: file, line: line)
        return result
    }

    /// Entries of one type in a window, through the entries list (a few days: bounded).
    func entries(_ type: String, from: String, env: [String: String]) throws -> [[String: Any]] {
        let listed = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--type", type, "--from", from, "--json"]), env: env))
        return try XCTUnwrap(listed["entries"] as? [[String: Any]])
    }

    static func time(_ entry: [String: Any]) -> Date? {
        let text = (entry["date"] as? String) ?? (entry["start"] as? String) ?? (entry["end"] as? String)
        return text.flatMap { ISO8601DateFormatter().date(from: $0) }
    }

    static func hasLOINC(_ entry: [String: Any], _ code: String) -> Bool {
        let codes = entry["codes"] as? [String: [String]] ?? [:]
        return (codes["LOINC"] ?? []).contains(code) || (codes["http://loinc.org"] ?? []).contains(code)
    }

    // MARK: The tiles

    func testSummaryShowsTheLatestReadingsOfAWatchsRecordWithinTheMemoryBound() throws {
        let env = try onShared()
        let summary = try json(try bounded(["summary", "--patient", "1", "--json"]))
        let tiles = Dictionary(uniqueKeysWithValues: try XCTUnwrap(summary["tiles"] as? [[String: Any]]).map { ($0["identifier"] as! String, $0) })
        XCTAssertEqual(tiles.count, 11)

        // The newest readings of each kind, from the record's last ten days, by their LOINC codes.
        let vitals = try entries("vital_sign", from: "2026-11-10", env: env).sorted { (Self.time($0) ?? .distantPast) > (Self.time($1) ?? .distantPast) }
        func newest(_ loinc: String) -> [[String: Any]] { Array(vitals.filter { Self.hasLOINC($0, loinc) }.prefix(4)) }
        func day(_ entry: [String: Any]) -> String { String(((entry["date"] as? String) ?? (entry["start"] as? String) ?? "").prefix(10)) }
        for (identifier, loinc, scale) in [("org.mitre.hreader.bmi", "39156-5", 1.0), ("org.mitre.hreader.vital-sign.oxygen-saturation", "2708-6", 100.0),
                                           ("org.mitre.hreader.vital-sign.respiratory-rate", "9279-1", 1.0)] {
            let expected = newest(loinc)
            XCTAssertEqual(expected.count, 4, "the generator writes \(loinc) daily")
            let tile = try XCTUnwrap(tiles[identifier])
            let value = try XCTUnwrap(Double(try XCTUnwrap(tile["value"] as? String)), "\(tile)")
            XCTAssertEqual(value, try XCTUnwrap(expected[0]["value"] as? Double) * scale, accuracy: 0.051, identifier)
            XCTAssertEqual(tile["updated"] as? String, (expected[0]["date"] as? String) ?? (expected[0]["start"] as? String), identifier)
            let lines = try XCTUnwrap(tile["lines"] as? [String])
            XCTAssertEqual(lines.dropFirst().map { String($0.prefix(10)) }, expected.dropFirst().map(day), "the three readings before it: \(tile)")
        }
        let pressure = try XCTUnwrap(vitals.first { Self.hasLOINC($0, "85354-9") })
        XCTAssertEqual(tiles["org.mitre.hreader.bloodpressure"]?["value"] as? String, pressure["value"] as? String, "the latest correlation")
        XCTAssertEqual(tiles["org.mitre.hreader.bloodpressure"]?["updated"] as? String, pressure["date"] as? String)

        // Symptoms of the last 30 days, counted; the week's steps, summed by day.
        let since = Date().addingTimeInterval(-30 * 86_400)
        let symptoms = try entries("symptom", from: RFC3339Text.utc(since), env: env).filter { (Self.time($0) ?? .distantPast) >= since }
        let tbi = try XCTUnwrap(tiles["org.mitre.hreader.tbi"])
        XCTAssertFalse(symptoms.isEmpty, "the recent export's headaches")
        XCTAssertEqual(tbi["value"] as? String, String(symptoms.count), "\(tbi)")
        let activity = try XCTUnwrap(tiles["org.hreader.activity"])
        let weekStart = Calendar.current.date(byAdding: .day, value: -6, to: Calendar.current.startOfDay(for: Date()))!
        let steps = try entries("activity", from: RFC3339Text.utc(weekStart), env: env)
            .filter { Self.hasLOINC($0, "55423-8") && (Self.time($0) ?? .distantPast) >= weekStart }
        let total = steps.compactMap { $0["value"] as? Double }.reduce(0, +)
        XCTAssertFalse(steps.isEmpty, "the recent export's steps")
        XCTAssertEqual(activity["value"] as? String, String(format: "%.0f", (total / 7).rounded()), "\(activity)")

        // The clinical tiles from the export's clinical records.
        let medications = try entries("medication", from: "1900-01-01", env: env)
        XCTAssertEqual(tiles["org.mitre.hreader.medications"]?["value"] as? String, String(medications.count))
        XCTAssertEqual(tiles["org.mitre.hreader.immunizations"]?["value"] as? String, String(try entries("immunization", from: "1900-01-01", env: env).count))
    }

    func testPatientPageCountsAWatchsRecordWithinTheMemoryBound() throws {
        let shown = try json(try bounded(["patients", "show", "1", "--json"]))
        let counts = try XCTUnwrap((shown["patient"] as? [String: Any])?["entry_counts"] as? [String: Int])
        // The imports said what they stored, by type: "by type: activity 114890, allergy 1, …".
        let lines = try XCTUnwrap(Self.shared?.imported).split(separator: "\n").filter { $0.contains("by type:") }
        XCTAssertEqual(lines.count, 2)
        var imported: [String: Int] = [:]
        for line in lines {
            for part in line.split(separator: ":").last!.split(separator: ",") {
                let words = part.split(separator: " ")
                imported[String(words[0]), default: 0] += Int(words[1]) ?? 0
            }
        }
        XCTAssertEqual(counts, imported)
        XCTAssertGreaterThan(counts.values.reduce(0, +), Self.records * 9 / 10)
        let text = try bounded(["patients", "show", "1"]).stdout
        XCTAssertTrue(text.contains("vital_sign \(counts["vital_sign"]!)"), text)
    }

    /// `entries list` prints every vital sign of the record (heart rate, a sample a few minutes),
    /// one line each, in time order, a batch at a time: before issue 41's audit it held them all.
    func testEntriesListPrintsAWatchsVitalSignsWithinTheMemoryBound() throws {
        let counts = try XCTUnwrap((try json(try bounded(["patients", "show", "1", "--json"]))["patient"] as? [String: Any])?["entry_counts"] as? [String: Int])
        let lines = try bounded(["entries", "list", "--patient", "1", "--type", "vital_sign", "--copies"]).stdout.split(separator: "\n")
        XCTAssertEqual(lines.first?.split(separator: " ").first, "ID")
        XCTAssertEqual(lines.count - 1, counts["vital_sign"], "one line an entry or sample")
        let dates = lines.dropFirst().compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
        // swift-foundation's ISO 8601 parser: the ICU-backed ISO8601DateFormatter took this debug-built
        // test 20 s over 80,000 lines, longer than the command it checks.
        let instants = dates.compactMap { try? Date($0, strategy: .iso8601) }
        XCTAssertEqual(instants.count, dates.count)
        XCTAssertTrue(zip(instants, instants.dropFirst()).allSatisfy { $0 <= $1 }, "in time order")
    }

    // MARK: The export

    /// Activity: about 115,000 samples, steps, distance, exercise minutes and energy summed per day as
    /// they stream (flights have no LOINC code and are counted as left out; vital signs take a debug
    /// build four times as long to write; `make bench` exports them).
    func testDayExportOfAWatchsRecordStreamsWithinTheMemoryBound() throws {
        let env = try onShared()
        let out = workDir.appendingPathComponent("activity.json")
        let result = try json(try bounded(["export", "--patient", "1", "--types", "activity", "--group", "day", "--out", out.path, "--json"]))
        let summary = try XCTUnwrap(result["export"] as? [String: Any])
        let observations = try XCTUnwrap(summary["observations"] as? Int)
        let skipped = (summary["skipped"] as? [String: Int] ?? [:]).values.reduce(0, +)
        let shown = try json(try ok(withPassword(["patients", "show", "1", "--json"]), env: env))
        let activity = try XCTUnwrap(((shown["patient"] as? [String: Any])?["entry_counts"] as? [String: Int])?["activity"])
        XCTAssertEqual((summary["entries"] as? Int ?? 0) + skipped, activity, "every activity entry is sent or counted as left out")
        let grouped = summary["grouped_entries"] as? Int ?? 0
        XCTAssertGreaterThan(grouped, Self.records / 4, "steps, distance, exercise minutes and energy summed per day")
        XCTAssertGreaterThanOrEqual(observations, 3 * 400, "each of the 400 days' steps, distance and energy at least")
        XCTAssertLessThan(observations, grouped / 10, "days, not samples")

        // The file is one Bundle: read back a piece at a time, its Observations counted.
        let handle = try FileHandle(forReadingFrom: out)
        defer { try? handle.close() }
        // The C library's memmem (TestSupport), not a byte loop of this debug-built test.
        let marker = Data(#""resourceType": "Observation""#.utf8)
        var found = 0, carried = Data(), first = Data(), last = Data()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            let bytes = carried + chunk
            if first.isEmpty { first = Data(bytes.prefix(80)) }
            // What is carried over is shorter than the marker: no occurrence is counted twice.
            found += bytes.occurrences(of: marker)
            carried = Data(bytes.suffix(marker.count - 1))
            last = Data((last + bytes).suffix(16))
        }
        XCTAssertEqual(found, observations)
        XCTAssertTrue(String(decoding: first, as: UTF8.self).hasPrefix("{\n  \"resourceType\": \"Bundle\",\n  \"type\": \"transaction\",\n  \"entry\": ["))
        XCTAssertTrue(String(decoding: last, as: UTF8.self).hasSuffix("\n    }\n  ]\n}\n"))
    }

    func testGroupedExportSumsEachDaysStepsInTimeOrder() throws {
        let env = try onShared()
        // The record's last five days, whole local days, steps summed per day as they stream.
        let since = Calendar.current.date(byAdding: .day, value: -5, to: Calendar.current.startOfDay(for: ISO8601DateFormatter().date(from: "2026-11-20T00:00:00Z")!))!
        let out = workDir.appendingPathComponent("recent.json")
        try ok(withPassword(["export", "--patient", "1", "--since", RFC3339Text.utc(since), "--group", "day", "--out", out.path]), env: env)
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any])
        let resources = try XCTUnwrap(bundle["entry"] as? [[String: Any]]).map { $0["resource"] as! [String: Any] }
        XCTAssertEqual(resources.first?["resourceType"] as? String, "Patient")
        let observations = resources.dropFirst()
        let identifiers = observations.map { (($0["identifier"] as! [[String: Any]])[0]["value"] as! String) }
        XCTAssertEqual(Set(identifiers).count, identifiers.count, "no identifier twice")
        func start(_ o: [String: Any]) -> Date {
            let text = (o["effectiveDateTime"] as? String) ?? ((o["effectivePeriod"] as? [String: Any])?["start"] as? String) ?? ""
            return ISO8601DateFormatter().date(from: text) ?? .distantPast
        }
        XCTAssertEqual(observations.map(start), observations.map(start).sorted(), "in time order")

        // The five days before the generated export's last (the recent export's steps come later).
        let last = Calendar.current.date(byAdding: .day, value: 5, to: since)!
        var expected: [Date: Double] = [:]
        for entry in try entries("activity", from: RFC3339Text.utc(since), env: env) where Self.hasLOINC(entry, "55423-8") {
            guard let time = Self.time(entry), time >= since, time < last else { continue }
            expected[Calendar.current.startOfDay(for: time), default: 0] += entry["value"] as? Double ?? 0
        }
        var sent: [Date: Double] = [:]
        for o in observations {
            let coding = ((o["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first
            guard coding?["code"] as? String == "55423-8", start(o) < last else { continue }
            XCTAssertEqual((o["valueQuantity"] as? [String: Any])?["code"] as? String, "/d")
            sent[start(o)] = (o["valueQuantity"] as? [String: Any])?["value"] as? Double
        }
        XCTAssertEqual(sent.count, 5, "five whole days of steps")
        XCTAssertEqual(sent.keys.sorted(), expected.keys.sorted())
        for (day, sum) in expected { XCTAssertEqual(sent[day] ?? -1, sum, accuracy: 1e-6, "\(day)") }
    }

    // MARK: The web page

    func testWebPatientPageOfAWatchsRecordKeepsTheServerSmall() throws {
        let env = try onShared()
        let served = try serve(env: env)
        defer { stop(served) }
        func peakMB() -> Double {
            let status = (try? String(contentsOfFile: "/proc/\(served.running.process.processIdentifier)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
            return Double(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "0").map { $0 / 1024 } ?? 0
        }
        let before = peakMB()
        let started = Date()
        let response = try served.bearer("/api/patients/1/summary")
        XCTAssertEqual(response.status, 200)
        let after = peakMB()
        print(String(format: "watch scale: GET /api/patients/1/summary: %.2f s, server peak %.1f MB (%.1f MB before)",
                     Date().timeIntervalSince(started), after, before))
        XCTAssertLessThanOrEqual(after - before, 16, "the page grew the server by more than it shows")
        let page = response.json
        let cli = try json(try ok(withPassword(["summary", "--patient", "1", "--json"]), env: env))
        XCTAssertEqual((page["tiles"] as? [[String: Any]])?.map { $0["value"] as? String }, (cli["tiles"] as? [[String: Any]])?.map { $0["value"] as? String })
        XCTAssertEqual((page["patient"] as? [String: Any])?["uuid"] as? String, (cli["patient"] as? [String: Any])?["uuid"] as? String)
    }
}

/// RFC 3339 in UTC for an option's value.
enum RFC3339Text {
    static func utc(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }
}
