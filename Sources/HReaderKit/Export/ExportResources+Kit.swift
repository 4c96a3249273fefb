import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderRecords
import HReaderStore

/// The parts of the export's FHIR that need Kit: a stored document (HReaderStore's `StoredDocument`) as a
/// DocumentReference, and the reading of the server's answers, whose errors are `HReaderError`s.
/// The Patient, the Observations and the Bundles are HReaderRecords' (`ExportResources`).
extension ExportResources {
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
