import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to its exit as a shell would (posix_spawn, then wait), output to /dev/null: its
/// wall time from spawn to exit, its minor page faults, and its peak resident memory, the kernel's
/// high-water mark (`VmHWM`) read every 5 ms while it runs. (Not `ru_maxrss`: posix_spawn starts the child in the
/// parent's memory, and exec records the parent's peak as the child's.) Foundation's `Process`
/// adds tens of milliseconds of its own to a short run (its run loop waits for the exit), which a
/// user's shell does not; short runs whose memory does not matter pass `memory: false` and are
/// timed to the exit exactly.
func spawnMeasured(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
                   memory: Bool = true) throws -> (seconds: Double, peakKB: Int, pageFaults: Int) {
    let argv = ([executable.path] + arguments).map { strdup($0) }
    let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") }
    defer { (argv + env).forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    var pid: pid_t = 0
    let started = DispatchTime.now().uptimeNanoseconds
    let spawned = (argv + [nil]).withUnsafeBufferPointer { args in
        (env + [nil]).withUnsafeBufferPointer { envp in
            posix_spawn(&pid, executable.path, &actions, nil, UnsafeMutablePointer(mutating: args.baseAddress!),
                        UnsafeMutablePointer(mutating: envp.baseAddress!))
        }
    }
    guard spawned == 0 else {
        throw NSError(domain: "bench", code: Int(spawned), userInfo: [NSLocalizedDescriptionKey: "cannot run \(executable.path)"])
    }
    var status: Int32 = 0
    var peak = 0
    var usage = rusage()
    if memory {
        while wait4(pid, &status, WNOHANG, &usage) == 0 {
            peak = max(peak, highWaterKB(pid))
            usleep(5_000)
        }
    } else {
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
    // WIFEXITED && WEXITSTATUS == 0, spelled out (the macros are not imported).
    guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
        throw NSError(domain: "bench", code: Int(status),
                      userInfo: [NSLocalizedDescriptionKey: "\(executable.lastPathComponent) \(arguments.first ?? "") failed (status \(status))"])
    }
    // Minor page faults: most of a short command's start (docs/cli.md, "Start-up").
    return (seconds, peak, usage.ru_minflt)
}

/// `VmHWM` of a running process, in KiB (0 once it is gone).
private func highWaterKB(_ pid: pid_t) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
}

/// hreader and hreader-health-generator, built beside this benchmark; nil (after saying why the
/// section is skipped) when either is missing.
/// The hreader the end-to-end figures run: `HREADER_BENCH_HREADER` (make bench sets it to the binary
/// `make install` and the package ship, linked for start-up), else the one built beside hreader-bench.
func siblingBinaries() -> (generator: URL, hreader: URL)? {
    let binDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let shipped = ProcessInfo.processInfo.environment["HREADER_BENCH_HREADER"].map { URL(fileURLWithPath: $0) }
    let generator = binDir.appendingPathComponent("hreader-health-generator")
    let hreader = shipped ?? binDir.appendingPathComponent("hreader")
    guard FileManager.default.isExecutableFile(atPath: generator.path), FileManager.default.isExecutableFile(atPath: hreader.path) else {
        say("  (hreader-health-generator or hreader not built beside hreader-bench; skipped)")
        return nil
    }
    return (generator, hreader)
}

/// Starts the sample server built beside hreader-bench with `arguments` (on a free port) and returns
/// it with its base URL, read from its `listening URL` line; nil when it is not built.
func startSampleServer(_ arguments: [String]) throws -> (process: Process, base: String)? {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hreader-sample-server")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        say("  (hreader-sample-server not built beside hreader-bench; skipped)")
        return nil
    }
    let server = Process()
    server.executableURL = binary
    server.arguments = ["--port", "0"] + arguments
    let pipe = Pipe()
    server.standardOutput = pipe
    server.standardError = FileHandle.nullDevice
    try server.run()
    var line = Data()
    while !line.contains(0x0a) {
        let chunk = pipe.fileHandleForReading.availableData
        guard !chunk.isEmpty else { break }
        line.append(chunk)
    }
    return (server, String(decoding: line.prefix { $0 != 0x0a }, as: UTF8.self).replacingOccurrences(of: "listening ", with: ""))
}

/// Runs a tool by hand (to make fixtures: pages drawn, cards signed), bytes in and out through pipes;
/// its standard output, or an error when it fails.
func runTool(_ tool: String, _ arguments: [String], input: Data = Data()) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let stdin = Pipe(), stdout = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    try process.run()
    // Written on its own thread: a tool that answers before it has read all its input must not block us.
    let writer = Thread { stdin.fileHandleForWriting.write(input); try? stdin.fileHandleForWriting.close() }
    writer.start()
    let output = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
    return output
}
