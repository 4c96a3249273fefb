import Dispatch
import Foundation
import HReaderKit
import NIOConcurrencyHelpers

/// The web server's admission control to the vault: every use runs on a *lane*, a connection of its
/// own (an `OpenVault`, itself the door that serialises every use of its connection) with a serial
/// queue of its own, so SQLCipher's blocking calls (and applet plugins' child processes) stay off
/// Swift's cooperative thread pool, and a request waits for a lane here, in a bounded line, rather
/// than at a connection's lock.
///
/// - Reads run on a pool of read-only connections, side by side (a WAL database has many readers and
///   one writer): a slow read never holds up the others.
/// - Writes (a timeline post, a summary that records its audit line or an applet's data) run one at a
///   time on the vault's own connection.
/// - Each lane kind has a bounded line of waiting requests. A request that finds it full, or that finds
///   a line that stands (as many waiting as there are lanes, the oldest for longer than `line`), or that
///   is still waiting or running when its time is up, is answered 503 with `Retry-After` instead of
///   queueing without bound; a running one is interrupted (`sqlite3_interrupt`), and so is one whose
///   client has gone (`ClientLink`) or whose task was cancelled (the server shutting down).
final class VaultGate: Sendable {
    struct Limits: Sendable {
        /// Read-only connections: as many reads run at once.
        var readers: Int
        /// Requests that may wait for a lane of each kind before the next is refused.
        var waiting: Int
        /// From arrival to answer; past it a request is stopped.
        var budget: Duration
        /// How long the oldest of a full line of waiters may have waited before a newcomer is refused at
        /// once: a line that does not drain in that time is the server saturated, and queueing more only
        /// makes every answer later (a CoDel-like rule; the line's length alone lets a burst through).
        var line: Duration = .milliseconds(100)

        /// Readers: the cores, at least 2 and at most 8, or `HREADER_SERVE_READERS` (1 to 64). More than
        /// the cores was tried and lost: at 10M samples, 8 readers on 2 cores answered 52 requests a second
        /// with p99 1-2.9 s where 2 readers answered 78 with p99 0.5 s (page decryption goes through
        /// OpenSSL 3's locked lookups, and eight page caches share the CPU's).
        /// Waiting: 8 per reader; budget: 10 s, or `HREADER_SERVE_REQUEST_SECONDS`; a standing line:
        /// 100 ms, or `HREADER_SERVE_LINE_MS` (0 turns the rule off).
        static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> Limits {
            let readers = environment["HREADER_SERVE_READERS"].flatMap(Int.init).flatMap { (1...64).contains($0) ? $0 : nil }
                ?? min(8, max(2, ProcessInfo.processInfo.activeProcessorCount))
            let seconds = environment["HREADER_SERVE_REQUEST_SECONDS"].flatMap(Double.init).flatMap { (0.1...3600).contains($0) ? $0 : nil } ?? 10
            let line = environment["HREADER_SERVE_LINE_MS"].flatMap(Int64.init).flatMap { (0...600_000).contains($0) ? $0 : nil } ?? 100
            return Limits(readers: readers, waiting: 8 * readers, budget: .milliseconds(Int64(seconds * 1000)), line: .milliseconds(line))
        }
    }

    /// What a refused or stopped request is told; `WebGuard` answers it as 503 with `Retry-After`.
    struct Saturated: Error {
        let message: String
        static let retryAfterSeconds = 2
    }

    let limits: Limits
    private let writer: LanePool
    private let readers: LanePool
    private let watch: ChangeWatch

    /// `open` becomes the writer's lane; the readers are new connections to the same vault.
    init(_ open: OpenVault, limits: Limits = .standard()) throws {
        self.limits = limits
        writer = LanePool(kind: "write", lanes: [Lane(open, name: "hreader.web.write")], waiting: limits.waiting, standing: limits.line)
        var lanes: [Lane] = []
        for index in 0..<limits.readers {
            lanes.append(Lane(try open.reader(), name: "hreader.web.read.\(index)"))
        }
        readers = LanePool(kind: "read", lanes: lanes, waiting: limits.waiting, standing: limits.line)
        watch = try ChangeWatch(try open.reader())
    }

