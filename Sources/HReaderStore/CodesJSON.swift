import Foundation

/// The `codes` column: a JSON object of code system → [codes], written with sorted keys.
/// Hand-written because it is on the hot path of imports and reads (JSONEncoder/JSONDecoder per
/// row cost more than the row itself).
enum CodesJSON {
    static func encode(_ codes: [String: [String]]) -> String {
        guard !codes.isEmpty else { return "{}" }
        var out = "{"
        for (i, system) in codes.keys.sorted().enumerated() {
            if i > 0 { out += "," }
            out += quote(system) + ":[" + codes[system]!.map(quote).joined(separator: ",") + "]"
        }
        return out + "}"
    }

    static func decode(_ text: String?) -> [String: [String]] {
        guard let text, text != "{}", let data = text.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        var codes: [String: [String]] = [:]
        for (system, value) in object { codes[system] = (value as? [Any])?.compactMap { $0 as? String } ?? [] }
        return codes
    }

    static func quote(_ s: String) -> String { JSONText.quoted(s) }
}
