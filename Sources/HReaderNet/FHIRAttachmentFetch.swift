import Foundation
import HReaderRecords

/// An attachment's bytes, fetched from the FHIR server itself (issue 26): a `url` relative to the
/// base (`Binary/7`) or absolute under it. A url on any other origin, or outside the base's path, is
/// never requested (`attachmentURL` answers nil), so the source's credentials never reach another
/// host; nor is a redirect followed out of the base's origin and path (`NetError.redirectNotFollowed`):
/// a server must not make hreader fetch, and keep as the source's, what another host serves.
extension FHIRClient {
    public struct AttachmentResponse: Sendable {
        /// The server said the bytes are those it sent before (304 to `If-None-Match`).
        public var notModified: Bool
        public var bytes: [UInt8]
        public var contentType: String?
        public var etag: String?
    }

    /// Where an attachment's `url` points on this server; nil when it is on another host, outside
    /// the base, or not an http(s) reference the client can follow (`#contained`, `urn:`).
    public func attachmentURL(_ reference: String) -> URL? {
        let trimmed = reference.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#"), !trimmed.lowercased().hasPrefix("urn:") else { return nil }
        let resolved: URL?
        if let absolute = URL(string: trimmed), absolute.scheme != nil {
            resolved = absolute
        } else if trimmed.hasPrefix("/") {
            resolved = URL(string: trimmed, relativeTo: base)?.absoluteURL
        } else {
            resolved = URL(string: base.absoluteString + "/" + trimmed)
        }
        guard let url = resolved, URLScope(base)?.contains(url) == true else { return nil }
        return url
    }

    /// Fetches `url` (from `attachmentURL`), asking for `contentType` first and a FHIR `Binary` as
    /// well; a `Binary` answer is decoded to its bytes. `etag`, when given, makes the request
    /// conditional. Throws `NetError` for failures (the caller records them and tries again later),
    /// `redirectNotFollowed` for a redirect out of the base (the caller keeps a reference).
    public func attachment(_ url: URL, contentType: String?, etag: String?) async throws -> AttachmentResponse {
        guard let scope = URLScope(base), scope.contains(url) else {
            throw NetError.unexpectedResponse(url: url.redactedForDisplay, reason: "an attachment outside this server's FHIR base is never fetched with its credentials")
        }
        var accept = "application/fhir+json;q=0.9, */*;q=0.1"
        // Only a clean `type/subtype` goes into the header (no comma, space or line break can).
        if let type = DocumentContentType.mediaType(contentType) {
            accept = type + ", " + accept
        }
        var request = HTTPRequest(url: url, headers: ["Accept": accept])
        request.redirectScope = scope
        if let etag { request.setHeader("If-None-Match", etag) }
        let response = try await client.send(request, auth: auth)
        if response.status == 304 { return AttachmentResponse(notModified: true, bytes: [], contentType: nil, etag: etag) }
        guard response.isSuccess else {
            let detail = (try? FHIRResponseSet.inspect(response.body, what: "error"))?.outcome
            if response.status == 401 { throw NetError.unauthorized(url: response.url.redactedForDisplay, detail: detail) }
            throw NetError.status(code: response.status, url: response.url.redactedForDisplay, detail: detail ?? Self.shortText(response))
        }
        let etagAnswer = response.header("etag")
        let media = response.mediaType
        let wantedJSON = DocumentContentType.mediaType(contentType).map { $0.hasSuffix("json") } ?? false
        if let media, media == "application/fhir+json" || (media == "application/json" && !wantedJSON) {
            let bytes = [UInt8](response.body)
            guard let binary = FHIRAttachments.binary(bytes) else {
                throw NetError.malformed(url: response.url.redactedForDisplay, reason: "a JSON answer that is not a FHIR Binary with data")
            }
            guard let decoded = Data(base64Encoded: binary.data, options: .ignoreUnknownCharacters) else {
                throw NetError.malformed(url: response.url.redactedForDisplay, reason: "a Binary whose data is not base64")
            }
            return AttachmentResponse(notModified: false, bytes: [UInt8](decoded), contentType: binary.contentType ?? contentType, etag: etagAnswer)
        }
        return AttachmentResponse(notModified: false, bytes: [UInt8](response.body), contentType: response.header("content-type") ?? contentType,
                                  etag: etagAnswer)
    }
}
