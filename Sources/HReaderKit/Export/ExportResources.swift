import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel
import HReaderStore

/// The FHIR R4 JSON that `hreader export` sends: the Patient, the Observations, the transaction
/// or batch Bundles around them, and the reading of the server's transaction- or batch-response.
enum ExportResources {
    static let loincSystem = "http://loinc.org"
    static let ucumSystem = "http://unitsofmeasure.org"
    static let categorySystem = "http://terminology.hl7.org/CodeSystem/observation-category"
    static let categoryDisplays = [
        "vital-signs": "Vital Signs", "activity": "Activity", "laboratory": "Laboratory", "survey": "Survey",
        "exam": "Exam", "social-history": "Social History", "procedure": "Procedure", "therapy": "Therapy", "imaging": "Imaging",
    ]

    // MARK: Patient

    /// The identifier hreader gives a patient on every server: its local uuid.
    static func patientIdentifier(_ patient: Patient) -> ObservationDraft.Identifier {
        .init(system: ObservationDraft.patientSystem, value: patient.uuid)
    }

    /// A Patient with hreader's identifier, the name, gender and birth date of the vault.
    static func patient(_ patient: Patient) -> JSONValue {
        let identifier = patientIdentifier(patient)
        var members: JSONObject = [
            ("resourceType", .string("Patient")),
            ("identifier", .array([.object([("system", .string(identifier.system)), ("value", .string(identifier.value))])])),
        ]
        var name: JSONObject = []
        let family = patient.lastName.trimmingCharacters(in: .whitespaces)
        let given = patient.firstName.trimmingCharacters(in: .whitespaces)
        if !family.isEmpty { name.append(("family", .string(family))) }
        if !given.isEmpty { name.append(("given", .array([.string(given)]))) }
        if !name.isEmpty { members.append(("name", .array([.object(name)]))) }
        if let gender = fhirGender(patient.gender) { members.append(("gender", .string(gender))) }
        if let birthDate = patient.birthDate, isFHIRDate(birthDate) { members.append(("birthDate", .string(birthDate))) }
        return .object(members)
    }

    /// FHIR's administrative gender (male, female, other, unknown), nil for anything else.
    static func fhirGender(_ text: String?) -> String? {
        switch text?.trimmingCharacters(in: .whitespaces).lowercased() {
        case "male"?, "m"?: "male"
        case "female"?, "f"?: "female"
        case "other"?: "other"
        case "unknown"?: "unknown"
        default: nil
        }
    }

