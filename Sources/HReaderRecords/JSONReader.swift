import HReaderJSON

/// Typed, strict reading of a JSON object that knows where it is, so a wrong-typed field is reported
/// as `Bundle.entry[2].resource.valueQuantity.value is a string, expected a number`.
/// Absent and null members read as nil (or empty); a member of the wrong type throws.
struct JSONReader {
    let object: JSONObject
    let path: String

    init(_ object: JSONObject, path: String) {
        self.object = object
        self.path = path
    }

    func has(_ key: String) -> Bool { object.present(key) != nil }

    func string(_ key: String) throws -> String? {
        guard let value = object.present(key) else { return nil }
        guard let string = value.string else { throw mismatch(key, value, expected: "a string") }
        return string
    }

    /// A number's literal text and value.
    func number(_ key: String) throws -> (literal: String, value: Double)? {
        guard let value = object.present(key) else { return nil }
        guard case .number(let literal) = value, let number = Double(literal), number.isFinite else {
            throw mismatch(key, value, expected: "a number")
        }
        return (literal, number)
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = object.present(key) else { return nil }
        guard let bool = value.bool else { throw mismatch(key, value, expected: "a boolean") }
        return bool
    }

    func object(_ key: String) throws -> JSONReader? {
        guard let value = object.present(key) else { return nil }
        guard let child = value.object else { throw mismatch(key, value, expected: "an object") }
        return JSONReader(child, path: "\(path).\(key)")
    }

    /// An array of objects; empty when absent.
    func objects(_ key: String) throws -> [JSONReader] {
        guard let value = object.present(key) else { return [] }
        guard let items = value.array else { throw mismatch(key, value, expected: "an array") }
        return try items.enumerated().compactMap { i, item in
            if item.isNull { return nil }
            guard let child = item.object else {
                throw RecordsError.malformed("\(path).\(key)[\(i)] is \(item.kindDescription), expected an object")
            }
            return JSONReader(child, path: "\(path).\(key)[\(i)]")
        }
    }

    /// An array of strings; empty when absent.
    func strings(_ key: String) throws -> [String] {
        guard let value = object.present(key) else { return [] }
        guard let items = value.array else { throw mismatch(key, value, expected: "an array") }
        return try items.enumerated().compactMap { i, item in
            if item.isNull { return nil }
            guard let string = item.string else {
                throw RecordsError.malformed("\(path).\(key)[\(i)] is \(item.kindDescription), expected a string")
            }
            return string
        }
    }

    /// The first object of an array.
    func first(_ key: String) throws -> JSONReader? { try objects(key).first }

    private func mismatch(_ key: String, _ value: JSONValue, expected: String) -> RecordsError {
        .malformed("\(path).\(key) is \(value.kindDescription), expected \(expected)")
    }
}
