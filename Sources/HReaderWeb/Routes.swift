import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderStore
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOConcurrencyHelpers
import NIOCore

/// The pages, hReader's `timeline.json`, and the JSON API (docs/web.md). Handlers parse the request,
/// run one use case of HReaderKit through the gate, and render; nothing here knows SQL.
struct Routes {
    let gate: VaultGate
    let registry: AppletRegistry
    /// Summaries, and the JSON of vital charts over more than a month, kept while the vault stays as it was.
    let summaries = ViewCache<PatientSummary> { _ in 64 << 10 }   // at most 50 conditions and 50 allergies
    let charts = ViewCache<ByteBuffer> { $0.readableBytes }

    /// Registers every route on the app's group (under `AccessControl.pathPrefix`).
    func register(on router: RouterGroup<WebContext>) {
        router.get("/") { _, context in
            let patients = try await gate.read { try $0.allPatients() }
            return HTMLResponse.make(Pages.patients(patients, visit: context.visit))
        }
        router.get("/patients/:patient") { _, context in
            let reference = try context.parameters.require("patient")
            let summary = try await summary(reference)
            return HTMLResponse.make(Pages.summary(summary, visit: context.visit))
        }
        // The clinician summary as one printable page: the same HTML as `hreader summary --format html`.
        router.get("/patients/:patient/summary.html") { request, context in
            let reference = try context.parameters.require("patient")
            let since = try request.uri.queryParameters.get("since").map { try Self.time($0, name: "since") }
            let html = try await gate.write { open in   // it records the audit line
                let patient = try Self.patient(reference, in: open)
                let summary = try open.clinicalSummary(of: patient, since: since)
                try open.recordSummary(format: .html, of: patient, to: "hreader serve")
                return summary.html
            }
            var response = HTMLResponse.make(html)
            // No script and no other request: only the page's own inline style, by its hash.
            response.headers[.contentSecurityPolicy] = "default-src 'none'; style-src \(SummaryPage.styleHash); img-src 'none'; "
                + "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
            return response
        }
        router.get("/patients/:patient/timeline") { request, context in
            let reference = try context.parameters.require("patient")
            let query = request.uri.queryParameters
            let page = try Self.page(query.get("page") ?? "week")
            let (patient, latest) = try await gate.read { open in
                let patient = try Self.patient(reference, in: open)
                return (patient, try open.latestEntryTime(of: patient))
            }
            let at = query.get("at") ?? TimelineRange.openingEnd(of: page, latest: latest).map(String.init)
            return HTMLResponse.make(Pages.timeline(patient, page: page, at: at, latest: latest, visit: context.visit))
        }
        // Lab trends: the page's frame; app.js draws one chart per result code from the trends API.
        router.get("/patients/:patient/trends") { request, context in
            let reference = try context.parameters.require("patient")
            let query = request.uri.queryParameters
            let range = try Self.optionalRange(query)
            let code = query.get("code").flatMap { $0.isEmpty ? nil : $0 }
            let entry = query.get("entry").flatMap { $0.isEmpty ? nil : $0 }
            let (patient, key) = try await gate.read { open in
                let patient = try Self.patient(reference, in: open)
                guard let entry else { return (patient, code) }
                guard let key = try open.resultTrendKey(entry: entry, patient: patient) else {
                    throw WebError.notFound("\(Pages.name(patient)) has no result '\(entry)'")
                }
                return (patient, key)
            }
            return HTMLResponse.make(Pages.trends(patient, code: key, range: range, form: Self.strings(query, ["from", "to", "page", "at"]), visit: context.visit))
        }
        router.get("/search") { request, context in
            let query = request.uri.queryParameters
            let text = query.get("q") ?? ""
            let type = try Self.entryType(query.get("type"))
            let reference = query.get("patient").flatMap { $0.isEmpty ? nil : $0 }
            let (patients, only, hits, problem) = try await gate.read { open in
                let patients = try open.allPatients()
                let only = try reference.map { try Self.patient($0, in: open) }
                guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { return (patients, only, [RecordSearchHit](), String?.none) }
                do {
                    return (patients, only, try open.searchRecords(text, patient: only, type: type, limit: 100), nil)
                } catch let error as HReaderError where error.kind == .usage {
                    return (patients, only, [], error.message)
                }
            }
            return HTMLResponse.make(Pages.search(text, patient: only, type: type, patients: patients, hits: hits, problem: problem,
                                                  visit: context.visit))
        }

        // Documents (docs/documents.md): a patient's list, one document's readable text, and its bytes
        // under a CSP sandbox, so an HTML note can never run script in the app's origin.
        router.get("/patients/:patient/documents") { _, context in
            let reference = try context.parameters.require("patient")
            let (patient, documents) = try await gate.read { open in
                let patient = try Self.patient(reference, in: open)
                return (patient, try open.documents(patient: patient))
            }
            return HTMLResponse.make(Pages.documents(patient, documents: documents, visit: context.visit))
        }
        router.get("/documents/:document") { request, context in
            let reference = try context.parameters.require("document")
            let pageNumber = request.uri.queryParameters.get("page").flatMap { Int($0) }.map { min(max($0, 1), 100_000) } ?? 1
            let (patient, document, text) = try await gate.read { open in
                let document = try Self.document(reference, in: open)
                return (try open.patient(String(document.patientID)), document, try open.documentText(document))
            }
            return HTMLResponse.make(Pages.document(document, text: text, patient: patient, visit: context.visit, pageNumber: pageNumber))
        }
        router.get("/documents/:document/file") { _, context in
            let reference = try context.parameters.require("document")
            let (document, bytes) = try await gate.read { open in
                let document = try Self.document(reference, in: open)
                guard document.state == .fetched, document.sha256 != nil else {
                    throw WebError.notFound("document \(document.id) has no bytes in the vault (\(document.state.rawValue))")
                }
                var buffer = ByteBuffer()
                try open.readDocumentBytes(document) { buffer.writeBytes($0) }
                return (document, buffer)
            }
            return Self.documentFile(document, bytes: bytes)
        }
        router.get("/documents/:document/pages/:page") { _, context in
            let reference = try context.parameters.require("document")
            guard let page = Int(try context.parameters.require("page")) else { throw WebError.badRequest("a page is a number from 1") }
            // The PDF is read on a lane (bounded), drawn by the sandboxed pdftoppm off it: a lane is
            // not held while poppler works.
            let bytes = try await gate.read { open in
                do {
                    return try open.previewablePDF(try Self.document(reference, in: open))
                } catch let failure as DocumentPreview.Failure {
                    if case .failed = failure { throw WebError(status: .unprocessableContent, message: failure.description) }
                    throw WebError.notFound(failure.description)
                }
            }
            let png = try await Self.preview(bytes, page: page)
            var response = Response(status: .ok, headers: [.contentType: "image/png"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: png)))
            response.headers[.contentSecurityPolicy] = "sandbox; default-src 'none'"
            return response
        }
        router.get("/api/patients/:patient/documents") { _, context in
            let reference = try context.parameters.require("patient")
            let documents = try await gate.read { open in try open.documents(patient: try Self.patient(reference, in: open)) }
            return JSONResponse.make(.object([("documents", .array(documents.map(\.jsonObject.json)))]))
        }

