import HReaderJSON
import NIOHTTP1

/// `/faults/<mode>/fhir/...` and `/faults/<mode>/rhex/...` (with --faults): the normal bases,
/// misbehaving in one way each, so a client's handling of bad servers can be tested.
enum FaultMode: String, CaseIterable, Sendable {
    case invalidJSON = "invalid-json"
    case html
    case huge
    case hugeLength = "huge-length"
    case loop
    case tooManyRequests = "429"
    case unavailable = "503"
    case failOnce = "500-once"
    case stall
    case redirect
    case sameOriginRedirect = "same-origin-redirect"
    /// Like `redirect`, for reads of a `Binary` only (an attachment's bytes); everything else answers
    /// as the normal base does. `--redirect-target /fhir` keeps the hop on this origin, out of the base.
    case redirectBinary = "redirect-binary"
    case outcome
    case noEverything = "no-everything"
    /// No CapabilityStatement (404), `$everything` refused with a plain 400, and one type's search
    /// refused too: a server a client can only find out about by trying.
    case noMetadata = "no-metadata"
    /// Like a small server seen in the wild: no CapabilityStatement (404), no `$everything` (404), and
    /// searches that honour only `_id`, so `Observation?patient=A` lists every patient's Observations.
    /// For RHEx, a record's document answers with the next patient's record.
    case ignorePatientSearch = "ignore-patient-search"
    /// Answers a read of `Patient/<id>` (and its `$everything`) with another patient: the first
    /// Patient of the server whose id is not `<id>`.
    case otherPatient = "other-patient"
    /// Declares `batch` and no `transaction` (a transaction answers 400); in a batch, an Observation
    /// whose `code.text` is "refused" fails on its own with 422 while the other entries are written.
    case batchOnly = "batch-only"
    /// Declares neither `transaction` nor `batch` (Bundles answer 400), only conditional create.
    case noBundles = "no-bundles"
}

final class Faults: Sendable {
    private struct Seen {
        var throttled: Set<String> = []  // path+query already answered 429
        var failed: Set<String> = []  // patients / records already answered 500
    }

    /// How long a stalled request holds its connection.
    static let stallSeconds: Int64 = 300
    /// About 12 MB of text in the huge modes.
    static let hugeBytes = 12 << 20
    private static let chunkBytes = 64 << 10

    private let seen = LockedBox(Seen())
    private let redirectTarget: String?

    init(redirectTarget: String?) { self.redirectTarget = redirectTarget }

    // MARK: FHIR

    func fhir(_ mode: FaultMode, request: HTTPRequest, segments: [String], base: FHIRBase, api: FHIRAPI) -> HTTPResponse {
        if let response = common(mode, request: request, kind: "fhir", secureBase: "/secure/fhir") { return response }
        let route = api.resolve(request, segments: segments)
        switch mode {
        case .invalidJSON where route.isListing:
            let truncated = #"{"resourceType":"Bundle","type":"searchset","entry":[{"resource":{"resourceType":"Pat"#
            return HTTPResponse(status: .ok, contentType: FHIRResponse.contentType, text: truncated)
        case .huge where route.isListing, .hugeLength where route.isListing:
            return hugeBundle(route: route, base: base, api: api, withLength: mode == .hugeLength)
        case .stall where route.isListing:
            return HTTPResponse(status: .ok, body: .never(holdSeconds: Self.stallSeconds))
        case .redirectBinary:
            if case .read(type: "Binary", _) = route { return redirected(request, kind: "fhir", mode: mode) }
        case .loop:
            return api.execute(route, request: request, base: base, paging: .loop)
        case .failOnce:
            if case .everything(let patient) = route, firstTime(failed: "fhir:\(patient)") {
                return FHIRResponse.outcome(FHIRError(status: 500, code: "exception", diagnostics: "simulated failure"))
            }
        case .outcome:
            if case .everything = route {
                return FHIRResponse.outcome(FHIRError(status: 400, code: "too-costly", diagnostics: "Patient compartment is too large for $everything"))
            }
        case .noEverything:
            if case .everything = route {
                return FHIRResponse.outcome(FHIRError(status: 404, code: "not-supported", diagnostics: "Operation $everything not supported"))
            }
        case .batchOnly:
            switch route {
            case .metadata:
                return FHIRResponse.json(CapabilityStatement.make(base: base, profile: api.profile, systemInteractions: ["batch"]))
            case .bundle:
                return batchOnly(request: request, base: base, api: api)
            default:
                break
            }
        case .noBundles:
            switch route {
            case .metadata:
                return FHIRResponse.json(CapabilityStatement.make(base: base, profile: api.profile, systemInteractions: []))
            case .bundle:
                return FHIRResponse.outcome(FHIRError(status: 400, code: "not-supported", diagnostics: "Bundles are not supported here"))
            default:
                break
            }
        case .ignorePatientSearch:
            switch route {
            case .metadata:
                return FHIRResponse.outcome(.notFound("No CapabilityStatement here"))
            case .everything:
                return FHIRResponse.outcome(.notFound("Unknown operation: $everything"))
            case let .search(type, parameters):
                let honoured = parameters.filter { !["patient", "subject"].contains($0.name) }
                return api.execute(.search(type: type, parameters: honoured), request: request, base: base)
            default:
                break
            }
        case .otherPatient:
            let patientID: String
            switch route {
            case .read(type: "Patient", let id), .everything(let id): patientID = id
            default: return api.execute(route, request: request, base: base)
            }
            let other = api.store.reading { $0.search(type: "Patient", parameters: []) }.first { $0.id != patientID }
            guard let other else { break }
            if case .everything = route { return api.execute(.everything(patientID: other.id), request: request, base: base) }
            return FHIRResponse.json(other.json)
        case .noMetadata:
            switch route {
            case .metadata:
                return FHIRResponse.outcome(.notFound("No CapabilityStatement here"))
            case .everything:
                return FHIRResponse.outcome(.invalid("Unknown operation: $everything"))
            case .search(type: "DocumentReference", _):
                return FHIRResponse.outcome(.invalid("Unknown search parameter 'patient' for DocumentReference"))
            default:
                break
            }
        default:
            break
        }
        return api.execute(route, request: request, base: base)
    }

