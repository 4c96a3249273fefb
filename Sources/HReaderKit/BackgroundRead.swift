import Dispatch
import Foundation

extension OpenVault {
    /// Runs `foreground` on this connection while `background` runs on the companion connection
    /// (`companion()`) on another thread, and returns both once both have finished, even when one
    /// throws (so the companion is free again). For a read made of two independent halves.
    ///
    ///     let (entries, documents) = try open.readingTwoAtOnce({ try rankEntries() },
    ///                                                         companion: { try rankDocuments(on: $0.db) })
    func readingTwoAtOnce<A, B>(_ foreground: () throws -> A, companion background: @escaping (OpenVault) throws -> B) throws -> (A, B) {
        let other = BackgroundRead(on: try companion(), background)
        let first = Result { try foreground() }
        let second = Result { try other.result() }
        return (try first.get(), try second.get())
    }
}

/// A read on another connection and thread; `result()` waits for it.
private final class BackgroundRead<Value>: @unchecked Sendable {
    // Written once by the worker before `done` is signalled, read after the wait: the semaphore orders them.
    private var outcome: Result<Value, Error>?
    private let done = DispatchSemaphore(value: 0)
    // Used by the worker alone, once the initialiser has handed them over.
    private let connection: OpenVault
    private let body: (OpenVault) throws -> Value

    init(on connection: OpenVault, _ body: @escaping (OpenVault) throws -> Value) {
        self.connection = connection
        self.body = body
        Thread.detachNewThread { [self] in run() }
    }

    private func run() {
        outcome = Result { try connection.read { try body(connection) } }
        done.signal()
    }

    func result() throws -> Value {
        done.wait()
        return try outcome!.get()
    }
}
