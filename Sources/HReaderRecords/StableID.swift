import HReaderJSON
import HReaderModel

/// Remote ids for entries that arrive without one: a hash of what the entry says, so the same entry
/// imported again gets the same id and updates in place.
enum StableID {
    /// `<prefix>#<FNV-1a 64-bit hex>` of the prefix and the value's canonical JSON (sorted keys).
    static func hashed(_ prefix: String, _ value: JSONValue) -> String {
        "\(prefix)#\(fnv1a64(prefix + "\n" + value.serialized(sortingKeys: true)))"
    }

    static func fnv1a64(_ text: String) -> String { HealthKitText.fnv1a64(text) }
}
