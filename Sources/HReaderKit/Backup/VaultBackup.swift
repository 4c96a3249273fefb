import Foundation
import HReaderCrypto
import HReaderStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `backup`, `backup --verify` and `restore` report about a backup file. No secret, no health data.
public struct BackupSummary: Sendable {
    public let path: String
    public let vaultID: String
    /// When the backup was taken (RFC 3339, UTC).
    public let created: String
    /// The whole file.
    public let bytes: Int
    public let databaseBytes: Int
    public let schemaVersion: Int

    init(path: String, header: BackupFile.Header, bytes: Int) {
        self.path = path
        vaultID = header.vaultID
        created = header.created
        self.bytes = bytes
        databaseBytes = header.databaseBytes
        schemaVersion = header.schemaVersion
    }
}

extension OpenVault {
    /// Writes a backup of this vault to `url` (docs/backup.md): a consistent snapshot of the database,
    /// taken while other processes may go on reading and writing, and the key file, in one encrypted,
    /// authenticated file written atomically. The vault itself is not written to.
    ///
    /// An existing file at `url` is replaced only if it is an hreader backup. The snapshot is built
    /// beside `url` as `.<name>.tmp-<hex>.db` (encrypted under the data key) and removed afterwards;
    /// `progress` gets the fraction done.
    ///
    ///     let summary = try open.backup(to: URL(fileURLWithPath: "/media/usb/health.hrbackup"))
    public func backup(to url: URL, progress: (Double) -> Void = { _ in }) throws -> BackupSummary {
        let url = url.standardizedFileURL
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        let directory = url.deletingLastPathComponent()
        guard fm.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw HReaderError.usage("the directory of --out \(url.path) does not exist")
        }
        if fm.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard !isDirectory.boolValue, BackupFile.looksLikeBackup(url.path) else {
                throw HReaderError(.failure, "\(url.path) exists and is not an hreader backup; choose another name (only an older backup is replaced)")
            }
        }
        if url.deletingLastPathComponent().path == vault.root.path {
            throw HReaderError.usage("write the backup outside the vault directory (a backup beside the vault is lost with it)")
        }

        // The key file as it is now. A backup opens with a secret through the slots of the key file
        // it holds, so its snapshot and its MAC are under the key those slots wrap (`slotKey`). That
        // is the data key, but while a rekey stays pending (another process had the database open
        // when this one opened it) the slots already wrap the new key and the database is still under
        // the previous one: the snapshot is then written under the new key, and the key file goes in
        // without its pending record (nothing in the backup is under the previous key, so it has no
        // rekey to finish). Otherwise any version of the key file wraps the same data key (passwd,
        // key add or remove change only the slots), and it goes in byte for byte.
        guard let diskBytes = fm.contents(atPath: vault.keyFileURL.path).map(Array.init) else {
            throw HReaderError(.failure, "cannot read \(vault.keyFileURL.path)")
        }
        var current: KeyFile
        do { current = try KeyFile.decode(diskBytes) } catch { throw HReaderError.from(error) }
        guard current.vaultID == keyFile.vaultID else {
            throw HReaderError(.integrity, "vault.key changed to another vault's key file while the vault was open; nothing was written")
        }
        var keyFileBytes = diskBytes
        if current.pendingRekey != nil {
            // The pending record is sealed under the key the slots wrap: it opens with `slotKey` only
            // if this file's slots are the ones this process unwrapped.
            guard (try? current.previousDataKey(current: slotKey)) != nil else {
                throw HReaderError(.integrity, "vault.key changed while the vault was open (a rekey by another process?); nothing was written, run the backup again")
            }
            current.clearPendingRekey()
            do { keyFileBytes = try current.encoded() } catch { throw HReaderError.from(error) }
        }

        AtomicFile.removeLeftovers(for: url)
        let snapshot: String
        do { snapshot = try BackupFile.temporaryPath(beside: url, suffix: ".db") } catch { throw HReaderError.from(error) }
        defer { unlink(snapshot) }
        let schemaVersion: Int
        schemaVersion = try translatingErrors {
            try db.writeSnapshot(to: snapshot, key: slotKey) { copied, total in
                progress(0.5 * Double(copied) / Double(max(total, 1)))
            }
        }
        do {
            let header = try BackupFile.write(to: url, vaultID: keyFile.vaultID, schemaVersion: schemaVersion,
                                              sqlcipher: try exclusively { try db.cipherVersion() } ?? "unknown", keyFile: keyFileBytes,
                                              database: snapshot, dataKey: slotKey) { written, total in
                progress(0.5 + 0.5 * Double(written) / Double(max(total, 1)))
            }
            let bytes = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            return BackupSummary(path: url.path, header: header, bytes: bytes)
        } catch let failure as BackupFile.Failure {
            throw BackupArchive.error(failure, path: url.path)
        } catch {
            throw HReaderError.from(error)
        }
    }
}
