import Dispatch
import Foundation

/// The per-host clients of a process: `client(for:)` returns one `APIClient` per origin (scheme, host,
/// port) for the life of the registry. `APIClients.shared` is the process's registry; tests make
/// their own.
public final class APIClients: @unchecked Sendable {
    public static let shared = APIClients()

    private let clients = Locked<[Origin: APIClient]>([:])
    /// Shared with the clients (which must not keep the registry itself alive).
    private let settings: Locked<NetworkConfiguration>

    public init(configuration: NetworkConfiguration = NetworkConfiguration()) {
        settings = Locked(configuration)
    }

    /// Limits and trust for every later request (the command line sets them once, before any request).
    public var configuration: NetworkConfiguration {
        get { settings.withLock { $0 } }
        set { settings.withLock { $0 = newValue } }
    }

    public func client(for url: URL) throws -> APIClient {
        guard let origin = Origin(url) else { throw NetError.invalidURL(url.redactedForDisplay) }
        return clients.withLock { clients in
            if let client = clients[origin] { return client }
            let client = APIClient(origin: origin, settings: settings)
            clients[origin] = client
            return client
        }
    }
}

/// The client of one origin. Its requests go through its own serial FIFO queue: one request in
/// flight to the host at a time, completed in submission order, while other hosts' clients proceed
/// in parallel. A request's whole life (retries with backoff, redirects, an OAuth2 refresh) holds
/// the queue, so a host never sees two requests from this process at once.
///
/// Each call has an async form (`send`) and a blocking form (`sendBlocking`). The blocking form
/// made from a job that is already running on this queue would wait for itself forever; it fails
/// at once with `NetError.reentrantBlockingCall` instead.
public final class APIClient: @unchecked Sendable {
    public let origin: Origin
    private let settings: Locked<NetworkConfiguration>
    private let queue: DispatchQueue

    /// The clients whose queue the current thread is running a job for.
    private static let heldKey = "hreader.APIClient.held"

    init(origin: Origin, settings: Locked<NetworkConfiguration>) {
        self.origin = origin
        self.settings = settings
        self.queue = DispatchQueue(label: "hreader.api.\(origin)")
    }

    public static func client(for url: URL) throws -> APIClient {
        try APIClients.shared.client(for: url)
    }

    /// Sends a request and waits for its response without blocking a thread.
    public func send(_ request: HTTPRequest, auth: Authenticator? = nil) async throws -> HTTPResponse {
        try await submit(request, auth: auth).value
    }

    /// Puts a request on this host's queue now and returns a handle to its response: submission
    /// order is the order of `submit` calls.
    public func submit(_ request: HTTPRequest, auth: Authenticator? = nil) -> PendingResponse {
        let pending = PendingResponse()
        queue.async { pending.complete(Result { try self.runJob(request, auth: auth) }) }
        return pending
    }

    /// Sends a request and blocks the calling thread until the response is in.
    public func sendBlocking(_ request: HTTPRequest, auth: Authenticator? = nil) throws -> HTTPResponse {
        if Self.heldByCurrentThread.contains(ObjectIdentifier(self)) {
            throw NetError.reentrantBlockingCall(origin: origin.description)
        }
        return try queue.sync { try runJob(request, auth: auth) }
    }

