import HReaderJSON

/// The `codes` column: a JSON object of code system → [codes], written with sorted keys.
/// Hand-written because it is on the hot path of imports and reads (JSONEncoder/JSONDecoder per
/// row cost more than the row itself).
public enum CodesJSON {
    static func encode(_ codes: [String: [String]]) -> String {
        guard !codes.isEmpty else { return "{}" }
        var out = "{"
        // Sorted, so equal codes are equal text; most entries have one system.
        for (i, system) in (codes.count == 1 ? Array(codes.keys) : codes.keys.sorted()).enumerated() {
            if i > 0 { out += "," }
            out += quote(system) + ":[" + codes[system]!.map(quote).joined(separator: ",") + "]"
        }
        return out + "}"
    }

    /// The column read back; text that is not such an object reads as no codes.
    public static func decode(_ text: String?) -> [String: [String]] {
        guard let text, text != "{}", let object = (try? JSONParser.parse(text))?.object else { return [:] }
        var codes: [String: [String]] = [:]
        for (system, value) in object.members { codes[system] = value.array?.compactMap(\.string) ?? [] }
        return codes
    }

    static func quote(_ s: String) -> String { JSONText.quoted(s) }
}
