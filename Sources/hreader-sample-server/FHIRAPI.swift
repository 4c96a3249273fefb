import Foundation
import HReaderJSON
import NIOHTTP1

/// What a FHIR request asks for, decided before it runs so that fault modes can intercept
/// searches and $everything without re-parsing URLs.
enum FHIRRoute {
    case metadata
    case search(type: String, parameters: [(name: String, value: String)])
    case read(type: String, id: String)
    case vread(type: String, id: String, version: String)
    case everything(patientID: String)
    case create(type: String)
    case update(type: String, id: String)
    case delete(type: String, id: String)
    case bundle  // transaction or batch
    case failure(FHIRError)

    /// Searches and $everything: the requests fault modes such as `huge` or `stall` act on.
    var isListing: Bool {
        switch self {
        case .search, .everything: return true
        default: return false
        }
    }
}

/// Where a FHIR base lives and what its CapabilityStatement says about security.
struct FHIRBase {
    /// Absolute, without a trailing slash: `http://127.0.0.1:PORT/secure/fhir`.
    let url: String
    let origin: String
    let oauthSecured: Bool
    /// With --smart: the CapabilityStatement also names the authorize endpoint.
    var smart = false
}

/// How search pages link: `loop` is the fault mode whose page 2 links back to page 1.
enum Paging {
    case normal
    case loop
}

struct FHIRAPI: Sendable {
    let store: FHIRStore
    var profile: ServerProfile = .full
    let cursors = SearchCursors()
    /// Binary ids that have already failed once.
    let failedOnce = LockedBox(Set<String>())
    static let defaultCount = 50
    static let maxCount = 1000

    // MARK: Routing

    /// The request's route as this server's profile answers it.
    func resolve(_ request: HTTPRequest, segments: [String]) -> FHIRRoute {
        profile.admit(Self.route(request, segments: segments), request: request, segments: segments)
    }

    static func route(_ request: HTTPRequest, segments: [String]) -> FHIRRoute {
        let method = request.method
        func notAllowed() -> FHIRRoute {
            .failure(FHIRError(status: 405, code: "not-supported", diagnostics: "\(method.rawValue) is not supported on this URL"))
        }
        guard let type = segments.first else {
            return method == .POST ? .bundle : notAllowed()
        }
        if type == "metadata", segments.count == 1 {
            return method == .GET ? .metadata : notAllowed()
        }
        guard FHIRTypes.isKnown(type) else {
            return .failure(.notFound("Unknown resource type '\(type)'"))
        }
        switch (segments.count, method) {
        case (1, .GET): return .search(type: type, parameters: request.query)
        case (1, .POST): return .create(type: type)
        case (1, _): return notAllowed()
        case (2, .POST) where segments[1] == "_search":
            // Search by POST: form parameters join the URL's.
            return .search(type: type, parameters: request.query + URLText.parseQuery(String(decoding: request.body, as: UTF8.self)))
        case (2, .GET): return .read(type: type, id: segments[1])
        case (2, .PUT): return .update(type: type, id: segments[1])
        case (2, .DELETE): return .delete(type: type, id: segments[1])
        case (2, _): return notAllowed()
        case (3, .GET) where segments[2] == "$everything", (3, .POST) where segments[2] == "$everything":
            guard type == "Patient" else {
                return .failure(FHIRError(status: 404, code: "not-supported", diagnostics: "$everything is only supported on Patient"))
            }
            return .everything(patientID: segments[1])
        case (4, .GET) where segments[2] == "_history":
            return .vread(type: type, id: segments[1], version: segments[3])
        default:
            return .failure(.notFound("No such FHIR URL: \(request.path)"))
        }
    }

    // MARK: Running

