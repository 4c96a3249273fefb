import Foundation
import HReaderRecords

/// A FHIR R4 server (DESIGN.md §4): capability check, Patient search and read, `$everything` with a
/// fallback to per-type searches, paging by `Bundle.link` `next` with loop guards, writes with
/// conditional create and transactions. Every request goes through the host's serial client.
public struct FHIRClient: Sendable {
    public let base: URL
    let client: APIClient
    let auth: Authenticator?
    /// Pages followed in one paging loop before it is declared runaway.
    public var maxPages = 2000

    /// The resource types searched one by one when `$everything` is not supported: those hreader
    /// maps, and the common patient-compartment types it keeps as observation entries. A type the
    /// server does not have (404, or 400 for an unknown search) is passed over.
    public static let fallbackTypes = [
        "Observation", "Condition", "AllergyIntolerance", "MedicationRequest", "MedicationStatement", "Encounter",
        "Immunization", "Procedure", "DiagnosticReport",
        "CarePlan", "Goal", "ServiceRequest", "DocumentReference", "FamilyMemberHistory",
    ]

    public init(base: URL, auth: Authenticator? = nil, clients: APIClients = .shared) throws {
        self.base = try Origin.serviceBase(base)
        self.auth = auth
        self.client = try clients.client(for: self.base)
    }

    // MARK: - Reads

    public func capability() async throws -> FHIRCapability {
        let response = try await get(url("metadata"))
        return try decode(response) { try FHIRCapability.parse($0, what: "the CapabilityStatement") }
    }

    /// Patient search (`family`, `given`, `birthdate`, `identifier`, `_count`), all pages.
    public func searchPatients(_ parameters: [(String, String)]) async throws -> MappedBatch {
        var set = FHIRResponseSet()
        try await collect(url("Patient", query: parameters), into: &set)
        return set.map()
    }

    /// One page of patients: a cheap check that search works with these credentials.
    public func searchPatientsPage(count: Int) async throws -> FHIRPageInfo {
        let response = try await get(url("Patient", query: [("_count", String(count))]))
        return try decode(response) { try FHIRResponseSet.inspect($0, what: "the Patient search") }
    }

    /// One patient's whole record: `Patient/[id]/$everything`, or when the server does not support it
    /// the Patient and a search per resource type (`?patient=[id]`).
    public func everything(patientID: String, progress: @Sendable (Int) -> Void = { _ in }) async throws -> (batch: MappedBatch, resources: Int, usedFallback: Bool) {
        var set = FHIRResponseSet()
        do {
            try await collect(url("Patient/\(Self.escape(patientID))/$everything"), into: &set, progress: progress)
            return (set.map(), set.resourceCount, false)
        } catch let NetError.status(code, _, detail) where Self.meansUnsupported(code, detail) {
            set = FHIRResponseSet()
            try await collect(url("Patient/\(Self.escape(patientID))"), into: &set)
            for type in Self.fallbackTypes {
                do {
                    try await collect(url(type, query: [("patient", patientID)]), into: &set, progress: progress)
                } catch let NetError.status(code, _, _) where code == 404 || code == 400 {
                    continue   // a server without this resource type
                }
            }
            return (set.map(), set.resourceCount, true)
        }
    }

    /// 404/405/501, or an OperationOutcome saying `not-supported`: the operation is missing, not failing.
    static func meansUnsupported(_ code: Int, _ detail: String?) -> Bool {
        [404, 405, 501].contains(code) || (code == 400 && (detail ?? "").contains("not-supported"))
    }

    // MARK: - Writes

    public struct WriteResult: Sendable {
        public var status: Int
        public var location: String?
        public var body: Data
        public var created: Bool { status == 201 }
    }

    /// `POST [base]/[type]` with `Prefer: return=representation`; with `ifNoneExist`
    /// (`identifier=system|value`) a conditional create that the server answers 200 when it exists.
    public func create(type: String, resource: Data, ifNoneExist: String? = nil) async throws -> WriteResult {
        var request = HTTPRequest(method: "POST", url: url(type), headers: [
            "Accept": "application/fhir+json", "Content-Type": "application/fhir+json", "Prefer": "return=representation",
        ], body: resource)
        if let ifNoneExist { request.setHeader("If-None-Exist", ifNoneExist) }
        let response = try await client.send(request, auth: auth)
        try check(response)
        return WriteResult(status: response.status, location: response.header("location"), body: response.body)
    }