    /// Runs `body` as one job on this host's queue (nothing else reaches the host meanwhile).
    public func exclusively<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.holding { try body() } })
            }
        }
    }

    // MARK: - One job

    private func runJob(_ request: HTTPRequest, auth: Authenticator?) throws -> HTTPResponse {
        try holding { try perform(request, auth: auth) }
    }

    private func holding<T>(_ body: () throws -> T) rethrows -> T {
        let id = ObjectIdentifier(self)
        let outer = Self.heldByCurrentThread
        Self.heldByCurrentThread = outer.union([id])
        defer { Self.heldByCurrentThread = outer }
        return try body()
    }

    private static var heldByCurrentThread: Set<ObjectIdentifier> {
        get { (Thread.current.threadDictionary[heldKey] as? HeldSet)?.ids ?? [] }
        set { Thread.current.threadDictionary[heldKey] = HeldSet(ids: newValue) }
    }

    private final class HeldSet: NSObject {
        let ids: Set<ObjectIdentifier>
        init(ids: Set<ObjectIdentifier>) { self.ids = ids }
    }

    /// Retries for 429/502/503/504 (honouring Retry-After) and dropped connections, one refresh of
    /// OAuth2 credentials after a 401, redirects by `RedirectPolicy`.
    private func perform(_ request: HTTPRequest, auth: Authenticator?) throws -> HTTPResponse {
        let configuration = settings.withLock { $0 }
        let transport = HTTPTransport(configuration: configuration)
        let idempotent = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].contains(request.method.uppercased())
        var retries = 0
        var refreshed = false
        while true {
            let response: HTTPResponse
            do {
                response = try RedirectPolicy(transport: transport, maxHops: configuration.maxRedirects)
                    .follow(request, auth: auth)
            } catch let NetError.connectionFailed(_, reason) where idempotent && retries < configuration.maxRetries
                && reason.contains("closed the connection") {
                retries += 1
                Thread.sleep(forTimeInterval: backoff(retries, configuration))
                continue
            }
            if response.status == 401, let auth, !refreshed, auth.canRefresh {
                refreshed = true
                try auth.refresh(using: transport)
                continue
            }
            let retryable: Set<Int> = idempotent ? [429, 502, 503, 504] : [429, 503]
            if retryable.contains(response.status), retries < configuration.maxRetries {
                retries += 1
                let wait = Self.retryAfter(response) ?? backoff(retries, configuration)
                if wait > configuration.maxRetryAfter {
                    throw NetError.retryAfterTooLong(url: request.url.redactedForDisplay, seconds: Int(wait.rounded(.up)))
                }
                Thread.sleep(forTimeInterval: wait)
                continue
            }
            return response
        }
    }

    private func backoff(_ attempt: Int, _ configuration: NetworkConfiguration) -> Double {
        let base = configuration.backoffBase * pow(2, Double(attempt - 1))
        return base * Double.random(in: 0.8...1.2)
    }

    /// `Retry-After` in seconds or as an HTTP date.
    static func retryAfter(_ response: HTTPResponse) -> Double? {
        guard let value = response.header("retry-after")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Double(value), seconds >= 0 { return seconds }
        // An HTTP date is ASCII; Foundation's DateFormatter traps on some other text (see FHIRTime).
        guard value.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }
}

/// The response of a submitted request, awaited later.
public final class PendingResponse: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<HTTPResponse, Error>?
    private var waiter: CheckedContinuation<HTTPResponse, Error>?

    func complete(_ result: Result<HTTPResponse, Error>) {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(with: result)
        } else {
            self.result = result
            lock.unlock()
        }
    }

    public var value: HTTPResponse {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                if let result {
                    lock.unlock()
                    continuation.resume(with: result)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        }
    }
}

/// Follows redirects the way credentials require: the credential goes only to the origin it was
/// given for; a hop to another origin is followed without it (and without it from then on), and a
/// hop from https to http is refused. A request with a `redirectScope` is not followed out of it.
struct RedirectPolicy {
    let transport: HTTPTransport
    let maxHops: Int

    func follow(_ original: HTTPRequest, auth: Authenticator?) throws -> HTTPResponse {
        let home = Origin(original.url)
        var request = original
        var credentialed = auth != nil
        var hops = 0
        while true {
            var outgoing = request
            if credentialed, let auth { try auth.apply(to: &outgoing, using: transport) }
            var response = try transport.perform(outgoing)
            response.url = request.url
            guard [301, 302, 303, 307, 308].contains(response.status),
                  let location = response.header("location"),
                  let next = URL(string: location, relativeTo: request.url)?.absoluteURL else { return response }
            hops += 1
            guard hops <= maxHops else { throw NetError.tooManyRedirects(url: original.url.redactedForDisplay) }
            guard let nextOrigin = Origin(next) else { throw NetError.invalidURL(next.redactedForDisplay) }
            if let scope = original.redirectScope, !scope.contains(next) {
                throw NetError.redirectNotFollowed(url: request.url.redactedForDisplay, reason: scope.redirectRefusal(next))
            }
            if request.url.scheme?.lowercased() == "https", nextOrigin.scheme == "http" {
                throw NetError.insecureRedirect(from: request.url.redactedForDisplay, to: next.redactedForDisplay)
            }
            if nextOrigin != home {
                credentialed = false
                request.setHeader("Authorization", nil)
                request.setHeader("Cookie", nil)
            }
            if response.status == 303 || ([301, 302].contains(response.status) && request.method.uppercased() == "POST") {
                request.method = "GET"
                request.body = nil
                request.setHeader("Content-Type", nil)
            }
            request.url = next
        }
    }
}
