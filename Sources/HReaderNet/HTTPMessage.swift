import Foundation

/// One HTTP request as the API clients see it.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: URL
    /// Header names are compared without regard to case; the last value set wins.
    public var headers: [String: String]
    public var body: Data?
    /// Where redirects may lead besides `RedirectPolicy`'s rules for every request: nil, anywhere
    /// they allow; a scope ends the request at the first hop outside it (`NetError.redirectNotFollowed`),
    /// so what is fetched stays on the server and under the path it was asked of (an attachment).
    public var redirectScope: URLScope?
    /// Where a successful (2xx) answer's body goes instead of memory: the file at this path, created
    /// (0600) or emptied, written as the body streams in, within the size limit (`BodyFileDelegate`);
    /// the response's `body` is then empty. Other answers are read into `body` as usual.
    public var bodyFile: String?

    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    public mutating func setHeader(_ name: String, _ value: String?) {
        for key in headers.keys where key.caseInsensitiveCompare(name) == .orderedSame { headers[key] = nil }
        if let value { headers[name] = value }
    }
}

/// A complete response: the body has been read whole, within the size limit (into `body`, or into
/// the request's `bodyFile` for a 2xx answer).
public struct HTTPResponse: Sendable {
    public var status: Int
    /// Lower-cased names; repeated headers joined with ", ".
    public var headers: [String: String]
    public var body: Data
    /// The URL that answered (after redirects).
    public var url: URL

    public init(status: Int, headers: [String: String], body: Data, url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The media type without parameters, lower-cased ("application/fhir+json").
    public var mediaType: String? {
        header("content-type")?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }
}