    /// `POST [base]` with a `transaction` Bundle; returns the transaction-response Bundle.
    public func transaction(_ bundle: Data) async throws -> Data {
        let request = HTTPRequest(method: "POST", url: base, headers: [
            "Accept": "application/fhir+json", "Content-Type": "application/fhir+json", "Prefer": "return=minimal",
        ], body: bundle)
        let response = try await client.send(request, auth: auth)
        try check(response)
        return try decode(response) { data in
            let info = try FHIRResponseSet.inspect(data, what: "the transaction response")
            guard info.resourceType == "Bundle" else { throw RecordsError.malformed("the transaction response is a \(info.resourceType), not a Bundle") }
            return data
        }
    }

    // MARK: - Plumbing

    func url(_ path: String, query: [(String, String)] = []) -> URL {
        var text = base.absoluteString + "/" + path
        if !query.isEmpty {
            text += "?" + query.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&")
        }
        return URL(string: text)!
    }

    static func escape(_ text: String) -> String { Authenticator.formEncode(text) }

    func get(_ url: URL) async throws -> HTTPResponse {
        let response = try await client.send(HTTPRequest(url: url, headers: ["Accept": "application/fhir+json"]), auth: auth)
        try check(response)
        return response
    }

    /// Follows `next` links from `first`, adding every page to `set`. Guards: a link seen before, a
    /// link to another server (the credential must not follow it), more than `maxPages` pages.
    func collect(_ first: URL, into set: inout FHIRResponseSet, progress: @Sendable (Int) -> Void = { _ in }) async throws {
        var next: URL? = first
        var seen: Set<String> = []
        while let url = next {
            guard seen.insert(Self.pageKey(url)).inserted else {
                throw NetError.pagingLoop(url: first.redactedForDisplay, reason: "the next link returns to a page already read (\(url.redactedForDisplay))")
            }
            guard seen.count <= maxPages else {
                throw NetError.pagingLoop(url: first.redactedForDisplay, reason: "more than \(maxPages) pages")
            }
            let response = try await get(url)
            let info = try decode(response) { try set.add($0, what: "page \(seen.count) of \(first.path)") }
            if info.resourceType == "OperationOutcome" {
                throw NetError.unexpectedResponse(url: url.redactedForDisplay, reason: "the server sent an OperationOutcome: \(info.outcome ?? "no details")")
            }
            progress(set.resourceCount)
            guard let link = info.next else { return }
            guard let nextURL = URL(string: link, relativeTo: url)?.absoluteURL, Origin(nextURL) == Origin(base) else {
                throw NetError.unexpectedResponse(url: url.redactedForDisplay, reason: "the next link points to another server; refusing to follow it")
            }
            next = nextURL
        }
    }

    /// Query items in order, without the access token, so the same page is recognised.
    static func pageKey(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        parts.queryItems = parts.queryItems?.filter { $0.name != "access_token" }.sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
        parts.fragment = nil
        return parts.string ?? url.absoluteString
    }

    /// Turns error statuses into errors, reading an OperationOutcome for the reason.
    func check(_ response: HTTPResponse) throws {
        let display = response.url.redactedForDisplay
        if response.isSuccess {
            if let type = response.mediaType, type.contains("html") {
                throw NetError.unexpectedResponse(url: display, reason: "an HTML page (\(type)), not FHIR JSON; is this the server's FHIR base URL, and does it want a login?")
            }
            return
        }
        let detail = (try? FHIRResponseSet.inspect(response.body, what: "error"))?.outcome
        if response.status == 401 {
            throw NetError.unauthorized(url: display, detail: detail ?? Self.bearerError(response))
        }
        throw NetError.status(code: response.status, url: display, detail: detail.map { $0 } ?? Self.shortText(response))
    }

    func decode<T>(_ response: HTTPResponse, _ body: (Data) throws -> T) throws -> T {
        do {
            return try body(response.body)
        } catch let error as RecordsError {
            throw NetError.malformed(url: response.url.redactedForDisplay, reason: error.description)
        }
    }

    /// `WWW-Authenticate: Bearer error="invalid_token", error_description="…"`.
    static func bearerError(_ response: HTTPResponse) -> String? {
        guard let header = response.header("www-authenticate") else { return nil }
        for key in ["error_description", "error"] {
            if let range = header.range(of: "\(key)=\"") {
                let rest = header[range.upperBound...]
                if let end = rest.firstIndex(of: "\"") { return String(rest[..<end]) }
            }
        }
        return nil
    }

    /// A short plain-text error body, for servers that do not send an OperationOutcome.
    static func shortText(_ response: HTTPResponse) -> String? {
        guard let type = response.mediaType, type.hasPrefix("text/plain"),
              let text = String(data: response.body.prefix(200), encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
              !text.isEmpty else { return nil }
        return text.replacingOccurrences(of: "\n", with: " ")
    }
}
