import COpenSSL
import Foundation
import HReaderJSON
import NIOHTTP1

/// `--shl`: the SMART Health Links manifest protocol (HL7 "SMART Health Cards and Links" IG) over
/// each invented patient's record, for tests and demos. Written apart from hreader's own sharing
/// code (its JWE here, on libcrypto's AES-GCM directly), so that each can catch the other's mistakes.
///
/// - `GET /shl/links` → `{"links": [{"patient", "id", "link"}]}`: the links this run made, one per
///   patient (a demo server's convenience: a real one hands a link only to the person it is about);
/// - `POST /shl/ID` with `{"recipient", "passcode"?, "embeddedLengthMax"?}` → the manifest
///   `{"files": [{"contentType": "application/fhir+json", "embedded" | "location"}]}`; the file
///   embedded when it fits `embeddedLengthMax` (never with `--shl-location-only`), else at a
///   `location` that works for 5 minutes; a missing or wrong passcode → 401 `{"remainingAttempts": n}`,
///   the link locked once none remain; an unknown link → 404; no recipient → 400;
/// - `GET /shl/ID/file/TICKET` → the file, `application/jose`.
///
/// Each file is the patient's record as a FHIR `collection` Bundle, a JWE compact serialization
/// (`alg: dir`, `enc: A256GCM`, `cty: application/fhir+json`) under the link's own random key.
final class SmartHealthLinks: Sendable {
    static let attempts = 5
    static let ticketLifetime: TimeInterval = 300

    struct Link: Sendable {
        let patient: String
        let id: String
        let key: [UInt8]
        let file: String
        let text: String
    }

    private struct State {
        var links: [String: Link] = [:]
        var order: [String] = []
        var attemptsLeft: [String: Int] = [:]
        var tickets: [String: (id: String, expires: Date)] = [:]
    }

    let passcode: String?
    let locationOnly: Bool
    private let state = LockedBox(State())

    init(passcode: String?, locationOnly: Bool) {
        self.passcode = passcode
        self.locationOnly = locationOnly
    }

    /// Makes one link per patient of `store`, reachable at `base` (`http://127.0.0.1:PORT`).
    func makeLinks(store: FHIRStore, base: String) throws {
        let records: [(String, String, JSONValue)] = store.reading { state in
            state.search(type: "Patient", parameters: []).map(\.id).compactMap { id -> (String, String, JSONValue)? in
                guard let page = state.everything(patientID: id, offset: 0, count: Int.max) else { return nil }
                let name = page.resources.first.flatMap { Self.name(of: $0.json) } ?? id
                let bundle: JSONValue = .object([
                    ("resourceType", .string("Bundle")), ("type", .string("collection")),
                    ("entry", .array(page.resources.map { resource in
                        .object([("fullUrl", .string("\(base)/fhir/\(resource.type)/\(resource.id)")), ("resource", resource.json)])
                    })),
                ])
                return (id, name, bundle)
            }
        }
        var made: [Link] = []
        for (patient, name, bundle) in records {
            let key = try Self.randomBytes(32)
            let id = Self.base64url(try Self.randomBytes(32))
            let file = try Self.seal(Array(bundle.serialized().utf8), key: key)
            var payload: JSONObject = [("url", .string("\(base)/shl/\(id)")), ("key", .string(Self.base64url(key))),
                                       ("label", .string(String("Sample record of \(name)".prefix(80))))]
            if passcode != nil { payload.append(("flag", .string("P"))) }
            let text = "shlink:/" + Self.base64url(Array(JSONValue.object(payload).serialized().utf8))
            made.append(Link(patient: patient, id: id, key: key, file: file, text: text))
        }
        state.withLock { state in
            for link in made {
                state.links[link.id] = link
                state.order.append(link.id)
                if passcode != nil { state.attemptsLeft[link.id] = Self.attempts }
            }
        }
    }

    func handle(_ request: HTTPRequest, segments: [String]) -> HTTPResponse {
        switch (request.method, segments.count) {
        case (.GET, 2) where segments[1] == "links":
            let links = state.withLock { state in state.order.compactMap { state.links[$0] } }
            return Self.json(.object([("links", .array(links.map { link in
                .object([("patient", .string(link.patient)), ("id", .string(link.id)), ("link", .string(link.text))])
            }))]))
        case (.POST, 2):
            return manifest(request, id: segments[1])
        case (.GET, 4) where segments[2] == "file":
            let now = Date()
            let file: String? = state.withLock { state in
                guard let ticket = state.tickets[segments[3]], ticket.id == segments[1], ticket.expires > now else { return nil }
                return state.links[segments[1]]?.file
            }
            guard let file else { return Self.error(.notFound, "no such file (its location has expired; ask the manifest again)") }
            return HTTPResponse(status: .ok, contentType: "application/jose", text: file)
        case (.OPTIONS, _):
            return HTTPResponse(status: .noContent, headers: [("Access-Control-Allow-Origin", "*"), ("Access-Control-Allow-Methods", "GET, POST"),
                                                              ("Access-Control-Allow-Headers", "Content-Type")])
        default:
            return Self.error(.notFound, "nothing at \(request.path)")
        }
    }

