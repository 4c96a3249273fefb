import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Crash-safe file replacement: write a temporary file beside the target, fsync it, rename it over
/// the target, fsync the directory. After a crash at any point, either the old or the new file is
/// there, never neither and never a mix.
public enum AtomicFile {
    public enum Error: Swift.Error, CustomStringConvertible {
        case io(String, path: String, errno: Int32)
        public var description: String {
            switch self {
            case let .io(what, path, code): return "\(what) \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    public static func write(_ bytes: [UInt8], to url: URL, mode: mode_t = 0o600) throws {
        try write(to: url, mode: mode) { append in try append(bytes) }
    }

    /// A target that is there already, when `replacing` is false.
    public struct Exists: Swift.Error {}

    /// The same, for bytes that come in pieces (`body` calls `append` for each), so a large file never
    /// sits whole in memory. Without `replacing`, an existing target (a symlink too) is refused with
    /// `Exists` and left as it is. Whatever `body` throws, the target is untouched.
    public static func write(to url: URL, mode: mode_t = 0o600, replacing: Bool = true,
                             _ body: (_ append: ([UInt8]) throws -> Void) throws -> Void) throws {
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/." + url.lastPathComponent + ".tmp-" + (try SecureRandom.bytes(6)).map { String(format: "%02x", $0) }.joined()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Error.io("cannot create", path: temporary, errno: errno) }
        var done = false
        defer { if !done { unlink(temporary) } }
        do {
            defer { close(fd) }
            try body { bytes in
                var offset = 0
                while offset < bytes.count {
                    let n = bytes.withUnsafeBytes { Glibc_write(fd, $0.baseAddress! + offset, bytes.count - offset) }
                    if n < 0 { if errno == EINTR { continue }; throw Error.io("cannot write", path: temporary, errno: errno) }
                    offset += n
                }
            }
            guard fchmod(fd, mode) == 0 else { throw Error.io("cannot chmod", path: temporary, errno: errno) }
            guard fsync(fd) == 0 else { throw Error.io("cannot fsync", path: temporary, errno: errno) }
        }
        if replacing {
            guard rename(temporary, url.path) == 0 else { throw Error.io("cannot rename over", path: url.path, errno: errno) }
        } else {
            // link() never replaces: it fails with EEXIST when anything (a symlink too) has the name.
            guard link(temporary, url.path) == 0 else {
                if errno == EEXIST { throw Exists() }
                throw Error.io("cannot create", path: url.path, errno: errno)
            }
            unlink(temporary)
        }
        done = true
        try syncDirectory(directory)
    }

    public static func syncDirectory(_ path: String) throws {
        let dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { throw Error.io("cannot open directory", path: path, errno: errno) }
        defer { close(dfd) }
        guard fsync(dfd) == 0 else { throw Error.io("cannot fsync directory", path: path, errno: errno) }
    }

    /// Swaps two existing paths (files or directories) in one atomic step: Linux `renameat2` with
    /// `RENAME_EXCHANGE`, macOS `renamex_np` with `RENAME_SWAP`. After a crash either both names hold
    /// what they held before, or both hold the other's. Returns false (changing nothing) when the
    /// system or file system cannot, so the caller can fall back to two renames.
    public static func exchange(_ a: String, _ b: String) -> Bool {
        #if os(Linux)
        typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
        // glibc 2.28 declares renameat2 only under _GNU_SOURCE, which Swift's Glibc module does not set.
        guard let symbol = dlsym(nil, "renameat2") else { return false }
        let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
        let atFDCWD: Int32 = -100, renameExchange: UInt32 = 1 << 1
        return renameat2(atFDCWD, a, atFDCWD, b, renameExchange) == 0
        #elseif canImport(Darwin)
        return renamex_np(a, b, UInt32(RENAME_SWAP)) == 0
        #else
        return false
        #endif
    }

    /// Removes temporary files left by a write that was killed before its rename.
    public static func removeLeftovers(for url: URL) {
        let directory = url.deletingLastPathComponent()
        let prefix = "." + url.lastPathComponent + ".tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(prefix) {
            unlink(directory.appendingPathComponent(name).path)
        }
    }
}

#if canImport(Glibc)
private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
#else
private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
#endif
