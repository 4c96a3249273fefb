import Foundation
import HReaderRecords
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A brands bundle's organizations and endpoints kept in two files of the cache directory while
/// `providers update` reads the bundle, so that its memory is the ids and offsets (a few dozen
/// bytes a record), not the records: one compact JSON text a record (`BrandsBundleOrganization
/// .encoded`), read back one at a time with `pread` (not mapped, which would count the files'
/// pages in the process's memory).
final class DirectorySpool: BrandsBundleSpool {
    private let organizations: SpoolFile
    private let endpoints: SpoolFile

    /// Two new files in `directory` (which exists).
    init(directory: String) throws {
        let stem = directory + "/.providers.spool.\(getpid()).\(SpoolFile.next())"
        organizations = try SpoolFile(path: stem + ".o")
        endpoints = try SpoolFile(path: stem + ".e")
    }

    func append(_ organization: BrandsBundleOrganization) throws { try organizations.append(organization.encoded) }
    func append(_ endpoint: BrandsBundleEndpoint) throws { try endpoints.append(endpoint.encoded) }

    func finishWriting() throws {
        try organizations.flush()
        try endpoints.flush()
    }

    func organization(_ number: Int) throws -> BrandsBundleOrganization {
        try BrandsBundleOrganization(decoding: try organizations.record(number))
    }

    func endpoint(_ number: Int) throws -> BrandsBundleEndpoint {
        try BrandsBundleEndpoint(decoding: try endpoints.record(number))
    }
}

/// A file of records for one update (public data, like the directory beside it): created (0600,
/// never there before) and unlinked at once, so only its descriptor names it and nothing is left
/// behind, even by a killed update; closed, and gone, with the object. Appends are buffered (a
/// megabyte); `record` and `forEachChunk` read what was flushed.
final class SpoolFile {
    private let descriptor: Int32
    private var offsets: [UInt64] = [0]   // where each record starts; the last is the end
    private var buffer: [UInt8] = []
    private var written: UInt64 = 0

    init(path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw HReaderError(.failure, "cannot write a temporary file in \((path as NSString).deletingLastPathComponent): "
                               + String(cString: strerror(errno)))
        }
        unlink(path)
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    func append(_ record: [UInt8]) throws {
        buffer += record
        offsets.append(offsets[offsets.count - 1] + UInt64(record.count))
        if buffer.count >= 1 << 20 { try flush() }
    }

    func flush() throws {
        var done = 0
        while done < buffer.count {
            let n = buffer[done...].withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(written) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Self.failed("write") }
            done += n
        }
        written += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Record `number` (from 0), once flushed.
    func record(_ number: Int) throws -> [UInt8] {
        let start = offsets[number], count = Int(offsets[number + 1] - start)
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(start) + off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Self.failed("read") }
            done += n
        }
        return bytes
    }

    /// The whole file from the start, a megabyte at a time.
    func forEachChunk(_ body: ([UInt8]) throws -> Void) throws {
        try flush()
        var offset: UInt64 = 0
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while offset < written {
            let n = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Self.failed("read") }
            try body(Array(chunk[0..<n]))
            offset += UInt64(n)
        }
    }

    private static func failed(_ what: String) -> HReaderError {
        HReaderError(.failure, "cannot \(what) the update's temporary file: \(String(cString: strerror(errno)))")
    }

    private static let counter = Counter()
    private final class Counter: @unchecked Sendable {   // the lock guards `value`
        private let lock = NSLock()
        private var value = 0
        func next() -> Int { lock.lock(); defer { lock.unlock() }; value += 1; return value }
    }

    /// A number for a new file's name, unique in this process.
    static func next() -> Int { counter.next() }
}
