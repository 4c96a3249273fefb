import Foundation
import HReaderJSON
import HReaderModel

/// Lenient reading for hData/RHEx documents, whose fields come as strings, numbers or small objects
/// depending on the server and its age: take what reads as text, ignore what does not.
enum Lenient {
    /// A string (trimmed, non-empty), a number's literal, or a boolean as text.
    static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let s)?:
            let trimmed = s.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        case .number(let n)?: return n
        case .bool(let b)?: return b ? "true" : "false"
        default: return nil
        }
    }

    /// Something a person can read: a string, or an object's name, display text, value with its
    /// unit, or code; for an array, its readable items joined by ", ".
    static func readable(_ value: JSONValue?) -> String? {
        switch value {
        case .object(let object)?:
            for key in ["name", "display", "displayName", "text", "title", "description", "label"] {
                if let text = text(object[key]) { return text }
            }
            if let quantity = quantity(object) { return quantity }
            return text(object["code"])
        case .array(let items)?:
            let parts = items.compactMap { readable($0) }
            return parts.isEmpty ? nil : parts.joined(separator: ", ")
        default:
            return text(value)
        }
    }

    /// `{value|scalar|amount, unit|units}` as "10 mg"; nil without a value.
    static func quantity(_ object: JSONObject) -> String? {
        guard let amount = text(object["value"]) ?? text(object["scalar"]) ?? text(object["amount"]) else { return nil }
        guard let unit = text(object["unit"]) ?? text(object["units"]) else { return amount }
        return "\(amount) \(unit)"
    }

    /// Epoch seconds from a number or a numeric string; a date string read as a clinical time.
    static func time(_ value: JSONValue?, zone: DayZone) -> ClinicalTime? {
        switch value {
        case .number(let n)?:
            return Double(n).flatMap(epoch).map { ClinicalTime(epoch: $0) }
        case .string(let s)?:
            if let number = NumberText.parse(s) { return epoch(number).map { ClinicalTime(epoch: $0) } }
            return ClinicalTime.parse(s, zone: zone)
        default:
            return nil
        }
    }

    private static func epoch(_ seconds: Double) -> Int64? {
        guard seconds.isFinite, abs(seconds) < 1e13 else { return nil }
        return Int64(seconds.rounded(.down))
    }
}
