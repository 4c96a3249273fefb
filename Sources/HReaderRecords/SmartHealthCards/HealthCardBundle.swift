import HReaderCrypto
import HReaderJSON

/// A card's FHIR Bundle made ready for the FHIR mapper. A card's resources have no ids and are
/// named `resource:0`, `resource:1` … within the card only, so every card would name its patient
/// and its first immunization alike. Each entry's `fullUrl` (and every reference to it) becomes a
/// name that is stable and unique: `urn:shc:` and a hash of the issuer and the resource's content
/// (with its references already renamed). The same card imported again, or the same dose in a
/// later card from the same issuer, names the same entry; the same person described alike by one
/// issuer names the same patient. Nothing else in the resources changes.
public enum HealthCardBundle {
    public static func prepared(_ bundle: JSONObject, issuer: String) -> JSONObject {
        guard let entries = bundle["entry"]?.array else { return bundle }
        var names: [String: String] = [:]
        // Patients first: the others' names include their patient's (through the renamed reference).
        var order = Array(entries.indices)
        order.sort { (isPatient(entries[$0]) ? 0 : 1, $0) < (isPatient(entries[$1]) ? 0 : 1, $1) }
        var rewritten = entries
        for index in order {
            guard var entry = entries[index].object, let resource = entry["resource"]?.object else { continue }
            let renamed = rename(.object(resource), names)
            let kind = isPatient(entries[index]) ? "patient:" : ""
            let digest = SHA256.hash(Array((issuer + "\n" + renamed.serialized(sortingKeys: true)).utf8))
            let name = "urn:shc:" + kind + Base64URL.encode(Array(digest.prefix(16)))
            if let old = entry["fullUrl"]?.string { names[old] = name }
            entry["fullUrl"] = .string(name)
            entry["resource"] = renamed
            rewritten[index] = .object(entry)
        }
        // A resource may reference one that comes after it (a Patient is usually first, but need not be).
        for index in rewritten.indices {
            guard var entry = rewritten[index].object, let resource = entry["resource"] else { continue }
            entry["resource"] = rename(resource, names)
            rewritten[index] = .object(entry)
        }
        var out = bundle
        out["entry"] = .array(rewritten)
        return out
    }

    private static func isPatient(_ entry: JSONValue) -> Bool {
        entry.object?["resource"]?.object?["resourceType"]?.string == "Patient"
    }

    /// Every `reference` naming a renamed fullUrl, renamed.
    private static func rename(_ value: JSONValue, _ names: [String: String]) -> JSONValue {
        switch value {
        case var .object(object):
            for i in object.members.indices {
                if object.members[i].key == "reference", let text = object.members[i].value.string, let name = names[text] {
                    object.members[i].value = .string(name)
                } else {
                    object.members[i].value = rename(object.members[i].value, names)
                }
            }
            return .object(object)
        case let .array(items):
            return .array(items.map { rename($0, names) })
        default:
            return value
        }
    }
}
