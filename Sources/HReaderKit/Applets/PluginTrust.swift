import Foundation
import HReaderJSON
import HReaderCrypto
import HReaderStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which programs may run as plugin applets. An applets list is code: whoever can write one could
/// otherwise make hreader run anything (`/bin/sh`, which reads the JSON request as a script). So a
/// plugin runs only when
///
/// - its program is a file inside the plugins directory (`$XDG_CONFIG_HOME/hreader/plugins/`, else
///   `~/.config/hreader/plugins/`), which, like every directory down to the program and the program
///   itself, is the user's own and writable by no one else (directories above it: the user's or
///   root's, and not writable by others unless sticky, as /tmp);
/// - it is not a shell or an interpreter (`sh`, `bash`, `python3`, `perl`, `env`, …) — which would run
///   whatever the request says — unless the user allowed that when approving it;
/// - the user approved it for this vault (`hreader applets add`), which pins its path and its SHA-256;
///   a program that changed since is refused until it is approved again.
///
///     let program = try PluginTrust.inspect(specification, pluginsDirectory: registry.pluginsDirectory)
///     program.sha256      // "9f86d0…", pinned by `applets add`, compared before every run
public enum PluginTrust {
    /// `$XDG_CONFIG_HOME/hreader/plugins`, else `~/.config/hreader/plugins`.
    public static func pluginsDirectory(environment: [String: String]) -> URL? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config).appendingPathComponent("hreader/plugins")
        }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".config/hreader/plugins")
    }

    /// A plugin's program as found on disk: the real path (symbolic links resolved), its SHA-256,
    /// and the interpreter it is, if it is one.
    public struct Program: Sendable, Equatable {
        public let path: String
        public let sha256: String
        public let interpreter: String?
    }

    /// Why a program may not run, in words for a tile or an error line.
    public struct Refusal: Error, Sendable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Finds the program and checks where it lives (without hashing it).
    public static func locate(_ executable: String, pluginsDirectory: URL?) throws(Refusal) -> String {
        guard let pluginsDirectory else {
            throw Refusal(reason: "there is no plugins directory (neither XDG_CONFIG_HOME nor HOME is set)")
        }
        guard let directory = realPath(pluginsDirectory.path) else {
            throw Refusal(reason: "the plugins directory \(pluginsDirectory.path) does not exist; plugins run only from there")
        }
        guard let program = realPath(executable) else { throw Refusal(reason: "\(executable) does not exist") }
        guard program.hasPrefix(directory + "/") else {
            throw Refusal(reason: "\(executable) is not in the plugins directory \(directory); plugins run only from there (copy it in)")
        }
        let uid = getuid()
        // Above the plugins directory: the user's or root's, and no one else may rename what is in it.
        var above = URL(fileURLWithPath: directory).deletingLastPathComponent().path
        while true {
            guard let info = status(above) else { throw Refusal(reason: "cannot inspect \(above)") }
            let sticky = info.st_mode & S_ISVTX != 0
            if (info.st_uid != uid && info.st_uid != 0) || (info.st_mode & 0o022 != 0 && !sticky) {
                throw Refusal(reason: "\(above), above the plugins directory, can be changed by other users; plugins do not run from there")
            }
            if above == "/" { break }
            above = URL(fileURLWithPath: above).deletingLastPathComponent().path
        }
        // The plugins directory and everything below it down to the program: the user's alone.
        var path = directory
        let components = program.dropFirst(directory.count + 1).split(separator: "/").map(String.init)
        for (index, component) in ([""] + components).enumerated() {
            if index > 0 { path += "/" + component }
            guard let info = status(path) else { throw Refusal(reason: "cannot inspect \(path)") }
            if info.st_uid != uid {
                throw Refusal(reason: "\(path) belongs to another user; plugins must be your own")
            }
            if info.st_mode & 0o022 != 0 {
                throw Refusal(reason: "\(path) can be written by other users (chmod go-w it); plugins must be writable only by you")
            }
        }
        guard let info = status(program), info.st_mode & S_IFMT == S_IFREG else { throw Refusal(reason: "\(program) is not a regular file") }
        guard access(program, X_OK) == 0 else { throw Refusal(reason: "\(program) is not executable (chmod +x it)") }
        return program
    }

    /// Locates the program and hashes it.
    public static func inspect(_ executable: String, pluginsDirectory: URL?) throws(Refusal) -> Program {
        let path = try locate(executable, pluginsDirectory: pluginsDirectory)
        guard let digest = sha256(ofFile: path) else { throw Refusal(reason: "cannot read \(path)") }
        return Program(path: path, sha256: digest, interpreter: interpreter(executable) ?? interpreter(path))
    }

    // MARK: Shells and interpreters

    /// Programs that run what they are told: a shell, an interpreter reading a script from stdin or its
    /// arguments, or a launcher of other programs. As a plugin they would run the request as code.
    static let interpreters: Set<String> = [
        "sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "pdksh", "csh", "tcsh", "fish", "rbash", "busybox", "toybox",
        "env", "nice", "nohup", "timeout", "stdbuf", "setsid", "xargs", "sudo", "doas", "su", "runuser", "chroot", "script", "expect",
        "python", "pypy", "perl", "ruby", "irb", "node", "nodejs", "deno", "bun", "php", "lua", "luajit", "tclsh", "wish",
        "awk", "gawk", "mawk", "nawk", "sed", "osascript", "pwsh", "powershell", "rscript", "julia", "guile", "racket",
        "sbcl", "clisp", "ghci", "runghc", "runhaskell", "java", "jshell", "groovy", "scala", "ocaml", "swift", "dotnet",
    ]

    /// The interpreter `path` names ("python" for `/usr/bin/python3.11`), or nil.
    public static func interpreter(_ path: String) -> String? {
        var name = URL(fileURLWithPath: path).lastPathComponent.lowercased()
        while let last = name.last, last.isNumber || last == "." || last == "-" { name.removeLast() }
        return interpreters.contains(name) ? name : nil
    }

    // MARK: Files

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    /// The SHA-256 of a file's bytes, in lower-case hex.
    public static func sha256(ofFile path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let hasher = SHA256.Incremental()
        while true {
            let chunk: Data?
            do { chunk = try handle.read(upToCount: 1 << 20) } catch { return nil }
            guard let chunk, !chunk.isEmpty else { break }   // nil or empty: the end of the file
            hasher.update(Array(chunk))
        }
        return hasher.finish().map { String(format: "%02x", $0) }.joined()
    }
}

