import Foundation
import HReaderNet
import HReaderStore

/// What `hreader sources login --smart` asks for.
public struct SmartLoginRequest: Sendable {
    /// hreader's client id when the user registered none of their own.
    public static let defaultClientID = "hreader"

    public var server: ServerURL
    public var clientID: String
    /// A confidential client's secret (`hreader providers client set --client-secret-file`); nil for a public client.
    public var clientSecret: String?
    /// nil: the default scopes the server's configuration suggests (`SmartConfiguration.defaultScopes`).
    public var scopes: [String]?
    /// 0: any free port (RFC 8252 §7.3); a registration that names a port needs that one.
    public var redirectPort: Int
    /// Seconds to wait for the browser's redirect.
    public var timeout: Double
    /// Read the patient (or the CapabilityStatement) with the new token before storing it.
    public var check: Bool
    /// Hand the authorization URL to the desktop's browser (`BrowserHandoff`: never in argv).
    public var openBrowser: Bool

    public init(server: ServerURL, clientID: String = SmartLoginRequest.defaultClientID, scopes: [String]? = nil, redirectPort: Int = 0,
                timeout: Double = 300, check: Bool = true, openBrowser: Bool = false) {
        self.server = server
        self.clientID = clientID
        self.scopes = scopes
        self.redirectPort = redirectPort
        self.timeout = timeout
        self.check = check
        self.openBrowser = openBrowser
    }
}

/// The step the user must take: open this URL. It holds no credential, but its `state` must stay
/// the user's: print it for them, never put it on a command line.
public struct SmartLoginPrompt: Sendable {
    public var authorizationURL: URL
    public var redirectURI: String
    public var scopes: [String]
    /// Where the endpoints came from: `well-known` or `CapabilityStatement`.
    public var discoveredIn: String
    /// Why the browser could not be started, when it was asked for.
    public var browserProblem: String?
}

/// Whom the tokens of a SMART login are for, shown before they are stored: the patient the
/// token response names, and the name its Patient resource gives (read with the new token).
public struct SmartLoginIdentity: Sendable {
    public var server: String
    public var patient: String?
    public var patientName: String?

    /// "patient p2 (Ada Lovelace)", or what the server did not say.
    public var description: String {
        guard let patient else { return "no patient (the server named none)" }
        return "patient \(patient)" + (patientName.map { " (\($0))" } ?? " (name not read)")
    }
}

/// What a SMART login stored (never a token).
public struct SmartLoginOutcome: Sendable {
    public var server: String
    /// The patient chosen at login; `import --server` and `sync` use it.
    public var patient: String?
    public var patientName: String?
    public var scope: String?
    public var expiresAt: Double?
    public var refreshable: Bool
    public var checked: Bool
}

extension OpenVault {
    /// `hreader sources login --smart`: SMART App Launch standalone login (`SmartLoginFlow`: the
    /// endpoints discovered, the redirect awaited on 127.0.0.1, the code redeemed with PKCE S256, the
    /// patient read with the new token), then `confirm` is asked whether to store the tokens for
    /// that identity. Only then are they stored (`storeSmartLogin`), encrypted in the vault, as the
    /// source's OAuth2 credential with the patient chosen at login.
    public func smartLogin(_ request: SmartLoginRequest, prompt: @Sendable (SmartLoginPrompt) -> Void,
                           confirm: @Sendable (SmartLoginIdentity) throws -> Bool = { _ in true }) async throws -> SmartLoginOutcome {
        let authorized = try await SmartLoginFlow.authorize(request, prompt: prompt)
        guard try confirm(authorized.identity) else {
            throw HReaderError(.authentication, "the login for \(authorized.identity.description) at \(request.server) was not stored, as you answered; log in again as the right patient")
        }
        return try storeSmartLogin(authorized)
    }

    /// The patient chosen at the SMART login to this server, if there was one.
    func loginPatient(sourceID: Int64) throws -> String? {
        guard let source = try read({ try SourceRepository(db).stored(id: sourceID) }),
              case let .oauth2(tokens)? = try? StoredCredentials.decode(kind: source.authKind, json: source.credentials) else { return nil }
        return tokens.patient
    }
}

extension HReaderError {
    /// A server without SMART (or without S256) is the server's failing (6); a login that did not
    /// go through is a login failure (3); a redirect port that cannot be had is a local failure (1).
    static func from(smart error: SmartError) -> HReaderError {
        switch error {
        case .notSmart, .noS256, .badTokenResponse: return HReaderError(.network, error.description)
        case .listener: return HReaderError(.failure, error.description)
        case .timedOut, .stateMismatch, .tooManyRejectedRedirects, .authorizationRefused, .noCode, .tokenRefused:
            return HReaderError(.authentication, error.description)
        }
    }
}
