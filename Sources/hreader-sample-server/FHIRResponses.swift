import Foundation
import HReaderJSON
import NIOHTTP1

/// FHIR's JSON answers: resources, Bundles and OperationOutcomes (errors are never HTML).
enum FHIRResponse {
    static let contentType = "application/fhir+json; charset=utf-8"

    static func json(_ json: JSONValue, status: HTTPResponseStatus = .ok, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: contentType, body: json.serializedBytes(), headers: headers)
    }

    static func outcome(_ error: FHIRError, headers: [(String, String)] = []) -> HTTPResponse {
        json(
            operationOutcome(severity: "error", code: error.code, diagnostics: error.diagnostics),
            status: HTTPResponseStatus(statusCode: error.status), headers: headers)
    }

    static func operationOutcome(severity: String, code: String, diagnostics: String) -> JSONValue {
        [
            "resourceType": "OperationOutcome",
            "issue": [["severity": .string(severity), "code": .string(code), "diagnostics": .string(diagnostics)]],
        ]
    }

    static func newBundleID() -> String { UUID().uuidString.lowercased() }

    /// How a create or update answers, from `Prefer: return=…` (representation when absent).
    enum Return {
        case representation, minimal, operationOutcome

        init(prefer: String?) {
            let tokens = (prefer ?? "").lowercased().split(whereSeparator: { $0 == "," || $0 == ";" })
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if tokens.contains("return=minimal") {
                self = .minimal
            } else if tokens.contains("return=operationoutcome") {
                self = .operationOutcome
            } else {
                self = .representation
            }
        }
    }

    /// The answer to a create or update of `resource`.
    static func written(_ resource: StoredResource, status: HTTPResponseStatus, base: String, prefer: Return) -> HTTPResponse {
        let headers = [
            ("Location", "\(base)/\(resource.type)/\(resource.id)/_history/\(resource.version)"),
            ("ETag", resource.etag),
        ]
        switch prefer {
        case .representation:
            return json(resource.json, status: status, headers: headers)
        case .minimal:
            return HTTPResponse(status: status, headers: headers)
        case .operationOutcome:
            let verb = status == .created ? "Created" : "Found"
            let outcome = operationOutcome(
                severity: "information", code: "informational", diagnostics: "\(verb) \(resource.type)/\(resource.id)")
            return json(outcome, status: status, headers: headers)
        }
    }
}
