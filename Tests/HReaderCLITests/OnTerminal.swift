import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// hreader on a pseudo-terminal (util-linux `script`), as a person runs it: its output is read as
/// it comes, and answers are typed into it.
final class OnTerminal {
    let process = Process()
    let output: URLOutput
    private let input = Pipe()

    final class URLOutput {
        let url: URL
        init(_ url: URL) { self.url = url }
        var text: String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
    }

    init(_ binary: URL, _ arguments: [String], workDir: URL, environment: [String: String]) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { throw XCTSkip("no /usr/bin/script for a pseudo-terminal") }
        let quoted = ([binary.path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", quoted, "/dev/null"]
        process.environment = environment
        output = URLOutput(workDir.appendingPathComponent("tty-\(UUID().uuidString)"))
        _ = FileManager.default.createFile(atPath: output.url.path, contents: nil)
        process.standardInput = input
        process.standardOutput = try FileHandle(forWritingTo: output.url)
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var outputText: String { output.text }

    /// Waits up to a minute for `condition` on what the terminal showed.
    func wait(_ condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if condition(output.text) { return true }
            if !process.isRunning { return condition(output.text) }
            usleep(20_000)
        }
        return false
    }

    /// Types into the terminal; nothing when hreader has already ended (no SIGPIPE for the tests).
    func type(_ text: String) {
        guard process.isRunning else { return }
        signal(SIGPIPE, SIG_IGN)
        try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
    }

    /// Waits for the end and returns the exit status.
    func finish() -> Int32 {
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { stop() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
