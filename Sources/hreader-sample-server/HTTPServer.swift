import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One request, read whole (bodies here are small FHIR resources and forms).
struct HTTPRequest: Sendable {
    let method: HTTPMethod
    let uri: String
    /// The path as sent, still percent-encoded (segments are decoded one by one).
    let path: String
    let rawQuery: String?
    let query: [(name: String, value: String)]
    let headers: HTTPHeaders
    let body: [UInt8]
    /// `host:port` to build absolute URLs with: the Host header, else our own address.
    let authority: String

    /// Whether the connection is TLS (links are then built with https).
    let secure: Bool

    init(head: HTTPRequestHead, body: [UInt8], localPort: Int, secure: Bool = false) {
        self.secure = secure
        // HEAD is answered as GET; NIO's encoder then leaves the body out.
        method = head.method == .HEAD ? .GET : head.method
        uri = head.uri
        if let q = head.uri.firstIndex(of: "?") {
            path = String(head.uri[..<q])
            rawQuery = String(head.uri[head.uri.index(after: q)...])
        } else {
            path = head.uri
            rawQuery = nil
        }
        query = rawQuery.map(URLText.parseQuery) ?? []
        headers = head.headers
        self.body = body
        let host = head.headers.first(name: "host") ?? ""
        let sane = !host.isEmpty && host.allSatisfy { $0.isLetter || $0.isNumber || ".:-[]".contains($0) }
        authority = sane ? host : "127.0.0.1:\(localPort)"
    }

    var origin: String { "\(secure ? "https" : "http")://\(authority)" }

    func header(_ name: String) -> String? { headers.first(name: name) }

    func queryValue(_ name: String) -> String? { query.first(where: { $0.name == name })?.value }

    /// The path's segments, percent-decoded (so `%24everything` reads as `$everything`).
    var segments: [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map { URLText.decode($0, plusAsSpace: false) }
    }
}

/// Writes the chunks of a streamed body; each write waits until the socket took the previous one,
/// which is the back-pressure a 12 MB body needs.
struct ChunkSink: Sendable {
    fileprivate let channel: Channel

    func write(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: bytes)))).get()
    }
}

enum ResponseBody: Sendable {
    case bytes([UInt8])
    /// Chunked transfer encoding unless a length is given.
    case stream(contentLength: Int?, produce: @Sendable (ChunkSink) async throws -> Void)
    /// Never answered: the connection is held open, then dropped after `holdSeconds`.
    case never(holdSeconds: Int64)
}

struct HTTPResponse: Sendable {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    var body: ResponseBody

    init(status: HTTPResponseStatus, headers: [(String, String)] = [], body: ResponseBody = .bytes([])) {
        self.status = status
        self.headers = HTTPHeaders(headers)
        self.body = body
    }

    init(status: HTTPResponseStatus, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: .bytes(body))
    }

    init(status: HTTPResponseStatus, contentType: String, text: String, headers: [(String, String)] = []) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8), headers: headers)
    }
}

/// What answers requests; called on a task, off the event loop, so it may sleep without blocking it.
protocol HTTPResponder: Sendable {
    func respond(to request: HTTPRequest) async -> HTTPResponse
}

/// Collects a request, hands it to the responder on a task and writes the response back.
/// NIO's pipelining handler (added by configureHTTPServerPipeline) holds a keep-alive connection's
/// next request until this response has ended, so responses stay in order.
final class HTTPChannelHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private static let maxBodyBytes = 64 << 20
    private let responder: any HTTPResponder
    private let secure: Bool
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false

    init(responder: any HTTPResponder, secure: Bool) {
        self.responder = responder
        self.secure = secure
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
            bodyTooLarge = false
            if head.headers.first(name: "Expect")?.lowercased() == "100-continue" {
                // curl sends larger bodies only after this (or after waiting a second for it).
                let interim = HTTPResponseHead(version: head.version, status: .continue)
                context.writeAndFlush(wrapOutboundOut(.head(interim)), promise: nil)
            }
        case .body(let chunk):
            if body.count + chunk.readableBytes > Self.maxBodyBytes {
                bodyTooLarge = true
            } else {
                body.append(contentsOf: chunk.readableBytesView)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let request = HTTPRequest(head: head, body: body, localPort: context.channel.localAddress?.port ?? 0, secure: secure)
            body = []
            let writer = ResponseWriter(channel: context.channel, version: head.version, keepAlive: head.isKeepAlive)
            if bodyTooLarge {
                let response = HTTPResponse(status: .payloadTooLarge, contentType: "application/json", text: #"{"error":"request body too large"}"#)
                Task { await writer.send(response, keepAlive: false) }
                return
            }
            let responder = self.responder
            Task {
                let response = await responder.respond(to: request)
                await writer.send(response)
            }
        }
    }
}

/// Writes one response through the channel (thread-safe: Channel hops to its event loop).
private struct ResponseWriter: Sendable {
    let channel: Channel
    let version: HTTPVersion
    let keepAlive: Bool

    func send(_ response: HTTPResponse, keepAlive: Bool? = nil) async {
        let keepAlive = keepAlive ?? self.keepAlive
        var headers = response.headers
        switch response.body {
        case .bytes(let bytes):
            headers.replaceOrAdd(name: "Content-Length", value: String(bytes.count))
        case .stream(let length?, _):
            headers.replaceOrAdd(name: "Content-Length", value: String(length))
        case .stream(nil, _):
            headers.remove(name: "Content-Length")  // NIO's encoder then chunks the body
        case .never(let seconds):
            // Not a byte is written; a scheduled close keeps the event loop free meanwhile.
            let channel = self.channel
            channel.eventLoop.scheduleTask(in: .seconds(seconds)) { channel.close(promise: nil) }
            return
        }
        if !keepAlive {
            headers.replaceOrAdd(name: "Connection", value: "close")
        } else if version == .http1_0 {
            headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        let head = HTTPResponseHead(version: version, status: response.status, headers: headers)
        do {
            switch response.body {
            case .bytes(let bytes):
                channel.write(HTTPServerResponsePart.head(head), promise: nil)
                if !bytes.isEmpty {
                    channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: bytes))), promise: nil)
                }
            case .stream(_, let produce):
                try await channel.writeAndFlush(HTTPServerResponsePart.head(head)).get()
                try await produce(ChunkSink(channel: channel))
            case .never:
                return
            }
            try await channel.writeAndFlush(HTTPServerResponsePart.end(nil)).get()
            if !keepAlive { try await channel.close() }
        } catch {
            // The client went away or a stream failed half-way: the response cannot be completed.
            channel.close(promise: nil)
        }
    }
}

enum HTTPServer {
    /// Binds 127.0.0.1 only: this server holds invented data, but it is still nobody else's business.
    /// With `tls`, every connection is TLS first (for testing clients' certificate verification).
    static func start(group: EventLoopGroup, port: Int, responder: any HTTPResponder, tls: NIOSSLContext? = nil) async throws -> Channel {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(HTTPChannelHandler(responder: responder, secure: tls != nil))
                }
            }
        return try await bootstrap.bind(host: "127.0.0.1", port: port).get()
    }
}
