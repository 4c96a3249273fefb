import Foundation
import HReaderKit
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// What a request carries once `WebGuard` has let it through.
public struct WebContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The browser session's CSRF token, which pages embed; nil for a request authenticated by bearer token.
    var csrfToken: String?
    /// The app's path prefix (`AccessControl.pathPrefix`), which every link starts with.
    var base = ""
    var visit: Visit { Visit(csrf: csrfToken, base: base) }
    /// The connection the request came on (to notice when its client goes: `ClientLink`).
    let channel: any Channel

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// An answer other than success, with a message safe to show (it never holds health data or secrets).
struct WebError: Error {
    let status: HTTPResponse.Status
    let message: String

    static func notFound(_ what: String) -> WebError { WebError(status: .notFound, message: what) }
    static func badRequest(_ why: String) -> WebError { WebError(status: .badRequest, message: why) }
}

/// The middleware in front of every route, including unknown ones, in this order:
/// 1. the `Host` must be exactly the loopback address and port we listen on (DNS rebinding), and a
///    browser's `Sec-Fetch-Site`, when sent, must say the request comes from our own pages or the
///    address bar (another port of 127.0.0.1 is the same site, and cookies ignore ports);
/// 2. the caller must hold the token: in the query (exchanged for a cookie and redirected), as a bearer
///    token, or through a session cookie;
/// 3. a POST authenticated by the cookie must come from our own origin and carry the session's CSRF token;
/// 4. every answer, errors included, gets the security headers: a CSP that allows only our own origin,
///    `no-store` (health data must not land in the browser's disk cache), no referrer to other sites, no framing.
struct WebGuard: RouterMiddleware {
    typealias Context = WebContext

    let access: AccessControl
    /// "127.0.0.1:8080": the only `Host` we answer.
    let authority: ListeningAuthority
    /// `serve --shares`: `/shl/…` is the SMART Health Link protocol (`ShareRoutes`), open to anyone
    /// holding a link, whatever the `Host` (a recipient reaches it through the user's proxy), without
    /// the app's token, cookie or pages.
    var shares = false
    static let maximumPostBody = 64 * 1024

    func handle(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        var response: Response
        if shares, request.uri.path.hasPrefix(ShareRoutes.prefix) {
            if request.method == .options {
                response = ShareRoutes.preflight()
            } else {
                do { response = try await next(request, context) } catch { response = ShareRoutes.errorResponse(error) }
            }
            ShareRoutes.finish(&response)
            return response
        }
        do {
            // The vault's work for this request stops if its client goes (VaultGate).
            let link = await ClientLink.of(context.channel)
            response = try await ClientLink.$current.withValue(link) { try await guarded(request, context: context, next: next) }
        } catch {
            response = Self.errorResponse(error, for: request, base: access.pathPrefix)
        }
        Self.addSecurityHeaders(to: &response.headers)
        return response
    }

    private func guarded(_ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response) async throws -> Response {
        var request = request
        var context = context
        let authority = self.authority.current ?? "127.0.0.1"
        guard let host = request.head.authority, host.lowercased() == authority, request.headers[values: Self.hostField].isEmpty else {
            throw WebError(status: .forbidden, message: "this server answers only to http://\(authority)")
        }
        // Cookies are not port-scoped (RFC 6265 §8.5): a page another local user serves on
        // 127.0.0.1:OTHER is same-site, and its script's requests here would carry our cookie. The
        // browser says where a request comes from; only our own pages and typed addresses pass.
        if let site = request.headers[Self.fetchSiteField]?.lowercased(), site != "same-origin", site != "none" {
            throw WebError(status: .forbidden, message: "a request from another site (\(site)) was refused")
        }

        if let token = request.uri.queryParameters.get("token") {
            guard access.isToken(token) else { throw Self.unauthorized }
            if request.method == .get || request.method == .head {
                // The first visit: swap the token for a session cookie and drop it from the address bar.
                let session = try access.startSession()
                var response = Response.redirect(to: Self.withoutToken(request.uri), type: .normal)
                response.setCookie(Cookie(name: AccessControl.cookieName, value: session.id, path: access.pathPrefix, httpOnly: true,
                                          sameSite: .strict))
                return response
            }
        } else if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer", access.isToken(String(parts[1])) else { throw Self.unauthorized }
        } else if let session = request.cookies[AccessControl.cookieName]?.value, let csrf = access.csrfToken(forSession: session) {
            context.csrfToken = csrf
        } else {
            throw Self.unauthorized
        }