    func execute(_ route: FHIRRoute, request: HTTPRequest, base: FHIRBase, paging: Paging = .normal) -> HTTPResponse {
        let prefer = FHIRResponse.Return(prefer: request.header("Prefer"))
        do throws(FHIRError) {
            switch route {
            case .metadata:
                return FHIRResponse.json(CapabilityStatement.make(base: base, profile: profile))
            case .search(let type, let parameters) where profile.pagesByCursor:
                return try cursorSearch(type: type, parameters: parameters, base: base)
            case .search(let type, let parameters):
                return search(type: type, parameters: parameters, request: request, base: base, paging: paging)
            case .read(let type, let id):
                if type == "Binary" { return try binary(id: id, request: request) }
                return try read(type: type, id: id)
            case .vread(let type, let id, let version):
                let response = try read(type: type, id: id)
                guard response.headers.first(name: "ETag") == "W/\"\(version)\"" else {
                    throw FHIRError.notFound("\(type)/\(id) version \(version) is not kept (only the current version is)")
                }
                return response
            case .everything(let patientID):
                return try everything(patientID: patientID, request: request, base: base, paging: paging)
            case .create(let type):
                return try create(type: type, request: request, base: base, prefer: prefer)
            case .update(let type, let id):
                return try update(type: type, id: id, request: request, base: base, prefer: prefer)
            case .delete(let type, let id):
                // Deleting twice is not an error: 204 both times.
                _ = try store.withState { (state) throws(FHIRError) -> Bool in try state.delete(type: type, id: id) }
                return HTTPResponse(status: .noContent)
            case .bundle:
                return FHIRTransaction(store: store).run(request: request, base: base, prefer: prefer)
            case .failure(let error):
                throw error
            }
        } catch {
            return FHIRResponse.outcome(error)
        }
    }

    /// A `Binary` as its raw bytes with its own content type, unless the client asks for FHIR JSON
    /// (then the resource, base64 `data`). `SyntheticDocuments.failingOnce` ids answer 500 the first time.
    private func binary(id: String, request: HTTPRequest) throws(FHIRError) -> HTTPResponse {
        if SyntheticDocuments.failingOnce.contains(id), failedOnce.withLock({ $0.insert(id).inserted }) {
            throw FHIRError(status: 500, code: "exception", diagnostics: "Binary/\(id) could not be read this time; try again")
        }
        let response = try read(type: "Binary", id: id)
        if let etag = response.headers.first(name: "ETag"), request.header("If-None-Match") == etag {
            return HTTPResponse(status: .notModified, headers: [("ETag", etag)])
        }
        let accept = request.header("Accept")?.lowercased() ?? ""
        let preferred = accept.split(separator: ",").first.map { $0.split(separator: ";")[0].trimmingCharacters(in: .whitespaces) } ?? ""
        if preferred.contains("json") || accept.isEmpty { return response }
        guard case .found(let resource) = store.reading({ $0.read(type: "Binary", id: id) }),
              let data = resource.json["data"]?.string, let bytes = Data(base64Encoded: data) else { return response }
        return HTTPResponse(status: .ok, contentType: resource.json["contentType"]?.string ?? "application/octet-stream",
                            body: Array(bytes), headers: [("ETag", resource.etag)])
    }

    private func read(type: String, id: String) throws(FHIRError) -> HTTPResponse {
        switch store.reading({ $0.read(type: type, id: id) }) {
        case .found(let resource):
            return FHIRResponse.json(resource.json, headers: [("ETag", resource.etag)])
        case .gone:
            throw FHIRError(status: 410, code: "deleted", diagnostics: "\(type)/\(id) has been deleted")
        case .notFound:
            throw FHIRError.notFound("\(type)/\(id) is not known")
        }
    }

    private func search(
        type: String, parameters: [(name: String, value: String)], request: HTTPRequest, base: FHIRBase, paging: Paging
    ) -> HTTPResponse {
        let window = PageWindow(parameters: parameters, paging: paging)
        let page = store.reading { $0.search(type: type, parameters: parameters, offset: window.offset, count: window.count) }
        let listing = "\(base.url)/\(type)"
        let query = request.method == .GET ? (request.rawQuery ?? "") : Self.encode(parameters)
        return FHIRResponse.json(Self.searchset(page, base: base, listing: listing, query: query, window: window))
    }

