import Foundation
import HReaderCrypto
import HReaderStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A backup file opened to be checked or restored (docs/backup.md). Opening reads only its header
/// and key file and checks its structure; nothing is trusted until the data key, unwrapped with the
/// user's secret, authenticates every byte.
///
///     try BackupArchive.checkRestoreTarget(vault, replace: false)      // before asking for a password
///     let archive = try BackupArchive(url: file)                        // damaged or truncated: exit 7
///     let restored = try archive.restore(into: vault, credential: .password(p), replace: false)
public final class BackupArchive {
    public let url: URL
    let reader: BackupReader

    public init(url: URL) throws {
        self.url = url.standardizedFileURL
        do {
            reader = try BackupReader(url: self.url)
        } catch BackupFile.Failure.io(let why) {
            throw HReaderError.usage(why)
        } catch let failure as BackupFile.Failure {
            throw Self.error(failure, path: self.url.path)
        }
    }

    public var vaultID: String { reader.header.vaultID }
    public var created: String { reader.header.created }

    /// The backup's key file (its checksum and structure checked; its slots open only with a secret).
    public func keyFile() throws -> KeyFile {
        let keyFile: KeyFile
        do {
            keyFile = try KeyFile.decode(reader.keyFile)
        } catch let e as KeyFileError {
            switch e {
            case let .damaged(why): throw damaged("its key file is damaged: \(why)")
            case let .unsupportedVersion(v): throw damaged("its key file has version \(v), which this hreader does not know")
            default: throw HReaderError.from(e)
            }
        }
        guard keyFile.vaultID == reader.header.vaultID else { throw damaged("its key file belongs to another vault") }
        return keyFile
    }

    /// The data key, unwrapped from the backup's own key file with the user's secret.
    func dataKey(_ credential: Credential) throws -> SecretBytes {
        let keyFile = try keyFile()
        do {
            switch credential {
            case let .password(secret): return try keyFile.unlock(kind: .password, secret: secret).dataKey
            case let .recoveryKey(secret): return try keyFile.unlock(kind: .recovery, secret: secret).dataKey
            case let .answers(answers): return try keyFile.unlock(kind: .questions, secret: try SecretAnswers.normalize(answers)).dataKey
            case .session:
                throw HReaderError.usage("a backup opens with its password, recovery key or security answers, not with an unlock session")
            }
        } catch {
            throw HReaderError.from(error)
        }
    }

    // MARK: Verify

    /// Checks the backup without restoring it: the key file, the MAC over every byte, and then every
    /// database page (HMAC), the b-trees and the foreign keys, on a copy in a private temporary
    /// directory (`$TMPDIR`, removed afterwards; the copy is as encrypted as the backup).
    public func verify(credential: Credential, progress: (Double) -> Void = { _ in }) throws -> BackupSummary {
        let key = try dataKey(credential)
        let scratch = try Self.privateTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let copy = scratch + "/vault.db"
        do {
            try reader.extractDatabase(to: copy, dataKey: key) { read, total in progress(0.6 * Double(read) / Double(max(total, 1))) }
        } catch let failure as BackupFile.Failure {
            throw Self.error(failure, path: url.path)
        }
        _ = try checkDatabase(at: copy, key: key)
        progress(1)
        return BackupSummary(path: url.path, header: reader.header, bytes: reader.size)
    }

    /// Opens a copy of the database and checks it page by page; returns its schema version.
    private func checkDatabase(at path: String, key: SecretBytes) throws -> Int {
        let db: Database
        do {
            db = try Database.open(path: path, key: key)
        } catch Database.OpenFailure.notADatabaseUnderThisKey {
            throw damaged("its database does not open with its own key")
        } catch {
            throw HReaderError.from(error)
        }
        let problems: [String]
        let version: Int
        do {
            problems = try db.integrityProblems()
            version = try Migrator().currentVersion(of: db)
        } catch let e as DatabaseError where e.isIntegrityFailure {
            throw damaged("its database failed its integrity check (\(e.message))")
        } catch {
            throw HReaderError.from(error)
        }
        guard problems.isEmpty else {
            throw damaged("its database failed its integrity check (\(problems.count) problem(s), first: \(problems[0]))")
        }
        guard version == reader.header.schemaVersion else {
            throw damaged("its database has schema version \(version) but its header says \(reader.header.schemaVersion)")
        }
        return version
    }

