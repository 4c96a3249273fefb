import Foundation

/// Fetches what a SMART Health Card issuer publishes: its keys (`ISS/.well-known/jwks.json`) and a
/// key's revocation list (`ISS/.well-known/crl/KID.json`), through the issuer host's serial queue
/// (`APIClient`). Only over https, or plain http to this machine (a test issuer); never a redirect
/// to another origin; at most `maxBytes` (a key set is a few kilobytes).
///
///     let jwks = try HealthCardIssuerClient(iss: card.issuer).keySet()
public struct HealthCardIssuerClient: Sendable {
    public let iss: String
    private let base: URL
    private let clients: APIClients
    public static let maxBytes = 256 << 10

    public init(iss: String, clients: APIClients = .shared) throws {
        guard let url = URL(string: iss), let scheme = url.scheme?.lowercased(), url.host != nil, url.query == nil, url.fragment == nil,
              scheme == "https" || (scheme == "http" && Self.isLoopback(url)) else {
            throw NetError.invalidURL("\(iss) (an issuer is an https URL)")
        }
        self.iss = iss
        base = url
        self.clients = clients
    }

    /// The issuer's JWK Set, as bytes.
    public func keySet() throws -> [UInt8] { try get(".well-known/jwks.json") }

    /// The revocation list of key `kid`, as bytes.
    public func revocationList(kid: String) throws -> [UInt8] {
        // A kid is base64url: nothing in it needs escaping in a path (anything else is refused).
        guard !kid.isEmpty, kid.utf8.allSatisfy({ $0.isBase64URL }) else {
            throw NetError.invalidURL("\(iss)/.well-known/crl/… for a key id that is not base64url")
        }
        return try get(".well-known/crl/\(kid).json")
    }

    private func get(_ path: String) throws -> [UInt8] {
        let text = base.absoluteString.hasSuffix("/") ? base.absoluteString + path : base.absoluteString + "/" + path
        guard let url = URL(string: text) else { throw NetError.invalidURL(text) }
        var request = HTTPRequest(url: url, headers: ["Accept": "application/json"])
        request.redirectScope = URLScope(url.deletingLastPathComponent())
        let response = try clients.client(for: url).sendBlocking(request)
        guard response.isSuccess else {
            throw NetError.status(code: response.status, url: url.redactedForDisplay, detail: nil)
        }
        guard response.body.count <= Self.maxBytes else {
            throw NetError.responseTooLarge(url: url.redactedForDisplay, limit: Self.maxBytes)
        }
        return Array(response.body)
    }

    /// 127.0.0.0/8, ::1, localhost.
    static func isLoopback(_ url: URL) -> Bool {
        let host = (url.host ?? "").lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return (parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }) || host == "::1" || host == "localhost"
    }
}

private extension UInt8 {
    var isBase64URL: Bool {
        (self >= 0x30 && self <= 0x39) || (self >= 0x41 && self <= 0x5a) || (self >= 0x61 && self <= 0x7a) || self == 0x2d || self == 0x5f
    }
}
