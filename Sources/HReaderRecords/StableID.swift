/// Remote ids for entries that arrive without one: a hash of what the entry says, so the same entry
/// imported again gets the same id and updates in place.
enum StableID {
    /// `<prefix>#<FNV-1a 64-bit hex>` of the prefix and the value's canonical JSON (sorted keys).
    static func hashed(_ prefix: String, _ value: JSONValue) -> String {
        "\(prefix)#\(fnv1a64(prefix + "\n" + value.serialized(sortingKeys: true)))"
    }

    /// FNV-1a, 64 bits, over the UTF-8 bytes, as 16 lower-case hex digits. Not cryptographic: it
    /// names content, it does not protect it.
    static func fnv1a64(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