    private func batchOnly(request: HTTPRequest, base: FHIRBase, api: FHIRAPI) -> HTTPResponse {
        if (try? JSONParser.parse(request.body))?["type"]?.string == "transaction" {
            return FHIRResponse.outcome(FHIRError(status: 400, code: "not-supported", diagnostics: "transaction Bundles are not supported; use batch"))
        }
        let refusing = FHIRTransaction(store: api.store) { entry in
            guard entry["resource"]?["code"]?["text"]?.string == "refused" else { return nil }
            return FHIRError(status: 422, code: "business-rule", diagnostics: "Observation refused (simulated)")
        }
        return refusing.run(request: request, base: base, prefer: FHIRResponse.Return(prefer: request.header("Prefer")))
    }

    // MARK: RHEx

    func rhex(_ mode: FaultMode, request: HTTPRequest, segments: [String], base: String, api: RHExAPI, authorize: () -> HTTPResponse?) -> HTTPResponse {
        if let response = common(mode, request: request, kind: "rhex", secureBase: "/rhex") { return response }
        if let denied = authorize() { return denied }
        let route = RHExAPI.route(request, segments: segments)
        let isListing: Bool
        switch route {
        case .feed, .document: isListing = true
        default: isListing = false
        }
        switch (mode, route) {
        case (.invalidJSON, .document(let id)):
            guard let record = api.store.record(id) else { break }
            return HTTPResponse(status: .ok, contentType: "application/json", body: Array(record.bytes.prefix(max(1, record.bytes.count / 2))))
        case (.huge, .document(let id)), (.hugeLength, .document(let id)):
            guard let record = api.store.record(id) else { break }
            return hugeRecord(record, withLength: mode == .hugeLength)
        case (.stall, _) where isListing:
            return HTTPResponse(status: .ok, body: .never(holdSeconds: Self.stallSeconds))
        case (.ignorePatientSearch, .document(let id)):
            // Someone else's record under this id: the next record of the feed, or the first.
            let records = api.store.records
            guard let at = records.firstIndex(where: { $0.id == id }), records.count > 1 else { break }
            return HTTPResponse(status: .ok, contentType: "application/json", body: records[(at + 1) % records.count].bytes)
        case (.failOnce, .document(let id)):
            if api.store.record(id) != nil, firstTime(failed: "rhex:\(id)") {
                return RHExAPI.error(.internalServerError, "server_error", "simulated failure")
            }
        default:
            break
        }
        return api.execute(route, base: base)
    }

    // MARK: Modes that answer every request the same way

    private func common(_ mode: FaultMode, request: HTTPRequest, kind: String, secureBase: String) -> HTTPResponse? {
        let (rest, query) = Self.rest(of: request, kind: kind, mode: mode)
        switch mode {
        case .html:
            return HTTPResponse(status: .ok, contentType: "text/html; charset=utf-8", text: "<html><body><h1>Please sign in</h1></body></html>")
        case .unavailable:
            return error(kind, 503, "transient", "Service temporarily unavailable (simulated)", headers: [("Retry-After", "1")])
        case .tooManyRequests:
            let isFirst = seen.withLock { $0.throttled.insert(request.uri).inserted }
            return isFirst ? error(kind, 429, "throttled", "Too many requests (simulated)", headers: [("Retry-After", "1")]) : nil
        case .redirect:
            // Another origin (usually): a client must not send this server's credentials there.
            return redirected(request, kind: kind, mode: mode)
        case .sameOriginRedirect:
            return HTTPResponse(status: .temporaryRedirect, headers: [("Location", request.origin + secureBase + rest + query)])
        default:
            return nil
        }
    }

