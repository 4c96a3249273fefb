import HReaderJSON

/// The FHIR resources, in memory. `FHIRStoreState` holds the data and its indexes; `FHIRStore`
/// guards it with one lock, so every operation (a whole transaction too) is atomic.

/// A failure that becomes an OperationOutcome.
struct FHIRError: Error {
    let status: Int
    let code: String  // an IssueType code: not-found, invalid, processing…
    let diagnostics: String

    static func notFound(_ text: String) -> FHIRError { FHIRError(status: 404, code: "not-found", diagnostics: text) }
    static func invalid(_ text: String) -> FHIRError { FHIRError(status: 400, code: "invalid", diagnostics: text) }
}

enum FHIRTypes {
    /// Types the server knows; any other type in a URL is a 404.
    static let prefixes: [String: String] = [
        "Patient": "p", "Observation": "obs", "Condition": "cond", "AllergyIntolerance": "allergy",
        "MedicationRequest": "medreq", "MedicationStatement": "medstmt", "Encounter": "enc",
        "Immunization": "imm", "Procedure": "proc", "DiagnosticReport": "dr", "CarePlan": "careplan",
        "Practitioner": "pract", "Organization": "org", "Medication": "med", "Goal": "goal",
        "DocumentReference": "doc", "Location": "loc", "Device": "device", "Provenance": "prov", "Binary": "bin",
    ]
    static let all: [String] = prefixes.keys.sorted()

    static func isKnown(_ type: String) -> Bool { prefixes[type] != nil }

    /// The patient a resource belongs to: `subject` or `patient` (AllergyIntolerance, Immunization).
    static func patientID(of resource: JSONValue) -> String? {
        for field in ["subject", "patient"] {
            if let reference = resource[field]?["reference"]?.string, reference.hasPrefix("Patient/") {
                let id = reference.dropFirst("Patient/".count)
                if !id.isEmpty, !id.contains("/") { return String(id) }
            }
        }
        return nil
    }
}

struct Identifier: Sendable {
    let system: String?
    let value: String?

    static func all(in resource: JSONValue) -> [Identifier] {
        (resource["identifier"]?.array ?? []).map { Identifier(system: $0["system"]?.string, value: $0["value"]?.string) }
    }

    /// A token search: `system|value`, `|value` (no system), `system|` (any value), or `value`.
    func matches(token: String) -> Bool {
        guard let bar = token.firstIndex(of: "|") else { return value == token }
        let wantedSystem = String(token[..<bar])
        let wantedValue = String(token[token.index(after: bar)...])
        if wantedSystem.isEmpty { return system == nil && value == wantedValue }
        if wantedValue.isEmpty { return system == wantedSystem }
        return system == wantedSystem && value == wantedValue
    }
}

struct ResourceKey: Hashable, Sendable {
    let type: String
    let id: String
}

struct StoredResource: Sendable {
    let type: String
    let id: String
    let version: Int
    let lastUpdated: String
    let json: JSONValue
    let patientID: String?
    let identifiers: [Identifier]
    /// Insertion order across all types, kept when a resource is updated.
    let sequence: Int

    var key: ResourceKey { ResourceKey(type: type, id: id) }
    var etag: String { "W/\"\(version)\"" }
}

enum ReadResult {
    case found(StoredResource)
    case gone
    case notFound
}

struct SearchPage {
    let total: Int
    let resources: [StoredResource]
}

private struct TypeTable {
    var resources: [String: StoredResource] = [:]
    var order: [String] = []  // ids in insertion order
    var deleted: Set<String> = []
    var nextNumber = 1
}

struct FHIRStoreState {
    private var tables: [String: TypeTable] = [:]
    /// Patient id → the resources that name it, in insertion order: $everything and `patient=`
    /// searches must not scan every resource when benchmarks hold a hundred thousand.
    private var compartments: [String: [(sequence: Int, key: ResourceKey)]] = [:]
    private var nextSequence = 0

    // MARK: Reading

    func read(type: String, id: String) -> ReadResult {
        if let resource = tables[type]?.resources[id] { return .found(resource) }
        if tables[type]?.deleted.contains(id) == true { return .gone }
        return .notFound
    }

    func resource(_ key: ResourceKey) -> StoredResource? { tables[key.type]?.resources[key.id] }

    /// Every match, in the order results are served.
    func search(type: String, parameters: [(name: String, value: String)]) -> [StoredResource] {
        let query = SearchQuery(type: type, parameters: parameters)
        let table = tables[type] ?? TypeTable()
        let candidates: [StoredResource]
        if let patients = query.patientIDs {
            let items = patients.flatMap { compartments[$0] ?? [] }
                .filter { $0.key.type == type }
                .sorted { $0.sequence < $1.sequence }
            candidates = items.compactMap { table.resources[$0.key.id] }
        } else if let ids = query.ids {
            candidates = ids.compactMap { table.resources[$0] }.sorted { $0.sequence < $1.sequence }
        } else {
            candidates = table.order.compactMap { table.resources[$0] }
        }
        var matches = candidates.filter(query.matches)
        if type == "Patient" { matches.sort { $0.id < $1.id } }
        return matches
    }

