import Foundation
import HReaderJSON
import NIOHTTP1

/// `--smart`: a SMART App Launch authorization server for tests and demos. A test drives it over
/// HTTP exactly as a browser would: `GET /oauth/authorize?…` "logs in" as the configured test
/// user, approves at once (or denies, with `sample_decision=deny` in the query) and answers with
/// a 302 to the app's redirect URI carrying a code and the state. The token endpoint redeems a code
/// once, for the same client and redirect URI, within its lifetime, and only with the PKCE
/// verifier whose S256 challenge came with the authorization request.
final class SmartAuthorizationServer: Sendable {
    struct Settings: Sendable {
        /// The one registered (public) client.
        var clientID = "hreader"
        /// The patient the test user picks at login.
        var patient = "p1"
        /// `code_challenge_methods_supported`; the authorize endpoint accepts only these.
        var challengeMethods = ["S256"]
        /// Seconds a code can be redeemed after it was issued (0: never).
        var codeLifetime = 60
    }

    /// What a redeemed code grants.
    struct Grant: Sendable {
        var scope: String
        var patient: String?
    }

    private struct PendingCode {
        let clientID: String
        let redirectURI: String
        let challenge: String
        let grant: Grant
        let expires: Date
        var used = false
        /// Tokens issued for it, revoked if the code is presented again (RFC 6749 §4.1.2).
        var issued: [String] = []
    }

    let settings: Settings
    private let codes = LockedBox([String: PendingCode]())

    init(settings: Settings) { self.settings = settings }

