import Foundation
import HReaderJSON
import HReaderRecords

/// Where a FHIR server sends a patient to log in and where the app redeems the code: SMART App
/// Launch's discovery. `[base]/.well-known/smart-configuration` first; servers that predate it
/// declare the endpoints in their CapabilityStatement (`rest.security`'s oauth-uris extension).
///
///     let smart = try await SmartConfiguration.discover(fhirBase: base)
///     try smart.requireS256()
public struct SmartConfiguration: Sendable, Equatable {
    /// Which document told us.
    public enum Source: String, Sendable { case wellKnown = "well-known", capabilityStatement = "CapabilityStatement" }

    public var authorizationEndpoint: URL
    public var tokenEndpoint: URL
    /// `code_challenge_methods_supported`; nil when the server does not say.
    public var codeChallengeMethods: [String]?
    /// `capabilities` (`launch-standalone`, `permission-v2`, …); empty when not declared.
    public var capabilities: [String]
    /// `scopes_supported`; nil when not declared.
    public var scopesSupported: [String]?
    public var source: Source

    public init(authorizationEndpoint: URL, tokenEndpoint: URL, codeChallengeMethods: [String]? = nil, capabilities: [String] = [],
                scopesSupported: [String]? = nil, source: Source) {
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.codeChallengeMethods = codeChallengeMethods
        self.capabilities = capabilities
        self.scopesSupported = scopesSupported
        self.source = source
    }

    /// The scopes asked when the user names none: the patient picked at login (`launch/patient`),
    /// who logged in (`openid fhirUser`), a refresh token for later syncs (`offline_access`) and
    /// read access to that patient's record: SMART v2's `patient/*.rs`, or v1's `patient/*.read`
    /// for a server that declares only v1 (or declares its endpoints only in its CapabilityStatement,
    /// which is how servers before v2 did it).
    public var defaultScopes: [String] {
        ["launch/patient", "openid", "fhirUser", "offline_access", usesV1Scopes ? "patient/*.read" : "patient/*.rs"]
    }

    var usesV1Scopes: Bool {
        if let scopes = scopesSupported {
            if scopes.contains(where: { $0.hasSuffix(".rs") || $0.hasSuffix(".cruds") }) { return false }
            if scopes.contains(where: { $0.hasSuffix(".read") }) { return true }
        }
        if capabilities.contains("permission-v2") { return false }
        if capabilities.contains("permission-v1") { return true }
        return source == .capabilityStatement
    }

    /// PKCE with S256 is how a public client keeps its code safe. A server that lists its methods
    /// without S256 cannot be logged in to safely; one that lists none is tried with S256.
    public func requireS256() throws {
        if let methods = codeChallengeMethods, !methods.contains(PKCE.method) {
            throw SmartError.noS256(declared: methods)
        }
    }

    /// The code and the verifier go to the token endpoint: over https, or http to this machine, or
    /// with `--insecure-http`. Checked before the user is sent to log in, not after.
    public func requireSafeTokenEndpoint(clients: APIClients = .shared) throws {
        try Authenticator.checkTransport(tokenEndpoint, allowInsecure: clients.configuration.allowInsecureHTTP)
    }

    // MARK: - Discovery

    public static func discover(fhirBase: URL, clients: APIClients = .shared) async throws -> SmartConfiguration {
        let base = try Origin.serviceBase(fhirBase)
        let client = try clients.client(for: base)
        let wellKnown = URL(string: base.absoluteString + "/.well-known/smart-configuration")!
        let response = try await client.send(HTTPRequest(url: wellKnown, headers: ["Accept": "application/json"]))
        var why: String
        if response.isSuccess {
            do {
                return try parseWellKnown(response.body, url: wellKnown)
            } catch let SmartError.notSmart(reason) {
                why = reason
            }
        } else {
            why = "\(wellKnown.redactedForDisplay) answered \(response.status)"
        }
        // Servers that predate the well-known document declare the endpoints in the CapabilityStatement.
        let metadata: FHIRCapability
        do {
            metadata = try await FHIRClient(base: base, clients: clients).capability()
        } catch let error as NetError {
            switch error {
            case .status, .unauthorized, .malformed, .unexpectedResponse:
                throw SmartError.notSmart(why + "; and no CapabilityStatement to read instead (\(error))")
            default:
                throw error
            }
        }
        guard let authorize = metadata.oauthURIs["authorize"], let token = metadata.oauthURIs["token"] else {
            why += "; its CapabilityStatement declares no oauth-uris (authorize, token)"
            throw SmartError.notSmart(why)
        }
        return SmartConfiguration(authorizationEndpoint: try endpoint(authorize, "authorize"), tokenEndpoint: try endpoint(token, "token"),
                                  source: .capabilityStatement)
    }

