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

    /// The whole flow: the authorization URL holds no credential, the redirect comes back to
    /// the listener, the tokens land encrypted in the vault, and `import --server` with no
    /// `--patient` imports the patient chosen at login (and `sync` keeps it current).
    func testLoginThenImportTheTokensPatientWithoutPatientOption() throws {
        let server = try SampleServer(["--smart", "--smart-patient", "p2"], workDir: workDir)
        let family = try familyName(of: "p2")
        let (login, url) = try logIn(server.fhir, at: server)

        let items = try XCTUnwrap(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        XCTAssertEqual(Set(items.map(\.name)), Self.publicParameters, "the URL holds these parameters and no credential")
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        XCTAssertEqual(value("client_id"), "hreader")
        XCTAssertEqual(value("aud"), server.fhir)
        XCTAssertEqual(value("code_challenge_method"), "S256")
        XCTAssertEqual(value("scope"), "launch/patient openid fhirUser offline_access patient/*.rs")
        XCTAssertTrue(value("redirect_uri")?.hasPrefix("http://127.0.0.1:") ?? false)
        XCTAssertTrue(value("redirect_uri")?.hasSuffix("/callback") ?? false)
        XCTAssertGreaterThanOrEqual(value("state")?.count ?? 0, 20)
        XCTAssertTrue(login.stderr.contains("as patient p2 ("), login.stderr)
        XCTAssertTrue(login.stderr.contains("The tokens are for patient p2 (") && login.stderr.contains(family),
                      "without a terminal it says whom the tokens are for: \(login.stderr)")
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

    /// Any local user can reach the callback port: a redirect with another state is answered 400
    /// and the login keeps waiting for its own, which then goes through.
    func testARedirectWithAnotherStateIsAnswered400AndTheLoginGoesOn() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let (running, url) = try startLogin(server.fhir)
        let location = try authorize(url, at: server)
        var parts = URLComponents(url: location, resolvingAgainstBaseURL: false)!
        parts.queryItems = parts.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged-state") : $0 }
        let forged = try follow(parts.url!)
        XCTAssertEqual(forged.status, 400)
        XCTAssertTrue(running.process.isRunning, "a forged redirect does not end the login")
        let page = try follow(location)
        XCTAssertEqual(page.status, 200, page.body)
        let result = finish(running)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try sources().count, 1, "the login's own redirect stored the tokens")
        assertNoTokens([result])
    }

    /// The number of stray requests is bounded: past it the login ends, storing nothing.
    func testTooManyRedirectsWithAnotherStateEndTheLoginStoringNothing() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let (running, url) = try startLogin(server.fhir)
        let location = try authorize(url, at: server)
        var parts = URLComponents(url: location, resolvingAgainstBaseURL: false)!
        parts.queryItems = parts.queryItems?.map { $0.name == "state" ? URLQueryItem(name: "state", value: "forged-state") : $0 }
        for _ in 0..<LoopbackListener.maximumRejected {
            XCTAssertEqual(try follow(parts.url!).status, 400)
        }
        let result = finish(running)
        XCTAssertEqual(result.status, 3, result.stderr)
        XCTAssertTrue(result.stderr.contains("hreader: 20 requests to the login's redirect address were not this login's redirect"), result.stderr)
        XCTAssertTrue(try sources().isEmpty, "nothing stored")
    }

    // MARK: - The browser

    /// On a terminal hreader starts the desktop's opener (xdg-open, here a fake one first on PATH).
    /// The opener never sees the authorization URL (whose state any local user could read in
    /// /proc/PID/cmdline and use to finish the login with their own code): it gets the path of a
    /// page, 0600 in a 0700 directory, that sends the browser on, removed when the login ends; and
    /// it inherits no HREADER_* variable. After the exchange the patient is shown whom the tokens
    /// are for and asked before they are stored.
    func testTheBrowserGetsAPrivatePageNotTheURLAndNoHReaderSecrets() throws {
        let server = try SampleServer(["--smart", "--smart-patient", "p2"], workDir: workDir)
        let family = try familyName(of: "p2")
        let session = try XCTUnwrap(try ok(withPassword(["unlock"])).stdout.split(separator: "\n")
            .first { $0.hasPrefix("export HREADER_SESSION=") }.map { String($0.dropFirst("export HREADER_SESSION=".count)) })
        let seen = workDir.appendingPathComponent("opener")
        let bin = workDir.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: seen, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opener = bin.appendingPathComponent("xdg-open")
        try Data("""
            #!/bin/sh
            printf '%s\\n' "$@" > '\(seen.path)/argv'
            env > '\(seen.path)/env'
            stat -c '%a %u' "$1" > '\(seen.path)/file-mode'
            stat -c '%a %u' "$(dirname "$1")" > '\(seen.path)/dir-mode'
            cp "$1" '\(seen.path)/page.html'
            touch '\(seen.path)/done'

            """.utf8).write(to: opener)
        chmod(opener.path, 0o700)

        let terminal = try OnTerminal(Self.binary, ["sources", "login", "--server", server.fhir, "--smart"], workDir: workDir,
                                      environment: environment(["PATH": bin.path + ":/usr/local/bin:/usr/bin:/bin",
                                                                "HREADER_PASSWORD": CLITestCase.password, "HREADER_SESSION": session]))
        defer { terminal.stop() }
        XCTAssertTrue(terminal.wait { _ in FileManager.default.fileExists(atPath: seen.appendingPathComponent("done").path) },
                      "the opener was started: \(terminal.outputText)")

        let argv = try String(contentsOf: seen.appendingPathComponent("argv"), encoding: .utf8)
        XCTAssertFalse(argv.contains("state"), "the opener's argv holds no state: \(argv)")
        XCTAssertFalse(argv.contains("/oauth/authorize"), "nor the URL: \(argv)")
        let page = argv.trimmingCharacters(in: .newlines)
        XCTAssertTrue(page.hasSuffix("/login.html"), argv)
        XCTAssertEqual(try String(contentsOf: seen.appendingPathComponent("file-mode"), encoding: .utf8), "600 \(getuid())\n")
        XCTAssertEqual(try String(contentsOf: seen.appendingPathComponent("dir-mode"), encoding: .utf8), "700 \(getuid())\n")
        let env = try String(contentsOf: seen.appendingPathComponent("env"), encoding: .utf8)
        XCTAssertFalse(env.contains("HREADER_"), "the opener inherits no HREADER_* variable: \(env)")
        XCTAssertFalse(env.contains(CLITestCase.password) || env.contains(session), env)

        // The page sends the browser to the authorization URL: play the browser.
        let html = try String(contentsOf: seen.appendingPathComponent("page.html"), encoding: .utf8)
        let href = try XCTUnwrap(html.range(of: #"href="[^"]+""#, options: .regularExpression).map { String(html[$0].dropFirst(6).dropLast()) })
        let url = try XCTUnwrap(URL(string: href.replacingOccurrences(of: "&amp;", with: "&")))
        XCTAssertTrue(html.contains("http-equiv=\"refresh\""), html)
        XCTAssertEqual(try follow(try authorize(url, at: server)).status, 200)

        XCTAssertTrue(terminal.wait { $0.contains("Store them? [y/N]") }, terminal.outputText)
        XCTAssertTrue(terminal.outputText.contains("The tokens are for patient p2 ("), terminal.outputText)
        XCTAssertTrue(terminal.outputText.contains(family), "the patient's name is shown before storing: \(terminal.outputText)")
        XCTAssertTrue(try sources().isEmpty, "nothing is stored before the answer")
        terminal.type("y\n")
        let status = terminal.finish()
        XCTAssertEqual(status, 0, terminal.outputText)
        XCTAssertFalse(FileManager.default.fileExists(atPath: page), "the page is removed when the login ends")
        XCTAssertFalse(FileManager.default.fileExists(atPath: URL(fileURLWithPath: page).deletingLastPathComponent().path))
        XCTAssertEqual(try sources().count, 1)
        XCTAssertEqual(try sources().first?["login_patient"] as? String, "p2")
    }

    /// Answering no at the question stores nothing (exit 3).
    func testAnsweringNoOnTheTerminalStoresNothing() throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let terminal = try OnTerminal(Self.binary, withPassword(["sources", "login", "--server", server.fhir, "--smart", "--no-browser"]),
                                      workDir: workDir, environment: environment())
        defer { terminal.stop() }
        XCTAssertTrue(terminal.wait { $0.contains("/oauth/authorize?") && $0.contains("Waiting up to") }, terminal.outputText)
        let line = try XCTUnwrap(terminal.outputText.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix("http") && $0.contains("/oauth/authorize?") })
        XCTAssertEqual(try follow(try authorize(try XCTUnwrap(URL(string: line)), at: server)).status, 200)
        XCTAssertTrue(terminal.wait { $0.contains("Store them? [y/N]") }, terminal.outputText)
        terminal.type("n\n")
        XCTAssertEqual(terminal.finish(), 3, terminal.outputText)
        XCTAssertTrue(terminal.outputText.contains("was not stored, as you answered"), terminal.outputText)
        XCTAssertTrue(try sources().isEmpty)
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
