import HReaderJSON

/// The resources of a FHIR input, taken out of their Bundles, each with where it was found.
struct FHIRInput {
    struct Resource {
        fileprivate(set) var object: JSONObject
        let type: String
        /// Where it was found, for messages: `Bundle.entry[3].resource`, `NDJSON line 2`.
        let path: String
        /// Its Bundle entry's fullUrl, by which other entries of the Bundle may reference it.
        let fullUrl: String?
        /// Which file of the input it came from (`FHIRMapper.FileInput`; 0 for one document).
        let file: Int

        var reader: JSONReader {
            JSONReader(object, resourceAt: path, type: type, id: object["id"]?.string)
        }
    }

    private(set) var resources: [Resource] = []
    /// The file the resources added now come from.
    var file = 0
    /// Bundle entries without a resource (a transaction's DELETE, a search entry with only a URL).
    private(set) var skipped: [Skip] = []
    /// Medication resources by `Medication/<id>` and by fullUrl.
    private(set) var medications: [String: JSONObject] = [:]
    /// Entries that are no FHIR resource (a CDA section's narrative), by the `Patient/<id>` they belong to.
    var notes: [(patient: String, entry: MappedEntry)] = []

    /// Adds a resource; a Bundle adds its entries' resources instead, recursively.
    mutating func add(_ object: JSONObject, path: String, fullUrl: String?) throws {
        guard let typeValue = object.present("resourceType") else {
            throw RecordsError.malformed("\(path) has no resourceType")
        }
        guard let type = typeValue.string.flatMap(nonEmpty) else {
            throw RecordsError.malformed("\(path).resourceType is \(typeValue.kindDescription), expected a resource type name")
        }
        if type == "OperationOutcome" {
            // A search's warnings or a server's answer, not a record: said, never stored.
            skipped.append(Skip(kind: type, reason: "the server said: " + Self.issues(object)))
            return
        }
        guard type == "Bundle" else {
            resources.append(Resource(object: object, type: type, path: path, fullUrl: fullUrl, file: file))
            if type == "Medication" {
                if let id = object["id"]?.string { medications["Medication/\(id)"] = object }
                if let fullUrl { medications[fullUrl] = object }
            }
            return
        }
        guard let entryValue = object.present("entry") else { return }  // an empty Bundle
        guard let entries = entryValue.array else {
            throw RecordsError.malformed("\(path).entry is \(entryValue.kindDescription), expected an array")
        }
        for (i, item) in entries.enumerated() {
            let entryPath = "\(path).entry[\(i)]"
            guard let entry = item.object else {
                throw RecordsError.malformed("\(entryPath) is \(item.kindDescription), expected an object")
            }
            let entryURL = entry["fullUrl"]?.string.flatMap(nonEmpty)
            guard let resourceValue = entry.present("resource") else {
                var reason = "\(entryPath) has no resource"
                if let request = entry["request"]?.object, let method = request["method"]?.string {
                    reason += " (request: \(method) \(request["url"]?.string ?? ""))"
                }
                skipped.append(Skip(kind: "Bundle.entry", remoteID: entryURL, reason: reason))
                continue
            }
            guard let resource = resourceValue.object else {
                throw RecordsError.malformed("\(entryPath).resource is \(resourceValue.kindDescription), expected an object")
            }
            try add(resource, path: "\(entryPath).resource", fullUrl: entryURL)
        }
    }

    /// Lets go of a resource's content once it is mapped (its type, path and fullUrl stay).
    mutating func letGo(at index: Int) {
        resources[index].object = JSONObject()
    }

    /// Leaves these clinical resources (indices into `resources`) out. Medications are never about
    /// one patient, so `medications` stays as it is.
    mutating func removeResources(at indices: Set<Int>) {
        resources = resources.enumerated().filter { !indices.contains($0.offset) }.map(\.element)
    }

    /// An OperationOutcome's issues in one short line: "warning processing: _count capped at 20".
    static func issues(_ outcome: JSONObject) -> String {
        let parts = (outcome["issue"]?.array ?? []).compactMap(\.object).map { issue in
            [issue["severity"]?.string, issue["code"]?.string,
             issue["diagnostics"]?.string ?? issue["details"]?.object?["text"]?.string].compactMap { $0 }.joined(separator: " ")
        }.filter { !$0.isEmpty }
        let line = parts.isEmpty ? "an OperationOutcome without issues" : parts.joined(separator: "; ")
        let flat = String(line.map { $0.isNewline ? " " : $0 })
        return flat.count > 200 ? String(flat.prefix(200)) + "…" : flat
    }
}
