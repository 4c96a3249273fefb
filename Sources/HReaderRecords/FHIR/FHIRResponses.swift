import Foundation
import HReaderJSON
import HReaderModel

/// What a FHIR client needs to know of one response body before going on: its type, the Bundle's
/// `next` link, and an OperationOutcome's message.
public struct FHIRPageInfo: Sendable, Equatable {
    public var resourceType: String
    public var next: String?
    public var total: Int?
    /// Entries that are records (OperationOutcome entries not counted).
    public var entryCount: Int
    /// An OperationOutcome's issues as one readable line (also for outcomes inside a searchset).
    public var outcome: String?
    /// Whether an OperationOutcome holds an issue of severity error or fatal.
    public var outcomeIsError: Bool
    /// OperationOutcome issue codes (`not-supported`, `not-found`, …).
    public var outcomeCodes: [String]
    /// A Bundle's OperationOutcome entries, one line each (warnings beside the results, not records).
    public var entryOutcomes: [String]
}

/// FHIR responses gathered page by page (a searchset, `$everything`, per-type searches) and mapped
/// together at the end, so that entries on later pages join the Patient of the first.
public struct FHIRResponseSet: Sendable {
    private(set) var input = FHIRInput()
    public private(set) var pages = 0
    public private(set) var resourceCount = 0

    /// What the server said alongside its results (OperationOutcome entries of a searchset, such as
    /// "_count capped at 20"), each once, in the order first seen.
    public private(set) var warnings: [String] = []

    public init() {}

    /// Reads one response body. Throws `RecordsError.malformed` for JSON that cannot be read.
    /// OperationOutcome entries of a Bundle are warnings, not records: they are kept out of the input.
    @discardableResult
    public mutating func add(_ data: Data, what: String) throws -> FHIRPageInfo {
        let object = try Self.object(data, what: what)
        let info = try Self.info(object, what: what)
        if info.resourceType != "OperationOutcome" {
            let before = input.resources.count
            try input.add(info.resourceType == "Bundle" ? Self.withoutOutcomes(object) : object, path: what, fullUrl: nil)
            resourceCount += input.resources.count - before
            for warning in info.entryOutcomes where !warnings.contains(warning) { warnings.append(warning) }
        }
        pages += 1
        return info
    }

    /// Leaves these resources (indices in the order read) out of what `map` maps.
    mutating func removeResources(at indices: Set<Int>) {
        input.removeResources(at: indices)
    }

    /// `system|value` of every identifier on the resources of `type` read so far (for lookups).
    public func identifierTokens(ofType type: String) -> Set<String> {
        var tokens: Set<String> = []
        for resource in input.resources where resource.type == type {
            for identifier in resource.object["identifier"]?.array ?? [] {
                guard let identifier = identifier.object, let value = identifier["value"]?.string else { continue }
                tokens.insert("\(identifier["system"]?.string ?? "")|\(value)")
            }
        }
        return tokens
    }

    /// The Bundle without its `search.mode = outcome` entries and OperationOutcome resources.
    private static func withoutOutcomes(_ bundle: JSONObject) -> JSONObject {
        guard let entries = bundle["entry"]?.array else { return bundle }
        let kept = entries.filter { !isOutcomeEntry($0) }
        guard kept.count != entries.count else { return bundle }
        return JSONObject(bundle.members.map { $0.key == "entry" ? (key: "entry", value: .array(kept)) : $0 })
    }

    private static func isOutcomeEntry(_ entry: JSONValue) -> Bool {
        guard let entry = entry.object else { return false }
        return entry["search"]?.object?["mode"]?.string == "outcome"
            || entry["resource"]?.object?["resourceType"]?.string == "OperationOutcome"
    }

    public func map(zone: DayZone = .local) -> MappedBatch {
        FHIRMapper(zone: zone).map(input)
    }

    /// Reads a body for its page information only (errors, capability statements, writes).
    public static func inspect(_ data: Data, what: String) throws -> FHIRPageInfo {
        try info(object(data, what: what), what: what)
    }

    private static func object(_ data: Data, what: String) throws -> JSONObject {
        let json = try JSONParser.parse(data, what: what, duplicateNames: .refused)
        guard let object = json.object else {
            throw RecordsError.malformed("\(what) is \(json.kindDescription), expected a FHIR resource (an object)")
        }
        return object
    }