    // MARK: Restore

    /// What is at the restore target.
    public enum RestoreTarget: Sendable {
        case newDirectory
        case emptyDirectory
        /// A vault (or what is left of one: `vault.key` or `vault.db`), replaced only with `--replace`.
        case vault
    }

    /// Refuses a target that holds a vault (without `replace`) or anything else; call before asking
    /// for a password, and again just before the restore takes the target's name.
    @discardableResult
    public static func checkRestoreTarget(_ vault: Vault, replace: Bool) throws -> RestoreTarget {
        let fm = FileManager.default
        let root = vault.root.path
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: root, isDirectory: &isDirectory) else { return .newDirectory }
        guard isDirectory.boolValue else { throw HReaderError(.vaultPresence, "\(root) exists and is not a directory") }
        let names = (try? fm.contentsOfDirectory(atPath: root)) ?? []
        if names.isEmpty { return .emptyDirectory }
        if fm.fileExists(atPath: vault.keyFileURL.path) || fm.fileExists(atPath: vault.databaseURL.path) {
            guard replace else {
                throw HReaderError(.vaultPresence, "a vault already exists at \(root); restore into a new or empty directory, or pass --replace (the replaced vault is kept aside)")
            }
            return .vault
        }
        throw HReaderError(.vaultPresence, "\(root) is not empty and holds no vault; choose a new or empty directory")
    }

    public struct Restored: Sendable {
        public let backup: BackupSummary
        public let vault: String
        /// With `--replace`: where the vault that was there now is.
        public let replacedVaultKeptAt: String?
    }

    /// Restores the backup as the vault `vault`. Every byte is authenticated, and a copy of the
    /// database checked page by page in a private staging directory beside the target, before the
    /// target is touched; a damaged backup leaves nothing behind. The staging directory then takes
    /// the target's name in one rename (with `replace`, one atomic exchange: the replaced vault is
    /// moved aside to `<name>.replaced-<time>`, never deleted), and the restored vault is opened
    /// once more as a last check.
    public func restore(into vault: Vault, credential: Credential, replace: Bool,
                        progress: (Double) -> Void = { _ in }) throws -> Restored {
        _ = try Self.checkRestoreTarget(vault, replace: replace)
        let key = try dataKey(credential)
        do {
            try reader.authenticate(dataKey: key, progress: { read, total in progress(0.3 * Double(read) / Double(max(total, 1))) })
        } catch let failure as BackupFile.Failure {
            throw Self.error(failure, path: url.path)
        }

        // Staging: beside the target, so that the last step is a rename on one file system.
        let fm = FileManager.default
        let parent = vault.root.deletingLastPathComponent()
        let name = vault.root.lastPathComponent
        // Directories created for the target's parent are removed again if the restore fails.
        var created: [URL] = []
        var missing = parent
        while !fm.fileExists(atPath: missing.path) && missing.path != "/" {
            created.append(missing)
            missing = missing.deletingLastPathComponent()
        }
        var committed = false
        defer { if !committed { for directory in created { rmdir(directory.path) } } }
        if !created.isEmpty {
            do { try fm.createDirectory(at: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) } catch {
                throw HReaderError(.failure, "cannot create \(parent.path)")
            }
        }
        let staging = parent.appendingPathComponent(".\(name).restore-\(try Self.randomSuffix())")
        guard mkdir(staging.path, 0o700) == 0 else {
            throw HReaderError(.failure, "cannot create \(staging.path): \(String(cString: strerror(errno)))")
        }
        defer { if !committed { try? fm.removeItem(at: staging) } }
        let staged = Vault(root: staging)
        do {
            try AtomicFile.write(reader.keyFile, to: staged.keyFileURL, mode: 0o600)
            try reader.extractDatabase(to: staged.databaseURL.path, dataKey: key) { read, total in
                progress(0.3 + 0.4 * Double(read) / Double(max(total, 1)))
            }
        } catch let failure as BackupFile.Failure {
            throw Self.error(failure, path: url.path)
        } catch {
            throw HReaderError.from(error)
        }
        let version = try checkDatabase(at: staged.databaseURL.path, key: key)
        let supported = Migrator().latestVersion
        guard version <= supported else {
            throw HReaderError(.failure, "the backup has schema version \(version) but this hreader knows only up to \(supported); upgrade hreader (nothing was restored)")
        }
        progress(0.9)
        do { try AtomicFile.syncDirectory(staging.path) } catch { throw HReaderError.from(error) }

        // The target may have changed while the backup was checked.
        let target = try Self.checkRestoreTarget(vault, replace: replace)
        var keptAt: String?
        switch target {
        case .newDirectory, .emptyDirectory:
            // rename(2) takes an empty directory's place atomically.
            guard rename(staging.path, vault.root.path) == 0 else {
                throw HReaderError(.failure, "cannot rename \(staging.path) to \(vault.root.path): \(String(cString: strerror(errno)))")
            }
            committed = true
        case .vault:
            let aside = parent.appendingPathComponent("\(name).replaced-\(Self.compactTime())-\(try Self.randomSuffix(bytes: 3))")
            try vault.withExclusiveLock {
                if AtomicFile.exchange(staging.path, vault.root.path) {
                    committed = true
                    // The replaced vault is now under the staging name; give it its own.
                    guard rename(staging.path, aside.path) == 0 else {
                        throw HReaderError(.failure, "the backup was restored, but the replaced vault could not be renamed from \(staging.path) to \(aside.path)")
                    }
                } else {
                    guard rename(vault.root.path, aside.path) == 0 else {
                        throw HReaderError(.failure, "cannot move the vault at \(vault.root.path) aside: \(String(cString: strerror(errno)))")
                    }
                    guard rename(staging.path, vault.root.path) == 0 else {
                        let why = String(cString: strerror(errno))
                        _ = rename(aside.path, vault.root.path)
                        throw HReaderError(.failure, "cannot rename \(staging.path) to \(vault.root.path): \(why); the vault was left as it was")
                    }
                    committed = true
                }
            }
            keptAt = aside.path
        }
        do { try AtomicFile.syncDirectory(parent.path) } catch { throw HReaderError.from(error) }

        // The last check: the restored vault opens as any vault does (pending migrations run here).
        do {
            let restoredKeyFile = try vault.readKeyFile()
            guard restoredKeyFile.vaultID == reader.header.vaultID else { throw damaged("the restored key file is not the backup's") }
            _ = try vault.openDatabase(key: key, migrator: .reconciling).scalarInt("SELECT count(*) FROM sqlite_schema")
        } catch {
            let reason = HReaderError.from(error).message
            throw HReaderError(.integrity, "the restored vault at \(vault.root.path) does not open (\(reason))"
                + (keptAt.map { "; the replaced vault is at \($0)" } ?? ""))
        }
        progress(1)
        return Restored(backup: BackupSummary(path: url.path, header: reader.header, bytes: reader.size),
                        vault: vault.root.path, replacedVaultKeptAt: keptAt)
    }

    // MARK: Helpers

    func damaged(_ why: String) -> HReaderError {
        HReaderError(.integrity, "the backup \(url.path) is damaged: \(why)")
    }

    static func error(_ failure: BackupFile.Failure, path: String) -> HReaderError {
        switch failure {
        case .notABackup:
            return HReaderError(.integrity, "\(path) is not an hreader backup (or its first bytes are damaged)")
        case let .unsupportedVersion(v):
            return HReaderError(.integrity, "the backup \(path) has format version \(v), which this hreader does not know (damaged, or written by a newer hreader)")
        case let .damaged(why):
            return HReaderError(.integrity, "the backup \(path) is damaged: \(why)")
        case .authenticationFailed:
            return HReaderError(.integrity, "the backup \(path) is damaged or was tampered with: its authentication code does not match")
        case let .io(why):
            return HReaderError(.failure, why)
        }
    }

    static func randomSuffix(bytes: Int = 6) throws -> String {
        try SecureRandom.bytes(bytes).map { String(format: "%02x", $0) }.joined()
    }

    static func compactTime(_ date: Date = Date()) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
    }

    /// A new directory (mode 0700) under `$TMPDIR`.
    static func privateTemporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-verify-\(try randomSuffix())").path
        guard mkdir(path, 0o700) == 0 else {
            throw HReaderError(.failure, "cannot create a temporary directory \(path): \(String(cString: strerror(errno)))")
        }
        return path
    }
}
