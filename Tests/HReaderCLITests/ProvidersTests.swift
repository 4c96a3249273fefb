import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader providers …` through the real binary: brands bundles written here in the IG's shape,
/// read from files and from the sample server's /brands.json; the directory in the child's
/// $XDG_CACHE_HOME, never in the vault.
final class ProvidersTests: CLITestCase {
    var cacheDir: URL { workDir.appendingPathComponent("cache") }
    var directoryFile: URL { cacheDir.appendingPathComponent("hreader/providers.directory") }

    /// hreader with the test's cache and no vault password.
    @discardableResult
    func run(_ arguments: [String], env: [String: String] = [:]) throws -> CLIResult {
        try hreader(arguments, env: ["XDG_CACHE_HOME": cacheDir.path].merging(env) { $1 })
    }

    func succeed(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) throws -> CLIResult {
        let result = try run(arguments)
        XCTAssertEqual(result.status, 0, "hreader \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    func writeBundle(_ fixture: BrandsFixture, _ name: String = "brands.json") throws -> String {
        let url = workDir.appendingPathComponent(name)
        try fixture.data.write(to: url)
        return url.path
    }

    func search(_ words: [String], _ extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [[String: Any]] {
        let result = try succeed(["providers", "search"] + words + extra + ["--json"], file: file, line: line)
        return try XCTUnwrap(try json(result)["providers"] as? [[String: Any]], file: file, line: line)
    }

    func names(_ hits: [[String: Any]]) -> [String] { hits.map { $0["name"] as? String ?? "?" } }

    // MARK: - Update and search

    func testSearchIsTolerantOfOrderCaseAccentsAbbreviationsAndOneTypo() throws {
        try succeed(["providers", "update", "--from", try writeBundle(.varied), "--vendor", "epic"])

        let both = ["Saint Mary's Hospital", "St. Mary's Hospital"]
        XCTAssertEqual(Set(names(try search(["st", "marys", "hospital"])).prefix(2)), Set(both))
        XCTAssertEqual(Set(names(try search(["Hospital", "SAINT", "Mary's"])).prefix(2)), Set(both), "word order and case")
        XCTAssertEqual(names(try search(["clinica", "santa", "rosa"])), ["Clínica Santa Rosa"], "accents folded")
        XCTAssertEqual(names(try search(["Clínica"])), ["Clínica Santa Rosa"])
        XCTAssertEqual(names(try search(["presbyterain"])), ["Northwestern Presbyterian Hospital"], "two letters swapped")
        XCTAssertEqual(names(try search(["presbyterian", "hospitl"])), ["Northwestern Presbyterian Hospital"], "a letter dropped")
        XCTAssertEqual(names(try search(["ssm", "health"])), ["St. Mary's Hospital"], "an alias")
        XCTAssertEqual(names(try search(["mychart"])), ["St. Mary's Hospital", "Mary's Family Practice"],
                       "the portal's name (the affiliated practice shares it)")
        XCTAssertEqual(names(try search(["janesville"])), ["St. Mary's Hospital"], "a city")
        XCTAssertTrue(try search(["zzyzx"]).isEmpty)

        // Two brands of one name, told apart by state and city.
        XCTAssertEqual(names(try search(["saint", "marys", "hospital"], ["--state", "MN"])), ["Saint Mary's Hospital"])
        XCTAssertEqual(names(try search(["saint", "marys", "hospital"], ["--state", "wi"])), ["St. Mary's Hospital"])
        XCTAssertEqual(names(try search(["hospital"], ["--city", "Rochester"])), ["Saint Mary's Hospital"])
        XCTAssertEqual(try search(["hospital"], ["--limit", "1"]).count, 1)

        // The shape of a hit.
        let hit = try XCTUnwrap(try search(["saint", "marys"], ["--state", "WI"]).first)
        XCTAssertEqual(Set(hit.keys), ["id", "name", "aliases", "portal", "city", "state", "vendor", "endpoints"])
        XCTAssertEqual(hit["city"] as? String, "Madison")
        XCTAssertEqual(hit["state"] as? String, "WI")
        XCTAssertEqual(hit["vendor"] as? String, "epic")
        XCTAssertEqual(hit["portal"] as? String, "MyChart Saint Mary")
        XCTAssertEqual(hit["aliases"] as? [String], ["SSM Health Saint Mary's", "Mary Hospital Madison"])
        let endpoints = try XCTUnwrap(hit["endpoints"] as? [[String: Any]])
        XCTAssertEqual(endpoints.map { Set($0.keys) }, [["url", "fhir_version", "status"], ["url", "fhir_version", "status"]])
        XCTAssertEqual(Set(endpoints.compactMap { $0["fhir_version"] as? String }), ["4.0.1", "1.0.2"])
    }

    func testSearchNeedsNoPasswordAndNoVault() throws {
        try succeed(["providers", "update", "--from", try writeBundle(.varied)])
        let result = try run(["providers", "search", "presbyterian"], env: ["HREADER_VAULT": workDir.appendingPathComponent("none").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("Northwestern Presbyterian Hospital"), result.stdout)
        XCTAssertFalse(FileManager.default.fileExists(atPath: vaultDir.path), "no vault was made")
        XCTAssertTrue(result.stdout.contains("other-"), "a --from without --vendor is vendor 'other': \(result.stdout)")
    }

    func testShowTellsAffiliationInheritedEndpointsAndWhyALoginIsImpossible() throws {
        try succeed(["providers", "update", "--from", try writeBundle(.varied), "--vendor", "epic"])
        let clinicID = try XCTUnwrap(try search(["marys", "family", "practice"]).first?["id"] as? String)
        let shown = try json(try succeed(["providers", "show", clinicID, "--json"]))["provider"] as? [String: Any]
        XCTAssertEqual(shown?["affiliated_with"] as? String, "St. Mary's Hospital")
        XCTAssertEqual(shown?["portal"] as? String, "MyChart Saint Mary", "the parent's portal")
        XCTAssertEqual(((shown?["endpoints"] as? [[String: Any]]) ?? []).compactMap { $0["url"] as? String },
                       ["https://fhir.stmary-wi.example.org/api/FHIR/R4/", "https://fhir.stmary-wi.example.org/api/FHIR/DSTU2/"])

        let legacyID = try XCTUnwrap(try search(["legacy", "valley"]).first?["id"] as? String)
        let legacy = try succeed(["providers", "show", legacyID])
        XCTAssertTrue(legacy.stdout.contains("not possible: no (DSTU2 (1.0.2))"), legacy.stdout)
        let unknown = try run(["providers", "show", "epic-0000000000"])
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
    }

    func testUpdateTwiceDuplicatesNothingAndRemovedBrandsAreGone() throws {
        var fixture = BrandsFixture.varied
        let path = try writeBundle(fixture)
        try succeed(["providers", "update", "--from", path, "--vendor", "epic"])
        let firstIDs = try search(["hospital"], ["--limit", "100"]).compactMap { $0["id"] as? String }
        try succeed(["providers", "update", "--from", path, "--vendor", "epic"])
        let secondIDs = try search(["hospital"], ["--limit", "100"]).compactMap { $0["id"] as? String }
        XCTAssertEqual(firstIDs.sorted(), secondIDs.sorted(), "the same brands with the same ids, once each")
        XCTAssertEqual(Set(secondIDs).count, secondIDs.count)

        fixture.brands.removeAll { $0.id == "presbyterian" }
        fixture.endpoints.removeAll { $0.id == "presby-r4" }   // else it is a brand of its own
        try fixture.data.write(to: URL(fileURLWithPath: path))
        let update = try json(try succeed(["providers", "update", "--from", path, "--vendor", "epic", "--json"]))["update"] as? [String: Any]
        XCTAssertEqual(update?["brands"] as? Int, fixture.brands.count)
        XCTAssertTrue(try search(["presbyterian"]).isEmpty, "a brand the vendor no longer lists is gone")

        // Another source's brands stay when one source is read again.
        let other = BrandsFixture(brands: [.init("x", "Xavier Rural Clinic", places: [("Nome", "AK")], endpoints: ["x4"])],
                                  endpoints: [.init("x4", "https://x.example.org/r4")])
        try succeed(["providers", "update", "--from", try writeBundle(other, "other.json"), "--vendor", "oracle"])
        try succeed(["providers", "update", "--from", path, "--vendor", "epic"])
        XCTAssertEqual(names(try search(["xavier"])), ["Xavier Rural Clinic"])
        XCTAssertEqual(names(try search(["santa", "rosa"])), ["Clínica Santa Rosa"])
    }

    func testMalformedOrOversizedBundlesChangeNothing() throws {
        try succeed(["providers", "update", "--from", try writeBundle(.varied), "--vendor", "epic"])
        let before = try Data(contentsOf: directoryFile)

        let good = BrandsFixture.varied.data
        let broken = workDir.appendingPathComponent("broken.json")
        try good.prefix(good.count - 40).write(to: broken)
        let truncated = try run(["providers", "update", "--from", broken.path, "--vendor", "epic"])
        XCTAssertEqual(truncated.status, 5, truncated.stderr)
        XCTAssertTrue(truncated.stderr.contains("nothing of it was kept"), truncated.stderr)

        let notBundle = try file("patient.json", #"{"resourceType": "Patient", "id": "p"}"#)
        XCTAssertEqual(try run(["providers", "update", "--from", notBundle, "--vendor", "epic"]).status, 5)

        let oversized = try run(["providers", "update", "--from", try writeBundle(.varied, "big.json"), "--vendor", "epic", "--max-response-size", "1K"])
        XCTAssertEqual(oversized.status, 5, oversized.stderr)
        XCTAssertTrue(oversized.stderr.contains("larger than"), oversized.stderr)

        XCTAssertEqual(try Data(contentsOf: directoryFile), before, "the directory is as it was")
        XCTAssertEqual(try search(["hospital"], ["--limit", "100"]).count, 4)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directoryFile.deletingLastPathComponent().path)
        XCTAssertEqual(leftovers, ["providers.directory"], "no temporary file left behind")
    }

    func testTheDirectoryHoldsNothingOfTheUser() throws {
        try initVault()
        try succeed(["providers", "update", "--from", try writeBundle(.varied), "--vendor", "epic"])
        try ok(withPassword(["providers", "client", "set", "epic", "--client-id", "client-id-4711",
                             "--client-secret-file", try file("secret", "very-secret-0815\n")]))
        let before = try Data(contentsOf: directoryFile)
        _ = try search(["presbyterian", "hospital"])
        XCTAssertEqual(try Data(contentsOf: directoryFile), before, "a search writes nothing")
        let cache = String(decoding: before, as: UTF8.self)
        XCTAssertFalse(cache.contains("client-id-4711"))
        // The secret is only in the vault, encrypted.
        assertNoPlaintext(["very-secret-0815", "client-id-4711"])
        let listed = try json(try ok(withPassword(["providers", "client", "list", "--json"])))["clients"] as? [[String: Any]]
        XCTAssertEqual(listed?.first?["client_id"] as? String, "client-id-4711")
        XCTAssertEqual(listed?.first?["confidential"] as? Bool, true)
        XCTAssertFalse(try ok(withPassword(["providers", "client", "list", "--json"])).stdout.contains("very-secret-0815"))
    }

    // MARK: - Against the sample server

    func testConditionalGetKeepsTheCopyWhenTheServerSays304() throws {
        let server = try SampleServer(workDir: workDir)
        defer { server.stop() }
        let url = server.base.absoluteString + "/brands.json"
        let first = try json(try succeed(["providers", "update", "--from", url, "--vendor", "sample", "--json"]))["update"] as? [String: Any]
        let firstSource = (first?["sources"] as? [[String: Any]])?.first
        XCTAssertEqual(firstSource?["status"] as? String, "updated")
        let before = try Data(contentsOf: directoryFile)

        let second = try json(try succeed(["providers", "update", "--from", url, "--vendor", "sample", "--json"]))["update"] as? [String: Any]
        XCTAssertEqual((second?["sources"] as? [[String: Any]])?.first?["status"] as? String, "not-modified")
        XCTAssertEqual(second?["written"] as? Bool, false)
        XCTAssertEqual(try Data(contentsOf: directoryFile), before)

        let hit = try XCTUnwrap(try search(["sample", "general"]).first)
        XCTAssertEqual(hit["name"] as? String, "Sample General Hospital")
        XCTAssertEqual((hit["endpoints"] as? [[String: Any]])?.first?["url"] as? String, server.fhir)
    }

    func testANetworkUpdateStreamsAndAnOversizedDownloadChangesNothing() throws {
        let server = try SampleServer(workDir: workDir)
        defer { server.stop() }
        try succeed(["providers", "update", "--from", try writeBundle(.varied), "--vendor", "epic"])

        // A bundle that arrives in chunks, with no length announced, is read whole from its download.
        let streamed = server.base.absoluteString + "/brands.json?clinics=2000"
        let update = try json(try succeed(["providers", "update", "--from", streamed, "--vendor", "sample", "--json"]))["update"] as? [String: Any]
        let source = (update?["sources"] as? [[String: Any]])?.first
        XCTAssertEqual(source?["status"] as? String, "updated")
        XCTAssertEqual(source?["brands"] as? Int, 2004, "the sample's four brands and the streamed clinics")
        XCTAssertEqual(names(try search(["streamed", "clinic", "1999"])).first, "Streamed Clinic 1999")
        let before = try Data(contentsOf: directoryFile)

        // Over the limit as it streams (about 8 MB, no Content-Length): refused, exit 5, nothing changed.
        let huge = server.base.absoluteString + "/brands.json?clinics=20000"
        let refused = try run(["providers", "update", "--from", huge, "--vendor", "sample", "--max-response-size", "1M"])
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("is larger than 1 MiB; nothing of it was kept"), refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").filter { $0.hasPrefix("hreader:") },
                       ["hreader: \(huge) is larger than 1 MiB; nothing of it was kept (raise --max-response-size)"], refused.stderr)
        XCTAssertEqual(try Data(contentsOf: directoryFile), before, "the directory is as it was")
        XCTAssertEqual(names(try search(["streamed", "clinic", "1999"])).first, "Streamed Clinic 1999")
        XCTAssertEqual(names(try search(["santa", "rosa"])), ["Clínica Santa Rosa"], "the other source's brands stay")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directoryFile.deletingLastPathComponent().path)
        XCTAssertEqual(leftovers, ["providers.directory"], "no download or spool file left behind")
    }

    func testCheckReportsTheSmartConfigurationAndCapabilityStatement() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        defer { server.stop() }
        try succeed(["providers", "update", "--from", server.base.absoluteString + "/brands.json", "--vendor", "sample"])
        let id = try XCTUnwrap(try search(["sample", "general"]).first?["id"] as? String)
        let check = try json(try succeed(["providers", "check", id, "--json"]))["check"] as? [String: Any]
        XCTAssertEqual(check?["up"] as? Bool, true)
        XCTAssertEqual(check?["pkce_s256"] as? Bool, true)
        XCTAssertEqual(check?["can_log_in"] as? Bool, true)
        XCTAssertEqual(check?["fhir_version"] as? String, "4.0.1")
        XCTAssertNotNil(check?["smart"] as? [String: Any])

        let retired = try XCTUnwrap(try search(["sample", "retired"]).first?["id"] as? String)
        let down = try run(["providers", "check", retired, "--json"])
        XCTAssertEqual(down.status, 6, "its endpoint answers nothing: \(down.stdout)")
    }
}