        // Authenticated, but outside the app: nothing is served there (and an unauthenticated caller
        // never learns where the app is).
        guard access.isInside(request.uri.path) else { throw WebError.notFound("no such page") }
        context.base = access.pathPrefix

        if request.method != .get && request.method != .head {
            if request.method != .post { throw WebError(status: .methodNotAllowed, message: "only GET and POST are served") }
            let body = try await request.collectBody(upTo: Self.maximumPostBody)
            if let csrf = context.csrfToken { try checkCrossSite(request, body: FormBody(body, of: request), csrf: csrf, authority: authority) }
        }
        return try await next(request, context)
    }

    /// A cookie rides along with any request the browser makes, even one another site's page triggers;
    /// only our own pages know the CSRF token. (SameSite=Strict already keeps the cookie off cross-site
    /// requests; this is the second lock.)
    private func checkCrossSite(_ request: Request, body: FormBody, csrf: String, authority: String) throws {
        if let origin = request.headers[.origin], origin.lowercased() != "http://" + authority {
            throw WebError(status: .forbidden, message: "a request from another origin was refused")
        }
        let sent = request.headers[HTTPField.Name(AccessControl.csrfHeader)!] ?? body.value(AccessControl.csrfField)
        guard let sent, AccessControl.constantTimeEqual(sent, csrf) else {
            throw WebError(status: .forbidden, message: "missing or wrong CSRF token; reload the page and try again")
        }
    }

    /// A second `Host` header (the first becomes the request's authority).
    static let hostField = HTTPField.Name("Host")!
    static let fetchSiteField = HTTPField.Name("Sec-Fetch-Site")!

    static let unauthorized = WebError(status: .unauthorized, message: "open the URL that 'hreader serve' printed (it carries the access token)")

    static func withoutToken(_ uri: URI) -> String {
        let kept = uri.queryParameters.filter { $0.key != "token" }
            .map { "\(FormBody.encode(String($0.key)))=\(FormBody.encode(String($0.value)))" }
        return uri.path + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// A route may set a stricter policy of its own (the printable summary: no script at all, its one
    /// inline style by hash); every other answer gets the app's.
    static func addSecurityHeaders(to headers: inout HTTPFields) {
        if headers[.contentSecurityPolicy] == nil {
            headers[.contentSecurityPolicy] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        }
        headers[.cacheControl] = "no-store"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        // same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` with a form's
        // POST, which the origin check must refuse, so every cookie-authenticated form (the share
        // page's, the provider login's) failed with 403. Other sites still get no referrer at all.
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        headers[HTTPField.Name("Cross-Origin-Resource-Policy")!] = "same-origin"
    }

    /// One clear message: JSON for the API and `timeline.json`, a small page otherwise. Unexpected
    /// errors say only that something failed, so nothing internal reaches the browser.
    static func errorResponse(_ error: Error, for request: Request, base: String) -> Response {
        let (status, message): (HTTPResponse.Status, String)
        switch error {
        case let e as WebError: (status, message) = (e.status, e.message)
        case let e as VaultGate.Saturated: (status, message) = (.serviceUnavailable, e.message)
        case is CancellationError: (status, message) = (.serviceUnavailable, "the request was stopped")
        case let e as HReaderError:
            switch e.kind {
            case .usage, .badInput: status = .badRequest
            case .authentication: status = .unauthorized
            default: status = .internalServerError
            }
            message = e.message
        case is NIOTooManyBytesError:
            (status, message) = (.contentTooLarge, "the request body is over \(maximumPostBody / 1024) KiB")
        case let e as HTTPError:
            status = e.status
            message = e.status == .notFound ? "no such page" : (e.body ?? e.status.reasonPhrase)
        default:
            (status, message) = (.internalServerError, "the request failed inside hreader")
        }
        let path = request.uri.path.hasPrefix(base + "/") ? String(request.uri.path.dropFirst(base.count)) : request.uri.path
        var response = path.hasPrefix("/api/") || path == "/timeline.json"
            ? JSONResponse.make(.object([("error", .string(message))]), status: status)
            : HTMLResponse.make(Pages.errorPage(status: status, message: message), status: status)
        if status == .serviceUnavailable { response.headers[.retryAfter] = String(VaultGate.Saturated.retryAfterSeconds) }
        return response
    }
}
