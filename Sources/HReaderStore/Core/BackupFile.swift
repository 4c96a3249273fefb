import Foundation
import HReaderJSON
import HReaderCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The backup file (`hreader-backup`, version 1; docs/formats.md, "Backups"): one self-contained,
/// encrypted and authenticated file holding a vault's key file and a snapshot of its database.
///
///     offset 0       "HRBACKUP"                               8 bytes
///            8       format version, u32 big-endian (1)       4 bytes
///            12      header length H, u32 big-endian          4 bytes
///            16      header: JSON, UTF-8                      H bytes
///            16+H    vault.key, byte for byte                 key_file_bytes
///            …       the database: SQLCipher pages            database_bytes
///            end-32  HMAC-SHA256 of every byte before it      32 bytes
///
/// The MAC key is HKDF-SHA256(data key, salt from the header, "hreader-backup|1|mac|<vault id>"),
/// so only someone who can unwrap the data key can check (or forge) it. The database pages are
/// encrypted and authenticated by SQLCipher on their own; the key file's slots by AES-GCM.
///
///     let header = try BackupFile.write(to: url, vaultID: id, schemaVersion: 3, sqlcipher: v,
///                                       keyFile: bytes, database: snapshotPath, dataKey: key)
///     let reader = try BackupReader(url: url)
///     try reader.authenticate(dataKey: key)
public enum BackupFile {
    public static let magic: [UInt8] = Array("HRBACKUP".utf8)
    public static let version: UInt32 = 1
    static let prefixSize = 16
    public static let macSize = HMACSHA256.size
    static let maximumHeaderSize = 64 * 1024
    static let maximumKeyFileSize = 1 << 20
    static let pageSize = 4096
    static let saltSize = 32
    static let chunkSize = 1 << 20

    /// The header's JSON members (sorted keys when written). Every member is covered by the MAC.
    public struct Header: Equatable, Sendable {
        public let vaultID: String
        public let created: String
        public let keyFileBytes: Int
        public let databaseBytes: Int
        public let pageSize: Int
        public let schemaVersion: Int
        /// `PRAGMA cipher_version` of the library that wrote the snapshot (informative).
        public let sqlcipher: String
        public let mac: String
        public let macKey: String
        /// Base64 of the 32 random bytes salting the MAC key's HKDF.
        public let salt: String

        /// Every member a header has, no more, no fewer.
        static let names: Set<String> = ["vault_id", "created", "key_file_bytes", "database_bytes", "page_size", "schema_version",
                                         "sqlcipher", "mac", "mac_key", "salt"]

        /// The members by name, written with sorted keys.
        public var json: JSONValue {
            .object(["created": .string(created), "database_bytes": .int(databaseBytes), "key_file_bytes": .int(keyFileBytes),
                     "mac": .string(mac), "mac_key": .string(macKey), "page_size": .int(pageSize), "salt": .string(salt),
                     "schema_version": .int(schemaVersion), "sqlcipher": .string(sqlcipher), "vault_id": .string(vaultID)])
        }


        /// The whole file's length in bytes, for a header of `headerBytes` bytes; nil when the lengths
        /// add up to more than an `Int` holds (a crafted header: no file is that long).
        func fileSize(headerBytes: Int) -> Int? {
            var total = 0
            for part in [prefixSize, headerBytes, keyFileBytes, databaseBytes, macSize] {
                let (sum, overflow) = total.addingReportingOverflow(part)
                guard !overflow, part >= 0 else { return nil }
                total = sum
            }
            return total
        }
    }

    /// The first regions of a backup, read once: the prefix, the header and the key file. `bytes` are
    /// exactly the bytes read from the file; `BackupReader.authenticate` feeds these very bytes to the
    /// MAC (it never reads them from the file again), so what is decoded and used (the key file that a
    /// restore installs, the header's lengths and vault id) is what the MAC vouches for.
    public struct Head: Sendable {
        public let header: Header
        /// Magic, version, H, the header's JSON and the key file, as read.
        public let bytes: [UInt8]
        /// H, the header's JSON length.
        public let headerBytes: Int
        /// The whole file's length, as the header's lengths add up (checked against the file's size).
        public let fileSize: Int

        /// `vault.key` as it is inside the backup (its last `key_file_bytes` of `bytes`).
        public var keyFile: [UInt8] { Array(bytes[(prefixSize + headerBytes)...]) }
        /// Where the database's bytes begin.
        public var databaseOffset: Int { bytes.count }
    }

