import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: 3c. The web view under load: 16 clients at once for 60 s over the mix a family's browsers
// send (a patient's page, timeline pages, search, vital charts), against a real `hreader serve`.
// Goal (issue 41): no error but 503s, p99 <= 250 ms for everything but the decade chart, the
// server's memory flat.

/// What one kind of request did under load.
private struct LoadTally {
    var seconds: [Double] = []
    var busy = 0
    var errors = 0
}

/// Runs `clients` clients for `duration` seconds against the server at `base` (the app's URL, ending
/// in its `/s/…` prefix) with `token` as a bearer; prints a row per kind of request, the throughput,
/// and the server's memory (resident, sampled every 250 ms from /proc).
func runServeLoad(base: String, token: String, serverPID: Int32, patient: String, end: Int64,
                  clients: Int = 16, duration: Double) {
    let kinds: [(name: String, weight: Int, path: @Sendable (inout SystemRandomNumberGenerator) -> String)] = [
        ("patient page (summary)", 2, { _ in "/api/patients/\(patient)/summary" }),
        ("timeline day", 4, { rng in "/timeline.json?patient=\(patient)&page=day&at=\(end - Int64.random(in: 0..<(9 * 365 * 86_400), using: &rng))" }),
        ("timeline week", 3, { rng in "/timeline.json?patient=\(patient)&page=week&at=\(end - Int64.random(in: 0..<(9 * 365 * 86_400), using: &rng))" }),
        ("timeline month", 2, { rng in "/timeline.json?patient=\(patient)&page=month&at=\(end - Int64.random(in: 0..<(9 * 365 * 86_400), using: &rng))" }),
        ("search", 2, { rng in "/api/search?q=\(["heart", "steps", "blood", "walking", "pressure"].randomElement(using: &rng)!)" }),
        ("vital charts, a month", 2, { rng in "/api/patients/\(patient)/vitals?page=month&at=\(end - Int64.random(in: 0..<(9 * 365 * 86_400), using: &rng))" }),
        ("vital charts, the decade", 1, { _ in "/api/patients/\(patient)/vitals?page=decade&at=\(end)" }),
    ]
    let deck = kinds.indices.flatMap { Array(repeating: $0, count: kinds[$0].weight) }
    let tallies = NSLock()
    nonisolated(unsafe) var tally = [LoadTally](repeating: LoadTally(), count: kinds.count)
    nonisolated(unsafe) var peakKB = 0, startKB = 0, lastKB = 0
    @Sendable func residentKB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(serverPID)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    // CPU seconds (user and system) of the server, from /proc, and of this process, the clients':
    // on two cores the clients' share is taken from the server.
    func serverCPU() -> Double {
        let stat = (try? String(contentsOfFile: "/proc/\(serverPID)/stat", encoding: .utf8)) ?? ""
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        let ticks = fields.count > 12 ? (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0) : 0
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
    let serverBefore = serverCPU()
    let clientsBefore = processCPUSeconds()
    startKB = residentKB()
    let stop = Date().addingTimeInterval(duration)
    let group = DispatchGroup()
    group.enter()
    Thread.detachNewThread {
        while Date() < stop {
            let kb = residentKB()
            tallies.withLock { peakKB = max(peakKB, kb); lastKB = kb }
            Thread.sleep(forTimeInterval: 0.25)
        }
        group.leave()
    }
    for _ in 0..<clients {
        group.enter()
        Thread.detachNewThread {
            // One browser: its own kept-alive connection, the token as a bearer, no cache.
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.httpAdditionalHeaders = ["Authorization": "Bearer \(token)"]
            configuration.timeoutIntervalForRequest = 120
            let session = URLSession(configuration: configuration)
            var rng = SystemRandomNumberGenerator()
            while Date() < stop {
                let kind = deck.randomElement(using: &rng)!
                let url = URL(string: base + kinds[kind].path(&rng))!
                let done = DispatchSemaphore(value: 0)
                nonisolated(unsafe) var status = -1
                nonisolated(unsafe) var retryAfter = 0.0
                let started = DispatchTime.now()
                session.dataTask(with: url) { _, response, _ in
                    let http = response as? HTTPURLResponse
                    status = http?.statusCode ?? -1
                    retryAfter = (http?.value(forHTTPHeaderField: "Retry-After")).flatMap(Double.init) ?? 0
                    done.signal()
                }.resume()
                done.wait()
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
                tallies.withLock {
                    switch status {
                    case 200: tally[kind].seconds.append(seconds)
                    case 503: tally[kind].busy += 1
                    default: tally[kind].errors += 1
                    }
                }
                // As the web view's script does: a 503 is asked again after its Retry-After, at most 5 s.
                if status == 503 { Thread.sleep(forTimeInterval: min(max(retryAfter, 0), 5)) }
            }
            session.finishTasksAndInvalidate()
            group.leave()
        }
    }
    group.wait()
    let serverSpent = serverCPU() - serverBefore, clientsSpent = processCPUSeconds() - clientsBefore
    let final = tallies.withLock { tally }
    var answered = 0, busy = 0, errors = 0
    for (index, kind) in kinds.enumerated() {
        let t = final[index]
        answered += t.seconds.count
        busy += t.busy
        errors += t.errors
        let p50 = t.seconds.isEmpty ? 0 : percentile(t.seconds, 0.5), p99 = t.seconds.isEmpty ? 0 : percentile(t.seconds, 0.99)
        row("  \(kind.name): p99", ms(p99), String(format: "p50 %.1f ms; %d answered, %d busy (503), %d errors", p50 * 1000, t.seconds.count, t.busy, t.errors))
    }
    row("  all: requests answered per second", String(format: "%8.1f /s", Double(answered) / duration),
        "\(clients) clients for \(Int(duration)) s; \(busy) answered 503, \(errors) errors (goal: none but 503s)")
    row("  CPU: the server's", String(format: "%8.1f s", serverSpent),
        String(format: "the clients' %.1f s, of %.0f s of the machine's %d cores; the server %.1f ms a request answered",
               clientsSpent, duration * Double(ProcessInfo.processInfo.activeProcessorCount), ProcessInfo.processInfo.activeProcessorCount,
               serverSpent * 1000 / Double(max(answered, 1))))
    let (peak, first, last) = tallies.withLock { (peakKB, startKB, lastKB) }
    row("  server memory: peak resident", String(format: "%8.1f MB", Double(peak) / 1024),
        String(format: "%.1f MB before the load, %.1f MB at its end (goal: flat)", Double(first) / 1024, Double(last) / 1024))
}
