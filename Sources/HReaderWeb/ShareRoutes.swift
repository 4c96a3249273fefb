import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderRecords
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// `hreader serve --shares`: the SMART Health Link manifest protocol for the links `share create`
/// made without `--out` (docs/sharing.md, "Serving"). Outside the app's token: a recipient holds
/// only the link. Everything it hands out is ciphertext under the link's key.
///
/// - `POST /shl/ID` with `{"recipient", "passcode"?, "embeddedLengthMax"?}` → the manifest, the file
///   embedded when it fits `embeddedLengthMax`, else at a `location` that works for a few minutes;
///   401 `{"remainingAttempts": n}` for a wrong passcode (the link locks at 0); 404 once revoked or expired.
/// - `GET /shl/ID/file/TICKET` → the file (`application/jose`), while the ticket lasts.
struct ShareRoutes {
    static let prefix = "/shl/"
    static let maximumBody = 16 * 1024

    let gate: VaultGate
    let tickets: ShareTickets

    func register(on router: RouterGroup<WebContext>) {
        router.post("/:id") { incoming, context in
            var request = incoming
            let id = try context.parameters.require("id")
            let body = try await request.collectBody(upTo: Self.maximumBody)
            let bytes = Array(buffer: body)
            switch try await gate.write({ try $0.answerManifest(id: id, body: bytes) }) {
            case let .granted(jwe, url, embeddedLengthMax):
                let file: HealthLinkManifest.File
                if let embeddedLengthMax, jwe.utf8.count <= embeddedLengthMax {
                    file = HealthLinkManifest.File(contentType: HealthLinkFile.fhirJSON, embedded: jwe, location: nil)
                } else {
                    file = HealthLinkManifest.File(contentType: HealthLinkFile.fhirJSON, embedded: nil,
                                                   location: url + "/file/" + (try tickets.issue(for: id)))
                }
                return JSONResponse.make(HealthLinkManifest(files: [file]).json)
            case let .passcodeRefused(remaining):
                return JSONResponse.make(.object([("remainingAttempts", .int(remaining))]), status: .unauthorized)
            case .gone:
                throw WebError.notFound("no such link (unknown, revoked or expired)")
            case let .badRequest(why):
                throw WebError.badRequest(why)
            }
        }
        router.get("/:id/file/:ticket") { _, context in
            let id = try context.parameters.require("id")
            let ticket = try context.parameters.require("ticket")
            guard tickets.isValid(ticket, for: id) else { throw WebError.notFound("no such file (its location has expired; ask the manifest again)") }
            guard let jwe = try await gate.write({ try $0.sharedFile(id: id) }) else { throw WebError.notFound("no such link (revoked or expired)") }
            return JSONResponse.body(jwe, contentType: "application/jose")
        }
    }

    /// The answer to anything under /shl/ that is no route, or failed: JSON, and CORS for viewers in a browser.
    static func finish(_ response: inout Response) {
        response.headers[.cacheControl] = "no-store"
        response.headers[.accessControlAllowOrigin] = "*"
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
    }

    static func preflight() -> Response {
        var response = Response(status: .noContent)
        response.headers[.accessControlAllowMethods] = "GET, POST"
        response.headers[.accessControlAllowHeaders] = "Content-Type"
        return response
    }

    static func errorResponse(_ error: Error) -> Response {
        let (status, message): (HTTPResponse.Status, String)
        switch error {
        case let e as WebError: (status, message) = (e.status, e.message)
        case is NIOTooManyBytesError: (status, message) = (.contentTooLarge, "the request body is over \(maximumBody / 1024) KiB")
        case let e as HTTPError: (status, message) = (e.status, e.status == .notFound ? "no such link" : e.status.reasonPhrase)
        case let e as VaultGate.Saturated: (status, message) = (.serviceUnavailable, e.message)
        default: (status, message) = (.internalServerError, "the request failed inside hreader")
        }
        return JSONResponse.make(.object([("error", .string(message))]), status: status)
    }
}

/// The short-lived names under which a manifest's `location` serves a link's file: random, each for
/// one link, forgotten after `lifetime` (kept in memory only: a restart ends them all).
final class ShareTickets: Sendable {
    static let lifetime: TimeInterval = 300
    private let tickets = NIOLockedValueBox<[String: (id: String, expires: Date)]>([:])

    func issue(for id: String, now: Date = Date()) throws -> String {
        let ticket = Base64URL.encode(try SecureRandom.bytes(32))
        tickets.withLockedValue { all in
            all = all.filter { $0.value.expires > now }
            all[ticket] = (id, now.addingTimeInterval(Self.lifetime))
        }
        return ticket
    }

    func isValid(_ ticket: String, for id: String, now: Date = Date()) -> Bool {
        tickets.withLockedValue { all in
            guard let found = all[ticket] else { return false }
            return found.id == id && found.expires > now
        }
    }
}
