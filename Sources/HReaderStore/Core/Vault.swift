import Foundation
import HReaderCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A vault directory (mode 0700) and the files it holds (mode 0600):
/// `vault.db` (+ `-wal`, `-shm`), `vault.key`, `sessions/`, and `vault.lock` for key-file updates.
///
///     let vault = Vault(root: url)
///     let keyFile = try vault.readKeyFile()
///     let db = try vault.openDatabase(key: dataKey)
public struct Vault: Sendable {
    /// The directory, absolute and standardized (no `.` or `..` components, no trailing slash).
    public let path: String

    public var root: URL { URL(fileURLWithPath: path, isDirectory: true) }

    public init(root: URL) { path = root.standardizedFileURL.path }

    /// The vault at `path` (absolute, or relative to the working directory), standardized as a file
    /// URL would be but without making one: a process's first URL costs a short command 0.25 ms
    /// (docs/cli.md, "Start-up"), and the commands scripts call need only paths.
    public init(path: String) { self.path = Self.standardized(path) }

    public var keyFilePath: String { child("vault.key") }
    public var databasePath: String { child("vault.db") }
    /// Where `init` builds the database; renamed to `vault.db` only after the key file is written.
    var newDatabasePath: String { child("vault.db.new") }
    public var sessionsPath: String { child("sessions") }
    var lockPath: String { child("vault.lock") }

    public var keyFileURL: URL { URL(fileURLWithPath: keyFilePath) }
    public var databaseURL: URL { URL(fileURLWithPath: databasePath) }
    var newDatabaseURL: URL { URL(fileURLWithPath: newDatabasePath) }
    public var sessionsURL: URL { URL(fileURLWithPath: sessionsPath, isDirectory: true) }

    private func child(_ name: String) -> String { path == "/" ? "/" + name : path + "/" + name }

    /// `URL(fileURLWithPath: text).standardizedFileURL.path`, computed here for the plain case (no
    /// `.`, `..` or empty component, no leading `~`), else by Foundation; VaultPathTests hold the two equal.
    static func standardized(_ text: String) -> String {
        #if os(Linux)
        var bytes = Array(text.utf8)
        if bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        let components = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        func isDots(_ component: ArraySlice<UInt8>) -> Bool { component.elementsEqual([0x2E]) || component.elementsEqual([0x2E, 0x2E]) }
        // An empty component is `//`, or the root's before the first `/`. Foundation also expands a
        // leading `~` (and `~user`): that is left to it.
        let plain = !bytes.isEmpty && bytes.first != UInt8(ascii: "~") && !components.contains(where: isDots)
            && !components.dropFirst().contains(where: \.isEmpty)
        if plain {
            let clean = String(decoding: bytes, as: UTF8.self)
            if bytes.first == UInt8(ascii: "/") { return clean }
            if let cwd = getcwd(nil, 0) {
                defer { free(cwd) }
                let directory = String(cString: cwd)
                if directory.hasPrefix("/") { return directory == "/" ? "/" + clean : directory + "/" + clean }
            }
        }
        #endif
        return URL(fileURLWithPath: text).standardizedFileURL.path
    }

    public enum Failure: Error, Equatable, Sendable {
        case noVault(String)
        case alreadyExists(String)
        /// `vault.db` is there but `vault.key` is not: the key file was lost or not restored.
        case keyFileMissing(String)
        /// The directory is not empty and holds no vault: `init` will not take it over.
        case notEmpty(String)
        case databaseMissing(String)
        /// Another process has the database open (`rekey` needs it alone).
        case inUse(String)
        /// Another process holds the vault lock (`rekey` does not wait for it).
        case lockHeld(String)
        case io(String)
    }

    /// Where the vault is: `--vault`, else `$HREADER_VAULT`, else `$XDG_DATA_HOME/hreader`
    /// (`~/.local/share/hreader`), as a path for `Vault(path:)`; the environment is read a variable at a time.
    public static func locationPath(flag: String?, variable: (String) -> String?) -> String {
        if let flag, !flag.isEmpty { return flag }
        if let env = variable("HREADER_VAULT"), !env.isEmpty { return env }
        let data = variable("XDG_DATA_HOME").flatMap { $0.isEmpty ? nil : $0 }
            ?? ((variable("HOME") ?? NSHomeDirectory()) + "/.local/share")
        return data + "/hreader"
    }

    public var exists: Bool { PlainFiles.exists(keyFilePath) }

    // MARK: Creation

