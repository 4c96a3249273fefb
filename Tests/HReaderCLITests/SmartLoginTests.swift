import Foundation
import HReaderNet
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader sources login --smart` through the real binary against the sample server's SMART
/// authorization server (`--smart`). The test plays the browser: it reads the authorization URL
/// hreader prints, GETs it from the server's /oauth/authorize without following the 302, and GETs
/// the `Location` from hreader's loopback listener.
final class SmartLoginTests: CLITestCase {
    /// The prefixes the sample server gives its codes and tokens: none may show anywhere.
    static let tokenPrefixes = ["sample-access-", "sample-refresh-", "sample-code-"]
    static let publicParameters: Set<String> = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
                                                "code_challenge_method", "aud"]

    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    // MARK: - Playing the browser

    /// Starts the login and waits for the authorization URL it prints.
    private func startLogin(_ base: String, _ extra: [String] = []) throws -> (Running, URL) {
        let running = try start(withPassword(["sources", "login", "--server", base, "--smart"] + extra))
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
        throw NSError(domain: "SmartLoginTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "no authorization URL: \(result.stderr)"])
    }

    /// GETs the authorization URL at the server and returns the redirect's Location, unfollowed.
    private func authorize(_ url: URL, at server: SampleServer, extra: String = "") throws -> URL {
        let parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let response = try RawHTTP.send(port: server.port, path: parts.percentEncodedPath + "?" + parts.percentEncodedQuery! + extra,
                                        host: "127.0.0.1:\(server.port)")
        XCTAssertEqual(response.status, 302, response.body)
        return try XCTUnwrap(response.header("Location").flatMap(URL.init(string:)))
    }

    /// GETs the redirect from hreader's listener, as the browser would.
    private func follow(_ location: URL) throws -> RawHTTP.Response {
        let parts = URLComponents(url: location, resolvingAgainstBaseURL: false)!
        XCTAssertEqual(parts.host, "127.0.0.1")
        return try RawHTTP.send(port: parts.port!, path: parts.percentEncodedPath + "?" + (parts.percentEncodedQuery ?? ""),
                                host: "127.0.0.1:\(parts.port!)")
    }

    private func finish(_ running: Running, timeout: TimeInterval = 60) -> CLIResult {
        let deadline = Date().addingTimeInterval(timeout)
        while running.process.isRunning && Date() < deadline { usleep(10_000) }
        if running.process.isRunning {
            kill(running.process.processIdentifier, SIGKILL)
            XCTFail("the login did not end within \(timeout) s")
        }
        return running.finish()
    }

    /// A whole login as a user with a browser does it.
    @discardableResult
    private func logIn(_ base: String, at server: SampleServer, _ extra: [String] = []) throws -> (result: CLIResult, url: URL) {
        let (running, url) = try startLogin(base, extra)
        let page = try follow(try authorize(url, at: server))
        XCTAssertEqual(page.status, 200, page.body)
        XCTAssertTrue(page.body.contains("You can close this tab"), page.body)
        let result = finish(running)
        XCTAssertEqual(result.status, 0, result.stderr)
        return (result, url)
    }

    private func sources() throws -> [[String: Any]] {
        try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as! [[String: Any]]
    }

    private func patients() throws -> [[String: Any]] {
        try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
    }

    /// The family name the sample data gives a patient (the same seed makes the same patients).
    private func familyName(of id: String) throws -> String {
        let plain = try SampleServer(workDir: workDir)
        defer { plain.stop() }
        let patient = try plain.json("/fhir/Patient/\(id)")
        return try XCTUnwrap(((patient["name"] as? [[String: Any]])?.first?["family"]) as? String)
    }

    private func assertNoTokens(_ results: [CLIResult], file: StaticString = #filePath, line: UInt = #line) {
        for result in results {
            for prefix in Self.tokenPrefixes {
                XCTAssertFalse((result.stdout + result.stderr).contains(prefix), "output shows a token: \(result.stderr)", file: file, line: line)
            }
        }
        assertNoPlaintext(Self.tokenPrefixes, file: file, line: line)
    }

    // MARK: - The login

    /// The whole flow: the authorization URL holds only public values, the redirect comes back to
    /// the listener, the tokens land encrypted in the vault, and `import --server` with no
    /// `--patient` imports the patient chosen at login (and `sync` keeps it current).
    func testLoginThenImportTheTokensPatientWithoutPatientOption() throws {
        let server = try SampleServer(["--smart", "--smart-patient", "p2"], workDir: workDir)
        let family = try familyName(of: "p2")
        let (login, url) = try logIn(server.fhir, at: server)

        let items = try XCTUnwrap(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        XCTAssertEqual(Set(items.map(\.name)), Self.publicParameters, "what xdg-open would get in argv: public values only")
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        XCTAssertEqual(value("client_id"), "hreader")
        XCTAssertEqual(value("aud"), server.fhir)
        XCTAssertEqual(value("code_challenge_method"), "S256")
        XCTAssertEqual(value("scope"), "launch/patient openid fhirUser offline_access patient/*.rs")
        XCTAssertTrue(value("redirect_uri")?.hasPrefix("http://127.0.0.1:") ?? false)
        XCTAssertTrue(value("redirect_uri")?.hasSuffix("/callback") ?? false)
        XCTAssertGreaterThanOrEqual(value("state")?.count ?? 0, 20)
        XCTAssertTrue(login.stderr.contains("as patient p2 ("), login.stderr)
        XCTAssertTrue(login.stderr.contains(family), "the login read the patient with its token: \(login.stderr)")

        let stored = try sources()
        XCTAssertEqual(stored.count, 1)
        XCTAssertEqual(stored.first?["auth"] as? String, "oauth2")
        XCTAssertEqual(stored.first?["url"] as? String, server.fhir)
        XCTAssertEqual(stored.first?["smart"] as? Bool, true)
        XCTAssertEqual(stored.first?["login_patient"] as? String, "p2")

        let imported = try ok(withPassword(["import", "--server", server.fhir]))
        XCTAssertTrue(imported.stdout.contains("Imported 1 patient(s)"), imported.stdout)
        let list = try patients()
        XCTAssertEqual(list.count, 1)
        XCTAssertEqual(list.first?["last_name"] as? String, family)
        let synced = try ok(withPassword(["sync"]))
        XCTAssertTrue(synced.stdout.contains("Synced 1 patient(s)"), synced.stdout)

        assertNoTokens([login, imported, synced])
        assertNoPlaintext([family])
    }

    /// --json prints what was stored (never a token).
    func testLoginWithJSONAndAFixedRedirectPort() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let probe = try LoopbackListener(port: 0)
        let port = probe.port
        probe.stop()
        let (login, url) = try logIn(server.fhir, at: server, ["--redirect-port", "\(port)", "--json"])
        XCTAssertTrue(url.absoluteString.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A\(port)%2Fcallback"), url.absoluteString)
        let object = try XCTUnwrap(try json(login)["login"] as? [String: Any])
        XCTAssertEqual(object["patient"] as? String, "p1")
        XCTAssertEqual(object["method"] as? String, "smart")
        XCTAssertEqual(object["refreshable"] as? Bool, true)
        XCTAssertEqual(object["checked"] as? Bool, true)
        assertNoTokens([login])
    }

    func testDiscoveryFallsBackToTheCapabilityStatement() throws {
        let server = try SampleServer(["--smart", "--smart-patient", "p3"], workDir: workDir)
        let base = server.base.absoluteString + "/secure/fhir"
        let (login, url) = try logIn(base, at: server)
        XCTAssertTrue(url.absoluteString.contains("patient%2F%2A.read"), "SMART v1 scopes for a server without the well-known document: \(url)")
        XCTAssertTrue(login.stderr.contains("as patient p3"), login.stderr)
        let imported = try ok(withPassword(["import", "--server", base]))
        XCTAssertTrue(imported.stdout.contains("Imported 1 patient(s)"), imported.stdout)
    }

    // MARK: - Refusals

    func testARedirectWithAnotherStateIsRefusedAndNothingIsStored() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let (running, url) = try startLogin(server.fhir)
        let location = try authorize(url, at: server)
        var parts = URLComponents(url: location, resolvingAgainstBaseURL: false)!
        parts.queryItems = parts.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged-state") : $0 }
        let page = try follow(parts.url!)
        XCTAssertEqual(page.status, 400)
        let result = finish(running)
        XCTAssertEqual(result.status, 3, result.stderr)
        XCTAssertTrue(result.stderr.contains("state that is not this login's"), result.stderr)
        XCTAssertTrue(try sources().isEmpty, "nothing stored")
        assertNoTokens([result])
    }

    func testDeniedAuthorizationSaysSoInOneLine() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let (running, url) = try startLogin(server.fhir)
        let location = try authorize(url, at: server, extra: "&sample_decision=deny")
        XCTAssertTrue(location.absoluteString.contains("error=access_denied"), location.absoluteString)
        _ = try follow(location)
        let result = finish(running)
        XCTAssertEqual(result.status, 3, result.stderr)
        let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("hreader:") }
        XCTAssertEqual(errors, ["hreader: access was denied (The user denied access); nothing was stored"], result.stderr)
        XCTAssertTrue(try sources().isEmpty)
    }

    func testAServerThatDeclaresNoS256IsRefusedBeforeAnyBrowser() throws {
        let server = try SampleServer(["--smart", "--smart-challenge-methods", "plain"], workDir: workDir)
        let result = try hreader(withPassword(["sources", "login", "--server", server.fhir, "--smart"]))
        XCTAssertEqual(result.status, 6, result.stderr)
        XCTAssertTrue(result.stderr.contains("not S256"), result.stderr)
        XCTAssertFalse(result.stderr.contains("/oauth/authorize"), "no URL to open: \(result.stderr)")
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(try sources().isEmpty)
    }

    func testAServerWithoutSmartIsNamed() throws {
        let server = try SampleServer(workDir: workDir)
        let result = try hreader(withPassword(["sources", "login", "--server", server.fhir, "--smart"]))
        XCTAssertEqual(result.status, 6, result.stderr)
        XCTAssertTrue(result.stderr.contains("does not declare SMART App Launch"), result.stderr)
    }

    func testNoBrowserWithinTheTimeoutIsAClearError() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let result = try hreader(withPassword(["sources", "login", "--server", server.fhir, "--smart", "--login-timeout", "1s"]))
        XCTAssertEqual(result.status, 3, result.stderr)
        XCTAssertTrue(result.stderr.contains("hreader: no answer from the browser within 1 s"), result.stderr)
        XCTAssertTrue(try sources().isEmpty)
    }

    /// The server forgets every token (a restart, a revocation): the next import says to log in
    /// again, naming the command, with exit 3.
    func testARefusedRefreshAsksToLogInAgain() throws {
        let first = try SampleServer(["--smart"], workDir: workDir)
        try logIn(first.fhir, at: first)
        let port = first.port
        first.stop()
        let restarted = try SampleServer(["--smart", "--port", "\(port)"], workDir: workDir)
        XCTAssertEqual(restarted.fhir, first.fhir)
        let result = try hreader(withPassword(["import", "--server", restarted.fhir]))
        XCTAssertEqual(result.status, 3, result.stderr)
        XCTAssertTrue(result.stderr.contains("log in again: hreader sources login --server \(restarted.fhir) --smart"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line, no stack trace: \(result.stderr)")
        assertNoTokens([result])
    }

    func testImportWithoutPatientNeedsALoginThatChoseOne() throws {
        let server = try SampleServer(workDir: workDir)
        let result = try hreader(withPassword(["import", "--server", server.fhir]))
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--all or --patient"), result.stderr)
        XCTAssertTrue(try sources().isEmpty, "no source is created for a refused import")
        let both = try hreader(withPassword(["import", "--server", server.fhir, "--all", "--patient", "p1"]))
        XCTAssertEqual(both.status, 2, both.stderr)
    }

    func testSmartTakesNoSecretOptions() throws {
        let token = try file("token", "t0ken\n")
        let result = try hreader(withPassword(["sources", "login", "--server", "https://fhir.example.org/r4", "--smart", "--token-file", token]))
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("--smart takes no other credential options"), result.stderr)
    }
}
