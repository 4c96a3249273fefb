import Foundation

/// What a FHIR client needs to know of one response body before going on: its type, the Bundle's
/// `next` link, and an OperationOutcome's message.
public struct FHIRPageInfo: Sendable, Equatable {
    public var resourceType: String
    public var next: String?
    public var total: Int?
    public var entryCount: Int
    /// An OperationOutcome's issues as one readable line (also for outcomes inside a searchset).
    public var outcome: String?
    /// Whether an OperationOutcome holds an issue of severity error or fatal.
    public var outcomeIsError: Bool
    /// OperationOutcome issue codes (`not-supported`, `not-found`, …).
    public var outcomeCodes: [String]
}

/// FHIR responses gathered page by page (a searchset, `$everything`, per-type searches) and mapped
/// together at the end, so that entries on later pages join the Patient of the first.
public struct FHIRResponseSet: Sendable {
    private var input = FHIRInput()
    public private(set) var pages = 0
    public private(set) var resourceCount = 0

    public init() {}

    /// Reads one response body. Throws `RecordsError.malformed` for JSON that cannot be read.
    @discardableResult
    public mutating func add(_ data: Data, what: String) throws -> FHIRPageInfo {
        let object = try Self.object(data, what: what)
        let info = try Self.info(object, what: what)
        if info.resourceType != "OperationOutcome" {
            let before = input.resources.count
            try input.add(object, path: what, fullUrl: nil)
            resourceCount += input.resources.count - before
        }
        pages += 1
        return info
    }

    public func map(timeZone: TimeZone = .current) -> MappedBatch {
        FHIRMapper(timeZone: timeZone).map(input)
    }

    /// Reads a body for its page information only (errors, capability statements, writes).
    public static func inspect(_ data: Data, what: String) throws -> FHIRPageInfo {
        try info(object(data, what: what), what: what)
    }

    private static func object(_ data: Data, what: String) throws -> JSONObject {
        let json = try JSONParser.parse(data, what: what)
        guard let object = json.object else {
            throw RecordsError.malformed("\(what) is \(json.kindDescription), expected a FHIR resource (an object)")
        }
        return object
    }

    private static func info(_ object: JSONObject, what: String) throws -> FHIRPageInfo {
        guard let type = object["resourceType"]?.string, !type.isEmpty else {
            throw RecordsError.malformed("\(what) has no resourceType: not a FHIR resource")
        }
        var info = FHIRPageInfo(resourceType: type, next: nil, total: nil, entryCount: 0, outcome: nil, outcomeIsError: false, outcomeCodes: [])
        if type == "OperationOutcome" {
            (info.outcome, info.outcomeIsError, info.outcomeCodes) = outcome(object)
        }
        guard type == "Bundle" else { return info }
        info.total = object["total"]?.number.map { Int($0) }
        if let links = object["link"]?.array {
            for link in links {
                guard let link = link.object, link["relation"]?.string == "next", let url = link["url"]?.string, !url.isEmpty else { continue }
                info.next = url
            }
        }
        if let entries = object["entry"]?.array {
            info.entryCount = entries.count
            // A searchset may carry warnings as OperationOutcome entries with search.mode "outcome".
            for entry in entries {
                guard let resource = entry.object?["resource"]?.object, resource["resourceType"]?.string == "OperationOutcome" else { continue }
                let (text, isError, codes) = outcome(resource)
                info.outcome = [info.outcome, text].compactMap { $0 }.joined(separator: "; ")
                info.outcomeIsError = info.outcomeIsError || isError
                info.outcomeCodes += codes
            }
        }
        return info
    }

    /// "error not-supported: Operation $everything not supported; warning …", at most 300 characters.
    private static func outcome(_ object: JSONObject) -> (String?, Bool, [String]) {
        var parts: [String] = []
        var isError = false
        var codes: [String] = []
        for issue in object["issue"]?.array ?? [] {
            guard let issue = issue.object else { continue }
            let severity = issue["severity"]?.string ?? "error"
            if severity == "error" || severity == "fatal" { isError = true }
            if let code = issue["code"]?.string { codes.append(code) }
            let text = issue["diagnostics"]?.string ?? issue["details"]?.object?["text"]?.string
                ?? issue["details"]?.object?["coding"]?.array?.first?.object?["display"]?.string
            parts.append([severity == "error" ? nil : severity, issue["code"]?.string, text].compactMap { $0 }.joined(separator: " "))
        }
        let line = parts.filter { !$0.isEmpty }.joined(separator: "; ")
            .replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
        if line.isEmpty { return (nil, isError, codes) }
        return (line.count > 300 ? String(line.prefix(300)) + "…" : line, isError, codes)
    }
}

/// What a server's CapabilityStatement (`GET [base]/metadata`) says that hreader needs.
public struct FHIRCapability: Sendable, Equatable {
    public var fhirVersion: String
    public var software: String?
    /// Declared `Patient/$everything` (servers that do not declare it may still support it).
    public var declaresEverything: Bool
    public var resourceTypes: [String]

    /// R4 is 4.0.x; R4B (4.3) reads the same for what hreader imports.
    public var isR4: Bool { fhirVersion.hasPrefix("4.0") || fhirVersion.hasPrefix("4.3") }

    public static func parse(_ data: Data, what: String) throws -> FHIRCapability {
        let json = try JSONParser.parse(data, what: what)
        guard let object = json.object, object["resourceType"]?.string == "CapabilityStatement" else {
            throw RecordsError.malformed("\(what) is not a CapabilityStatement")
        }
        var capability = FHIRCapability(fhirVersion: object["fhirVersion"]?.string ?? "unknown",
                                        software: object["software"]?.object?["name"]?.string,
                                        declaresEverything: false, resourceTypes: [])
        for rest in object["rest"]?.array ?? [] {
            for resource in rest.object?["resource"]?.array ?? [] {
                guard let resource = resource.object, let type = resource["type"]?.string else { continue }
                capability.resourceTypes.append(type)
                if type == "Patient", (resource["operation"]?.array ?? []).contains(where: { $0.object?["name"]?.string == "everything" }) {
                    capability.declaresEverything = true
                }
            }
            if (rest.object?["operation"]?.array ?? []).contains(where: { $0.object?["name"]?.string == "everything" }) {
                capability.declaresEverything = true
            }
        }
        return capability
    }
}
