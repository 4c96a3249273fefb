import Dispatch
import HReaderKit

/// The one way the web server touches the vault: every use runs on one serial queue.
///
/// An `OpenVault` owns one SQLCipher connection and belongs to one thread at a time; requests arrive on
/// many. Queuing them here makes that a property of the design rather than of each handler, and keeps
/// SQLCipher's blocking calls (and applet plugins' child processes) off Swift's cooperative thread pool.
final class VaultGate: @unchecked Sendable {
    // @unchecked: `open` is only ever read inside `queue.async` blocks below, and the queue is serial, so
    // no two threads use the connection at once. Nothing else holds a reference to it after `init`.
    private let open: OpenVault
    private let queue = DispatchQueue(label: "hreader.web.vault")

    init(_ open: OpenVault) {
        self.open = open
    }

    func run<T: Sendable>(_ body: @escaping @Sendable (OpenVault) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try body(self.open) })
            }
        }
    }
}
