import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What a run of the real `hreader` binary left behind.
struct CLIResult {
    let status: Int32
    let stdout: String
    let stderr: String
    /// The process ended by a signal (a crash, or our kill), not by exit().
    let signaled: Bool

    var succeeded: Bool { status == 0 && !signaled }
}

/// Base class for tests that run the built `hreader` as a separate process, in a private temporary
/// directory that holds the vault, the password files and the child's $TMPDIR and $HOME.
class CLITestCase: XCTestCase {
    var workDir: URL!
    var vaultDir: URL { workDir.appendingPathComponent("vault") }
    var childTemp: URL { workDir.appendingPathComponent("tmp") }

    static let password = "Secret-Pass1"
    static let newPassword = "Changed-Pass2"
    /// Cheap KDF settings for speed, through the documented option (one test uses the defaults).
    static let cheapKDF = ["--scrypt-n", "1024"]

    override func setUpWithError() throws {
        workDir = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: childTemp, withIntermediateDirectories: true)
        _ = try file("password", Self.password + "\n")
        _ = try file("new-password", Self.newPassword + "\n")
    }

    override func tearDownWithError() throws {
        if let workDir { try? FileManager.default.removeItem(at: workDir) }
    }

    /// The hreader binary built beside the test bundle (or $HREADER_BINARY).
    static let binary: URL = BuiltProducts.url(of: "hreader", environmentOverride: "HREADER_BINARY")

    /// Writes a file in the work directory (mode 0600) and returns its path.
    @discardableResult
    func file(_ name: String, _ contents: String) throws -> String {
        let url = workDir.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        chmod(url.path, 0o600)
        return url.path
    }

    var passwordFile: String { workDir.appendingPathComponent("password").path }
    var newPasswordFile: String { workDir.appendingPathComponent("new-password").path }

    /// A clean environment: no session or password inherited from whoever runs the tests.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workDir.path, "TMPDIR": childTemp.path,
                   "HREADER_VAULT": vaultDir.path, "LANG": "C.UTF-8"]
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Runs hreader with stdin from /dev/null (no terminal) and waits, killing it after `timeout`.
    @discardableResult
    func hreader(_ arguments: [String], env extra: [String: String] = [:], timeout: TimeInterval = 60,
                 file: StaticString = #filePath, line: UInt = #line) throws -> CLIResult {
        let process = try start(arguments, env: extra)
        let deadline = Date().addingTimeInterval(timeout)
        while process.process.isRunning && Date() < deadline { usleep(2_000) }
        if process.process.isRunning {
            kill(process.process.processIdentifier, SIGKILL)
            process.process.waitUntilExit()
            XCTFail("hreader \(arguments.joined(separator: " ")) did not finish within \(timeout) s", file: file, line: line)
        }
        return process.finish()
    }

    struct Running {
        let process: Process
        let out: URL
        let err: URL

        func finish() -> CLIResult {
            process.waitUntilExit()
            let stdout = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
            let stderr = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
            return CLIResult(status: process.terminationStatus, stdout: stdout, stderr: stderr,
                             signaled: process.terminationReason == .uncaughtSignal)
        }
    }

    /// Starts hreader without waiting (for kill tests and concurrency tests). With
    /// `addressSpaceKB`, through `/bin/sh` under `ulimit -v` of that many KiB: a child that tries to
    /// map more fails (its allocations do), however briefly it would have held it.
    func start(_ arguments: [String], env extra: [String: String] = [:], addressSpaceKB: Int? = nil) throws -> Running {
        let id = UUID().uuidString
        let out = workDir.appendingPathComponent("out-\(id)"), err = workDir.appendingPathComponent("err-\(id)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        if let addressSpaceKB {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -v \(addressSpaceKB) && exec \"$0\" \"$@\"", Self.binary.path] + arguments
        } else {
            process.executableURL = Self.binary
            process.arguments = arguments
        }
        process.environment = environment(extra)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        return Running(process: process, out: out, err: err)
    }

    /// Runs hreader and samples its peak resident memory (the kernel's `VmHWM`) while it runs, in MB;
    /// `addressSpaceKB` as `start`'s.
    func hreaderMeasuringMemory(_ arguments: [String], env extra: [String: String] = [:], addressSpaceKB: Int? = nil) throws -> (CLIResult, Double) {
        let running = try start(arguments, env: extra, addressSpaceKB: addressSpaceKB)
        let pid = running.process.processIdentifier
        var peakKB = 0
        let deadline = Date().addingTimeInterval(120)
        while running.process.isRunning && Date() < deadline {
            if let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
               let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
               let kb = Int(line.split(whereSeparator: \.isWhitespace).dropFirst().first ?? "") {
                peakKB = max(peakKB, kb)
            }
            usleep(2_000)
        }
        if running.process.isRunning { kill(pid, SIGKILL) }
        return (running.finish(), Double(peakKB) / 1024)
    }

    /// Creates a vault with the cheap KDF (or `kdf`), and returns the recovery key it printed.
    @discardableResult
    func initVault(kdf: [String] = CLITestCase.cheapKDF, extra: [String] = [],
                   file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let result = try hreader(["init", "--new-password-file", passwordFile] + kdf + extra)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        return try XCTUnwrap(Self.recoveryKey(in: result.stdout), "no recovery key in: \(result.stdout)", file: file, line: line)
    }

    static func recoveryKey(in output: String) -> String? {
        output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first {
            $0.count == 39 && $0.split(separator: "-").count == 8
        }
    }

    /// Runs a command that must succeed, opening the vault with the password file.
    @discardableResult
    func ok(_ arguments: [String], env extra: [String: String] = [:], file: StaticString = #filePath, line: UInt = #line) throws -> CLIResult {
        let result = try hreader(arguments, env: extra)
        XCTAssertEqual(result.status, 0, "hreader \(arguments.joined(separator: " ")): \(result.stderr)", file: file, line: line)
        return result
    }

    func withPassword(_ arguments: [String]) -> [String] { arguments + ["--password-file", passwordFile] }

    /// Parses JSON output.
    func json(_ result: CLIResult, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try XCTUnwrap(object as? [String: Any], file: file, line: line)
    }

    /// Every regular file under `directory`, with its bytes.
    func filesWithContents(under directory: URL) -> [(path: String, data: Data)] {
        guard let e = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        return e.compactMap { $0 as? URL }.compactMap { url in
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true,
                  let data = FileManager.default.contents(atPath: url.path) else { return nil }
            return (url.path, data)
        }
    }

    /// Fails for every file in the vault directory and the child's temporary directory that holds
    /// one of `secrets` (as UTF-8 or UTF-16) or a plaintext SQLite header; returns the files scanned.
    @discardableResult
    func assertNoPlaintext(_ secrets: [String], file: StaticString = #filePath, line: UInt = #line) -> [(path: String, data: Data)] {
        let files = filesWithContents(under: vaultDir) + filesWithContents(under: childTemp)
        for (path, data) in files {
            for secret in secrets {
                for form in secret.encodedForms {
                    XCTAssertFalse(data.containsBytes(form), "\(path) contains a known secret", file: file, line: line)
                }
            }
            XCTAssertFalse(data.containsBytes(Data("SQLite format 3".utf8)), "\(path) has a plaintext SQLite header", file: file, line: line)
        }
        return files
    }

    /// A snapshot of the vault directory: path → bytes.
    func snapshot() -> [String: Data] {
        Dictionary(uniqueKeysWithValues: filesWithContents(under: vaultDir).map { ($0.path, $0.data) })
    }
}

extension String {
    /// UTF-8, UTF-16LE and UTF-16BE forms, as they could appear in a file.
    var encodedForms: [Data] {
        [Data(utf8), data(using: .utf16LittleEndian)!, data(using: .utf16BigEndian)!]
    }
}

/// The repository's Apple Health export generator (hreader-health-generator), run as a process.
enum HealthExportGenerator {
    /// Writes an export (`.zip` or `.xml` by the name) of `records` Records over `days` days; `extra`
    /// are more of the generator's options (`--counts FILE`, `--export-name NAME`).
    static func write(_ url: URL, records: Int, days: Int, extra: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let generator = Process()
        generator.executableURL = BuiltProducts.url(of: "hreader-health-generator")
        generator.arguments = ["--out", url.path, "--records", String(records), "--days", String(days)] + extra
        generator.standardOutput = FileHandle.nullDevice
        try generator.run()
        generator.waitUntilExit()
        XCTAssertEqual(generator.terminationStatus, 0, "hreader-health-generator failed", file: file, line: line)
    }
}
