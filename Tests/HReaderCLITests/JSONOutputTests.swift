import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Every command that prints data has `--json`, whose stdout is one JSON object (docs/cli.md,
/// "Output"); long commands show progress on a terminal and none when piped or with `--quiet`.
final class JSONOutputTests: CLITestCase {
    static let bundle = """
        {"resourceType": "Bundle", "type": "collection", "entry": [
          {"fullUrl": "urn:uuid:f1", "resource": {"resourceType": "Patient", "id": "f1", "name": [{"family": "Filewright", "given": ["Fay"]}],
           "identifier": [{"system": "urn:test", "value": "json-output-f1"}], "birthDate": "1970-01-02"}},
          {"resource": {"resourceType": "Observation", "id": "o1", "status": "final", "subject": {"reference": "Patient/f1"},
           "code": {"coding": [{"system": "http://loinc.org", "code": "8867-4", "display": "Heart rate"}]},
           "effectiveDateTime": "2026-01-05T08:00:00Z", "valueQuantity": {"value": 64, "unit": "/min"}}}
        ]}
        """

    static let appleHealth = """
        <?xml version="1.0" encoding="UTF-8"?>
        <HealthData locale="en_US">
         <ExportDate value="2026-03-02 10:00:00 +0100"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1980-01-01"/>
         <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Test Watch" unit="count/min" startDate="2026-03-01 09:05:00 +0100" endDate="2026-03-01 09:05:00 +0100" value="71"/>
        </HealthData>

        """

    /// Runs a command with --json; its stdout must parse as one JSON object holding `key`.
    @discardableResult
    private func jsonObject(_ arguments: [String], key: String, password: Bool = true,
                            file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let result = try hreader((password ? withPassword(arguments) : arguments) + ["--json"])
        XCTAssertEqual(result.status, 0, "hreader \(arguments.joined(separator: " ")) --json: \(result.stderr)", file: file, line: line)
        let parsed = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        let object = try XCTUnwrap(parsed as? [String: Any], "hreader \(arguments.joined(separator: " ")) --json printed: \(result.stdout)",
                                   file: file, line: line)
        XCTAssertNotNil(object[key], "hreader \(arguments.joined(separator: " ")) --json has no \"\(key)\": \(result.stdout)", file: file, line: line)
        return object
    }

    func testEveryDataCommandPrintsOneJSONObject() throws {
        let server = try SampleServer(workDir: workDir)
        let created = try hreader(["init", "--new-password-file", passwordFile, "--json"] + Self.cheapKDF)
        XCTAssertEqual(created.status, 0, created.stderr)
        XCTAssertNotNil(try json(created)["recovery_key"])
        try jsonObject(["unlock", "--for", "1m"], key: "session")
        try jsonObject(["status"], key: "key_slots", password: false)
        try jsonObject(["key", "list"], key: "key_slots", password: false)
        let added = try jsonObject(["key", "add", "--kind", "recovery"], key: "key_slot")
        XCTAssertNotNil(added["recovery_key"], "the new recovery key is the data key add prints")

        try jsonObject(["patients", "add", "--first", "Ada", "--last", "Lovelace", "--as", "me"], key: "patient")
        try jsonObject(["patients", "list"], key: "patients")
        try jsonObject(["patients", "show", "1"], key: "patient")
        let entry = try jsonObject(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Pulse",
                                    "--value", "60", "--unit", "/min", "--date", "2026-01-01"], key: "entry")
        let entryID = "\((entry["entry"] as? [String: Any])?["id"] ?? "")"
        try jsonObject(["entries", "list", "--patient", "1"], key: "entries")
        try jsonObject(["entries", "comment", entryID, "--text", "resting"], key: "entry")
        let struck = try jsonObject(["entries", "strike", entryID], key: "entry")
        XCTAssertEqual((struck["entry"] as? [String: Any])?["struck"] as? Bool, true, "\(struck)")

        try jsonObject(["remote", "patients", "--server", server.fhir], key: "patients")
        try jsonObject(["import", "--server", server.fhir, "--all"], key: "summary")
        try jsonObject(["sync"], key: "sync")
        try jsonObject(["sources", "list"], key: "sources")
        let bundle = try file("bundle.json", Self.bundle)
        try jsonObject(["import", "--file", bundle], key: "summary")
        let export = try file("export.xml", Self.appleHealth)
        try jsonObject(["import", "--apple-health", export, "--patient", "1"], key: "apple_health")

        try jsonObject(["timeline", "--patient", "1", "--page", "decade"], key: "start_date")
        try jsonObject(["timeline", "add", "--patient", "1", "--key", "Levels", "pain=3"], key: "item")
        try jsonObject(["applets", "available"], key: "applets", password: false)
        try jsonObject(["applets", "list", "--patient", "1"], key: "applets")
        try jsonObject(["summary", "--patient", "1"], key: "patient")
        let note = try file("note.txt", "A note")
        let document = try jsonObject(["documents", "add", note, "--patient", "1"], key: "document")
        let documentID = "\((document["document"] as? [String: Any])?["id"] ?? "")"
        try jsonObject(["documents", "list"], key: "documents")
        try jsonObject(["documents", "show", documentID], key: "document")
        try jsonObject(["search", "note"], key: "hits")
        try jsonObject(["check"], key: "sound")
        try jsonObject(["export", "--patient", "1", "--out", workDir.appendingPathComponent("out.json").path], key: "export")

        // serve: one line, {"url": …}, then it serves until stopped.
        let served = try start(withPassword(["serve", "--json"]))
        defer { kill(served.process.processIdentifier, SIGTERM); _ = served.finish() }
        let deadline = Date().addingTimeInterval(60)
        var line = ""
        while Date() < deadline, served.process.isRunning {
            let out = (try? String(contentsOf: served.out, encoding: .utf8)) ?? ""
            if out.contains("\n") { line = String(out.prefix { $0 != "\n" }); break }
            usleep(20_000)
        }
        let object = try XCTUnwrap((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], "serve --json printed: \(line)")
        XCTAssertTrue((object["url"] as? String)?.hasPrefix("http://127.0.0.1:") ?? false, line)
    }

    // MARK: - Progress

    /// Runs hreader under a pseudo-terminal (util-linux `script`), so stdout and stderr are a
    /// terminal; returns everything the terminal received.
    private func onTerminal(_ arguments: [String]) throws -> (status: Int32, output: String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { throw XCTSkip("no /usr/bin/script for a pseudo-terminal") }
        let quoted = ([Self.binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", quoted, "/dev/null"]
        process.environment = environment()
        let out = workDir.appendingPathComponent("tty-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: out, encoding: .utf8)) ?? "")
    }

    func testImportShowsProgressOnATerminalOnly() throws {
        try initVault()
        let server = try SampleServer(workDir: workDir)
        let progress = "\r\u{1B}[K"

        let terminal = try onTerminal(withPassword(["import", "--server", server.fhir, "--all"]))
        XCTAssertEqual(terminal.status, 0, terminal.output)
        XCTAssertTrue(terminal.output.contains(progress + "importing patient 1 of 3"), "a terminal sees progress: \(terminal.output.debugDescription)")

        let quiet = try onTerminal(withPassword(["sync", "--quiet"]))
        XCTAssertEqual(quiet.status, 0, quiet.output)
        XCTAssertFalse(quiet.output.contains("\u{1B}[K"), "--quiet: no progress: \(quiet.output.debugDescription)")
        XCTAssertTrue(quiet.output.contains("Synced 3 patient(s)"), quiet.output)

        let piped = try ok(withPassword(["sync"]))
        XCTAssertFalse((piped.stdout + piped.stderr).contains("\u{1B}"), "piped: no progress, no escapes")
    }
}