    func search(type: String, parameters: [(name: String, value: String)], offset: Int, count: Int) -> SearchPage {
        let matches = search(type: type, parameters: parameters)
        return SearchPage(total: matches.count, resources: Self.slice(matches, offset: offset, count: count))
    }

    /// The patient, then everything in its compartment; nil for an unknown patient.
    func everything(patientID: String, offset: Int, count: Int) -> SearchPage? {
        guard let patient = tables["Patient"]?.resources[patientID] else { return nil }
        let items = compartments[patientID] ?? []
        let total = 1 + items.count
        var page: [StoredResource] = []
        var index = offset
        while index < total, page.count < count {
            if index == 0 {
                page.append(patient)
            } else if let resource = resource(items[index - 1].key) {
                page.append(resource)
            }
            index += 1
        }
        return SearchPage(total: total, resources: page)
    }

    static func slice(_ items: [StoredResource], offset: Int, count: Int) -> [StoredResource] {
        guard offset < items.count else { return [] }
        return Array(items[offset..<min(items.count, offset + count)])
    }

    // MARK: Writing

    /// A fresh server id such as `obs-12` (never one in use or deleted).
    mutating func newID(type: String) -> String {
        let prefix = FHIRTypes.prefixes[type] ?? type.lowercased()
        var table = tables[type] ?? TypeTable()
        defer { tables[type] = table }
        while true {
            let candidate = prefix == "p" ? "p\(table.nextNumber)" : "\(prefix)-\(table.nextNumber)"
            table.nextNumber += 1
            if table.resources[candidate] == nil, !table.deleted.contains(candidate) { return candidate }
        }
    }

    /// Stores `json` under type/id (creating or replacing), stamping id and meta.
    @discardableResult
    mutating func put(type: String, id: String, json: JSONValue, lastUpdated: String) -> (resource: StoredResource, created: Bool) {
        var table = tables[type] ?? TypeTable()
        tables[type] = nil  // mutate the table in place rather than a copy
        defer { tables[type] = table }

        let previous = table.resources[id]
        let version = (previous?.version ?? 0) + 1
        let sequence = previous?.sequence ?? nextSequence
        if previous == nil {
            nextSequence += 1
            table.order.append(id)
            table.deleted.remove(id)
        }
        let stamped = Self.stamp(json, id: id, version: version, lastUpdated: lastUpdated)
        let resource = StoredResource(
            type: type, id: id, version: version, lastUpdated: lastUpdated, json: stamped,
            patientID: type == "Patient" ? nil : FHIRTypes.patientID(of: stamped),
            identifiers: Identifier.all(in: stamped), sequence: sequence)
        table.resources[id] = resource

        if previous?.patientID != resource.patientID {
            if let old = previous?.patientID { removeFromCompartment(old, key: resource.key) }
            if let new = resource.patientID { insertIntoCompartment(new, key: resource.key, sequence: sequence) }
        }
        return (resource, previous == nil)
    }

    /// True when something was deleted; false when it already was.
    mutating func delete(type: String, id: String) throws(FHIRError) -> Bool {
        guard var table = tables[type] else { throw .notFound("\(type)/\(id) is not known") }
        if table.deleted.contains(id) { return false }
        guard let resource = table.resources.removeValue(forKey: id) else { throw .notFound("\(type)/\(id) is not known") }
        tables[type] = nil
        table.order.removeAll { $0 == id }
        table.deleted.insert(id)
        tables[type] = table
        if let patient = resource.patientID { removeFromCompartment(patient, key: resource.key) }
        return true
    }

    private mutating func insertIntoCompartment(_ patient: String, key: ResourceKey, sequence: Int) {
        var items = compartments.removeValue(forKey: patient) ?? []
        if let last = items.last, last.sequence > sequence {
            let position = items.firstIndex { $0.sequence > sequence } ?? items.count
            items.insert((sequence, key), at: position)
        } else {
            items.append((sequence, key))
        }
        compartments[patient] = items
    }

    private mutating func removeFromCompartment(_ patient: String, key: ResourceKey) {
        compartments[patient]?.removeAll { $0.key == key }
    }

