import HReaderJSON
import NIOHTTP1

/// `POST [base]` with a Bundle: a `transaction` is all or nothing (every entry is checked before
/// anything changes, and the whole run holds the store's lock); a `batch` runs entry by entry.
struct FHIRTransaction {
    let store: FHIRStore
    /// A batch entry this returns an error for fails on its own (the `batch-only` fault mode).
    var refuse: (JSONValue) -> FHIRError? = { _ in nil }

    private enum Action {
        case create(type: String, resource: JSONValue, condition: [(name: String, value: String)]?)
        case update(type: String, id: String, resource: JSONValue)
        case delete(type: String, id: String)
    }

    private struct Planned {
        let index: Int
        let fullUrl: String?
        let action: Action
    }

    /// What one entry did, for its `response`.
    private struct Outcome {
        let status: String
        let resource: StoredResource?
        var location: String? { resource.map { "\($0.type)/\($0.id)/_history/\($0.version)" } }
    }

    func run(request: HTTPRequest, base: FHIRBase, prefer: FHIRResponse.Return) -> HTTPResponse {
        do throws(FHIRError) {
            let bundle: JSONValue
            do {
                bundle = try JSONParser.parse(request.body)
            } catch {
                throw FHIRError.invalid("The body is not valid JSON: \(error)")
            }
            guard bundle["resourceType"]?.string == "Bundle" else {
                throw FHIRError.invalid("Only a Bundle of type transaction or batch can be POSTed to the base")
            }
            let entries = try Self.entries(of: bundle)
            switch bundle["type"]?.string {
            case "transaction":
                return try transaction(entries, base: base, prefer: prefer)
            case "batch":
                return batch(entries, base: base, prefer: prefer)
            default:
                throw FHIRError.invalid("A Bundle POSTed to the base must be of type transaction or batch")
            }
        } catch {
            return FHIRResponse.outcome(error)
        }
    }

    private static func entries(of bundle: JSONValue) throws(FHIRError) -> [JSONValue] {
        switch bundle["entry"] {
        case nil: return []
        case .array(let items)?: return items
        default: throw FHIRError.invalid("Bundle.entry is not an array")
        }
    }

    // MARK: Transaction

    private func transaction(_ entries: [JSONValue], base: FHIRBase, prefer: FHIRResponse.Return) throws(FHIRError) -> HTTPResponse {
        var planned: [Planned] = []
        for (index, entry) in entries.enumerated() {
            planned.append(try Self.plan(entry, index: index, base: base))
        }
        let outcomes = try store.withState { (state) throws(FHIRError) -> [Outcome] in try Self.apply(planned, to: &state) }
        return FHIRResponse.json(response(type: "transaction-response", outcomes: outcomes, base: base, prefer: prefer))
    }

    /// Conditions first (the only step that can still fail), then ids and references, then the
    /// writes in FHIR's order: deletes, creates, updates.
    private static func apply(_ planned: [Planned], to state: inout FHIRStoreState) throws(FHIRError) -> [Outcome] {
        var matched: [Int: StoredResource] = [:]
        for entry in planned {
            if case .create(let type, _, let condition?) = entry.action {
                do {
                    if let existing = try FHIRAPI.conditionalMatch(state, type: type, condition: condition) {
                        matched[entry.index] = existing
                    }
                } catch {
                    throw FHIRError(status: error.status, code: error.code, diagnostics: "Bundle.entry[\(entry.index)]: \(error.diagnostics)")
                }
            }
        }

        // Where each entry's fullUrl (often urn:uuid:…) now points.
        var newIDs: [Int: String] = [:]
        var references: [String: String] = [:]
        for entry in planned {
            let target: String?
            switch entry.action {
            case .create(let type, _, _):
                if let existing = matched[entry.index] {
                    target = "\(type)/\(existing.id)"
                } else {
                    let id = state.newID(type: type)
                    newIDs[entry.index] = id
                    target = "\(type)/\(id)"
                }
            case .update(let type, let id, _):
                target = "\(type)/\(id)"
            case .delete:
                target = nil
            }
            if let fullUrl = entry.fullUrl, let target { references[fullUrl] = target }
        }

        var outcomes: [Int: Outcome] = [:]
        let now = Clock.instant()
        for entry in planned {
            if case .delete(let type, let id) = entry.action {
                // Deleting what is not there is a no-op, not a failure that would undo the rest.
                _ = try? state.delete(type: type, id: id)
                outcomes[entry.index] = Outcome(status: "204 No Content", resource: nil)
            }
        }
        for entry in planned {
            guard case .create(let type, let resource, _) = entry.action else { continue }
            if let existing = matched[entry.index] {
                outcomes[entry.index] = Outcome(status: "200 OK", resource: existing)
            } else if let id = newIDs[entry.index] {
                let rewritten = rewriteReferences(resource, references)
                let stored = state.put(type: type, id: id, json: rewritten, lastUpdated: now).resource
                outcomes[entry.index] = Outcome(status: "201 Created", resource: stored)
            }
        }
        for entry in planned {
            guard case .update(let type, let id, let resource) = entry.action else { continue }
            let (stored, created) = state.put(type: type, id: id, json: rewriteReferences(resource, references), lastUpdated: now)
            outcomes[entry.index] = Outcome(status: created ? "201 Created" : "200 OK", resource: stored)
        }
        return planned.map { outcomes[$0.index] ?? Outcome(status: "200 OK", resource: nil) }
    }

