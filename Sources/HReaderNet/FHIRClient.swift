import Foundation
import HReaderRecords

/// A FHIR R4 server (DESIGN.md §4): the CapabilityStatement read once per run and obeyed, Patient
/// search and read, a patient's record by `$everything` or per-type searches, paging by
/// `Bundle.link` `next` with loop guards, writes by transaction or batch Bundles, conditional or
/// plain creates. Every request goes through the host's serial client.
public struct FHIRClient: Sendable {
    public let base: URL
    let client: APIClient
    let auth: Authenticator?
    /// The CapabilityStatement of this run, shared by every copy of the client made with it.
    let capabilities: FHIRCapabilityCache
    /// Pages followed in one paging loop before it is declared runaway.
    public var maxPages = 2000
    /// `_count` asked of per-type searches; servers may cap it or ignore it (paging copes).
    static let searchCount = "100"

    /// The patient-compartment types searched one by one when `$everything` is not used: those
    /// hreader maps, and the common others it keeps as observation entries. With a
    /// CapabilityStatement only the types it lists are searched.
    public static let fallbackTypes = [
        "Observation", "Condition", "AllergyIntolerance", "MedicationRequest", "MedicationStatement", "Encounter",
        "Immunization", "Procedure", "DiagnosticReport",
        "CarePlan", "Goal", "ServiceRequest", "DocumentReference", "FamilyMemberHistory",
        "MedicationAdministration", "MedicationDispense", "CareTeam", "Coverage", "Claim", "ExplanationOfBenefit",
        "ImagingStudy", "Specimen", "QuestionnaireResponse", "Media", "NutritionOrder", "Device",
    ]

    public init(base: URL, auth: Authenticator? = nil, clients: APIClients = .shared, capabilities: FHIRCapabilityCache = FHIRCapabilityCache()) throws {
        self.base = try Origin.serviceBase(base)
        self.auth = auth
        self.client = try clients.client(for: self.base)
        self.capabilities = capabilities
    }

    // MARK: - The CapabilityStatement

    public func capability() async throws -> FHIRCapability {
        let response = try await get(url("metadata"))
        return try decode(response) { try FHIRCapability.parse($0, what: "the CapabilityStatement") }
    }

    /// The CapabilityStatement for this run (read once), or why there is none to go by. A refused
    /// credential (401, 403) and a network failure are errors: every later request would meet them.
    public func statement() async throws -> FHIRStatement {
        if let cached = capabilities.value { return cached }
        let statement: FHIRStatement
        do {
            statement = .declared(try await capability())
        } catch let NetError.status(code, _, _) where code != 403 {
            statement = .unreadable("\(code) \(NetError.reason(code))".trimmingCharacters(in: .whitespaces))
        } catch NetError.malformed {
            statement = .unreadable("not a CapabilityStatement")
        } catch NetError.unexpectedResponse {
            statement = .unreadable("not FHIR JSON")
        }
        capabilities.value = statement
        return statement
    }

    // MARK: - Reads

    /// Patient search (`family`, `given`, `birthdate`, `identifier`, `_count`), all pages.
    public func searchPatients(_ parameters: [(String, String)]) async throws -> MappedBatch {
        var set = FHIRResponseSet()
        try await collect(url("Patient", query: parameters), into: &set)
        return set.map()
    }

    /// `GET [base]/Patient/[id]`: one patient, mapped (a check that a token reaches its patient).
    public func readPatient(id: String) async throws -> MappedBatch {
        var set = FHIRResponseSet()
        try await collect(url("Patient/\(Self.escape(id))"), into: &set)
        return set.map()
    }

    /// One page of patients: a cheap check that search works with these credentials.
    public func searchPatientsPage(count: Int) async throws -> FHIRPageInfo {
        let response = try await get(url("Patient", query: [("_count", String(count))]))
        return try decode(response) { try FHIRResponseSet.inspect($0, what: "the Patient search") }
    }