        router.get("/timeline.json") { request, _ in
            let query = request.uri.queryParameters
            let range = try Self.range(query)
            let keys = try query.get("types").map(TimelineQuery.keys(parsing:))
            let detail = ["1", "true", "yes"].contains(query.get("detail")?.lowercased() ?? "")
            let reference = query.get("patient")
            let body = try await gate.read { open in
                var buffer = ByteBuffer()
                var out = JSONByteWriter { bytes in buffer.writeBytes(bytes) }
                try open.writeTimeline(patient: try Self.patient(reference, in: open), query: TimelineQuery(range: range, keys: keys, detail: detail),
                                       to: &out)
                return buffer
            }
            return JSONResponse.make(bytes: body)
        }
        router.post("/timeline.json") { request, context in try await post(request, base: context.base) }

        router.get("/api/patients") { _, _ in
            let patients = try await gate.read { try $0.allPatients() }
            return JSONResponse.make(object: ["patients": .array(patients.map { .object(Self.patientObject($0)) })])
        }
        router.get("/api/patients/:patient") { _, context in
            let reference = try context.parameters.require("patient")
            let patient = try await gate.read { try Self.patient(reference, in: $0) }
            return JSONResponse.make(object: ["patient": .object(Self.patientObject(patient))])
        }
        router.get("/api/patients/:patient/summary") { _, context in
            let reference = try context.parameters.require("patient")
            let summary = try await summary(reference)
            return JSONResponse.make(summary.json)
        }
        router.get("/api/patients/:patient/entries") { request, context in
            try await entries(request, reference: try context.parameters.require("patient"))
        }
        router.get("/api/patients/:patient/vitals") { request, context in
            let reference = try context.parameters.require("patient")
            let range = try Self.range(request.uri.queryParameters)
            let points = try Self.integer(request.uri.queryParameters.get("points"), name: "points", default: 400, in: 2...5000)
            let read: @Sendable () async throws -> ByteBuffer = {
                let series = try await gate.read { open in
                    try open.vitalSeries(patient: try Self.patient(reference, in: open), range: range, maximumPoints: points)
                }
                var bytes = ByteBuffer()
                bytes.writeString(JSONValue.object([("start_date", .int(range.start)), ("end_date", .int(range.end)),
                                                    ("vitals", .array(series.map(\.json)))]).serialized())
                return bytes
            }
            // A month or less reads its own samples in milliseconds; a year or a decade is kept.
            guard range.end - range.start > 32 * 86_400 else { return JSONResponse.make(bytes: try await read()) }
            let key = "\(reference)\u{1F}\(range.start)\u{1F}\(range.end)\u{1F}\(points)"
            return JSONResponse.make(bytes: try await charts.view(key, state: try gate.state()) { (try await read(), true) })
        }
        router.get("/api/patients/:patient/trends") { request, context in
            let reference = try context.parameters.require("patient")
            let query = request.uri.queryParameters
            let range = try Self.optionalRange(query)
            let code = query.get("code").flatMap { $0.isEmpty ? nil : $0 }
            let points = try Self.integer(query.get("points"), name: "points", default: 400, in: 2...5000)
            let trends = try await gate.read { open in
                try open.resultTrends(patient: try Self.patient(reference, in: open), code: code, range: range, maximumPoints: points)
            }
            var members: JSONObject = []
            if let range { members += [("start_date", .int(range.start)), ("end_date", .int(range.end))] }
            members.append(("trends", .array(trends.map(\.json))))
            return JSONResponse.make(.object(members))
        }
        router.get("/api/search") { request, _ in
            let query = request.uri.queryParameters
            let text = query.get("q") ?? ""
            let type = try Self.entryType(query.get("type"))
            let reference = query.get("patient").flatMap { $0.isEmpty ? nil : $0 }
            let limit = try Self.integer(query.get("limit"), name: "limit", default: 50, in: 1...1000)
            let hits = try await gate.read { open in
                try open.searchRecords(text, patient: try reference.map { try Self.patient($0, in: open) }, type: type, limit: limit)
            }
            // The shape of `hreader search --json`.
            return JSONResponse.make(.object([("hits", .array(hits.map(\.jsonValue)))]))
        }

