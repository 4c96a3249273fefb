import Foundation
import NIOHTTP1

/// What the FHIR API allows and how it pages (`--profile`), so a client can be tried against the
/// kinds of servers people have, not only against one that does everything:
/// - `full`: everything the sample server can do (read, search, `$everything`, create with
///   `If-None-Exist`, update, delete, transaction and batch Bundles), offset paging with a total;
/// - `minimal`: read and search, and plain creates (no conditional create, no Bundles, no
///   `$everything`), as several EHRs' write APIs are; search parameters it does not declare are
///   refused (400); pages capped at 20 entries, no total, opaque cursors in the next links, a
///   warning entry when `_count` was capped;
/// - `readonly`: read, search and `$everything`; every POST, PUT and DELETE is refused with 405.
/// Each profile's CapabilityStatement says exactly this.
enum ServerProfile: String, CaseIterable, Sendable {
    case full, minimal, readonly

    /// The largest page a minimal server serves, whatever `_count` asks.
    static let minimalPageSize = 20

    /// Types a minimal server does not have (it answers 404 for them, and does not list them).
    /// (DocumentReference and Binary it has: portals serve notes even where little else is offered.)
    private static let missingFromMinimal: Set<String> = ["Goal", "Location", "Device", "Provenance"]

    var resourceTypes: [String] {
        self == .minimal ? FHIRTypes.all.filter { !Self.missingFromMinimal.contains($0) } : FHIRTypes.all
    }

    /// The interactions declared on every resource type.
    var interactions: [String] {
        switch self {
        case .full: ["read", "vread", "search-type", "create", "update", "delete"]
        case .minimal: ["read", "search-type", "create"]
        case .readonly: ["read", "search-type"]
        }
    }

    /// `rest.interaction`.
    var systemInteractions: [String] { self == .full ? ["transaction", "batch"] : [] }
    var conditionalCreate: Bool { self == .full }
    var everything: Bool { self != .minimal }
    var pagesByCursor: Bool { self == .minimal }

    /// The route as this profile answers it: what the profile does not support becomes the error a
    /// real server of its kind sends.
    func admit(_ route: FHIRRoute, request: HTTPRequest, segments: [String]) -> FHIRRoute {
        switch self {
        case .full:
            return route
        case .readonly:
            guard request.method == .GET || request.method == .HEAD else {
                return .failure(FHIRError(status: 405, code: "not-supported",
                                          diagnostics: "This server is read-only: \(request.method.rawValue) is not allowed"))
            }
            return route
        case .minimal:
            if let type = segments.first, type != "metadata", FHIRTypes.isKnown(type), !resourceTypes.contains(type) {
                return .failure(.notFound("Unknown resource type '\(type)'"))
            }
            if let operation = segments.last, operation.hasPrefix("$") {
                return .failure(FHIRError(status: 400, code: "not-supported", diagnostics: "Unknown operation \(operation)"))
            }
            switch route {
            case .bundle:
                return .failure(FHIRError(status: 400, code: "not-supported", diagnostics: "transaction and batch Bundles are not supported"))
            case .update, .delete:
                return .failure(FHIRError(status: 405, code: "not-supported",
                                          diagnostics: "\(request.method.rawValue) is not supported (read, search and create only)"))
            case .vread:
                return .failure(FHIRError(status: 400, code: "not-supported", diagnostics: "Versions are not kept here"))
            case .failure(let error) where error.status == 404 && error.diagnostics.hasPrefix("No such FHIR URL"):
                return .failure(FHIRError(status: 400, code: "not-supported", diagnostics: error.diagnostics))
            default:
                return route
            }
        }
    }
}

/// The minimal profile's opaque paging: a next link carries only `_cursor=<token>`, and the token
/// stands for the search and where its next page starts, as real EHRs page.
final class SearchCursors: Sendable {
    struct Position: Sendable {
        let type: String
        let parameters: [(name: String, value: String)]
        let offset: Int
        let count: Int
    }

    /// Old cursors are forgotten past this many (a client holding one gets a 400, as when a
    /// real server's search expires).
    private static let limit = 100_000
    private let positions = LockedBox([String: Position]())

    func save(_ position: Position) -> String {
        let token = String(format: "%016llx%08x", UInt64.random(in: 0...UInt64.max), UInt32.random(in: 0...UInt32.max))
        positions.withLock { positions in
            if positions.count >= Self.limit { positions.removeAll() }
            positions[token] = position
        }
        return token
    }

    func position(_ token: String) -> Position? { positions.withLock { $0[token] } }
}