    /// Reads and checks the head of a backup that is `size` bytes long: magic, version, header length,
    /// the header's members, and that the lengths add up to `size` exactly (a truncated or extended
    /// file is refused here), then the key file. `read(count, offset)` returns exactly `count` bytes
    /// at `offset` or throws. Throws only `Failure`.
    ///
    ///     let head = try BackupFile.readHead(size: bytes.count) { count, offset in Array(bytes[offset..<(offset + count)]) }
    public static func readHead(size: Int, read: (_ count: Int, _ offset: Int) throws -> [UInt8]) throws -> Head {
        guard size >= magic.count, try read(magic.count, 0) == magic else { throw Failure.notABackup }
        guard size >= prefixSize + macSize else { throw Failure.damaged("it is truncated") }
        let prefix = magic + (try read(prefixSize - magic.count, magic.count))
        let version = prefix[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard version == Self.version else { throw Failure.unsupportedVersion(version) }
        let headerBytes = Int(prefix[12..<16].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard headerBytes > 0, headerBytes <= maximumHeaderSize, prefixSize + headerBytes + macSize <= size else {
            throw Failure.damaged("its header length is out of range")
        }
        let json = try read(headerBytes, prefixSize)
        let header = try BackupReader.decodeHeader(json)
        guard let expected = header.fileSize(headerBytes: headerBytes) else {
            throw Failure.damaged("its header's lengths are out of range")
        }
        guard expected == size else {
            throw Failure.damaged(size < expected ? "it is truncated (\(size) of \(expected) bytes)" : "it has \(size - expected) bytes after its end")
        }
        let keyFile = try read(header.keyFileBytes, prefixSize + headerBytes)
        return Head(header: header, bytes: prefix + json + keyFile, headerBytes: headerBytes, fileSize: size)
    }

    public enum Failure: Error, Equatable, Sendable {
        /// The first bytes are not `HRBACKUP`.
        case notABackup
        case unsupportedVersion(UInt32)
        /// The structure is wrong: lengths, the header's JSON, a size that does not add up.
        case damaged(String)
        /// The MAC does not match: some byte of the file changed (or the file changed while it was read).
        case authenticationFailed
        case io(String)
    }

    /// The key that authenticates one backup.
    public static func macKey(dataKey: SecretBytes, header: Header) throws -> SecretBytes {
        guard let salt = Data(base64Encoded: header.salt).map(Array.init) else { throw Failure.damaged("its header's salt is not base64") }
        return try HKDF.sha256(key: dataKey, salt: salt, info: Array("hreader-backup|\(version)|mac|\(header.vaultID)".utf8), length: 32)
    }

    /// A temporary name beside `url`: `.<name>.tmp-<12 hex>` (the same prefix as `AtomicFile`'s, so
    /// `AtomicFile.removeLeftovers(for: url)` clears what a killed backup left).
    public static func temporaryPath(beside url: URL, suffix: String = "") throws -> String {
        url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".tmp-"
            + (try SecureRandom.bytes(6)).map { String(format: "%02x", $0) }.joined() + suffix
    }

    /// Whether the file at `path` begins with the backup magic (an older backup may be replaced; any
    /// other file is not ours to overwrite).
    public static func looksLikeBackup(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return Array(handle.readData(ofLength: magic.count)) == magic
    }

    /// Writes a backup atomically: a temporary file beside `url` (mode 0600), fsync, rename over
    /// `url`, fsync the directory. `database` is the path of an encrypted snapshot
    /// (`Database.writeSnapshot`), copied in as it is. Returns the header written.
    @discardableResult
    public static func write(to url: URL, vaultID: String, schemaVersion: Int, sqlcipher: String, keyFile: [UInt8],
                             database: String, dataKey: SecretBytes, now: Date = Date(),
                             progress: (_ written: Int, _ total: Int) -> Void = { _, _ in }) throws -> Header {
        let input = Glibc_open(database, O_RDONLY | O_CLOEXEC, 0)
        guard input >= 0 else { throw Failure.io("cannot read the snapshot \(database): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0 else { throw Failure.io("cannot read the snapshot \(database)") }
        let databaseBytes = Int(info.st_size)
        guard databaseBytes > 0, databaseBytes % pageSize == 0 else {
            throw Failure.io("the snapshot \(database) is \(databaseBytes) bytes, not whole \(pageSize)-byte pages")
        }
        guard keyFile.count <= maximumKeyFileSize else { throw Failure.io("the key file is larger than \(maximumKeyFileSize) bytes") }
        let header = Header(vaultID: vaultID, created: Timestamp.rfc3339(now), keyFileBytes: keyFile.count,
                            databaseBytes: databaseBytes, pageSize: pageSize, schemaVersion: schemaVersion, sqlcipher: sqlcipher,
                            mac: "hmac-sha256", macKey: "hkdf-sha256", salt: Data(try SecureRandom.bytes(saltSize)).base64EncodedString())
        let headerJSON = header.json.serializedBytes(sortingKeys: true)
        let mac = try HMACSHA256(key: try macKey(dataKey: dataKey, header: header))
        guard let total = header.fileSize(headerBytes: headerJSON.count) else { throw Failure.io("the snapshot is too large") }

        let temporary = try temporaryPath(beside: url)
        let output = Glibc_open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw Failure.io("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(output) }
            var written = 0
            func emit(_ bytes: UnsafeRawBufferPointer) throws {
                try mac.update(bytes)
                try writeAll(output, bytes, path: temporary)
                written += bytes.count
            }
            try (magic + bigEndian(version) + bigEndian(UInt32(headerJSON.count)) + headerJSON + keyFile).withUnsafeBytes(emit)
            var buffer = [UInt8](repeating: 0, count: chunkSize)
            var copied = 0
            while copied < databaseBytes {
                let n = try buffer.withUnsafeMutableBytes { try readSome(input, into: $0, at: copied, path: database) }
                guard n > 0 else { throw Failure.io("the snapshot \(database) ended early") }
                try buffer.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                copied += n
                progress(written, total)
            }
            try mac.finalize().withUnsafeBytes { tag in
                try writeAll(output, tag, path: temporary)
                written += tag.count
            }
            guard written == total else { throw Failure.io("wrote \(written) bytes, expected \(total)") }
            guard fsync(output) == 0 else { throw Failure.io("cannot fsync \(temporary): \(String(cString: strerror(errno)))") }
        }
        guard rename(temporary, url.path) == 0 else { throw Failure.io("cannot rename over \(url.path): \(String(cString: strerror(errno)))") }
        renamed = true
        do { try AtomicFile.syncDirectory(url.deletingLastPathComponent().path) } catch { throw Failure.io("\(error)") }
        return header
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc_write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure.io("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// One `pread` at `offset` (retried on EINTR); 0 at the end of the file.
    static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String) throws -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno != EINTR { throw Failure.io("cannot read \(path): \(String(cString: strerror(errno)))") }
        }
    }
}

/// Reads a backup: its head (header and key file) once, at open (no secret needed, nothing trusted
/// yet), then, given the data key, authenticates every byte and copies the database out.
///
/// Every byte that is used is a byte the MAC covers: the head is read from the file once and kept,
/// and each pass of `authenticate` feeds the MAC those kept bytes, then the database's bytes as it
/// reads (and hands them on). A file changed while it is open (a synced folder, a removable disk; the
/// window includes the password prompt) fails the MAC instead of slipping in a key file or a header
/// that was never authenticated.
public final class BackupReader {
    public let url: URL
    public let head: BackupFile.Head
    public var header: BackupFile.Header { head.header }
    /// `vault.key` as it was at backup time: the bytes read at open, which `authenticate` MACs. Not
    /// authenticated until `authenticate` passes (its own checksum and AES-GCM tags still apply when
    /// it is decoded).
    public var keyFile: [UInt8] { head.keyFile }
    /// The file's length in bytes, at open.
    public var size: Int { head.fileSize }
    private let fd: Int32

    /// Opens `url` and checks its structure: magic, version, header, and that the lengths add up to
    /// the file's size exactly (a truncated or extended file is refused here).
    public init(url: URL) throws {
        self.url = url
        let fd = Glibc_open(url.path, O_RDONLY | O_CLOEXEC, 0)
        guard fd >= 0 else { throw BackupFile.Failure.io("cannot read \(url.path): \(String(cString: strerror(errno)))") }
        var ok = false
        defer { if !ok { close(fd) } }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw BackupFile.Failure.io("cannot read \(url.path)") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw BackupFile.Failure.io("\(url.path) is not a regular file") }

        self.head = try BackupFile.readHead(size: Int(info.st_size)) { count, offset in
            var out = [UInt8](repeating: 0, count: count)
            var got = 0
            while got < count {
                let n = try out.withUnsafeMutableBytes {
                    try BackupFile.readSome(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[got...]), at: offset + got, path: url.path)
                }
                guard n > 0 else { throw BackupFile.Failure.damaged("it is truncated") }
                got += n
            }
            return out
        }
        self.fd = fd
        ok = true
    }

    deinit { close(fd) }

    static func decodeHeader(_ json: [UInt8]) throws -> BackupFile.Header {
        // Parsed once, by the fuzzed parser; a name given twice is refused (which of two would count?).
        guard let object = (try? JSONParser.parse(json, duplicateNames: .refused))?.object else {
            throw BackupFile.Failure.damaged("its header is not JSON")
        }
        guard Set(object.keys) == BackupFile.Header.names, object.keys.count == BackupFile.Header.names.count else {
            throw BackupFile.Failure.damaged("its header has members this version does not know, or lacks some")
        }
        guard let header = BackupFile.Header(json: object) else {
            throw BackupFile.Failure.damaged("its header's members have the wrong types")
        }
        guard UUID(uuidString: header.vaultID) != nil else { throw BackupFile.Failure.damaged("its vault id is not a UUID") }
        guard header.mac == "hmac-sha256", header.macKey == "hkdf-sha256" else {
            throw BackupFile.Failure.damaged("it names a MAC this version does not know")
        }
        guard header.pageSize == BackupFile.pageSize, header.databaseBytes > 0, header.databaseBytes % header.pageSize == 0 else {
            throw BackupFile.Failure.damaged("its database is not whole \(BackupFile.pageSize)-byte pages")
        }
        guard header.keyFileBytes > 0, header.keyFileBytes <= BackupFile.maximumKeyFileSize else {
            throw BackupFile.Failure.damaged("its key file length is out of range")
        }
        guard let salt = Data(base64Encoded: header.salt), salt.count == BackupFile.saltSize else {
            throw BackupFile.Failure.damaged("its salt is malformed")
        }
        guard header.schemaVersion >= 1 else { throw BackupFile.Failure.damaged("its schema version is out of range") }
        return header
    }

    /// Authenticates the backup: the MAC over the head kept since open, then over the database's
    /// bytes as they are read from the file (each handed to `database` on the way), compared with
    /// the file's last 32 bytes. Throws `.authenticationFailed` on any difference: only then may what
    /// `database` received be trusted (and kept).
    public func authenticate(dataKey: SecretBytes, database: ((UnsafeRawBufferPointer) throws -> Void)? = nil,
                             progress: (_ read: Int, _ total: Int) -> Void = { _, _ in }) throws {
        let mac = try HMACSHA256(key: try BackupFile.macKey(dataKey: dataKey, header: header))
        try head.bytes.withUnsafeBytes { try mac.update($0) }
        let end = size - BackupFile.macSize
        var buffer = [UInt8](repeating: 0, count: BackupFile.chunkSize)
        var offset = head.databaseOffset
        while offset < end {
            let n = try buffer.withUnsafeMutableBytes {
                try BackupFile.readSome(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<min($0.count, end - offset)]), at: offset, path: url.path)
            }
            guard n > 0 else { throw BackupFile.Failure.damaged("it is truncated") }
            try buffer.withUnsafeBytes { bytes in
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<n])
                try mac.update(chunk)
                try database?(chunk)
            }
            offset += n
            progress(offset, size)
        }
        var stored = [UInt8](repeating: 0, count: BackupFile.macSize)
        let n = try stored.withUnsafeMutableBytes { try BackupFile.readSome(fd, into: $0, at: end, path: url.path) }
        guard n == BackupFile.macSize else { throw BackupFile.Failure.damaged("it is truncated") }
        guard HMACSHA256.equal(try mac.finalize(), stored) else { throw BackupFile.Failure.authenticationFailed }
    }

    /// Copies the database into a new file at `path` (created with `O_EXCL`, mode 0600, fsynced) while
    /// authenticating the whole backup once more (the file could have changed since an earlier check).
    /// On any failure the new file is removed.
    public func extractDatabase(to path: String, dataKey: SecretBytes, progress: (_ read: Int, _ total: Int) -> Void = { _, _ in }) throws {
        let output = Glibc_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw BackupFile.Failure.io("cannot create \(path): \(String(cString: strerror(errno)))") }
        var kept = false
        defer { if !kept { unlink(path) } }
        defer { close(output) }
        try authenticate(dataKey: dataKey, database: { try BackupFile.writeAll(output, $0, path: path) }, progress: progress)
        guard fsync(output) == 0 else { throw BackupFile.Failure.io("cannot fsync \(path): \(String(cString: strerror(errno)))") }
        kept = true
    }
}

#if canImport(Glibc)
private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Glibc.open(path, flags, mode) }
private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Glibc.write(fd, buffer, count) }
#else
private func Glibc_open(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 { Darwin.open(path, flags, mode) }
private func Glibc_write(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { Darwin.write(fd, buffer, count) }
#endif

// In an extension, so the header keeps its memberwise initializer.
extension BackupFile.Header {
    /// Nil when a member has the wrong kind (the caller checked the names).
    init?(json object: JSONObject) {
        func text(_ name: String) -> String? { object[name]?.string }
        func number(_ name: String) -> Int? { object[name]?.int }
        guard let vaultID = text("vault_id"), let created = text("created"), let keyFileBytes = number("key_file_bytes"),
              let databaseBytes = number("database_bytes"), let pageSize = number("page_size"),
              let schemaVersion = number("schema_version"), let sqlcipher = text("sqlcipher"), let mac = text("mac"),
              let macKey = text("mac_key"), let salt = text("salt") else { return nil }
        self.init(vaultID: vaultID, created: created, keyFileBytes: keyFileBytes, databaseBytes: databaseBytes, pageSize: pageSize,
                  schemaVersion: schemaVersion, sqlcipher: sqlcipher, mac: mac, macKey: macKey, salt: salt)
    }
}
