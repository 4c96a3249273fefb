import Foundation

extension JSONValue {
    /// Converts what `JSONSerialization` produces (or a dictionary written in Swift): dictionaries,
    /// arrays, strings, numbers, booleans and `NSNull`. Dictionary members are taken in key order,
    /// so the same dictionary always serializes the same way. `path` names the value in errors.
    init(foundation value: Any, path: String) throws {
        switch value {
        case is NSNull:
            self = .null
        case let string as String:
            self = .string(string)
        case let number as NSNumber:
            // A boolean boxed by JSONSerialization or Swift reports the C type "c"; `as? Bool` alone
            // would also accept the numbers 0 and 1.
            if String(cString: number.objCType) == "c" {
                self = .bool(number.boolValue)
            } else {
                let literal = number.stringValue
                guard number.doubleValue.isFinite, NumberText.isJSONNumber(literal) else {
                    throw RecordsError.malformed("\(path) is not a finite number (\(literal))")
                }
                self = .number(literal)
            }
        case let items as [Any]:
            self = .array(try items.enumerated().map { try JSONValue(foundation: $1, path: "\(path)[\($0)]") })
        case let dictionary as [String: Any]:
            self = .object(JSONObject(try dictionary.keys.sorted().map { key in
                JSONObject.Member(key: key, value: try JSONValue(foundation: dictionary[key]!, path: "\(path).\(key)"))
            }))
        default:
            throw RecordsError.malformed("\(path) is a \(type(of: value)), which JSON cannot hold")
        }
    }
}
