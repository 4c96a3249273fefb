import CSQLCipher
import Foundation
import HReaderCrypto

/// A copy of a foreign database kept on disk sealed while it is read (`Database.openForeign(sealed:)`):
/// its bytes are written as they come (inflated from a zip, say), encrypted with AES-256-CTR under a
/// key made at random for this process and held only in its memory (CSQLCipher's SealedScratch.h),
/// so that a database of any size is read in flat memory and never lies on disk in plaintext.
/// The file is created in `directory` (the vault's own, private to its owner), removed from it as
/// soon as SQLite has it open, and on `deinit` in any case; should the process die before, what is
/// left is ciphertext whose key died with it (`sweep` removes such leftovers).
///
///     let scratch = try SealedScratch(in: vault.root)
///     try scratch.write(chunk)          // as often as needed
///     let db = try Database.openForeign(sealed: scratch)
public final class SealedScratch {
    public let path: String
    private var fd: Int32
    private var writer: OpaquePointer?
    /// Bytes written so far.
    public private(set) var count = 0
    /// The first bytes, to check the SQLite header.
    private var head: [UInt8] = []
    public static let prefix = ".foreign-", suffix = ".sealed"

    public enum Failure: Error, Equatable {
        case cannotCreate(String)
        case cannotWrite(String)
    }

    public init(in directory: URL) throws {
        Self.sweep(directory)
        guard let random = try? SecureRandom.bytes(12) else { throw Failure.cannotCreate("no random bytes") }
        path = directory.appendingPathComponent(Self.prefix + random.map { String(format: "%02x", $0) }.joined() + Self.suffix).path
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure.cannotCreate(String(cString: strerror(errno))) }
        // Held while this process has the file: `sweep` in another one leaves it alone.
        _ = flock(fd, LOCK_EX)
        guard let made = hreader_sealed_writer_new(fd) else {
            close(fd); unlink(path)
            throw Failure.cannotCreate("the sealed file could not be set up")
        }
        writer = made
    }

    deinit {
        if let writer { hreader_sealed_writer_free(writer) }
        if fd >= 0 { close(fd) }
        unlink(path)
    }

    /// Appends the next bytes. A database written in WAL mode (Android's are) says so in its header
    /// (bytes 18 and 19 are 2); the copy is one file, read as the rollback-journal database it is
    /// once checkpointed, so those two bytes are written as 1.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let writer, bytes.count > 0 else { return }
        var chunk = [UInt8](bytes)
        if count < 100 {
            let needed = min(100 - count, chunk.count)
            head += chunk[0..<needed]
            for index in [18, 19] where index >= count && index < count + chunk.count && chunk[index - count] == 2 {
                chunk[index - count] = 1
            }
        }
        let rc = chunk.withUnsafeBufferPointer { hreader_sealed_write(writer, $0.baseAddress, $0.count) }
        guard rc == 0 else { throw Failure.cannotWrite(String(cString: strerror(rc))) }
        count += bytes.count
    }

    /// Ends the writing: the header must be SQLite's.
    func finish() throws {
        if let writer {
            hreader_sealed_writer_free(writer)
            self.writer = nil
        }
        guard head.starts(with: Database.plaintextHeader), count >= 512 else { throw Database.ForeignFailure.notSQLite }
    }

    /// Removes the file from its directory (SQLite keeps its own descriptor).
    func remove() {
        unlink(path)
        if fd >= 0 { close(fd); fd = -1 }
    }

    /// Removes sealed copies a process left behind (it died while reading them: their key is gone);
    /// one whose lock another process holds is in use and stays.
    static func sweep(_ directory: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let path = directory.appendingPathComponent(name).path
            let other = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard other >= 0 else { continue }
            if flock(other, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
            close(other)
        }
    }
}