    /// One patient's whole record, read the way the server says it can be:
    /// - a CapabilityStatement declaring `$everything`: `Patient/[id]/$everything` (and per-type
    ///   searches if it then answers that it does not support it after all);
    /// - one that does not: the Patient, and a search per listed patient-compartment type by the
    ///   parameter the statement declares (`patient`, else `subject`);
    /// - no readable statement: `$everything`, and on any 4xx (401 and 403 aside) or 501 the
    ///   per-type searches of `fallbackTypes`, passing over types the server answers with a 4xx.
    public func everything(patientID: String, progress: @Sendable (Int) -> Void = { _ in }) async throws -> FHIRPatientRecord {
        switch try await statement() {
        case .declared(let capability) where !capability.declaresEverything:
            var record = try await perTypeSearches(patientID: patientID, capability: capability, progress: progress)
            record.notes.insert("the server declares no Patient/$everything: per-type searches", at: 0)
            return record
        case .declared(let capability):
            do {
                return try await viaEverything(patientID: patientID, note: "read with Patient/$everything", progress: progress)
            } catch let NetError.status(code, _, detail) where Self.meansUnsupported(code, detail) {
                var record = try await perTypeSearches(patientID: patientID, capability: capability, progress: progress)
                record.strategy = .perTypeSearch(declared: false)
                record.notes.insert("the server declares Patient/$everything but answered \(code): per-type searches", at: 0)
                return record
            }
        case .unreadable(let why):
            do {
                return try await viaEverything(patientID: patientID, note: "no CapabilityStatement (\(why)); read with Patient/$everything",
                                               progress: progress)
            } catch let NetError.status(code, _, _) where Self.isClientError(code) || code == 501 {
                var record = try await perTypeSearches(patientID: patientID, capability: nil, progress: progress)
                record.notes.insert("no CapabilityStatement (\(why)); $everything failed (\(code)): per-type searches", at: 0)
                return record
            }
        }
    }

    private func viaEverything(patientID: String, note: String, progress: @Sendable (Int) -> Void) async throws -> FHIRPatientRecord {
        var set = FHIRResponseSet()
        try await collect(url("Patient/\(Self.escape(patientID))/$everything"), into: &set, progress: progress)
        let requests = [(request: "Patient/\(patientID)/$everything", resources: 0..<set.resourceCount)]
        return FHIRPatientRecord(set, patientID: patientID, base: base, requests: requests, strategy: .everything, notes: [note])
    }

    /// The Patient, then a search per patient-compartment type: those the statement lists, by the
    /// parameter it declares; without a statement all of `fallbackTypes` by `patient`, passing over
    /// the types the server answers with a 4xx (it has no such type, or no such search).
    private func perTypeSearches(patientID: String, capability: FHIRCapability?, progress: @Sendable (Int) -> Void) async throws -> FHIRPatientRecord {
        var set = FHIRResponseSet()
        try await collect(url("Patient/\(Self.escape(patientID))"), into: &set)
        var requests = [(request: "Patient/\(patientID)", resources: 0..<set.resourceCount)]
        var passedOver: [Int: [String]] = [:]
        var unsearchable: [String] = []
        for type in Self.fallbackTypes {
            var parameter = "patient"
            if let capability {
                guard capability.resources[type] != nil else { continue }
                guard let declared = capability.patientSearchParameter(for: type) else {
                    unsearchable.append(type)
                    continue
                }
                parameter = declared
            }
            do {
                let first = set.resourceCount
                try await collect(url(type, query: [(parameter, patientID), ("_count", Self.searchCount)]), into: &set, progress: progress)
                requests.append((request: "\(type)?\(parameter)=\(patientID)", resources: first..<set.resourceCount))
            } catch let NetError.status(code, _, _) where capability == nil && Self.isClientError(code) {
                passedOver[code, default: []].append(type)
            }
        }
        var notes: [String] = []
        if !unsearchable.isEmpty { notes.append("not searchable by patient, passed over: " + unsearchable.joined(separator: ", ")) }
        for code in passedOver.keys.sorted() {
            notes.append("passed over the types whose search answered \(code): " + passedOver[code]!.joined(separator: ", "))
        }
        return FHIRPatientRecord(set, patientID: patientID, base: base, requests: requests,
                                 strategy: .perTypeSearch(declared: capability != nil), notes: notes)
    }

    /// 404/405/501, or an OperationOutcome saying `not-supported`: the operation is missing, not failing.
    static func meansUnsupported(_ code: Int, _ detail: String?) -> Bool {
        [404, 405, 501].contains(code) || (code == 400 && (detail ?? "").contains("not-supported"))
    }

    /// A 4xx that says "not here" or "not like this" rather than "not you" (401, 403) or "not now" (429).
    public static func isClientError(_ code: Int) -> Bool {
        (400..<500).contains(code) && ![401, 403, 429].contains(code)
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
        try await postBundle(bundle, answer: "transaction")
    }

