import Foundation

/// Fetches a vendor's published brands bundle (public data, no credential) through the host's
/// serial queue (`APIClient`), conditionally: with the `ETag` and `Last-Modified` of the copy
/// already kept, an unchanged bundle costs a 304 and no body. Only over https, or plain http to
/// this machine (a test or the sample server). No credential goes with it, so redirects are followed
/// as `RedirectPolicy` allows any request's (a vendor may serve its list from a CDN).
///
/// The body goes to a file as it arrives (a bundle is tens or hundreds of megabytes), never whole
/// into memory; the size limit holds as it streams.
///
///     let answer = try await DirectoryBundleClient(url).fetch(etag: kept.etag, lastModified: kept.lastModified, into: path)
///     if case let .changed(etag, lastModified) = answer { read(path) }
public struct DirectoryBundleClient: Sendable {
    public enum Answer: Sendable {
        /// The bundle is in the file, whole.
        case changed(etag: String?, lastModified: String?)
        case notModified
    }

    public let url: URL
    private let clients: APIClients

    public init(_ url: URL, clients: APIClients = .shared) throws {
        guard let scheme = url.scheme?.lowercased(), url.host != nil, url.user == nil,
              scheme == "https" || (scheme == "http" && HealthCardIssuerClient.isLoopback(url)) else {
            throw NetError.invalidURL("\(url.redactedForDisplay) (a brands bundle is fetched over https; plain http only from this machine)")
        }
        self.url = url
        self.clients = clients
    }

    /// GETs the bundle into `file` (created 0600, or emptied); the process's response limit is
    /// checked as it streams in (the command sets it). On a 304 or an error the file holds nothing
    /// of use: the caller removes it either way.
    public func fetch(etag: String?, lastModified: String?, into file: String) async throws -> Answer {
        var request = HTTPRequest(url: url, headers: ["Accept": "application/fhir+json, application/json"])
        request.bodyFile = file
        if let etag { request.setHeader("If-None-Match", etag) }
        if let lastModified { request.setHeader("If-Modified-Since", lastModified) }
        let response = try await clients.client(for: url).send(request)
        if response.status == 304 { return .notModified }
        guard response.isSuccess else {
            throw NetError.status(code: response.status, url: url.redactedForDisplay, detail: nil)
        }
        return .changed(etag: response.header("etag"), lastModified: response.header("last-modified"))
    }
}
