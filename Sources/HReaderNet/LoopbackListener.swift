import Foundation
import HReaderModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The redirect target of a native app's login (RFC 8252 §7.3): a listener on 127.0.0.1 that
/// waits for the browser's one `GET /callback?…`, answers it with a small page and stops. Other
/// paths and methods get a 404 or 405, a callback its `answer` refuses (another login's `state`)
/// a 400, and the wait goes on: any local user can reach the port, so a stray or forged request
/// must not end the login. At most `maximumRejected` such requests are answered; then the wait ends.
///
///     let listener = try LoopbackListener(port: 0)           // a free port
///     // send the browser to …&redirect_uri=\(listener.redirectURI)
///     let query = try listener.awaitCallback(timeout: 300) { query in .done(title: "…", message: "…") }
///
/// Blocking sockets on purpose: one request, from one browser, once. Connections are served one
/// at a time, so each has `requestSeconds` in all for its request line, however slowly it sends:
/// a local process trickling bytes cannot hold the listener while the browser's redirect waits.
/// The socket is touched by one thread at a time (`awaitCallback` is not reentrant and `stop` only
/// closes), which is why the class may be `@unchecked Sendable`.
public final class LoopbackListener: @unchecked Sendable {
    public static let callbackPath = "/callback"

    public let port: Int
    private let fd: Int32
    private let lock = NSLock()
    private var stopped = false

    /// What the browser is shown: the login went through, or did not (and why).
    public enum Page: Sendable {
        /// The login's redirect: answered 200, and the wait ends.
        case done(title: String, message: String)
        /// The login's redirect, but the login did not go through: answered 400, and the wait ends.
        case failed(title: String, message: String)
        /// Not this login's redirect (another `state`): answered 400, and the wait goes on.
        case rejected(title: String, message: String)
    }

    /// Requests that are not the login's redirect answered before the wait ends.
    public static let maximumRejected = 20

    /// How long one connection may take to send its request line, from its acceptance.
    static let requestSeconds = 3.0

