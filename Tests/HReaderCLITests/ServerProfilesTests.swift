import Foundation
import TestSupport
import XCTest

/// `import --server` and `export` against the kinds of FHIR servers people have: the sample
/// server's `--profile minimal` (read, search and plain create; capped pages behind cursors),
/// `--profile readonly`, and a server without a CapabilityStatement (`/faults/no-metadata`), each a
/// real process on 127.0.0.1, through the real binary.
final class ServerProfilesTests: ServerCLITestCase {
    // MARK: Import

    /// A minimal server gives the same entries by per-type searches (over capped, cursor-paged
    /// searches, the patient list too) as a full server gives by `$everything`.
    func testImportFromMinimalServerMatchesFullServer() throws {
        let data = ["--patients", "22", "--entries-per-patient", "45", "--seed", "7"]
        let full = try SampleServer(data, workDir: workDir)
        let minimal = try SampleServer(data + ["--profile", "minimal"], workDir: workDir)
        let other = try makeVault("full-vault")

        let fromFull = try cli(["import", "--server", full.fhir, "--all"], vault: other)
        XCTAssertEqual(fromFull.status, 0, fromFull.stderr)
        XCTAssertTrue(fromFull.stdout.contains("read with Patient/$everything"), fromFull.stdout)
        let fromMinimal = try cli(["import", "--server", minimal.fhir, "--all"])
        XCTAssertEqual(fromMinimal.status, 0, fromMinimal.stderr)
        XCTAssertTrue(fromMinimal.stdout.contains("Imported 22 patient(s)"), "the patient list pages by cursor: \(fromMinimal.stdout)")
        let said = fromMinimal.stdout.components(separatedBy: "the server declares no Patient/$everything: per-type searches").count - 1
        XCTAssertEqual(said, 1, "said once: \(fromMinimal.stdout)")
        XCTAssertFalse(fromMinimal.stdout.contains("OperationOutcome"), "warnings are not kept as entries: \(fromMinimal.stdout)")

        let expected = try records(in: other)
        XCTAssertEqual(expected.count, 22)
        XCTAssertEqual(try records(in: nil), expected, "the same entries, patient by patient")
    }

