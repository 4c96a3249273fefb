import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// One HTTP exchange, no redirects followed, the body read whole within the size limit (or streamed
/// to the request's `bodyFile`). Blocking:
/// it is called on a per-host client's own serial queue (a plain thread, not an event loop).
///
/// AsyncHTTPClient does the I/O (precise connect/read timeouts, streaming with a limit, certificate
/// verification through NIOSSL). Its clients live as long as the process: one per configuration.
struct HTTPTransport: Sendable {
    let configuration: NetworkConfiguration

    private static let clients = Locked<[NetworkConfiguration: HTTPClient]>([:])

    private func client() throws -> HTTPClient {
        try Self.clients.withLock { clients in
            if let client = clients[configuration] { return client }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .fullVerification
            if let caFile = configuration.caFile {
                do {
                    tls.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
                } catch {
                    throw NetError.tls(origin: "(configuration)", reason: "cannot read CA certificates from \(caFile)")
                }
            }
            var config = HTTPClient.Configuration(
                tlsConfiguration: tls,
                redirectConfiguration: .disallow,   // redirects are decided by APIClient (credentials, origins)
                timeout: .init(connect: .milliseconds(Int64(configuration.connectTimeout * 1000)),
                               read: .milliseconds(Int64(configuration.readTimeout * 1000))),
                decompression: .enabled(limit: .size(configuration.maxResponseBytes)))
            // A refused connection or a failed TLS handshake is reported at once (AsyncHTTPClient
            // would otherwise retry until the connect timeout); APIClient decides about retries.
            config.connectionPool.retryConnectionEstablishment = false
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
            clients[configuration] = client
            return client
        }
    }

    func perform(_ request: HTTPRequest) throws -> HTTPResponse {
        let display = request.url.redactedForDisplay
        let origin = Origin(request.url).map(\.description) ?? display
        var headers = HTTPHeaders()
        for (name, value) in request.headers { headers.replaceOrAdd(name: name, value: value) }
        if !headers.contains(name: "User-Agent") { headers.add(name: "User-Agent", value: configuration.userAgent) }
        if !headers.contains(name: "Accept-Encoding") { headers.add(name: "Accept-Encoding", value: "gzip, deflate") }
        let ahcRequest: HTTPClient.Request
        do {
            ahcRequest = try HTTPClient.Request(url: request.url, method: HTTPMethod(rawValue: request.method), headers: headers,
                                                body: request.body.map { .bytes($0) })
        } catch {
            throw NetError.invalidURL(display)
        }
        let limit = configuration.maxResponseBytes
        let response: HTTPClient.Response
        let started = DispatchTime.now().uptimeNanoseconds
        defer { NetworkStatistics.record(seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9) }
        do {
            if let path = request.bodyFile {
                response = try client()
                    .execute(request: ahcRequest, delegate: BodyFileDelegate(path: path, host: request.url.host ?? "", maxBodySize: limit))
                    .futureResult.wait()
            } else {
                response = try client()
                    .execute(request: ahcRequest, delegate: ResponseAccumulator(request: ahcRequest, maxBodySize: limit))
                    .futureResult.wait()
            }
        } catch let error as NetError {
            throw error
        } catch let error as BodyFileDelegate.WriteError {
            throw NetError.connectionFailed(origin: origin, reason: "the answer could not be written to \(request.bodyFile ?? "a file"): \(error.reason)")
        } catch is ResponseAccumulator.ResponseTooBigError {
            throw NetError.responseTooLarge(url: display, limit: limit)
        } catch let error as HTTPClientError {
            throw Self.translate(error, url: display, origin: origin, readTimeout: configuration.readTimeout, limit: limit)
        } catch let error as NIOSSLError {
            throw NetError.tls(origin: origin, reason: Self.tlsReason(error))
        } catch let error as BoringSSLError {
            throw NetError.tls(origin: origin, reason: Self.tlsReason(error))
        } catch let error as NIOSSLExtraError {
            throw NetError.tls(origin: origin, reason: Self.tlsReason(error))
        } catch {
            throw NetError.connectionFailed(origin: origin, reason: Self.describe(error))
        }
        var flat: [String: String] = [:]
        for (name, value) in response.headers {
            let key = name.lowercased()
            flat[key] = flat[key].map { "\($0), \(value)" } ?? value
        }
        let body = response.body.map { Data($0.readableBytesView) } ?? Data()
        return HTTPResponse(status: Int(response.status.code), headers: flat, body: body, url: request.url)
    }

    private static func translate(_ error: HTTPClientError, url: String, origin: String, readTimeout: Double, limit: Int) -> NetError {
        switch error {
        case .readTimeout, .deadlineExceeded, .writeTimeout:
            return .timedOut(url: url, seconds: readTimeout)
        case .connectTimeout:
            return .connectionFailed(origin: origin, reason: "connection timed out")
        case .remoteConnectionClosed:
            return .connectionFailed(origin: origin, reason: "the server closed the connection before answering")
        default:
            if "\(error)".contains("decompressionLimit") { return .responseTooLarge(url: url, limit: limit) }
            return .connectionFailed(origin: origin, reason: describe(error))
        }
    }

    /// BoringSSL's errors as a phrase (its own text names source files and error numbers).
    private static func tlsReason(_ error: Error) -> String {
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") { return "the server's certificate is not signed by a trusted CA" }
        if text.contains("failedToValidateHostname") || text.contains("hostname") { return "the server's certificate does not name this host" }
        if text.contains("WRONG_VERSION_NUMBER") { return "the server does not speak TLS here (try http://)" }
        return "the TLS handshake failed"
    }

    /// System errors (connection refused, no such host) as a short phrase.
    static func describe(_ error: Error) -> String {
        let text = "\(error)"
        if text.contains("connection refused") || text.contains("Connection refused") { return "connection refused (is the server running?)" }
        if text.contains("NXDOMAIN") || text.contains("lookup") || text.contains("resolve") { return "the host name cannot be resolved" }
        return text.count > 160 ? String(text.prefix(160)) + "…" : text
    }
}

/// A value behind a lock, for the few process-wide registries.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Process-wide counters of time spent waiting on servers, for `make bench` (how much of an
/// import's wall time is hreader's own work).
public enum NetworkStatistics {
    private static let totals = Locked<(requests: Int, seconds: Double)>((0, 0))

    static func record(seconds: Double) {
        totals.withLock { $0 = ($0.requests + 1, $0.seconds + seconds) }
    }

    public static var snapshot: (requests: Int, seconds: Double) { totals.withLock { $0 } }

    public static func reset() { totals.withLock { $0 = (0, 0) } }
}
