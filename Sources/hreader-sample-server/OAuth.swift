import Foundation
import NIOHTTP1

/// OAuth2 tokens: refresh tokens rotate (each works once), access tokens expire.
/// Tokens are never logged or printed.
final class OAuthServer: Sendable {
    private struct Tokens {
        var refreshTokens: Set<String> = []
        var accessTokens: [String: Date] = [:]  // token → expiry
    }

    private let tokens: LockedBox<Tokens>
    private let lifetime: Int

    init(initialRefreshToken: String?, lifetime: Int) {
        var tokens = Tokens()
        if let initialRefreshToken { tokens.refreshTokens.insert(initialRefreshToken) }
        self.tokens = LockedBox(tokens)
        self.lifetime = lifetime
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

    /// `POST /oauth/token` with `grant_type=refresh_token`.
    func token(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == .POST else { return Self.error(.methodNotAllowed, "invalid_request", "Use POST") }
        let form = URLText.parseQuery(String(decoding: request.body, as: UTF8.self))
        func field(_ name: String) -> String? { form.first(where: { $0.name == name })?.value }
        // client_id or HTTP Basic client authentication may come along; this server ignores both.
        guard let grant = field("grant_type"), !grant.isEmpty else {
            return Self.error(.badRequest, "invalid_request", "grant_type is missing")
        }
        guard grant == "refresh_token" else {
            return Self.error(.badRequest, "unsupported_grant_type", "Only grant_type=refresh_token is supported")
        }
        guard let presented = field("refresh_token"), !presented.isEmpty else {
            return Self.error(.badRequest, "invalid_request", "refresh_token is missing")
        }
        let lifetime = self.lifetime
        let issued: (access: String, refresh: String)? = tokens.withLock { tokens in
            guard tokens.refreshTokens.remove(presented) != nil else { return nil }
            let access = randomHex(bytes: 16)
            let refresh = randomHex(bytes: 32)
            tokens.refreshTokens.insert(refresh)
            tokens.accessTokens[access] = Date().addingTimeInterval(TimeInterval(lifetime))
            return (access, refresh)
        }
        guard let issued else {
            return Self.error(.badRequest, "invalid_grant", "The refresh token is invalid, expired or already used")
        }
        let body: JSON = [
            "access_token": .string(issued.access),
            "token_type": "Bearer",
            "expires_in": .int(lifetime),
            "refresh_token": .string(issued.refresh),
            "scope": "patient/*.read",
        ]
        return HTTPResponse(status: .ok, contentType: "application/json", body: body.serialized(), headers: Self.noStore)
    }

    /// `POST /oauth/revoke` with `token=` (RFC 7009: 200 whether or not the token was known).
    func revoke(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == .POST else { return Self.error(.methodNotAllowed, "invalid_request", "Use POST") }
        let form = URLText.parseQuery(String(decoding: request.body, as: UTF8.self))
        if let token = form.first(where: { $0.name == "token" })?.value {
            tokens.withLock { tokens in
                tokens.accessTokens[token] = nil
                tokens.refreshTokens.remove(token)
            }
        }
        return HTTPResponse(status: .ok, contentType: "application/json", text: "{}", headers: Self.noStore)
    }

    private static let noStore = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]

    private static func error(_ status: HTTPResponseStatus, _ code: String, _ description: String) -> HTTPResponse {
        let body: JSON = ["error": .string(code), "error_description": .string(description)]
        return HTTPResponse(status: status, contentType: "application/json", body: body.serialized(), headers: noStore)
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