    /// A server without a readable CapabilityStatement whose `$everything` answers 400: the import
    /// falls back to per-type searches and says so.
    func testImportWithoutCapabilityStatementFallsBackAndSaysSo() throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        let base = server.base.absoluteString + "/faults/no-metadata/fhir"
        let result = try cli(["import", "--server", base, "--kind", "fhir", "--all"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("Imported 3 patient(s)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("no CapabilityStatement (404 Not Found); $everything failed (400): per-type searches"), result.stdout)
        let json = try self.json(try cli(["import", "--server", base, "--all", "--json"]))
        let notes = (json["summary"] as? [String: Any])?["notes"] as? [String] ?? []
        XCTAssertTrue(notes.contains { $0.contains("$everything failed (400)") }, "\(notes)")

        let reference = try makeVault("reference")
        XCTAssertEqual(try cli(["import", "--server", server.fhir, "--all"], vault: reference).status, 0)
        XCTAssertEqual(try records(in: nil), try records(in: reference), "the same entries as by $everything")
    }

    // MARK: Export

    /// Against a minimal server (no transactions, no conditional create): identifiers looked up,
    /// only the missing created; a second export creates nothing. Against a full one: transactions.
    func testExportTwiceCreatesEachObservationOnceOnMinimalAndFullServers() throws {
        try addPatientWithHeartRates(45)
        let minimal = try SampleServer(["--profile", "minimal"], workDir: workDir)
        let first = try cli(["export", "--patient", "1", "--server", minimal.fhir])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains(": 45 created, 0 already there"), first.stdout)
        XCTAssertTrue(first.stdout.contains("mode: lookup-create"), first.stdout)
        let second = try json(try cli(["export", "--patient", "1", "--server", minimal.fhir, "--json"]))["export"] as? [String: Any]
        XCTAssertEqual(second?["mode"] as? String, "lookup-create")
        XCTAssertEqual(second?["created"] as? Int, 0)
        XCTAssertEqual(second?["existing"] as? Int, 45)
        XCTAssertEqual(second?["patient_created"] as? Bool, false)
        XCTAssertEqual(try count(minimal, "Observation?identifier=urn:hreader:entry%7C"), 45, "each Observation once")
        XCTAssertEqual(try count(minimal, "Patient?identifier=urn:hreader:patient%7C"), 1)
        XCTAssertNil(try minimal.json("/probe/stats")["methods"].flatMap { ($0 as? [String: Any])?["PUT"] }, "nothing updated")

        let full = try SampleServer(workDir: workDir)
        let viaTransactions = try cli(["export", "--patient", "1", "--server", full.fhir, "--batch-size", "20"])
        XCTAssertEqual(viaTransactions.status, 0, viaTransactions.stderr)
        XCTAssertTrue(viaTransactions.stdout.contains(": 45 created, 0 already there"), viaTransactions.stdout)
        XCTAssertTrue(viaTransactions.stdout.contains("mode: transaction"), viaTransactions.stdout)
        let again = try json(try cli(["export", "--patient", "1", "--server", full.fhir, "--json"]))["export"] as? [String: Any]
        XCTAssertEqual(again?["mode"] as? String, "transaction")
        XCTAssertEqual(again?["created"] as? Int, 0)
        XCTAssertEqual(try count(full, "Observation?identifier=urn:hreader:entry%7C"), 45)
    }

    /// A read-only server: one line naming what is missing, exit 6, and not one write reached it.
    func testExportToReadOnlyServerFailsBeforeWriting() throws {
        try addPatientWithHeartRates(3)
        let readonly = try SampleServer(["--profile", "readonly"], workDir: workDir)
        let result = try cli(["export", "--patient", "1", "--server", readonly.fhir])
        XCTAssertEqual(result.status, 6, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
        XCTAssertTrue(result.stderr.contains("declares no 'create' for Observation"), result.stderr)
        XCTAssertTrue(result.stderr.contains("read-only"), result.stderr)
        XCTAssertEqual(result.stdout, "")
        let methods = try XCTUnwrap(try readonly.json("/probe/stats")["methods"] as? [String: Int])
        XCTAssertEqual(Set(methods.keys), ["GET"], "no write was sent: \(methods)")
        // And the server would have refused one.
        let (status, _) = try readonly.request("/fhir/Observation", method: "POST", body: Data(#"{"resourceType":"Observation"}"#.utf8),
                                               headers: ["Content-Type": "application/fhir+json"])
        XCTAssertEqual(status, 405)
    }

    /// No CapabilityStatement, and transactions refused (a minimal server behind the no-metadata
    /// fault): the refused transaction is sent again as lookups and plain creates; nothing twice.
    func testExportWithoutStatementFallsBackWhenTransactionsAreRefused() throws {
        try addPatientWithHeartRates(25)
        let server = try SampleServer(["--faults", "--profile", "minimal"], workDir: workDir)
        let base = server.base.absoluteString + "/faults/no-metadata/fhir"
        let first = try cli(["export", "--patient", "1", "--server", base])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains(": 25 created, 0 already there"), first.stdout)
        XCTAssertTrue(first.stdout.contains("a transaction was refused (400)"), first.stdout)
        XCTAssertTrue(first.stdout.contains("mode: lookup-create"), first.stdout)
        let second = try cli(["export", "--patient", "1", "--server", base])
        XCTAssertTrue(second.stdout.contains(": 0 created, 25 already there"), second.stdout)
        XCTAssertEqual(try count(server, "Observation?identifier=urn:hreader:entry%7C"), 25)
    }

    /// A server with conditional create but no Bundles: one conditional create per Observation.
    func testExportByConditionalCreatesWhenTheServerTakesNoBundles() throws {
        try addPatientWithHeartRates(7)
        let server = try SampleServer(["--faults"], workDir: workDir)
        let base = server.base.absoluteString + "/faults/no-bundles/fhir"
        let first = try cli(["export", "--patient", "1", "--server", base])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.contains(": 7 created, 0 already there"), first.stdout)
        XCTAssertTrue(first.stdout.contains("mode: conditional-create"), first.stdout)
        let second = try cli(["export", "--patient", "1", "--server", base])
        XCTAssertTrue(second.stdout.contains(": 0 created, 7 already there"), second.stdout)
        XCTAssertEqual(try count(server, "Observation?identifier=urn:hreader:entry%7C"), 7)
        XCTAssertFalse(try server.json("/probe/stats")["log"].map { ($0 as? [String] ?? []).contains("POST /faults/no-bundles/fhir") } ?? true,
                       "no Bundle was sent")
    }

    /// A server that declares batch and no transaction: batch Bundles; an entry it refuses is
    /// reported (exit 6, one line) after the others were written, and a later export sends nothing twice.
    func testExportByBatchReportsRefusedEntriesAfterSendingTheRest() throws {
        try addPatientWithHeartRates(5)
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "refused", "--value", "1",
                             "--unit", "/min", "--date", "2026-11-02T08:00:00Z", "--code", "LOINC=8867-4"]))
        let server = try SampleServer(["--faults"], workDir: workDir)
        let base = server.base.absoluteString + "/faults/batch-only/fhir"
        let failed = try cli(["export", "--patient", "1", "--server", base])
        XCTAssertEqual(failed.status, 6, failed.stderr)
        XCTAssertEqual(failed.stderr.split(separator: "\n").count, 1, "one line: \(failed.stderr)")
        XCTAssertTrue(failed.stderr.contains("refused 1 of 6 observations"), failed.stderr)
        XCTAssertTrue(failed.stderr.contains("422"), failed.stderr)
        XCTAssertEqual(try count(server, "Observation?identifier=urn:hreader:entry%7C"), 5, "the other entries were written")

        let refused = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as? [[String: Any]] ?? []
        try ok(withPassword(["entries", "strike", "\(refused.first { $0["description"] as? String == "refused" }!["id"]!)"]))
        let again = try json(try cli(["export", "--patient", "1", "--server", base, "--json"]))["export"] as? [String: Any]
        XCTAssertEqual(again?["mode"] as? String, "batch")
        XCTAssertEqual(again?["created"] as? Int, 0)
        XCTAssertEqual(again?["existing"] as? Int, 5)
        XCTAssertEqual(try count(server, "Observation?identifier=urn:hreader:entry%7C"), 5)
    }

    // MARK: Helpers

    /// Ada with `n` heart rates, imported from a FHIR file in one run.
    func addPatientWithHeartRates(_ n: Int) throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace", "--birth-date", "1985-12-10"]))
        let resources: [[String: Any]] = (0..<n).map { i in
            ["resourceType": "Observation", "id": "hr-\(i)", "status": "final",
             "category": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"]]]],
             "code": ["coding": [["system": "http://loinc.org", "code": "8867-4"]], "text": "Heart rate"],
             "effectiveDateTime": String(format: "2026-11-01T%02d:%02d:00Z", i / 60, i % 60),
             "valueQuantity": ["value": 60 + i, "unit": "/min"]]
        }
        let url = workDir.appendingPathComponent("heart-rates.json")
        try JSONSerialization.data(withJSONObject: ["resourceType": "Bundle", "type": "collection", "entry": resources.map { ["resource": $0] }])
            .write(to: url)
        try ok(withPassword(["import", "--file", url.path, "--patient", "1"]))
    }
}
