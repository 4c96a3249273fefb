import Foundation

/// Scheme, host and port: the unit of a per-host client, of redirect trust and of credentials.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    public let scheme: String
    public let host: String
    public let port: Int

    /// Only http and https URLs with a host have an origin here.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    public var description: String { "\(scheme)://\(host):\(port)" }

    /// A service's base URL as the clients use it: http(s), no trailing slash (paths are appended).
    static func serviceBase(_ url: URL) throws -> URL {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        guard let trimmed = URL(string: text), Origin(trimmed) != nil else { throw NetError.invalidURL(url.redactedForDisplay) }
        return trimmed
    }
}

extension URL {
    /// The URL as it may appear in messages: query values that can carry secrets are replaced, and
    /// user info is dropped. hReader put access tokens in the query string; messages must not.
    public var redactedForDisplay: String {
        guard var parts = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return "(unprintable URL)" }
        parts.user = nil
        parts.password = nil
        let secretNames: Set<String> = ["access_token", "token", "refresh_token", "code", "code_verifier", "client_secret", "password", "key"]
        if let items = parts.queryItems {
            parts.queryItems = items.map { secretNames.contains($0.name.lowercased()) ? URLQueryItem(name: $0.name, value: "REDACTED") : $0 }
        }
        return parts.string ?? "(unprintable URL)"
    }
}