        router.get("/static/app.js") { _, _ in Self.asset(PackageResources.app_js, type: "text/javascript; charset=utf-8") }
        router.get("/static/app.css") { _, _ in Self.asset(PackageResources.app_css, type: "text/css; charset=utf-8") }
        router.get("/static/icon.svg") { _, _ in JSONResponse.body(Self.icon, contentType: "image/svg+xml") }
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
    }

    /// A patient's summary: beside other reads when its tiles are all built in, on the writer when a
    /// plugin applet may store its data (or its pseudonym secret be made). A plugin added between the
    /// two steps makes that one request fail (the read-only connection refuses the write), not the vault.
    /// Kept (`ViewCache`) only when its tiles are all built in: a plugin runs each time.
    func summary(_ reference: String) async throws -> PatientSummary {
        let registry = self.registry
        return try await summaries.view(reference, state: try gate.state()) {
            let mayWrite = try await gate.read { open in try open.summaryMayWrite(of: try Self.patient(reference, in: open), registry: registry) }
            let body: @Sendable (OpenVault) throws -> PatientSummary = { open in
                try open.summary(of: try Self.patient(reference, in: open), registry: registry)
            }
            return (mayWrite ? try await gate.write(body) : try await gate.read(body), !mayWrite)
        }
    }

    // MARK: Posting to the timeline

    /// hReader's `POST timeline.json?key=…`: a JSON object, or a plain form (then the answer redirects back
    /// to the page the form was on, so the forms work without the script too).
    func post(_ request: Request, base: String) async throws -> Response {
        let query = request.uri.queryParameters
        guard let key = query.get("key"), !key.isEmpty else { throw WebError.badRequest("give ?key=Levels, NewMedication or MedRegiment") }
        var request = request
        let body = try await request.collectBody(upTo: WebGuard.maximumPostBody)
        let form = FormBody(body, of: request)
        var data = JSONObject()
        var returnTo: String?
        if request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
            for (name, value) in form.fields where !value.isEmpty {
                switch name {
                case AccessControl.csrfField: continue
                case "return_to": returnTo = value
                default: data[name] = .string(value)
                }
            }
        } else {
            guard let object = (try? JSONParser.parse(body.readableBytesView, limits: .init(maxDepth: 64, maxBytes: WebGuard.maximumPostBody)))?.object else {
                throw WebError.badRequest("the body must be a JSON object (or a form)")
            }
            data = object
        }
        let postKey = TimelinePostKey(key)
        if postKey == .levels { try Self.checkLevels(data) }
        let reference = query.get("patient")
        let posted = JSONValue.object(data)
        let item = try await gate.write { open in
            try open.postTimelineItem(patient: try Self.patient(reference, in: open), key: postKey, data: posted)
        }
        if let returnTo, Self.isLocalPath(returnTo), returnTo.hasPrefix(base + "/") {
            return Response.redirect(to: returnTo, type: .found)   // 302 after POST: the browser follows with GET
        }
        return JSONResponse.make(.object([("item", .object([("id", .string(item.uuid)), ("type", .string(item.type)),
                                                            ("time", .int(item.time))]))]), status: .created)
    }

    /// Pain, mood and energy are whole numbers from 0 to 10 (the forms' sliders); other level keys pass as posted.
    static func checkLevels(_ data: JSONObject) throws {
        for name in ["pain", "mood", "energy"] {
            guard let value = data[name] else { continue }
            let number = value.string.flatMap { Int($0) } ?? value.number.flatMap { n in n == n.rounded() && abs(n) < 1e9 ? Int(n) : nil }
            guard let number, (0...10).contains(number) else { throw WebError.badRequest("\(name) must be a whole number from 0 to 10") }
        }
    }

    /// A path on this server and nothing else ("/x", not "//other.example/x" or "https://…"). Browsers
    /// drop tabs and newlines from a URL and read `\` as `/`, so `/<TAB>/evil.example/x` or
    /// `/\evil.example` would leave it: control characters
    /// and spaces are refused anywhere, and what is left must parse with no scheme and no host.
    static func isLocalPath(_ path: String) -> Bool {
        // ASCII only, compared scalar by scalar: String.hasPrefix compares whole characters, so "//" followed
        // by a variation selector (U+FE06, which IDNA ignores) passed as not starting with "//" (make fuzz, web-return-to).
        let scalars = path.unicodeScalars.map { $0 == "\\" ? "/" : $0 }
        guard scalars.first == "/", scalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7f }) else {
            return false
        }
        guard scalars.count < 2 || scalars[1] != "/", let parts = URLComponents(string: path) else { return false }
        return parts.scheme == nil && parts.host == nil
    }

    // MARK: Entries

    func entries(_ request: Request, reference: String) async throws -> Response {
        let query = request.uri.queryParameters
        let type = try Self.entryType(query.get("type"))
        let from = try query.get("from").map { try Self.time($0, name: "from").date }
        let to = try query.get("to").map { try Self.time($0, name: "to").date }
        let limit = try Self.integer(query.get("limit"), name: "limit", default: 500, in: 1...5000)
        let offset = try Self.integer(query.get("offset"), name: "offset", default: 0, in: 0...Int(Int32.max))
        let (page, checks) = try await gate.read { open in
            // One more than asked tells whether there is a next page without counting them all.
            let page = try open.entries(of: try Self.patient(reference, in: open), type: type, from: from, to: to, limit: limit + 1, offset: offset)
            return (page, try open.cardChecks(of: Array(page.prefix(limit))))
        }
        // As `entries list --json`: an entry a SMART Health Card brought says how it was checked.
        var object: JSONObject = ["entries": .array(page.prefix(limit).map { entry in
            var o = entry.jsonObject
            if let check = checks[entry.id] { o["verification"] = check.jsonValue }
            return .object(o)
        })]
        if page.count > limit { object["next_offset"] = .int(offset + limit) }
        return JSONResponse.make(object: object)
    }

    // MARK: Parsing

    /// A patient by local id or uuid; with none given, the selected patient (as on the command line).
    static func patient(_ reference: String?, in open: OpenVault) throws -> Patient {
        do {
            return try open.patient(reference)
        } catch let error as HReaderError where error.kind == .usage && reference != nil {
            throw WebError.notFound("no patient matches '\(reference!)'")
        }
    }

    static func document(_ reference: String, in open: OpenVault) throws -> StoredDocument {
        do { return try open.document(reference) } catch let error as HReaderError where error.kind == .usage {
            throw WebError.notFound("no document '\(reference)'")
        }
    }

    /// A document's bytes as their type says, under `Content-Security-Policy: sandbox` (a unique origin,
    /// no script, no form, no plugin) and `nosniff`; shown in the browser when it can show the type
    /// safely (text, PDF, images), else downloaded.
    /// Pages drawn at once; one more is answered 503 (each is a child process of up to 20 s of CPU).
    static let previewsAtOnce = NIOLockedValueBox(0)

    /// Page `page` of a PDF drawn by the sandboxed pdftoppm on a thread of its own.
    static func preview(_ bytes: [UInt8], page: Int) async throws -> [UInt8] {
        let admitted = previewsAtOnce.withLockedValue { running in
            guard running < 2 else { return false }
            running += 1
            return true
        }
        guard admitted else { throw VaultGate.Saturated(message: "the server is busy drawing other pages; try again in a moment") }
        defer { previewsAtOnce.withLockedValue { $0 -= 1 } }
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    do {
                        return try DocumentPreview.png(.inMemory(bytes), page: page)
                    } catch let failure as DocumentPreview.Failure {
                        switch failure {
                        case .noSuchPage: throw WebError.notFound(failure.description)
                        case .noRenderer: throw VaultGate.Saturated(message: failure.description)
                        default: throw WebError(status: .unprocessableContent, message: failure.description)
                        }
                    }
                })
            }
        }
    }

    static func documentFile(_ document: StoredDocument, bytes: ByteBuffer) -> Response {
        let delivery = DocumentDelivery(document)
        var response = Response(status: .ok, headers: [.contentType: delivery.contentType], body: ResponseBody(byteBuffer: bytes))
        response.headers[.contentSecurityPolicy] = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"
        response.headers[.contentDisposition] = delivery.inline ? "inline" : "attachment; filename=\"document-\(document.id)\""
        return response
    }

    static func patientObject(_ p: Patient) -> JSONObject {
        var object = p.jsonObject
        object["relationship_text"] = .string(PatientSummary.relationshipText(p.relationship, gender: p.gender))
        if let age = PatientSummary.ageText(birthDate: p.birthDate) { object["age"] = .string(age) }
        return object
    }

    static func strings(_ query: FlatDictionary<Substring, Substring>, _ names: [String]) -> [String: String] {
        var out: [String: String] = [:]
        for name in names { if let value = query.get(name), !value.isEmpty { out[name] = value } }
        return out
    }

    /// An entry type by name; empty or absent: any.
    static func entryType(_ name: String?) throws -> EntryType? {
        guard let name, !name.isEmpty else { return nil }
        guard let type = EntryType(rawValue: name) else {
            throw WebError.badRequest("unknown entry type '\(name)'; use one of \(EntryType.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return type
    }

    /// `range`'s parameters when any is given (empty ones count as not given); nil: all time.
    static func optionalRange(_ query: FlatDictionary<Substring, Substring>) throws -> TimelineRange? {
        var kept = query.filter { ["from", "to", "page", "at"].contains($0.key) && !$0.value.isEmpty }
        guard !kept.isEmpty else { return nil }
        // A form's one date: from it to now, or from the start of time to it.
        let names = Set(kept.map(\.key))
        if names == ["from"] { kept.append((key: "to", value: Substring(String(Int64(Date().timeIntervalSince1970))))) }
        if names == ["to"] { kept.append((key: "from", value: Substring(String(TimelineRange.supportedEpochs.lowerBound)))) }
        return try range(FlatDictionary(kept))
    }

    static func page(_ name: String) throws -> TimelinePage {
        guard let page = TimelinePage(rawValue: name) else { throw WebError.badRequest("unknown page '\(name)'; use one of \(TimelinePage.names)") }
        return page
    }

    /// `page` (default week) ending at `at` (default now), or `from` and `to`, as `hreader timeline` takes them.
    static func range(_ query: FlatDictionary<Substring, Substring>) throws -> TimelineRange {
        let from = query.get("from"), to = query.get("to")
        if from != nil || to != nil {
            guard let from, let to else { throw WebError.badRequest("from and to go together") }
            guard query.get("page") == nil, query.get("at") == nil else { throw WebError.badRequest("give page (and at) or from and to, not both") }
            let start = try time(from, name: "from"), end = try time(to, name: "to")
            guard start.epoch <= end.epoch else { throw WebError.badRequest("from is after to") }
            return TimelineRange.between(start, end)
        }
        let page = try page(query.get("page") ?? "week")
        return TimelineRange.page(page, at: try query.get("at").map { try time($0, name: "at") })
    }

    /// RFC 3339, a date, or epoch seconds (what the page's script sends).
    static func time(_ text: String, name: String) throws -> ClinicalTime {
        if let seconds = Int64(text) {
            guard TimelineRange.supportedEpochs.contains(seconds) else {
                throw WebError.badRequest("\(name) is out of range: epoch seconds of the years 1 to 9999")
            }
            return ClinicalTime(epoch: seconds)
        }
        guard let time = ClinicalTime.parse(text) else {
            throw WebError.badRequest("\(name) is not a time: use RFC 3339 (2012-05-01T00:00:00Z), a date (2012-05-01) or epoch seconds")
        }
        // Foundation's ISO 8601 fallback takes years like -629999 (and trailing digits), which gave a range
        // that ends before it starts: the same years 1 to 9999 as epoch seconds (found by make fuzz, web-query).
        guard TimelineRange.supportedEpochs.contains(time.epoch) else {
            throw WebError.badRequest("\(name) is out of range: the years 1 to 9999")
        }
        return time
    }

    static func integer(_ text: String?, name: String, default value: Int, in bounds: ClosedRange<Int>) throws -> Int {
        guard let text else { return value }
        guard let number = Int(text), bounds.contains(number) else {
            throw WebError.badRequest("\(name) must be a whole number from \(bounds.lowerBound) to \(bounds.upperBound)")
        }
        return number
    }

    // MARK: Assets

    static func asset(_ bytes: [UInt8], type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path fill="#b3261e" \
        d="M16 29 4.5 17.5A7 7 0 0 1 16 7.6a7 7 0 0 1 11.5 9.9Z"/></svg>
        """
}