    private func manifest(_ request: HTTPRequest, id: String) -> HTTPResponse {
        guard request.body.count <= 16_384, let body = try? JSONParser.parse(request.body), let object = body.object else {
            return Self.error(.badRequest, "the body is not a JSON object (recipient, passcode, embeddedLengthMax)")
        }
        guard let recipient = object["recipient"]?.string, !recipient.isEmpty else {
            return Self.error(.badRequest, "recipient is required")
        }
        _ = recipient
        let embeddedLengthMax = object["embeddedLengthMax"]?.int
        let given = object["passcode"]?.string
        enum Answer { case gone, refused(Int), granted(Link) }
        let answer: Answer = state.withLock { state in
            guard let link = state.links[id] else { return .gone }
            guard let passcode else { return .granted(link) }
            let left = state.attemptsLeft[id] ?? 0
            guard left > 0 else { return .refused(0) }
            guard let given, Self.sameText(given, passcode) else {
                state.attemptsLeft[id] = left - 1
                return .refused(left - 1)
            }
            return .granted(link)
        }
        switch answer {
        case .gone:
            return Self.error(.notFound, "no such link")
        case let .refused(remaining):
            return Self.json(.object([("remainingAttempts", .int(remaining))]), status: .unauthorized)
        case let .granted(link):
            var file: JSONObject = [("contentType", .string("application/fhir+json"))]
            if !locationOnly, let embeddedLengthMax, link.file.utf8.count <= embeddedLengthMax {
                file.append(("embedded", .string(link.file)))
            } else {
                let ticket = randomHex(bytes: 32)
                let now = Date()
                state.withLock { state in
                    state.tickets = state.tickets.filter { $0.value.expires > now }
                    state.tickets[ticket] = (link.id, now.addingTimeInterval(Self.ticketLifetime))
                }
                file.append(("location", .string("\(request.origin)/shl/\(link.id)/file/\(ticket)")))
            }
            return Self.json(.object([("files", .array([.object(file)]))]))
        }
    }

    // MARK: Pieces

    static func json(_ value: JSONValue, status: HTTPResponseStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", text: value.serialized(),
                     headers: [("Cache-Control", "no-store"), ("Access-Control-Allow-Origin", "*")])
    }

    static func error(_ status: HTTPResponseStatus, _ message: String) -> HTTPResponse {
        json(.object([("error", .string(message))]), status: status)
    }

    static func name(of patient: JSONValue) -> String? {
        guard let name = patient.object?["name"]?.array?.first?.object else { return nil }
        let given = name["given"]?.array?.compactMap(\.string).joined(separator: " ") ?? ""
        let family = name["family"]?.string ?? ""
        let text = [given, family].filter { !$0.isEmpty }.joined(separator: " ")
        return text.isEmpty ? nil : text
    }

    /// Equal texts, compared in time that does not depend on where they differ.
    static func sameText(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        var difference = x.count ^ y.count
        for i in 0..<min(x.count, y.count) { difference |= Int(x[i] ^ y[i]) }
        return difference == 0
    }

    static func randomBytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else { throw SealError("RAND_bytes failed") }
        return bytes
    }

    struct SealError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// JWE compact serialization, `alg: dir`, `enc: A256GCM` (RFC 7516 §7.1, RFC 7518 §5.3): the
    /// protected header's base64url is the additional data; a random 96-bit IV; a 128-bit tag.
    static func seal(_ plaintext: [UInt8], key: [UInt8]) throws -> String {
        let header = base64url(Array(#"{"alg":"dir","enc":"A256GCM","cty":"application/fhir+json"}"#.utf8))
        let aad = Array(header.utf8)
        let iv = try randomBytes(12)
        guard let context = EVP_CIPHER_CTX_new() else { throw SealError("no cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: 16)
        var length: Int32 = 0, total = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, nil, nil) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, 12, nil) == 1,
              EVP_EncryptInit_ex(context, nil, nil, key, iv) == 1,
              EVP_EncryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1,
              EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1 else {
            throw SealError("AES-GCM failed")
        }
        total = Int(length)
        let finished = ciphertext.withUnsafeMutableBufferPointer { buffer in
            EVP_EncryptFinal_ex(context, buffer.baseAddress! + total, &length)
        }
        guard finished == 1, EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag) == 1 else { throw SealError("AES-GCM failed") }
        total += Int(length)
        return [header, "", base64url(iv), base64url(Array(ciphertext.prefix(total))), base64url(tag)].joined(separator: ".")
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
