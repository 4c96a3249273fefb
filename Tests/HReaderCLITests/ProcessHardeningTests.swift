import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// What the running `hreader` process lets others see: no core file, no register dump on a crash, and
/// (Linux) nothing of it through /proc for another process of the same user, such as a plugin applet
/// reading its parent's environment for `HREADER_SESSION`. Read from /proc while a real `hreader`
/// waits on a slow `--password-command`.
final class ProcessHardeningTests: CLITestCase {
    /// Starts `hreader status` whose password command sleeps, optionally as another user, and waits
    /// until that command runs (so the process is past its start-up).
    func startWaiting(as user: UInt32? = nil, vault: String, env extra: [String: String] = [:]) throws -> Process {
        let process = Process()
        let arguments = ["status", "--vault", vault, "--password-command", "sleep 5; echo \(Self.password)"]
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--", Self.binary.path] + arguments
        } else {
            process.executableURL = Self.binary
            process.arguments = arguments
        }
        process.environment = environment(extra)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !hasChild(process.processIdentifier) { usleep(20_000) }
        XCTAssertTrue(hasChild(process.processIdentifier), "the password command did not start")
        return process
    }

    func hasChild(_ pid: Int32) -> Bool {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return !children.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }

    func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func testNoCoreFileAndNoCrashHandlerThatWouldPrintMemory() throws {
        try initVault()
        let process = try startWaiting(vault: vaultDir.path)
        defer { stop(process) }
        let limits = try String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)
        let core = try XCTUnwrap(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        XCTAssertEqual(core.split(separator: " ").dropFirst(4).prefix(2), ["0", "0"], String(core))

        // Swift's backtracer catches the crash signals and prints registers and the memory around them:
        // they are back to their default action.
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        let caught = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }.flatMap {
            UInt64($0.split(separator: "\t").last.map(String.init) ?? "", radix: 16)
        })
        for signal in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP] {
            XCTAssertEqual(caught & (1 << UInt64(signal - 1)), 0, "signal \(signal) is still caught")
        }

        // A developer may keep the backtracer for their own vault.
        let debugging = try startWaiting(vault: vaultDir.path, env: ["HREADER_CRASH_BACKTRACE": "1"])
        defer { stop(debugging) }
        let debugStatus = try String(contentsOfFile: "/proc/\(debugging.processIdentifier)/status", encoding: .utf8)
        let debugCaught = UInt64(debugStatus.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }?.split(separator: "\t").last ?? "", radix: 16) ?? 0
        XCTAssertNotEqual(debugCaught & (1 << UInt64(SIGSEGV - 1)), 0, "the switch is real: without it the handlers are gone")
    }

    func testAnotherProcessOfTheSameUserCannotReadItsEnvironment() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("needs root and setpriv to run hreader as another user")
        }
        let nobody: UInt32 = 65534
        try initVault()
        let shared = workDir.appendingPathComponent("nobody-vault")
        try FileManager.default.copyItem(at: vaultDir, to: shared)
        for path in [workDir.path, childTemp.path] { chmod(path, 0o755) }
        for url in [shared] + (FileManager.default.enumerator(at: shared, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []) {
            chown(url.path, nobody, nobody)
        }
        let process = try startWaiting(as: nobody, vault: shared.path, env: ["HREADER_PASSWORD": "canary"])
        defer { stop(process) }
        // A dumpable process's /proc entries belong to its user, who can then read its environment
        // (and memory); a process that is not dumpable has them owned by root.
        var info = stat()
        XCTAssertEqual(stat("/proc/\(process.processIdentifier)/environ", &info), 0)
        XCTAssertEqual(info.st_uid, 0, "the environment is readable by other processes of the same user")
        XCTAssertEqual(stat("/proc/\(process.processIdentifier)/mem", &info), 0)
        XCTAssertEqual(info.st_uid, 0)
    }
}