    /// YYYY, YYYY-MM or YYYY-MM-DD.
    static func isFHIRDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts[0].count == 4, parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return false }
        let numbers = parts.compactMap { Int($0) }
        return numbers[0] >= 1 && (numbers.count < 2 || (1...12).contains(numbers[1]))
            && (numbers.count < 3 || (1...31).contains(numbers[2]))
    }

    // MARK: Observation

    static func observation(_ draft: ObservationDraft, subject: String) -> JSONValue {
        var members: JSONObject = [
            ("resourceType", .string("Observation")),
            ("identifier", .array([.object([("system", .string(draft.identifier.system)), ("value", .string(draft.identifier.value))])])),
            ("status", .string("final")),
        ]
        if let category = draft.category {
            var coding: JSONObject = [("system", .string(categorySystem)), ("code", .string(category))]
            if let display = categoryDisplays[category] { coding.append(("display", .string(display))) }
            members.append(("category", .array([.object([("coding", .array([.object(coding)]))])])))
        }
        var codings: [JSONValue] = draft.loinc.isEmpty ? [] : [coding(loincSystem, draft.loinc, display: draft.display)]
        if let healthKit = draft.healthKitType { codings.append(coding(ObservationDraft.healthKitSystem, healthKit, display: nil)) }
        var code: JSONObject = codings.isEmpty ? [] : [("coding", .array(codings))]
        if !draft.text.isEmpty { code.append(("text", .string(draft.text))) }
        members.append(("code", .object(code)))
        members.append(("subject", .object([("reference", .string(subject))])))
        switch draft.effective {
        case .none: break
        case .instant(let time): members.append(("effectiveDateTime", .string(time)))
        case .period(let start, let end): members.append(("effectivePeriod", .object([("start", .string(start)), ("end", .string(end))])))
        }
        switch draft.value {
        case .none: break
        case .quantity(let quantity): members.append(("valueQuantity", self.quantity(quantity)))
        case .text(let text): members.append(("valueString", .string(text)))
        case .bloodPressure(let systolic, let diastolic):
            let catalog = ObservationCatalog.standard
            func component(_ loinc: String, _ reading: ObservationDraft.Component) -> JSONValue {
                let code: (String, JSONValue) = ("code", .object([("coding", .array([coding(loincSystem, loinc, display: catalog.code(loinc)?.display)]))]))
                switch reading {
                case .quantity(let value):
                    return .object([code, ("valueQuantity", quantity(value))])
                case .absent(let reason):  // R4 allows a component without a value, saying why
                    let concept: JSONValue = .object([("coding", .array([coding(ObservationDraft.dataAbsentReasonSystem, reason, display: nil)]))])
                    return .object([code, ("dataAbsentReason", concept)])
                }
            }
            members.append(("component", .array([component(ObservationCatalog.systolic, systolic),
                                                 component(ObservationCatalog.diastolic, diastolic)])))
        }
        return .object(members)
    }

    static func coding(_ system: String, _ code: String, display: String?) -> JSONValue {
        var members: JSONObject = [("system", .string(system)), ("code", .string(code))]
        if let display, !display.isEmpty { members.append(("display", .string(display))) }
        return .object(members)
    }

    static func quantity(_ quantity: ObservationDraft.Quantity) -> JSONValue {
        var members: JSONObject = [("value", .double(quantity.value))]
        if !quantity.unit.isEmpty { members.append(("unit", .string(quantity.unit))) }
        if let ucum = quantity.ucum { members.append(contentsOf: [("system", .string(ucumSystem)), ("code", .string(ucum))]) }
        return .object(members)
    }

    // MARK: Bundles

    /// One entry of a transaction or batch Bundle: a conditional create (or, without the
    /// condition, one plain `POST`).
    struct Create {
        var fullURL: String
        var type: String
        var resource: JSONValue
        var identifier: ObservationDraft.Identifier
    }

    static func create(_ draft: ObservationDraft, subject: String) -> Create {
        Create(fullURL: fullURL(for: "Observation " + draft.identifier.token), type: "Observation",
               resource: observation(draft, subject: subject), identifier: draft.identifier)
    }

    static func create(_ patient: Patient) -> Create {
        let identifier = patientIdentifier(patient)
        return Create(fullURL: fullURL(for: "Patient " + identifier.token), type: "Patient", resource: self.patient(patient), identifier: identifier)
    }

    /// A document as a DocumentReference with its bytes inline (`export --out --with-documents`),
    /// identified by `urn:hreader:document|<uuid>`.
    static func create(_ document: StoredDocument, bytes: [UInt8], subject: String) -> Create {
        let identifier = ObservationDraft.Identifier(system: "urn:hreader:document", value: document.uuid)
        var attachment: JSONObject = []
        if let type = document.contentType { attachment.append(("contentType", .string(type))) }
        attachment.append(("data", .string(Data(bytes).base64EncodedString())))
        attachment.append(("size", .int(bytes.count)))
        attachment.append(("hash", .string(Data(SHA1.hash(bytes)).base64EncodedString())))
        if !document.title.isEmpty { attachment.append(("title", .string(document.title))) }
        var members: JSONObject = [
            ("resourceType", .string("DocumentReference")),
            ("identifier", .array([.object([("system", .string(identifier.system)), ("value", .string(identifier.value))])])),
            ("status", .string("current")),
            ("subject", .object([("reference", .string(subject))])),
        ]
        // DocumentReference.date is an instant: a full date-time only.
        if let date = document.date, date.text.contains("T"), date.text.count >= 20 {
            members.append(("date", .string(date.text)))
        }
        if !document.title.isEmpty { members.append(("description", .string(document.title))) }
        members.append(("content", .array([.object([("attachment", .object(attachment))])])))
        return Create(fullURL: fullURL(for: "DocumentReference " + identifier.token), type: "DocumentReference",
                      resource: .object(members), identifier: identifier)
    }

    static func transaction(_ creates: [Create]) -> JSONValue { bundle(creates, type: "transaction") }

    /// A `transaction` or `batch` Bundle of conditional creates.
    static func bundle(_ creates: [Create], type: String) -> JSONValue {
        .object([
            ("resourceType", .string("Bundle")),
            ("type", .string(type)),
            ("entry", .array(creates.map(bundleEntry))),
        ])
    }

    static func bundleEntry(_ create: Create) -> JSONValue {
        .object([
            ("fullUrl", .string(create.fullURL)),
            ("resource", create.resource),
            ("request", .object([("method", .string("POST")), ("url", .string(create.type)),
                                 ("ifNoneExist", .string(ifNoneExist(create.identifier)))])),
        ])
    }

    /// A transaction Bundle of conditional creates written as it comes, the bytes of
    /// `transaction(creates).serialized(pretty: true)` and a newline: an export of millions of
    /// Observations is never one value in memory. At least one create (the Patient) is written.
    struct TransactionWriter {
        private var buffer: [UInt8] = []
        private var count = 0
        private let sink: ([UInt8]) throws -> Void

        init(sink: @escaping ([UInt8]) throws -> Void) {
            self.sink = sink
            buffer += "{\n  \"resourceType\": \"Bundle\",\n  \"type\": \"transaction\",\n  \"entry\": [".utf8
        }

        mutating func add(_ create: Create) throws {
            if count > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer += "\n    ".utf8
            bundleEntry(create).appendSerialized(to: &buffer, pretty: true, level: 2)
            count += 1
            if buffer.count >= 1 << 20 { try flush() }
        }

        mutating func finish() throws {
            precondition(count > 0, "a Bundle written as it comes has its Patient")
            buffer += "\n  ]\n}\n".utf8
            try flush()
        }

        private mutating func flush() throws {
            try sink(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    /// `identifier=system|value`, percent-encoded as a query (a `+` in a time would read as a space):
    /// every UTF-8 byte but the letters, digits and `-._~:/|` as `%XX`.
    static func ifNoneExist(_ identifier: ObservationDraft.Identifier) -> String {
        var out = Array("identifier=".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in identifier.token.utf8 {
            if queryAllowed[Int(byte)] {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes `ifNoneExist` leaves as they are.
    private static let queryAllowed: [Bool] = (0..<256).map { byte in
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/|".utf8.contains(UInt8(byte))
    }

    /// A `urn:uuid:` that is the same for the same resource in every export (a UUID made from a
    /// SHA-256 of the key, version 8), so a Bundle written twice is the same file.
    static func fullURL(for key: String) -> String {
        var bytes = Array(SHA256.hash(Array(("hreader export " + key).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return "urn:uuid:" + Hex.uuid(bytes)
    }

    // MARK: Answers

    /// What the server did with one entry of a transaction- or batch-response.
    enum EntryResult: Equatable {
        case created
        /// Another 2xx: a conditional create that found the resource.
        case existing
        /// An error status, with the entry's OperationOutcome when it has one.
        case refused(String)
    }

    /// Created (201) and already there (another 2xx, a conditional create that matched) in a
    /// transaction-response of `expected` entries; any other status is an error.
    static func outcomes(of data: Data, expected: Int) throws -> (created: Int, existing: Int) {
        var created = 0, existing = 0
        for (index, result) in try entryResults(of: data, expected: expected, kind: "transaction").enumerated() {
            switch result {
            case .created: created += 1
            case .existing: existing += 1
            case .refused(let why):
                throw HReaderError.badInput("the server's transaction-response gives entry \(index) the status '\(why)'")
            }
        }
        return (created, existing)
    }

    /// Each entry's result in a `kind`-response (transaction or batch) of `expected` entries.
    static func entryResults(of data: Data, expected: Int, kind: String) throws -> [EntryResult] {
        guard let bundle = (try? JSONParser.parse(data))?.object, bundle["resourceType"]?.string == "Bundle" else {
            throw HReaderError.badInput("the server's answer to a \(kind) is not a Bundle")
        }
        let entries = bundle["entry"]?.array ?? []
        guard entries.count == expected else {
            throw HReaderError.badInput("the server's \(kind)-response has \(entries.count) entries for the \(expected) sent")
        }
        return entries.map { entry in
            let response = entry["response"]
            let status = response?["status"]?.string ?? ""
            switch Int(status.prefix { $0.isNumber }) ?? 0 {
            case 201: return .created
            case 200..<300: return .existing
            default:
                let issue = response?["outcome"]?["issue"]?.array?.first
                let detail = issue?["diagnostics"]?.string.map { ": \($0)" } ?? ""
                return .refused(status + detail)
            }
        }
    }

    /// The logical id of a resource the server returned (its body's `id`, else its Location).
    static func resourceID(body: Data, location: String?, type: String) -> String? {
        if let object = (try? JSONParser.parse(body))?.object, object["resourceType"]?.string == type,
           let id = object["id"]?.string, !id.isEmpty {
            return id
        }
        guard let location else { return nil }
        let parts = location.split(separator: "/").map(String.init)
        guard let index = parts.lastIndex(of: type), index + 1 < parts.count else { return nil }
        return parts[index + 1]
    }
}
