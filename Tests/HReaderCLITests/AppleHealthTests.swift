import Foundation
import TestSupport
import XCTest

/// `hreader import --apple-health`: streamed exports (XML and zip), through the real binary.
final class AppleHealthTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    static let doctype = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
        <!ATTLIST Record
          type          CDATA #REQUIRED
          unit          CDATA #IMPLIED
          value         CDATA #IMPLIED
          sourceName    CDATA #REQUIRED
          startDate     CDATA #REQUIRED
          endDate       CDATA #REQUIRED
        >
        ]>
        """

    static func record(_ type: String, _ value: String, _ unit: String, _ start: String, end: String? = nil, source: String = "Test Watch") -> String {
        #"<Record type="\#(type)" sourceName="\#(source)" unit="\#(unit)" creationDate="\#(start)" startDate="\#(start)" endDate="\#(end ?? start)" value="\#(value)"/>"#
    }

    static func bp(_ s: Int, _ d: Int, _ at: String) -> (records: String, correlation: String) {
        let sys = record("HKQuantityTypeIdentifierBloodPressureSystolic", "\(s)", "mmHg", at)
        let dia = record("HKQuantityTypeIdentifierBloodPressureDiastolic", "\(d)", "mmHg", at)
        return (sys + "\n" + dia, #"<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Test Watch" creationDate="\#(at)" startDate="\#(at)" endDate="\#(at)">"# + "\n"
                + #"<MetadataEntry key="HKWasUserEntered" value="1"/>"# + "\n" + sys + "\n" + dia + "\n</Correlation>")
    }

    /// A small export with the DTD, correlations, a category sample, an unknown type, a workout and a summary.
    static func export(extraRecords: [String] = [], badDate: Bool = false) -> String {
        let bp1 = bp(128, 82, "2026-03-01 08:00:00 +0100"), bp2 = bp(121, 79, "2026-03-02 08:00:00 +0100")
        var body = [
            #"<ExportDate value="2026-11-20 10:00:00 +0100"/>"#,
            #"<Me HKCharacteristicTypeIdentifierDateOfBirth="1984-07-02" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet"/>"#,
            record("HKQuantityTypeIdentifierStepCount", "1200", "count", "2026-03-01 09:00:00 +0100", end: "2026-03-01 09:10:00 +0100"),
            record("HKQuantityTypeIdentifierStepCount", "800", "count", "2026-03-01 10:00:00 +0100", end: "2026-03-01 10:10:00 +0100"),
            record("HKQuantityTypeIdentifierStepCount", "640", "count", "2026-03-01 10:00:00 +0100", end: "2026-03-01 10:10:00 +0100", source: "Zoë’s iPhone"),
            "<Record type=\"HKQuantityTypeIdentifierHeartRate\" sourceName=\"Test Watch\" unit=\"count/min\" startDate=\"2026-03-01 09:05:00 +0100\" endDate=\"2026-03-01 09:05:00 +0100\" value=\"71\">\n<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"1\"/>\n</Record>",
            record("HKCategoryTypeIdentifierHeadache", "HKCategoryValueSeverityModerate", "", "2026-03-01 13:00:00 +0100", end: "2026-03-01 15:00:00 +0100"),
            record("HKQuantityTypeIdentifierUnderwaterDepth", "3.5", "m", "2026-03-01 16:00:00 +0100"),
            bp1.records, bp2.records,
            record("HKQuantityTypeIdentifierBloodPressureSystolic", "140", "mmHg", "2026-03-05 08:00:00 +0100"),   // no correlation
        ] + extraRecords
        if badDate { body.append(record("HKQuantityTypeIdentifierHeartRate", "80", "count/min", "yesterday-ish")) }
        body += [bp1.correlation, bp2.correlation,
                 #"<Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="31.5" durationUnit="min" totalDistance="5.2" totalDistanceUnit="km" totalEnergyBurned="320" totalEnergyBurnedUnit="kcal" sourceName="Test Watch" startDate="2026-03-01 18:00:00 +0100" endDate="2026-03-01 18:31:30 +0100"><MetadataEntry key="HKIndoorWorkout" value="0"/></Workout>"#,
                 #"<ActivitySummary dateComponents="2026-03-01" activeEnergyBurned="512" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="kcal" appleExerciseTime="41" appleExerciseTimeGoal="30" appleStandHours="11" appleStandHoursGoal="12"/>"#]
        return doctype + "\n<HealthData locale=\"en_US\">\n" + body.joined(separator: "\n") + "\n</HealthData>\n"
    }

    /// Writes a zip with Python's zipfile (an independent writer), members name → contents.
    func zip(_ name: String, _ members: [(String, Data)]) throws -> String {
        let dir = workDir.appendingPathComponent("zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var script = "import zipfile, sys\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
        for (i, member) in members.enumerated() {
            let path = dir.appendingPathComponent("m\(i)")
            try member.1.write(to: path)
            script += "z.write(\(pythonString(path.path)), \(pythonString(member.0)))\n"
        }
        script += "z.close()\n"
        let out = workDir.appendingPathComponent(name).path
        try python(script, [out])
        return out
    }

    func pythonString(_ s: String) -> String { "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }

    func python(_ script: String, _ arguments: [String] = []) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "python failed")
    }

    func entries(_ patient: Any) throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "\(patient)", "--json"])))["entries"] as! [[String: Any]]
    }

    func countsByHealthKitType(_ patient: Any) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for entry in try entries(patient) {
            let codes = entry["codes"] as? [String: [String]] ?? [:]
            if let type = codes["com.apple.health"]?.first { counts[type, default: 0] += 1 }
        }
        return counts
    }

    /// Samples of one series that start at the same second come back in the order they were stored
    /// (id), not in the table's key order (start, end, value): reads stream each series in key order
    /// and put such ties back in id order, as the whole-page sort did before.
    func testSamplesStartingTogetherComeBackInTheOrderTheyWereStored() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Testperson"]))
        let at = "2026-04-01 07:00:00 +0100"
        let ties = [("93", "2026-04-01 07:00:10 +0100"), ("81", "2026-04-01 07:00:05 +0100"), ("87", "2026-04-01 07:00:05 +0100"), ("75", nil)]
            .map { Self.record("HKQuantityTypeIdentifierHeartRate", $0.0, "count/min", at, end: $0.1) }
        let export = try file("ties.xml", Self.export(extraRecords: ties + [Self.record("HKQuantityTypeIdentifierHeartRate", "60", "count/min",
                                                                                          "2026-04-01 07:00:01 +0100")]))
        try ok(withPassword(["import", "--apple-health", export, "--patient", "1"]))
        let heartRates = try entries(1).filter { $0["description"] as? String == "Heart rate" && ($0["date"] as? String ?? ($0["start"] as? String) ?? "").hasPrefix("2026-04") }
            .map { "\(($0["value"] as? [String: Any])?["number"] ?? $0["value_number"] ?? "?")" }
        let values = try json(try ok(withPassword(["timeline", "--patient", "1", "--from", "2026-03-31", "--to", "2026-04-02"])))["vitals"]
            .flatMap { ($0 as? [[String: Any]])?.first { $0["description"] as? String == "Heart rate" }?["values"] as? [Double] }
        XCTAssertEqual(values, [93, 81, 87, 75, 60], "document order at 07:00:00, then 07:00:01 (entries: \(heartRates))")
    }

    /// `import --file` knows an Apple Health export (the Health app's zip, the folder unzipped, the
    /// XML) and imports it as `--apple-health` does, under the same rule (`--patient P` or `--as me`);
    /// before, the zip was refused as "a zip without an IHE_XDM folder".
    func testImportFileRecognisesAnAppleHealthExportInEachShape() throws {
        let xml = Data(Self.export().utf8)
        let zip = try zip("export.zip", [("apple_health_export/export.xml", xml), ("apple_health_export/export_cda.xml", Data("<ClinicalDocument/>".utf8))])
        let refused = try hreader(withPassword(["import", "--file", zip]))
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("export.zip is an Apple Health export: give --patient P (a local patient) or --as me"), refused.stderr)

        let first = try ok(withPassword(["import", "--file", zip, "--as", "me"]))
        XCTAssertTrue(first.stdout.hasPrefix("Imported export.zip (apple_health_export/export.xml): "), first.stdout)
        XCTAssertTrue(first.stdout.contains("1 workouts"), first.stdout)
        let me = try XCTUnwrap((try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]])?
            .first { $0["relationship"] as? String == "me" }?["id"] as? Int)
        let count = try entries(me).count
        XCTAssertGreaterThan(count, 5)

        // The same export unzipped, as a folder and as its XML: the same person's, nothing new.
        let folder = workDir.appendingPathComponent("apple_health_export")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try xml.write(to: folder.appendingPathComponent("export.xml"))
        for path in [folder.path, folder.appendingPathComponent("export.xml").path] {
            let again = try ok(withPassword(["import", "--file", path, "--as", "me"]))
            XCTAssertTrue(again.stdout.contains(": 0 new entries, 0 updated, \(count) unchanged"), "\(path): \(again.stdout)")
        }
        XCTAssertEqual(try entries(me).count, count)
    }

    /// A workout is an item of the timeline's `workouts` (its end and its details beside its
    /// duration), and still counted in the day's `activity` totals; `--types activity` leaves it out.
    func testAWorkoutIsATimelineItemWithItsDetails() throws {
        try ok(withPassword(["import", "--apple-health", try file("export.xml", Self.export()), "--as", "me"]))
        let page = try json(try ok(withPassword(["timeline", "--patient", "1", "--from", "2026-03-01", "--to", "2026-03-02", "--detail"])))
        let workouts = try XCTUnwrap(page["workouts"] as? [[String: Any]], "\(page.keys.sorted())")
        XCTAssertEqual(workouts.count, 1)
        let run = workouts[0]
        XCTAssertEqual(run["description"] as? String, "Running workout")
        XCTAssertEqual(run["date"] as? Int, 1_772_384_400)       // 2026-03-01 18:00:00 +0100
        XCTAssertEqual(run["end_date"] as? Int, 1_772_386_290)   // 18:31:30
        XCTAssertEqual((run["measurement"] as? [String: Any])?["value"] as? Double, 31.5)
        XCTAssertEqual(run["details"] as? String, "5.2 km, 320 kcal")
        XCTAssertNotNil(run["entry_id"])
        let activity = try XCTUnwrap(page["activity"] as? [[String: Any]])
        XCTAssertEqual(activity.first { $0["description"] as? String == "Running workout" }?["total"] as? Double, 31.5)
        // With detail a day's total reads as the web view lists it: HealthKit's bare `count` of steps
        // in the unit of their LOINC code (the watch's 2,000 steps; the phone's overlapping 640 count once).
        let steps = try XCTUnwrap(activity.first { $0["unit"] as? String == "count" }, "\(activity)")
        XCTAssertEqual(steps["display"] as? String, "2000 steps")
        XCTAssertEqual(activity.first { $0["description"] as? String == "Running workout" }?["display"] as? String, "31.5 min")

        let totalsOnly = try json(try ok(withPassword(["timeline", "--patient", "1", "--from", "2026-03-01", "--to", "2026-03-02",
                                                       "--types", "activity"])))
        XCTAssertNil(totalsOnly["workouts"])
        XCTAssertNil((totalsOnly["activity"] as? [[String: Any]])?.first?["display"], "display comes with --detail")
        let listOnly = try json(try ok(withPassword(["timeline", "--patient", "1", "--from", "2026-03-01", "--to", "2026-03-02",
                                                     "--types", "workouts"])))
        XCTAssertEqual((listOnly["workouts"] as? [[String: Any]])?.count, 1)
        XCTAssertNil(listOnly["activity"])
    }

    /// A page of one day lists that day's activity, not slivers of its neighbours: a reading at the
    /// page's very end (the next midnight) counts on the next day's page, one that began the day
    /// before and runs into the page on the day it began.
    func testADayPageListsTheActivityOfThatDayOnly() throws {
        let steps = "HKQuantityTypeIdentifierStepCount"
        try ok(withPassword(["import", "--apple-health", try file("export.xml", Self.export(extraRecords: [
            Self.record(steps, "100", "count", "2026-03-04 23:50:00 +0100", end: "2026-03-05 00:10:00 +0100"),
            Self.record(steps, "200", "count", "2026-03-05 09:00:00 +0100", end: "2026-03-05 09:10:00 +0100"),
            Self.record(steps, "300", "count", "2026-03-06 00:00:00 +0100", end: "2026-03-06 00:10:00 +0100"),
        ])), "--as", "me"]))
        func days(endingAt at: String) throws -> [String: Double] {
            let page = try json(try ok(withPassword(["timeline", "--patient", "1", "--page", "day", "--at", at, "--types", "activity"])))
            let activity = page["activity"] as? [[String: Any]] ?? []
            return Dictionary(activity.map { ($0["day"] as! String, $0["total"] as! Double) }, uniquingKeysWith: +)
        }
        XCTAssertEqual(try days(endingAt: "2026-03-05T00:00:00+01:00"), ["2026-03-04": 100])
        XCTAssertEqual(try days(endingAt: "2026-03-06T00:00:00+01:00"), ["2026-03-05": 200])
        XCTAssertEqual(try days(endingAt: "2026-03-07T00:00:00+01:00"), ["2026-03-06": 300])
        // A page of 24 hours from noon to noon covers two days, each in part.
        XCTAssertEqual(try days(endingAt: "2026-03-05T12:00:00+01:00"), ["2026-03-04": 100, "2026-03-05": 200])
    }

    /// An export imported under a patient later merged into another person is that person's export:
    /// imported again under the person (or under `--as me`), it adds nothing; unmerged, it is the
    /// first patient's again.
    func testAnExportImportedBeforeAMergeAddsNothingUnderThePersonAfter() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace"]))
        let path = try file("export.xml", Self.export())
        try ok(withPassword(["import", "--apple-health", path, "--as", "me"]))
        let me = try XCTUnwrap((try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]])?
            .first { $0["relationship"] as? String == "me" }?["id"] as? Int)
        let count = try entries(me).count
        try ok(withPassword(["patients", "merge", "1", "\(me)"]))
        XCTAssertEqual(try entries(1).count, count)
        for target in [["--patient", "1"], ["--as", "me"]] {
            let again = try ok(withPassword(["import", "--apple-health", path] + target))
            XCTAssertTrue(again.stdout.contains(": 0 new entries, 0 updated, \(count) unchanged"), "\(target): \(again.stdout)")
            XCTAssertEqual(try entries(1).count, count, "\(target)")
        }
        try ok(withPassword(["patients", "unmerge", "1"]))
        XCTAssertEqual(try entries(me).count, count)
        XCTAssertEqual(try entries(1).count, 0)
    }

    /// `patients show` counts a person's samples from their series' counts (migration 9), never
    /// reading them: the counts are what `entries list` lists, by type, after an import, a merge, an
    /// import into the merged record (new samples and repeated ones), the unmerge that gives the
    /// series back, and the removal of the source that deletes them.
    func testPatientCountsFollowTheSeriesThroughMergeReimportUnmergeAndRemoval() throws {
        func shown(_ patient: Any) throws -> [String: Int] {
            let show = try json(try ok(withPassword(["patients", "show", "\(patient)", "--json"])))
            return (show["patient"] as? [String: Any])?["entry_counts"] as? [String: Int] ?? [:]
        }
        func listed(_ patient: Any) throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for entry in try entries(patient) { counts[entry["type"] as? String ?? "", default: 0] += 1 }
            return counts
        }
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace"]))
        let path = try file("export.xml", Self.export())
        try ok(withPassword(["import", "--apple-health", path, "--as", "me"]))
        let me = try XCTUnwrap((try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]])?
            .first { $0["relationship"] as? String == "me" }?["id"] as? Int)
        let alone = try listed(me)
        XCTAssertEqual(alone["activity"], 3 + 2, "three step counts, a workout and an activity summary: \(alone)")
        XCTAssertEqual(try shown(me), alone)

        try ok(withPassword(["patients", "merge", "1", "\(me)"]))
        XCTAssertEqual(try shown(1), alone, "the series are shown under the person they were merged into")
        // Again (every sample there already) and with two new step counts, one in a new series.
        let more = try file("more.xml", Self.export(extraRecords: [
            Self.record("HKQuantityTypeIdentifierStepCount", "300", "count", "2026-03-03 09:00:00 +0100", end: "2026-03-03 09:10:00 +0100"),
            Self.record("HKQuantityTypeIdentifierStepCount", "50", "count", "2026-03-03 11:00:00 +0100", source: "Another Phone"),
        ]))
        try ok(withPassword(["import", "--apple-health", path, "--as", "me"]))
        try ok(withPassword(["import", "--apple-health", more, "--as", "me"]))
        let merged = try listed(1)
        XCTAssertEqual(merged["activity"], alone["activity"]! + 2, "\(merged)")
        XCTAssertEqual(try shown(1), merged)

        try ok(withPassword(["patients", "unmerge", "1"]))
        XCTAssertEqual(try shown(me), merged, "the series, with what they gained while merged, go back")
        XCTAssertEqual(try shown(me), try listed(me))
        XCTAssertEqual(try shown(1), [:])

        let health = try XCTUnwrap((try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as? [[String: Any]])?
            .first { $0["kind"] as? String == "apple-health" }?["id"] as? Int)
        try ok(withPassword(["sources", "remove", "\(health)", "--with-patients"]))
        let left = try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]] ?? []
        for patient in left.compactMap({ $0["id"] as? Int }) {
            XCTAssertEqual(try shown(patient), try listed(patient))
            XCTAssertNil(try shown(patient)["activity"], "the series went with their source")
        }
    }

    func testImportsAnExportWithItsDTDCountingBloodPressureOnce() throws {
        let path = try file("export.xml", Self.export())
        let result = try ok(withPassword(["import", "--apple-health", path, "--as", "me"]))
        XCTAssertTrue(result.stdout.contains("11 records, 2 correlations, 1 workouts, 1 activity summaries"), result.stdout)
        XCTAssertTrue(result.stdout.contains("4 blood-pressure records repeat"), result.stdout)
        XCTAssertTrue(result.stdout.contains("kept 1 HKQuantityTypeIdentifierUnderwaterDepth"), result.stdout)
        let patients = try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
        XCTAssertEqual(patients.count, 1)
        XCTAssertEqual(patients[0]["relationship"] as? String, "me")
        XCTAssertEqual(patients[0]["birth_date"] as? String, "1984-07-02")
        XCTAssertEqual(patients[0]["gender"] as? String, "female")
        let id = patients[0]["id"]!
        XCTAssertEqual(try countsByHealthKitType(id), [
            "HKQuantityTypeIdentifierStepCount": 3, "HKQuantityTypeIdentifierHeartRate": 1, "HKCategoryTypeIdentifierHeadache": 1,
            "HKQuantityTypeIdentifierUnderwaterDepth": 1, "HKCorrelationTypeIdentifierBloodPressure": 2,
            "HKQuantityTypeIdentifierBloodPressureSystolic": 1,   // the reading without a correlation
            "HKWorkoutActivityTypeRunning": 1, "HKActivitySummary": 1,
        ])
        let all = try entries(id)
        let bp = all.first { ($0["codes"] as? [String: [String]])?["LOINC"] == ["85354-9"] }!
        XCTAssertEqual(bp["type"] as? String, "vital_sign")
        XCTAssertEqual(bp["unit"] as? String, "mmHg", "units as recorded")
        XCTAssertTrue(["128/82", "121/79"].contains(bp["value"] as? String ?? ""))
        let headache = all.first { $0["description"] as? String == "Headache" }!
        XCTAssertEqual(headache["type"] as? String, "symptom")
        XCTAssertEqual(headache["value"] as? String, "Moderate")
        XCTAssertEqual(headache["start"] as? String, "2026-03-01T13:00:00+01:00")
        let steps = all.filter { $0["description"] as? String == "Step count" }
        XCTAssertEqual(steps.count, 3, "two sources measuring the same interval are two samples")
        XCTAssertEqual((all.first { $0["description"] as? String == "Heart rate" })?["date"] as? String, "2026-03-01T09:05:00+01:00")
        XCTAssertEqual((all.first { $0["description"] as? String == "Underwater depth" })?["type"] as? String, "observation")

        // The same export again adds nothing.
        let again = try ok(withPassword(["import", "--apple-health", path, "--as", "me"]))
        XCTAssertTrue(again.stdout.contains(": 0 new entries, 0 updated, \(all.count) unchanged"), again.stdout)
        XCTAssertEqual(try entries(id).count, all.count)
        XCTAssertEqual((try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [Any]).count, 1)
        // … whichever way the patient is named: `--patient ID` of the same patient is the same source.
        let byID = try ok(withPassword(["import", "--apple-health", path, "--patient", "\(id)"]))
        XCTAssertTrue(byID.stdout.contains(": 0 new entries, 0 updated, \(all.count) unchanged"), byID.stdout)
        XCTAssertEqual(try entries(id).count, all.count)

        // A newer export adds only what is new.
        let newer = try file("newer.xml", Self.export(extraRecords: [
            Self.record("HKQuantityTypeIdentifierStepCount", "300", "count", "2026-03-03 09:00:00 +0100", end: "2026-03-03 09:05:00 +0100"),
            Self.record("HKQuantityTypeIdentifierBodyMass", "61.2", "kg", "2026-03-03 07:00:00 +0100"),
        ]))
        let third = try ok(withPassword(["import", "--apple-health", newer, "--as", "me"]))
        XCTAssertTrue(third.stdout.contains(": 2 new entries, 0 updated, \(all.count) unchanged"), third.stdout)

        // Nothing of the export in plaintext in the vault or the temporary directory.
        for (file, data) in filesWithContents(under: vaultDir) + filesWithContents(under: childTemp) {
            for canary in ["Zoë’s iPhone", "HKCategoryValueSeverityModerate", "HKQuantityTypeIdentifierUnderwaterDepth"] {
                XCTAssertFalse(data.containsBytes(Data(canary.utf8)), "\(canary) in plaintext in \(file)")
            }
        }
    }

    func testZipFoundByContentUnderALocalisedNameWithClinicalRecords() throws {
        let observation = #"{"resourceType":"Observation","id":"lab1","status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"laboratory"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"2093-3","display":"Cholesterol"}]},"subject":{"reference":"Patient/x"},"effectiveDateTime":"2025-05-05","valueQuantity":{"value":182,"unit":"mg/dL"}}"#
        var xml = Self.export()
        xml = xml.replacingOccurrences(of: "</HealthData>", with: #"<ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="lab1" sourceName="Test Clinic" sourceURL="https://clinic.invalid/fhir" fhirVersion="4.0.1" receivedDate="2025-05-06 10:00:00 +0100" resourceFilePath="/clinical-records/Observation-lab1.json"/>"# + "\n</HealthData>")
        let zip = try zip("export.zip", [
            ("apple_health_export/export_cda.xml", Data("<?xml version=\"1.0\"?><ClinicalDocument/>".utf8)),
            ("apple_health_export/Exportieren.xml", Data(xml.utf8)),
            ("apple_health_export/clinical-records/Observation-lab1.json", Data(observation.utf8)),
        ])
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Testperson"]))
        let result = try ok(withPassword(["import", "--apple-health", zip, "--patient", "1"]))
        XCTAssertTrue(result.stdout.contains("Exportieren.xml"), result.stdout)
        XCTAssertTrue(result.stdout.contains("1 clinical records"), result.stdout)
        let cholesterol = try entries(1).first { ($0["codes"] as? [String: [String]])?["LOINC"] == ["2093-3"] }
        XCTAssertEqual(cholesterol?["type"] as? String, "result")
        XCTAssertEqual(cholesterol?["value"] as? Double, 182)
    }

    /// A clinical record of the export that restates what a portal's file said is one fact with two
    /// sources: the import regroups around the entries it added (not the whole person any more).
    func testAClinicalRecordOfTheExportJoinsTheSameFactFromAFile() throws {
        let observation = #"{"resourceType":"Observation","id":"lab1","status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"laboratory"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"2093-3","display":"Cholesterol"}]},"subject":{"reference":"Patient/x"},"effectiveDateTime":"2025-05-05","valueQuantity":{"value":182,"unit":"mg/dL"}}"#
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Testperson"]))
        let portal = try file("portal.json", #"{"resourceType":"Bundle","type":"collection","entry":[{"resource":"# + observation
            .replacingOccurrences(of: #""id":"lab1""#, with: #""id":"portal-7""#) + "}]}")
        try ok(withPassword(["import", "--file", portal, "--patient", "1"]))
        var xml = Self.export()
        xml = xml.replacingOccurrences(of: "</HealthData>", with: #"<ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="lab1" sourceName="Test Clinic" sourceURL="https://clinic.invalid/fhir" fhirVersion="4.0.1" receivedDate="2025-05-06 10:00:00 +0100" resourceFilePath="/clinical-records/Observation-lab1.json"/>"# + "\n</HealthData>")
        let zip = try zip("export.zip", [
            ("apple_health_export/export.xml", Data(xml.utf8)),
            ("apple_health_export/clinical-records/Observation-lab1.json", Data(observation.utf8)),
        ])
        try ok(withPassword(["import", "--apple-health", zip, "--patient", "1"]))
        let shown = try entries(1).filter { ($0["codes"] as? [String: [String]])?["LOINC"] == ["2093-3"] }
        XCTAssertEqual(shown.count, 1, "one fact")
        XCTAssertEqual((shown.first?["sources"] as? [Any])?.count, 2, "stated by the portal's file and the export")
    }

    /// Failed files commit nothing: malformed XML, a truncated zip, a zip bomb. A bad date is a
    /// counted skip.
    /// ZIPFoundation 0.9.20 spins forever on Linux on a truncated deflate stream (found by make fuzz):
    /// the import gives up on a member that stops inflating, with one line and exit 5.
    func testAZipWhoseDeflateStreamIsTruncatedIsRefusedNotAHang() throws {
        let zip = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fuzz/apple-health-zip/truncated-deflate-stream.zip")
        let started = Date()
        let result = try hreader(withPassword(["import", "--apple-health", zip.path, "--as", "me"]), timeout: 90)
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("does not inflate"), result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 60)
        XCTAssertEqual((try json(try ok(withPassword(["status", "--json"])))["counts"] as? [String: Int])?["entries"], 0)
    }

    /// An export with XML the fast reader does not read (a comment, a CDATA section between
    /// elements) is read again by libxml2 alone, in a new transaction: the same import, once.
    func testAnExportTheFastReaderDeclinesIsImportedByLibxml2() throws {
        let unusual = Self.export().replacingOccurrences(of: "<Workout ", with: "<!-- exported by hand -->\n<Workout ")
        let first = try ok(withPassword(["import", "--apple-health", try file("unusual.xml", unusual), "--as", "me"]))
        XCTAssertTrue(first.stdout.contains("11 records, 2 correlations, 1 workouts, 1 activity summaries"), first.stdout)
        XCTAssertTrue(first.stdout.contains("4 blood-pressure records repeat"), first.stdout)
        let count = try entries(1).count
        // The plain export, read by the fast path, finds every entry already there.
        let plain = try ok(withPassword(["import", "--apple-health", try file("plain.xml", Self.export()), "--as", "me"]))
        XCTAssertTrue(plain.stdout.contains(": 0 new entries, 0 updated, \(count) unchanged"), plain.stdout)
    }

    func testBadInputCommitsNothing() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Testperson"]))
        let good = Self.export()
        let truncatedXML = try file("truncated.xml", String(good.prefix(good.count - 300)))
        let malformed = try file("malformed.xml", good.replacingOccurrences(of: "<Workout ", with: "<Workout <<"))
        let notExport = try file("other.xml", "<?xml version=\"1.0\"?><ClinicalDocument/>")
        // Four bytes that announce UCS-4: libxml2's conversion error has no parser context, and its
        // default handler would print it to stderr beside hreader's one line (found by make fuzz).
        let ucs4 = workDir.appendingPathComponent("ucs4.xml")
        try Data([0, 0, 0, 0x3C, 0x64, 0x69, 0x23, 0x74, 0x65]).write(to: ucs4)
        let zipped = try zip("good.zip", [("apple_health_export/export.xml", Data(good.utf8))])
        let zipData = try Data(contentsOf: URL(fileURLWithPath: zipped))
        let truncatedZip = workDir.appendingPathComponent("truncated.zip")
        try zipData.prefix(zipData.count / 2).write(to: truncatedZip)
        let bomb = try zip("bomb.zip", [("apple_health_export/export.xml", Data((good.replacingOccurrences(of: "</HealthData>", with: "")
                                                                               + String(repeating: "<!-- padding -->", count: 3_000_000) + "</HealthData>").utf8))])
        for path in [truncatedXML, malformed, notExport, ucs4.path, truncatedZip.path, bomb] {
            let result = try hreader(withPassword(["import", "--apple-health", path, "--patient", "1"]))
            XCTAssertEqual(result.status, 5, "\(path): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(path): \(result.stderr)")
            XCTAssertTrue(try entries(1).isEmpty, "nothing committed after \(path)")
        }
        let bombResult = try hreader(withPassword(["import", "--apple-health", bomb, "--patient", "1"]))
        XCTAssertTrue(bombResult.stderr.contains("zip bomb"), bombResult.stderr)

        // The member's CRC-32 is checked (by hreader, with zlib's crc32, as it streams): a zip whose
        // stored CRC (local header and central directory) does not match its data is damaged.
        var damaged = zipData
        let crc = damaged.withUnsafeBytes { Array($0[14..<18]) }
        var patched = 0
        for offset in 0..<(damaged.count - 4) where damaged[offset..<(offset + 4)].elementsEqual(crc) {
            damaged[offset] ^= 0xFF
            patched += 1
        }
        XCTAssertEqual(patched, 2, "the CRC is in the local header and the central directory")
        let damagedZip = workDir.appendingPathComponent("bad-crc.zip")
        try damaged.write(to: damagedZip)
        let crcResult = try hreader(withPassword(["import", "--apple-health", damagedZip.path, "--patient", "1"]))
        XCTAssertEqual(crcResult.status, 5, crcResult.stderr)
        XCTAssertTrue(crcResult.stderr.contains("checksum does not match"), crcResult.stderr)
        XCTAssertTrue(try entries(1).isEmpty, "nothing committed after a CRC mismatch")

        let badDate = try file("bad-date.xml", Self.export(badDate: true))
        let result = try ok(withPassword(["import", "--apple-health", badDate, "--patient", "1"]))
        XCTAssertTrue(result.stdout.contains("skipped 1: a Record with a missing or unreadable startDate"), result.stdout)
    }

    /// Per type, the entries equal the export's top-level Records (blood pressure: correlations once),
    /// on an export written by the repository's generator in the real format.
    func testGeneratedExportCountsPerType() throws {
        let zip = workDir.appendingPathComponent("generated.zip"), counts = workDir.appendingPathComponent("counts.json")
        try HealthExportGenerator.write(zip, records: 3000, days: 60, extra: ["--counts", counts.path, "--export-name", "Export.xml"])
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: counts)) as! [String: Any]
        let byType = expected["records_by_type"] as! [String: Int]
        let correlations = expected["correlations_by_type"] as? [String: Int] ?? [:]

        try ok(withPassword(["import", "--apple-health", zip.path, "--as", "me"]))
        let patient = (try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]])[0]["id"]!
        let imported = try countsByHealthKitType(patient)
        for (type, count) in byType {
            if type.hasPrefix("HKQuantityTypeIdentifierBloodPressure") { continue }
            XCTAssertEqual(imported[type], count, type)
        }
        XCTAssertEqual(imported["HKCorrelationTypeIdentifierBloodPressure"], correlations["HKCorrelationTypeIdentifierBloodPressure"])
        XCTAssertEqual(imported["HKActivitySummary"], expected["activity_summaries"] as? Int)
        XCTAssertEqual(imported.filter { $0.key.hasPrefix("HKWorkoutActivityType") }.values.reduce(0, +), expected["workouts"] as? Int)
    }
}

extension AppleHealthTests {
    /// Children without attributes cost memory too: a correlation of two million empty
    /// `<Record/>`s (18 MB of XML) took 403 MB, and a 1.25 MB zip 2.9 GB.
    /// A correlation's children are counted (at most 1,000) and each is charged against the 16 MiB
    /// an element may keep: refused with one line, exit 5, in bounded memory, nothing committed;
    /// with the fast reader and with libxml2 alone (after a comment it declines) alike.
    func testACorrelationOfCountlessEmptyChildrenIsRefusedInBoundedMemory() throws {
        let correlation = #"<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Test Watch" startDate="2026-03-01 08:00:00 +0100" endDate="2026-03-01 08:00:00 +0100">"#
        /// `count` children, each followed by 0–3 spaces, tabs or newlines at random (so that a zip
        /// of it stays under the 250:1 a zip bomb is refused at).
        func export(_ children: String, count: Int, declined: Bool = false) -> Data {
            var xml = Data((Self.doctype + "\n<HealthData locale=\"en_US\">\n" + (declined ? "<!-- for libxml2 -->\n" : "")
                            + #"<ExportDate value="2026-11-20 10:00:00 +0100"/>"# + "\n" + correlation + "\n").utf8)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(count * (children.utf8.count + 2))
            var random: UInt64 = 0x9E37_79B9_7F4A_7C15
            for _ in 0..<count {
                bytes += children.utf8
                random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                for shift in stride(from: 33, to: 33 + 2 * Int(random >> 62), by: 2) {
                    bytes.append([0x20, 0x09, 0x0A, 0x20][Int(random >> UInt64(shift)) & 3])
                }
            }
            xml.append(contentsOf: bytes)
            xml.append(Data("\n</Correlation>\n</HealthData>\n".utf8))
            return xml
        }
        let records = workDir.appendingPathComponent("records.xml")
        try export("<Record/>", count: 2_000_000).write(to: records)
        let declined = workDir.appendingPathComponent("declined.xml")
        try export("<Record/>", count: 2_000_000, declined: true).write(to: declined)
        let metadata = try zip("metadata.zip", [("apple_health_export/export.xml", export("<MetadataEntry/>", count: 2_000_000))])
        let line = Self.doctype.split(separator: "\n", omittingEmptySubsequences: false).count + 3
        for (path, correlationLine) in [(records.path, line), (declined.path, line + 1), (metadata, line)] {
            let (result, peakMB) = try hreaderMeasuringMemory(withPassword(["import", "--apple-health", path, "--as", "me"]))
            XCTAssertEqual(result.status, 5, "\(path): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("the <Correlation> at line \(correlationLine) has more than 1000 children"), result.stderr)
            XCTAssertLessThan(peakMB, 150, "\(path): peak memory")
        }
        XCTAssertEqual((try json(try ok(withPassword(["status", "--json"])))["counts"] as? [String: Int])?["entries"], 0)

        // A real correlation's children, as many as a food correlation has and more, are imported.
        let plenty = String(repeating: #"<MetadataEntry key="k" value="v"/>"#, count: 990)
        let fine = Self.export().replacingOccurrences(of: #"<MetadataEntry key="HKWasUserEntered" value="1"/>"#, with: plenty)
        try ok(withPassword(["import", "--apple-health", try file("fine.xml", fine), "--as", "me"]))
    }

    /// Many records over few days (a watch's decade in miniature): what people measure by hand stays at
    /// real daily rates (two blood pressures, one weight, one resting heart rate a day), and what the
    /// caps leave goes to the watch's heart rate and steps, so the export holds the records asked for.
    func testGeneratorKeepsHandMeasuredTypesAtRealDailyRates() throws {
        let xml = workDir.appendingPathComponent("dense.xml"), counts = workDir.appendingPathComponent("dense.json")
        try HealthExportGenerator.write(xml, records: 50_000, days: 10, extra: ["--counts", counts.path])
        let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: counts)) as! [String: Any]
        let byType = expected["records_by_type"] as! [String: Int]
        XCTAssertEqual((expected["correlations_by_type"] as? [String: Int])?["HKCorrelationTypeIdentifierBloodPressure"], 20)
        XCTAssertEqual(byType["HKQuantityTypeIdentifierBodyMass"], 10)
        XCTAssertEqual(byType["HKQuantityTypeIdentifierRestingHeartRate"], 10)
        XCTAssertEqual(byType.values.reduce(0, +), 50_000)
        XCTAssertGreaterThan(byType["HKQuantityTypeIdentifierHeartRate"] ?? 0, 15_000)
    }
}

extension AppleHealthTests {
    /// A workout's route file (`<WorkoutRoute><FileReference path="/workout-routes/….gpx"/>`) read
    /// beside the XML into its summary; a route file missing from the zip, and one that is not GPX,
    /// cost their workout its route only: counted, the import done. Both readers (the fast one, and
    /// libxml2 after a comment it declines) find the file.
    func testAWorkoutsRouteFileIsSummarisedAndABrokenOneOnlyCounted() throws {
        func workout(_ at: String, _ file: String) -> String {
            #"<Workout workoutActivityType="HKWorkoutActivityTypeWalking" duration="20" durationUnit="min" sourceName="Test Watch" startDate="2026-03-0\#(at) 07:00:00 +0100" endDate="2026-03-0\#(at) 07:20:00 +0100"><MetadataEntry key="HKIndoorWorkout" value="0"/>"#
                + #"<WorkoutRoute sourceName="Test Watch" startDate="2026-03-0\#(at) 07:00:00 +0100" endDate="2026-03-0\#(at) 07:20:00 +0100"><MetadataEntry key="HKMetadataKeySyncVersion" value="2"/>"#
                + #"<FileReference path="/workout-routes/\#(file)"/></WorkoutRoute></Workout>"#
        }
        let points = [(52.5200, 34.0), (52.5290, 38.0), (52.5380, 41.0)].map { lat, ele in
            "<trkpt lon=\"13.405000\" lat=\"\(lat)\"><ele>\(ele)</ele><time>2026-03-02T06:00:00Z</time></trkpt>"
        }.joined(separator: "\n")
        let gpx = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            \(points)
            </trkseg></trk></gpx>
            """
        for (round, declined) in [false, true].enumerated() {
            var xml = Self.export().replacingOccurrences(of: "<ActivitySummary ",
                                                         with: [workout("2", "route_a.gpx"), workout("3", "route_gone.gpx"), workout("4", "route_b.gpx")].joined(separator: "\n") + "\n<ActivitySummary ")
            if declined { xml = xml.replacingOccurrences(of: "<Workout ", with: "<!-- by hand -->\n<Workout ") }
            let zip = try zip("export-\(round).zip", [
                ("apple_health_export/export.xml", Data(xml.utf8)),
                ("apple_health_export/workout-routes/route_a.gpx", Data(gpx.utf8)),
                ("apple_health_export/workout-routes/route_b.gpx", Data("{\"not\": \"gpx\"}".utf8)),
            ])
            try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Walker\(round)"]))
            let patient = "\(round + 1)"
            let result = try ok(withPassword(["import", "--apple-health", zip, "--patient", patient]))
            XCTAssertTrue(result.stdout.contains("a workout route whose file is missing from the export"), result.stdout)
            XCTAssertTrue(result.stdout.contains("a workout route file that is not GPX"), result.stdout)
            let walks = try entries(patient).filter { $0["description"] as? String == "Walking workout" }
                .sorted { ($0["start"] as? String ?? "") < ($1["start"] as? String ?? "") }
            XCTAssertEqual(walks.count, 3)
            XCTAssertEqual(walks[0]["value_text"] as? String, "route 2 km, climbing 7 m", "declined: \(declined)")
            XCTAssertNil(walks[1]["value_text"])
            XCTAssertNil(walks[2]["value_text"])
        }
        assertNoPlaintext(["52.529"])
    }
}