/// The approval of one plugin in one vault: the program's real path and SHA-256 when the user
/// approved it, and whether they allowed an interpreter. Kept in the vault's `settings` under
/// `applet_plugin:<identifier>` (docs/formats.md).
public struct PluginPin: Sendable, Equatable {
    public var path: String
    public var sha256: String
    public var allowInterpreter: Bool
    public var approved: String

    /// As the vault's settings keep it (the shape JSONEncoder wrote before, which vaults keep).
    var json: JSONValue {
        .object(["allow_interpreter": .bool(allowInterpreter), "approved": .string(approved), "path": .string(path), "sha256": .string(sha256)])
    }

    /// Nil unless every member is there with its kind: an unreadable pin approves nothing.
    init?(json: JSONValue) {
        guard let path = json["path"]?.string, let sha256 = json["sha256"]?.string,
              let allowInterpreter = json["allow_interpreter"]?.bool, let approved = json["approved"]?.string else { return nil }
        self.init(path: path, sha256: sha256, allowInterpreter: allowInterpreter, approved: approved)
    }

    public init(path: String, sha256: String, allowInterpreter: Bool, approved: String) {
        self.path = path
        self.sha256 = sha256
        self.allowInterpreter = allowInterpreter
        self.approved = approved
    }

    static func settingsKey(_ identifier: String) -> String { "applet_plugin:\(identifier)" }
}