    /// The minimal profile's search: at most 20 entries a page, no total, the next page behind an
    /// opaque cursor, and a warning entry (search.mode outcome) when `_count` asked for more.
    private func cursorSearch(type: String, parameters: [(name: String, value: String)], base: FHIRBase) throws(FHIRError) -> HTTPResponse {
        let position: SearchCursors.Position
        var capped: Int?
        if let token = parameters.last(where: { $0.name == "_cursor" })?.value {
            guard let saved = cursors.position(token), saved.type == type else {
                throw FHIRError.invalid("Unknown or expired _cursor '\(token)'; run the search again")
            }
            position = saved
        } else {
            // As strict servers do: a parameter it does not declare is an error, not ignored.
            let declared = Set(CapabilityStatement.searchParameters(type, profile: profile).map(\.0)).union(["_count"])
            if let unknown = parameters.first(where: { !declared.contains(String($0.name.prefix { $0 != ":" })) }) {
                throw FHIRError.invalid("Unknown search parameter '\(unknown.name)' for \(type)")
            }
            let requested = parameters.last(where: { $0.name == "_count" }).flatMap { Int($0.value) }
            if let requested, requested > ServerProfile.minimalPageSize { capped = requested }
            let count = min(max(requested ?? ServerProfile.minimalPageSize, 0), ServerProfile.minimalPageSize)
            let query = parameters.filter { $0.name != "_count" }
            position = SearchCursors.Position(type: type, parameters: query, offset: 0, count: count)
        }
        let page = store.reading { $0.search(type: type, parameters: position.parameters, offset: position.offset, count: position.count) }
        let listing = "\(base.url)/\(type)"
        var entries: [JSONValue] = []
        if let capped {
            let warning = FHIRResponse.operationOutcome(
                severity: "warning", code: "processing",
                diagnostics: "_count=\(capped) is more than this server serves; pages hold \(ServerProfile.minimalPageSize) entries")
            entries.append(["resource": warning, "search": ["mode": "outcome"]])
        }
        entries += page.resources.map { resource in
            ["fullUrl": .string("\(base.url)/\(resource.type)/\(resource.id)"), "resource": resource.json, "search": ["mode": "match"]]
        }
        var links: [JSONValue] = [["relation": "self", "url": .string(position.parameters.isEmpty ? listing : "\(listing)?\(Self.encode(position.parameters))")]]
        if position.count > 0, position.offset + position.count < page.total {
            let next = SearchCursors.Position(type: type, parameters: position.parameters, offset: position.offset + position.count,
                                              count: position.count)
            links.append(["relation": "next", "url": .string("\(listing)?_cursor=\(cursors.save(next))")])
        }
        return FHIRResponse.json([
            "resourceType": "Bundle",
            "id": .string(FHIRResponse.newBundleID()),
            "meta": ["lastUpdated": .string(Clock.instant())],
            "type": "searchset",
            "link": .array(links),
            "entry": .array(entries),
        ])
    }

    private func everything(patientID: String, request: HTTPRequest, base: FHIRBase, paging: Paging) throws(FHIRError) -> HTTPResponse {
        let window = PageWindow(parameters: request.query, paging: paging)
        guard let page = store.reading({ $0.everything(patientID: patientID, offset: window.offset, count: window.count) }) else {
            throw FHIRError.notFound("Patient/\(patientID) is not known")
        }
        let listing = "\(base.url)/Patient/\(URLText.encodeComponent(patientID))/$everything"
        return FHIRResponse.json(Self.searchset(page, base: base, listing: listing, query: request.rawQuery ?? "", window: window))
    }

    private func create(type: String, request: HTTPRequest, base: FHIRBase, prefer: FHIRResponse.Return) throws(FHIRError) -> HTTPResponse {
        let json = try Self.parseResource(request.body, type: type)
        // A server without conditional create ignores the header and creates: that is how such
        // servers end up with duplicates.
        let condition = profile.conditionalCreate ? request.header("If-None-Exist").map { URLText.parseQuery($0) } : nil
        let (resource, created) = try store.withState { (state) throws(FHIRError) -> (StoredResource, Bool) in
            if let condition {
                if let existing = try Self.conditionalMatch(state, type: type, condition: condition) { return (existing, false) }
            }
            let id = state.newID(type: type)
            return (state.put(type: type, id: id, json: json, lastUpdated: Clock.instant()).resource, true)
        }
        return FHIRResponse.written(resource, status: created ? .created : .ok, base: base.url, prefer: prefer)
    }

    private func update(type: String, id: String, request: HTTPRequest, base: FHIRBase, prefer: FHIRResponse.Return) throws(FHIRError) -> HTTPResponse {
        let json = try Self.parseResource(request.body, type: type)
        if let bodyID = json["id"]?.string, bodyID != id {
            throw FHIRError.invalid("The resource's id '\(bodyID)' does not match the URL's '\(id)'")
        }
        guard Self.isValidID(id) else { throw FHIRError.invalid("'\(id)' is not a valid FHIR id") }
        let (resource, created) = try store.withState { state in state.put(type: type, id: id, json: json, lastUpdated: Clock.instant()) }
        return FHIRResponse.written(resource, status: created ? .created : .ok, base: base.url, prefer: prefer)
    }

