import Foundation
import HReaderCrypto
import NIOConcurrencyHelpers

/// Who may talk to `hreader serve`: whoever holds the access token printed at start.
///
/// - The printed URL carries the token (`/s/<random>/?token=…`). A browser's first visit exchanges it for a session
///   cookie (HttpOnly, SameSite=Strict) and is redirected to the same page without it, so the token leaves
///   the address bar.
/// - Scripts send the token as `Authorization: Bearer …` instead.
/// - Every session has its own CSRF token, which pages carry in a `<meta>` tag; a POST authenticated by
///   the cookie must repeat it (header `X-CSRF-Token` or form field `csrf_token`). A bearer token cannot
///   be sent by another site, so a POST authenticated by it needs none.
/// - Everything lives in memory: when the server stops, the token and every session end with it.
public final class AccessControl: Sendable {
    public static let cookieName = "hreader_session"
    public static let csrfHeader = "X-CSRF-Token"
    public static let csrfField = "csrf_token"
    /// Sessions kept at once; the oldest is forgotten beyond this (a browser just logs in again with the URL).
    static let maximumSessions = 64

    /// The secret in the printed URL.
    public let token: String
    /// `/s/<32 hex digits>`: every path of the app starts with it, and the session cookie's `Path` is
    /// it. Cookies ignore ports (RFC 6265 §8.5): without a path no other server on 127.0.0.1 can name,
    /// the browser would send our cookie to every one of them, which could replay it.
    public let pathPrefix: String
    private let sessions = NIOLockedValueBox<[(id: String, csrf: String)]>([])

    public init() throws {
        token = try Self.randomToken()
        pathPrefix = "/s/" + (try SecureRandom.bytes(16)).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether a request path is inside the app.
    func isInside(_ path: String) -> Bool { path == pathPrefix || path.hasPrefix(pathPrefix + "/") }

    /// A fresh session for a visitor who presented the token: its cookie value and CSRF token.
    func startSession() throws -> (id: String, csrf: String) {
        let session = (id: try Self.randomToken(), csrf: try Self.randomToken())
        sessions.withLockedValue { list in
            list.append(session)
            if list.count > Self.maximumSessions { list.removeFirst(list.count - Self.maximumSessions) }
        }
        return session
    }

    /// The CSRF token of the session a cookie names, when the session exists.
    func csrfToken(forSession id: String) -> String? {
        sessions.withLockedValue { list in list.first { Self.constantTimeEqual($0.id, id) }?.csrf }
    }

    func isToken(_ candidate: String) -> Bool { Self.constantTimeEqual(candidate, token) }

    /// 32 random bytes from OpenSSL, base64url without padding (43 characters, cookie- and URL-safe).
    static func randomToken() throws -> String {
        Data(try SecureRandom.bytes(32)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Compares without an early exit, so the time taken does not tell how much of a guess was right.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
