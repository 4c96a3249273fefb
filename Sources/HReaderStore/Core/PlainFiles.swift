import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The reads every vault command makes (the key file, the session files, their directory), through
/// POSIX calls rather than FileManager, whose first use costs a short command 0.1 ms (docs/cli.md,
/// "Start-up"). They answer as FileManager's `contents(atPath:)`, `fileExists(atPath:)` and
/// `contentsOfDirectory(atPath:)` do: links followed, nil for what cannot be read.
enum PlainFiles {
    /// The whole file; nil when it cannot be opened or read (a directory, a missing file).
    static func contents(ofFile path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(max(Int(info.st_size), 0))
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The names in a directory but `.` and `..`; nil when it cannot be listed.
    static func names(inDirectory path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
