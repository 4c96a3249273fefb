import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel

/// The FHIR R4 JSON that `hreader export` sends: the Patient, the Observations and the transaction
/// or batch Bundles around them. HReaderKit adds what needs the vault's types or its errors: a stored
/// document as a DocumentReference, and the reading of the server's transaction- or batch-response.
package enum ExportResources {
    package static let loincSystem = "http://loinc.org"
    package static let ucumSystem = "http://unitsofmeasure.org"
    package static let categorySystem = "http://terminology.hl7.org/CodeSystem/observation-category"
    package static let categoryDisplays = [
        "vital-signs": "Vital Signs", "activity": "Activity", "laboratory": "Laboratory", "survey": "Survey",
        "exam": "Exam", "social-history": "Social History", "procedure": "Procedure", "therapy": "Therapy", "imaging": "Imaging",
    ]

    // MARK: Patient

    /// The identifier hreader gives a patient on every server: its local uuid.
    package static func patientIdentifier(_ patient: Patient) -> ObservationDraft.Identifier {
        .init(system: ObservationDraft.patientSystem, value: patient.uuid)
    }

    /// A Patient with hreader's identifier, the name, gender and birth date of the vault.
    package static func patient(_ patient: Patient) -> JSONValue {
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
    package static func fhirGender(_ text: String?) -> String? {
        switch text?.trimmingCharacters(in: .whitespaces).lowercased() {
        case "male"?, "m"?: "male"
        case "female"?, "f"?: "female"
        case "other"?: "other"
        case "unknown"?: "unknown"
        default: nil
        }
    }

    /// YYYY, YYYY-MM or YYYY-MM-DD.
    package static func isFHIRDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts[0].count == 4, parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }) else { return false }
        let numbers = parts.compactMap { Int($0) }
        return numbers[0] >= 1 && (numbers.count < 2 || (1...12).contains(numbers[1]))
            && (numbers.count < 3 || (1...31).contains(numbers[2]))
    }

    // MARK: Observation

    package static func observation(_ draft: ObservationDraft, subject: String) -> JSONValue {
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

    package static func coding(_ system: String, _ code: String, display: String?) -> JSONValue {
        var members: JSONObject = [("system", .string(system)), ("code", .string(code))]
        if let display, !display.isEmpty { members.append(("display", .string(display))) }
        return .object(members)
    }

    package static func quantity(_ quantity: ObservationDraft.Quantity) -> JSONValue {
        var members: JSONObject = [("value", .double(quantity.value))]
        if !quantity.unit.isEmpty { members.append(("unit", .string(quantity.unit))) }
        if let ucum = quantity.ucum { members.append(contentsOf: [("system", .string(ucumSystem)), ("code", .string(ucum))]) }
        return .object(members)
    }

    // MARK: Bundles

    /// One entry of a transaction or batch Bundle: a conditional create (or, without the
    /// condition, one plain `POST`).
    package struct Create {
        package var fullURL: String
        package var type: String
        package var resource: JSONValue
        package var identifier: ObservationDraft.Identifier

        package init(fullURL: String, type: String, resource: JSONValue, identifier: ObservationDraft.Identifier) {
            self.fullURL = fullURL; self.type = type; self.resource = resource; self.identifier = identifier
        }
    }

    package static func create(_ draft: ObservationDraft, subject: String) -> Create {
        Create(fullURL: fullURL(for: "Observation " + draft.identifier.token), type: "Observation",
               resource: observation(draft, subject: subject), identifier: draft.identifier)
    }

    package static func create(_ patient: Patient) -> Create {
        let identifier = patientIdentifier(patient)
        return Create(fullURL: fullURL(for: "Patient " + identifier.token), type: "Patient", resource: self.patient(patient), identifier: identifier)
    }

    package static func transaction(_ creates: [Create]) -> JSONValue { bundle(creates, type: "transaction") }

    /// A `transaction` or `batch` Bundle of conditional creates.
    package static func bundle(_ creates: [Create], type: String) -> JSONValue {
        .object([
            ("resourceType", .string("Bundle")),
            ("type", .string(type)),
            ("entry", .array(creates.map(bundleEntry))),
        ])
    }

    package static func bundleEntry(_ create: Create) -> JSONValue {
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
    package struct TransactionWriter {
        private var buffer: [UInt8] = []
        private var count = 0
        private let sink: ([UInt8]) throws -> Void

        package init(sink: @escaping ([UInt8]) throws -> Void) {
            self.sink = sink
            buffer += "{\n  \"resourceType\": \"Bundle\",\n  \"type\": \"transaction\",\n  \"entry\": [".utf8
        }

        package mutating func add(_ create: Create) throws {
            if count > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer += "\n    ".utf8
            bundleEntry(create).appendSerialized(to: &buffer, pretty: true, level: 2)
            count += 1
            if buffer.count >= 1 << 20 { try flush() }
        }

        package mutating func finish() throws {
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
    package static func ifNoneExist(_ identifier: ObservationDraft.Identifier) -> String {
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
    package static func fullURL(for key: String) -> String {
        var bytes = Array(SHA256.hash(Array(("hreader export " + key).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return "urn:uuid:" + Hex.uuid(bytes)
    }
}
