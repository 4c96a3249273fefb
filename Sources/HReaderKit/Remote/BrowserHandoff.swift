import Foundation
import HReaderModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Hands a URL to the user's browser without putting it on a command line.
///
/// A login's authorization URL carries its `state`; in the argv of `xdg-open` (or of the browser it
/// starts) every local user can read it in `/proc/PID/cmdline`, and with it answer the login's
/// redirect with a code of their own. So the URL goes into a small HTML page (mode 0600, in a
/// directory of its own, mode 0700) that sends the browser on, and the opener gets only the page's
/// path. The opener's environment has no `HREADER_*` variable (password, session). The page is
/// removed with `remove()` once the login is over (the browser has long read it by then).
///
///     let handoff = try BrowserHandoff.open(login.url)      // nil: no opener on this system
///     defer { handoff?.remove() }
public final class BrowserHandoff: Sendable {
    /// The page the opener was given.
    public let page: URL
    /// The private directory that holds it.
    public let directory: URL

    private init(page: URL, directory: URL) {
        self.page = page
        self.directory = directory
    }

    /// The program that opens a file in the desktop's browser: `xdg-open` on the search path
    /// (`open` on macOS); nil when there is none.
    public static func opener(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        #if os(macOS)
        let name = "open"
        #else
        let name = "xdg-open"
        #endif
        return (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").filter { $0.hasPrefix("/") }
            .map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The environment the opener (and the browser it may start) gets: the caller's, without any
    /// `HREADER_*` variable.
    public static func scrubbed(_ environment: [String: String]) -> [String: String] {
        environment.filter { !$0.key.hasPrefix("HREADER_") }
    }

    /// Writes the page and starts the opener on it without waiting for it. Returns nil, writing
    /// nothing, when there is no opener.
    public static func open(_ url: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> BrowserHandoff? {
        guard let opener = opener(environment: environment) else { return nil }
        let handoff = try write(url, environment: environment)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [handoff.page.path]
        process.environment = scrubbed(environment)
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            handoff.remove()
            throw HReaderError(.failure, "cannot start \(opener): \(error.localizedDescription)")
        }
        return handoff
    }

    /// Removes the page and its directory.
    public func remove() {
        _ = unlink(page.path)
        _ = rmdir(directory.path)
    }

    // MARK: The page

    /// The page that sends the browser to `url`: a meta refresh, a script for browsers that ignore
    /// it, and a link for a person. No referrer goes with the navigation.
    static func html(redirectingTo url: URL) -> String {
        let target = HTMLText.escape(url.absoluteString)
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0;url=\(target)"><title>hreader: log in</title></head>
            <body style="font-family: sans-serif; max-width: 36em; margin: 4em auto">
            <p>Taking you to your provider's login page… If nothing happens, <a id="go" href="\(target)">continue here</a>.</p>
            <script>location.replace(document.getElementById("go").href)</script></body></html>

            """
    }

    /// A fresh directory (0700) under `$XDG_RUNTIME_DIR` when it is private to this user, else under
    /// `$TMPDIR` (or /tmp), holding `login.html` (0600), created exclusively.
    static func write(_ url: URL, environment: [String: String]) throws -> BrowserHandoff {
        let base = privateRuntimeDirectory(environment) ?? environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((base.hasSuffix("/") ? base : base + "/").utf8CString.dropLast()) + Array("hreader-login-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HReaderError(.failure, "cannot create a private directory for the browser page in \(base): \(String(cString: strerror(errno)))")
        }
        let directory = URL(fileURLWithPath: String(cString: made))
        _ = chmod(directory.path, 0o700)
        let page = directory.appendingPathComponent("login.html")
        let fd = systemOpen(page.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let why = String(cString: strerror(errno))
            _ = rmdir(directory.path)
            throw HReaderError(.failure, "cannot write the browser page in \(directory.path): \(why)")
        }
        defer { _ = close(fd) }
        let handoff = BrowserHandoff(page: page, directory: directory)
        let bytes = Array(html(redirectingTo: url).utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { systemWrite(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                handoff.remove()
                throw HReaderError(.failure, "cannot write the browser page in \(directory.path): \(String(cString: strerror(errno)))")
            }
            written += n
        }
        return handoff
    }

    /// `$XDG_RUNTIME_DIR` when it is a directory of this user's that no one else may enter.
    static func privateRuntimeDirectory(_ environment: [String: String]) -> String? {
        guard let path = environment["XDG_RUNTIME_DIR"], path.hasPrefix("/") else { return nil }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o077 == 0 else { return nil }
        return path
    }
}

// The C functions under names that do not clash with this module's own (`open`, `write`).
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, flags, mode)
    #else
    return Darwin.open(path, flags, mode)
    #endif
}

private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, buffer, count)
    #else
    return Darwin.write(fd, buffer, count)
    #endif
}
