import Foundation
#if canImport(Glibc)
import Glibc
private let streamSocket = Int32(SOCK_STREAM.rawValue)
private let noSigPipe = Int32(MSG_NOSIGNAL)   // EPIPE instead of a SIGPIPE that would end the test process
#elseif canImport(Darwin)
import Darwin
private let streamSocket = SOCK_STREAM
private let noSigPipe: Int32 = 0
#endif

/// HTTP/1.1 spoken by hand over a loopback socket: the tests of `hreader serve` need to send exactly
/// the bytes an attacker would (a foreign or doubled `Host`, no cookie, a forged `Origin`) and to see
/// redirects and `Set-Cookie` as they are, which URLSession would follow, store or rewrite.
public enum RawHTTP {
    public struct Response {
        public let status: Int
        public let headers: [(name: String, value: String)]
        public let body: String

        public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
        public func headers(_ name: String) -> [String] { headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value) }

        public var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        }
    }

    /// Sends one request to 127.0.0.1:`port` and reads the answer until the server closes.
    /// `host` nil sends no `Host` header at all; `headers` are sent as given, in order.
    public static func send(port: Int, method: String = "GET", path: String, host: String? = nil,
                            headers: [(String, String)] = [], body: Data? = nil) throws -> Response {
        var request = "\(method) \(path) HTTP/1.1\r\n"
        if let host { request += "Host: \(host)\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Length: \(body.count)\r\n" }
        request += "Connection: close\r\n\r\n"
        var bytes = Data(request.utf8)
        if let body { bytes.append(body) }

        let fd = try connectLoopback(port: port)
        defer { close(fd) }
        try write(bytes, to: fd)
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            answer.append(contentsOf: buffer[0..<n])
        }
        return try parse(answer)
    }

    /// Sends a request's bytes in `pieces`, `pause` seconds apart (as a shell's `printf` may write
    /// a head), then reads the answer to its end; a connection reset is an error.
    public static func send(port: Int, pieces: [String], pause: TimeInterval) throws -> Response {
        let fd = try connectLoopback(port: port)
        defer { close(fd) }
        for (index, piece) in pieces.enumerated() {
            if index > 0 { Thread.sleep(forTimeInterval: pause) }
            try write(Data(piece.utf8), to: fd)
        }
        var answer = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 { throw failure("recv failed: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            answer.append(contentsOf: buffer[0..<n])
        }
        return try parse(answer)
    }

    /// Sends a keep-alive request as a browser does, reads the start of the answer, and leaves the
    /// connection open and idle; the caller closes the returned descriptor.
    public static func openIdleConnection(port: Int, path: String, headers: [(String, String)]) throws -> Int32 {
        let fd = try connectLoopback(port: port)
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try write(Data((request + "\r\n").utf8), to: fd)
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard recv(fd, &buffer, buffer.count, 0) > 0 else { close(fd); throw failure("no answer on the kept-alive connection") }
        return fd
    }

    /// Sends a request and closes the connection after `seconds`, without reading the answer: a
    /// browser tab closed while its page loads.
    public static func sendAndHangUp(port: Int, path: String, headers: [(String, String)], after seconds: Double) throws {
        let fd = try connectLoopback(port: port)
        defer { close(fd) }
        var request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        try write(Data((request + "\r\n").utf8), to: fd)
        Thread.sleep(forTimeInterval: seconds)
    }

    /// A client that sends a request a byte at a time, `interval` seconds apart, and never ends its
    /// request line: a local process holding a server that reads one connection at a time. It is
    /// connected, and its first byte sent, when `init` returns; it stops at `stop()` or when the
    /// server closes the connection.
    public final class TricklingClient: @unchecked Sendable {   // `stopped` is guarded by `lock`
        private let lock = NSLock()
        private var stopped = false

        public init(port: Int, every interval: Double) throws {
            let fd = try RawHTTP.connectLoopback(port: port)
            let request = Array("GET /callback?code=slow&state=slow".utf8)
            do { try RawHTTP.write(Data(request.prefix(1)), to: fd) } catch { close(fd); throw error }
            let thread = Thread { [self] in
                defer { close(fd) }
                var next = 1
                while true {
                    Thread.sleep(forTimeInterval: interval)
                    if lock.withLock({ stopped }) { return }
                    let byte = next < request.count ? request[next] : UInt8(ascii: "x")
                    next += 1
                    guard (try? RawHTTP.write(Data([byte]), to: fd)) != nil else { return }
                }
            }
            thread.start()
        }

        public func stop() { lock.withLock { stopped = true } }
    }

    /// A TCP connection to 127.0.0.1:`port` whose reads give up after `timeout` seconds (EAGAIN).
    static func connectLoopback(port: Int, timeout seconds: Int = 30) throws -> Int32 {
        let fd = socket(AF_INET, streamSocket, 0)
        guard fd >= 0 else { throw failure("socket() failed") }
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { close(fd); throw failure("cannot connect to 127.0.0.1:\(port)") }
        return fd
    }

    /// All of `bytes`, retrying on EINTR; a closed peer is an error (EPIPE), not a SIGPIPE.
    static func write(_ bytes: Data, to fd: Int32) throws {
        try bytes.withUnsafeBytes { raw in
            var sent = 0
            while sent < raw.count {
                let n = Foundation.send(fd, raw.baseAddress! + sent, raw.count - sent, noSigPipe)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw failure("send failed: \(String(cString: strerror(errno)))") }
                sent += n
            }
        }
    }

    static func parse(_ data: Data) throws -> Response {
        guard let split = data.range(of: Data("\r\n\r\n".utf8)) else { throw failure("no complete response head") }
        let head = String(decoding: data[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw failure("bad status line \(head[0])") }
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Data(data[split.upperBound...])
        if headers.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1.lowercased().contains("chunked") }) {
            body = dechunk(body)
        }
        return Response(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }

    static func dechunk(_ data: Data) -> Data {
        var out = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";")[0], radix: 16) ?? 0
            if size == 0 { break }
            let start = lineEnd.upperBound
            out.append(rest[start..<min(start + size, rest.endIndex)])
            rest = rest[min(start + size + 2, rest.endIndex)...]
        }
        return out
    }

    static func failure(_ message: String) -> NSError {
        NSError(domain: "RawHTTP", code: 1, userInfo: [NSLocalizedDescriptionKey: message])
    }
}
