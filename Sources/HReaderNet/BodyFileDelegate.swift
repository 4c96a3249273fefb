import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Receives a response whose successful body goes to a file as it arrives (`HTTPRequest.bodyFile`):
/// a download of hundreds of megabytes costs a buffer, not its size in memory. The size limit
/// counts as the body streams (and an announced `Content-Length` over it fails at once); an answer
/// that is not 2xx (an error page, a redirect) is kept in memory as usual, within the same limit,
/// and the file is not touched. The file is created (mode 0600) or emptied at each 2xx head, so a
/// retried or redirected request leaves only the last answer's body in it. Writes are plain
/// `write(2)` calls on the event loop's thread: a local file, a megabyte at most at a time.
final class BodyFileDelegate: HTTPClientResponseDelegate {
    typealias Response = HTTPClient.Response

    /// The file could not be written; `reason` is the system's.
    struct WriteError: Error { let reason: String }

    private struct State {
        var head: HTTPResponseHead?
        var descriptor: Int32 = -1
        var received = 0
        var inMemory: ByteBuffer?
    }

    private let path: String
    private let host: String
    private let maxBodySize: Int
    private let state = Locked(State())

    init(path: String, host: String, maxBodySize: Int) {
        self.path = path
        self.host = host
        self.maxBodySize = maxBodySize
    }

    deinit { state.withLock { if $0.descriptor >= 0 { close($0.descriptor) } } }

    func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        if let length = head.headers.first(name: "Content-Length").flatMap(Int.init), length > maxBodySize {
            return task.eventLoop.makeFailedFuture(ResponseAccumulator.ResponseTooBigError(maxBodySize: maxBodySize))
        }
        let failure: Error? = state.withLock { state in
            state.head = head
            guard (200..<300).contains(Int(head.status.code)) else { return nil }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { return WriteError(reason: String(cString: strerror(errno))) }
            state.descriptor = descriptor
            return nil
        }
        return failure.map { task.eventLoop.makeFailedFuture($0) } ?? task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let failure: Error? = state.withLock { state in
            state.received += buffer.readableBytes
            guard state.received <= maxBodySize else { return ResponseAccumulator.ResponseTooBigError(maxBodySize: maxBodySize) }
            guard state.descriptor >= 0 else {
                var part = buffer
                if state.inMemory == nil { state.inMemory = part } else { state.inMemory!.writeBuffer(&part) }
                return nil
            }
            return buffer.withUnsafeReadableBytes { bytes -> Error? in
                var done = 0
                while done < bytes.count {
                    let n = write(state.descriptor, bytes.baseAddress! + done, bytes.count - done)
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { return WriteError(reason: String(cString: strerror(errno))) }
                    done += n
                }
                return nil
            }
        }
        return failure.map { task.eventLoop.makeFailedFuture($0) } ?? task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
        try state.withLock { state in
            if state.descriptor >= 0 {
                defer { state.descriptor = -1 }
                guard close(state.descriptor) == 0 else { throw WriteError(reason: String(cString: strerror(errno))) }
            }
            guard let head = state.head else { throw WriteError(reason: "no response head") }
            return Response(host: host, status: head.status, version: head.version, headers: head.headers, body: state.inMemory)
        }
    }
}
