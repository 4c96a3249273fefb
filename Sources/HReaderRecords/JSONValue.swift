import HReaderStore
/// A JSON value as it was written: object members keep their order and numbers keep their literal
/// text, so a resource written back is the resource received. (Foundation's `JSONSerialization`
/// turns `120.0` into `120`, and FHIR gives a decimal's precision meaning; it also cannot tell
/// `true` from `1` without looking at the boxed type.)
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text, e.g. `120.0`, `-1.5e3`.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var object: JSONObject? { if case .object(let o) = self { o } else { nil } }
    var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    var isNull: Bool { self == .null }

    /// The number's value, when this is a number.
    var number: Double? { if case .number(let n) = self { Double(n) } else { nil } }

    /// "a string", "an object", …: for error messages.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Compact JSON text. With `sortingKeys`, object members are written in key order: the canonical
    /// form used to hash an entry that has no id.
    func serialized(sortingKeys: Bool = false) -> String {
        var out = ""
        write(into: &out, sortingKeys: sortingKeys)
        return out
    }

    private func write(into out: inout String, sortingKeys: Bool) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): JSONValue.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out, sortingKeys: sortingKeys)
            }
            out += "]"
        case .object(let object):
            out += "{"
            let members = sortingKeys ? object.members.sorted { $0.key < $1.key } : object.members
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.quote(member.key, into: &out)
                out += ":"
                member.value.write(into: &out, sortingKeys: sortingKeys)
            }
            out += "}"
        }
    }

    private static func quote(_ s: String, into out: inout String) { JSONText.quote(s, into: &out) }
}

/// A JSON object with its members in source order. Lookup takes the last member of a name, as
/// most parsers do.
struct JSONObject: Equatable, Sendable {
    struct Member: Equatable, Sendable {
        var key: String
        var value: JSONValue
    }

    var members: [Member]

    init(_ members: [Member] = []) { self.members = members }

    subscript(key: String) -> JSONValue? {
        members.last(where: { $0.key == key })?.value
    }

    /// The member's value unless it is absent or null.
    func present(_ key: String) -> JSONValue? {
        guard let value = self[key], !value.isNull else { return nil }
        return value
    }

    var json: JSONValue { .object(self) }
}
