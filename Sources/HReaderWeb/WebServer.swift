import Foundation
import HReaderKit
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// `hreader serve`: the local web view over an unlocked vault (docs/web.md).
///
///     let server = try WebServer(open: open, registry: registry, port: 0)
///     try await server.run { url in print(url) }   // until SIGINT or SIGTERM
///
/// It listens on 127.0.0.1 only, answers only requests whose `Host` is that address and port, and only
/// to callers holding the access token in the printed URL (see `AccessControl`, `WebGuard`).
public struct WebServer: Sendable {
    public static let host = "127.0.0.1"

    let gate: VaultGate
    let registry: AppletRegistry
    let port: Int
    let access: AccessControl
    /// Whether `/shl/…` answers the SMART Health Link manifest protocol (`serve --shares`).
    let shares: Bool
    /// Whether the web view itself is served (false: only `/shl/`, for `share create --serve`).
    let app: Bool
    /// The provider directory "Add a provider" searches (public data in the cache, not the vault).
    let providers: ProviderDirectory

    /// `port` 0 asks the system for a free one. `app: false` serves the shared links alone
    /// (`shares` must then be true): nothing of the vault is reachable but ciphertext under `/shl/`.
    public init(open: OpenVault, registry: AppletRegistry, port: Int = 0, shares: Bool = false, app: Bool = true,
                providers: ProviderDirectory? = nil) throws {
        guard (0...65535).contains(port) else { throw HReaderError.usage("a port is a number from 1 to 65535") }
        self.gate = try VaultGate(open)
        self.registry = registry
        self.port = port
        self.access = try AccessControl()
        self.shares = shares || !app
        self.app = app
        self.providers = providers ?? ProviderDirectory.defaultLocation { ProcessInfo.processInfo.environment[$0] }
    }

    /// Runs `body` on the vault, through the server's one access point (as its requests do): what
    /// a command does with the vault while its server runs (`share create --serve` makes its link
    /// once the port is known).
    public func withVault<T: Sendable>(_ body: @escaping @Sendable (OpenVault) throws -> T) async throws -> T {
        try await gate.write(body)
    }

    /// Why `run` returned.
    public enum Stop: Sendable {
        /// SIGINT (Ctrl-C) or SIGTERM.
        case signal
        /// `vaultStillUnlocked` said no: the unlock session the vault was opened with has ended.
        case vaultLocked
    }

    /// Serves until SIGINT (Ctrl-C) or SIGTERM, or until `vaultStillUnlocked` (asked every 2 s) says
    /// no, then stops the vault's work in flight, lets open requests answer (1.5 s at most) and returns. `onReady` gets the URL to open,
    /// which carries the token, once the socket listens.
    public func run(vaultStillUnlocked: (@Sendable () -> Bool)? = nil, onReady: @escaping @Sendable (URL) -> Void) async throws -> Stop {
        let listening = ListeningAuthority()
        let router = Router(context: WebContext.self)
        router.add(middleware: WebGuard(access: access, authority: listening, shares: shares))
        if app {
            Routes(gate: gate, registry: registry).register(on: router.group(RouterPath(access.pathPrefix)))
            SharePages(gate: gate, servesShares: shares).register(on: router.group(RouterPath(access.pathPrefix)))
            ProviderPages(directory: providers, gate: gate, logins: ProviderLogins()).register(on: router.group(RouterPath(access.pathPrefix)))
        }
        if shares { ShareRoutes(gate: gate, tickets: ShareTickets()).register(on: router.group(RouterPath("/shl"))) }

        var logger = Logger(label: "hreader.serve")
        // Requests are not logged: their URLs name patients, and the first one carries the token.
        logger.logLevel = .critical
        let access = self.access
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(Self.host, port: port), serverName: nil, reuseAddress: false),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                listening.set("\(Self.host):\(port)")
                onReady(URL(string: "http://\(Self.host):\(port)\(access.pathPrefix)/?token=\(access.token)")!)
            },
            logger: logger)
        var services = [ServiceGroupConfiguration.ServiceConfiguration(service: app)]
        let watch = vaultStillUnlocked.map(LockWatch.init)
        if let watch { services.append(.init(service: watch, successTerminationBehavior: .gracefullyShutdownGroup)) }
        // Last, so it is the first told to stop (a group stops its services in reverse order): the
        // vault's work in flight ends before the server waits for its requests to answer.
        services.append(.init(service: GateCloser(gate: gate)))
        var configuration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // A browser keeps idle connections open; they must not hold the shutdown (and the key) for
        // long: Ctrl-C and SIGTERM stop the server within two seconds, mid-request or not.
        configuration.maximumGracefulShutdownDuration = .milliseconds(1500)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw HReaderError(.failure, "port \(port) on \(Self.host) is already in use; choose another with --port, or leave it out for a free one")
        } catch let error as IOError {
            throw HReaderError(.failure, "cannot serve on \(Self.host):\(port): \(error.description)")
        }
        gate.close()
        await gate.drained(within: .milliseconds(400))
        return watch?.sawLock == true ? .vaultLocked : .signal
    }
}

/// Closes the gate when the group begins to stop: waiting requests are answered and running ones interrupted.
struct GateCloser: Service {
    let gate: VaultGate

    func run() async throws {
        try? await gracefulShutdown()
        gate.close()
    }
}

/// Ends the service group (successfully) once the vault's unlock session is gone: `hreader lock` must
/// lock a vault that a running `serve` opened with that session, as it does for every other command.
final class LockWatch: Service, Sendable {
    private let stillUnlocked: @Sendable () -> Bool
    private let locked = NIOLockedValueBox(false)

    init(_ stillUnlocked: @escaping @Sendable () -> Bool) {
        self.stillUnlocked = stillUnlocked
    }

    var sawLock: Bool { locked.withLockedValue { $0 } }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    try await Task.sleep(for: .seconds(2))
                    if !self.stillUnlocked() {
                        self.locked.withLockedValue { $0 = true }
                        return
                    }
                }
            }
        } catch is CancellationError {
            // The group is shutting down for another reason (Ctrl-C): that is this watch's end too, not a failure.
        }
    }
}

/// "127.0.0.1:PORT" once the socket listens (the port is the system's choice when asked for 0); until
/// then nothing can connect, and every `Host` is refused.
final class ListeningAuthority: Sendable {
    private let value = NIOLockedValueBox<String?>(nil)

    func set(_ authority: String) { value.withLockedValue { $0 = authority } }
    var current: String? { value.withLockedValue { $0 } }
}
