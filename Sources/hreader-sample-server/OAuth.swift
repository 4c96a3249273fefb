import Foundation
import HReaderJSON
import NIOHTTP1

/// OAuth2 tokens: refresh tokens rotate (each works once), access tokens expire.
/// Tokens are never logged or printed. With `smart`, the token endpoint also redeems
/// authorization codes (SMART App Launch, `SmartAuthorizationServer`).
final class OAuthServer: Sendable {
    typealias Grant = SmartAuthorizationServer.Grant

    private struct Tokens {
        var refreshTokens: [String: Grant] = [:]  // token → what it renews
        var accessTokens: [String: Date] = [:]  // token → expiry
    }

    private let tokens: LockedBox<Tokens>
    private let lifetime: Int
    let smart: SmartAuthorizationServer?

    init(initialRefreshToken: String?, lifetime: Int, smart: SmartAuthorizationServer? = nil) {
        var tokens = Tokens()
        if let initialRefreshToken { tokens.refreshTokens[initialRefreshToken] = Grant(scope: "patient/*.read", patient: nil) }
        self.tokens = LockedBox(tokens)
        self.lifetime = lifetime
        self.smart = smart
    }

    /// A new access token and refresh token for `grant`. Their prefixes let a test scan files and
    /// output for them without knowing them.
    private func issue(_ grant: Grant) -> (access: String, refresh: String) {
        let access = "sample-access-" + randomHex(bytes: 16)
        let refresh = "sample-refresh-" + randomHex(bytes: 32)
        let lifetime = self.lifetime
        tokens.withLock { tokens in
            tokens.refreshTokens[refresh] = grant
            tokens.accessTokens[access] = Date().addingTimeInterval(TimeInterval(lifetime))
        }
        return (access, refresh)
    }

    private func tokenResponse(_ issued: (access: String, refresh: String), _ grant: Grant) -> HTTPResponse {
        var body: JSONValue = [
            "access_token": .string(issued.access),
            "token_type": "Bearer",
            "expires_in": .int(lifetime),
            "refresh_token": .string(issued.refresh),
            "scope": .string(grant.scope),
        ]
        if let patient = grant.patient { body["patient"] = .string(patient) }
        return HTTPResponse(status: .ok, contentType: "application/json", body: body.serializedBytes(), headers: Self.noStore)
    }

    func isValidAccessToken(_ token: String) -> Bool {
        tokens.withLock { tokens in
            guard let expiry = tokens.accessTokens[token] else { return false }
            if expiry > Date() { return true }
            tokens.accessTokens[token] = nil
            return false
        }
    }

    /// `Authorization: Bearer …`, or (with `allowQuery`, as hReader sent it) `access_token=`.
    func isAuthorized(_ request: HTTPRequest, allowQuery: Bool) -> Bool {
        if let header = request.header("Authorization"), let token = Self.bearerToken(header) {
            return isValidAccessToken(token)
        }
        if allowQuery, let token = request.queryValue("access_token") {
            return isValidAccessToken(token)
        }
        return false
    }

    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    static func unauthorized() -> HTTPResponse {
        RHExAPI.error(
            .unauthorized, "invalid_token", "A valid access token is required",
            headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)])
    }

    // MARK: Endpoints

    /// `POST /oauth/token` with `grant_type=refresh_token`, or (with `--smart`) `authorization_code`.
    func token(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == .POST else { return Self.error(.methodNotAllowed, "invalid_request", "Use POST") }
        let form = URLText.parseQuery(String(decoding: request.body, as: UTF8.self))
        func field(_ name: String) -> String? { form.first(where: { $0.name == name })?.value }
        // client_id or HTTP Basic client authentication may come along with a refresh; this server ignores both.
        guard let grant = field("grant_type"), !grant.isEmpty else {
            return Self.error(.badRequest, "invalid_request", "grant_type is missing")
        }
        if grant == "authorization_code", let smart {
            switch smart.redeem(form) {
            case let .refused(error, description, revoke):
                tokens.withLock { tokens in
                    for token in revoke {
                        tokens.accessTokens[token] = nil
                        tokens.refreshTokens[token] = nil
                    }
                }
                return Self.error(error == "invalid_client" ? .unauthorized : .badRequest, error, description)
            case let .granted(granted, code):
                let issued = issue(granted)
                smart.record(issued: [issued.access, issued.refresh], for: code)
                return tokenResponse(issued, granted)
            }
        }
        guard grant == "refresh_token" else {
            return Self.error(.badRequest, "unsupported_grant_type",
                              smart == nil ? "Only grant_type=refresh_token is supported" : "Use authorization_code or refresh_token")
        }
        guard let presented = field("refresh_token"), !presented.isEmpty else {
            return Self.error(.badRequest, "invalid_request", "refresh_token is missing")
        }
        guard let renewed = tokens.withLock({ $0.refreshTokens.removeValue(forKey: presented) }) else {
            return Self.error(.badRequest, "invalid_grant", "The refresh token is invalid, expired or already used")
        }
        return tokenResponse(issue(renewed), renewed)
    }

    /// `POST /oauth/revoke` with `token=` (RFC 7009: 200 whether or not the token was known).
    func revoke(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == .POST else { return Self.error(.methodNotAllowed, "invalid_request", "Use POST") }
        let form = URLText.parseQuery(String(decoding: request.body, as: UTF8.self))
        if let token = form.first(where: { $0.name == "token" })?.value {
            tokens.withLock { tokens in
                tokens.accessTokens[token] = nil
                tokens.refreshTokens[token] = nil
            }
        }
        return HTTPResponse(status: .ok, contentType: "application/json", text: "{}", headers: Self.noStore)
    }

    private static let noStore = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]

    private static func error(_ status: HTTPResponseStatus, _ code: String, _ description: String) -> HTTPResponse {
        let body: JSONValue = ["error": .string(code), "error_description": .string(description)]
        return HTTPResponse(status: status, contentType: "application/json", body: body.serializedBytes(), headers: noStore)
    }
}

/// HTTP Basic for `/basic/fhir`.
struct BasicAuth: Sendable {
    let expected: String  // "user:password"

    func isAuthorized(_ request: HTTPRequest) -> Bool {
        guard let header = request.header("Authorization") else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces))
        else { return false }
        return String(decoding: data, as: UTF8.self) == expected
    }

    static func unauthorized() -> HTTPResponse {
        FHIRResponse.outcome(
            FHIRError(status: 401, code: "login", diagnostics: "HTTP Basic authentication is required"),
            headers: [("WWW-Authenticate", #"Basic realm="hreader-sample""#)])
    }
}
