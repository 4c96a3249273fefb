import Foundation
import TestSupport
import XCTest

/// A server that answers about someone else: the sample server's `/faults/ignore-patient-search`
/// honours only `_id` in searches (as a small server seen in the wild does), has no
/// CapabilityStatement and no `$everything`, so `Observation?patient=p1` lists every patient's
/// Observations; its RHEx records answer with the next patient's record. Nothing about another
/// person may be filed under the patient asked for, through the real binary and real HTTP.
final class ServerPatientCheckTests: ServerCLITestCase {
    var server: SampleServer!
    var faulty: String { server.base.absoluteString + "/faults/ignore-patient-search/fhir" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try SampleServer(["--faults", "--patients", "3", "--entries-per-patient", "30", "--seed", "11"], workDir: workDir)
    }

    override func tearDown() {
        server?.stop()
        super.tearDown()
    }

    /// The patient's own entries and nothing else, exit 0, and the server's fault named once on
    /// stderr with the count of what was left out (the other two patients' resources).
    func testImportFromServerThatIgnoresThePatientParameterFilesOnlyThatPatientsRecords() throws {
        let result = try cli(["import", "--server", faulty, "--kind", "fhir", "--patient", "p1"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("about other patients") }
        XCTAssertEqual(warnings.count, 1, "named once: \(result.stderr)")
        let line = try XCTUnwrap(warnings.first)
        XCTAssertTrue(line.hasPrefix("hreader: warning: the server returned "), String(line))
        XCTAssertTrue(line.contains(" about other patients for Observation?patient=p1 and "), String(line))
        XCTAssertTrue(line.hasSuffix("; they were not imported"), String(line))

        // The same as p1's record from the same data by a server that filters.
        let reference = try makeVault("reference")
        let honest = try SampleServer(["--patients", "3", "--entries-per-patient", "30", "--seed", "11"], workDir: workDir)
        defer { honest.stop() }
        XCTAssertEqual(try cli(["import", "--server", honest.fhir, "--patient", "p1"], vault: reference).status, 0)
        let mine = try records(in: nil), expected = try records(in: reference)
        XCTAssertEqual(mine.count, 1, "one patient")
        XCTAssertEqual(mine, expected, "exactly p1's entries")

        // How many were left out: every resource of the other two patients that a search returned.
        let json = try self.json(try cli(["import", "--server", faulty, "--patient", "p1", "--json"]))
        let summary = try XCTUnwrap(json["summary"] as? [String: Any])
        let rejected = try XCTUnwrap(summary["rejected"] as? [[String: Any]])
        let leftOut = rejected.reduce(0) { $0 + ($1["about_other_patients"] as? Int ?? 0) }
        var others = 0
        for patient in ["p2", "p3"] {
            others += try count(honest, "Patient/\(patient)/$everything") - 1   // all but the Patient itself
        }
        XCTAssertEqual(leftOut, others, "\(rejected)")
        XCTAssertTrue(rejected.contains { $0["request"] as? String == "Observation?patient=p1" }, "\(rejected)")
        XCTAssertEqual((summary["warnings"] as? [String])?.count, 1)
    }

    /// `--all` and then `sync`: each patient keeps only their own entries; the warning comes again
    /// on every run (the server is still wrong) and nothing moves between people.
    func testSyncFromSuchAServerKeepsEveryoneApart() throws {
        let reference = try makeVault("reference")
        let honest = try SampleServer(["--patients", "3", "--entries-per-patient", "30", "--seed", "11"], workDir: workDir)
        defer { honest.stop() }
        XCTAssertEqual(try cli(["import", "--server", honest.fhir, "--all"], vault: reference).status, 0)

        let first = try cli(["import", "--server", faulty, "--kind", "fhir", "--all"])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(first.stderr.components(separatedBy: "about other patients").count - 1, 1, first.stderr)
        XCTAssertEqual(try records(in: nil), try records(in: reference))

        let sync = try cli(["sync"])
        XCTAssertEqual(sync.status, 0, sync.stderr)
        XCTAssertTrue(sync.stderr.contains("about other patients for Observation?patient="), sync.stderr)
        XCTAssertTrue(sync.stdout.contains("0 new entries"), sync.stdout)
        XCTAssertEqual(try records(in: nil), try records(in: reference), "sync filed nobody's records under anyone else")
    }

    /// A patient of whom the server holds nothing: everything it returns is someone else's, so
    /// nothing trustworthy is left. Exit 6, one line naming the fault, and the patient not created.
    func testNothingTrustworthyLeftIsAServerFailureAndStoresNothing() throws {
        let patient = #"{"resourceType":"Patient","id":"lonely","name":[{"family":"Onlyone","given":["Ivo"]}],"birthDate":"1970-01-01"}"#
        let (status, _) = try server.request("/fhir/Patient/lonely", method: "PUT", body: Data(patient.utf8),
                                             headers: ["Content-Type": "application/fhir+json"])
        XCTAssertTrue([200, 201].contains(status), "PUT answered \(status)")

        let result = try cli(["import", "--server", faulty, "--kind", "fhir", "--patient", "lonely"])
        XCTAssertEqual(result.status, 6, result.stderr)
        let lines = result.stderr.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("about other patients for Observation?patient=lonely"), result.stderr)
        XCTAssertTrue(result.stderr.contains("nothing was imported"), result.stderr)
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        XCTAssertEqual(patients.count, 0, "nobody was created")
    }

