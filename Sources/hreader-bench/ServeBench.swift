import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderStore

// MARK: 3b. The web view: timeline.json over HTTP from a real `hreader serve`, against the same page
// queried in this process (the figures of section 3). The difference is what serving costs: HTTP on
// loopback, the vault gate's queue, the guard, and the browser's share of the work (none here).

func runServeBenchmarks(hreader: URL, vault: URL, session: String, patient: Patient, end: Int64, load: Bool = false,
                        direct: (TimelineRange) throws -> Double) throws {
    guard FileManager.default.isExecutableFile(atPath: hreader.path) else { return }
    say("\n== The web view: GET /timeline.json from hreader serve versus the same query in process ==")
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-bench-serve-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: output) }
    let server = Process()
    server.executableURL = hreader
    server.arguments = ["serve", "--vault", vault.path, "--quiet"]
    server.environment = ["HREADER_SESSION": session, "PATH": "/usr/bin:/bin"]
    // The server's own tuning, when the run sets it (to compare reader counts on one vault).
    for name in ["HREADER_SERVE_READERS", "HREADER_SERVE_REQUEST_SECONDS"] {
        if let value = ProcessInfo.processInfo.environment[name] { server.environment?[name] = value }
    }
    server.standardOutput = try FileHandle(forWritingTo: output)
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer { server.interrupt(); server.waitUntilExit() }
    var printed = ""
    let deadline = Date().addingTimeInterval(30)
    while !printed.contains("\n"), Date() < deadline, server.isRunning {
        usleep(20_000)
        printed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }
    guard let url = URL(string: printed.split(separator: "\n").first.map(String.init) ?? ""),
          let token = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first(where: { $0.name == "token" })?.value,
          let port = url.port else {
        say("  (hreader serve did not start; skipped)")
        return
    }
    // A script's client: the token as a bearer, one kept-alive connection, no cache.
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.httpAdditionalHeaders = ["Authorization": "Bearer \(token)"]
    let client = URLSession(configuration: configuration)
    defer { client.finishTasksAndInvalidate() }
    // Every path of the app is under the printed URL's prefix (/s/…).
    let app = url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path
    /// The answer's size; a status other than 200 (a 503 once a request outlives the server's
    /// budget, HREADER_SERVE_REQUEST_SECONDS) is thrown as `Refused`.
    struct Refused: Error { let status: Int }
    func get(_ path: String) throws -> Int {
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var bytes = -1, status = 0
        client.dataTask(with: URL(string: "http://127.0.0.1:\(port)\(app)\(path)")!) { data, response, _ in
            status = (response as? HTTPURLResponse)?.statusCode ?? 0
            if status == 200 { bytes = data?.count ?? 0 }
            semaphore.signal()
        }.resume()
        semaphore.wait()
        guard bytes >= 0 else { throw Refused(status: status) }
        return bytes
    }

    for page in TimelinePage.allCases {
        let runs = page == .decade ? 5 : (page == .year ? 10 : 40)
        var served: [Double] = [], inProcess: [Double] = [], size = 0
        var rng = SystemRandomNumberGenerator()
        var refused: (status: Int, after: Double)?
        for _ in 0..<runs where refused == nil {
            let at = page == .decade ? end : end - Int64.random(in: 0..<(9 * 365 * 86_400), using: &rng)
            let range = TimelineRange.page(page, at: ClinicalTime(epoch: at))
            let started = Date()
            do {
                served.append(try seconds { size = try get("/timeline.json?patient=\(patient.uuid)&page=\(page.rawValue)&at=\(at)") })
            } catch let error as Refused {
                refused = (error.status, Date().timeIntervalSince(started))
                break
            }
            inProcess.append(try direct(range))
        }
        if let refused {
            row("  \(page.rawValue): GET /timeline.json", "refused",
                String(format: "HTTP %d after %.1f s: the page outlives the server's budget for a request (HREADER_SERVE_REQUEST_SECONDS)",
                       refused.status, refused.after))
            continue
        }
        row("  \(page.rawValue): GET /timeline.json (\(size / 1024) KiB) median", ms(median(served)),
            String(format: "in process %.2f ms (%.2fx); p99 %.2f ms", median(inProcess) * 1000,
                   median(served) / max(median(inProcess), 1e-9), percentile(served, 0.99) * 1000))
    }
    var charts: [Double] = [], size = 0
    for _ in 0..<5 {
        do { charts.append(try seconds { size = try get("/api/patients/\(patient.uuid)/vitals?page=decade&at=\(end)") }) } catch let error as Refused {
            say("  decade: GET …/vitals refused with HTTP \(error.status)")
            break
        }
    }
    if !charts.isEmpty {
        // The first is computed; the server keeps the answer until the vault changes (ViewCache).
        row("  decade: GET …/vitals (charts, \(size / 1024) KiB) first", ms(charts[0]),
            "every vital sign of ten years, averaged to <= 400 points a series (goal <= 0.5 s at 10M samples)")
        row("    asked again (kept) median", ms(median(Array(charts.dropFirst()))), "until the vault changes, at most a minute")
    }
    guard load else { return }
    // HREADER_BENCH_LOAD_SECONDS shortens (or, 0, skips) the load run; the figure is 60 s.
    let loadSeconds = Double(ProcessInfo.processInfo.environment["HREADER_BENCH_LOAD_SECONDS"] ?? "") ?? 60
    guard loadSeconds > 0 else { return }
    say("\n== The web view under load: 16 clients for \(Int(loadSeconds)) s (patient pages, timeline pages, search, vital charts) ==")
    runServeLoad(base: "http://127.0.0.1:\(port)\(app)", token: token, serverPID: server.processIdentifier, patient: patient.uuid,
                 end: end, duration: loadSeconds)
}

/// `HREADER_BENCH_ONLY=serve`: the web view's figures and the load run on a vault made beforehand
/// (`HREADER_BENCH_SERVE_VAULT`, opened with `HREADER_SESSION`), so that the load run at ten million
/// samples can be had without the minutes of its import and of the other rows.
func runServeOnGivenVault() throws {
    let environment = ProcessInfo.processInfo.environment
    guard let path = environment["HREADER_BENCH_SERVE_VAULT"], let token = environment["HREADER_SESSION"],
          let (_, hreader) = siblingBinaries() else {
        say("  (set HREADER_BENCH_SERVE_VAULT and HREADER_SESSION; skipped)")
        return
    }
    let service = VaultService(vault: Vault(root: URL(fileURLWithPath: path)))
    let vault = try service.open(.session(token))
    guard let patient = try vault.allPatients().first,
          let latest = try vault.inDatabase({ try EntryRepository($0).latestTime(patientID: patient.id) }) else { return }
    say("\n== The web view on \(path) ==")
    try runServeBenchmarks(hreader: hreader, vault: service.vault.root, session: token, patient: patient, end: latest, load: true) { range in
        try seconds {
            var out = JSONByteWriter { _ in }
            try vault.writeTimeline(patient: patient, query: TimelineQuery(range: range), to: &out)
        }
    }
}
