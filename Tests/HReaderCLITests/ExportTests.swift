import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader export` through the real binary, against the sample server (a real process on
/// 127.0.0.1). Every resource that reaches the server or a file is checked by an independent
/// validator: the R4B models of Python's fhir.resources, in a venv made by `.ci/pydeps.sh`.
final class ExportTests: CLITestCase {
    var server: SampleServer!
    var patientUUID = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
        server = try SampleServer(["--faults"], workDir: workDir)
        let added = try json(try cli(["patients", "add", "--first", "Ada", "--last", "Lovelace", "--birth-date", "1985-12-10",
                                      "--gender", "female", "--json"]))
        patientUUID = try XCTUnwrap((added["patient"] as? [String: Any])?["uuid"] as? String)
    }

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    // MARK: Tests

    func testExportCreatesPatientAndObservationsOnceAndEverythingIsValid() throws {
        try addManualEntries()
        try importObservations([
            observation("hr1", "8867-4", "vital-signs", "Heart rate", healthKit: "HKQuantityTypeIdentifierHeartRate",
                        at: "2026-10-15T08:00:00Z", value: 72, unit: "count/min"),
            observation("hr2", "8867-4", "vital-signs", "Heart rate", healthKit: "HKQuantityTypeIdentifierHeartRate",
                        at: "2026-11-03T08:00:00Z", value: 80, unit: "count/min"),
            observation("spo2", "2708-6", "vital-signs", "Oxygen saturation", healthKit: "HKQuantityTypeIdentifierOxygenSaturation",
                        at: "2026-11-03T08:05:00Z", value: 0.97, unit: "%"),
            observation("glucose", "41653-7", "laboratory", "Blood glucose", at: "2026-11-04T07:00:00Z", value: 95, unit: "mg/dL"),
            observation("temp", "8310-5", "vital-signs", "Body temperature", at: "2026-11-04T07:05:00+01:00", value: 36.8, unit: "degC"),
            observation("weight", "29463-7", "vital-signs", "Body weight", at: "2026-11-05T07:00:00Z", value: 70, unit: "kg"),
            observation("smoking", "72166-2", "social-history", "Tobacco smoking status", at: "2026-11-05T07:00:00Z", text: "Never smoker"),
            observation("snomed-only", nil, "vital-signs", "Pulse by feel", at: "2026-11-05T07:00:00Z", value: 70, unit: "/min"),
        ])
        let weight = try entries().first { $0["description"] as? String == "Body weight" }!
        try ok(withPassword(["entries", "strike", "\(weight["id"]!)"]))

        let first = try cli(["export", "--patient", "1", "--server", server.fhir])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains("Exported 7 observations for Ada Lovelace to \(server.fhir): 7 created, 0 already there"), first.stdout)
        XCTAssertTrue(first.stdout.contains("not exported: 1 struck through, 1 without a LOINC code"), first.stdout)
        XCTAssertEqual(first.stderr, "", "no progress without a terminal")

        let patients = try serverPatients()
        XCTAssertEqual(patients.count, 1, "one Patient with hreader's identifier")
        let patient = patients[0]
        XCTAssertEqual(patient["gender"] as? String, "female")
        XCTAssertEqual(patient["birthDate"] as? String, "1985-12-10")
        XCTAssertEqual((patient["name"] as? [[String: Any]])?.first?["family"] as? String, "Lovelace")
        let patientID = try XCTUnwrap(patient["id"] as? String)

        let observations = try serverObservations(patientID)
        XCTAssertEqual(observations.count, 7)
        for o in observations {
            XCTAssertEqual(o["status"] as? String, "final")
            XCTAssertEqual((o["subject"] as? [String: Any])?["reference"] as? String, "Patient/\(patientID)")
            XCTAssertEqual(identifier(o)?.system, "urn:hreader:entry")
        }
        let byCode = Dictionary(grouping: observations) { loinc($0) ?? "" }
        XCTAssertEqual(Set(byCode.keys), ["55423-8", "85354-9", "8867-4", "2708-6", "41653-7", "8310-5"])

        let bloodPressure = try XCTUnwrap(byCode["85354-9"]?.first)
        XCTAssertNil(bloodPressure["valueQuantity"], "a panel has no value of its own")
        let components = try XCTUnwrap(bloodPressure["component"] as? [[String: Any]])
        XCTAssertEqual(components.map { loinc($0) }, ["8480-6", "8462-4"])
        XCTAssertEqual(components.map { quantity($0)?.value }, [120, 80])
        XCTAssertEqual(components.map { quantity($0)?.code }, ["mm[Hg]", "mm[Hg]"])
        XCTAssertEqual(category(bloodPressure), "vital-signs")

        let spo2 = try XCTUnwrap(byCode["2708-6"]?.first)
        XCTAssertEqual(quantity(spo2)?.value, 97, "HealthKit's fraction 0.97 is sent as 97 %")
        XCTAssertEqual(quantity(spo2)?.code, "%")
        let heartRates = try XCTUnwrap(byCode["8867-4"])
        XCTAssertEqual(Set(heartRates.compactMap { quantity($0)?.value }), [72, 80])
        XCTAssertTrue(heartRates.allSatisfy { quantity($0)?.code == "/min" && quantity($0)?.system == "http://unitsofmeasure.org" })
        XCTAssertTrue(heartRates.allSatisfy { codings($0).contains { $0.system == "com.apple.health" && $0.code == "HKQuantityTypeIdentifierHeartRate" } })
        XCTAssertEqual(heartRates.compactMap { $0["effectiveDateTime"] as? String }.sorted(), ["2026-10-15T08:00:00Z", "2026-11-03T08:00:00Z"])
        let glucose = try XCTUnwrap(byCode["41653-7"]?.first)
        XCTAssertEqual(category(glucose), "laboratory")
        XCTAssertEqual(quantity(glucose)?.code, "mg/dL")
        let temperature = try XCTUnwrap(byCode["8310-5"]?.first)
        XCTAssertEqual(quantity(temperature)?.code, "Cel")
        XCTAssertEqual(temperature["effectiveDateTime"] as? String, "2026-11-04T07:05:00+01:00", "the recorded offset is kept")
        let steps = try XCTUnwrap(byCode["55423-8"]?.first)
        XCTAssertEqual(category(steps), "activity")
        XCTAssertEqual(quantity(steps)?.value, 1200)
        XCTAssertEqual(quantity(steps)?.code, "{steps}")
        try validateFHIR([patient] + observations)

        // Again: nothing new, on the server nor in the counts.
        let second = try json(try cli(["export", "--patient", "1", "--server", server.fhir, "--json"]))
        let summary = try XCTUnwrap(second["export"] as? [String: Any])
        XCTAssertEqual(summary["observations"] as? Int, 7)
        XCTAssertEqual(summary["created"] as? Int, 0)
        XCTAssertEqual(summary["existing"] as? Int, 7)
        XCTAssertEqual(summary["patient_created"] as? Bool, false)
        XCTAssertEqual(summary["server_patient"] as? String, "Patient/\(patientID)")
        XCTAssertEqual(try serverObservations(patientID).count, 7)
        XCTAssertEqual(try serverPatients().count, 1)

        // --since and --types choose what goes (checked in a file, which needs no server).
        let recent = try exportToFile(["--since", "2026-11-03", "--types", "vital_sign"])
        XCTAssertEqual(recent.observations.compactMap(loinc).sorted(), ["2708-6", "8310-5", "8867-4"])
        let other = try exportToFile(["--types", "observation,symptom"])
        XCTAssertEqual(other.observations.count, 1)
        XCTAssertEqual(other.observations.first?["valueString"] as? String, "Never smoker")
        try validateFHIR([recent.bundle, other.bundle])

        // The vault gained audit records only: the entries are as they were.
        XCTAssertEqual(try entries().count, 10)
        let bad = try cli(["export", "--patient", "1", "--server", server.fhir, "--types", "medication"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        let both = try cli(["export", "--patient", "1", "--server", server.fhir, "--out", workDir.appendingPathComponent("x.json").path])
        XCTAssertEqual(both.status, 2, both.stderr)
    }

    /// An Apple Health export imported, then sent: Observations carry the `com.apple.health`
    /// identifier of each sample, blood pressure goes as components, all are valid, and a second
    /// export creates nothing.
    func testAppleHealthImportThenExportIsValidAndIdempotent() throws {
        let path = try file("export.xml", AppleHealthTests.export())
        try ok(withPassword(["import", "--apple-health", path, "--patient", "1"]))
        let first = try cli(["export", "--patient", "1", "--server", server.fhir, "--group", "day"])
        XCTAssertEqual(first.status, 0, first.stderr)
        let patientID = try XCTUnwrap(try serverPatients().first?["id"] as? String)
        let observations = try serverObservations(patientID)
        XCTAssertFalse(observations.isEmpty)
        let fromSamples = observations.filter { identifier($0)?.system == "com.apple.health" }
        XCTAssertTrue(fromSamples.allSatisfy { identifier($0)?.value.hasPrefix("HK:") == true })
        XCTAssertTrue(fromSamples.contains { loinc($0) == "85354-9" && ($0["component"] as? [Any])?.count == 2 }, "blood pressure with components")
        XCTAssertTrue(observations.contains { loinc($0) == "55423-8" && identifier($0)?.system == "urn:hreader:group" }, "steps summed per day")
        XCTAssertTrue(codings(fromSamples[0]).contains { $0.system == "com.apple.health" })
        try validateFHIR(observations)
        let second = try cli(["export", "--patient", "1", "--server", server.fhir, "--group", "day"])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertTrue(second.stdout.contains(": 0 created"), second.stdout)
        XCTAssertEqual(try serverObservations(patientID).count, observations.count)
    }

    func testGroupPerDaySumsStepSamplesIntoOneObservationPerDay() throws {
        var samples: [[String: Any]] = []
        for hour in 0..<24 {   // 1 November: 24 × 100 steps, 10 past each hour (UTC)
            let start = String(format: "2026-11-01T%02d:10:00Z", hour), end = String(format: "2026-11-01T%02d:15:00Z", hour)
            samples.append(observation("d1-\(hour)", "55423-8", "activity", "Step count", healthKit: "HKQuantityTypeIdentifierStepCount",
                                       at: start, end: end, value: 100, unit: "count"))
        }
        for n in 0..<10 {   // 2 November: 10 × 250 steps
            let start = String(format: "2026-11-02T09:%02d:00Z", n * 5), end = String(format: "2026-11-02T09:%02d:00Z", n * 5 + 4)
            samples.append(observation("d2-\(n)", "55423-8", "activity", "Step count", healthKit: "HKQuantityTypeIdentifierStepCount",
                                       at: start, end: end, value: 250, unit: "count"))
        }
        for n in 0..<3 {
            samples.append(observation("kcal-\(n)", "41981-2", "activity", "Active energy", at: "2026-11-01T1\(n):00:00Z",
                                       end: "2026-11-01T1\(n):30:00Z", value: 10.5, unit: "kcal"))
        }
        samples.append(observation("hr", "8867-4", "vital-signs", "Heart rate", at: "2026-11-01T12:00:00Z", value: 64, unit: "count/min"))
        // A sample in a day that is not over: held back for a later export.
        let later = ISO8601DateFormatter().string(from: Date().addingTimeInterval(3600))
        samples.append(observation("today", "55423-8", "activity", "Step count", at: later, value: 5, unit: "count"))
        try importObservations(samples)

        let result = try cli(["export", "--patient", "1", "--server", server.fhir, "--group", "day"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("Exported 4 observations for Ada Lovelace to \(server.fhir): 4 created, 0 already there"), result.stdout)
        XCTAssertTrue(result.stdout.contains("from 38 entries (37 summed per day)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("1 in an hour or day not over yet"), result.stdout)

        let patientID = try XCTUnwrap(try serverPatients().first?["id"] as? String)
        let observations = try serverObservations(patientID)
        XCTAssertEqual(observations.count, 4)
        let steps = observations.filter { loinc($0) == "55423-8" }.sorted { period($0).start < period($1).start }
        XCTAssertEqual(steps.map { quantity($0)?.value }, [2400, 2500])
        XCTAssertEqual(steps.map { quantity($0)?.code }, ["/d", "/d"])
        XCTAssertEqual(steps.map { period($0).start }, ["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z"])
        XCTAssertEqual(steps.map { period($0).end }, ["2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"])
        XCTAssertEqual(steps.map { identifier($0)?.system }, ["urn:hreader:group", "urn:hreader:group"])
        XCTAssertEqual(identifier(steps[0])?.value, "\(patientUUID):55423-8:2026-11-01T00:00:00Z")
        let energy = try XCTUnwrap(observations.first { loinc($0) == "41981-2" })
        XCTAssertEqual(quantity(energy)?.value, 31.5)
        XCTAssertEqual(quantity(energy)?.code, "kcal")
        XCTAssertEqual(identifier(try XCTUnwrap(observations.first { loinc($0) == "8867-4" }))?.system, "urn:hreader:entry",
                       "other codes go one by one")
        try validateFHIR(observations)

        let again = try cli(["export", "--patient", "1", "--server", server.fhir, "--group", "day"])
        XCTAssertTrue(again.stdout.contains("0 created, 4 already there"), again.stdout)
        XCTAssertEqual(try serverObservations(patientID).count, 4)

        // --since takes a summed day whole (a part would take the day's identifier for good).
        let sinceNoon = try exportToFile(["--group", "day", "--since", "2026-11-01T12:00:00Z"]).observations
        XCTAssertEqual(sinceNoon.filter { loinc($0) == "55423-8" }.map { quantity($0)?.value }.sorted { ($0 ?? 0) < ($1 ?? 0) }, [2400, 2500])
        XCTAssertEqual(sinceNoon.filter { loinc($0) == "8867-4" }.count, 1)
        let sinceTomorrow = try exportToFile(["--group", "day", "--since", "2026-11-02"]).observations
        XCTAssertEqual(sinceTomorrow.map { quantity($0)?.value }, [2500], "1 November ends before --since")

        // Local hours and days: in Paris (UTC+1 in November) the sample at 23:10Z belongs to 2 November.
        let paris = ["TZ": "Europe/Paris"]
        let days = try exportToFile(["--group", "day"], env: paris).observations.filter { loinc($0) == "55423-8" }
        XCTAssertEqual(days.map { period($0).start }.sorted(), ["2026-11-01T00:00:00+01:00", "2026-11-02T00:00:00+01:00"])
        XCTAssertEqual(days.sorted { period($0).start < period($1).start }.map { quantity($0)?.value }, [2300, 2600])
        let hours = try exportToFile(["--group", "hour"], env: paris)
        let hourly = hours.observations.filter { loinc($0) == "55423-8" }
        XCTAssertEqual(hourly.count, 25, "24 hours of 1 November and one of 2 November")
        let firstHour = try XCTUnwrap(hourly.first { period($0).start == "2026-11-01T01:00:00+01:00" })
        XCTAssertEqual(quantity(firstHour)?.value, 100)
        XCTAssertEqual(quantity(firstHour)?.code, "/h")
        XCTAssertEqual(period(firstHour).end, "2026-11-01T02:00:00+01:00")
        try validateFHIR([hours.bundle])
    }

    /// Distance is a day total too (issue 40: steps, distance and energy), in metres whatever unit each
    /// reading was written in: a phone's kilometres and a watch's metres of one day are one sum, and so
    /// are kilojoules and kilocalories of energy.
    func testGroupPerDaySumsDistanceAndEnergyInTheirCodesUnitWhateverUnitEachReadingHas() throws {
        let distance = "HKQuantityTypeIdentifierDistanceWalkingRunning"
        var samples = [observation("km", "55430-3", "activity", "Walking and running distance", healthKit: distance,
                                   at: "2026-11-01T08:00:00Z", end: "2026-11-01T08:30:00Z", value: 1.5, unit: "km")]
        for n in 0..<4 {
            samples.append(observation("m-\(n)", "55430-3", "activity", "Walking and running distance", healthKit: distance,
                                       at: "2026-11-01T1\(n):00:00Z", end: "2026-11-01T1\(n):10:00Z", value: 250, unit: "m"))
        }
        samples.append(observation("kj", "41981-2", "activity", "Active energy", at: "2026-11-01T09:00:00Z", end: "2026-11-01T09:20:00Z",
                                   value: 41.84, unit: "kJ"))
        samples.append(observation("kcal", "41981-2", "activity", "Active energy", at: "2026-11-01T10:00:00Z", end: "2026-11-01T10:20:00Z",
                                   value: 10, unit: "kcal"))
        try importObservations(samples)

        let exported = try exportToFile(["--group", "day"])
        let walked = exported.observations.filter { loinc($0) == "55430-3" }
        XCTAssertEqual(walked.count, 1, "one day, one Observation: \(walked)")
        XCTAssertEqual(walked.first.flatMap(quantity)?.value, 2500, "1.5 km and 4 × 250 m")
        XCTAssertEqual(walked.first.flatMap(quantity)?.code, "m", "the code's unit, not the first reading's km")
        XCTAssertEqual(walked.first.flatMap(identifier)?.system, "urn:hreader:group")
        let energy = exported.observations.filter { loinc($0) == "41981-2" }
        XCTAssertEqual(energy.map { quantity($0)?.value }, [20], "41.84 kJ are 10 kcal")
        XCTAssertEqual(energy.map { quantity($0)?.code }, ["kcal"])
        try validateFHIR([exported.bundle])
    }

    /// One calendar: the export counts its hours and days with the timeline's clock (the C library's
    /// tzdata), so the night Paris puts its clocks back (25 October 2026, 03:00 CEST → 02:00 CET) has
    /// two hours that read 02:xx, each its own, a 25-hour day, and the day's steps are the timeline's.
    func testTheNightTheClocksGoBackHasTwoHoursNamedTwoAndTheExportsDayIsTheTimelines() throws {
        var samples: [[String: Any]] = []
        // Every half hour from 21:00Z on the 24th to 02:30Z on the 26th: 100 steps at a time.
        for n in 0..<60 {
            let start = Date(timeIntervalSince1970: 1_792_875_600 + Double(n) * 1800)   // 2026-10-24T21:00:00Z
            let text = ISO8601DateFormatter().string(from: start), end = ISO8601DateFormatter().string(from: start.addingTimeInterval(300))
            samples.append(observation("dst-\(n)", "55423-8", "activity", "Step count", healthKit: "HKQuantityTypeIdentifierStepCount",
                                       at: text, end: end, value: 100, unit: "count"))
        }
        try importObservations(samples)
        let paris = ["TZ": "Europe/Paris"]
        let hours = try exportToFile(["--group", "hour"], env: paris).observations
        let starts = hours.map { period($0).start }
        XCTAssertTrue(starts.contains("2026-10-25T02:00:00+02:00") && starts.contains("2026-10-25T02:00:00+01:00"),
                      "the two hours that read 02:00 are two: \(starts.sorted())")
        XCTAssertTrue(hours.allSatisfy { quantity($0)?.value == 200 }, "every hour has its two samples")
        let days = try exportToFile(["--group", "day"], env: paris).observations.sorted { period($0).start < period($1).start }
        // The 24th has its last hour (23:00 CEST), the 25th all its 25, the 26th its first four (from 00:00 CET).
        XCTAssertEqual(days.map { period($0).start }, ["2026-10-24T00:00:00+02:00", "2026-10-25T00:00:00+02:00", "2026-10-26T00:00:00+01:00"])
        XCTAssertEqual(days.map { quantity($0)?.value }, [200, 5000, 800])
        XCTAssertEqual(period(days[1]).end, "2026-10-26T00:00:00+01:00", "the 25th is 25 hours long")
        // The timeline counts the same local days.
        let page = try json(try cli(["timeline", "--patient", "1", "--from", "2026-10-24", "--to", "2026-10-27"], env: paris))
        let activity = try XCTUnwrap(page["activity"] as? [[String: Any]], "\(page)")
        XCTAssertEqual(activity.map { $0["day"] as? String }, ["2026-10-24", "2026-10-25", "2026-10-26"])
        XCTAssertEqual(activity.map { $0["total"] as? Double }, [200, 5000, 800])
    }

    func testOutWritesOneValidTransactionBundleThatAServerAccepts() throws {
        try addManualEntries()
        let path = workDir.appendingPathComponent("export.json").path
        let result = try cli(["export", "--patient", "1", "--out", path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("Wrote 2 observations to \(path)"), result.stdout)
        let mode = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)
        XCTAssertEqual(mode.intValue & 0o777, 0o600)

        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(bundle["resourceType"] as? String, "Bundle")
        XCTAssertEqual(bundle["type"] as? String, "transaction")
        let entries = try XCTUnwrap(bundle["entry"] as? [[String: Any]])
        XCTAssertEqual(entries.count, 3)
        let patientEntry = entries[0]
        let patientURL = try XCTUnwrap(patientEntry["fullUrl"] as? String)
        XCTAssertTrue(patientURL.hasPrefix("urn:uuid:"), patientURL)
        XCTAssertEqual((patientEntry["resource"] as? [String: Any])?["resourceType"] as? String, "Patient")
        XCTAssertEqual((patientEntry["request"] as? [String: Any])?["ifNoneExist"] as? String, "identifier=urn:hreader:patient|\(patientUUID)")
        for entry in entries.dropFirst() {
            let resource = try XCTUnwrap(entry["resource"] as? [String: Any])
            XCTAssertEqual((resource["subject"] as? [String: Any])?["reference"] as? String, patientURL)
            let request = try XCTUnwrap(entry["request"] as? [String: Any])
            XCTAssertEqual(request["method"] as? String, "POST")
            XCTAssertEqual(request["url"] as? String, "Observation")
            XCTAssertEqual(request["ifNoneExist"] as? String, "identifier=urn:hreader:entry|\(identifier(resource)!.value)")
        }
        try validateFHIR([bundle])

        // A server takes the file as it is; hreader then finds everything there.
        let (status, answer) = try server.request("/fhir", method: "POST", body: data, headers: ["Content-Type": "application/fhir+json"])
        XCTAssertEqual(status, 200, String(decoding: answer, as: UTF8.self))
        let patientID = try XCTUnwrap(try serverPatients().first?["id"] as? String)
        XCTAssertEqual(try serverObservations(patientID).count, 2, "references to the urn:uuid were resolved to the new Patient")
        let auditBefore = try auditEvents()
        let export = try cli(["export", "--patient", "1", "--server", server.fhir])
        XCTAssertTrue(export.stdout.contains("0 created, 2 already there"), export.stdout)
        XCTAssertEqual(try serverPatients().count, 1)
        XCTAssertEqual(try auditEvents(), auditBefore + 1, "one audit record per export")
        let sources = try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as? [[String: Any]] ?? []
        XCTAssertFalse(sources.contains { $0["url"] as? String == server.fhir }, "exporting stores no source: \(sources)")
    }

    func testFailingServerExitsSixWithOneLine() throws {
        try addManualEntries()
        let failing = try cli(["export", "--patient", "1", "--server", server.base.absoluteString + "/faults/503/fhir"])
        XCTAssertEqual(failing.status, 6, failing.stderr)
        XCTAssertTrue(failing.stderr.contains("503"), failing.stderr)
        XCTAssertEqual(failing.stderr.split(separator: "\n").count, 1, "one line: \(failing.stderr)")

        let stopped = try SampleServer([], workDir: workDir)
        let url = stopped.fhir
        stopped.stop()
        let down = try cli(["export", "--patient", "1", "--server", url])
        XCTAssertEqual(down.status, 6, down.stderr)
        XCTAssertEqual(down.stderr.split(separator: "\n").count, 1, "one line: \(down.stderr)")
        XCTAssertEqual(down.stdout, "")
    }

    func testInterruptedExportFinishesOnRerunWithoutDuplicates() throws {
        let total = 12
        try importObservations((0..<total).map { n in
            observation("hr-\(n)", "8867-4", "vital-signs", "Heart rate", at: String(format: "2026-11-01T08:%02d:00Z", n),
                        value: Double(60 + n), unit: "count/min")
        })
        let slow = try SampleServer(["--delay-ms", "250"], workDir: workDir)
        defer { slow.stop() }
        func sent() throws -> Int {
            try slow.json("/fhir/Observation?identifier=urn:hreader:entry%7C&_count=1")["total"] as? Int ?? 0
        }

        let running = try start(withPassword(["export", "--patient", "1", "--server", slow.fhir, "--batch-size", "2"]), env: ["TZ": "UTC"])
        let deadline = Date().addingTimeInterval(20)
        var before = 0
        while running.process.isRunning && Date() < deadline {
            before = try sent()
            if before >= 2 { break }
            usleep(20_000)
        }
        kill(running.process.processIdentifier, SIGKILL)
        let killed = running.finish()
        XCTAssertTrue(killed.signaled, "the export was still running when killed: \(killed.stdout)")
        before = try sent()
        XCTAssertGreaterThan(before, 0)
        XCTAssertLessThan(before, total, "killed part-way")
        XCTAssertEqual(before % 2, 0, "a transaction is all or nothing")

        let rerun = try cli(["export", "--patient", "1", "--server", slow.fhir, "--batch-size", "2"])
        XCTAssertEqual(rerun.status, 0, rerun.stderr)
        XCTAssertTrue(rerun.stdout.contains("Exported \(total) observations"), rerun.stdout)
        XCTAssertTrue(rerun.stdout.contains("\(total - before) created, \(before) already there"), rerun.stdout)
        XCTAssertEqual(try sent(), total, "no duplicates")
        let patients = try slow.json("/fhir/Patient?identifier=urn:hreader:patient%7C\(patientUUID)")
        XCTAssertEqual(patients["total"] as? Int, 1)
    }

    // MARK: Running hreader

    /// hreader with the vault's password, in UTC unless told otherwise.
    func cli(_ arguments: [String], env: [String: String] = [:]) throws -> CLIResult {
        try hreader(withPassword(arguments), env: ["TZ": "UTC"].merging(env) { $1 })
    }

    func auditEvents() throws -> Int {
        let status = try json(try ok(withPassword(["status", "--json"])))
        return try XCTUnwrap((status["counts"] as? [String: Any])?["audit_events"] as? Int)
    }

    func entries() throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
    }

    /// A step count and a blood pressure typed in, as `docs/export.md` shows.
    func addManualEntries() throws {
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "activity", "--description", "Step count", "--value", "1200",
                             "--unit", "count", "--date", "2026-11-01T08:00:00Z", "--code", "LOINC=55423-8",
                             "--code", "com.apple.health=HKQuantityTypeIdentifierStepCount"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Blood pressure",
                             "--value", "120/80", "--unit", "mmHg", "--date", "2026-11-02T07:30:00Z", "--code", "LOINC=85354-9"]))
    }

    /// A FHIR Observation as a device or app would send it (imported with `import --file`).
    func observation(_ id: String, _ loinc: String?, _ category: String, _ text: String, healthKit: String? = nil,
                     at start: String, end: String? = nil, value: Double? = nil, unit: String? = nil, text valueText: String? = nil) -> [String: Any] {
        var codings: [[String: Any]] = loinc.map { [["system": "http://loinc.org", "code": $0]] } ?? [["system": "http://snomed.info/sct", "code": "8499008"]]
        if let healthKit { codings.append(["system": "com.apple.health", "code": healthKit]) }
        var resource: [String: Any] = [
            "resourceType": "Observation", "id": id, "status": "final",
            "category": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": category]]]],
            "code": ["coding": codings, "text": text],
        ]
        if let end { resource["effectivePeriod"] = ["start": start, "end": end] } else { resource["effectiveDateTime"] = start }
        if let value { resource["valueQuantity"] = ["value": value, "unit": unit ?? ""] }
        if let valueText { resource["valueString"] = valueText }
        return resource
    }

    func importObservations(_ resources: [[String: Any]]) throws {
        let bundle: [String: Any] = ["resourceType": "Bundle", "type": "collection", "entry": resources.map { ["resource": $0] }]
        let url = workDir.appendingPathComponent("observations-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: bundle).write(to: url)
        try ok(withPassword(["import", "--file", url.path, "--patient", "1"]))
    }

    /// Exports to a file and reads the Bundle back.
    func exportToFile(_ options: [String], env: [String: String] = [:]) throws -> (bundle: [String: Any], observations: [[String: Any]]) {
        let url = workDir.appendingPathComponent("export-\(UUID().uuidString).json")
        let result = try cli(["export", "--patient", "1", "--out", url.path] + options, env: env)
        XCTAssertEqual(result.status, 0, result.stderr)
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let resources = (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        return (bundle, resources.filter { $0["resourceType"] as? String == "Observation" })
    }

    // MARK: What the server holds

    func serverPatients() throws -> [[String: Any]] {
        let bundle = try server.json("/fhir/Patient?identifier=urn:hreader:patient%7C\(patientUUID)")
        return (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
    }

    func serverObservations(_ patientID: String) throws -> [[String: Any]] {
        let bundle = try server.json("/fhir/Observation?patient=\(patientID)&_count=1000")
        return (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
    }

    // MARK: Reading resources

    func codings(_ resource: [String: Any]) -> [(system: String?, code: String?)] {
        ((resource["code"] as? [String: Any])?["coding"] as? [[String: Any]] ?? []).map { ($0["system"] as? String, $0["code"] as? String) }
    }

    func loinc(_ resource: [String: Any]) -> String? {
        codings(resource).first { $0.system == "http://loinc.org" }?.code ?? nil
    }

    func category(_ resource: [String: Any]) -> String? {
        (((resource["category"] as? [[String: Any]])?.first?["coding"] as? [[String: Any]])?.first?["code"]) as? String
    }

    func identifier(_ resource: [String: Any]) -> (system: String, value: String)? {
        guard let first = (resource["identifier"] as? [[String: Any]])?.first,
              let system = first["system"] as? String, let value = first["value"] as? String else { return nil }
        return (system, value)
    }

    func quantity(_ resource: [String: Any]) -> (value: Double, code: String?, system: String?)? {
        guard let q = resource["valueQuantity"] as? [String: Any], let value = (q["value"] as? NSNumber)?.doubleValue else { return nil }
        return (value, q["code"] as? String, q["system"] as? String)
    }

    func period(_ resource: [String: Any]) -> (start: String, end: String) {
        let p = resource["effectivePeriod"] as? [String: Any]
        return (p?["start"] as? String ?? "", p?["end"] as? String ?? "")
    }

    // MARK: The independent validator

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The venv's interpreter: $HREADER_PYTHON, else .build/pyenv (made by .ci/pydeps.sh when missing).
    static let python: Result<String, ValidatorUnavailable> = {
        if let path = ProcessInfo.processInfo.environment["HREADER_PYTHON"] { return .success(path) }
        let directory = packageRoot.appendingPathComponent(".build/pyenv")
        let python = directory.appendingPathComponent("bin/python3").path
        if FileManager.default.isExecutableFile(atPath: python) { return .success(python) }
        let setup = Process()
        setup.executableURL = URL(fileURLWithPath: "/bin/bash")
        setup.arguments = [packageRoot.appendingPathComponent(".ci/pydeps.sh").path, directory.path]
        setup.currentDirectoryURL = packageRoot
        do {
            try setup.run()
            setup.waitUntilExit()
        } catch {
            return .failure(ValidatorUnavailable(reason: "cannot run .ci/pydeps.sh: \(error)"))
        }
        guard setup.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: python) else {
            return .failure(ValidatorUnavailable(reason: ".ci/pydeps.sh \(directory.path) failed (exit \(setup.terminationStatus))"))
        }
        return .success(python)
    }()

    struct ValidatorUnavailable: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    /// Structure and types by fhir.resources' R4B models, plus invariants the models do not check.
    static let validatorScript = #"""
        import json, sys
        from fhir.resources.R4B import get_fhir_model_class

        STATUSES = {"registered", "preliminary", "final", "amended", "corrected", "cancelled", "entered-in-error", "unknown"}
        problems = []

        def codes(concept):
            return {(c.get("system"), c.get("code")) for c in (concept or {}).get("coding", [])}

        def check(resource, where):
            kind = resource.get("resourceType")
            try:
                get_fhir_model_class(kind).model_validate(resource)
            except Exception as error:
                problems.append(f"{where} ({kind}): {error}")
                return
            if kind == "Patient" and resource.get("gender", "unknown") not in {"male", "female", "other", "unknown"}:
                problems.append(f"{where}: gender {resource.get('gender')!r}")
            if kind == "Observation":
                if resource.get("status") not in STATUSES:
                    problems.append(f"{where}: status {resource.get('status')!r}")
                has_value = any(key.startswith("value") for key in resource)
                if has_value and "dataAbsentReason" in resource:
                    problems.append(f"{where}: obs-6 value and dataAbsentReason")
                for component in resource.get("component", []):
                    if has_value and codes(component.get("code")) & codes(resource.get("code")):
                        problems.append(f"{where}: obs-7 a component repeats the code while a value is present")
                quantities = [resource.get("valueQuantity")] + [c.get("valueQuantity") for c in resource.get("component", [])]
                for quantity in quantities:
                    if quantity and "code" in quantity and "system" not in quantity:
                        problems.append(f"{where}: qty-3 a unit code without a system")
            if kind == "Bundle":
                urls = [e["fullUrl"] for e in resource.get("entry", []) if "fullUrl" in e]
                if len(urls) != len(set(urls)):
                    problems.append(f"{where}: bdl-7 fullUrls repeat")
                for index, entry in enumerate(resource.get("entry", [])):
                    if resource.get("type") in ("transaction", "batch") and "request" not in entry:
                        problems.append(f"{where}.entry[{index}]: bdl-3 no request in a {resource.get('type')}")
                    if "resource" in entry:
                        check(entry["resource"], f"{where}.entry[{index}].resource")

        with open(sys.argv[1]) as handle:
            resources = json.load(handle)
        for index, resource in enumerate(resources):
            check(resource, f"resource[{index}]")
        print("\n".join(problems) if problems else f"valid: {len(resources)} resource(s)")
        sys.exit(1 if problems else 0)
        """#

}

extension CLITestCase {
    /// Fails the test with the validator's words when any resource is not valid FHIR.
    func validateFHIR(_ resources: [[String: Any]], file: StaticString = #filePath, line: UInt = #line) throws {
        let python: String
        switch ExportTests.python {
        case .success(let path): python = path
        case .failure(let error): XCTFail("the FHIR validator is not available: \(error)", file: file, line: line); return
        }
        let script = workDir.appendingPathComponent("validate.py")
        try Data(ExportTests.validatorScript.utf8).write(to: script)
        let input = workDir.appendingPathComponent("resources-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: resources).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script.path, input.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "FHIR validation failed:\n\(text)", file: file, line: line)
    }
}