    /// A server that answers `Patient/p1` (and its `$everything`) with another patient: nothing is
    /// imported, exit 6, one line naming both.
    func testAnswerAboutAnotherPatientThanTheOneAskedForIsRefused() throws {
        let base = server.base.absoluteString + "/faults/other-patient/fhir"
        let result = try cli(["import", "--server", base, "--kind", "fhir", "--patient", "p1"])
        XCTAssertEqual(result.status, 6, result.stderr)
        XCTAssertTrue(result.stderr.contains("the server answered the request for Patient/p1 with Patient p2; nothing was imported"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        XCTAssertEqual(patients.count, 0)
    }

    /// RHEx: the record document of one id answers with another patient's record (its `_id` is
    /// another entry's feed id). Exit 6, named, and nothing filed.
    func testRHExRecordOfAnotherPatientIsRefused() throws {
        let base = server.base.absoluteString + "/faults/ignore-patient-search/rhex"
        let result = try cli(["import", "--server", base, "--kind", "rhex", "--all"])
        XCTAssertEqual(result.status, 6, result.stderr)
        XCTAssertTrue(result.stderr.contains("with the record of another patient (the record names itself "), result.stderr)
        XCTAssertTrue(result.stderr.contains("another patient of the server's feed); it was not imported"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        XCTAssertEqual(patients.count, 0)
    }

    /// A server that names its records by their file names (feed ids `hs`, `js`, … while each
    /// record's `_id` is its database key), as real RHEx servers do: every record imports under its
    /// feed id, as hReader kept them, and a sync finds them again; nothing is refused.
    func testRHExServerWhoseFeedIDsAreNotTheRecordIDsImportsEveryRecord() throws {
        let files = try SampleServer(["--rhex-feed-ids", "file", "--patients", "3", "--seed", "11"], workDir: workDir)
        defer { files.stop() }
        let ids = try remoteIDs(files)
        XCTAssertEqual(ids.count, 3)
        XCTAssertTrue(ids.allSatisfy { $0.count <= 3 }, "file names, not the records' _ids: \(ids)")
        let result = try cli(["import", "--server", files.base.absoluteString + "/rhex", "--kind", "rhex", "--all"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        XCTAssertEqual(patients.count, 3, result.stderr)
        for patient in patients {
            let entries = try json(try cli(["entries", "list", "--patient", "\(patient["id"]!)", "--json"]))["entries"] as? [[String: Any]] ?? []
            XCTAssertGreaterThan(entries.count, 5)
        }
        // Again, and one by one: the records read before are the same patients, kept under the
        // feed's ids (a record kept under its _id would be a fourth patient here).
        let sync = try cli(["sync"])
        XCTAssertEqual(sync.status, 0, sync.stderr)
        for id in ids {
            let one = try cli(["import", "--server", files.base.absoluteString + "/rhex", "--kind", "rhex", "--patient", id])
            XCTAssertEqual(one.status, 0, one.stderr)
        }
        XCTAssertEqual((try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []).count, 3)
    }

    /// The same server answering each record's request with the next patient's record: the `_id`s
    /// say nothing (database keys), but the feed lists the id as someone else. Refused, nothing filed.
    func testRHExServerWithFileNamedRecordsAnsweringWithAnotherPatientIsRefused() throws {
        let files = try SampleServer(["--faults", "--rhex-feed-ids", "file", "--patients", "3", "--seed", "11"], workDir: workDir)
        defer { files.stop() }
        let base = files.base.absoluteString + "/faults/ignore-patient-search/rhex"
        for arguments in [["--all"], ["--patient", try XCTUnwrap(remoteIDs(files).last)]] {
            let result = try cli(["import", "--server", base, "--kind", "rhex"] + arguments)
            XCTAssertEqual(result.status, 6, result.stderr)
            XCTAssertTrue(result.stderr.contains("with the record of another patient (the feed lists "), result.stderr)
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        }
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        XCTAssertEqual(patients.count, 0)
    }

    /// The feed's record ids (the last segment of each alternate link).
    private func remoteIDs(_ server: SampleServer) throws -> [String] {
        let feed = try server.text("/rhex/records")
        return feed.components(separatedBy: "/records/").dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
    }
}