    /// `[base]/.well-known/smart-configuration` alone, without the CapabilityStatement fallback
    /// (`hreader providers check` reports the two documents apart).
    public static func wellKnown(fhirBase: URL, clients: APIClients = .shared) async throws -> SmartConfiguration {
        let base = try Origin.serviceBase(fhirBase)
        let wellKnown = URL(string: base.absoluteString + "/.well-known/smart-configuration")!
        let response = try await clients.client(for: base).send(HTTPRequest(url: wellKnown, headers: ["Accept": "application/json"]))
        guard response.isSuccess else { throw SmartError.notSmart("\(wellKnown.redactedForDisplay) answered \(response.status)") }
        return try parseWellKnown(response.body, url: wellKnown)
    }

    static func parseWellKnown(_ body: Data, url: URL) throws -> SmartConfiguration {
        guard let object = (try? JSONParser.parse(body))?.object else {
            throw SmartError.notSmart("\(url.redactedForDisplay) is not a JSON object")
        }
        guard let authorize = object["authorization_endpoint"]?.string, let token = object["token_endpoint"]?.string else {
            throw SmartError.notSmart("\(url.redactedForDisplay) names no authorization_endpoint and token_endpoint")
        }
        func strings(_ key: String) -> [String]? { object[key]?.array?.compactMap(\.string) }
        return SmartConfiguration(authorizationEndpoint: try endpoint(authorize, "authorization_endpoint"),
                                  tokenEndpoint: try endpoint(token, "token_endpoint"),
                                  codeChallengeMethods: strings("code_challenge_methods_supported"),
                                  capabilities: strings("capabilities") ?? [], scopesSupported: strings("scopes_supported"),
                                  source: .wellKnown)
    }

    private static func endpoint(_ text: String, _ name: String) throws -> URL {
        guard let url = URL(string: text), Origin(url) != nil, url.fragment == nil else {
            throw SmartError.notSmart("its \(name) is not an http(s) URL")
        }
        return url
    }
}

/// Why a SMART login did not happen. Each case reads as one line; none carries a code or a token.
public enum SmartError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server declares no SMART endpoints.
    case notSmart(String)
    /// `code_challenge_methods_supported` without S256.
    case noS256(declared: [String])
    /// The loopback listener could not start (a port in use).
    case listener(String)
    /// No redirect came back in time.
    case timedOut(seconds: Double)
    /// The redirect's `state` is not this login's.
    case stateMismatch
    /// Too many requests to the redirect address were not this login's redirect.
    case tooManyRejectedRedirects(count: Int)
    /// The authorization server said no (`error=access_denied`, …).
    case authorizationRefused(error: String, description: String?)
    /// The redirect carried neither a code nor an error.
    case noCode
    /// The token endpoint refused the code.
    case tokenRefused(error: String, description: String?, status: Int)
    /// The token endpoint answered, but not with usable tokens.
    case badTokenResponse(String)

    public var description: String {
        switch self {
        case let .notSmart(why):
            return "the server does not declare SMART App Launch: \(why)"
        case let .noS256(declared):
            return "the server's SMART configuration offers PKCE only as " + (declared.isEmpty ? "nothing" : declared.joined(separator: ", "))
                + ", not S256; hreader does not log in without it"
        case let .listener(why):
            return "cannot listen for the login's redirect: \(why)"
        case let .timedOut(seconds):
            return "no answer from the browser within \(Self.duration(seconds)); run the login again (raise --login-timeout if you need longer)"
        case .stateMismatch:
            return "the login's redirect carried a state that is not this login's; refused (run the login again)"
        case let .tooManyRejectedRedirects(count):
            return "\(count) requests to the login's redirect address were not this login's redirect (another state, path or method); "
                + "stopped waiting, nothing was stored; run the login again"
        case let .authorizationRefused(error, description):
            let reason = error == "access_denied" ? "access was denied" : "the authorization server answered \(error)"
            return reason + (description.map { " (\($0))" } ?? "") + "; nothing was stored"
        case .noCode:
            return "the login's redirect carried no authorization code; run the login again"
        case let .tokenRefused(error, description, status):
            return "the token endpoint refused the authorization code (\(status) \(error)" + (description.map { ": \($0)" } ?? "")
                + "); nothing was stored; run the login again"
        case let .badTokenResponse(why):
            return "the token endpoint's answer cannot be used: \(why)"
        }
    }

    static func duration(_ seconds: Double) -> String {
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        return "\(NetError.format(seconds)) s"
    }
}
