import Foundation

extension JSONValue {
    /// Converts what `JSONSerialization` produces, or a dictionary written in Swift: dictionaries,
    /// arrays, strings, numbers, booleans and `NSNull`. Dictionary members are taken in key order, so
    /// the same dictionary always serializes the same way. Integers keep all their digits; other
    /// numbers are written as `double(_:)` writes them (`5.0` as `5`). A value JSON cannot hold
    /// (NaN, a `Date`, …) throws an `.unrepresentable` error naming it by `path`.
    ///
    /// The one place the JSON core needs Foundation (`NSNumber`, `NSNull`).
    public init(foundation value: Any, path: String = "value") throws(JSONError) {
        switch value {
        case is NSNull:
            self = .null
        case let string as String:
            self = .string(string)
        case let bool as Bool where type(of: value) == Bool.self:
            self = .bool(bool)
        case let number as NSNumber:
            switch String(cString: number.objCType) {
            // A boolean boxed by JSONSerialization reports the C type "c"; `as? Bool` alone would
            // also accept the numbers 0 and 1.
            case "c": self = .bool(number.boolValue)
            case "q", "l", "i", "s": self = .int(number.int64Value)
            case "Q", "L", "I", "S", "C": self = .int(number.uint64Value)
            default:
                guard number.doubleValue.isFinite else {
                    throw JSONError(.unrepresentable, "\(path) is not a finite number (\(number.stringValue))")
                }
                self = .double(number.doubleValue)
            }
        case let items as [Any]:
            var converted: [JSONValue] = []
            converted.reserveCapacity(items.count)
            for (i, item) in items.enumerated() { converted.append(try JSONValue(foundation: item, path: "\(path)[\(i)]")) }
            self = .array(converted)
        case let dictionary as [String: Any]:
            var members: [JSONObject.Member] = []
            members.reserveCapacity(dictionary.count)
            for key in dictionary.keys.sorted() {
                members.append((key, try JSONValue(foundation: dictionary[key]!, path: "\(path).\(key)")))
            }
            self = .object(JSONObject(members))
        default:
            throw JSONError(.unrepresentable, "\(path) is a \(type(of: value)), which JSON cannot hold")
        }
    }
}
