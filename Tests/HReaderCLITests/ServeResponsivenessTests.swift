import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader serve` stays responsive (issue 41): a slow request never holds up the others, a saturated
/// server answers 503 with `Retry-After` instead of queueing without bound, a request past its time is
/// stopped, and SIGTERM or Ctrl-C stop a busy server within two seconds. The slow request is a real
/// one: a summary whose plugin applet (a shell script in the plugins directory) takes seconds.
final class ServeResponsivenessTests: CLITestCase {
    /// A plugin that answers after `seconds`, writing its pid first (so the test can end it).
    func slowPlugin(seconds: Int) throws -> String {
        let plugins = workDir.appendingPathComponent(".config/hreader/plugins")
        for directory in [workDir.appendingPathComponent(".config"), workDir.appendingPathComponent(".config/hreader"), plugins] {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            chmod(directory.path, 0o700)
        }
        let pids = workDir.appendingPathComponent("slow.pids").path
        let path = plugins.appendingPathComponent("slow.sh").path
        try Data("#!/bin/sh\necho $$ >> '\(pids)'\ncat > /dev/null\nsleep \(seconds)\necho '{\"value\": \"slow\"}'\n".utf8)
            .write(to: URL(fileURLWithPath: path))
        chmod(path, 0o700)
        let list = try file("slow.plist", """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><array><dict><key>identifier</key><string>org.example.slow</string>
            <key>display_name</key><string>Slow</string><key>executable</key><string>slow.sh</string>
            <key>timeout</key><real>\(seconds * 2)</real></dict></array></plist>
            """)
        try ok(withPassword(["applets", "add", "org.example.slow", "--patient", "1", "--applets", list, "--trust-plugin"]))
        return list
    }

    override func tearDownWithError() throws {
        // The slow plugins the tests left running (a stopped server does not wait for them).
        let pids = (try? String(contentsOfFile: workDir.appendingPathComponent("slow.pids").path, encoding: .utf8)) ?? ""
        for pid in pids.split(separator: "\n").compactMap({ Int32($0) }) { kill(pid, SIGKILL) }
        try super.tearDownWithError()
    }

    /// Sends each request on its own connection and thread, all at once; the answers in order.
    func concurrently(_ served: ServedVault, _ paths: [String]) -> [RawHTTP.Response?] {
        let answers = NSLock()
        nonisolated(unsafe) var results = [RawHTTP.Response?](repeating: nil, count: paths.count)
        let group = DispatchGroup()
        for (index, path) in paths.enumerated() {
            group.enter()
            Thread.detachNewThread {
                let answer = try? served.bearer(path)
                answers.withLock { results[index] = answer }
                group.leave()
            }
        }
        group.wait()
        return answers.withLock { results }
    }

    func testReadsAnswerWhileASlowSummaryRuns() throws {
        try seedFamily()
        let list = try slowPlugin(seconds: 3)
        let served = try serve(["--applets", list])
        defer { stop(served) }
        let clock = NSLock()
        nonisolated(unsafe) var summaryDone = Date.distantFuture
        nonisolated(unsafe) var summary: RawHTTP.Response?
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let answer = try? served.bearer("/api/patients/1/summary")
            clock.withLock { (summary, summaryDone) = (answer, Date()) }
            done.signal()
        }
        usleep(500_000)   // the summary is running its plugin
        var readsDone = Date()
        for path in ["/api/patients", "/api/patients/1/entries", "/timeline.json?patient=1&page=week", "/api/search?q=lisinopril",
                     "/api/patients/1/vitals", "/patients/1/timeline",
                     // Charles's summary has built-in tiles only: it reads, beside the plugin's summary.
                     "/api/patients/2/summary", "/patients/2"] {
            XCTAssertEqual(try served.bearer(path).status, 200, path)
            readsDone = Date()
        }
        done.wait()
        clock.withLock {
            XCTAssertEqual(summary?.status, 200, summary?.body ?? "no answer")
            XCTAssertTrue(summary?.body.contains("slow") == true, "the plugin's tile is there")
            XCTAssertLessThan(readsDone, summaryDone, "the reads were answered while the summary ran, not after it")
        }
    }

    func testASaturatedServerAnswers503WithRetryAfterAndARequestPastItsTimeIsStopped() throws {
        try seedFamily()
        let list = try slowPlugin(seconds: 8)
        // One reader (HREADER_SERVE_READERS): 8 per reader may wait, whatever the machine's cores. With
        // the variable ignored, a machine of 2 or more cores lets all 14 wait, and no answer says busy.
        let readers = 1
        let served = try serve(["--applets", list], env: ["HREADER_SERVE_REQUEST_SECONDS": "1", "HREADER_SERVE_READERS": "\(readers)"])
        defer { stop(served) }
        // Summaries go one at a time (they may write): one runs, a bounded line waits, the rest are refused.
        let count = 8 * readers + 6
        let started = Date()
        let answers = concurrently(served, Array(repeating: "/api/patients/1/summary", count: count))
        let elapsed = Date().timeIntervalSince(started)
        print(String(format: "serve: %d summaries behind an 8 s plugin answered in %.2f s", count, elapsed))
        XCTAssertLessThan(elapsed, 6, "every request was answered within its 1 s budget, none waited for the 8 s plugin")
        for answer in answers {
            let answer = try XCTUnwrap(answer, "every request is answered")
            XCTAssertEqual(answer.status, 503, answer.body)
            XCTAssertEqual(answer.header("Retry-After"), "2")
            XCTAssertNotNil(answer.json["error"] as? String)
        }
        let messages = answers.compactMap { $0?.json["error"] as? String }
        XCTAssertTrue(messages.contains { $0.contains("the server is busy") }, "the line is bounded: \(Set(messages))")
        XCTAssertTrue(messages.contains { $0.contains("took longer than 1 s") }, "the budget is kept: \(Set(messages))")
        // Reads have their own connections: the writer's stuck plugin holds none of them up.
        XCTAssertEqual(try served.bearer("/api/patients/1/entries").status, 200)
        // A page gets the same answer as a page.
        let page = try served.bearer("/patients/1")
        XCTAssertEqual(page.status, 503)
        XCTAssertTrue(page.body.contains("<html") || page.body.contains("<!DOCTYPE"), page.body)
    }

    /// A line that stands is the server saturated: once as many wait as there are lanes and the oldest has
    /// waited past `HREADER_SERVE_LINE_MS`, a newcomer is refused at once rather than joining a line it
    /// would leave only at its budget's end. Without the rule the third summary below waits its 5 s.
    func testAStandingLineRefusesNewRequestsAtOnce() throws {
        try seedFamily()
        let list = try slowPlugin(seconds: 3)
        let served = try serve(["--applets", list], env: ["HREADER_SERVE_REQUEST_SECONDS": "5", "HREADER_SERVE_LINE_MS": "100"])
        defer { stop(served) }
        // Summaries with a plugin are writes, and there is one writer: the first runs its 3 s plugin,
        // the second waits (as many waiting as there are writer lanes).
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Thread.detachNewThread { _ = try? served.bearer("/api/patients/1/summary"); group.leave() }
            usleep(150_000)
        }
        usleep(300_000)   // the second has stood in line for longer than 100 ms
        let started = Date()
        let third = try served.bearer("/api/patients/1/summary")
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(third.status, 503, third.body)
        XCTAssertEqual(third.header("Retry-After"), "2")
        XCTAssertTrue((third.json["error"] as? String ?? "").contains("the server is busy"), third.body)
        XCTAssertLessThan(waited, 1.5, "refused at once, not after its 5 s budget")
        // Reads have lanes of their own, with no line standing: they are answered.
        XCTAssertEqual(try served.bearer("/api/patients/1/entries").status, 200)
        group.wait()
    }

    /// A request whose client has gone is stopped: one waiting behind a slow summary is taken out of
    /// the line, so its own plugin never runs.
    func testARequestWhoseClientHasGoneIsDropped() throws {
        try seedFamily()
        let list = try slowPlugin(seconds: 2)
        let served = try serve(["--applets", list])
        defer { stop(served) }
        let first = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? served.bearer("/api/patients/1/summary")
            first.signal()
        }
        usleep(400_000)   // the first summary runs its plugin
        try RawHTTP.sendAndHangUp(port: served.port, path: served.app("/api/patients/1/summary"),
                                  headers: [("Authorization", "Bearer \(served.token)")], after: 0.4)
        XCTAssertEqual(first.wait(timeout: .now() + 10), .success)
        usleep(1_500_000)   // time enough for a second plugin run to start, had it stayed in line
        let runs = try String(contentsOfFile: workDir.appendingPathComponent("slow.pids").path, encoding: .utf8)
            .split(separator: "\n").count
        XCTAssertEqual(runs, 1, "the summary whose client left was not computed")
        // The same connection's end while a request waits does not disturb the next client.
        XCTAssertEqual(try served.bearer("/api/patients").status, 200)
    }

    func testSIGTERMAndCtrlCStopABusyServerWithinTwoSeconds() throws {
        try seedFamily()
        let list = try slowPlugin(seconds: 30)
        for signal in [SIGTERM, SIGINT] {
            let served = try serve(["--applets", list])
            let answered = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                _ = try? served.bearer("/api/patients/1/summary")
                answered.signal()
            }
            usleep(700_000)   // mid-request: the plugin runs
            XCTAssertEqual(try served.bearer("/api/patients").status, 200)
            let started = Date()
            kill(served.running.process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(10)
            while served.running.process.isRunning && Date() < deadline { usleep(10_000) }
            let took = Date().timeIntervalSince(started)
            print(String(format: "serve: stopped by signal %d mid-request in %.2f s", signal, took))
            let result = stop(served)
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertLessThan(took, 2.5, "stopped within two seconds (and a little slack for a loaded machine)")
            XCTAssertEqual(answered.wait(timeout: .now() + 5), .success, "the client was answered or its connection closed")
        }
        // Nothing was left half-written: the vault opens and reads.
        XCTAssertTrue(try ok(withPassword(["patients", "list"])).stdout.contains("Lovelace"))
    }
}
