import HReaderJSON
import HReaderModel

/// A source's raw FHIR resource, read so that it can be placed in a document of our own (the
/// clinician summary's IPS Bundle) without losing anything: members keep their order and numbers
/// their literal text (`120.0` stays `120.0`). Only what the document needs changes: the references,
/// so that the Bundle is self-contained, and the id or a member the caller replaces.
///
/// ```swift
/// var condition = try FHIRResourceText(raw: entry.content.raw!)
/// condition.rewriteReferences { reference in reference.hasPrefix("Patient/") ? "urn:uuid:…" : nil }
/// let text = condition.serialized()
/// ```
public struct FHIRResourceText: Sendable {
    public let resourceType: String
    private var object: JSONObject

    /// Nil when `raw` is not a JSON object with a `resourceType` (an RHEx entry, an Apple Health record).
    public init?(raw: String) {
        guard raw.first(where: { !$0.isWhitespace }) == "{",
              let value = try? JSONParser.parse(Array(raw.utf8), what: "the stored resource", duplicateNames: .refused),
              let object = value.object, let type = object["resourceType"]?.string, !type.isEmpty else { return nil }
        self.resourceType = type
        self.object = object
    }

    /// The resource's logical id.
    public var id: String? { object["id"]?.string }

    /// Gives the resource this id (in place of its own, or as the first member after `resourceType`).
    public mutating func setID(_ id: String) {
        if let index = object.members.firstIndex(where: { $0.key == "id" }) {
            object.members[index].value = .string(id)
        } else {
            object.members.insert((key: "id", value: .string(id)), at: min(1, object.members.count))
        }
    }

    /// Adds codings to the resource's `meta.security` and `meta.tag` (a `meta` is made after the id
    /// when there is none; codings already there are kept, one equal to an added one is not repeated).
    public mutating func addMeta(security: [JSONValue], tags: [JSONValue]) {
        object = Self.addingMeta(to: object, security: security, tags: tags)
    }

    /// `addMeta` on any resource object.
    public static func addingMeta(to resource: JSONObject, security: [JSONValue], tags: [JSONValue]) -> JSONObject {
        var resource = resource
        var meta = resource["meta"]?.object ?? JSONObject()
        for (key, added) in [("security", security), ("tag", tags)] where !added.isEmpty {
            var list = meta[key]?.array ?? []
            for coding in added where !list.contains(where: { $0.object?["system"] == coding.object?["system"] && $0.object?["code"] == coding.object?["code"] }) {
                list.append(coding)
            }
            meta[key] = .array(list)
        }
        if let index = resource.members.firstIndex(where: { $0.key == "meta" }) {
            resource.members[index].value = .object(meta)
        } else {
            let at = resource.members.firstIndex(where: { $0.key == "id" }).map { $0 + 1 } ?? min(1, resource.members.count)
            resource.members.insert((key: "meta", value: .object(meta)), at: at)
        }
        return resource
    }

    /// The `reference` of the Reference in member `key` (`medicationReference`), when it has one.
    public func reference(_ key: String) -> String? { object[key]?.object?["reference"]?.string }

    /// Whether the resource has the member (and it is not null).
    public func has(_ key: String) -> Bool { object.present(key) != nil }

    /// Replaces the member `key` by `newKey` with a value given as JSON text, in the same place.
    /// Throws when `json` is not JSON.
    public mutating func replace(_ key: String, with newKey: String, json: String) throws {
        let value = try JSONParser.parse(Array(json.utf8), what: "the replacement of \(key)")
        if let index = object.members.firstIndex(where: { $0.key == key }) {
            object.members[index] = (key: newKey, value: value)
            object.members.removeAll { $0.key == key && $0.key != newKey }
        } else {
            object.members.append((key: newKey, value: value))
        }
    }

    /// Every `Reference` in the resource (an object whose `reference` is a string), contained
    /// resources included: `resolve` gets the reference and the name of the member that holds the
    /// Reference (`subject`, `medicationReference`, …) and answers what it becomes. When it answers
    /// nil (the target is not in the document), `reference` is dropped and the Reference keeps its
    /// `display`, `identifier` and `type`; with none of those, the old reference becomes its display,
    /// so that the Reference still says what it named. Local references (`#id`) are kept.
    public mutating func rewriteReferences(_ resolve: (_ reference: String, _ member: String) -> String?) {
        object = Self.rewrite(object, member: "", resolve)
    }

