import CShims
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program with bytes on stdin and collects its stdout, within a time limit and an output limit.
///
/// The child starts in a process group of its own, with only the environment it is given, in the given
/// working directory and with no descriptors but 0, 1 and 2. When it overruns either limit, the whole
/// group is killed (a shell script's `sleep` included), and whatever it left behind is killed when it ends.
///
///     let result = ChildProcess.run(executable: "/usr/bin/wc", environment: ["PATH": "/usr/bin:/bin"],
///                                   workingDirectory: "/tmp", input: Array("hello".utf8), timeout: 5, outputLimit: 1024)
struct ChildProcess {
    enum Ending: Equatable {
        case exited(Int32)
        case signaled(Int32)
        case timedOut
        case outputTooLarge
        /// Stopped by the caller (a byte written to the `stop` pipe): its answer is no longer wanted.
        case stopped
        case couldNotStart(String)
    }

    struct Result {
        var ending: Ending
        var stdout: [UInt8]
        /// The first few kilobytes of stderr.
        var stderr: [UInt8]
        /// How a sandboxed child was cut off from the network (`SandboxedChild`).
        var isolation: SandboxedChild.Isolation? = nil
    }

    /// A child started by `hreader_child_spawn` (CShims) rather than posix_spawn: limits, no network, no files written.
    struct Sandbox {
        var limits: hreader_child_limits
        /// Skip the network namespace and rely on seccomp alone (to test that path).
        var seccompOnly: Bool
    }

    static let stderrLimit = 4096

    static func run(executable: String, arguments: [String] = [], environment: [String: String], workingDirectory: String?,
                    input: [UInt8], timeout: TimeInterval, outputLimit: Int, sandbox: Sandbox? = nil) -> Result {
        var given: [UInt8]? = input
        return run(executable: executable, arguments: arguments, environment: environment, workingDirectory: workingDirectory,
                   pulling: { defer { given = nil }; return given }, timeout: timeout, outputLimit: outputLimit, sandbox: sandbox)
    }

