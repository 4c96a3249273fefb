import Foundation
import HReaderJSON

/// One SMART App Launch standalone login as a public client (no secret): the authorization URL
/// the user opens, the check of the redirect that comes back, and the exchange of its code for
/// tokens (OAuth 2.0 authorization code with PKCE S256, RFC 6749 §4.1, RFC 7636).
///
///     let login = try SmartAuthorization(configuration: smart, fhirBase: base, clientID: "hreader",
///                                        redirectURI: listener.redirectURI, scopes: smart.defaultScopes)
///     // the browser opens login.url; the redirect's query comes back to the listener
///     let code = try login.code(fromRedirect: query)
///     let tokens = try await login.exchange(code: code)
///
/// The URL holds no credential (client id, redirect URI, scopes, state, challenge, aud), but its
/// `state` is what tells this login's redirect from a forged one: show it to the user, never put it
/// on a command line (`BrowserHandoff`). The PKCE verifier never leaves this value until it goes to
/// the token endpoint.
public struct SmartAuthorization: Sendable {
    public let configuration: SmartConfiguration
    public let fhirBase: URL
    public let clientID: String
    /// A confidential client's secret (a vendor registration that issued one): sent to the token
    /// endpoint as HTTP Basic (client_secret_basic), kept with the tokens for renewals. Nil for
    /// the public client hreader is by default.
    let clientSecret: String?
    public let redirectURI: String
    public let scopes: [String]
    public let state: String
    private let pkce: PKCE

    public init(configuration: SmartConfiguration, fhirBase: URL, clientID: String, clientSecret: String? = nil, redirectURI: String,
                scopes: [String], state: String? = nil, pkce: PKCE? = nil) throws {
        self.configuration = configuration
        self.fhirBase = fhirBase
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.state = try state ?? PKCE.randomState()
        self.pkce = try pkce ?? PKCE()
    }

    /// The authorization request (SMART App Launch "standalone launch", step 2).
    public var url: URL {
        let parameters = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", scopes.joined(separator: " ")),
            ("state", state), ("code_challenge", pkce.challenge), ("code_challenge_method", PKCE.method), ("aud", fhirBase.absoluteString),
        ]
        let query = parameters.map { "\($0.0)=\(Self.queryEncode($0.1))" }.joined(separator: "&")
        let endpoint = configuration.authorizationEndpoint.absoluteString
        return URL(string: endpoint + (endpoint.contains("?") ? "&" : "?") + query)!
    }

    /// The code from the redirect's query, once its `state` is this login's; an `error` the
    /// authorization server sent back (`access_denied`, …) is thrown as what it is.
    public func code(fromRedirect query: [(name: String, value: String)]) throws -> String {
        func value(_ name: String) -> String? { query.first { $0.name == name }?.value }
        guard let returned = value("state"), Self.constantTimeEqual(returned, state) else { throw SmartError.stateMismatch }
        if let error = value("error") {
            throw SmartError.authorizationRefused(error: Self.printable(error), description: value("error_description").map(Self.printable))
        }
        guard let code = value("code"), !code.isEmpty else { throw SmartError.noCode }
        return code
    }

    /// Redeems the code at the token endpoint (with the PKCE verifier, the same redirect URI and
    /// the client id) and returns the tokens as a source keeps them. A refusal (`invalid_grant`,
    /// …) is `SmartError.tokenRefused`; a failing server is a `NetError`.
    public func exchange(code: String, clients: APIClients = .shared, now: Double = Date().timeIntervalSince1970) async throws -> OAuth2Tokens {
        let endpoint = configuration.tokenEndpoint
        try Authenticator.checkTransport(endpoint, allowInsecure: clients.configuration.allowInsecureHTTP)
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("code_verifier", pkce.verifier)]
        var request = HTTPRequest(method: "POST", url: endpoint, headers: [
            "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
        ])
        if let clientSecret {
            let pair = "\(Authenticator.formEncode(clientID)):\(Authenticator.formEncode(clientSecret))"
            request.setHeader("Authorization", "Basic " + Data(pair.utf8).base64EncodedString())
        } else {
            form.insert(("client_id", clientID), at: 3)
        }
        request.body = Data(form.map { "\($0.0)=\(Authenticator.formEncode($0.1))" }.joined(separator: "&").utf8)
        let response = try await clients.client(for: endpoint).send(request)
        let object = (try? JSONParser.parse(response.body))?.object
        guard response.isSuccess else {
            if let error = object?["error"]?.string {
                throw SmartError.tokenRefused(error: Self.printable(error), description: object?["error_description"]?.string.map(Self.printable),
                                              status: response.status)
            }
            throw NetError.status(code: response.status, url: endpoint.redactedForDisplay, detail: nil)
        }
        guard let object else { throw SmartError.badTokenResponse("not a JSON object") }
        guard let access = object["access_token"]?.string, !access.isEmpty else {
            throw SmartError.badTokenResponse("no access_token")
        }
        guard let type = object["token_type"]?.string, type.lowercased() == "bearer" else {
            throw SmartError.badTokenResponse("token_type is not Bearer")
        }
        let lifetime = object["expires_in"]?.number
        return OAuth2Tokens(tokenURL: endpoint.absoluteString, clientID: clientID, clientSecret: clientSecret, accessToken: access,
                            expiresAt: lifetime.map { now + $0 }, refreshToken: object["refresh_token"]?.string ?? "",
                            scope: object["scope"]?.string ?? scopes.joined(separator: " "),
                            patient: object["patient"]?.string.flatMap { $0.isEmpty ? nil : $0 }, smart: true)
    }

    // MARK: - Plumbing

    /// A query value: unreserved characters as they are, everything else (space included) escaped.
    static func queryEncode(_ text: String) -> String { Authenticator.formEncode(text) }

    /// Server-chosen text for a message: no control characters, at most 200 characters.
    public static func printable(_ text: String) -> String {
        let clean = String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }.map(Character.init))
        return clean.count > 200 ? String(clean.prefix(200)) + "…" : clean
    }

    /// Compares without stopping at the first difference.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
