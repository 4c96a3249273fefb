import Foundation
import HReaderJSON

/// How a source proves who is asking. Secrets live in the vault's `sources` row (encrypted) and in
/// memory; never in argv, logs or messages.
public enum AuthMethod: Sendable, Equatable {
    case none
    case bearer(token: String)
    case basic(user: String, password: String)
    case oauth2(OAuth2Tokens)

    public var kindName: String {
        switch self {
        case .none: "none"
        case .bearer: "bearer"
        case .basic: "basic"
        case .oauth2: "oauth2"
        }
    }
}

/// OAuth2 tokens of one source: the access token (short-lived) and the refresh token that renews it.
public struct OAuth2Tokens: Sendable, Equatable {
    public var tokenURL: String
    public var clientID: String?
    public var clientSecret: String?
    public var accessToken: String?
    /// Seconds since 1970 when the access token stops working, if the server said.
    public var expiresAt: Double?
    /// Empty when the server gave none (no `offline_access`): the access token then works until it
    /// expires, and the user logs in again.
    public var refreshToken: String
    public var scope: String?
    /// SMART App Launch: the patient the user chose at login (the token response's `patient`).
    public var patient: String?
    /// Obtained by `sources login --smart` (a new login is a browser login, not a new refresh token file).
    public var smart: Bool?

    public init(tokenURL: String, clientID: String? = nil, clientSecret: String? = nil, accessToken: String? = nil,
                expiresAt: Double? = nil, refreshToken: String, scope: String? = nil, patient: String? = nil, smart: Bool? = nil) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.scope = scope
        self.patient = patient
        self.smart = smart
    }

    /// As the vault keeps them (inside its encrypted `sources.credentials`): snake_case names, absent
    /// values left out, the shape `JSONEncoder` wrote before (vaults keep what it wrote).
    public var json: JSONValue {
        var object = JSONObject()
        object.members.append((key: "token_url", value: .string(tokenURL)))
        if let clientID { object.members.append((key: "client_id", value: .string(clientID))) }
        if let clientSecret { object.members.append((key: "client_secret", value: .string(clientSecret))) }
        if let accessToken { object.members.append((key: "access_token", value: .string(accessToken))) }
        if let expiresAt { object.members.append((key: "expires_at", value: .double(expiresAt))) }
        object.members.append((key: "refresh_token", value: .string(refreshToken)))
        if let scope { object.members.append((key: "scope", value: .string(scope))) }
        if let patient { object.members.append((key: "patient", value: .string(patient))) }
        if let smart { object.members.append((key: "smart", value: .bool(smart))) }
        return .object(object)
    }

    /// Nil when a required member is missing or a member has the wrong kind.
    public init?(json: JSONValue) {
        guard let object = json.object, let tokenURL = object["token_url"]?.string,
              let refreshToken = object["refresh_token"]?.string else { return nil }
        func optional<T>(_ key: String, _ read: (JSONValue) -> T?) -> T?? {
            guard let value = object[key], !value.isNull else { return .some(nil) }
            return read(value).map { .some($0) } ?? nil
        }
        guard let clientID = optional("client_id", \.string), let clientSecret = optional("client_secret", \.string),
              let accessToken = optional("access_token", \.string), let expiresAt = optional("expires_at", \.number),
              let scope = optional("scope", \.string), let patient = optional("patient", \.string),
              let smart = optional("smart", \.bool) else { return nil }
        self.init(tokenURL: tokenURL, clientID: clientID, clientSecret: clientSecret, accessToken: accessToken, expiresAt: expiresAt,
                  refreshToken: refreshToken, scope: scope, patient: patient, smart: smart)
    }
}

/// Adds a source's credential to its requests and renews OAuth2 access tokens: before a request when
/// under 60 s are left, and once after a 401. Renewed tokens (refresh tokens rotate) are handed to
/// `onChange` at once, so the caller stores them before anything else can fail.
public final class Authenticator: @unchecked Sendable {
    /// Where a token goes: an Authorization header, or `?access_token=` as RHEx servers took it.
    public enum Placement: Sendable { case header, query }

    public static let refreshMargin: Double = 60

    private let lock = NSLock()
    private var method: AuthMethod
    public let placement: Placement
    private let onChange: @Sendable (AuthMethod) -> Void
    private let now: @Sendable () -> Double
    /// The command that gets new tokens when the refresh token is refused, for the message.
    private let loginCommand: String

    public init(_ method: AuthMethod, placement: Placement = .header,
                now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
                loginCommand: String = "hreader sources login",
                onChange: @escaping @Sendable (AuthMethod) -> Void = { _ in }) {
        self.method = method
        self.placement = placement
        self.now = now
        self.loginCommand = loginCommand
        self.onChange = onChange
    }

    public var current: AuthMethod { lock.withLock { method } }