    // MARK: Shared with transactions

    /// A JSON object whose resourceType is `type`.
    static func parseResource(_ body: [UInt8], type: String) throws(FHIRError) -> JSONValue {
        let json: JSONValue
        do {
            json = try JSONParser.parse(body)
        } catch {
            throw FHIRError.invalid("The body is not valid JSON: \(error)")
        }
        return try checkResource(json, type: type)
    }

    static func checkResource(_ json: JSONValue, type: String) throws(FHIRError) -> JSONValue {
        guard json.object != nil else { throw FHIRError.invalid("The body is not a JSON object") }
        guard let resourceType = json["resourceType"]?.string else { throw FHIRError.invalid("The resource has no resourceType") }
        guard resourceType == type else {
            throw FHIRError.invalid("resourceType '\(resourceType)' does not match the URL's type '\(type)'")
        }
        return json
    }

    /// `If-None-Exist`: the one existing match, nil for none, 412 for several.
    static func conditionalMatch(_ state: FHIRStoreState, type: String, condition: [(name: String, value: String)]) throws(FHIRError) -> StoredResource? {
        guard !condition.isEmpty else { throw FHIRError.invalid("If-None-Exist has no search parameters") }
        let matches = state.search(type: type, parameters: condition)
        if matches.count > 1 {
            throw FHIRError(status: 412, code: "duplicate", diagnostics: "If-None-Exist matched \(matches.count) \(type) resources")
        }
        return matches.first
    }

    /// FHIR ids: 1 to 64 of `A-Z a-z 0-9 - .`.
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }
    }

    static func encode(_ parameters: [(name: String, value: String)]) -> String {
        parameters.map { "\(URLText.encodeComponent($0.name))=\(URLText.encodeComponent($0.value))" }.joined(separator: "&")
    }

    // MARK: Bundles

    static func searchset(_ page: SearchPage, base: FHIRBase, listing: String, query: String, window: PageWindow) -> JSONValue {
        let entries: [JSONValue] = page.resources.map { resource in
            [
                "fullUrl": .string("\(base.url)/\(resource.type)/\(resource.id)"),
                "resource": resource.json,
                "search": ["mode": "match"],
            ]
        }
        var links: [JSONValue] = [["relation": "self", "url": .string(query.isEmpty ? listing : "\(listing)?\(query)")]]
        if let next = window.nextOffset(total: page.total) {
            links.append(["relation": "next", "url": .string("\(listing)?\(replacingOffset(in: query, with: next))")])
        }
        return [
            "resourceType": "Bundle",
            "id": .string(FHIRResponse.newBundleID()),
            "meta": ["lastUpdated": .string(Clock.instant())],
            "type": "searchset",
            "total": .int(page.total),
            "link": .array(links),
            "entry": .array(entries),
        ]
    }

    /// The same query (as sent, still encoded) with `_offset` set.
    static func replacingOffset(in query: String, with offset: Int) -> String {
        var parts = query.split(separator: "&").filter { part in
            let name = part.split(separator: "=", maxSplits: 1).first.map { URLText.decode($0, plusAsSpace: true) }
            return name != "_offset"
        }.map(String.init)
        parts.append("_offset=\(offset)")
        return parts.joined(separator: "&")
    }
}

/// `_count` and `_offset`, and where the next page starts.
struct PageWindow {
    let offset: Int
    let count: Int
    let paging: Paging

    init(parameters: [(name: String, value: String)], paging: Paging) {
        let requested = parameters.last(where: { $0.name == "_count" }).flatMap { Int($0.value) }
        var count = requested.map { min(max($0, 0), FHIRAPI.maxCount) } ?? FHIRAPI.defaultCount
        // The loop fault pages by two so that it loops at the default page size too.
        if paging == .loop, count > 2 { count = 2 }
        self.count = count
        offset = max(0, parameters.last(where: { $0.name == "_offset" }).flatMap { Int($0.value) } ?? 0)
        self.paging = paging
    }

    func nextOffset(total: Int) -> Int? {
        guard count > 0 else { return nil }
        switch paging {
        case .normal:
            return offset + count < total ? offset + count : nil
        case .loop:
            // Page 1 → page 2 → page 1 … (any later page also leads back to the first).
            guard total > count else { return nil }
            return offset == 0 ? count : 0
        }
    }
}