    /// resourceType, id and meta first, then the resource's own members in their order.
    static func stamp(_ json: JSONValue, id: String, version: Int, lastUpdated: String) -> JSONValue {
        guard case .object(let original) = json else { return json }
        var meta = original["meta"]?.object ?? JSONObject()
        meta["versionId"] = .string(String(version))
        meta["lastUpdated"] = .string(lastUpdated)
        var members: [(key: String, value: JSONValue)] = [
            ("resourceType", original["resourceType"] ?? .null), ("id", .string(id)), ("meta", .object(meta)),
        ]
        members.reserveCapacity(original.members.count + 3)
        for member in original.members {
            let key = member.key
            if key != "resourceType" && key != "id" && key != "meta" { members.append(member) }
        }
        return .object(JSONObject(members))
    }
}

/// Search parameters read once. Unknown parameters are ignored, as lenient servers do.
private struct SearchQuery {
    let type: String
    var ids: [String]?
    var patientIDs: [String]?
    var predicates: [(StoredResource) -> Bool] = []

    init(type: String, parameters: [(name: String, value: String)]) {
        self.type = type
        for (rawName, value) in parameters {
            let parts = rawName.split(separator: ":", maxSplits: 1)
            let name = parts.first.map(String.init) ?? rawName
            let modifier = parts.count > 1 ? String(parts[1]) : nil
            let values = Self.alternatives(value)
            guard !values.isEmpty else { continue }
            switch (name, type) {
            case ("_id", _):
                ids = ids.map { $0.filter(values.contains) } ?? values
                predicates.append { values.contains($0.id) }
            case ("identifier", _):
                predicates.append { resource in values.contains { token in resource.identifiers.contains { $0.matches(token: token) } } }
            case ("family", "Patient"), ("given", "Patient"), ("name", "Patient"):
                let fields = name == "name" ? ["family", "given", "text"] : [name]
                predicates.append { resource in
                    let texts = Self.nameParts(resource.json, fields: fields)
                    return values.contains { wanted in texts.contains { Self.stringMatches($0, wanted, modifier: modifier) } }
                }
            case ("birthdate", "Patient"):
                let dates = values.map { $0.hasPrefix("eq") ? String($0.dropFirst(2)) : $0 }
                predicates.append { dates.contains($0.json["birthDate"]?.string ?? "") }
            case ("gender", "Patient"):
                predicates.append { values.contains($0.json["gender"]?.string ?? "") }
            case ("patient", _) where type != "Patient", ("subject", _) where type != "Patient":
                // `patient=ID`, `subject=Patient/ID` or `subject=ID`.
                let wanted = values.map { $0.hasPrefix("Patient/") ? String($0.dropFirst("Patient/".count)) : $0 }
                patientIDs = patientIDs.map { $0.filter(wanted.contains) } ?? wanted
                predicates.append { resource in resource.patientID.map(wanted.contains) ?? false }
            default:
                continue
            }
        }
    }

    func matches(_ resource: StoredResource) -> Bool { predicates.allSatisfy { $0(resource) } }

    /// A comma means OR; `\,` is a comma inside a value and `\\` a backslash (FHIR's escaping).
    static func alternatives(_ value: String) -> [String] {
        var values: [String] = []
        var current = ""
        var escaped = false
        for character in value {
            if escaped {
                if character != "," && character != "\\" { current.append("\\") }
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "," {
                if !current.isEmpty { values.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if escaped { current.append("\\") }
        if !current.isEmpty { values.append(current) }
        return values
    }

    private static func nameParts(_ patient: JSONValue, fields: [String]) -> [String] {
        var texts: [String] = []
        for name in patient["name"]?.array ?? [] {
            for field in fields {
                switch name[field] {
                case .string(let s)?: texts.append(s)
                case .array(let items)?: texts += items.compactMap(\.string)
                default: break
                }
            }
        }
        return texts
    }

    /// FHIR string search: case-insensitive prefix by default, `:exact` and `:contains` modifiers.
    private static func stringMatches(_ text: String, _ wanted: String, modifier: String?) -> Bool {
        switch modifier {
        case "exact": return text == wanted
        case "contains": return text.lowercased().contains(wanted.lowercased())
        default: return text.lowercased().hasPrefix(wanted.lowercased())
        }
    }
}

/// The one lock around the store.
final class FHIRStore: Sendable {
    private let state: LockedBox<FHIRStoreState>

    init(_ state: FHIRStoreState = FHIRStoreState()) { self.state = LockedBox(state) }

    func withState<T>(_ body: (inout FHIRStoreState) throws(FHIRError) -> T) throws(FHIRError) -> T {
        try state.withLock { (state) throws(FHIRError) -> T in try body(&state) }
    }

    /// A consistent view for reads (searches copy out only the page they serve).
    func reading<T>(_ body: (FHIRStoreState) -> T) -> T { state.withLock { body($0) } }
}
