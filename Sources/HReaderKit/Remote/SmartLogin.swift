import Foundation
import HReaderNet
import HReaderStore

/// What `hreader sources login --smart` asks for.
public struct SmartLoginRequest: Sendable {
    /// hreader's client id when the user registered none of their own.
    public static let defaultClientID = "hreader"

    public var server: ServerURL
    public var clientID: String
    /// nil: the default scopes the server's configuration suggests (`SmartConfiguration.defaultScopes`).
    public var scopes: [String]?
    /// 0: any free port (RFC 8252 §7.3); a registration that names a port needs that one.
    public var redirectPort: Int
    /// Seconds to wait for the browser's redirect.
    public var timeout: Double
    /// Read the patient (or the CapabilityStatement) with the new token before saying it worked.
    public var check: Bool

    public init(server: ServerURL, clientID: String = SmartLoginRequest.defaultClientID, scopes: [String]? = nil, redirectPort: Int = 0,
                timeout: Double = 300, check: Bool = true) {
        self.server = server
        self.clientID = clientID
        self.scopes = scopes
        self.redirectPort = redirectPort
        self.timeout = timeout
        self.check = check
    }
}

/// The step the user must take: open this URL (it holds only public values).
public struct SmartLoginPrompt: Sendable {
    public var authorizationURL: URL
    public var redirectURI: String
    public var scopes: [String]
    /// Where the endpoints came from: `well-known` or `CapabilityStatement`.
    public var discoveredIn: String
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
    /// authorization URL to `prompt` (the command prints it and may open a browser), waits, checks
    /// `state`, redeems the code with the PKCE verifier and stores the tokens, encrypted in the
    /// vault, as the source's OAuth2 credential with the patient chosen at login. Nothing is stored
    /// unless the token endpoint handed out tokens.
    public func smartLogin(_ request: SmartLoginRequest, prompt: @Sendable (SmartLoginPrompt) -> Void) async throws -> SmartLoginOutcome {
        do {
            let configuration = try await SmartConfiguration.discover(fhirBase: request.server.url)
            try configuration.requireS256()
            try configuration.requireSafeTokenEndpoint()
            let listener = try LoopbackListener(port: request.redirectPort)
            defer { listener.stop() }
            let scopes = request.scopes ?? configuration.defaultScopes
            let login = try SmartAuthorization(configuration: configuration, fhirBase: request.server.url, clientID: request.clientID,
                                               redirectURI: listener.redirectURI, scopes: scopes)
            prompt(SmartLoginPrompt(authorizationURL: login.url, redirectURI: listener.redirectURI, scopes: scopes,
                                    discoveredIn: configuration.source.rawValue))
            let query = try await listener.callback(timeout: request.timeout) { query in
                do {
                    _ = try login.code(fromRedirect: query)
                    return .done(title: "Authorized", message: "hreader received the authorization. You can close this tab; the terminal says how the login ended.")
                } catch {
                    return .failed(title: "Not logged in", message: "\(error)")
                }
            }
            let tokens = try await login.exchange(code: try login.code(fromRedirect: query))

            let guarded = GuardedVault(self)
            let sourceID = try guarded.run {
                try $0.storeCredential(.oauth2(tokens), server: request.server, kind: .fhir, how: "auth oauth2 (SMART App Launch)")
            }
            var outcome = SmartLoginOutcome(server: request.server.description, patient: tokens.patient, scope: tokens.scope,
                                            expiresAt: tokens.expiresAt, refreshable: !tokens.refreshToken.isEmpty, checked: false)
            guard request.check else { return outcome }
            let fhir = try connection(sourceID: sourceID, guarded: guarded).fhir()
            if let patient = tokens.patient {
                let content = try await fhir.readPatient(id: patient).records.first?.patient.content
                outcome.patientName = content.map { [$0.firstName, $0.lastName].filter { !$0.isEmpty }.joined(separator: " ") }
            } else {
                _ = try await fhir.capability()
            }
            outcome.checked = true
            return outcome
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
        case .timedOut, .stateMismatch, .authorizationRefused, .noCode, .tokenRefused: return HReaderError(.authentication, error.description)
        }
    }
}
