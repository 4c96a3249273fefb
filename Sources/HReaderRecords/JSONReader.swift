import HReaderJSON

/// Typed, strict reading of a JSON object that knows where it is, so a wrong-typed field is reported
/// as `Bundle.entry[2].resource.valueQuantity.value is a string, expected a number`.
/// Absent and null members read as nil (or empty); a member of the wrong type throws.
struct JSONReader {
    let object: JSONObject
    private let location: Location

    /// Where the object is (`Bundle.entry[2].resource.valueQuantity`), written out only when asked:
    /// a message needs it, reading a valid resource never does.
    var path: String { location.text }

    init(_ object: JSONObject, path: String) {
        self.object = object
        location = Location(.text(path))
    }

    /// A resource found at `path`, named in messages by its type and id: `path (Observation/7)`.
    init(_ object: JSONObject, resourceAt path: String, type: String, id: String?) {
        self.object = object
        location = Location(.resource(path, type: type, id: id))
    }

    private init(_ object: JSONObject, location: Location) {
        self.object = object
        self.location = location
    }

    /// A reader's place as the chain of members and indices that led to it.
    private final class Location: Sendable {
        enum Step: Sendable {
            case text(String)
            case resource(String, type: String, id: String?)
            case member(Location, String)
            case element(Location, String, Int)
        }

        let step: Step

        init(_ step: Step) { self.step = step }

        var text: String {
            switch step {
            case .text(let text): text
            case .resource(let path, let type, let id): id.map { "\(path) (\(type)/\($0))" } ?? path
            case .member(let parent, let key): "\(parent.text).\(key)"
            case .element(let parent, let key, let index): "\(parent.text).\(key)[\(index)]"
            }
        }
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
        return JSONReader(child, location: Location(.member(location, key)))
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
            return JSONReader(child, location: Location(.element(location, key, i)))
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
