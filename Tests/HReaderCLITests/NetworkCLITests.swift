import Foundation
import TestSupport
import XCTest

/// `hreader remote`, `import --server`, `sync` and `sources` against the sample server, a real
/// process on 127.0.0.1, through the real binary.
final class NetworkCLITests: CLITestCase {
    var server: SampleServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
        server = try SampleServer(["--faults"], workDir: workDir)
    }

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    func patients() throws -> [[String: Any]] {
        try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
    }

    func entries(_ patient: Any) throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "\(patient)", "--json"])))["entries"] as! [[String: Any]]
    }

    func entryCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for p in try patients() { counts["\(p["last_name"]!)"] = try entries(p["id"]!).count }
        return counts
    }

    func testImportAllTwiceCommentSurvivesSyncAndRemovedEntryIsMarked() throws {
        let first = try ok(withPassword(["import", "--server", server.fhir, "--all", "--as", "family"]))
        XCTAssertTrue(first.stdout.contains("Imported 3 patient(s)"), first.stdout)
        XCTAssertTrue(first.stdout.contains("(fhir)"), first.stdout)
        XCTAssertTrue(first.stdout.contains("kept 3 CarePlan resource(s) as observation entries"), "unknown types are kept and counted: \(first.stdout)")
        let counts = try entryCounts()
        XCTAssertEqual(counts.count, 3)
        XCTAssertTrue(counts.values.allSatisfy { $0 > 10 }, "\(counts)")
        XCTAssertTrue(try patients().allSatisfy { $0["relationship"] as? String == "family" })

        let second = try ok(withPassword(["import", "--server", server.fhir, "--all"]))
        XCTAssertTrue(second.stdout.contains("0 new entries"), second.stdout)
        XCTAssertEqual(try entryCounts(), counts, "a second import changes no counts")
        XCTAssertEqual(try patients().count, 3)

        // A comment and a strike-through on two entries; one other entry disappears from the server.
        let patientID = try patients()[0]["id"]!
        let list = try entries(patientID)
        let commented = list[0], struck = list[1], removed = list[2]
        try ok(withPassword(["entries", "comment", "\(commented["id"]!)", "--text", "asked the doctor about this"]))
        try ok(withPassword(["entries", "strike", "\(struck["id"]!)"]))
        let remote = removed["remote_id"] as! String
        let (status, _) = try server.request("/fhir/\(remote)", method: "DELETE")
        XCTAssertTrue([200, 204].contains(status), "DELETE \(remote) answered \(status)")

        let sync = try ok(withPassword(["sync"]))
        XCTAssertTrue(sync.stdout.contains("Synced 3 patient(s) from 1 source(s)"), sync.stdout)
        XCTAssertTrue(sync.stdout.contains("1 marked missing"), sync.stdout)
        let after = try entries(patientID)
        XCTAssertEqual(after.count, list.count, "nothing is deleted")
        func byID(_ e: [String: Any]) -> [String: Any] { after.first { "\($0["id"]!)" == "\(e["id"]!)" }! }
        XCTAssertEqual(byID(commented)["comments"] as? String, "asked the doctor about this")
        XCTAssertEqual(byID(struck)["struck"] as? Bool, true)
        XCTAssertNotNil(byID(removed)["missing_at_source"], "the removed entry is marked")
        XCTAssertNil(byID(commented)["missing_at_source"])

        let sources = try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as! [[String: Any]]
        let fhirSource = sources.first { $0["kind"] as? String == "fhir" }
        XCTAssertEqual(fhirSource?["patients"] as? Int, 3)
        XCTAssertNotNil(fhirSource?["last_sync"] as? String)
    }

    func testImportChosenPatientsAndListRemotePatients() throws {
        let listed = try json(try ok(withPassword(["remote", "patients", "--server", server.fhir, "--json"])))
        XCTAssertEqual(listed["kind"] as? String, "fhir")
        let remote = listed["patients"] as! [[String: Any]]
        XCTAssertEqual(remote.count, 3)
        let family = (remote[1]["name"] as! String).split(separator: " ").last.map(String.init)!
        let filtered = try json(try ok(withPassword(["remote", "patients", "--server", server.fhir, "--family", family, "--json"])))
        XCTAssertEqual((filtered["patients"] as! [[String: Any]]).map { $0["id"] as! String }, [remote[1]["id"] as! String])

        let rhex = try json(try ok(withPassword(["remote", "patients", "--server", server.rhex, "--json"])))
        XCTAssertEqual(rhex["kind"] as? String, "rhex", "the kind is found by asking the server")
        XCTAssertEqual((rhex["patients"] as! [Any]).count, 3)

        let text = try ok(withPassword(["remote", "patients", "--server", server.fhir]))
        XCTAssertTrue(text.stdout.contains(remote[0]["id"] as! String))

        try ok(withPassword(["import", "--server", server.fhir, "--patient", remote[0]["id"] as! String, "--patient", remote[2]["id"] as! String]))
        XCTAssertEqual(try patients().count, 2)
        let missing = try hreader(withPassword(["import", "--server", server.fhir, "--patient", "no-such-patient"]))
        XCTAssertEqual(missing.status, 6, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("404"), missing.stderr)
    }

    func testRHExWithOAuth2LoginImportAndSync() throws {
        let refresh = try file("refresh-token", "initial-refresh-token-7f3a\n")
        // Access tokens live 30 s, under hreader's 60 s margin: every request renews the token first,
        // and the server rotates the refresh token each time. Import and sync work only if each
        // rotated refresh token is stored in the vault and used for the next renewal.
        let secured = try SampleServer(["--require-auth", "--refresh-token-file", refresh, "--token-lifetime", "30"], workDir: workDir)
        let anonymous = try hreader(withPassword(["import", "--server", secured.rhex, "--kind", "rhex", "--all"]))
        XCTAssertEqual(anonymous.status, 6, anonymous.stderr)
        XCTAssertTrue(anonymous.stderr.contains("401"), anonymous.stderr)
        XCTAssertEqual(anonymous.stderr.split(separator: "\n").count, 1, "one line: \(anonymous.stderr)")

        let login = try ok(withPassword(["sources", "login", "--server", secured.rhex, "--kind", "rhex", "--auth", "oauth2",
                                         "--token-url", secured.base.absoluteString + "/oauth/token", "--client-id", "hreader",
                                         "--refresh-token-file", refresh]))
        XCTAssertTrue(login.stderr.contains("RHEx feed with 3 patient(s)"), login.stderr)
        let result = try ok(withPassword(["import", "--server", secured.rhex, "--all"]))
        XCTAssertTrue(result.stdout.contains("Imported 3 patient(s)"), result.stdout)
        XCTAssertTrue(result.stdout.contains("(rhex)"), result.stdout)
        try ok(withPassword(["sync"]))
        let sources = try ok(withPassword(["sources", "list"]))
        XCTAssertTrue(sources.stdout.contains("auth oauth2"), sources.stdout)
        for output in [login, result, sources] {
            XCTAssertFalse((output.stdout + output.stderr).contains("initial-refresh-token-7f3a"))
        }
        // The refresh token from the file was spent at the first renewal.
        let (status, answer) = try secured.request("/oauth/token", method: "POST", body: Data("grant_type=refresh_token&refresh_token=initial-refresh-token-7f3a".utf8),
                                                   headers: ["Content-Type": "application/x-www-form-urlencoded"])
        XCTAssertEqual(status, 400)
        XCTAssertTrue(String(decoding: answer, as: UTF8.self).contains("invalid_grant"))
        // Removing the source needs --with-patients while patients came from it.
        let refused = try hreader(withPassword(["sources", "remove", secured.rhex]))
        XCTAssertEqual(refused.status, 2, refused.stderr)
        try ok(withPassword(["sources", "remove", secured.rhex, "--with-patients"]))
        XCTAssertEqual(try patients().count, 0)
    }

    func testBasicAuth() throws {
        let credentials = try file("basic", "reader:correct horse battery")
        let secured = try SampleServer(["--basic-credentials-file", credentials], workDir: workDir)
        let good = try file("good", "correct horse battery")
        let bad = try file("bad", "wrong")
        let base = secured.base.absoluteString + "/basic/fhir"
        let refused = try hreader(withPassword(["sources", "login", "--server", base, "--kind", "fhir", "--auth", "basic", "--user", "reader", "--secret-file", bad]))
        XCTAssertEqual(refused.status, 6, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("401"), refused.stderr)
        try ok(withPassword(["sources", "login", "--server", base, "--kind", "fhir", "--auth", "basic", "--user", "reader", "--secret-file", good]))
        let imported = try ok(withPassword(["import", "--server", base, "--all"]))
        XCTAssertTrue(imported.stdout.contains("Imported 3 patient(s)"), imported.stdout)
    }

    /// Hostile and failing servers: one clear line, the right exit code, nothing partial.
    func testHostileServers() throws {
        let other = try SampleServer(workDir: workDir)
        let redirecting = try SampleServer(["--faults", "--redirect-target", other.base.absoluteString + "/secure/fhir"], workDir: workDir)
        let cases: [(base: String, code: Int32, says: String)] = [
            (server.base.absoluteString + "/faults/invalid-json/fhir", 5, "bad data"),
            (server.base.absoluteString + "/faults/html/fhir", 6, "HTML"),
            (server.base.absoluteString + "/faults/huge/fhir", 6, "larger than the 10 MiB limit"),
            (server.base.absoluteString + "/faults/loop/fhir", 6, "does not end"),
            (server.base.absoluteString + "/faults/stall/fhir", 6, "did not answer within 1 s"),
            (server.base.absoluteString + "/faults/outcome/fhir", 6, "too large for $everything"),
            (redirecting.base.absoluteString + "/faults/redirect/fhir", 6, "401"),
        ]
        let before = snapshot()
        for c in cases {
            let result = try hreader(withPassword(["import", "--server", c.base, "--kind", "fhir", "--patient", "p1", "--timeout", "1"]))
            XCTAssertEqual(result.status, c.code, "\(c.base): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(c.says), "\(c.base): \(result.stderr)")
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
            XCTAssertTrue(result.stdout.isEmpty)
            XCTAssertEqual(try patients().count, 0, "nothing partial after \(c.base)")
        }
        XCTAssertEqual(try other.json("/probe/stats")["requests_with_credentials"] as? Int, 0)
        _ = before

        // The limit is the user's to raise: the same 12 MB answer goes through with --max-response-size 20M.
        let raised = try hreader(withPassword(["import", "--server", server.base.absoluteString + "/faults/huge/fhir", "--kind", "fhir",
                                               "--patient", "p1", "--max-response-size", "20M"]))
        XCTAssertEqual(raised.status, 0, raised.stderr)
        try ok(withPassword(["sources", "remove", server.base.absoluteString + "/faults/huge/fhir", "--with-patients"]))
        XCTAssertEqual(try patients().count, 0)

        // 429 with Retry-After: waited for, then imported.
        try ok(withPassword(["import", "--server", server.base.absoluteString + "/faults/429/fhir", "--kind", "fhir", "--patient", "p1"]))
        XCTAssertEqual(try patients().count, 1)

        // 500, then success on the next run.
        let flaky = server.base.absoluteString + "/faults/500-once/fhir"
        let failed = try hreader(withPassword(["import", "--server", flaky, "--kind", "fhir", "--patient", "p2"]))
        XCTAssertEqual(failed.status, 6, failed.stderr)
        XCTAssertTrue(failed.stderr.contains("500"), failed.stderr)
        XCTAssertEqual(try patients().count, 1)
        try ok(withPassword(["import", "--server", flaky, "--kind", "fhir", "--patient", "p2"]))
        XCTAssertEqual(try patients().count, 2)
    }

    /// TLS is always verified: a server whose certificate comes from an unknown CA is refused; with
    /// --ca-file naming that CA it is trusted.
    func testTLSCertificatesAreVerified() throws {
        let tls = workDir.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: tls, withIntermediateDirectories: true)
        func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["openssl"] + arguments
            process.currentDirectoryURL = tls
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            XCTAssertEqual(process.terminationStatus, 0, "openssl \(arguments.joined(separator: " "))")
        }
        try "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n".write(to: tls.appendingPathComponent("ext"), atomically: true, encoding: .utf8)
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=hreader test CA"])
        try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"])
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem",
                     "-days", "2", "-extfile", "ext"])
        let secure = try SampleServer(["--tls-cert", tls.appendingPathComponent("server.pem").path,
                                       "--tls-key", tls.appendingPathComponent("server.key").path], workDir: workDir)
        XCTAssertEqual(secure.base.scheme, "https")
        let untrusted = try hreader(withPassword(["import", "--server", secure.fhir, "--kind", "fhir", "--all"]))
        XCTAssertEqual(untrusted.status, 6, untrusted.stderr)
        XCTAssertTrue(untrusted.stderr.contains("TLS"), untrusted.stderr)
        XCTAssertEqual(untrusted.stderr.split(separator: "\n").count, 1, untrusted.stderr)
        XCTAssertEqual(try patients().count, 0)
        let trusted = try ok(withPassword(["import", "--server", secure.fhir, "--all", "--ca-file", tls.appendingPathComponent("ca.pem").path]))
        XCTAssertTrue(trusted.stdout.contains("Imported 3 patient(s)"), trusted.stdout)
    }

    /// sync: one lane per host, the hosts at the same time (their request spans overlap), each host
    /// served one request at a time.
    func testSyncRunsHostsInParallel() throws {
        let a = try SampleServer(["--delay-ms", "150"], workDir: workDir)
        let b = try SampleServer(["--delay-ms", "150"], workDir: workDir)
        try ok(withPassword(["import", "--server", a.fhir, "--all"]))
        try ok(withPassword(["import", "--server", b.rhex, "--all"]))
        for server in [a, b] { _ = try server.json("/probe/reset", method: "POST") }
        let sync = try ok(withPassword(["sync"]))
        XCTAssertTrue(sync.stdout.contains("Synced 6 patient(s) from 2 source(s)"), sync.stdout)
        let sa = try a.json("/probe/stats"), sb = try b.json("/probe/stats")
        let (a0, a1) = (sa["first_arrival"] as! Double, sa["last_arrival"] as! Double)
        let (b0, b1) = (sb["first_arrival"] as! Double, sb["last_arrival"] as! Double)
        XCTAssertGreaterThanOrEqual(sa["requests"] as! Int, 3)
        XCTAssertGreaterThanOrEqual(sb["requests"] as! Int, 3)
        XCTAssertTrue(a0 < b1 && b0 < a1, "the two hosts were synced one after the other: [\(a0), \(a1)] and [\(b0), \(b1)]")
    }

    /// kill -9 in the middle of an import: earlier patients complete, the vault opens, and a re-run
    /// finishes the job with no duplicates.
    func testKillDuringImportLeavesCompletePatientsAndRerunFinishes() throws {
        let slow = try SampleServer(["--patients", "6", "--delay-ms", "400"], workDir: workDir)
        // The reference: the same import, uninterrupted, into a second vault.
        let reference = workDir.appendingPathComponent("reference")
        try ok(["init", "--vault", reference.path, "--new-password-file", passwordFile] + CLITestCase.cheapKDF)
        try ok(withPassword(["import", "--server", slow.fhir, "--all", "--vault", reference.path]))
        let expected = try json(try ok(withPassword(["status", "--json", "--vault", reference.path])))

        let running = try start(withPassword(["import", "--server", slow.fhir, "--all"]))
        // Kill it once the first patient is in (about 0.4 s a request; six patients take about 3 s).
        let deadline = Date().addingTimeInterval(20)
        while try patients().isEmpty, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        kill(running.process.processIdentifier, SIGKILL)
        running.process.waitUntilExit()
        try ok(withPassword(["check"]))
        let partial = try patients()
        XCTAssertLessThan(partial.count, 6, "the import should have been interrupted")
        let referencePatients = try json(try ok(withPassword(["patients", "list", "--json", "--vault", reference.path])))["patients"] as! [[String: Any]]
        for p in partial {
            let twin = referencePatients.first { $0["last_name"] as? String == p["last_name"] as? String && $0["first_name"] as? String == p["first_name"] as? String }!
            let full = try json(try ok(withPassword(["entries", "list", "--patient", "\(twin["id"]!)", "--json", "--vault", reference.path])))["entries"] as! [Any]
            XCTAssertEqual(try entries(p["id"]!).count, full.count, "a stored patient is complete")
        }
        try ok(withPassword(["import", "--server", slow.fhir, "--all"]))
        let finished = try json(try ok(withPassword(["status", "--json"])))
        XCTAssertEqual(finished["patients"] as? Int, expected["patients"] as? Int)
        XCTAssertEqual(finished["entries"] as? Int, expected["entries"] as? Int, "no duplicates after the re-run")
    }

    /// RHEx records as hReader's servers sent them: one entry per element of the eight sections.
    func testRHExRecordsYieldOneEntryPerElementOfTheEightSections() throws {
        let dir = workDir.appendingPathComponent("records")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let sections = ["encounters", "conditions", "allergies", "medications", "procedures", "results", "vital_signs", "immunizations"]
        var expected: [String: Int] = [:]
        for n in 0..<6 {
            var record: [String: Any] = ["_id": String(format: "%024x", 0xabc000 + n), "first": "Given\(n)", "last": "Family\(n)",
                                         "gender": n % 2 == 0 ? "F" : "M", "birthdate": -300_000_000 + n * 40_000_000,
                                         "care_goals": [["_id": "g\(n)", "description": "Walk daily", "time": 1_300_000_000]],
                                         "social_history": [["_id": "s\(n)", "codes": ["SNOMED-CT": ["160618006"]], "time": 1_300_000_000]]]
            var total = 0
            for (i, section) in sections.enumerated() {
                let count = (n + i) % 4 + (section == "results" ? 5 : 1)
                record[section] = (0..<count).map { k -> [String: Any] in
                    var entry: [String: Any] = ["_id": "\(section)-\(n)-\(k)", "description": "\(section) item \(k)",
                                                "time": 1_200_000_000 + k * 86_400, "codes": ["LOINC": ["1234-\(k)"]]]
                    if section == "vital_signs" || section == "results" { entry["value"] = ["scalar": "\(100 + k).0", "units": "mg/dL"] }
                    if section == "medications" { entry["dose"] = "\(k + 1)0mg" }
                    return entry
                }
                total += count
            }
            expected["Family\(n)"] = total
            let data = try JSONSerialization.data(withJSONObject: record)
            try data.write(to: dir.appendingPathComponent("record\(n).json"))
        }
        let rhex = try SampleServer(["--rhex-records", dir.path], workDir: workDir)
        let result = try ok(withPassword(["import", "--server", rhex.rhex, "--kind", "rhex", "--all"]))
        XCTAssertTrue(result.stdout.contains("Imported 6 patient(s)"), result.stdout)
        XCTAssertEqual(try entryCounts(), expected)
    }

    func testSecretsStayOutOfOutputAndFiles() throws {
        let token = "bearer-canary-0c1d2e3f"
        let tokenFile = try file("token", token)
        let imported = try ok(withPassword(["import", "--server", server.fhir, "--all", "--token-file", tokenFile]))
        let failed = try hreader(withPassword(["import", "--server", server.base.absoluteString + "/faults/html/fhir", "--kind", "fhir", "--all", "--token-file", tokenFile]))
        XCTAssertEqual(failed.status, 6)
        for output in [imported, failed] {
            XCTAssertFalse((output.stdout + output.stderr).contains(token))
        }
        let names = try patients().map { $0["last_name"] as! String }
        let canaries = [token] + names
        for (path, data) in filesWithContents(under: vaultDir) + filesWithContents(under: childTemp) {
            for canary in canaries {
                XCTAssertFalse(data.containsBytes(Data(canary.utf8)), "\(canary) in plaintext in \(path)")
            }
        }
    }
}
