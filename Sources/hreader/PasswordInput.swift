import Foundation
import HReaderCrypto
import HReaderKit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a password comes from, in the order of DESIGN.md §2: `--password-file`, `--password-command`,
/// `$HREADER_PASSWORD` (least safe: other processes of the same user can read it), else a prompt
/// with echo off. With none of these and no terminal, fail at once instead of hanging.
struct PasswordInput {
    let file: String?
    let command: String?
    let environment: ProcessEnvironment

    func password(prompt: String) throws -> SecretBytes {
        if let file { return try Self.readFirstLine(ofFile: file, what: "password file") }
        if let command { return try Self.runPasswordCommand(command) }
        if let value = environment["HREADER_PASSWORD"], !value.isEmpty { return SecretBytes(utf8: value) }
        return try Terminal.readSecret(prompt: prompt)
    }

    /// A new password: from `file` if given, else typed twice.
    static func newPassword(file: String?) throws -> SecretBytes {
        if let file { return try readFirstLine(ofFile: file, what: "new password file") }
        let first = try Terminal.readSecret(prompt: "New vault password: ")
        let second = try Terminal.readSecret(prompt: "Repeat the new password: ")
        guard first.isEqual(to: second) else { throw HReaderError.usage("the two passwords differ; nothing was changed") }
        return first
    }

    /// The first line of a file, without its line ending. The bytes are read into memory we wipe.
    static func readFirstLine(ofFile path: String, what: String) throws -> SecretBytes {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HReaderError.usage("cannot read the \(what) \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        defer { wipe(&buffer) }
        var total = 0
        while total < buffer.count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0 { if errno == EINTR { continue }; throw HReaderError.usage("cannot read the \(what) \(path)") }
            if n == 0 { break }
            total += n
        }
        let line = buffer[0..<total].prefix(while: { $0 != 0x0a && $0 != 0x0d })
        guard !line.isEmpty else { throw HReaderError.usage("the \(what) \(path) is empty") }
        return SecretBytes(line)
    }

    static func runPasswordCommand(_ command: String) throws -> SecretBytes {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw HReaderError.usage("cannot run the password command") }
        // Read straight into a buffer of our own that is wiped afterwards (a Foundation Data would keep
        // the password in memory we cannot wipe); what does not fit is read and wiped too.
        let fd = pipe.fileHandleForReading.fileDescriptor
        var data = [UInt8](repeating: 0, count: 4096)
        var rest = [UInt8](repeating: 0, count: 4096)
        defer { wipe(&data); wipe(&rest) }
        var total = 0
        while true {
            let n = total < data.count ? data.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
                                       : rest.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if total < data.count { total += n }
        }
        data.withUnsafeMutableBytes { buffer in for i in total..<buffer.count { buffer[i] = 0 } }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HReaderError(.authentication, "the password command failed (exit \(process.terminationStatus))")
        }
        let line = data[0..<total].prefix(while: { $0 != 0x0a && $0 != 0x0d })
        guard !line.isEmpty else { throw HReaderError(.authentication, "the password command printed nothing") }
        return SecretBytes(line)
    }

    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            for i in buffer.indices { buffer[i] = 0 }
        }
    }
}