    /// As above, stdin fed from `pulling` piece by piece as the child reads (nil: the end), so a large
    /// input never needs to be whole in memory. When `stop` (the read end of a pipe) becomes readable,
    /// the child is killed and the run ends `.stopped` (a run on another thread whose answer is not wanted).
    /// With `output`, stdout is handed to it piece by piece as it comes (within `outputLimit` in all)
    /// instead of being collected: the caller reads the answer while the child still writes it.
    static func run(executable: String, arguments: [String] = [], environment: [String: String], workingDirectory: String?,
                    pulling: () -> [UInt8]?, timeout: TimeInterval, outputLimit: Int, sandbox: Sandbox? = nil,
                    stop: Int32 = -1, output: ((UnsafeBufferPointer<UInt8>) -> Void)? = nil) -> Result {
        // A child that exits before reading all of stdin must not kill hreader with SIGPIPE.
        let previousSIGPIPE = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previousSIGPIPE) }

        guard let stdinPipe = makePipe(), let stdoutPipe = makePipe(), let stderrPipe = makePipe() else {
            return Result(ending: .couldNotStart("cannot create pipes: \(String(cString: strerror(errno)))"), stdout: [], stderr: [])
        }
        var parentEnds = [stdinPipe.write, stdoutPipe.read, stderrPipe.read]
        let childEnds = [stdinPipe.read, stdoutPipe.write, stderrPipe.write]
        defer { for fd in parentEnds where fd >= 0 { close(fd) } }

        var isolation: SandboxedChild.Isolation?
        let spawned = sandbox.map { spawnSandboxed(executable: executable, arguments: arguments, environment: environment,
                                                    sandbox: $0, stdio: childEnds, isolation: &isolation) }
            ?? spawn(executable: executable, arguments: arguments, environment: environment,
                     workingDirectory: workingDirectory, stdio: childEnds)
        for fd in childEnds { close(fd) }
        let pid: pid_t
        switch spawned {
        case let .failure(message): return Result(ending: .couldNotStart(message), stdout: [], stderr: [])
        case let .success(child): pid = child
        }
        for fd in parentEnds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }

        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(timeout, 0) * 1e9)
        func millisecondsLeft() -> Int32 {
            let now = DispatchTime.now().uptimeNanoseconds
            return now >= deadline ? 0 : Int32(min((deadline - now) / 1_000_000 + 1, 1000))
        }

        var stdout: [UInt8] = [], stderr: [UInt8] = []
        var stdoutCount = 0
        var written = 0
        var ending: Ending?
        // The piece being written, the next one pulled when it is done.
        var input: [UInt8] = []
        func refill() -> Bool {
            while written == input.count {
                guard let next = pulling() else { return false }
                input = next
                written = 0
            }
            return true
        }
        if !refill() { close(parentEnds[0]); parentEnds[0] = -1 }
        var buffer = [UInt8](repeating: 0, count: 65_536)

        // Feed stdin and drain stdout and stderr until both are closed, or a limit is reached.
        pumping: while parentEnds[1] >= 0 || parentEnds[2] >= 0 {
            let wait = millisecondsLeft()
            if wait == 0 { ending = .timedOut; break }
            var fds: [pollfd] = []
            if parentEnds[0] >= 0 { fds.append(pollfd(fd: parentEnds[0], events: Int16(POLLOUT), revents: 0)) }
            for index in 1...2 where parentEnds[index] >= 0 { fds.append(pollfd(fd: parentEnds[index], events: Int16(POLLIN), revents: 0)) }
            if stop >= 0 { fds.append(pollfd(fd: stop, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), wait)
            if ready < 0 && errno != EINTR { ending = .couldNotStart("poll failed: \(String(cString: strerror(errno)))"); break }
            if ready <= 0 { continue }
            if stop >= 0, fds.last!.revents != 0 { ending = .stopped; break }
            for polled in fds where polled.revents != 0 {
                if polled.fd == parentEnds[0] {
                    let n = input.withUnsafeBytes { bytes in
                        write(polled.fd, bytes.baseAddress! + written, min(bytes.count - written, 65_536))
                    }
                    if n > 0 { written += n }
                    if (written == input.count && !refill()) || (n < 0 && errno != EAGAIN && errno != EINTR) {
                        close(parentEnds[0]); parentEnds[0] = -1
                    }
                    continue
                }
                let index = polled.fd == parentEnds[1] ? 1 : 2
                let n = read(polled.fd, &buffer, buffer.count)
                if n > 0 {
                    if index == 1 {
                        if stdoutCount + n > outputLimit { ending = .outputTooLarge; break pumping }
                        stdoutCount += n
                        if let output { buffer.withUnsafeBufferPointer { output(UnsafeBufferPointer(rebasing: $0[0..<n])) } }
                        else { stdout.append(contentsOf: buffer[0..<n]) }
                    } else if stderr.count < stderrLimit {
                        stderr.append(contentsOf: buffer[0..<min(n, stderrLimit - stderr.count)])
                    }
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    close(parentEnds[index]); parentEnds[index] = -1
                }
            }
        }

        // Its output is closed: wait for it to exit, within what is left of the time.
        var status: Int32 = 0
        var reaped = false
        while ending == nil {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { reaped = true; break }
            if r < 0 && errno != EINTR { reaped = true; status = 0; break }
            if millisecondsLeft() == 0 { ending = .timedOut; break }
            usleep(2_000)
        }
        // Stop the group: on a limit the child itself, in any case what it started and left running.
        kill(-pid, SIGKILL)
        if !reaped {
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        if ending == nil {
            ending = exitedNormally(status) ? .exited(exitCode(status)) : .signaled(terminatingSignal(status))
        }
        return Result(ending: ending!, stdout: stdout, stderr: stderr, isolation: isolation)
    }

    // MARK: Spawning

    private static func makePipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }

    enum Spawned { case success(pid_t), failure(String) }

    private static func spawn(executable: String, arguments: [String], environment: [String: String],
                              workingDirectory: String?, stdio: [Int32]) -> Spawned {
        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        for (target, fd) in stdio.enumerated() { posix_spawn_file_actions_adddup2(&actions, fd, Int32(target)) }
        // Both are GNU/BSD extensions: looked up at run time, used when present.
        if let workingDirectory, let addchdir = lookUp("posix_spawn_file_actions_addchdir_np", as: AddChdir.self) {
            _ = addchdir(&actions, workingDirectory)
        }
        if let addclosefrom = lookUp("posix_spawn_file_actions_addclosefrom_np", as: AddClosefrom.self) {
            _ = addclosefrom(&actions, 3)
        }
        // Its own process group (so a timeout kills everything it started), default signal handling
        // (hreader ignores SIGPIPE while it runs), nothing blocked.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t(), empty = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD] { sigaddset(&defaults, signal) }
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { return .failure("cannot start \(executable): \(String(cString: strerror(rc)))") }
        return .success(pid)
    }

    private static func spawnSandboxed(executable: String, arguments: [String], environment: [String: String], sandbox: Sandbox,
                                       stdio: [Int32], isolation: inout SandboxedChild.Isolation?) -> Spawned {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in argv + envp { free(p) } }
        var limits = sandbox.limits
        var how: Int32 = 0
        let pid = stdio.withUnsafeBufferPointer { fds in
            hreader_child_spawn(executable, argv, envp, &limits, sandbox.seccompOnly ? 1 : 0, fds.baseAddress, &how)
        }
        guard pid > 0 else { return .failure("cannot start \(executable) in its sandbox: \(String(cString: strerror(errno)))") }
        isolation = how == Int32(HREADER_CHILD_NAMESPACE_AND_SECCOMP) ? .networkNamespace : .seccomp
        return .success(pid)
    }

    #if os(Linux)
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    #else
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t?>, UnsafePointer<CChar>) -> Int32
    private typealias AddClosefrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t?>, Int32) -> Int32
    #endif

    private static func lookUp<F>(_ name: String, as type: F.Type) -> F? {
        // RTLD_DEFAULT (search every loaded library) is 0 in glibc and -2 on Darwin.
        #if os(Linux)
        let everywhere = UnsafeMutableRawPointer(bitPattern: 0)
        #else
        let everywhere = UnsafeMutableRawPointer(bitPattern: -2)
        #endif
        guard let symbol = dlsym(everywhere, name) else { return nil }
        return unsafeBitCast(symbol, to: F.self)
    }

    // MARK: Wait status (the C macros are not imported)

    private static func exitedNormally(_ status: Int32) -> Bool { status & 0x7f == 0 }
    private static func exitCode(_ status: Int32) -> Int32 { (status >> 8) & 0xff }
    private static func terminatingSignal(_ status: Int32) -> Int32 { status & 0x7f }
}