    var canRefresh: Bool {
        if case .oauth2 = current { return true }
        return false
    }

    func apply(to request: inout HTTPRequest, using transport: HTTPTransport) throws {
        let token: String
        if case .none = current { return }
        try Self.checkTransport(request.url, allowInsecure: transport.configuration.allowInsecureHTTP)
        switch current {
        case .none:
            return
        case let .basic(user, password):
            request.setHeader("Authorization", "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
            return
        case let .bearer(value):
            token = value
        case let .oauth2(tokens):
            let remaining = tokens.expiresAt.map { $0 - now() } ?? .infinity
            if let access = tokens.accessToken, remaining > Self.refreshMargin {
                token = access
            } else {
                token = try refresh(using: transport)
            }
        }
        switch placement {
        case .header:
            request.setHeader("Authorization", "Bearer \(token)")
        case .query:
            guard var parts = URLComponents(url: request.url, resolvingAgainstBaseURL: false) else { return }
            var items = (parts.queryItems ?? []).filter { $0.name != "access_token" }
            items.append(URLQueryItem(name: "access_token", value: token))
            parts.percentEncodedQuery = items.map { item in
                "\(Self.formEncode(item.name))=\(Self.formEncode(item.value ?? ""))"
            }.joined(separator: "&")
            if let url = parts.url { request.url = url }
        }
    }

    /// Credentials go over https, or plain http only to this machine (127.0.0.0/8, ::1, localhost),
    /// unless the user said `--insecure-http`.
    static func checkTransport(_ url: URL, allowInsecure: Bool) throws {
        guard url.scheme?.lowercased() == "http", !allowInsecure else { return }
        let host = (url.host ?? "").lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        let isLoopbackV4 = parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
        guard isLoopbackV4 || host == "::1" || host == "localhost" else {
            throw NetError.authentication("refusing to send credentials in the clear to \(url.redactedForDisplay): use https, "
                                          + "or --insecure-http if you accept that anyone on the network can read them")
        }
    }

    /// Exchanges the refresh token for a new access token (RFC 6749 §6). Returns the access token.
    @discardableResult
    func refresh(using transport: HTTPTransport) throws -> String {
        guard case let .oauth2(tokens) = current else { throw NetError.authentication("this source has no refresh token") }
        guard let url = URL(string: tokens.tokenURL), Origin(url) != nil else {
            throw NetError.authentication("the source's token URL is not an http(s) URL; run 'hreader sources login' again")
        }
        try Self.checkTransport(url, allowInsecure: transport.configuration.allowInsecureHTTP)
        guard !tokens.refreshToken.isEmpty else {
            throw NetError.loginRequired("the access token has expired and the server gave no refresh token; log in again: \(loginCommand)")
        }
        var form = [("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken)]
        var request = HTTPRequest(method: "POST", url: url, headers: [
            "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
        ])
        if let id = tokens.clientID {
            if let secret = tokens.clientSecret {
                request.setHeader("Authorization", "Basic " + Data("\(Self.formEncode(id)):\(Self.formEncode(secret))".utf8).base64EncodedString())
            } else {
                form.append(("client_id", id))
            }
        }
        request.body = Data(form.map { "\($0.0)=\(Self.formEncode($0.1))" }.joined(separator: "&").utf8)
        let response = try transport.perform(request)
        let object = (try? JSONParser.parse(response.body))?.object
        guard response.isSuccess else {
            let code = object?["error"]?.string
            let why = [code, object?["error_description"]?.string].compactMap { $0 }.joined(separator: ": ")
            // 400 (invalid_grant: spent, revoked or expired), 401, 403: these tokens are done for.
            // Anything else is the server failing, and trying later may work.
            guard [400, 401, 403].contains(response.status) else {
                throw NetError.status(code: response.status, url: url.redactedForDisplay, detail: why.isEmpty ? nil : why)
            }
            throw NetError.loginRequired("the token endpoint \(url.redactedForDisplay) refused to renew the access token"
                + (why.isEmpty ? " (\(response.status))" : " (\(why))") + "; log in again: \(loginCommand)")
        }
        guard let object, let access = object["access_token"]?.string, !access.isEmpty else {
            throw NetError.authentication("the token endpoint \(url.redactedForDisplay) answered without an access_token")
        }
        var renewed = tokens
        renewed.accessToken = access
        renewed.expiresAt = object["expires_in"]?.number.map { now() + $0 }
        if let rotated = object["refresh_token"]?.string, !rotated.isEmpty { renewed.refreshToken = rotated }
        if let scope = object["scope"]?.string { renewed.scope = scope }
        lock.withLock { method = .oauth2(renewed) }
        onChange(.oauth2(renewed))
        return access
    }

    /// application/x-www-form-urlencoded: everything but unreserved characters escaped.
    static func formEncode(_ text: String) -> String {
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
