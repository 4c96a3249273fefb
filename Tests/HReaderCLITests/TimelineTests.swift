import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderStore
import XCTest

/// `hreader timeline`: hReader's timeline.json, through the real binary.
final class TimelineTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Tess", "--last", "Timeline"]))
        try ok(withPassword(["patients", "select", "1"]))
    }

    func add(_ type: String, _ description: String, _ date: String, value: String? = nil, unit: String? = nil,
             code: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        var args = ["entries", "add", "--type", type, "--description", description, "--date", date]
        if let value { args += ["--value", value] }
        if let unit { args += ["--unit", unit] }
        if let code { args += ["--code", code] }
        try ok(withPassword(args), file: file, line: line)
    }

    func timeline(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try json(try ok(withPassword(["timeline"] + args), file: file, line: line), file: file, line: line)
    }

    func descriptions(_ payload: [String: Any], _ key: String) -> [String] {
        ((payload[key] as? [[String: Any]]) ?? []).map { $0["description"] as! String }
    }

    /// `timeline` and `search` in their plain forms are read by the quick path (QuickCommandLine), any
    /// other form by swift-argument-parser: through the binary, a line read both ways prints the same
    /// bytes, and the lines the quick path declines get swift-argument-parser's messages and exit 2.
    func testTheQuickPathPrintsWhatTheLongWayPrintsAndLeavesErrorsToIt() throws {
        try add("condition", "Asthma", "2010-05-01T08:00:00+02:00")
        try add("result", "HbA1c", "2010-05-20T08:00:00Z", value: "6.1", unit: "%")
        try add("vital_sign", "Heart rate", "2010-05-31T07:00:00Z", value: "61", unit: "/min")
        for page in [["--page", "day", "--at", "2010-05-31T12:00:00Z"], ["--page", "month", "--at", "2010-05-31T12:00:00+02:00", "--detail"],
                     ["--from", "2010-01-01", "--to", "2010-12-31", "--pretty"]] {
            let quick = try ok(["timeline"] + page + ["--password-file", passwordFile])
            // A trailing `--` (nothing after it) is a form only swift-argument-parser reads.
            let long = try ok(["timeline", "show"] + page + ["--password-file", passwordFile, "--"])
            XCTAssertFalse(quick.stdout.isEmpty)
            XCTAssertEqual(quick.stdout, long.stdout, "\(page)")
        }
        let quickSearch = try ok(["search", "asthma", "--json", "--password-file", passwordFile])
        let longSearch = try ok(["search", "--json", "--password-file", passwordFile, "--", "asthma"])
        XCTAssertTrue(quickSearch.stdout.contains("Asthma"), quickSearch.stdout)
        XCTAssertEqual(quickSearch.stdout, longSearch.stdout)

        for (arguments, message) in [(["timeline", "--page", "dya"], "unknown page 'dya'"),
                                     (["timeline", "--page", "day", "--from", "2010-01-01", "--to", "2011-01-01"], "give --page or --from/--to, not both"),
                                     (["timeline", "--page="], "Missing value for '--page <page>'"),
                                     (["timeline", "--page", "day", "--nope"], "Unknown option '--nope'"),
                                     (["search", "--limit", "many", "asthma"], "--limit"),
                                     (["search"], "Missing expected argument")] {
            let result = try hreader(withPassword(arguments))
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("hreader: ") && result.stderr.contains(message), "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("Usage: hreader"), "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stdout.isEmpty)
        }
    }

    func testWholeHistoryListsEveryDatedEntryOnceUnderItsKeyInDateOrder() throws {
        try add("condition", "Asthma", "2001-03-04")
        try add("allergy", "Penicillin", "1999-01-01")
        try add("result", "HbA1c", "2010-06-01T08:00:00Z", value: "6.1", unit: "%")
        try add("result", "Culture", "2010-05-01T08:00:00Z", value: "negative")
        try add("encounter", "Check-up", "2010-05-02")
        try add("immunization", "Influenza", "2009-10-10")
        try add("medication", "Metformin", "2010-06-02")
        try add("procedure", "Appendectomy", "1995-07-07")
        try add("symptom", "Headache", "2010-06-03T07:00:00Z")
        try add("condition", "Struck one", "2002-01-01")
        try ok(withPassword(["entries", "strike", "10"]))
        let payload = try timeline(["--from", "1990-01-01", "--to", "2020-01-01"])
        XCTAssertEqual(descriptions(payload, "conditions"), ["Asthma"], "struck entries stay off the timeline")
        XCTAssertEqual(descriptions(payload, "allergies"), ["Penicillin"])
        XCTAssertEqual(descriptions(payload, "results"), ["Culture", "HbA1c"])
        XCTAssertEqual(descriptions(payload, "encounters"), ["Check-up"])
        XCTAssertEqual(descriptions(payload, "immunizations"), ["Influenza"])
        XCTAssertEqual(descriptions(payload, "medications"), ["Metformin"])
        XCTAssertEqual(descriptions(payload, "procedures"), ["Appendectomy"])
        XCTAssertEqual(descriptions(payload, "symptoms"), ["Headache"])
        let results = payload["results"] as! [[String: Any]]
        XCTAssertEqual(results[1]["date"] as? Int, 1_275_379_200)
        XCTAssertEqual((results[1]["measurement"] as? [String: Any])?["value"] as? Double, 6.1)
        XCTAssertEqual((results[1]["measurement"] as? [String: Any])?["unit"] as? String, "%")
        XCTAssertEqual((results[0]["measurement"] as? [String: Any])?["value"] as? String, "negative")
        let localMidnight = Calendar(identifier: .gregorian).date(from: DateComponents(year: 1990, month: 1, day: 1))!
        XCTAssertEqual(payload["start_date"] as? Int, Int(localMidnight.timeIntervalSince1970), "a bare date is local midnight")
        // Only keys with entries, plus hReader's four that are always there.
        XCTAssertNil(payload["observations"])
        XCTAssertNil(payload["activity"])
        XCTAssertEqual((payload["vitals"] as? [Any])?.count, 0)
        XCTAssertNotNil(payload["levels"]); XCTAssertNotNil(payload["regimens"]); XCTAssertNotNil(payload["timeline_medications"])
    }

    func testVitalsGroupByDescriptionWithBloodPressureLastSystolicBeforeDiastolic() throws {
        try add("vital_sign", "Diastolic Blood Pressure", "2012-01-01T08:00:00Z", value: "80", unit: "mm[Hg]")
        try add("vital_sign", "Systolic Blood Pressure", "2012-01-01T08:00:00Z", value: "120", unit: "mm[Hg]")
        try add("vital_sign", "Weight", "2012-01-02T08:00:00Z", value: "70.5", unit: "kg")
        try add("vital_sign", "BMI", "2012-01-01T08:00:00Z", value: "24.1")
        try add("vital_sign", "Systolic Blood Pressure", "2012-02-01T08:00:00Z", value: "130", unit: "mm[Hg]")
        try add("vital_sign", "Weight", "2012-01-01T08:00:00Z", value: "71", unit: "kg")
        let vitals = try timeline(["--page", "year", "--at", "2012-12-31T00:00:00Z"])["vitals"] as! [[String: Any]]
        XCTAssertEqual(vitals.map { $0["description"] as! String },
                       ["BMI", "Weight", "Systolic Blood Pressure", "Diastolic Blood Pressure"])
        XCTAssertEqual(vitals[1]["values"] as? [Double], [71, 70.5], "values in date order")
        XCTAssertEqual(vitals[1]["units"] as? String, "kg")
        XCTAssertEqual(vitals[2]["values"] as? [Double], [120, 130])
    }

    func testLevelsPostedAtTwoTimesMergeInTimeOrder() throws {
        try ok(withPassword(["timeline", "add", "--key", "Levels", "pain=7", "--at", "2024-05-01T12:00:00Z"]))
        try ok(withPassword(["timeline", "add", "--key", "Levels", "pain=5", "mood=6", "--at", "2024-05-01T09:00:00Z"]))
        let levels = try timeline(["--page", "day", "--at", "2024-05-02T00:00:00Z"])["levels"] as! [String: [String]]
        XCTAssertEqual(levels, ["pain": ["5", "7"], "mood": ["6"]])
    }

    func testPostedMedicationAppearsOnTheDayPageThatContainsItAndNotBefore() throws {
        let result = try hreader(withPassword(["timeline", "add", "--key", "NewMedication", "--at", "2024-05-01T10:00:00Z",
                                               "name=Ibuprofen", "dose=200 mg"]))
        XCTAssertEqual(result.status, 0, result.stderr)
        let day = try timeline(["--page", "day", "--at", "2024-05-01T23:00:00Z"])
        XCTAssertEqual(day["timeline_medications"] as? [[String: String]], [["name": "Ibuprofen", "dose": "200 mg"]])
        let before = try timeline(["--page", "day", "--at", "2024-05-01T09:59:59Z"])
        XCTAssertEqual((before["timeline_medications"] as? [Any])?.count, 0)
        let regimen = try ok(withPassword(["timeline", "add", "--key", "MedRegiment", "--at", "2024-05-01T11:00:00Z", "name=Ibuprofen", "times=3"]))
        XCTAssertTrue(regimen.stderr.contains("regimen"), regimen.stderr)
        XCTAssertEqual((try timeline(["--page", "day", "--at", "2024-05-01T23:00:00Z"])["regimens"] as? [Any])?.count, 1)
    }

    func testJSONObjectOnStdinAndUnknownKeysStoredAsLevels() throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = withPassword(["timeline", "add", "--key", "Mood", "--at", "2024-05-01T10:00:00Z"])
        process.environment = environment()
        let pipe = Pipe(), err = Pipe()
        process.standardInput = pipe
        process.standardError = err
        try process.run()
        pipe.fileHandleForWriting.write(Data(#"{"energy": "8"}"#.utf8))
        try pipe.fileHandleForWriting.close()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let note = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(note.contains("stored as levels"), note)
        let levels = try timeline(["--page", "day", "--at", "2024-05-02T00:00:00Z"])["levels"] as! [String: [String]]
        XCTAssertEqual(levels, ["energy": ["8"]])
    }

    func testUnknownPageIsAUsageErrorNamingTheValidPages() throws {
        let result = try hreader(withPassword(["timeline", "--page", "fortnight"]))
        XCTAssertEqual(result.status, 2)
        XCTAssertTrue(result.stderr.contains("day, week, month, year, decade"), result.stderr)
    }

    func testEntryAt2330LocalTimeIsOnTheDayPageOfItsOwnDayForAtWithAnOffset() throws {
        try add("condition", "Late fever", "2024-05-01T23:30:00+02:00")
        // The day page that ends at the close of 1 May (+02:00) holds it ...
        XCTAssertEqual(descriptions(try timeline(["--page", "day", "--at", "2024-05-02T00:00:00+02:00"]), "conditions"), ["Late fever"])
        // ... the page of 2 May does not, although in UTC the entry is on 1 May 21:30.
        XCTAssertEqual(descriptions(try timeline(["--page", "day", "--at", "2024-05-03T00:00:00+02:00"]), "conditions"), [])
        // and a page ending at 23:00 +02:00 on 1 May does not either.
        XCTAssertEqual(descriptions(try timeline(["--page", "day", "--at", "2024-05-01T23:00:00+02:00"]), "conditions"), [])
    }

    func testMonthPageCountsCalendarMonthsInTheOffsetOfAt() throws {
        let payload = try timeline(["--page", "month", "--at", "2024-03-31T12:00:00-05:00"])
        // One calendar month before 31 March in -05:00 is 29 February (2024 is a leap year).
        XCTAssertEqual(payload["start_date"] as? Int, 1_709_226_000)
        XCTAssertEqual(payload["end_date"] as? Int, 1_711_904_400)
    }

    func testDetailAddsEntryIDCodesAndSourceAndTypesRestrictKeys() throws {
        try add("result", "Glucose", "2020-01-01T08:00:00Z", value: "99", unit: "mg/dL", code: "LOINC=2345-7")
        try add("condition", "Gout", "2020-01-01")
        let payload = try timeline(["--from", "2019-12-01", "--to", "2020-02-01", "--detail", "--types", "results"])
        XCTAssertNil(payload["conditions"])
        XCTAssertNil(payload["vitals"], "--types leaves out the other keys")
        let result = (payload["results"] as! [[String: Any]])[0]
        XCTAssertEqual(result["entry_id"] as? Int, 1)
        XCTAssertEqual(result["codes"] as? [String: [String]], ["LOINC": ["2345-7"]])
        XCTAssertEqual((result["source"] as? [String: Any])?["kind"] as? String, "manual")
        XCTAssertEqual(try hreader(withPassword(["timeline", "--from", "2019-12-01", "--to", "2020-02-01", "--types", "gossip"])).status, 2)
    }

    func testActivityIsSummedPerDay() throws {
        try add("activity", "Steps", "2024-05-01T08:00:00Z", value: "4000", unit: "count")
        try add("activity", "Steps", "2024-05-01T18:00:00Z", value: "6000", unit: "count")
        try add("activity", "Steps", "2024-05-02T08:00:00Z", value: "1000", unit: "count")
        let activity = try timeline(["--page", "week", "--at", "2024-05-03T00:00:00Z"])["activity"] as! [[String: Any]]
        XCTAssertEqual(activity.map { $0["day"] as! String }, ["2024-05-01", "2024-05-02"])
        XCTAssertEqual(activity.map { $0["total"] as! Double }, [10000, 1000])
    }

    /// A `--from/--to` range counts its activity days in the offset both times state, as a page does in
    /// the offset of `--at` (and as the same day page does); in the local zone when they state none or
    /// different ones. The process runs in UTC, where the offset's day and the local day differ.
    func testARangeCountsItsDaysInTheOffsetItsTimesState() throws {
        try add("activity", "Steps", "2024-05-01T23:30:00Z", value: "500", unit: "count")   // 01:30 on 2 May at +02:00
        func days(_ args: [String]) throws -> [String] {
            let result = try ok(withPassword(["timeline"] + args), env: ["TZ": "UTC"])
            return ((try json(result)["activity"] as? [[String: Any]]) ?? []).map { $0["day"] as! String }
        }
        XCTAssertEqual(try days(["--from", "2024-05-01T00:00:00+02:00", "--to", "2024-05-03T00:00:00+02:00"]), ["2024-05-02"])
        XCTAssertEqual(try days(["--page", "day", "--at", "2024-05-03T00:00:00+02:00"]), ["2024-05-02"], "the day page agrees")
        XCTAssertEqual(try days(["--from", "2024-05-01T00:00:00Z", "--to", "2024-05-03T00:00:00Z"]), ["2024-05-01"])
        XCTAssertEqual(try days(["--from", "2024-05-01T00:00:00+01:00", "--to", "2024-05-03T00:00:00+02:00"]), ["2024-05-01"],
                       "offsets that differ: the local zone (UTC here)")
        XCTAssertEqual(try days(["--from", "2024-05-01", "--to", "2024-05-03"]), ["2024-05-01"], "dates: the local zone")
    }

    /// The web view's `from`/`to` count their days as `--from`/`--to` do: in the offset both state, else
    /// in the server's local zone.
    func testTheWebViewCountsARangesDaysAsTheCommandDoes() throws {
        try add("activity", "Steps", "2024-05-01T23:30:00Z", value: "500", unit: "count")   // 01:30 on 2 May at +02:00
        let served = try serve(env: ["TZ": "UTC"])
        defer { stop(served) }
        func days(_ query: String) throws -> [String] {
            let response = try served.bearer("/timeline.json?patient=1&" + query)
            XCTAssertEqual(response.status, 200, response.body)
            let payload = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any])
            return ((payload["activity"] as? [[String: Any]]) ?? []).map { $0["day"] as! String }
        }
        XCTAssertEqual(try days("from=2024-05-01T00:00:00%2B02:00&to=2024-05-03T00:00:00%2B02:00"), ["2024-05-02"])
        XCTAssertEqual(try days("page=day&at=2024-05-03T00:00:00%2B02:00"), ["2024-05-02"])
        XCTAssertEqual(try days("from=2024-05-01&to=2024-05-03"), ["2024-05-01"], "dates: the server's zone (UTC here)")
    }

    /// A page ending now counts its days in the local zone (TZ), not in UTC: two activity entries an hour
    /// apart around a local midnight at +14:00 fall on two local days, though on one UTC day.
    func testAPageEndingNowCountsItsDaysInTheLocalZone() throws {
        guard FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/Etc/GMT-14") else { throw XCTSkip("no tzdata") }
        let offset: Int64 = 14 * 3600
        let now = Int64(Date().timeIntervalSince1970)
        let midnight = (now + offset - 2 * 3600) / 86_400 * 86_400 - offset   // a local midnight two hours ago or more
        try add("activity", "Steps", RFC3339.utc(midnight - 1800), value: "100", unit: "count")
        try add("activity", "Steps", RFC3339.utc(midnight + 1800), value: "200", unit: "count")
        let result = try ok(withPassword(["timeline", "--page", "week"]), env: ["TZ": "Etc/GMT-14"])
        let activity = try XCTUnwrap(try json(result)["activity"] as? [[String: Any]])
        XCTAssertEqual(activity.map { $0["total"] as! Double }, [100, 200], "two local days")
    }

    /// Compact pages are written straight out (no tree): the CLI's bytes are the tree's bytes
    /// (`JSONValue.serialized()`, read in process) with DEL and C1 controls replaced as everything
    /// printed is; the web's are the tree's exactly. Hostile text, awkward numbers, vitals from a
    /// "120/80" text, activity and posted levels included.
    func testCompactPagesAreTheTreeWrittenStraightOut() throws {
        try add("condition", "Quote \" back\\slash \u{01} tab\t DEL\u{7F} CSI\u{9B}2J é 🫀", "2024-05-01T08:00:00Z")
        try add("result", "Tiny", "2024-05-01T09:00:00Z", value: "0.1", unit: "mmol/L")
        try add("result", "Huge", "2024-05-01T09:30:00Z", value: "1e20")
        try ok(withPassword(["entries", "add", "--type", "vital_sign", "--description", "Heart rate", "--date", "2024-05-01T10:00:00Z",
                             "--value=-3", "--unit", "/min"]))
        try add("vital_sign", "Heart rate", "2024-05-01T11:00:00Z", value: "72.25", unit: "/min")
        try add("vital_sign", "Blood pressure", "2024-05-01T12:00:00Z", value: "120/80", unit: "mm[Hg]")
        try add("vital_sign", "Mood", "2024-05-01T12:30:00Z", value: "good")
        try add("activity", "Steps", "2024-05-01T08:00:00Z", value: "4000.5", unit: "count")
        try add("activity", "Steps", "2024-05-02T08:00:00Z", value: "1000", unit: "count")
        try ok(withPassword(["timeline", "add", "--key", "Levels", "pain=5", "note=a\u{7F}b"]))
        let range = ["--from", "2024-04-01", "--to", "2030-01-01"]
        let cli = try ok(withPassword(["timeline", "--detail"] + range)).stdout

        let service = VaultService(vault: Vault(root: vaultDir))
        let open = try service.open(.password(SecretBytes(Array(Self.password.utf8))))
        let patient = try open.patient("1")
        let start = try XCTUnwrap(ISO8601DateFormatter().date(from: "2024-04-01T00:00:00Z"))
        let query = TimelineQuery(range: TimelineRange(start: Int64(start.timeIntervalSince1970) - Int64(TimeZone.current.secondsFromGMT(for: start)),
                                                       end: Int64(Date().timeIntervalSince1970) + 5 * 366 * 86_400), detail: true)
        let tree = try open.timeline(patient: patient, query: query).serialized()
        var written: [UInt8] = []
        var out = JSONByteWriter(chunkBytes: 7) { written.append(contentsOf: $0) }
        try open.writeTimeline(patient: patient, query: query, to: &out)
        XCTAssertEqual(String(decoding: written, as: UTF8.self), tree, "the web's bytes are the tree's")

        func terminalClean(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value == 0x7F || (0x80...0x9F).contains($0.value) ? "\u{FFFD}" : $0 }))
        }
        let cliPayload = try XCTUnwrap(cli.split(separator: "\n").first.map(String.init))
        let treeFromCLI = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cliPayload.utf8)) as? [String: Any])
        XCTAssertEqual(cliPayload.replacingOccurrences(of: "\"end_date\":\(treeFromCLI["end_date"]!)", with: ""),
                       terminalClean(tree).replacingOccurrences(of: "\"end_date\":\(query.range.end)", with: ""),
                       "the CLI's bytes are the tree's, controls replaced (end date aside: --to is local midnight)")
        XCTAssertTrue(cliPayload.contains("DEL\u{FFFD} CSI\u{FFFD}2J é 🫀"), cliPayload)
        XCTAssertTrue(tree.contains("\\\" back\\\\slash \\u0001 tab\\t"), tree)
    }
}
