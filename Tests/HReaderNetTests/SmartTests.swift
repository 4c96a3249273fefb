import Foundation
import HReaderJSON
@testable import HReaderNet
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// SMART App Launch's pieces against the sample server's authorization server (`--smart`), with
/// the test playing the browser: it GETs the authorization URL itself and reads the 302's
/// `Location` without following it.
final class SmartTests: XCTestCase {
    var workDir: URL!

    override func setUpWithError() throws {
        workDir = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-smart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDir)
    }

    /// Nobody listens here: these tests read the redirect's query from the 302 itself.
    static let redirectURI = "http://127.0.0.1:9/callback"

    private func login(_ server: SampleServer, base: String? = nil, clientID: String = "hreader", redirectURI: String = SmartTests.redirectURI,
                       state: String = "state-1", verifier: String? = nil, clients: APIClients) async throws -> SmartAuthorization {
        let fhirBase = URL(string: base ?? server.fhir)!
        let configuration = try await SmartConfiguration.discover(fhirBase: fhirBase, clients: clients)
        return try SmartAuthorization(configuration: configuration, fhirBase: fhirBase, clientID: clientID, redirectURI: redirectURI,
                                      scopes: configuration.defaultScopes, state: state, pkce: try verifier.map(PKCE.init(verifier:)) ?? PKCE())
    }

    /// What a browser does with the authorization URL: GET it, and take the redirect's query.
    private func browse(_ login: SmartAuthorization, _ server: SampleServer, extra: String = "") throws -> [(name: String, value: String)] {
        let parts = URLComponents(url: login.url, resolvingAgainstBaseURL: false)!
        let response = try RawHTTP.send(port: server.port, path: parts.percentEncodedPath + "?" + parts.percentEncodedQuery! + extra,
                                        host: "127.0.0.1:\(server.port)")
        XCTAssertEqual(response.status, 302, response.body)
        let location = try XCTUnwrap(response.header("Location"))
        XCTAssertTrue(location.hasPrefix(login.redirectURI + "?"), location)
        return LoopbackListener.parseQuery(String(location.split(separator: "?", maxSplits: 1)[1]))
    }

    private func code(_ server: SampleServer, _ login: SmartAuthorization) throws -> String {
        try login.code(fromRedirect: try browse(login, server))
    }

    // MARK: - PKCE and discovery

    /// Tokens stored by earlier versions (Foundation's JSONEncoder, absent values left out) read the same,
    /// and what is written now reads back equal; a member of the wrong kind is no token.
    func testStoredTokensReadAsJSONEncoderWroteThemAndRoundTrip() throws {
        let old = #"{"token_url":"https:\/\/auth.example.org\/token","client_id":"hreader","access_token":"a1","expires_at":1795000000.5,"refresh_token":"r1","scope":"patient\/*.read offline_access","smart":true}"#
        let tokens = try XCTUnwrap(OAuth2Tokens(json: try JSONParser.parse(old)))
        XCTAssertEqual(tokens, OAuth2Tokens(tokenURL: "https://auth.example.org/token", clientID: "hreader", accessToken: "a1",
                                            expiresAt: 1_795_000_000.5, refreshToken: "r1", scope: "patient/*.read offline_access", smart: true))
        XCTAssertEqual(OAuth2Tokens(json: try JSONParser.parse(tokens.json.serialized())), tokens)
        XCTAssertNil(OAuth2Tokens(json: try JSONParser.parse(#"{"token_url":"u","refresh_token":"r","expires_at":"soon"}"#)))
        XCTAssertNil(OAuth2Tokens(json: try JSONParser.parse(#"{"token_url":"u"}"#)))
    }

    func testPKCEChallengeMatchesTheRFC7636Example() throws {
        XCTAssertEqual(PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk").challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let fresh = try PKCE(), other = try PKCE()
        XCTAssertEqual(fresh.verifier.count, 43, "32 random bytes, base64url")
        XCTAssertNotEqual(fresh.verifier, other.verifier)
        XCTAssertTrue(fresh.verifier.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, fresh.verifier)
        XCTAssertNotEqual(try PKCE.randomState(), try PKCE.randomState())
    }

    func testDiscoveryReadsTheWellKnownDocument() async throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let smart = try await SmartConfiguration.discover(fhirBase: URL(string: server.fhir)!, clients: APIClients())
        XCTAssertEqual(smart.source, .wellKnown)
        XCTAssertEqual(smart.authorizationEndpoint.absoluteString, server.base.absoluteString + "/oauth/authorize")
        XCTAssertEqual(smart.tokenEndpoint.absoluteString, server.base.absoluteString + "/oauth/token")
        XCTAssertEqual(smart.codeChallengeMethods, ["S256"])
        XCTAssertNoThrow(try smart.requireS256())
        XCTAssertEqual(smart.defaultScopes, ["launch/patient", "openid", "fhirUser", "offline_access", "patient/*.rs"])
    }

    func testDiscoveryFallsBackToTheCapabilityStatementsOAuthURIs() async throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let smart = try await SmartConfiguration.discover(fhirBase: URL(string: server.base.absoluteString + "/secure/fhir")!, clients: APIClients())
        XCTAssertEqual(smart.source, .capabilityStatement)
        XCTAssertEqual(smart.authorizationEndpoint.absoluteString, server.base.absoluteString + "/oauth/authorize")
        XCTAssertEqual(smart.tokenEndpoint.absoluteString, server.base.absoluteString + "/oauth/token")
        XCTAssertNil(smart.codeChallengeMethods)
        XCTAssertNoThrow(try smart.requireS256(), "undeclared methods are tried with S256")
        XCTAssertTrue(smart.defaultScopes.contains("patient/*.read"), "a server without the well-known document predates SMART v2")
    }

    /// SMART v1 servers get `patient/*.read`, v2 ones (and those that do not say) `patient/*.rs`.
    func testDefaultScopesFollowWhatTheServerDeclares() {
        let endpoint = URL(string: "https://auth.example.org/x")!
        func scope(_ capabilities: [String], _ supported: [String]?, _ source: SmartConfiguration.Source = .wellKnown) -> String? {
            SmartConfiguration(authorizationEndpoint: endpoint, tokenEndpoint: endpoint, capabilities: capabilities,
                               scopesSupported: supported, source: source).defaultScopes.last
        }
        XCTAssertEqual(scope([], nil), "patient/*.rs")
        XCTAssertEqual(scope(["permission-v2"], nil), "patient/*.rs")
        XCTAssertEqual(scope(["permission-v1"], nil), "patient/*.read")
        XCTAssertEqual(scope(["permission-v1", "permission-v2"], nil), "patient/*.rs")
        XCTAssertEqual(scope([], ["openid", "patient/*.read"]), "patient/*.read")
        XCTAssertEqual(scope(["permission-v1"], ["patient/Observation.rs"]), "patient/*.rs", "declared scopes win over capabilities")
        XCTAssertEqual(scope([], nil, .capabilityStatement), "patient/*.read")
    }

    func testAServerWithoutSmartIsNamedAsSuch() async throws {
        let server = try SampleServer(workDir: workDir)
        do {
            _ = try await SmartConfiguration.discover(fhirBase: URL(string: server.fhir)!, clients: APIClients())
            XCTFail("a server without SMART must not be logged in to")
        } catch let SmartError.notSmart(why) {
            XCTAssertTrue(why.contains("oauth-uris"), why)
        }
    }

    func testAServerThatOffersNoS256IsRefused() async throws {
        let server = try SampleServer(["--smart", "--smart-challenge-methods", "plain"], workDir: workDir)
        let smart = try await SmartConfiguration.discover(fhirBase: URL(string: server.fhir)!, clients: APIClients())
        XCTAssertThrowsError(try smart.requireS256()) { error in
            XCTAssertEqual(error as? SmartError, .noS256(declared: ["plain"]))
            XCTAssertTrue("\(error)".contains("not S256"), "\(error)")
        }
    }

    // MARK: - The authorization request and its redirect

    func testAuthorizationURLHoldsOnlyPublicValues() async throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let login = try await login(server, verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", clients: APIClients())
        let items = URLComponents(url: login.url, resolvingAgainstBaseURL: false)!.queryItems!
        XCTAssertEqual(Set(items.map(\.name)), ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge",
                                                 "code_challenge_method", "aud"])
        func value(_ name: String) -> String? { items.first { $0.name == name }?.value }
        XCTAssertEqual(value("code_challenge"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        XCTAssertEqual(value("code_challenge_method"), "S256")
        XCTAssertEqual(value("aud"), server.fhir)
        XCTAssertEqual(value("redirect_uri"), Self.redirectURI)
        XCTAssertEqual(value("scope"), "launch/patient openid fhirUser offline_access patient/*.rs")
        XCTAssertFalse(login.url.absoluteString.contains("dBjftJeZ4CVP"), "the verifier never goes into the URL")
    }

    func testRedirectWithAnotherStateOrAnErrorIsRefused() async throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let login = try await login(server, clients: APIClients())
        var query = try browse(login, server)
        XCTAssertNotNil(query.first { $0.name == "code" })
        query = query.map { $0.name == "state" ? ($0.name, "forged") : $0 }
        XCTAssertThrowsError(try login.code(fromRedirect: query)) { XCTAssertEqual($0 as? SmartError, .stateMismatch) }
        XCTAssertThrowsError(try login.code(fromRedirect: query.filter { $0.name != "state" })) { XCTAssertEqual($0 as? SmartError, .stateMismatch) }

        let denied = try browse(login, server, extra: "&sample_decision=deny")
        XCTAssertThrowsError(try login.code(fromRedirect: denied)) { error in
            XCTAssertEqual(error as? SmartError, .authorizationRefused(error: "access_denied", description: "The user denied access"))
            XCTAssertTrue("\(error)".contains("access was denied"), "\(error)")
        }
    }

    // MARK: - The token endpoint

    func testCodeExchangeGivesTokensForTheChosenPatient() async throws {
        let server = try SampleServer(["--smart", "--smart-patient", "p2"], workDir: workDir)
        let clients = APIClients()
        let login = try await login(server, clients: clients)
        let tokens = try await login.exchange(code: try code(server, login), clients: clients)
        XCTAssertEqual(tokens.patient, "p2")
        XCTAssertEqual(tokens.smart, true)
        XCTAssertEqual(tokens.clientID, "hreader")
        XCTAssertNil(tokens.clientSecret, "a public client")
        XCTAssertEqual(tokens.tokenURL, server.base.absoluteString + "/oauth/token")
        XCTAssertTrue(tokens.accessToken?.hasPrefix("sample-access-") ?? false)
        XCTAssertTrue(tokens.refreshToken.hasPrefix("sample-refresh-"))
        XCTAssertGreaterThan(tokens.expiresAt ?? 0, Date().timeIntervalSince1970 + 3000)
        XCTAssertTrue(tokens.scope?.contains("patient/*.rs") ?? false)

        // The FHIR base wants the token, and takes it.
        let anonymous = try FHIRClient(base: URL(string: server.fhir)!, clients: clients)
        do {
            _ = try await anonymous.readPatient(id: "p2")
            XCTFail("the SMART-protected base must refuse a request without a token")
        } catch NetError.unauthorized {}
        let fhir = try FHIRClient(base: URL(string: server.fhir)!, auth: Authenticator(.oauth2(tokens)), clients: clients)
        let read = try await fhir.readPatient(id: "p2")
        XCTAssertEqual(read.records.first?.patient.remoteID, "p2")
    }

    func testACodeWorksOnceAndItsReuseRevokesTheTokens() async throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let clients = APIClients()
        let login = try await login(server, clients: clients)
        let code = try code(server, login)
        let tokens = try await login.exchange(code: code, clients: clients)
        do {
            _ = try await login.exchange(code: code, clients: clients)
            XCTFail("a code must not be redeemed twice")
        } catch let SmartError.tokenRefused(error, description, _) {
            XCTAssertEqual(error, "invalid_grant")
            XCTAssertTrue(description?.contains("already used") ?? false, description ?? "")
        }
        let fhir = try FHIRClient(base: URL(string: server.fhir)!, auth: Authenticator(.bearer(token: tokens.accessToken!)), clients: clients)
        do {
            _ = try await fhir.readPatient(id: "p1")
            XCTFail("the tokens of a code presented twice are revoked")
        } catch NetError.unauthorized {}
    }

    func testTheTokenEndpointRefusesAWrongVerifierRedirectURIOrClient() async throws {
        let server = try SampleServer(["--smart", "--smart-client-id", "my-app"], workDir: workDir)
        let clients = APIClients()
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let cases: [(what: String, redeemer: (SmartConfiguration) throws -> SmartAuthorization, says: String)] = [
            ("another verifier", {
                try SmartAuthorization(configuration: $0, fhirBase: URL(string: server.fhir)!, clientID: "my-app", redirectURI: Self.redirectURI,
                                       scopes: [], state: "state-1", pkce: PKCE(verifier: String(repeating: "x", count: 43)))
            }, "PKCE"),
            ("another redirect URI", {
                try SmartAuthorization(configuration: $0, fhirBase: URL(string: server.fhir)!, clientID: "my-app",
                                       redirectURI: "http://127.0.0.1:10/callback", scopes: [], state: "state-1", pkce: PKCE(verifier: verifier))
            }, "redirect_uri"),
            ("another client", {
                try SmartAuthorization(configuration: $0, fhirBase: URL(string: server.fhir)!, clientID: "someone-else", redirectURI: Self.redirectURI,
                                       scopes: [], state: "state-1", pkce: PKCE(verifier: verifier))
            }, "another client"),
        ]
        for c in cases {
            let login = try await login(server, clientID: "my-app", verifier: verifier, clients: clients)
            let code = try code(server, login)
            do {
                _ = try await c.redeemer(login.configuration).exchange(code: code, clients: clients)
                XCTFail("\(c.what): the token endpoint must refuse")
            } catch let SmartError.tokenRefused(error, description, status) {
                XCTAssertEqual(error, "invalid_grant", c.what)
                XCTAssertEqual(status, 400, c.what)
                XCTAssertTrue(description?.contains(c.says) ?? false, "\(c.what): \(description ?? "")")
            }
            // A refused attempt spends the code: the right redeemer cannot use it afterwards either.
            do {
                _ = try await login.exchange(code: code, clients: clients)
                XCTFail("\(c.what): the code must be spent")
            } catch SmartError.tokenRefused {}
        }
        // An unknown client is refused before any code is issued: the page says so, there is no redirect.
        let stranger = try await login(server, clientID: "stranger", clients: clients)
        let parts = URLComponents(url: stranger.url, resolvingAgainstBaseURL: false)!
        let page = try RawHTTP.send(port: server.port, path: parts.percentEncodedPath + "?" + parts.percentEncodedQuery!, host: "127.0.0.1:\(server.port)")
        XCTAssertEqual(page.status, 400)
        XCTAssertNil(page.header("Location"))
    }

    func testAnExpiredCodeIsRefused() async throws {
        let server = try SampleServer(["--smart", "--code-lifetime", "0"], workDir: workDir)
        let clients = APIClients()
        let login = try await login(server, clients: clients)
        do {
            _ = try await login.exchange(code: try code(server, login), clients: clients)
            XCTFail("an expired code must be refused")
        } catch let SmartError.tokenRefused(_, description, _) {
            XCTAssertTrue(description?.contains("expired") ?? false, description ?? "")
        }
    }

    // MARK: - Refresh

    /// A refused refresh token means a new login, and the message names the command.
    func testARefusedRefreshAsksToLogInAgain() async throws {
        let server = try SampleServer(["--smart"], workDir: workDir)
        let tokens = OAuth2Tokens(tokenURL: server.base.absoluteString + "/oauth/token", clientID: "hreader", accessToken: "sample-access-unknown",
                                  expiresAt: Date().timeIntervalSince1970 + 3600, refreshToken: "sample-refresh-spent", smart: true)
        let auth = Authenticator(.oauth2(tokens), loginCommand: "hreader sources login --server \(server.fhir) --smart")
        let fhir = try FHIRClient(base: URL(string: server.fhir)!, auth: auth, clients: APIClients())
        do {
            _ = try await fhir.readPatient(id: "p1")
            XCTFail("a spent refresh token must not work")
        } catch let NetError.loginRequired(message) {
            XCTAssertTrue(message.contains("log in again: hreader sources login --server \(server.fhir) --smart"), message)
            XCTAssertTrue(message.contains("invalid_grant"), message)
            XCTAssertFalse(message.contains("sample-refresh-spent"), message)
        }
        // Without a refresh token at all (no offline_access), an expired access token also means a new login.
        let unrenewable = Authenticator(.oauth2(OAuth2Tokens(tokenURL: tokens.tokenURL, accessToken: "a", expiresAt: 0, refreshToken: "")))
        do {
            _ = try await FHIRClient(base: fhir.base, auth: unrenewable, clients: APIClients()).readPatient(id: "p1")
            XCTFail("an expired access token without a refresh token must not be used")
        } catch let NetError.loginRequired(message) {
            XCTAssertTrue(message.contains("no refresh token"), message)
        }
    }

    // MARK: - The loopback listener

    func testTheListenerAnswersOnlyGETCallbackAndOnlyOnce() throws {
        let listener = try LoopbackListener(port: 0)
        XCTAssertEqual(listener.redirectURI, "http://127.0.0.1:\(listener.port)/callback")
        let (box, done) = awaitingCallback(listener, timeout: 30)
        let favicon = try RawHTTP.send(port: listener.port, path: "/favicon.ico", host: "127.0.0.1")
        XCTAssertEqual(favicon.status, 404)
        let posted = try RawHTTP.send(port: listener.port, method: "POST", path: "/callback?code=x&state=y", host: "127.0.0.1", body: Data())
        XCTAssertEqual(posted.status, 405)
        let page = try RawHTTP.send(port: listener.port, path: "/callback?code=c%2B1&state=s+1&error_description=a%20b", host: "127.0.0.1")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("You can close this tab."), page.body)
        XCTAssertEqual(page.header("Cache-Control"), "no-store")
        wait(for: [done], timeout: 10)
        let query = try XCTUnwrap(box.get())
        XCTAssertEqual(query.map(\.name), ["code", "state", "error_description"])
        XCTAssertEqual(query.map(\.value), ["c+1", "s 1", "a b"])
        XCTAssertThrowsError(try RawHTTP.send(port: listener.port, path: "/callback?code=again", host: "127.0.0.1"), "once: the listener is gone")
    }

    /// A local process trickling its request a byte a second (each read well within any per-read timeout)
    /// does not hold the listener: the browser's redirect, on a second connection meanwhile, ends the
    /// login (security review 3, L-7).
    func testATricklingConnectionDoesNotStallTheLogin() throws {
        let listener = try LoopbackListener(port: 0)
        let (box, done) = awaitingCallback(listener, timeout: 120)
        let trickler = try RawHTTP.TricklingClient(port: listener.port, every: 1)
        defer { trickler.stop() }
        let page = try RawHTTP.send(port: listener.port, path: "/callback?code=c1&state=s1", host: "127.0.0.1")
        XCTAssertEqual(page.status, 200)
        wait(for: [done], timeout: 60)
        XCTAssertEqual(try XCTUnwrap(box.get()).map(\.value), ["c1", "s1"])
    }

    /// A client that writes its head in pieces (the demo's shell `printf` does): the listener
    /// answered after the request line and closed, so the rest of the head met a reset connection.
    func testARequestHeadWrittenInPiecesGetsItsPage() throws {
        let listener = try LoopbackListener(port: 0)
        let (box, done) = awaitingCallback(listener, timeout: 30)
        // Three writes: the second reaches a closed socket (the kernel resets the connection), the
        // third fails with EPIPE (a SIGPIPE that killed the demo's shell).
        let page = try RawHTTP.send(port: listener.port, pieces: ["GET /callback?code=c1&state=s1 HTTP/1.1\r\n", "Host: 127.0.0.1\r\n",
                                                                  "Connection: close\r\n\r\n"], pause: 0.3)
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("You can close this tab."), page.body)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(try XCTUnwrap(box.get()).map(\.value), ["c1", "s1"])
    }

    /// The listener waiting for its callback on a thread, answering "Authorized"; the query it
    /// returns lands in the box once `done` is fulfilled.
    private func awaitingCallback(_ listener: LoopbackListener, timeout: Double) -> (QueryBox, XCTestExpectation) {
        let box = QueryBox()
        let done = expectation(description: "callback")
        Thread {
            box.set(try? listener.awaitCallback(timeout: timeout) { _ in .done(title: "Authorized", message: "You can close this tab.") })
            done.fulfill()
        }.start()
        return (box, done)
    }

    func testTheListenerGivesUpAfterItsTimeout() throws {
        let listener = try LoopbackListener(port: 0)
        let started = Date()
        XCTAssertThrowsError(try listener.awaitCallback(timeout: 0.3) { _ in .done(title: "", message: "") }) { error in
            XCTAssertEqual(error as? SmartError, .timedOut(seconds: 0.3))
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
    }

    func testAPortInUseIsAClearError() throws {
        let first = try LoopbackListener(port: 0)
        XCTAssertThrowsError(try LoopbackListener(port: first.port)) { error in
            XCTAssertTrue("\(error)".contains("--redirect-port"), "\(error)")
        }
    }
}

private final class QueryBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: [(name: String, value: String)]?
    func set(_ v: [(name: String, value: String)]?) { lock.withLock { value = v } }
    func get() -> [(name: String, value: String)]? { lock.withLock { value } }
}