    /// `[fhir base]/.well-known/smart-configuration`.
    func configuration(origin: String) -> HTTPResponse {
        let body: JSONValue = [
            "authorization_endpoint": .string(origin + "/oauth/authorize"),
            "token_endpoint": .string(origin + "/oauth/token"),
            "revocation_endpoint": .string(origin + "/oauth/revoke"),
            "token_endpoint_auth_methods_supported": ["none"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": .array(settings.challengeMethods.map { .string($0) }),
            "capabilities": [
                "launch-standalone", "client-public", "context-standalone-patient", "permission-offline", "permission-patient",
                "permission-v1", "permission-v2",
            ],
            "scopes_supported": ["openid", "fhirUser", "launch/patient", "offline_access", "patient/*.rs", "patient/*.read"],
        ]
        return HTTPResponse(status: .ok, contentType: "application/json", body: body.serializedBytes())
    }

    // MARK: - GET /oauth/authorize

    /// `audiences`: the FHIR bases this server issues tokens for (`aud` must be one of them).
    func authorize(_ request: HTTPRequest, audiences: [String]) -> HTTPResponse {
        guard request.method == .GET else { return Self.page(.methodNotAllowed, "Use GET") }
        func field(_ name: String) -> String? { request.queryValue(name) }
        // Without a known client and a loopback redirect URI there is nowhere safe to send an
        // answer: say so on the page (RFC 6749 §4.1.2.1).
        guard let client = field("client_id"), client == settings.clientID else {
            return Self.page(.badRequest, "Unknown client_id")
        }
        guard let redirect = field("redirect_uri"), Self.isLoopbackRedirect(redirect) else {
            return Self.page(.badRequest, "redirect_uri must be http://127.0.0.1:PORT/… (RFC 8252 loopback)")
        }
        let state = field("state")
        func fail(_ error: String, _ description: String) -> HTTPResponse {
            var parameters = [("error", error), ("error_description", description)]
            if let state { parameters.append(("state", state)) }
            return Self.redirect(redirect, parameters)
        }
        guard field("response_type") == "code" else { return fail("unsupported_response_type", "Only response_type=code") }
        guard let state, !state.isEmpty else { return fail("invalid_request", "state is required") }
        guard let scope = field("scope"), !scope.isEmpty else { return fail("invalid_scope", "scope is required") }
        guard let aud = field("aud"), audiences.contains(aud) else { return fail("invalid_request", "aud is not a FHIR base of this server") }
        guard let method = field("code_challenge_method"), settings.challengeMethods.contains(method), method == "S256" else {
            return fail("invalid_request", "code_challenge_method must be S256")
        }
        guard let challenge = field("code_challenge"), (43...128).contains(challenge.count) else {
            return fail("invalid_request", "code_challenge is required")
        }
        if field("sample_decision") == "deny" { return fail("access_denied", "The user denied access") }

        let patient = scope.split(separator: " ").contains("launch/patient") ? settings.patient : nil
        let code = "sample-code-" + randomHex(bytes: 16)
        let pending = PendingCode(clientID: client, redirectURI: redirect, challenge: challenge, grant: Grant(scope: scope, patient: patient),
                                  expires: Date().addingTimeInterval(TimeInterval(settings.codeLifetime)))
        codes.withLock { $0[code] = pending }
        return Self.redirect(redirect, [("code", code), ("state", state)])
    }

    // MARK: - POST /oauth/token, grant_type=authorization_code

    enum Redemption {
        case granted(Grant, code: String)
        case refused(error: String, description: String, revoke: [String])
    }

    func redeem(_ form: [(name: String, value: String)]) -> Redemption {
        func field(_ name: String) -> String? { form.first(where: { $0.name == name })?.value }
        guard let code = field("code"), !code.isEmpty else { return .refused(error: "invalid_request", description: "code is missing", revoke: []) }
        // A code is spent by any attempt to redeem it, right or wrong.
        let found: PendingCode? = codes.withLock { codes in
            guard let pending = codes[code] else { return nil }
            codes[code]?.used = true
            return pending
        }
        guard let pending = found else { return .refused(error: "invalid_grant", description: "Unknown authorization code", revoke: []) }
        guard !pending.used else {
            return .refused(error: "invalid_grant", description: "The authorization code was already used", revoke: pending.issued)
        }
        guard Date() < pending.expires else { return .refused(error: "invalid_grant", description: "The authorization code has expired", revoke: []) }
        guard let client = field("client_id") else { return .refused(error: "invalid_request", description: "client_id is missing", revoke: []) }
        guard client == pending.clientID else {
            return .refused(error: "invalid_grant", description: "The code was issued to another client", revoke: [])
        }
        guard field("redirect_uri") == pending.redirectURI else {
            return .refused(error: "invalid_grant", description: "redirect_uri differs from the authorization request's", revoke: [])
        }
        guard let verifier = field("code_verifier"), (43...128).contains(verifier.count),
              SHA256.base64URL(SHA256.hash(Array(verifier.utf8))) == pending.challenge else {
            return .refused(error: "invalid_grant", description: "PKCE verification failed", revoke: [])
        }
        return .granted(pending.grant, code: code)
    }

    /// Remembers the tokens a code produced (revoked if the code comes back).
    func record(issued tokens: [String], for code: String) {
        codes.withLock { $0[code]?.issued += tokens }
    }

    // MARK: - Plumbing

    static func isLoopbackRedirect(_ text: String) -> Bool {
        guard let url = URL(string: text), url.scheme == "http", url.fragment == nil,
              let host = url.host, ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) else { return false }
        return true
    }

    private static func redirect(_ target: String, _ parameters: [(String, String)]) -> HTTPResponse {
        let query = parameters.map { "\($0.0)=\(URLText.encodeComponent($0.1))" }.joined(separator: "&")
        let location = target + (target.contains("?") ? "&" : "?") + query
        return HTTPResponse(status: .found, headers: [("Location", location), ("Cache-Control", "no-store")])
    }

    private static func page(_ status: HTTPResponseStatus, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/html; charset=utf-8",
                     text: "<!doctype html><title>Authorization error</title><p>\(XMLText.escape(message))</p>\n",
                     headers: [("Cache-Control", "no-store")])
    }
}
