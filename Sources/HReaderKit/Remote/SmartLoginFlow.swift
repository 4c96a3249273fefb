import Foundation
import HReaderNet

/// The network half of a SMART App Launch standalone login, apart from the vault: what both
/// `hreader sources login --smart` (`OpenVault.smartLogin`) and the web view's provider page run.
///
///     let authorized = try await SmartLoginFlow.authorize(request) { prompt in show(prompt.authorizationURL) }
///     // ask the person whether `authorized.identity` is them, then, only on yes:
///     try open.storeSmartLogin(authorized)
///
/// It discovers the server's endpoints, listens on 127.0.0.1 for the redirect (a free port unless
/// the request names one: `http://127.0.0.1:PORT/callback`, the same redirect URI for every caller,
/// so one registration serves them all), hands the authorization URL to `prompt` (and, when asked,
/// to the browser through a private page, `BrowserHandoff`), waits for the redirect with this
/// login's `state` (others are answered 400 and the wait goes on), redeems the code with the PKCE
/// S256 verifier, and reads the patient with the new token (unless `check` is off). It touches no
/// vault and no disk: the tokens stay in the value it returns until someone stores them.
public enum SmartLoginFlow {
    public static func authorize(_ request: SmartLoginRequest, prompt: @Sendable (SmartLoginPrompt) -> Void) async throws -> SmartLoginAuthorized {
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
                    return .done(title: "Authorized", message: "hreader received the authorization. You can close this tab; "
                                 + "hreader says how the login ended where you started it.")
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
            // A renewal during the check hands out new tokens: keep the latest.
            guard case let .oauth2(latest) = authenticator.current else { throw HReaderError(.failure, "the login's credential changed kind") }
            return SmartLoginAuthorized(server: request.server, identity: identity, tokens: latest, grantedScope: tokens.scope,
                                        checked: request.check)
        } catch let error as NetError {
            throw HReaderError.from(network: error)
        } catch let error as SmartError {
            throw HReaderError.from(smart: error)
        }
    }
}

/// A login that went through at the portal and is not kept yet: whom the tokens are for, and the
/// tokens, in memory only. Nothing prints them (its description names the identity alone).
public struct SmartLoginAuthorized: Sendable, CustomStringConvertible {
    public let server: ServerURL
    public let identity: SmartLoginIdentity
    let tokens: OAuth2Tokens
    let grantedScope: String?
    let checked: Bool

    public var description: String { "a SMART login at \(server) for \(identity.description)" }
}

extension OpenVault {
    /// Keeps a login's tokens, encrypted in the vault, as the source's OAuth2 credential with the
    /// patient chosen at login: only once the person said the identity is theirs.
    public func storeSmartLogin(_ authorized: SmartLoginAuthorized) throws -> SmartLoginOutcome {
        let latest = authorized.tokens
        _ = try storeCredential(.oauth2(latest), server: authorized.server, kind: .fhir, how: "auth oauth2 (SMART App Launch)")
        return SmartLoginOutcome(server: authorized.server.description, patient: latest.patient, patientName: authorized.identity.patientName,
                                 scope: authorized.grantedScope, expiresAt: latest.expiresAt, refreshable: !latest.refreshToken.isEmpty,
                                 checked: authorized.checked)
    }
}