    /// 302 to `--redirect-target` (else this origin's normal base) with the rest of the path and the query.
    private func redirected(_ request: HTTPRequest, kind: String, mode: FaultMode) -> HTTPResponse {
        let (rest, query) = Self.rest(of: request, kind: kind, mode: mode)
        let target = redirectTarget ?? "\(request.origin)/\(kind)"
        return HTTPResponse(status: .found, headers: [("Location", target + rest + query)])
    }

    /// The path after `/faults/<mode>/<kind>`, and the query with its `?`.
    private static func rest(of request: HTTPRequest, kind: String, mode: FaultMode) -> (path: String, query: String) {
        let prefix = "/faults/\(mode.rawValue)/\(kind)"
        return (request.path.hasPrefix(prefix) ? String(request.path.dropFirst(prefix.count)) : "", request.rawQuery.map { "?" + $0 } ?? "")
    }

    private func error(_ kind: String, _ status: Int, _ code: String, _ text: String, headers: [(String, String)]) -> HTTPResponse {
        if kind == "fhir" { return FHIRResponse.outcome(FHIRError(status: status, code: code, diagnostics: text), headers: headers) }
        return RHExAPI.error(HTTPResponseStatus(statusCode: status), code, text, headers: headers)
    }

    private func firstTime(failed key: String) -> Bool { seen.withLock { $0.failed.insert(key).inserted } }

    // MARK: Huge bodies

    /// A valid searchset whose one Observation (after the Patient, for $everything) carries a
    /// valueString of about 12 MB, written in chunks as it is produced.
    private func hugeBundle(route: FHIRRoute, base: FHIRBase, api: FHIRAPI, withLength: Bool) -> HTTPResponse {
        let placeholder = "@@HUGE-VALUE@@"
        var patientID = "p1"
        var entries: [JSONValue] = []
        if case .everything(let id) = route {
            patientID = id
            if case .found(let patient) = api.store.reading({ $0.read(type: "Patient", id: id) }) {
                entries.append(["fullUrl": .string("\(base.url)/Patient/\(id)"), "resource": patient.json, "search": ["mode": "match"]])
            }
        }
        let observation: JSONValue = [
            "resourceType": "Observation",
            "id": "huge-1",
            "status": "final",
            "code": ["text": "Very long note"],
            "subject": ["reference": .string("Patient/\(patientID)")],
            "valueString": .string(placeholder),
        ]
        entries.append(["fullUrl": .string("\(base.url)/Observation/huge-1"), "resource": observation, "search": ["mode": "match"]])
        let bundle: JSONValue = [
            "resourceType": "Bundle", "type": "searchset", "total": .int(entries.count), "entry": .array(entries),
        ]
        let text = bundle.serializedBytes()
        let marker = Array(placeholder.utf8)
        guard let at = Self.find(marker, in: text) else { return FHIRResponse.json(bundle) }
        // The placeholder's quotes stay; the filler goes between them.
        return stream(prefix: Array(text[..<at]), suffix: Array(text[(at + marker.count)...]),
                      contentType: FHIRResponse.contentType, withLength: withLength)
    }

    /// The record with one more member, `huge_note`, of about 12 MB.
    private func hugeRecord(_ record: RHExRecord, withLength: Bool) -> HTTPResponse {
        var bytes = record.bytes
        while let last = bytes.last, last != UInt8(ascii: "}") { bytes.removeLast() }
        guard !bytes.isEmpty else { return HTTPResponse(status: .ok, contentType: "application/json", body: record.bytes) }
        bytes.removeLast()
        let isEmptyObject = bytes.last(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) == UInt8(ascii: "{")
        let prefix = bytes + Array((isEmptyObject ? "" : ",").utf8) + Array(#""huge_note":""#.utf8)
        return stream(prefix: prefix, suffix: Array("\"}".utf8), contentType: "application/json", withLength: withLength)
    }

    private func stream(prefix: [UInt8], suffix: [UInt8], contentType: String, withLength: Bool) -> HTTPResponse {
        let chunkBytes = Self.chunkBytes
        let chunks = Self.hugeBytes / chunkBytes
        let length = withLength ? prefix.count + chunks * chunkBytes + suffix.count : nil
        return HTTPResponse(
            status: .ok, headers: [("Content-Type", contentType)],
            body: .stream(contentLength: length) { sink in
                let pattern = Array("All work and no play makes a very long note. ".utf8)
                let filler = (0..<chunkBytes).map { pattern[$0 % pattern.count] }
                try await sink.write(prefix)
                for _ in 0..<chunks { try await sink.write(filler) }
                try await sink.write(suffix)
            })
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
