import CZlibChecksum
import Foundation
import ZIPFoundation

/// One member of a zip, inflated on a thread of its own into a small bounded pipe that the caller
/// reads from: memory stays bounded, nothing is written to disk, the member may inflate to at most
/// `limit` bytes and `ratio` times its compressed size (a zip bomb otherwise), and its CRC is
/// checked at the end. ZIPFoundation 0.9.20 spins forever on Linux on some truncated deflate streams
/// without calling back: a member that sends nothing for `stall` seconds is declared damaged, and
/// its thread is left to end with the process (the archive with it, untouched here).
///
///     let text = try ZipMemberStream.read(entry, of: archive, limit: 64 << 20, ratio: 250, stall: 10, messages: …)
enum ZipMemberStream {
    /// The errors in the words of the caller's format (an Apple Health export, an XDM package).
    struct Messages {
        var tooLarge: () -> HReaderError
        var checksum: () -> HReaderError
        var unreadable: (Error) -> HReaderError
        var stalled: () -> HReaderError
    }

    /// Runs `body` with a source of the member's bytes (as a reader pulls them: fills the buffer,
    /// returns the count, 0 at the end).
    static func stream<T>(_ entry: Entry, of archive: Archive, limit: UInt64, ratio: UInt64, stall: TimeInterval, bufferSize: Int,
                          messages: Messages, _ body: (@escaping (UnsafeMutableRawBufferPointer) throws -> Int) throws -> T) throws -> T {
        let pipe = ChunkPipe(capacity: 8)
        let handoff = Handoff(archive: archive, entry: entry, messages: messages)
        let compressed = max(entry.compressedSize, 1)
        let producer = Thread {
            var produced: UInt64 = 0
            let (archive, entry, messages) = (handoff.archive, handoff.entry, handoff.messages)
            do {
                var crc: UInt = 0
                _ = try archive.extract(entry, bufferSize: bufferSize, skipCRC32: true) { chunk in
                    produced += UInt64(chunk.count)
                    crc = chunk.withUnsafeBytes { CZlibChecksum.crc32(crc, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt32($0.count)) }
                    if produced > limit || produced / compressed > ratio { throw messages.tooLarge() }
                    try pipe.put(chunk)
                }
                if crc != UInt(entry.checksum) { throw messages.checksum() }
                pipe.finish(nil)
            } catch let error as HReaderError {
                pipe.finish(error)
            } catch ChunkPipe.Cancelled.cancelled {
                pipe.finish(nil)
            } catch {
                pipe.finish(messages.unreadable(error))
            }
        }
        producer.stackSize = 1 << 20
        producer.start()
        defer {
            pipe.cancel()
            pipe.waitUntilFinished(timeout: stall)
        }
        return try body { buffer in
            do {
                return try pipe.read(into: buffer, stall: stall)
            } catch ChunkPipe.Cancelled.stalled {
                throw messages.stalled()
            }
        }
    }

    /// The whole member in memory (for members that are small by nature: a clinical document).
    static func read(_ entry: Entry, of archive: Archive, limit: UInt64, ratio: UInt64, stall: TimeInterval, messages: Messages) throws -> Data {
        try stream(entry, of: archive, limit: limit, ratio: ratio, stall: stall, bufferSize: 64 << 10, messages: messages) { next in
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = try buffer.withUnsafeMutableBytes { try next($0) }
                if count == 0 { return data }
                data.append(contentsOf: buffer[0..<count])
            }
        }
    }

    /// The archive goes to the producer thread and is not touched here until that thread has
    /// finished (`waitUntilFinished`), so it is never used by two threads at once.
    private struct Handoff: @unchecked Sendable {
        let archive: Archive
        let entry: Entry
        let messages: Messages
    }
}
