import Foundation

/// What can go wrong talking to a server. Every case reads as one line for the user and carries no
/// secret: URLs are redacted (`URL.redactedForDisplay`) before they are put in.
public enum NetError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidURL(String)
    case connectionFailed(origin: String, reason: String)
    case timedOut(url: String, seconds: Double)
    case responseTooLarge(url: String, limit: Int)
    case tls(origin: String, reason: String)
    /// The server answered with an error status (after any retries).
    case status(code: Int, url: String, detail: String?)
    case unauthorized(url: String, detail: String?)
    case tooManyRedirects(url: String)
    case insecureRedirect(from: String, to: String)
    /// A redirect outside the request's `redirectScope`; `reason` says where it led.
    case redirectNotFollowed(url: String, reason: String)
    case retryAfterTooLong(url: String, seconds: Int)
    /// A blocking call made from the client's own queue, which would wait for itself forever.
    case reentrantBlockingCall(origin: String)
    case authentication(String)
    /// The credentials are spent (a refresh token refused, none to refresh with): only a new login helps.
    case loginRequired(String)
    /// The server answered, but not with what the protocol promises (an HTML page, a wrong type).
    case unexpectedResponse(url: String, reason: String)
    /// The server's data itself is malformed (invalid JSON, a record that cannot be read).
    case malformed(url: String, reason: String)
    /// Paging that does not end (a `next` link seen before, or too many pages).
    case pagingLoop(url: String, reason: String)

    /// Bad data from the server (exit 5) rather than a failing server or network (exit 6).
    public var isBadData: Bool {
        if case .malformed = self { return true }
        return false
    }

    /// Only logging in again helps (exit 3) rather than a failing server or network (exit 6).
    public var needsLogin: Bool {
        if case .loginRequired = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case let .invalidURL(text): return "not an http(s) URL: \(text)"
        case let .connectionFailed(origin, reason): return "cannot connect to \(origin): \(reason)"
        case let .timedOut(url, seconds): return "the server did not answer within \(Self.format(seconds)) s: \(url) (raise --timeout if it is only slow)"
        case let .responseTooLarge(url, limit): return "the response from \(url) is larger than the \(Self.bytes(limit)) limit (raise --max-response-size if it is expected)"
        case let .tls(origin, reason): return "TLS failure with \(origin): \(reason) (for a private CA use --ca-file)"
        case let .status(code, url, detail):
            return "the server answered \(code) \(Self.reason(code)) for \(url)" + (detail.map { ": \($0)" } ?? "")
        case let .unauthorized(url, detail):
            return "the server refused the credentials (401) for \(url)" + (detail.map { ": \($0)" } ?? "") + "; run 'hreader sources login'"
        case let .tooManyRedirects(url): return "too many redirects starting at \(url)"
        case let .insecureRedirect(from, to): return "refusing a redirect from \(from) to the insecure \(to)"
        case let .redirectNotFollowed(url, reason): return "\(url) \(reason)"
        case let .retryAfterTooLong(url, seconds): return "the server asks to retry \(url) after \(seconds) s; try again later"
        case let .reentrantBlockingCall(origin): return "internal error: a blocking request to \(origin) was made from that host's own queue (it would wait for itself)"
        case let .authentication(why): return why
        case let .loginRequired(why): return why
        case let .unexpectedResponse(url, reason): return "unexpected answer from \(url): \(reason)"
        case let .malformed(url, reason): return "bad data from \(url): \(reason)"
        case let .pagingLoop(url, reason): return "paging from \(url) does not end: \(reason)"
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }

    static func bytes(_ count: Int) -> String {
        count % (1 << 20) == 0 ? "\(count >> 20) MiB" : "\(count) bytes"
    }

    static func reason(_ code: Int) -> String {
        switch code {
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 412: return "Precondition Failed"
        case 422: return "Unprocessable Entity"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return ""
        }
    }
}
