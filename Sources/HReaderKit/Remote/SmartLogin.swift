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
    /// `hreader sources login --smart`: SMART App Launch standalone login as a public client.
    /// Discovers the server's endpoints, listens on 127.0.0.1 for the redirect, hands the
    /// authorization URL to `prompt` (the command prints it) and, when asked, to the browser
    /// through a private page (`BrowserHandoff`), waits for the redirect with this login's `state`
    /// (others are answered 400 and the wait goes on), redeems the code with the PKCE verifier,
    /// reads the patient with the new token (unless `check` is off), and asks `confirm` whether to
    /// store the tokens for that identity. Only then are they stored, encrypted in the vault, as the
    /// source's OAuth2 credential with the patient chosen at login.
    public func smartLogin(_ request: SmartLoginRequest, prompt: @Sendable (SmartLoginPrompt) -> Void,
                           confirm: @Sendable (SmartLoginIdentity) throws -> Bool = { _ in true }) async throws -> SmartLoginOutcome {
        do {
            let configuration = try await SmartConfiguration.discover(fhirBase: request.server.url)
            try configuration.requireS256()
            try configuration.requireSafeTokenEndpoint()
            let listener = try LoopbackListener(port: request.redirectPort)
            defer { listener.stop() }
            let scopes = request.scopes ?? configuration.defaultScopes
            let login = try SmartAuthorization(configuration: configuration, fhirBase: request.server.url, clientID: request.clientID,
                                               clientSecret: request.clientSecret, redirectURI: listener.redirectURI, scopes: scopes)
            var shown = SmartLoginPrompt(authorizationURL: login.url, redirectURI: listener.redirectURI, scopes: scopes,
                                         discoveredIn: configuration.source.rawValue)
            var handoff: BrowserHandoff?
            defer { handoff?.remove() }
            if request.openBrowser {
                do {
                    handoff = try BrowserHandoff.open(login.url)
                } catch let error as HReaderError {
                    shown.browserProblem = error.message
                }
            }
            prompt(shown)
            let query = try await listener.callback(timeout: request.timeout) { query in
                do {
                    _ = try login.code(fromRedirect: query)
                    return .done(title: "Authorized", message: "hreader received the authorization. You can close this tab; the terminal says how the login ended.")
                } catch SmartError.stateMismatch {
                    // Any local user can reach this port: a forged or stale redirect must not end the login.
                    return .rejected(title: "Not this login", message: "This is not the redirect of the login hreader is waiting for.")
                } catch {
                    return .failed(title: "Not logged in", message: "\(error)")
                }
            }
            let tokens = try await login.exchange(code: try login.code(fromRedirect: query))

            // Whom the tokens are for, read with them before anything is stored.
            let authenticator = Authenticator(.oauth2(tokens), placement: .header,
                                              loginCommand: "hreader sources login --server \(request.server) --smart")
            var identity = SmartLoginIdentity(server: request.server.description, patient: tokens.patient)
            if request.check {
                let fhir = try FHIRClient(base: request.server.url, auth: authenticator, capabilities: FHIRCapabilityCache())
                if let patient = tokens.patient {
                    let content = try await fhir.readPatient(id: patient).records.first?.patient.content
                    identity.patientName = content.map { [$0.firstName, $0.lastName].filter { !$0.isEmpty }.joined(separator: " ") }
                        .flatMap { $0.isEmpty ? nil : SmartAuthorization.printable($0) }
                } else {
                    _ = try await fhir.capability()
                }
            }
            guard try confirm(identity) else {
                throw HReaderError(.authentication, "the login for \(identity.description) at \(request.server) was not stored, as you answered; log in again as the right patient")
            }
            // A renewal during the check hands out new tokens: store the latest.
            guard case let .oauth2(latest) = authenticator.current else { throw HReaderError(.failure, "the login's credential changed kind") }
            let guarded = GuardedVault(self)
            _ = try guarded.run {
                try $0.storeCredential(.oauth2(latest), server: request.server, kind: .fhir, how: "auth oauth2 (SMART App Launch)")
            }
            return SmartLoginOutcome(server: request.server.description, patient: tokens.patient, patientName: identity.patientName,
                                     scope: tokens.scope, expiresAt: latest.expiresAt, refreshable: !latest.refreshToken.isEmpty,
                                     checked: request.check)
        } catch let error as NetError {
            throw HReaderError.from(network: error)
        } catch let error as SmartError {
            throw HReaderError.from(smart: error)
        }
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
