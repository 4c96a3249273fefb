import Foundation
import HReaderKit
import NIOConcurrencyHelpers
import NIOCore

/// The answers of the views that read across a whole record (a patient's summary, the vital charts
/// of a year or a decade), kept while the vault stays as it was: a family's browsers ask for the
/// same patient page and decade chart again and again, and each costs tens to hundreds of
/// milliseconds of a core that the timeline pages and searches then wait for (docs/web.md).
///
/// - An answer is kept under the vault's state (`VaultGate.state`): any change committed since, by
///   the server or by a command run beside it, and it is computed anew.
/// - It is kept at most `lifetime` (a minute): a summary says "active" and "age" as of now, and a
///   chart without `at` ends now.
/// - At most `capacity` answers and `budget` bytes (in each of the server's two caches), the least recently used dropped first; an answer
///   larger than a tenth of the budget is not kept. It holds what the server sent anyway, in its
///   own memory, never on disk.
final class ViewCache<View: Sendable>: Sendable {
    private struct Kept {
        let state: Int64
        let made: ContinuousClock.Instant
        let view: View
        var used: UInt64
    }

    private struct Store {
        var kept: [String: Kept] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    let capacity: Int
    let budget: Int
    let lifetime: Duration
    private let store = NIOLockedValueBox(Store())

    /// Bytes a view holds, near enough.
    let size: @Sendable (View) -> Int

    init(capacity: Int = 64, budget: Int = 16 << 20, lifetime: Duration = .seconds(60), size: @escaping @Sendable (View) -> Int) {
        self.size = size
        self.capacity = capacity
        self.budget = budget
        self.lifetime = lifetime
    }

    /// The view kept under `key` for the vault's `state`, else `compute`'s, kept when it says so.
    func view(_ key: String, state: Int64, compute: () async throws -> (view: View, keep: Bool)) async throws -> View {
        let now = ContinuousClock.now
        let found: View? = store.withLockedValue { store in
            guard var kept = store.kept[key] else { return nil }
            guard kept.state == state, now - kept.made < lifetime else {
                store.bytes -= size(kept.view)
                store.kept[key] = nil
                return nil
            }
            store.clock += 1
            kept.used = store.clock
            store.kept[key] = kept
            return kept.view
        }
        if let found { return found }
        let (view, keep) = try await compute()
        guard keep, size(view) <= budget / 10 else { return view }
        store.withLockedValue { store in
            if let old = store.kept.removeValue(forKey: key) { store.bytes -= size(old.view) }
            while !store.kept.isEmpty, store.kept.count >= capacity || store.bytes + size(view) > budget {
                let oldest = store.kept.min { $0.value.used < $1.value.used }!
                store.bytes -= size(oldest.value.view)
                store.kept[oldest.key] = nil
            }
            store.clock += 1
            store.kept[key] = Kept(state: state, made: now, view: view, used: store.clock)
            store.bytes += size(view)
        }
        return view
    }
}
