import Foundation
import HReaderRecords

/// An RHEx / hData server as hReader spoke to it: the Atom patient feed at the base (or `/records`)
/// and each record's c32 JSON at `/records/[id]/c32/[id].json`. Tokens go in `?access_token=`.
public struct RHExClient: Sendable {
    public let base: URL
    let client: APIClient
    let auth: Authenticator?

    public init(base: URL, auth: Authenticator? = nil, clients: APIClients = .shared) throws {
        self.base = try Origin.serviceBase(base)
        self.auth = auth
        self.client = try clients.client(for: self.base)
    }

    /// The patients the server holds (hReader's people feed).
    public func patients() async throws -> [RHExFeedEntry] {
        var lastError: Error?
        for path in ["/", "/records"] {
            let url = URL(string: base.absoluteString + path)!
            let response = try await client.send(HTTPRequest(url: url, headers: ["Accept": "application/atom+xml"]), auth: auth)
            if response.status == 404 {
                lastError = NetError.status(code: 404, url: url.redactedForDisplay, detail: nil)
                continue
            }
            try check(response, expecting: "an Atom feed")
            do {
                return try RHExFeed.parse(response.body)
            } catch let error as RecordsError {
                lastError = NetError.malformed(url: url.redactedForDisplay, reason: error.description)
                if path == "/" { continue }   // some servers serve something else at the root
            }
        }
        throw lastError ?? NetError.status(code: 404, url: base.redactedForDisplay, detail: nil)
    }

    /// One patient's c32 JSON record, mapped (whether it is the patient asked for is `RHExRecordCheck`'s
    /// to say, with the feed beside it).
    public func record(id: String) async throws -> (record: MappedRecord, bytes: Int) {
        let escaped = Authenticator.formEncode(id)
        let url = URL(string: "\(base.absoluteString)/records/\(escaped)/c32/\(escaped).json")!
        let response = try await client.send(HTTPRequest(url: url, headers: ["Accept": "application/json"]), auth: auth)
        try check(response, expecting: "a JSON record")
        let record: MappedRecord
        do {
            record = try RHExMapper().map(response.body, remoteID: id)
        } catch let error as RecordsError {
            throw NetError.malformed(url: url.redactedForDisplay, reason: error.description)
        }
        return (record, response.body.count)
    }

    func check(_ response: HTTPResponse, expecting: String) throws {
        let display = response.url.redactedForDisplay
        if response.status == 401 {
            throw NetError.unauthorized(url: display, detail: FHIRClient.bearerError(response))
        }
        guard response.isSuccess else {
            throw NetError.status(code: response.status, url: display, detail: FHIRClient.shortText(response))
        }
        if let type = response.mediaType, type.contains("html") {
            throw NetError.unexpectedResponse(url: display, reason: "an HTML page (\(type)), not \(expecting); is this the server's RHEx base URL?")
        }
    }
}
