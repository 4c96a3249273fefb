import Foundation
import HReaderKit
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore

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

    /// `port` 0 asks the system for a free one.
    public init(open: OpenVault, registry: AppletRegistry, port: Int = 0) throws {
        guard (0...65535).contains(port) else { throw HReaderError.usage("a port is a number from 1 to 65535") }
        self.gate = VaultGate(open)
        self.registry = registry
        self.port = port
        self.access = try AccessControl()
    }

    /// Serves until SIGINT (Ctrl-C) or SIGTERM, then lets open requests finish and returns. `onReady` gets
    /// the URL to open, which carries the token, once the socket listens.
    public func run(onReady: @escaping @Sendable (URL) -> Void) async throws {
        let listening = ListeningAuthority()
        let router = Router(context: WebContext.self)
        router.add(middleware: WebGuard(access: access, authority: listening))
        Routes(gate: gate, registry: registry).register(on: router)

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
                onReady(URL(string: "http://\(Self.host):\(port)/?token=\(access.token)")!)
            },
            logger: logger)
        do {
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw HReaderError(.failure, "port \(port) on \(Self.host) is already in use; choose another with --port, or leave it out for a free one")
        } catch let error as IOError {
            throw HReaderError(.failure, "cannot serve on \(Self.host):\(port): \(error.description)")
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
