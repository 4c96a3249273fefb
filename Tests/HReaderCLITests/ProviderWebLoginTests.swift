import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The provider page's *Log in* (issue 38, docs/web.md): a real `hreader serve` runs the login of
/// `sources login --provider ID` against the sample server's SMART mode (which checks the client id,
/// `aud` and PKCE S256), the test playing the browser over raw HTTP. No keeps nothing, Yes stores
/// the tokens, and the record then imports with them; unknown brands and logins, refused brands,
/// and forms without the session's CSRF token or from another origin.
final class ProviderWebLoginTests: CLITestCase {
    var cache: [String: String] { ["XDG_CACHE_HOME": workDir.appendingPathComponent("cache").path] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    /// The sample server in SMART mode for client `web-app`, its brands in the directory, the
    /// registration kept for its vendor, and `hreader serve` on the vault.
    private func setUp(clientID: String = "web-app", serveEnv: [String: String] = [:]) throws -> (SampleServer, ServedVault) {
        let server = try SampleServer(["--smart", "--smart-client-id", clientID], workDir: workDir)
        try ok(["providers", "update", "--from", server.base.absoluteString + "/brands.json", "--vendor", "sample"], env: cache)
        try ok(withPassword(["providers", "client", "set", "sample", "--client-id", clientID]))
        return (server, try serve(env: cache.merging(serveEnv) { $1 }))
    }

    private func brandID(_ served: ServedVault, _ words: String) throws -> String {
        let answer = try served.bearer("/api/providers?q=\(FormEncoding.encode(words))")
        XCTAssertEqual(answer.status, 200, answer.body)
        return try XCTUnwrap((answer.json["providers"] as? [[String: Any]])?.first?["id"] as? String, answer.body)
    }

    /// Posts the brand page's form (with the bearer token, as a script may) and returns the login's id.
    private func startLogin(_ served: ServedVault, brand: String) throws -> String {
        let started = try served.bearer("POST", "/providers/\(brand)/login")
        XCTAssertEqual(started.status, 303, started.body)
        let location = try XCTUnwrap(started.header("Location"))
        XCTAssertTrue(location.hasPrefix(served.app("/providers/logins/")), location)
        return String(location.dropFirst(served.app("/providers/logins/").count))
    }

    private func phase(_ served: ServedVault, _ login: String) throws -> String? {
        let answer = try served.bearer("/api/providers/logins/\(login)")
        return (answer.json["login"] as? [String: Any])?["phase"] as? String
    }

    private func waitForPhase(_ served: ServedVault, _ login: String, _ wanted: String, timeout: TimeInterval = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var seen: String?
        while Date() < deadline {
            seen = try phase(served, login)
            if seen == wanted { return }
            usleep(50_000)
        }
        let page = try served.bearer("/providers/logins/\(login)").body
        XCTFail("the login is \(seen ?? "gone"), not \(wanted): \(page)")
        throw NSError(domain: "ProviderWebLoginTests", code: 1)
    }

    /// Plays the browser: the page's *Sign in* link at the sample server, its 302 to hreader's
    /// listener, the listener's page. Returns the authorization URL.
    @discardableResult
    private func signIn(_ served: ServedVault, _ login: String, at server: SampleServer) throws -> URL {
        try waitForPhase(served, login, "waiting")
        let page = try served.bearer("/providers/logins/\(login)").body
        XCTAssertTrue(page.contains(#"target="_blank" rel="noopener noreferrer">Sign in at MySample Health</a>"#), page)
        let link = try XCTUnwrap(page.range(of: #"class="button sign-in-link" href=""#).map { page[$0.upperBound...].prefix { $0 != "\"" } })
        let url = try XCTUnwrap(URL(string: link.replacingOccurrences(of: "&amp;", with: "&")))
        let parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        let authorized = try RawHTTP.send(port: server.port, path: parts.percentEncodedPath + "?" + parts.percentEncodedQuery!,
                                          host: "127.0.0.1:\(server.port)")
        XCTAssertEqual(authorized.status, 302, "the sample server accepted the client id, aud and S256: \(authorized.body)")
        let location = try XCTUnwrap(authorized.header("Location").flatMap { URLComponents(string: $0) })
        XCTAssertEqual(location.host, "127.0.0.1")
        let back = try RawHTTP.send(port: location.port!, path: location.percentEncodedPath + "?" + (location.percentEncodedQuery ?? ""),
                                    host: "127.0.0.1:\(location.port!)")
        XCTAssertEqual(back.status, 200, back.body)
        XCTAssertTrue(back.body.contains("You can close this tab"), back.body)
        return url
    }

    private func sources() throws -> [[String: Any]] {
        try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as? [[String: Any]] ?? []
    }

    func testNoKeepsNothingAndYesStoresALoginWhoseRecordImports() throws {
        let (server, served) = try setUp()
        defer { server.stop(); stop(served) }
        let brand = try brandID(served, "sample general hospital")

        // No: the portal's login went through, and nothing is kept.
        let first = try startLogin(served, brand: brand)
        let url = try signIn(served, first, at: server)
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        XCTAssertEqual(value("client_id"), "web-app", "the vendor's registration, as sources login --provider uses it")
        XCTAssertEqual(value("aud"), server.fhir, "the brand's R4 endpoint")
        XCTAssertEqual(value("code_challenge_method"), "S256")
        XCTAssertTrue(value("redirect_uri")?.hasPrefix("http://127.0.0.1:") == true && value("redirect_uri")?.hasSuffix("/callback") == true,
                      "the command's redirect URI: \(value("redirect_uri") ?? "")")
        try waitForPhase(served, first, "confirm")
        let question = try served.bearer("/providers/logins/\(first)").body
        XCTAssertTrue(question.contains("The portal logged you in as patient p1 ("), question)
        XCTAssertTrue(question.contains(#"action="\#(served.app("/providers/logins/\(first)/yes"))""#), question)
        for prefix in SmartLoginTests.tokenPrefixes { XCTAssertFalse(question.contains(prefix), "the page shows no token") }
        XCTAssertTrue(try sources().isEmpty, "nothing is stored before Yes")
        let no = try served.bearer("POST", "/providers/logins/\(first)/no")
        XCTAssertEqual(no.status, 303, no.body)
        XCTAssertEqual(try phase(served, first), "declined")
        XCTAssertTrue(try served.bearer("/providers/logins/\(first)").body.contains("Nothing was kept"))
        XCTAssertEqual(try served.bearer("POST", "/providers/logins/\(first)/yes").status, 409, "No was the answer: Yes comes too late")
        XCTAssertTrue(try sources().isEmpty, "No keeps nothing")

        // Yes: the tokens are stored, for the patient the portal chose.
        let second = try startLogin(served, brand: brand)
        XCTAssertNotEqual(second, first)
        try signIn(served, second, at: server)
        try waitForPhase(served, second, "confirm")
        let yes = try served.bearer("POST", "/providers/logins/\(second)/yes")
        XCTAssertEqual(yes.status, 303, yes.body)
        XCTAssertEqual(try phase(served, second), "stored")
        let done = try served.bearer("/providers/logins/\(second)").body
        XCTAssertTrue(done.contains("Logged in to <code>\(server.fhir)</code> as patient p1 ("), done)
        let stored = try XCTUnwrap(try sources().first)
        XCTAssertEqual(stored["url"] as? String, server.fhir)
        XCTAssertEqual(stored["smart"] as? Bool, true)
        XCTAssertEqual(stored["login_patient"] as? String, "p1")

        // The record imports with the stored tokens (the server wants them on every FHIR request).
        let imported = try ok(withPassword(["import", "--server", server.fhir]))
        XCTAssertTrue(imported.stdout.contains("Imported 1 patient(s)"), imported.stdout)
        let family = try XCTUnwrap((try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as? [[String: Any]])?
            .first?["last_name"] as? String)
        XCTAssertTrue(question.contains(family), "the question named the patient read with the new token (\(family))")
        _ = assertNoPlaintext(SmartLoginTests.tokenPrefixes)
    }

    func testUnknownBrandsAndLoginsAre404AndRefusedBrands422WithTheReason() throws {
        let (server, served) = try setUp()
        defer { server.stop(); stop(served) }

        XCTAssertEqual(try served.bearer("POST", "/providers/sample-0000000000/login").status, 404)
        let unknown = String(repeating: "A", count: 43)
        XCTAssertEqual(try served.bearer("/providers/logins/\(unknown)").status, 404)
        XCTAssertEqual(try served.bearer("/api/providers/logins/\(unknown)").status, 404)
        XCTAssertEqual(try served.bearer("POST", "/providers/logins/\(unknown)/yes").status, 404)

        let legacy = try served.bearer("POST", "/providers/\(try brandID(served, "sample legacy medical group"))/login")
        XCTAssertEqual(legacy.status, 422, legacy.body)
        XCTAssertTrue(legacy.body.contains("DSTU2") && legacy.body.contains("R4"), legacy.body)
        let retired = try served.bearer("POST", "/providers/\(try brandID(served, "sample retired hospital"))/login")
        XCTAssertEqual(retired.status, 422, retired.body)
        XCTAssertTrue(retired.body.contains("marked off"), retired.body)
        XCTAssertTrue(try sources().isEmpty)
    }

    func testTheLoginFormNeedsTheSessionsCSRFTokenAndOurOrigin() throws {
        let (server, served) = try setUp()
        defer { server.stop(); stop(served) }
        let brand = try brandID(served, "sample general hospital")
        let first = try served.send("/providers/\(brand)?token=\(served.token)")
        let cookie = ("Cookie", String(try XCTUnwrap(first.header("Set-Cookie")).split(separator: ";")[0]))
        let page = try served.send("/providers/\(brand)", headers: [cookie])
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.header("Referrer-Policy"), "same-origin", "so a form's POST carries our Origin, not null")
        let csrf = try XCTUnwrap(ServeTests.csrf(in: page.body))
        XCTAssertTrue(page.body.contains(#"<input type="hidden" name="csrf_token" value="\#(csrf)">"#), "the form carries it")
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        func post(_ headers: [(String, String)], _ body: String) throws -> RawHTTP.Response {
            try served.send("POST", "/providers/\(brand)/login", headers: [cookie] + form + headers, body: Data(body.utf8))
        }
        XCTAssertEqual(try post([("Origin", served.base)], "").status, 403, "no CSRF token")
        XCTAssertEqual(try post([("Origin", served.base)], "csrf_token=\(String(csrf.reversed()))").status, 403, "a wrong one")
        XCTAssertEqual(try post([("Origin", "http://rebind.example")], "csrf_token=\(csrf)").status, 403, "another origin")
        XCTAssertEqual(try post([("Origin", "null")], "csrf_token=\(csrf)").status, 403, "an opaque origin")
        XCTAssertEqual(try post([("Origin", served.base), ("Sec-Fetch-Site", "same-site")], "csrf_token=\(csrf)").status, 403,
                       "another port of 127.0.0.1")
        let started = try post([("Origin", served.base), ("Sec-Fetch-Site", "same-origin")], "csrf_token=\(csrf)")
        XCTAssertEqual(started.status, 303, started.body)
        let login = try XCTUnwrap(started.header("Location"))
        XCTAssertEqual(try served.send(login, headers: [cookie]).status, 200)
        let id = String(login.dropFirst(served.app("/providers/logins/").count))
        try signIn(served, id, at: server)
        try waitForPhase(served, id, "confirm")
        let answer = "/providers/logins/\(id)/yes"
        XCTAssertEqual(try served.send("POST", answer, headers: [cookie] + form, body: Data()).status, 403, "Yes needs the token too")
        XCTAssertEqual(try served.send("POST", answer, headers: [cookie] + form + [("Origin", "http://rebind.example")],
                                       body: Data("csrf_token=\(csrf)".utf8)).status, 403)
        XCTAssertTrue(try sources().isEmpty, "a refused Yes stored nothing")
        XCTAssertEqual(try served.send("POST", answer, headers: [cookie] + form + [("Origin", served.base)],
                                       body: Data("csrf_token=\(csrf)".utf8)).status, 303)
        XCTAssertEqual(try sources().count, 1)
    }

    func testAtMostEightLoginsAreKeptAtOnceAndAFinishedOneMakesRoom() throws {
        let (server, served) = try setUp()
        defer { server.stop(); stop(served) }
        let brand = try brandID(served, "sample general hospital")
        var started: [String] = []
        for _ in 0..<8 { started.append(try startLogin(served, brand: brand)) }
        let ninth = try served.bearer("POST", "/providers/\(brand)/login")
        XCTAssertEqual(ninth.status, 429, ninth.body)
        XCTAssertTrue(ninth.body.contains("8 logins are already waiting"), ninth.body)

        try signIn(served, started[0], at: server)
        try waitForPhase(served, started[0], "confirm")
        XCTAssertEqual(try served.bearer("POST", "/providers/logins/\(started[0])/no").status, 303)
        let next = try startLogin(served, brand: brand)
        XCTAssertNil(try phase(served, started[0]), "the finished login made room")
        XCTAssertNotNil(try phase(served, next))
        XCTAssertNotNil(try phase(served, started[1]), "the logins under way are kept")
    }

    /// A login lives five minutes at most (`HREADER_SERVE_LOGIN_SECONDS` shortens it here): then its
    /// page is gone, its listener no longer answers the portal's redirect, and nothing is stored.
    func testALoginAndItsListenerEndWhenItsTimeIsUp() throws {
        let (server, served) = try setUp(serveEnv: ["HREADER_SERVE_LOGIN_SECONDS": "2"])
        defer { server.stop(); stop(served) }
        let login = try startLogin(served, brand: try brandID(served, "sample general hospital"))
        try waitForPhase(served, login, "waiting")
        let page = try served.bearer("/providers/logins/\(login)").body
        let link = try XCTUnwrap(page.range(of: #"class="button sign-in-link" href=""#).map { page[$0.upperBound...].prefix { $0 != "\"" } })
        let url = try XCTUnwrap(URLComponents(string: link.replacingOccurrences(of: "&amp;", with: "&")))
        usleep(3_000_000)
        XCTAssertEqual(try served.bearer("/providers/logins/\(login)").status, 404)
        XCTAssertEqual(try served.bearer("/api/providers/logins/\(login)").status, 404)
        XCTAssertEqual(try served.bearer("POST", "/providers/logins/\(login)/yes").status, 404)
        let authorized = try RawHTTP.send(port: server.port, path: url.percentEncodedPath + "?" + url.percentEncodedQuery!,
                                          host: "127.0.0.1:\(server.port)")
        XCTAssertEqual(authorized.status, 302, authorized.body)
        let location = try XCTUnwrap(authorized.header("Location").flatMap { URLComponents(string: $0) })
        XCTAssertThrowsError(try RawHTTP.send(port: location.port!, path: location.percentEncodedPath + "?" + (location.percentEncodedQuery ?? ""),
                                              host: "127.0.0.1:\(location.port!)"), "nobody listens for the redirect any more")
        XCTAssertTrue(try sources().isEmpty)
    }
}
