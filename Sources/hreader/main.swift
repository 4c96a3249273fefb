// The entry point: parse, run, and turn every failure into one line on stderr and an exit code
// from DESIGN.md §9. No stack traces, no partial output on stdout.
import ArgumentParser
import CShims
import Foundation
import HReaderKit

#if canImport(Glibc)
import Glibc
#endif

/// Runs the async form of `run` (an existential would pick the synchronous one).
func runAsync<Command: AsyncParsableCommand>(_ command: inout Command) async throws {
    try await command.run()
}

// Before anything is read or unlocked: no core files, not dumpable, no register dumps on a crash
// (HREADER_CRASH_BACKTRACE=1 keeps Swift's backtracer, for a developer's own vault).
// getenv: Foundation's environment dictionary costs a third of a millisecond, which `--version` need not pay.
_ = hreader_harden_process(getenv("HREADER_CRASH_BACKTRACE").map { String(cString: $0) } == "1" ? 1 : 0)

let arguments = Array(CommandLine.arguments.dropFirst())
// `--version` loads no library (they load on first use); `version` names the ones hreader runs with.
if arguments == ["--version"] {
    print("hreader \(CommandLineConventions.version)")
    exit(0)
}
if arguments == ["version"] {
    print(CommandLineConventions.versionLine)
    exit(0)
}
// Not a command for people: what `import --file` runs in its sandboxed child to read a picture's
// QR codes with zbar (QRCodeScanner), the picture as PNM on stdin, the codes as JSON on stdout.
if arguments == ["scan-qr-codes"] {
    do {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        print(try QRCodeScanner.scanPNM([UInt8](input)).serialized())
        exit(0)
    } catch {
        Terminal.error("\(error)")
        exit(5)
    }
}

do {
    let commandLine = CommandLineConventions.movingLeadingGlobalOptions(arguments)
    if let quick = QuickCommandLine.command(commandLine) {
        try quick.run()
        exit(0)
    }
    var command = try HReaderCommand.parseAsRoot(commandLine)
    if var asyncCommand = command as? AsyncParsableCommand {
        try await runAsync(&asyncCommand)
    } else {
        try command.run()
    }
    exit(0)
} catch let error as HReaderError {
    Terminal.error(error.message)
    exit(error.exitCode)
} catch {
    let code = HReaderCommand.exitCode(for: error)
    if code == .success {
        print(HReaderCommand.fullMessage(for: error))
        exit(0)
    }
    if error is ExitCode {
        exit(code.rawValue)
    }
    // ArgumentParser's own parse and validation errors are usage errors (2), not EX_USAGE (64).
    let message = HReaderCommand.message(for: error)
    Terminal.error(message.isEmpty ? "invalid arguments" : message.split(separator: "\n").first.map(String.init) ?? message)
    if let usage = HReaderCommand.fullMessage(for: error).split(separator: "\n").first(where: { $0.hasPrefix("Usage:") }) {
        FileHandle.standardError.write(Data((usage + "\n").utf8))
    }
    exit(HReaderError.Kind.usage.rawValue)
}
