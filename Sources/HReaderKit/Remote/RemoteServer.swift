import Foundation
import HReaderJSON
import HReaderModel
import HReaderNet

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
        let object: JSONValue
        switch method {
        case .none: return ("none", nil)
        case let .bearer(token): object = .object(["token": .string(token)])
        case let .basic(user, password): object = .object(["password": .string(password), "user": .string(user)])
        case let .oauth2(tokens): object = tokens.json
        }
        return (method.kindName, object.serialized())
    }

    static func decode(kind: String, json: String?) throws -> AuthMethod {
        let damaged = HReaderError(.integrity, "the stored credentials of a source cannot be read; run 'hreader sources login' again")
        guard kind != "none" else { return .none }
        guard let json, let value = try? JSONParser.parse(json) else { throw damaged }
        switch kind {
        case "oauth2":
            guard let tokens = OAuth2Tokens(json: value) else { throw damaged }
            return .oauth2(tokens)
        case "bearer":
            guard let token = value["token"]?.string else { throw damaged }
            return .bearer(token: token)
        case "basic":
            guard let user = value["user"]?.string, let password = value["password"]?.string else { throw damaged }
            return .basic(user: user, password: password)
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