    /// `POST [base]` with a `batch` Bundle; returns the batch-response Bundle, whose entries each
    /// carry their own status (some may have failed while others were written).
    public func batch(_ bundle: Data) async throws -> Data {
        try await postBundle(bundle, answer: "batch")
    }

    private func postBundle(_ bundle: Data, answer kind: String) async throws -> Data {
        let request = HTTPRequest(method: "POST", url: base, headers: [
            "Accept": "application/fhir+json", "Content-Type": "application/fhir+json", "Prefer": "return=minimal",
        ], body: bundle)
        let response = try await client.send(request, auth: auth)
        try check(response)
        return try decode(response) { data in
            let info = try FHIRResponseSet.inspect(data, what: "the \(kind) response")
            guard info.resourceType == "Bundle" else { throw RecordsError.malformed("the \(kind) response is a \(info.resourceType), not a Bundle") }
            return data
        }
    }

    /// Which of `tokens` (`system|value`) a resource of `type` on the server already carries:
    /// `GET [base]/[type]?identifier=a|1,b|2,…` (OR), at most `chunk` tokens and about 2,000
    /// characters a request so URLs stay short, every page. Only identifiers the returned resources
    /// really carry count (a server that ignored the parameter and listed everything proves nothing).
    public func existingIdentifiers(type: String, among tokens: [String], chunk: Int = 40) async throws -> Set<String> {
        var found: Set<String> = []
        for part in Self.chunks(tokens, count: chunk, characters: 2000) {
            var set = FHIRResponseSet()
            let query = [("identifier", part.map(Self.escapeSearchToken).joined(separator: ",")), ("_count", String(part.count))]
            try await collect(url(type, query: query), into: &set)
            found.formUnion(set.identifierTokens(ofType: type).intersection(part))
        }
        return found
    }

    /// Consecutive groups of at most `count` items and (roughly) `characters` characters.
    static func chunks(_ tokens: [String], count: Int, characters: Int) -> [[String]] {
        var groups: [[String]] = []
        var current: [String] = []
        var length = 0
        for token in tokens {
            if !current.isEmpty, current.count >= count || length + token.utf8.count + 1 > characters {
                groups.append(current)
                current = []
                length = 0
            }
            current.append(token)
            length += token.utf8.count + 1
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }

    /// A token for an OR list: a comma or backslash inside system or value is escaped (FHIR search
    /// escaping), so only the list's own commas separate.
    static func escapeSearchToken(_ token: String) -> String {
        token.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ",", with: "\\,")
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

/// What `GET [base]/metadata` gave: a CapabilityStatement to go by, or why there is none (a 404,
/// an answer that is not a CapabilityStatement).
public enum FHIRStatement: Sendable, Equatable {
    case declared(FHIRCapability)
    case unreadable(String)
}

/// The CapabilityStatement as read once for a run (an import of many patients, an export): a
/// reference shared by the copies of a client, so `metadata` is asked once.
public final class FHIRCapabilityCache: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: FHIRStatement?

    public init() {}

    var value: FHIRStatement? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}

/// How a patient's record was read.
public enum FHIRFetchStrategy: Sendable, Equatable {
    case everything
    /// The Patient and a search per resource type; `declared`: chosen because the
    /// CapabilityStatement declares no `$everything`, else after `$everything` failed.
    case perTypeSearch(declared: Bool)
}

/// One patient's record as read from a FHIR server, with how it was read.
public struct FHIRPatientRecord: Sendable {
    public var batch: MappedBatch
    /// Resources read (OperationOutcome warnings not counted).
    public var resources: Int
    public var strategy: FHIRFetchStrategy
    /// One line each: how the record was read, types passed over, what the server warned about.
    public var notes: [String]

    /// Per request, the resources the server returned that were not about the patient asked for:
    /// left out of `batch`, never filed under anyone.
    public var rejected: [FHIRRejectedResources]

    public var usedFallback: Bool { strategy != .everything }

    /// `requests`: which resources of `set` each request read, so a server's fault is named by the
    /// request that showed it.
    init(_ set: FHIRResponseSet, patientID: String, base: URL, requests: [(request: String, resources: Range<Int>)],
         strategy: FHIRFetchStrategy, notes: [String]) {
        var set = set
        resources = set.resourceCount
        rejected = set.keepOnly(aboutPatient: FHIRPatientCheck(patientID: patientID, base: base.absoluteString), requests: requests)
        batch = set.map()
        self.strategy = strategy
        self.notes = notes + set.warnings.map { "the server said: \($0)" }
    }
}
