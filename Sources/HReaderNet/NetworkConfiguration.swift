import Foundation

/// Limits and trust for every request a process makes. One value per process (the command line
/// sets it once); the per-host clients share it.
public struct NetworkConfiguration: Sendable, Hashable {
    /// Time allowed to connect, and to wait for the next bytes of an answer (a stalled server).
    public var connectTimeout: Double = 10
    public var readTimeout: Double = 30
    /// Largest response body accepted, counted as it streams in (after decompression).
    public var maxResponseBytes: Int = 10 << 20
    /// Attempts after the first for 429/502/503/504 and dropped connections on idempotent requests.
    public var maxRetries: Int = 3
    /// Base of the exponential backoff when the server gives no Retry-After.
    public var backoffBase: Double = 0.5
    /// A Retry-After longer than this fails the request instead of waiting.
    public var maxRetryAfter: Double = 120
    /// Redirect hops followed before giving up.
    public var maxRedirects: Int = 5
    /// A PEM file of extra trusted CA certificates (private CAs). Verification is never turned off.
    public var caFile: String?
    /// Send credentials over plain http to a host that is not this machine (`--insecure-http`). Off:
    /// a password or token in the clear crosses every network between here and the server.
    public var allowInsecureHTTP = false
    public var userAgent: String = "hreader/0.4"

    public init() {}
}