    /// Replaces every `reference` that names another entry's fullUrl with `Type/id`.
    private static func rewriteReferences(_ json: JSONValue, _ references: [String: String]) -> JSONValue {
        guard !references.isEmpty else { return json }
        switch json {
        case .object(let object):
            var members: [(key: String, value: JSONValue)] = []
            members.reserveCapacity(object.members.count)
            for member in object.members {
                if member.key == "reference", let text = member.value.string, let target = references[text] {
                    members.append((member.key, .string(target)))
                } else {
                    members.append((member.key, rewriteReferences(member.value, references)))
                }
            }
            return .object(JSONObject(members))
        case .array(let items):
            return .array(items.map { rewriteReferences($0, references) })
        default:
            return json
        }
    }

    // MARK: Batch

    /// Entries succeed or fail on their own; a failure becomes that entry's outcome.
    private func batch(_ entries: [JSONValue], base: FHIRBase, prefer: FHIRResponse.Return) -> HTTPResponse {
        var responses: [JSONValue] = []
        for (index, entry) in entries.enumerated() {
            do throws(FHIRError) {
                if let refusal = refuse(entry) { throw refusal }
                let planned = try Self.plan(entry, index: index, base: base)
                let outcome = try store.withState { (state) throws(FHIRError) -> [Outcome] in
                    try Self.apply([Planned(index: 0, fullUrl: nil, action: planned.action)], to: &state)
                }
                responses.append(Self.responseEntry(outcome[0], base: base, prefer: prefer))
            } catch {
                let status = HTTPResponseStatus(statusCode: error.status)
                responses.append([
                    "response": [
                        "status": .string("\(status.code) \(status.reasonPhrase)"),
                        "outcome": FHIRResponse.operationOutcome(severity: "error", code: error.code, diagnostics: error.diagnostics),
                    ]
                ])
            }
        }
        return FHIRResponse.json(Self.bundle(type: "batch-response", entries: responses))
    }

    // MARK: Reading entries

    private static func plan(_ entry: JSONValue, index: Int, base: FHIRBase) throws(FHIRError) -> Planned {
        func fail(_ text: String) -> FHIRError { FHIRError.invalid("Bundle.entry[\(index)]: \(text)") }
        guard entry.object != nil else { throw fail("is not an object") }
        guard let method = entry["request"]?["method"]?.string else { throw fail("has no request.method") }
        guard let rawURL = entry["request"]?["url"]?.string else { throw fail("has no request.url") }
        var url = rawURL
        if url.hasPrefix(base.url + "/") { url.removeFirst(base.url.count + 1) }
        if url.hasPrefix("/") { url.removeFirst() }
        let parts = url.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let type = parts[0]
        guard FHIRTypes.isKnown(type) else { throw fail("unknown resource type '\(type)' in request.url") }
        let fullUrl = entry["fullUrl"]?.string

        func resource() throws(FHIRError) -> JSONValue {
            guard let resource = entry["resource"] else { throw fail("has no resource") }
            do {
                return try FHIRAPI.checkResource(resource, type: type)
            } catch {
                throw fail(error.diagnostics)
            }
        }

        switch method.uppercased() {
        case "POST":
            guard parts.count == 1 else { throw fail("POST needs request.url 'Type', got '\(rawURL)'") }
            let condition = entry["request"]?["ifNoneExist"]?.string.map { text in
                // ifNoneExist may carry the whole search URL; only its query matters.
                URLText.parseQuery(text.split(separator: "?", maxSplits: 1).last.map(String.init) ?? text)
            }
            return Planned(index: index, fullUrl: fullUrl, action: .create(type: type, resource: try resource(), condition: condition))
        case "PUT":
            guard parts.count == 2, FHIRAPI.isValidID(parts[1]) else { throw fail("PUT needs request.url 'Type/id', got '\(rawURL)'") }
            let body = try resource()
            if let bodyID = body["id"]?.string, bodyID != parts[1] {
                throw fail("the resource's id '\(bodyID)' does not match request.url '\(rawURL)'")
            }
            return Planned(index: index, fullUrl: fullUrl, action: .update(type: type, id: parts[1], resource: body))
        case "DELETE":
            guard parts.count == 2, !parts[1].isEmpty else { throw fail("DELETE needs request.url 'Type/id', got '\(rawURL)'") }
            return Planned(index: index, fullUrl: fullUrl, action: .delete(type: type, id: parts[1]))
        default:
            throw FHIRError(status: 400, code: "not-supported", diagnostics: "Bundle.entry[\(index)]: request.method \(method) is not supported here")
        }
    }

    // MARK: Answering

    private func response(type: String, outcomes: [Outcome], base: FHIRBase, prefer: FHIRResponse.Return) -> JSONValue {
        Self.bundle(type: type, entries: outcomes.map { Self.responseEntry($0, base: base, prefer: prefer) })
    }

    private static func responseEntry(_ outcome: Outcome, base: FHIRBase, prefer: FHIRResponse.Return) -> JSONValue {
        var response: JSONValue = ["status": .string(outcome.status)]
        var entry: JSONValue = [:]
        if let resource = outcome.resource {
            response["location"] = outcome.location.map(JSONValue.string)
            response["etag"] = .string(resource.etag)
            response["lastModified"] = .string(resource.lastUpdated)
            entry["fullUrl"] = .string("\(base.url)/\(resource.type)/\(resource.id)")
            if prefer == .representation { entry["resource"] = resource.json }
        }
        entry["response"] = response
        return entry
    }

    private static func bundle(type: String, entries: [JSONValue]) -> JSONValue {
        [
            "resourceType": "Bundle",
            "id": .string(FHIRResponse.newBundleID()),
            "type": .string(type),
            "entry": .array(entries),
        ]
    }
}