    private static func rewrite(_ object: JSONObject, member: String, _ resolve: (String, String) -> String?) -> JSONObject {
        var object = object
        if let reference = object["reference"]?.string, !reference.hasPrefix("#") {
            let index = object.members.firstIndex { $0.key == "reference" }!
            if let resolved = resolve(reference, member) {
                object.members[index].value = .string(resolved)
            } else {
                object.members.remove(at: index)
                let kept = ["display", "identifier", "type"].contains { object.present($0) != nil }
                if !kept { object.members.insert((key: "display", value: .string(reference)), at: index) }
            }
        }
        for index in object.members.indices {
            object.members[index].value = rewrite(object.members[index].value, member: object.members[index].key, resolve)
        }
        return object
    }

    private static func rewrite(_ value: JSONValue, member: String, _ resolve: (String, String) -> String?) -> JSONValue {
        switch value {
        case .object(let object): .object(rewrite(object, member: member, resolve))
        case .array(let items): .array(items.map { rewrite($0, member: member, resolve) })
        default: value
        }
    }

    /// Keeps the resource's narrative (`text.div`), and those of its contained resources, only as
    /// `FHIRNarrative.sanitized` writes them again. A narrative of the resource that fails (a
    /// script, an event attribute, a `javascript:` link, anything not on FHIR's list) is replaced by
    /// `generated`, an XHTML div of the caller's (status `generated`); a contained resource's is
    /// removed. Returns how many were replaced or removed.
    @discardableResult
    public mutating func sanitizeNarratives(replacingWith generated: String) -> Int {
        var replaced = 0
        if let index = object.members.firstIndex(where: { $0.key == "text" }) {
            if let text = Self.sanitizedNarrative(object.members[index].value) {
                object.members[index].value = text
            } else {
                object.members[index].value = .object([("status", .string("generated")), ("div", .string(generated))])
                replaced += 1
            }
        }
        if case .array(var contained)? = object["contained"], let containedIndex = object.members.firstIndex(where: { $0.key == "contained" }) {
            for item in contained.indices {
                guard case .object(var resource) = contained[item], let index = resource.members.firstIndex(where: { $0.key == "text" }) else { continue }
                if let text = Self.sanitizedNarrative(resource.members[index].value) {
                    resource.members[index].value = text
                } else {
                    resource.members.remove(at: index)
                    replaced += 1
                }
                contained[item] = .object(resource)
            }
            object.members[containedIndex].value = .array(contained)
        }
        return replaced
    }

    /// A Narrative with its div written again by `FHIRNarrative`, or nil when it is not one or fails.
    private static func sanitizedNarrative(_ value: JSONValue) -> JSONValue? {
        guard case .object(var narrative) = value, let index = narrative.members.firstIndex(where: { $0.key == "div" }),
              case .string(let div) = narrative.members[index].value, let clean = FHIRNarrative.sanitized(div) else { return nil }
        narrative.members[index].value = .string(clean)
        return .object(narrative)
    }

    /// Compact JSON text, members in order, numbers as written.
    public func serialized() -> String { JSONValue.object(object).serialized() }

    /// The URI of a code system the entries name by hReader's short name (`LOINC` → `http://loinc.org`);
    /// nil for `Unknown` (a coding without a system). A name that is not short (a URI) is itself.
    public static func systemURI(forKey key: String) -> String? {
        if key == "Unknown" || key.isEmpty { return nil }
        return FHIRCodes.preferredURIs[key] ?? key
    }
}

extension FHIRCodes {
    /// Short name → the system URI FHIR uses for it (never the OID).
    static let preferredURIs: [String: String] = {
        var uris: [String: String] = [:]
        for (uri, name) in shortNames where !uri.hasPrefix("urn:oid:") {
            uris[name] = uri
        }
        uris["ICD-10-CM"] = "http://hl7.org/fhir/sid/icd-10-cm"
        return uris
    }()
}