    private static func info(_ object: JSONObject, what: String) throws -> FHIRPageInfo {
        guard let type = object["resourceType"]?.string, !type.isEmpty else {
            throw RecordsError.malformed("\(what) has no resourceType: not a FHIR resource")
        }
        var info = FHIRPageInfo(resourceType: type, next: nil, total: nil, entryCount: 0, outcome: nil, outcomeIsError: false, outcomeCodes: [],
                                entryOutcomes: [])
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
            // A searchset may carry warnings as OperationOutcome entries with search.mode "outcome".
            for entry in entries where isOutcomeEntry(entry) {
                guard let resource = entry.object?["resource"]?.object, resource["resourceType"]?.string == "OperationOutcome" else { continue }
                let (text, isError, codes) = outcome(resource)
                if let text { info.entryOutcomes.append(text) }
                info.outcomeIsError = info.outcomeIsError || isError
                info.outcomeCodes += codes
            }
            info.entryCount = entries.count - entries.filter(isOutcomeEntry).count
            if !info.entryOutcomes.isEmpty { info.outcome = info.entryOutcomes.joined(separator: "; ") }
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

/// What a server's CapabilityStatement (`GET [base]/metadata`) says that hreader needs: which
/// resource types it serves, what it allows on each (read, search, create, conditional create),
/// by which parameters a type is searched, and whether it takes transaction or batch Bundles.
public struct FHIRCapability: Sendable, Equatable {
    public static let everythingDefinition = "http://hl7.org/fhir/OperationDefinition/Patient-everything"

    /// One `rest.resource`.
    public struct Resource: Sendable, Equatable {
        /// `read`, `search-type`, `create`, `update`, … A resource that lists none is taken to allow
        /// `read` and `search-type` only (listing a type at least means it can be read).
        public var interactions: Set<String>
        /// The search parameters' names; empty when the statement lists none.
        public var searchParameters: Set<String>
        public var conditionalCreate: Bool
    }

    public var fhirVersion: String
    public var software: String?
    /// Declared `Patient/$everything`, by name or by its canonical definition (servers that do not
    /// declare it may still support it).
    public var declaresEverything: Bool
    public var resourceTypes: [String]
    public var resources: [String: Resource]
    /// `rest.interaction`: `transaction`, `batch`, `search-system`, …
    public var systemInteractions: Set<String>
    /// SMART's endpoints from `rest.security`'s oauth-uris extension, by name (`authorize`,
    /// `token`, `revoke`, …); empty when the statement declares none.
    public var oauthURIs: [String: String] = [:]

    public static let oauthURIsExtension = "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris"

    /// R4 is 4.0.x; R4B (4.3) reads the same for what hreader imports.
    public var isR4: Bool { fhirVersion.hasPrefix("4.0") || fhirVersion.hasPrefix("4.3") }

    public func allows(_ interaction: String, on type: String) -> Bool {
        resources[type]?.interactions.contains(interaction) ?? false
    }

    public func allowsConditionalCreate(on type: String) -> Bool {
        allows("create", on: type) && resources[type]?.conditionalCreate == true
    }

    /// The parameter that finds a patient's resources of `type`: `patient`, else `subject`; nil when
    /// the type cannot be searched or declares parameters without either. A type that lists no
    /// parameters at all is tried with `patient`.
    public func patientSearchParameter(for type: String) -> String? {
        guard let resource = resources[type], resource.interactions.contains("search-type") else { return nil }
        if resource.searchParameters.isEmpty || resource.searchParameters.contains("patient") { return "patient" }
        return resource.searchParameters.contains("subject") ? "subject" : nil
    }

    public static func parse(_ data: Data, what: String) throws -> FHIRCapability {
        let json = try JSONParser.parse(data, what: what, duplicateNames: .refused)
        guard let object = json.object, object["resourceType"]?.string == "CapabilityStatement" else {
            throw RecordsError.malformed("\(what) is not a CapabilityStatement")
        }
        var capability = FHIRCapability(fhirVersion: object["fhirVersion"]?.string ?? "unknown",
                                        software: object["software"]?.object?["name"]?.string,
                                        declaresEverything: false, resourceTypes: [], resources: [:], systemInteractions: [])
        func names(_ value: JSONValue?, _ key: String) -> [String] {
            (value?.array ?? []).compactMap { $0.object?[key]?.string }
        }
        func declaresEverything(_ operations: JSONValue?) -> Bool {
            (operations?.array ?? []).contains { operation in
                let operation = operation.object
                return operation?["name"]?.string == "everything" || operation?["definition"]?.string == everythingDefinition
            }
        }
        // Only the server side counts: a `client` rest says what the software asks of others.
        for rest in object["rest"]?.array ?? [] where rest.object?["mode"]?.string != "client" {
            let rest = rest.object
            for resource in rest?["resource"]?.array ?? [] {
                guard let resource = resource.object, let type = resource["type"]?.string else { continue }
                let interactions = Set(names(resource["interaction"], "code"))
                capability.resourceTypes.append(type)
                capability.resources[type] = Resource(
                    interactions: interactions.isEmpty ? ["read", "search-type"] : interactions,
                    searchParameters: Set(names(resource["searchParam"], "name")),
                    conditionalCreate: resource["conditionalCreate"]?.bool ?? false)
                if type == "Patient", declaresEverything(resource["operation"]) { capability.declaresEverything = true }
            }
            if declaresEverything(rest?["operation"]) { capability.declaresEverything = true }
            capability.systemInteractions.formUnion(names(rest?["interaction"], "code"))
            for uris in rest?["security"]?.object?["extension"]?.array ?? [] where uris.object?["url"]?.string == oauthURIsExtension {
                for uri in uris.object?["extension"]?.array ?? [] {
                    guard let name = uri.object?["url"]?.string, let value = uri.object?["valueUri"]?.string ?? uri.object?["valueUrl"]?.string,
                          capability.oauthURIs[name] == nil else { continue }
                    capability.oauthURIs[name] = value
                }
            }
        }
        return capability
    }
}
