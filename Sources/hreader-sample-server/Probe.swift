import Foundation
import HReaderJSON
import NIOHTTP1

/// `/probe/...`: lets a test see how a client spreads its requests (is a host's queue serial?)
/// and whether it sent credentials where it should not.
final class Probe: Sendable {
    private struct Counters {
        var generation = 0  // bumped by reset, so requests begun before it do not touch the new counts
        var inFlight = 0
        var maxInFlight = 0
        var order: [Int] = []
        var intervals: [(start: Double, end: Double?)] = []
        var requests = 0
        var requestsWithCredentials = 0
        /// When the first and the latest counted request arrived: a client's activity span on this server.
        var firstArrival: Double?
        var lastArrival: Double?
        /// Counted requests by method, and the first `logLimit` as "METHOD /path" (no query: it may
        /// hold a token), so a test can see what a client asked and whether it wrote.
        var methods: [String: Int] = [:]
        var log: [String] = []
    }

    static let logLimit = 10_000

    private let counters = LockedBox(Counters())

    static func isProbePath(_ path: String) -> Bool { path == "/probe" || path.hasPrefix("/probe/") }

    /// Counts a request other than /probe/stats and /probe/reset.
    func count(_ request: HTTPRequest) {
        let credentials = request.header("Authorization") != nil || request.queryValue("access_token") != nil
        let now = Clock.nowEpochMilliseconds()
        counters.withLock { counters in
            counters.requests += 1
            counters.methods[request.method.rawValue, default: 0] += 1
            if counters.log.count < Self.logLimit { counters.log.append("\(request.method.rawValue) \(request.path)") }
            if credentials { counters.requestsWithCredentials += 1 }
            if counters.firstArrival == nil { counters.firstArrival = now }
            counters.lastArrival = now
        }
    }

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        switch (request.method, request.path) {
        case (.GET, "/probe/work"):
            count(request)
            return await work(request)
        case (.GET, "/probe/stats"):
            return stats()
        case (.POST, "/probe/reset"):
            counters.withLock { counters in counters = Counters(generation: counters.generation + 1) }
            return Self.json(["reset": true])
        default:
            return HTTPResponse(status: .notFound, contentType: "application/json", text: #"{"error":"not_found"}"#)
        }
    }

    /// Waits `ms` on a timer (never blocking a thread), recording arrival order and overlap.
    private func work(_ request: HTTPRequest) async -> HTTPResponse {
        let i = request.queryValue("i").flatMap { Int($0) } ?? -1
        let milliseconds = min(max(request.queryValue("ms").flatMap { Int($0) } ?? 0, 0), 60_000)
        let start = Clock.nowEpochMilliseconds()
        let (generation, slot) = counters.withLock { counters in
            counters.order.append(i)
            counters.intervals.append((start, nil))
            counters.inFlight += 1
            counters.maxInFlight = max(counters.maxInFlight, counters.inFlight)
            return (counters.generation, counters.intervals.count - 1)
        }
        if milliseconds > 0 { try? await Task.sleep(nanoseconds: UInt64(milliseconds) * 1_000_000) }
        let end = Clock.nowEpochMilliseconds()
        counters.withLock { counters in
            guard counters.generation == generation else { return }
            counters.inFlight -= 1
            counters.intervals[slot].end = end
        }
        return Self.json(["i": .int(i)])
    }

    private func stats() -> HTTPResponse {
        let body: JSONValue = counters.withLock { counters in
            [
                "max_in_flight": .int(counters.maxInFlight),
                "in_flight": .int(counters.inFlight),
                "order": .array(counters.order.map { .int($0) }),
                // An unfinished request's end is null.
                "intervals": .array(counters.intervals.map { [Self.number($0.start), $0.end.map(Self.number) ?? .null] }),
                "requests": .int(counters.requests),
                "requests_with_credentials": .int(counters.requestsWithCredentials),
                "first_arrival": counters.firstArrival.map(Self.number) ?? .null,
                "last_arrival": counters.lastArrival.map(Self.number) ?? .null,
                "methods": .object(JSONObject(sortingKeysOf: counters.methods, JSONValue.int)),
                "log": .array(counters.log.map { .string($0) }),
            ]
        }
        return Self.json(body)
    }

    private static func number(_ value: Double) -> JSONValue { .decimal(value, places: 3) }

    private static func json(_ body: JSONValue) -> HTTPResponse {
        HTTPResponse(status: .ok, contentType: "application/json", body: body.serializedBytes())
    }
}
