import Foundation
import HReaderNet
import HReaderRecords
import TestSupport
import XCTest

/// The FHIR client against servers that differ as real ones do (the sample server's `--profile`s
/// and fault modes, real processes on 127.0.0.1): what their CapabilityStatements say, how a
/// patient's record is read accordingly, paging by capped counts and opaque cursors, warnings
/// beside results, and identifier lookups for servers without conditional create.
final class FHIRCapabilityTests: XCTestCase {
    var workDir: URL!

    override func setUpWithError() throws {
        workDir = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-capability-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDir)
    }

    private func client(_ server: SampleServer, _ path: String = "/fhir", cache: FHIRCapabilityCache = FHIRCapabilityCache()) throws -> FHIRClient {
        try FHIRClient(base: URL(string: server.base.absoluteString + path)!, clients: APIClients(), capabilities: cache)
    }

    private func log(_ server: SampleServer) throws -> [String] { try server.json("/probe/stats")["log"] as? [String] ?? [] }

    func testEachProfileDeclaresWhatItDoes() async throws {
        // Each server is held in a variable: a SampleServer stops when it is released.
        let fullServer = try SampleServer(workDir: workDir)
        let full = try await client(fullServer).capability()
        XCTAssertTrue(full.declaresEverything)
        XCTAssertEqual(full.systemInteractions, ["transaction", "batch"])
        XCTAssertTrue(full.allowsConditionalCreate(on: "Observation"))
        XCTAssertTrue(full.allows("update", on: "Observation"))

        let minimalServer = try SampleServer(["--profile", "minimal"], workDir: workDir)
        let minimal = try await client(minimalServer).capability()
        XCTAssertFalse(minimal.declaresEverything)
        XCTAssertEqual(minimal.systemInteractions, [])
        XCTAssertTrue(minimal.allows("create", on: "Observation"))
        XCTAssertFalse(minimal.allowsConditionalCreate(on: "Observation"))
        XCTAssertFalse(minimal.allows("update", on: "Observation"))
        XCTAssertEqual(minimal.resources["Observation"]?.interactions, ["read", "search-type", "create"])
        XCTAssertNil(minimal.resources["Goal"], "a type the minimal server does not have is not listed")
        XCTAssertEqual(minimal.patientSearchParameter(for: "AllergyIntolerance"), "patient")
        XCTAssertEqual(try minimalServer.request("/fhir/AllergyIntolerance?subject=p1").status, 400, "an undeclared parameter is refused")
        XCTAssertEqual(try minimalServer.request("/fhir", method: "POST", body: Data(#"{"resourceType":"Bundle","type":"batch"}"#.utf8)).status, 400)

        let readonlyServer = try SampleServer(["--profile", "readonly"], workDir: workDir)
        let readonly = try await client(readonlyServer).capability()
        XCTAssertTrue(readonly.declaresEverything)
        XCTAssertTrue(readonly.resources.values.allSatisfy { $0.interactions == ["read", "search-type"] })
        XCTAssertFalse(readonly.allows("create", on: "Observation"))
    }

    /// `$everything` declared by its canonical definition alone, a type searchable only by
    /// `subject`, one by neither, a `client` rest that does not count.
    func testStatementIsReadByDefinitionAndDeclaredParameters() throws {
        let statement = Data(#"""
            {"resourceType": "CapabilityStatement", "fhirVersion": "4.0.1", "rest": [
              {"mode": "server", "interaction": [{"code": "batch"}],
               "operation": [{"name": "patient-everything", "definition": "http://hl7.org/fhir/OperationDefinition/Patient-everything"}],
               "resource": [
                 {"type": "Observation", "interaction": [{"code": "search-type"}, {"code": "create"}],
                  "conditionalCreate": true, "searchParam": [{"name": "subject", "type": "reference"}]},
                 {"type": "Condition", "interaction": [{"code": "read"}, {"code": "search-type"}],
                  "searchParam": [{"name": "code", "type": "token"}]},
                 {"type": "Encounter"}]},
              {"mode": "client", "interaction": [{"code": "transaction"}], "resource": [{"type": "Goal", "interaction": [{"code": "create"}]}]}]}
            """#.utf8)
        let capability = try FHIRCapability.parse(statement, what: "the statement")
        XCTAssertTrue(capability.declaresEverything)
        XCTAssertEqual(capability.systemInteractions, ["batch"])
        XCTAssertEqual(capability.patientSearchParameter(for: "Observation"), "subject")
        XCTAssertNil(capability.patientSearchParameter(for: "Condition"), "no patient or subject parameter")
        XCTAssertEqual(capability.patientSearchParameter(for: "Encounter"), "patient", "no parameters listed: tried with patient")
        XCTAssertTrue(capability.allowsConditionalCreate(on: "Observation"))
        XCTAssertFalse(capability.allows("create", on: "Encounter"), "a type without interactions is read and searched only")
        XCTAssertNil(capability.resources["Goal"], "what the software asks of other servers does not count")
    }

    /// OperationOutcome entries of a searchset are warnings, each said once, never records; an
    /// included resource is read like a match.
    func testOutcomeEntriesAreWarningsNotRecords() throws {
        let page = Data(#"""
            {"resourceType": "Bundle", "type": "searchset", "entry": [
              {"resource": {"resourceType": "OperationOutcome", "issue": [
                {"severity": "warning", "code": "processing", "diagnostics": "_count capped at 20"},
                {"severity": "information", "code": "informational", "diagnostics": "results may be incomplete"}]},
               "search": {"mode": "outcome"}},
              {"fullUrl": "http://x/fhir/Observation/o1", "search": {"mode": "match"}, "resource": {"resourceType": "Observation", "id": "o1",
               "status": "final", "code": {"text": "Heart rate"}, "subject": {"reference": "Patient/p1"}, "effectiveDateTime": "2026-11-01",
               "valueQuantity": {"value": 60, "unit": "/min"}}},
              {"fullUrl": "http://x/fhir/Patient/p1", "search": {"mode": "include"},
               "resource": {"resourceType": "Patient", "id": "p1", "name": [{"family": "Doe"}]}}]}
            """#.utf8)
        let onlyWarning = Data(#"""
            {"resourceType": "Bundle", "type": "searchset", "entry": [
              {"resource": {"resourceType": "OperationOutcome", "issue": [
                {"severity": "warning", "code": "processing", "diagnostics": "_count capped at 20"},
                {"severity": "information", "code": "informational", "diagnostics": "results may be incomplete"}]}}]}
            """#.utf8)
        var set = FHIRResponseSet()
        let info = try set.add(page, what: "page 1")
        try set.add(onlyWarning, what: "page 2")
        XCTAssertEqual(info.entryCount, 2)
        XCTAssertEqual(set.resourceCount, 2, "an Observation and a Patient; the outcomes are not resources")
        XCTAssertEqual(set.warnings, ["warning processing _count capped at 20; information informational results may be incomplete"],
                       "each issue once, and a repeated warning once")
        let batch = set.map()
        XCTAssertEqual(batch.records.count, 1)
        XCTAssertEqual(batch.records.first?.patient.remoteID, "p1", "the included Patient is read")
        XCTAssertFalse(batch.records.flatMap(\.entries).contains { ($0.content.raw ?? "").contains("OperationOutcome") })
        XCTAssertFalse(batch.skipped.contains { $0.kind == "OperationOutcome" })
    }

    /// A minimal server (no `$everything`, 20 a page whatever `_count` says, no total, cursor next
    /// links, a warning entry): the record is read by per-type searches of the listed types, with
    /// the same entries as `$everything` on a full server with the same data.
    func testMinimalServerIsReadByPerTypeSearchesWithCursorPaging() async throws {
        let arguments = ["--entries-per-patient", "80"]
        let minimalServer = try SampleServer(arguments + ["--profile", "minimal"], workDir: workDir)
        let cache = FHIRCapabilityCache()
        let minimal = try client(minimalServer, cache: cache)
        let record = try await minimal.everything(patientID: "p1")
        XCTAssertEqual(record.strategy, .perTypeSearch(declared: true))
        XCTAssertTrue(record.notes.contains("the server declares no Patient/$everything: per-type searches"), "\(record.notes)")
        XCTAssertTrue(record.notes.contains { $0.hasPrefix("the server said: warning processing _count=100") }, "\(record.notes)")

        let fullServer = try SampleServer(arguments, workDir: workDir)
        let direct = try await client(fullServer).everything(patientID: "p1")
        XCTAssertEqual(direct.strategy, .everything)
        XCTAssertEqual(record.resources, direct.resources)
        let entries = { (r: FHIRPatientRecord) in r.batch.records.first.map { $0.entries.map(\.remoteID).sorted() } ?? [] }
        XCTAssertEqual(entries(record), entries(direct))
        XCTAssertFalse(entries(record).isEmpty)

        let requests = try log(minimalServer)
        XCTAssertGreaterThan(requests.filter { $0 == "GET /fhir/Observation" }.count, 1, "Observations span several cursor pages")
        XCTAssertFalse(requests.contains("GET /fhir/Goal"), "a type the server does not list is not asked for")
        XCTAssertFalse(requests.contains { $0.hasSuffix("$everything") }, "$everything is not tried when it is not declared")

        // The statement is read once for the run, however many patients follow.
        _ = try await minimal.everything(patientID: "p2")
        _ = try await client(minimalServer, cache: cache).everything(patientID: "p3")
        XCTAssertEqual(try log(minimalServer).filter { $0 == "GET /fhir/metadata" }.count, 1)
    }

    /// No CapabilityStatement, `$everything` refused with a plain 400: per-type searches, passing
    /// over the types the server refuses, and saying so.
    func testWithoutStatementEverythingFailureFallsBack() async throws {
        let server = try SampleServer(["--faults"], workDir: workDir)
        let record = try await client(server, "/faults/no-metadata/fhir").everything(patientID: "p1")
        XCTAssertEqual(record.strategy, .perTypeSearch(declared: false))
        XCTAssertEqual(record.notes.first, "no CapabilityStatement (404 Not Found); $everything failed (400): per-type searches")
        XCTAssertTrue(record.notes.contains { $0.hasPrefix("passed over the types whose search answered 400: DocumentReference") }, "\(record.notes)")
        let direct = try await client(server).everything(patientID: "p1")
        XCTAssertEqual(record.batch.records.first?.entries.count, direct.batch.records.first?.entries.count)

        // With a statement that declares $everything, a 400 that is not "not supported" is an error.
        do {
            _ = try await client(server, "/faults/outcome/fhir").everything(patientID: "p1")
            XCTFail("expected the 400 to be reported")
        } catch let NetError.status(code, _, _) {
            XCTAssertEqual(code, 400)
        }
    }

    /// Lookups for servers without conditional create: identifiers OR-ed in chunks, every cursor
    /// page followed, a comma inside a value escaped.
    func testExistingIdentifiersAreFoundInChunksAcrossPages() async throws {
        let server = try SampleServer(["--profile", "minimal"], workDir: workDir)
        let fhir = try client(server)
        var tokens: [String] = []
        for n in 0..<45 {
            let value = n == 7 ? "with,comma" : "value-\(n)"
            let resource = #"{"resourceType":"Observation","status":"final","code":{"text":"x"},"identifier":[{"system":"urn:test","value":"\#(value)"}]}"#
            let result = try await fhir.create(type: "Observation", resource: Data(resource.utf8))
            XCTAssertTrue(result.created)
            tokens.append("urn:test|\(value)")
        }
        let unknown = (0..<5).map { "urn:test|missing-\($0)" }
        _ = try server.json("/probe/reset", method: "POST")
        let found = try await fhir.existingIdentifiers(type: "Observation", among: unknown + tokens, chunk: 30)
        XCTAssertEqual(found, Set(tokens))
        let searches = try log(server).filter { $0 == "GET /fhir/Observation" }.count
        XCTAssertGreaterThanOrEqual(searches, 3, "two chunks, the first over two pages of 20")
    }
}
