import CShims
import Foundation

/// A helper that parses untrusted bytes (a PDF, an image) run out of the process that holds the data
/// key: the one way hreader starts such a helper (docs/security.md, "Helpers at arm's length").
///
/// The child has no network (an empty network namespace where the kernel allows it, and in any case a
/// seccomp filter that fails socket()), cannot write or create a file (RLIMIT_FSIZE 0 and the filter
/// fails every open() for writing), is limited in memory, CPU time and open files, is killed after a
/// wall-clock timeout or when its output passes a cap, and dies with hreader. It gets no path of
/// hreader's: the bytes go in on stdin and the answer comes back on stdout, through pipes.
///
///     let child = SandboxedChild(executable: "/usr/bin/pdftotext")
///     let outcome = try child.run(["-enc", "UTF-8", "fd://0", "-"], input: pdfBytes)
public struct SandboxedChild: Sendable {
    /// How the child is cut off from the network.
    public enum Isolation: String, Sendable {
        case networkNamespace = "network namespace and seccomp"
        case seccomp = "seccomp"
    }

    public struct Limits: Sendable {
        /// RLIMIT_AS: Tesseract with one language and a 300 dpi page stays far below.
        public var memoryBytes: UInt64 = 1 << 30
        public var cpuSeconds: UInt64 = 120
        public var openFiles: UInt64 = 64
        /// Killed after this long, whatever it is doing.
        public var timeout: TimeInterval = 180
        /// Killed when its stdout passes this.
        public var outputBytes = 64 << 20

        public init() {}
    }

    /// The child ended without an answer: one line, without any of the document's content.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
        /// The helper's exit status, when it exited with one (pdftoppm's 99: a page past the last).
        public var exitCode: Int32? = nil
    }

    public struct Outcome: Sendable {
        public var stdout: [UInt8]
        public var isolation: SandboxedChild.Isolation
    }

    public let executable: String
    public var limits: Limits
    /// Skip the network namespace (seccomp alone): `HREADER_SANDBOX_SECCOMP_ONLY=1`, to test that path.
    public var seccompOnly: Bool

    public init(executable: String, limits: Limits = Limits(),
                seccompOnly: Bool = ProcessInfo.processInfo.environment["HREADER_SANDBOX_SECCOMP_ONLY"] == "1") {
        self.executable = executable; self.limits = limits; self.seccompOnly = seccompOnly
    }

    /// The environment a helper sees: nothing of hreader's but where Tesseract's data is.
    static var environment: [String: String] {
        var environment = ["LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "OMP_THREAD_LIMIT": "1", "PATH": "/usr/bin:/bin"]
        if let tessdata = ProcessInfo.processInfo.environment["TESSDATA_PREFIX"] { environment["TESSDATA_PREFIX"] = tessdata }
        return environment
    }

    /// Runs the helper with `input` on stdin; its stdout when it exits with status 0.
    public func run(_ arguments: [String], input: [UInt8]) throws -> Outcome {
        var given: [UInt8]? = input
        return try run(arguments, pulling: { defer { given = nil }; return given })
    }

    /// Runs the helper with stdin fed from `pulling` piece by piece (nil: the end). A byte written to
    /// the pipe whose read end is `stop` kills it (for a run on another thread whose answer is not wanted).
    /// With `output`, its stdout goes there piece by piece as it comes, and `Outcome.stdout` is empty.
    public func run(_ arguments: [String], pulling: () -> [UInt8]?, stop: Int32 = -1,
                    output: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil) throws -> Outcome {
        let name = (executable as NSString).lastPathComponent
        let sandbox = ChildProcess.Sandbox(limits: hreader_child_limits(address_space: limits.memoryBytes, cpu_seconds: limits.cpuSeconds,
                                                                        open_files: limits.openFiles),
                                           seccompOnly: seccompOnly)
        let result = ChildProcess.run(executable: executable, arguments: arguments, environment: Self.environment, workingDirectory: nil,
                                      pulling: pulling, timeout: limits.timeout, outputLimit: limits.outputBytes, sandbox: sandbox,
                                      stop: stop, output: output)
        switch result.ending {
        case .exited(0):
            return Outcome(stdout: result.stdout, isolation: result.isolation ?? .seccomp)
        case let .exited(code):
            throw Failure(description: "\(name) refused the file (exit \(code))", exitCode: Int32(code))
        case let .signaled(signal):
            let why = signal == SIGKILL || signal == SIGSEGV || signal == SIGABRT || signal == SIGBUS ? " (a limit was reached, or it crashed)"
                : signal == SIGXCPU ? " (its CPU time limit)" : signal == SIGSYS ? " (a forbidden system call)" : ""
            throw Failure(description: "\(name) stopped on signal \(signal)\(why)")
        case .timedOut:
            throw Failure(description: "\(name) took longer than \(Int(limits.timeout)) s and was stopped")
        case .outputTooLarge:
            throw Failure(description: "\(name) gave more than \(DocumentLimits.describe(Int64(limits.outputBytes))) and was stopped")
        case .stopped:
            throw Failure(description: "\(name) was stopped: its answer was no longer wanted")
        case let .couldNotStart(message):
            throw Failure(description: message)
        }
    }
}