    /// Creates the vault directory (0700), or accepts an existing empty one and makes it 0700.
    /// A directory with other files in it is refused: `init` never changes or deletes what it did not make.
    public func createDirectory() throws {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw Failure.io("\(path) exists and is not a directory") }
            if exists { throw Failure.alreadyExists(path) }
            if fm.fileExists(atPath: databasePath) { throw Failure.keyFileMissing(path) }
            let ours: Set<String> = ["vault.lock", "vault.db.new", "vault.db.new-wal", "vault.db.new-shm", "sessions"]
            let others = ((try? fm.contentsOfDirectory(atPath: path)) ?? []).filter { !ours.contains($0) && !$0.hasPrefix(".vault.key.tmp-") }
            guard others.isEmpty else { throw Failure.notEmpty(path) }
        } else {
            do {
                try fm.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw Failure.io("cannot create \(path)")
            }
        }
        // The directory must be ours and private: another user's directory (or one whose mode we
        // cannot set) could be read, or swapped, by that user.
        var info = stat()
        guard stat(path, &info) == 0 else { throw Failure.io("cannot read \(path)") }
        guard info.st_uid == geteuid() else {
            throw Failure.io("\(path) belongs to another user (uid \(info.st_uid)); a vault must be in a directory of your own")
        }
        guard chmod(path, 0o700) == 0, stat(path, &info) == 0, info.st_mode & 0o777 == 0o700 else {
            throw Failure.io("cannot make \(path) private (mode 0700)")
        }
    }

    /// Under the vault lock, before a new vault is written: refuses a directory that holds a vault or
    /// a database, and clears what an interrupted `init` left (`vault.db.new`, unopenable without the
    /// key file that was never written).
    public func prepareForCreation() throws {
        if exists { throw Failure.alreadyExists(path) }
        if PlainFiles.exists(databasePath) { throw Failure.keyFileMissing(path) }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            unlink(newDatabasePath + suffix)
        }
    }

    /// Creates the encrypted database of a new vault under its temporary name, with the schema.
    public func createNewDatabase(key: SecretBytes, migrator: Migrator = Migrator()) throws -> Database {
        let previousMask = umask(0o077)
        defer { umask(previousMask) }
        let db = try Database.open(path: newDatabasePath, key: key, create: true)
        try migrator.migrate(db)
        return db
    }

    /// The last step of `init`, after the key file is safely written: the database takes its name.
    /// (A crash just before it is finished by the next open.)
    public func commitNewDatabase() throws {
        guard rename(newDatabasePath, databasePath) == 0 else { throw Failure.io("cannot rename \(newDatabasePath)") }
        try AtomicFile.syncDirectory(path)
    }

    // MARK: Key file

    public func readKeyFile() throws -> KeyFile {
        guard exists else {
            if PlainFiles.exists(databasePath) { throw Failure.keyFileMissing(path) }
            throw Failure.noVault(path)
        }
        guard let data = PlainFiles.contents(ofFile: keyFilePath) else {
            throw Failure.io("cannot read \(keyFilePath)")
        }
        return try KeyFile.decode(data)
    }

    /// Replaces the key file atomically (temporary file, fsync, rename, fsync the directory).
    public func writeKeyFile(_ keyFile: KeyFile) throws {
        AtomicFile.removeLeftovers(for: keyFileURL)
        try AtomicFile.write(try keyFile.encoded(), to: keyFileURL, mode: 0o600)
    }

    /// Runs `body` holding an exclusive lock on the vault, so that two processes updating the key
    /// file (or sessions) do not lose each other's change.
    public func withExclusiveLock<T>(_ body: () throws -> T) throws -> T {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure.io("cannot open \(lockPath)") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw Failure.io("cannot lock \(lockPath)") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Like `withExclusiveLock`, but throws `Failure.lockHeld` at once instead of waiting when another
    /// process holds the lock.
    public func withExclusiveLockIfFree<T>(_ body: () throws -> T) throws -> T {
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure.io("cannot open \(lockPath)") }
        defer { close(fd) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { throw Failure.lockHeld(path) }
            throw Failure.io("cannot lock \(lockPath)")
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    // MARK: Database

    /// Opens the vault's encrypted database with the data key and runs pending migrations.
    /// `besideOpenConnection`: another connection of this process has it open already (`Database.open`).
    public func openDatabase(key: SecretBytes, create: Bool = false, migrator: Migrator = Migrator(),
                             besideOpenConnection: Bool = false) throws -> Database {
        if !create && !PlainFiles.exists(databasePath) {
            // `init` wrote the key file and was stopped before its last rename: finish it.
            if PlainFiles.exists(newDatabasePath) {
                try withExclusiveLock {
                    if !PlainFiles.exists(databasePath) { try commitNewDatabase() }
                }
            } else {
                throw Failure.databaseMissing(databasePath)
            }
        }
        let previousMask = umask(0o077)
        defer { umask(previousMask) }
        let db = try Database.open(path: databasePath, key: key, create: create, besideOpenConnection: besideOpenConnection)
        try migrator.migrate(db)
        return db
    }

    // MARK: Sessions

    public func writeSession(id: String, file: [UInt8]) throws {
        try ensureSessionsDirectory()
        try AtomicFile.write(file, to: sessionsURL.appendingPathComponent(id), mode: 0o600)
    }

    public func readSession(id: String) -> [UInt8]? {
        PlainFiles.contents(ofFile: sessionsPath + "/" + id)
    }

    public func removeSession(id: String) {
        unlink(sessionsPath + "/" + id)
    }

    /// The ids of the session files present.
    public func sessionIDs() -> [String] {
        (PlainFiles.names(inDirectory: sessionsPath) ?? []).filter { !$0.hasPrefix(".") }
    }

    /// Deletes every session; returns how many there were.
    @discardableResult
    public func removeAllSessions() -> Int {
        let ids = sessionIDs()
        // Also temporary files of a session write that was killed before its rename.
        for name in PlainFiles.names(inDirectory: sessionsPath) ?? [] {
            unlink(sessionsPath + "/" + name)
        }
        return ids.count
    }

    private func ensureSessionsDirectory() throws {
        if !PlainFiles.exists(sessionsPath) {
            guard mkdir(sessionsPath, 0o700) == 0 || errno == EEXIST else { throw Failure.io("cannot create \(sessionsPath)") }
        }
    }

    /// Every regular file under the vault directory, for checks and tests.
    public func allFiles() -> [URL] {
        guard let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        return e.compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }
}
