import Foundation
import HReaderKit
import NIOConcurrencyHelpers

/// The logins the provider pages run (issue 38, docs/web.md): `hreader sources login --provider ID`
/// beside the requests. A login's network half (`SmartLoginFlow`: discovery, PKCE S256, a loopback
/// listener of its own for the portal's redirect, the code redeemed, the patient read with the new
/// token) runs in a task of its own, holding no vault lane while it waits; the page asks the
/// person whether the patient the portal logged them in as is the right one, and only **Yes**
/// stores the tokens (`OpenVault.storeSmartLogin`, on the writer lane). **No** keeps nothing.
///
/// Everything here is in memory only: a login and its tokens live at most `lifetime` (five
/// minutes, the listener's wait included), and at most `maximum` logins are kept at once.
final class ProviderLogins: Sendable {
    /// Five minutes, or `HREADER_SERVE_LOGIN_SECONDS` (1 to 300: it can only be shorter).
    let lifetime: TimeInterval
    static let maximum = 8

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        lifetime = environment["HREADER_SERVE_LOGIN_SECONDS"].flatMap(Double.init).flatMap { (1...300).contains($0) ? $0 : nil } ?? 300
    }

    enum Phase: String, Sendable {
        /// Asking the server how to log in (its SMART configuration).
        case starting
        /// The portal's sign-in page is to be opened; the listener waits for its redirect.
        case waiting
        /// The portal sent the person back: whom the tokens are for waits for Yes or No.
        case confirm
        /// Yes: the tokens are being stored.
        case storing
        case stored
        /// No: nothing was kept.
        case declined
        case failed

        var isOver: Bool { [.stored, .declined, .failed].contains(self) }
    }

    struct Login: Sendable {
        let id: String
        let brandID: String
        let brandName: String
        let portal: String?
        let server: String
        let expires: Date
        var phase = Phase.starting
        var authorizationURL: URL?
        var identity: SmartLoginIdentity?
        var outcome: SmartLoginOutcome?
        var problem: String?
        /// The tokens, from the portal's redirect until the person answers; nil before and after.
        var authorized: SmartLoginAuthorized?
    }

    /// In the order they started.
    private let logins = NIOLockedValueBox<[Login]>([])

    /// Starts the login of `request` for `brand` and returns its id (32 random bytes: the login's
    /// page is the app's own, but its address should tell nothing).
    func start(brand: DirectoryBrand, request: SmartLoginRequest, now: Date = Date()) throws -> String {
        let login = Login(id: try AccessControl.randomToken(), brandID: brand.id, brandName: brand.brand.name, portal: brand.brand.portalName,
                          server: request.server.description, expires: now.addingTimeInterval(lifetime))
        try logins.withLockedValue { list in
            Self.forgetExpired(&list, now: now)
            if list.count >= Self.maximum {
                guard let finished = list.firstIndex(where: { $0.phase.isOver }) else {
                    throw WebError(status: .tooManyRequests, message: "\(Self.maximum) logins are already waiting; finish one, or try again "
                                   + "when one has ended (each ends after five minutes)")
                }
                list.remove(at: finished)
            }
            list.append(login)
        }
        var settings = request
        settings.timeout = lifetime
        settings.openBrowser = false   // the page links the portal; the server starts no browser
        settings.check = true          // the person is asked about the patient the token is for
        let flow = settings, id = login.id
        Task { await self.run(id, flow) }
        // The tokens of a login nobody answered leave memory when its time is up, asked or not.
        Task { [lifetime] in
            try? await Task.sleep(for: .seconds(lifetime))
            self.logins.withLockedValue { Self.forgetExpired(&$0, now: Date()) }
        }
        return id
    }

    /// A copy of the login, unless it never was or its five minutes are over.
    func login(_ id: String, now: Date = Date()) -> Login? {
        logins.withLockedValue { list in
            Self.forgetExpired(&list, now: now)
            return list.first { AccessControl.constantTimeEqual($0.id, id) }
        }
    }

    /// The person's answer to "is this you?". Yes stores the tokens on the writer lane; No forgets
    /// them. A login that is not waiting for an answer (already answered, failed) is a 409.
    func answer(_ id: String, yes: Bool, gate: VaultGate) async throws {
        let authorized: SmartLoginAuthorized = try logins.withLockedValue { list in
            Self.forgetExpired(&list, now: Date())
            guard let index = list.firstIndex(where: { AccessControl.constantTimeEqual($0.id, id) }) else { throw Self.unknown }
            guard list[index].phase == .confirm, let authorized = list[index].authorized else {
                throw WebError(status: .conflict, message: "this login is not waiting for an answer (it is \(list[index].phase.rawValue))")
            }
            // Taken out under the lock: two answers cannot both store it.
            list[index].authorized = nil
            list[index].phase = yes ? .storing : .declined
            return authorized
        }
        guard yes else { return }
        do {
            let outcome = try await gate.write { try $0.storeSmartLogin(authorized) }
            update(id) { $0.phase = .stored; $0.outcome = outcome }
        } catch {
            // Not stored (the writer was busy, the server is stopping): the question stands.
            update(id) { $0.phase = .confirm; $0.authorized = authorized }
            throw error
        }
    }

    static let unknown = WebError.notFound("no such login: it ended, or its five minutes are over; start again from the provider's page")

    // MARK: -

    private func run(_ id: String, _ request: SmartLoginRequest) async {
        do {
            let authorized = try await SmartLoginFlow.authorize(request) { prompt in
                self.update(id) { $0.phase = .waiting; $0.authorizationURL = prompt.authorizationURL }
            }
            // Dropped here if the login's time ran out meanwhile: nothing keeps the tokens then.
            update(id) { $0.phase = .confirm; $0.identity = authorized.identity; $0.authorized = authorized }
        } catch {
            let message = (error as? HReaderError)?.message ?? "the login failed inside hreader"
            update(id) { $0.phase = .failed; $0.problem = message; $0.authorizationURL = nil }
        }
    }

    private func update(_ id: String, _ change: (inout Login) -> Void) {
        logins.withLockedValue { list in
            guard let index = list.firstIndex(where: { $0.id == id }) else { return }
            change(&list[index])
        }
    }

    private static func forgetExpired(_ list: inout [Login], now: Date) {
        list.removeAll { $0.expires <= now }
    }
}
