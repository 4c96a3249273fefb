import Foundation
import HReaderNet
import HReaderStore

/// The two kinds of server hreader imports from.
public enum ServerKind: String, Sendable, CaseIterable {
    case fhir, rhex

    var sourceKind: SourceKind { self == .fhir ? .fhir : .rhex }
}

/// A server's base URL as sources store it: http(s), no trailing slash, no query or fragment.
public struct ServerURL: Sendable, Equatable, CustomStringConvertible {
    public let url: URL

    public init(_ text: String) throws {
        var trimmed = text.trimmingCharacters(in: .whitespaces)
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let url = URL(string: trimmed), Origin(url) != nil, url.query == nil, url.fragment == nil,
              url.user == nil, url.password == nil else {
            throw HReaderError.usage("--server must be an http(s) base URL without query or credentials, e.g. https://fhir.example.org/r4")
        }
        self.url = url
    }

    public var description: String { url.absoluteString }
    var displayName: String { (url.host ?? "server") + (url.port.map { ":\($0)" } ?? "") + url.path }
}

/// Credentials as the `sources.credentials` column keeps them (JSON inside the encrypted vault).
enum StoredCredentials {
    static func encode(_ method: AuthMethod) -> (kind: String, json: String?) {
        let object: [String: Any]
        switch method {
        case .none: return ("none", nil)
        case let .bearer(token): object = ["token": token]
        case let .basic(user, password): object = ["user": user, "password": password]
        case let .oauth2(tokens):
            guard let data = try? JSONEncoder().encode(tokens), let text = String(data: data, encoding: .utf8) else { return ("oauth2", nil) }
            return ("oauth2", text)
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return (method.kindName, String(data: data, encoding: .utf8))
    }

    static func decode(kind: String, json: String?) throws -> AuthMethod {
        let damaged = HReaderError(.integrity, "the stored credentials of a source cannot be read; run 'hreader sources login' again")
        switch kind {
        case "none": return .none
        case "oauth2":
            guard let data = json?.data(using: .utf8), let tokens = try? JSONDecoder().decode(OAuth2Tokens.self, from: data) else { throw damaged }
            return .oauth2(tokens)
        case "bearer", "basic":
            guard let data = json?.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: String] else { throw damaged }
            if kind == "bearer", let token = object["token"] { return .bearer(token: token) }
            if kind == "basic", let user = object["user"], let password = object["password"] { return .basic(user: user, password: password) }
            throw damaged
        default:
            throw damaged
        }
    }
}

extension HReaderError {
    /// Network and server errors exit 6; data the server sent that cannot be read exits 5; spent
    /// credentials (log in again) exit 3.
    static func from(network error: NetError) -> HReaderError {
        HReaderError(error.isBadData ? .badInput : error.needsLogin ? .authentication : .network, error.description)
    }
}
