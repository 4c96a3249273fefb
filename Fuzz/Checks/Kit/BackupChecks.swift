// The invariants of the `backup-header` and `key-file` harnesses (fuzz-kit), replayed by HReaderCLITests
// over Tests/HReaderCLITests/Fuzz/<harness>/ (docs/security.md, "Fuzzing"). Issue 23: the backup file's
// head and the key file are read before any secret is known, so they are untrusted bytes.
#if DEBUG || FUZZING
import Foundation
import FuzzDriver
@testable import HReaderCrypto
@testable import HReaderStore

extension KitFuzzChecks {
    // MARK: 7. Backup file head

    /// The bytes as a whole backup file, read by `BackupFile.readHead` exactly as `BackupReader` reads
    /// one (restore, `backup --verify`): a head or a `BackupFile.Failure`, never a trap or a read
    /// outside the file. A head's lengths add up to the file's size, each within its limit; the head is
    /// the file's first bytes; the header written back as `BackupFile.write` writes it reads as the same
    /// header. Then its key file goes through the `key-file` checks.
    public static func backupHeader(_ data: Data) throws {
        let bytes = [UInt8](data)
        let head: BackupFile.Head
        do {
            head = try BackupFile.readHead(size: bytes.count) { count, offset in
                guard count >= 0, offset >= 0, offset <= bytes.count, count <= bytes.count - offset else {
                    throw FuzzViolation("readHead read \(count) bytes at \(offset) of a \(bytes.count)-byte file")
                }
                return Array(bytes[offset..<(offset + count)])
            }
        } catch is BackupFile.Failure {
            return
        }
        let header = head.header
        guard head.fileSize == bytes.count,
              head.bytes.count + header.databaseBytes + BackupFile.macSize == bytes.count,
              head.bytes == Array(bytes.prefix(head.bytes.count)),
              head.headerBytes >= 1, head.headerBytes <= BackupFile.maximumHeaderSize,
              head.keyFile.count == header.keyFileBytes, (1...BackupFile.maximumKeyFileSize).contains(header.keyFileBytes),
              header.databaseBytes > 0, header.databaseBytes % BackupFile.pageSize == 0, header.pageSize == BackupFile.pageSize,
              header.schemaVersion >= 1, UUID(uuidString: header.vaultID) != nil
        else {
            throw FuzzViolation("a head out of its limits: \(header), header \(head.headerBytes) bytes, file \(bytes.count)")
        }
        let written = header.json.serializedBytes(sortingKeys: true)
        let again: BackupFile.Header
        do { again = try BackupReader.decodeHeader(written) } catch {
            throw FuzzViolation("the header written back does not read: \(error)\n\(String(decoding: written, as: UTF8.self))")
        }
        guard again == header else { throw FuzzViolation("the header written back reads differently: \(header) → \(again)") }
        try keyFile(Data(head.keyFile))
    }

    // MARK: 8. Key file

    /// `KeyFile.decode` over the bytes, and over the same bytes with their checksum recomputed (so that
    /// edits reach the checks behind the checksum): a key file or a `KeyFileError`, never a trap. A key
    /// file is within the limits (slots, KDF work per slot and in total, salt, nonce and key sizes, a
    /// password slot, unique ids); encoding it gives bytes that decode to the same key file and encode
    /// to the same bytes again.
    public static func keyFile(_ data: Data) throws {
        let raw = [UInt8](data)
        try keyFileRoundTrip(raw)
        if let resealed = KeyFile.resealed(raw), resealed != raw { try keyFileRoundTrip(resealed) }
    }

    static func keyFileRoundTrip(_ bytes: [UInt8]) throws {
        let file: KeyFile
        do {
            file = try KeyFile.decode(bytes)
        } catch is KeyFileError {
            return
        } catch {
            throw FuzzViolation("KeyFile.decode threw \(type(of: error)): \(error)")
        }
        guard file.slots.count <= KeyFile.maximumSlots, file.totalWork <= KeyFile.maximumTotalWorkOnRead,
              file.slots.contains(where: { $0.kind == .password }),
              Set(file.slots.map(\.id)).count == file.slots.count
        else { throw FuzzViolation("a key file beyond its limits: \(file.slots.count) slots, work \(file.totalWork)") }
        for slot in file.slots {
            guard (try? slot.kdf.validate()) != nil, slot.kdf.work <= max(KDFParameters.maximumWork, UInt64(KDFParameters.legacyMaximumPBKDF2Iterations)),
                  (16...KeyFile.maximumSaltSize).contains(slot.salt.count), slot.nonce.count == AESGCM.nonceSize,
                  slot.wrappedKey.count == KeyFile.dataKeySize + AESGCM.tagSize,
                  (slot.kind == .questions) == (slot.questions != nil), (slot.questions?.count ?? 2) >= 2
            else { throw FuzzViolation("slot \(slot.id) beyond its limits: \(slot.kdf), salt \(slot.salt.count) bytes") }
        }
        let encoded: [UInt8]
        do { encoded = try file.encoded() } catch { throw FuzzViolation("a decoded key file does not encode: \(error)") }
        let again: KeyFile
        do { again = try KeyFile.decode(encoded) } catch {
            throw FuzzViolation("an encoded key file does not decode: \(error)\n\(String(decoding: encoded, as: UTF8.self))")
        }
        guard again == file else { throw FuzzViolation("an encoded key file decodes differently") }
        guard try again.encoded() == encoded else { throw FuzzViolation("encoding a key file is not stable") }
    }
}
#endif