    /// Binds 127.0.0.1:`port` (0: any free port) and listens.
    public init(port: Int = 0) throws {
        guard (0...65_535).contains(port) else { throw SmartError.listener("port \(port) is out of range") }
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw SmartError.listener(Self.lastError()) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)   // a browser started later must not inherit it
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let why = Self.lastError()
            _ = close(fd)
            throw SmartError.listener("127.0.0.1:\(port): \(why)" + (port != 0 ? " (is another login running? choose another --redirect-port)" : ""))
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: actual.sin_port))
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT/callback`: the IP literal, not `localhost`, as RFC 8252 §8.3 advises.
    public var redirectURI: String { "http://127.0.0.1:\(port)\(Self.callbackPath)" }

    /// Closes the socket; a later `awaitCallback` fails.
    public func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            _ = close(fd)
        }
    }

    /// Waits for `GET /callback?…` until `timeout` seconds have passed, answers it with the page
    /// `answer` makes of its query, and returns the query (names and values decoded). Anything
    /// else that arrives meanwhile gets a 404 (a 400 when `answer` rejects it) and the wait goes on,
    /// up to `maximumRejected` times. The listener stops either way.
    public func awaitCallback(timeout: Double, maximumRejected: Int = LoopbackListener.maximumRejected,
                              answer: ([(name: String, value: String)]) -> Page) throws -> [(name: String, value: String)] {
        defer { stop() }
        let deadline = Date().addingTimeInterval(timeout)
        var rejected = 0
        while true {
            guard rejected < maximumRejected else { throw SmartError.tooManyRejectedRedirects(count: rejected) }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw SmartError.timedOut(seconds: timeout) }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let count = poll(&ready, 1, Int32(min(remaining, 3600) * 1000) + 1)
            if count < 0 {
                if errno == EINTR { continue }
                throw SmartError.listener(Self.lastError())
            }
            guard count > 0 else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { continue }
            defer { _ = close(client) }
            // A connection without its request line in time (a browser's speculative one, which sends
            // nothing, or one trickling a byte at a time) is dropped, and not counted.
            var wait = timeval(tv_sec: 3, tv_usec: 0)
            _ = setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            guard let line = Self.readRequestLine(client, until: Date().addingTimeInterval(Self.requestSeconds)) else { continue }
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "GET" else {
                Self.reply(client, status: "405 Method Not Allowed", page: .failed(title: "Not here", message: "Only the login's redirect is answered here."))
                rejected += 1
                continue
            }
            let target = parts[1]
            let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard path == Self.callbackPath else {
                Self.reply(client, status: "404 Not Found", page: .failed(title: "Not here", message: "Only the login's redirect is answered here."))
                rejected += 1
                continue
            }
            let query = target.firstIndex(of: "?").map { Self.parseQuery(String(target[target.index(after: $0)...])) } ?? []
            let page = answer(query)
            switch page {
            case .done:
                Self.reply(client, status: "200 OK", page: page)
                return query
            case .failed:
                Self.reply(client, status: "400 Bad Request", page: page)
                return query
            case .rejected:
                Self.reply(client, status: "400 Bad Request", page: page)
                rejected += 1
            }
        }
    }

    /// The async form: waits on a thread of its own, not on the cooperative pool.
    public func callback(timeout: Double, answer: @escaping @Sendable ([(name: String, value: String)]) -> Page) async throws
        -> [(name: String, value: String)] {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try self.awaitCallback(timeout: timeout, answer: answer) })
            }
            thread.name = "hreader.login-redirect"
            thread.start()
        }
    }

    // MARK: - HTTP, as little as a browser needs

    /// The request line of a request whose head arrives within 16 KiB and before `deadline` (the
    /// whole head, not each read: a byte every few seconds must not keep it going); nil for anything else.
    /// The head is read to its blank line, not only to its first: a connection closed with bytes
    /// unread is reset by the kernel, and a client whose head came in two pieces (the line, then the
    /// rest) got a reset in place of the page (the demo's shell client, killed by SIGPIPE).
    private static func readRequestLine(_ client: Int32, until deadline: Date) -> String? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while head.count < 16 << 10 {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var ready = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            let count = poll(&ready, 1, Int32(remaining * 1000) + 1)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            let n = recv(client, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            head.append(contentsOf: buffer[0..<n])
            if Self.endsHead(head), let end = head.firstIndex(of: 0x0a) {
                return String(decoding: head[..<end], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
            }
        }
        return nil
    }

    /// Whether `head` holds a request's whole head: up to an empty line (CRLF CRLF, or bare LFs).
    static func endsHead(_ head: [UInt8]) -> Bool {
        var previous: UInt8 = 0, beforeThat: UInt8 = 0
        for byte in head {
            if byte == 0x0a {
                // An empty line: LF right after LF, or after CR LF.
                if previous == 0x0a || (previous == 0x0d && beforeThat == 0x0a) { return true }
            }
            (beforeThat, previous) = (previous, byte)
        }
        return false
    }

    /// `application/x-www-form-urlencoded` pairs, as OAuth servers write a redirect's query.
    static func parseQuery(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring?) -> String {
                let plus = (s.map(String.init) ?? "").replacingOccurrences(of: "+", with: " ")
                return plus.removingPercentEncoding ?? plus
            }
            return (decode(parts.first), decode(parts.count > 1 ? parts[1] : nil))
        }
    }

    private static func reply(_ client: Int32, status: String, page: Page) {
        let (title, message, color): (String, String, String)
        switch page {
        case let .done(t, m): (title, message, color) = (t, m, "#1a7f37")
        case let .failed(t, m), let .rejected(t, m): (title, message, color) = (t, m, "#b42318")
        }
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>hreader: \(escape(title))</title></head>
            <body style="font-family: sans-serif; max-width: 36em; margin: 4em auto"><h1 style="color: \(color)">\(escape(title))</h1>
            <p>\(escape(message))</p></body></html>

            """
        let body = Array(html.utf8)
        let head = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\n"
            + "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\nConnection: close\r\n\r\n"
        var bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            #if canImport(Glibc)
            let n = bytes.withUnsafeMutableBytes { send(client, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            #else
            let n = bytes.withUnsafeMutableBytes { send(client, $0.baseAddress! + sent, $0.count - sent, 0) }
            #endif
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            sent += n
        }
    }

    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}