    /// The vault's state as a number that grows with every change committed since the gate opened,
    /// by the server or by anyone else (a command run beside it), without waiting for a lane: what
    /// `ViewCache` keys its answers by. A change committed while a view is computed makes the next
    /// call answer a new state, so a kept answer is never older than its state.
    func state() throws -> Int64 { try watch.state() }

    /// Runs `body` on a read-only connection, beside other reads.
    func read<T: Sendable>(_ body: @escaping @Sendable (OpenVault) throws -> T) async throws -> T {
        try await readers.run(body, budget: limits.budget)
    }

    /// Runs `body` on the vault's own connection, one writer at a time.
    func write<T: Sendable>(_ body: @escaping @Sendable (OpenVault) throws -> T) async throws -> T {
        try await writer.run(body, budget: limits.budget)
    }

    /// Refuses new requests, answers the waiting ones and interrupts the running ones: the server is stopping.
    func close() {
        readers.close()
        writer.close()
    }

    /// Waits (up to `grace`) until no lane runs anything, so the vault can be closed behind them.
    func drained(within grace: Duration) async {
        let deadline = ContinuousClock.now + grace
        while (readers.busy || writer.busy) && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

/// A connection of its own that only asks whether the vault changed (`changesSeen`): a question
/// answered from the WAL index in microseconds, so it needs no lane.
private final class ChangeWatch: @unchecked Sendable {
    // @unchecked: `seen` and `counted` are used only under `lock`.
    private let open: OpenVault
    private let lock = NIOLock()
    private var seen: Int64
    private var counted: Int64 = 0

    init(_ open: OpenVault) throws {
        self.open = open
        seen = try open.changesSeen()
    }

    func state() throws -> Int64 {
        try lock.withLock {
            let now = try open.changesSeen()
            if now != seen { (seen, counted) = (now, counted + 1) }
            return counted
        }
    }
}

/// One connection and the serial queue its jobs run on (`interrupt()` reaches a running job's
/// statement from any thread; the connection outlives the gate's use).
private final class Lane: Sendable {
    let open: OpenVault
    let queue: DispatchQueue

    init(_ open: OpenVault, name: String) {
        self.open = open
        queue = DispatchQueue(label: name)
    }
}

/// A request's unit of work: it waits, runs on a lane, and is answered exactly once, either by its
/// result or, when stopped, at once by why (a stopped job's lane finishes in the background, and stays
/// counted as busy until it has, so a stuck plugin cannot hold up a shutdown or pile up work).
private final class Job: Sendable {
    private struct State {
        var lane: Lane?
        var started = false
        var answered = false
    }
    private let state = NIOLockedValueBox(State())
    private let work: @Sendable (OpenVault) -> Result<any Sendable, Error>
    private let answer: @Sendable (Result<any Sendable, Error>) -> Void

    init(work: @escaping @Sendable (OpenVault) -> Result<any Sendable, Error>,
         answer: @escaping @Sendable (Result<any Sendable, Error>) -> Void) {
        self.work = work
        self.answer = answer
    }

    /// On the lane's queue: runs the job unless it has been answered already (stopped while it waited).
    func run(on lane: Lane) {
        let start: Bool = state.withLockedValue { state in
            guard !state.answered else { return false }
            state.lane = lane
            state.started = true
            return true
        }
        guard start else { return }
        let result = work(lane.open)
        if claimAnswer() { answer(result) }
    }

    /// Stops the job: it is answered now with `error` unless it was already, and a running statement is
    /// interrupted. True when it had not started (the caller takes it out of the line).
    @discardableResult
    func stop(with error: Error) -> Bool {
        let (answering, lane, waiting): (Bool, Lane?, Bool) = state.withLockedValue { state in
            let answering = !state.answered
            state.answered = true
            return (answering, state.lane, !state.started)
        }
        if answering {
            lane?.open.interrupt()
            answer(.failure(error))
        }
        return answering && waiting
    }

    private func claimAnswer() -> Bool {
        state.withLockedValue { state in
            defer { state.answered = true }
            return !state.answered
        }
    }
}

/// Lanes of one kind, the idle ones, and the bounded line of jobs waiting for one.
private final class LanePool: Sendable {
    let kind: String
    private let waitingLimit: Int
    private let lanes: Int
    /// Zero: no standing-line rule.
    private let standing: Duration
    private struct State {
        var idle: [Lane]
        var line: [Job] = []
        /// When each job of `line` joined it.
        var joined: [ContinuousClock.Instant] = []
        /// Handed to a lane and not yet done.
        var active: [Job] = []
        var closed = false
    }
    private let state: NIOLockedValueBox<State>
    private static let timers = DispatchQueue(label: "hreader.web.budget")

    init(kind: String, lanes: [Lane], waiting: Int, standing: Duration) {
        self.kind = kind
        self.waitingLimit = waiting
        self.lanes = lanes.count
        self.standing = standing
        state = NIOLockedValueBox(State(idle: lanes))
    }

    var busy: Bool { state.withLockedValue { !$0.active.isEmpty } }

    func run<T: Sendable>(_ body: @escaping @Sendable (OpenVault) throws -> T, budget: Duration) async throws -> T {
        let link = ClientLink.current
        if link?.isGone == true { throw CancellationError() }
        let seconds = Double(budget.components.seconds) + Double(budget.components.attoseconds) / 1e18
        let slot = NIOLockedValueBox<Job?>(nil)
        let value = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<any Sendable, Error>) in
                let job = Job(work: { open in Result { try body(open) } }, answer: { continuation.resume(with: $0) })
                slot.withLockedValue { $0 = job }
                let timeUp = "the request took longer than \(Self.format(seconds)) s and was stopped; try again, or ask for less"
                Self.timers.asyncAfter(deadline: .now() + seconds) { [weak self] in
                    if job.stop(with: VaultGate.Saturated(message: timeUp)) { self?.remove(job) }
                }
                link?.onGone { [weak self] in
                    if job.stop(with: CancellationError()) { self?.remove(job) }
                }
                if Task.isCancelled {
                    job.stop(with: CancellationError())
                } else {
                    submit(job)
                }
            }
        } onCancel: {
            if let job = slot.withLockedValue({ $0 }), job.stop(with: CancellationError()) { self.remove(job) }
        }
        return value as! T   // `work` returns what `body` did
    }

    /// Starts the job on an idle lane, or puts it in line, or refuses it when the line is full.
    private func submit(_ job: Job) {
        enum Next { case run(Lane), wait, refuse(String) }
        let next: Next = state.withLockedValue { state in
            if state.closed { return .refuse("the server is stopping") }
            if let lane = state.idle.popLast() {
                state.active.append(job)
                return .run(lane)
            }
            let busy = "the server is busy (\(state.active.count) \(kind)s running, \(state.line.count) waiting); try again shortly"
            guard state.line.count < waitingLimit else { return .refuse(busy) }
            let now = ContinuousClock.now
            if standing > .zero, state.line.count >= lanes, let oldest = state.joined.first, now - oldest > standing {
                return .refuse(busy)
            }
            state.line.append(job)
            state.joined.append(now)
            return .wait
        }
        switch next {
        case let .run(lane): start(job, on: lane)
        case .wait: break
        case let .refuse(message): job.stop(with: VaultGate.Saturated(message: message))
        }
    }

    private func start(_ job: Job, on lane: Lane) {
        lane.queue.async {
            job.run(on: lane)
            self.release(lane, from: job)
        }
    }

    /// The lane is free: the next job in line gets it, else it goes idle.
    private func release(_ lane: Lane, from done: Job) {
        let next: Job? = state.withLockedValue { state in
            state.active.removeAll { $0 === done }
            if !state.closed, !state.line.isEmpty {
                let next = state.line.removeFirst()
                state.joined.removeFirst()
                state.active.append(next)
                return next
            }
            state.idle.append(lane)
            return nil
        }
        if let next { start(next, on: lane) }
    }

    private func remove(_ job: Job) {
        state.withLockedValue { state in
            guard let index = state.line.firstIndex(where: { $0 === job }) else { return }
            state.line.remove(at: index)
            state.joined.remove(at: index)
        }
    }

    /// Refuses what comes, answers what waits, interrupts what runs.
    func close() {
        let (line, active): ([Job], [Job]) = state.withLockedValue { state in
            state.closed = true
            defer { state.line.removeAll(); state.joined.removeAll() }
            return (state.line, state.active)
        }
        for job in line + active { job.stop(with: CancellationError()) }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }
}
