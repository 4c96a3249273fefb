import Foundation

/// An origin and a path under it: where an attachment's url may point and where its redirects may
/// lead (a source's FHIR base). A url is inside when it has the same origin, its path starts with
/// the scope's (whole segments) and no segment is `..` or `.`.
///
///     let scope = URLScope(URL(string: "https://ehr.example.org/api/FHIR/R4")!)!
///     scope.contains(URL(string: "https://ehr.example.org/api/FHIR/R4/Binary/7")!)   // true
///     scope.contains(URL(string: "https://ehr.example.org/other/Binary/7")!)         // false
public struct URLScope: Sendable, Equatable {
    public let origin: Origin
    /// The base's path with a trailing slash (`/api/FHIR/R4/`); `/` for the whole origin.
    public let pathPrefix: String

    /// Nil for a url that is not http(s) with a host.
    public init?(_ base: URL) {
        guard let origin = Origin(base) else { return nil }
        self.origin = origin
        pathPrefix = base.path.hasSuffix("/") ? base.path : base.path + "/"
    }

    public func contains(_ url: URL) -> Bool {
        guard Origin(url) == origin, url.path.hasPrefix(pathPrefix) || pathPrefix == "/" else { return false }
        return !url.path.split(separator: "/").contains { $0 == ".." || $0 == "." }
    }

    /// Why a redirect to `url` (outside) is not followed, in words for the document's reason.
    func redirectRefusal(_ url: URL) -> String {
        if let other = Origin(url), other != origin { return "redirected to another origin (\(other)); not followed" }
        return "redirected outside \(pathPrefix) on its server (\(url.redactedForDisplay)); not followed"
    }
}
