import Foundation
import HReaderRecords

/// Fetches what a SMART Health Link points at, through each host's serial queue (`APIClient`):
/// the one file of a `U` link (`GET url?recipient=…`), the manifest of any other (`POST url`), and
/// a manifest's `location` files (`GET`). Only over https, or plain http to this machine (a test
/// server, `hreader serve --shares`), as the issuer client; redirects stay on the same origin; the
/// response size limit is the network configuration's.
///
///     let client = HealthLinkClient()
///     let jwe = try client.directFile(link.url, recipient: "hreader")
public struct HealthLinkClient: Sendable {
    private let clients: APIClients

    public init(clients: APIClients = .shared) { self.clients = clients }

    /// Why a manifest was not handed out.
    public enum Refusal: Error, Equatable, Sendable {
        /// 401: the passcode is missing or wrong; `remaining` tries are left (nil: not said).
        case passcode(remaining: Int?)
        /// 404: the link is unknown, revoked, or expired at its server.
        case gone
    }

    /// `GET url?recipient=…`: a `U` link's encrypted file.
    public func directFile(_ text: String, recipient: String) throws -> String {
        guard var components = URLComponents(url: try Self.url(text), resolvingAgainstBaseURL: false) else { throw NetError.invalidURL(text) }
        let query = components.queryItems ?? []
        components.queryItems = query + [URLQueryItem(name: "recipient", value: recipient)]
        guard let url = components.url else { throw NetError.invalidURL(text) }
        let response = try send(HTTPRequest(url: url, headers: ["Accept": "application/jose, */*"]))
        if response.status == 404 { throw Refusal.gone }
        try Self.requireSuccess(response, url)
        return String(decoding: response.body, as: UTF8.self)
    }

    /// `POST url` with the request; the manifest's bytes.
    public func manifest(_ text: String, request: HealthLinkManifest.Request) throws -> [UInt8] {
        let url = try Self.url(text)
        let body = Data(request.json.serialized().utf8)
        let response = try send(HTTPRequest(method: "POST", url: url, headers: ["Content-Type": "application/json", "Accept": "application/json"],
                                            body: body))
        switch response.status {
        case 401: throw Refusal.passcode(remaining: HealthLinkManifest.remainingAttempts(in: response.body))
        case 404: throw Refusal.gone
        default: break
        }
        try Self.requireSuccess(response, url)
        return Array(response.body)
    }

    /// `GET location`: a manifest's file.
    public func file(at text: String) throws -> String {
        let url = try Self.url(text)
        let response = try send(HTTPRequest(url: url, headers: ["Accept": "application/jose, */*"]))
        if response.status == 404 { throw Refusal.gone }
        try Self.requireSuccess(response, url)
        return String(decoding: response.body, as: UTF8.self)
    }

    private func send(_ request: HTTPRequest) throws -> HTTPResponse {
        var request = request
        request.redirectScope = URLScope(request.url.deletingLastPathComponent())
        return try clients.client(for: request.url).sendBlocking(request)
    }

    private static func requireSuccess(_ response: HTTPResponse, _ url: URL) throws {
        guard response.isSuccess else { throw NetError.status(code: response.status, url: url.redactedForDisplay, detail: nil) }
    }

    /// An https URL, or http to 127.0.0.0/8, ::1 or localhost.
    static func url(_ text: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), url.host != nil, url.user == nil,
              scheme == "https" || (scheme == "http" && HealthCardIssuerClient.isLoopback(url)) else {
            throw NetError.invalidURL("\(text.prefix(120)) (a link's url is https; plain http only to this machine)")
        }
        return url
    }
}
