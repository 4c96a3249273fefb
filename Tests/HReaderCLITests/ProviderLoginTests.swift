import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader sources login --provider ID|NAME` through the real binary against the sample server's
/// SMART mode and its own brands bundle: the brand's R4 endpoint, the vendor's client id, and the
/// refusals (DSTU2 only, an endpoint that is off, a name that names several brands).
final class ProviderLoginTests: CLITestCase {
    var cacheDir: URL { workDir.appendingPathComponent("cache") }
    var env: [String: String] { ["XDG_CACHE_HOME": cacheDir.path] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    private func update(_ server: SampleServer) throws {
        try ok(["providers", "update", "--from", server.base.absoluteString + "/brands.json", "--vendor", "sample"], env: env)
    }

    /// Starts the login and waits for the authorization URL it prints.
    private func startLogin(_ arguments: [String]) throws -> (Running, URL) {
        let running = try start(withPassword(["sources", "login"] + arguments), env: env)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let stderr = (try? String(contentsOf: running.err, encoding: .utf8)) ?? ""
            let line = stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .first { $0.hasPrefix("http") && $0.contains("/oauth/authorize?") }
            if let line, let url = URL(string: line) { return (running, url) }
            if !running.process.isRunning { break }
            usleep(20_000)
        }
        let result = finish(running)
        throw NSError(domain: "ProviderLoginTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "no authorization URL: \(result.stderr)"])
    }

    private func finish(_ running: Running) -> CLIResult {
        let deadline = Date().addingTimeInterval(60)
        while running.process.isRunning && Date() < deadline { usleep(10_000) }
        if running.process.isRunning {
            kill(running.process.processIdentifier, SIGKILL)
            XCTFail("the login did not end")
        }
        return running.finish()
    }

    /// Plays the browser: the authorization URL at the server, then its redirect at hreader's listener.
    private func logIn(_ arguments: [String], at server: SampleServer) throws -> (CLIResult, URL) {
        let (running, url) = try startLogin(arguments)
        let parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let authorized = try RawHTTP.send(port: server.port, path: parts.percentEncodedPath + "?" + parts.percentEncodedQuery!,
                                          host: "127.0.0.1:\(server.port)")
        XCTAssertEqual(authorized.status, 302, authorized.body)
        let location = try XCTUnwrap(authorized.header("Location").flatMap { URLComponents(string: $0) })
        let page = try RawHTTP.send(port: location.port!, path: location.percentEncodedPath + "?" + (location.percentEncodedQuery ?? ""),
                                    host: "127.0.0.1:\(location.port!)")
        XCTAssertEqual(page.status, 200, page.body)
        return (finish(running), url)
    }

    private func query(_ url: URL, _ name: String) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
    }

    private func sources() throws -> [[String: Any]] {
        try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as? [[String: Any]] ?? []
    }

    func testLoginByProviderNameUsesItsR4EndpointAndTheVendorsClientID() throws {
        let server = try SampleServer(["--smart", "--smart-client-id", "my-sample-app"], workDir: workDir)
        defer { server.stop() }
        try update(server)
        try ok(withPassword(["providers", "client", "set", "sample", "--client-id", "my-sample-app"]))

        let (result, url) = try logIn(["--provider", "sample general hospital"], at: server)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(query(url, "client_id"), "my-sample-app", "the vendor's registration")
        XCTAssertEqual(query(url, "aud"), server.fhir, "the brand's R4 endpoint")
        let source = try XCTUnwrap(try sources().first)
        XCTAssertEqual(source["url"] as? String, server.fhir)
        XCTAssertEqual(source["smart"] as? Bool, true)
        XCTAssertEqual(source["login_patient"] as? String, "p1")
    }

    func testAnAffiliatedBrandLogsInThroughItsParentAndClientIDOnTheCommandLineWins() throws {
        let server = try SampleServer(["--smart", "--smart-client-id", "override-app"], workDir: workDir)
        defer { server.stop() }
        try update(server)
        try ok(withPassword(["providers", "client", "set", "sample", "--client-id", "registered-app"]))
        let (result, url) = try logIn(["--provider", "Sample Family Clinic", "--client-id", "override-app"], at: server)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(query(url, "client_id"), "override-app")
        XCTAssertEqual(query(url, "aud"), server.fhir)
    }

    func testDSTU2OnlyAndInactiveEndpointsAreRefusedWithTheReason() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        defer { server.stop() }
        try update(server)

        let legacy = try hreader(withPassword(["sources", "login", "--provider", "Sample Legacy Medical Group"]), env: env)
        XCTAssertEqual(legacy.status, 1, legacy.stderr)
        XCTAssertTrue(legacy.stderr.contains("DSTU2"), legacy.stderr)
        XCTAssertTrue(legacy.stderr.contains("R4"), legacy.stderr)

        let retired = try hreader(withPassword(["sources", "login", "--provider", "Sample Retired Hospital"]), env: env)
        XCTAssertEqual(retired.status, 1, retired.stderr)
        XCTAssertTrue(retired.stderr.contains("marked off"), retired.stderr)
        XCTAssertTrue(try sources().isEmpty, "nothing was stored")
    }

    func testANameOfSeveralBrandsExitsTwoListingThem() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        defer { server.stop() }
        try update(server)
        let result = try hreader(withPassword(["sources", "login", "--provider", "Sample"]), env: env)
        XCTAssertEqual(result.status, 2, result.stderr)
        for name in ["Sample General Hospital", "Sample Family Clinic", "Sample Legacy Medical Group", "Sample Retired Hospital"] {
            XCTAssertTrue(result.stderr.contains(name) || result.stdout.contains(name), "\(name) listed: \(result.stderr) \(result.stdout)")
        }
        let none = try hreader(withPassword(["sources", "login", "--provider", "Nowhere Memorial"]), env: env)
        XCTAssertEqual(none.status, 2, none.stderr)
        let both = try hreader(withPassword(["sources", "login", "--provider", "x", "--server", server.fhir]), env: env)
        XCTAssertEqual(both.status, 2, both.stderr)
    }
}
