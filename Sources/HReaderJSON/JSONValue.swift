/// A JSON value as it was written: object members keep their order and numbers keep their literal
/// text, so a resource parsed and written back is the resource received. (Foundation's
/// `JSONSerialization` turns `120.0` into `120`, and FHIR gives a decimal's precision meaning; it
/// also cannot tell `true` from `1` without looking at the boxed type.)
///
/// ```swift
/// var resource = try JSONParser.parse(Array(#"{"resourceType":"Observation","valueQuantity":{"value":120.0}}"#.utf8))
/// resource["status"] = "final"
/// resource["valueQuantity"]?["value"]?.numberText   // "120.0"
/// resource.serialized()      // {"resourceType":"Observation","valueQuantity":{"value":120.0},"status":"final"}
/// ```
///
/// Numbers made in Swift go through `int(_:)`, `double(_:)` or `decimal(_:places:)`, which write the
/// text once; `.number(_:)` takes a literal as it is and does not check it (`JSONNumber.isValid`).
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// The number's literal text, e.g. `120.0`, `-1.5e3`.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
    /// JSON text written as it is: a source's raw resource placed in a document of ours, whose
    /// member order, number literals and escapes must survive (`FHIRResourceText`). The text must
    /// be one valid JSON value; pretty output re-indents it without changing a token, and
    /// `sortingKeys` leaves its members in their order. The parser never produces it, and two
    /// values are equal only as the same case (`.verbatim("{}")` is not `.object([])`).
    case verbatim(String)

    // MARK: Numbers

    /// An integer, e.g. `42`.
    public static func int<Integer: BinaryInteger>(_ value: Integer) -> JSONValue { .number(String(value)) }

    /// A Double as hreader writes one: a whole number below 10^15 without a fraction (`120`), any
    /// other in Swift's shortest exact form (`72.25`, `1e+20`); NaN and the infinities, which JSON
    /// cannot hold, as `null`.
    public static func double(_ value: Double) -> JSONValue { JSONNumber.text(value).map(JSONValue.number) ?? .null }

    /// A decimal with a fixed number of places (`decimal(118, places: 1)` is `118.0`), as FHIR
    /// quantities are written; `null` when not finite.
    public static func decimal(_ value: Double, places: Int) -> JSONValue {
        JSONNumber.decimal(value, places: places).map(JSONValue.number) ?? .null
    }

    // MARK: Text

    /// A string, or `null` for nil.
    public static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// An array of strings.
    public static func strings<S: Sequence<String>>(_ values: S) -> JSONValue { .array(values.map(JSONValue.string)) }

    // MARK: Reading

    public var string: String? { if case .string(let s) = self { s } else { nil } }
    public var object: JSONObject? { if case .object(let o) = self { o } else { nil } }
    public var array: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    public var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The number's literal text, when this is a number.
    public var numberText: String? { if case .number(let n) = self { n } else { nil } }

    /// The number's value, when this is a number (`1e999` is infinite: check `isFinite`).
    public var number: Double? { if case .number(let n) = self { Double(n) } else { nil } }

    /// The number's value when it is written as an integer that fits (`42`, not `42.0`).
    public var int: Int? { if case .number(let n) = self { Int(n) } else { nil } }

    /// "a string", "an object", …: for error messages.
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        case .verbatim: "JSON text"
        }
    }

    /// The value of member `key` of an object (the last of that name); nil for anything else.
    /// Setting it on an object replaces that member's value in place or appends the member; setting
    /// nil removes every member of the name. Setting it on anything but an object does nothing.
    public subscript(key: String) -> JSONValue? {
        get { if case .object(let o) = self { o[key] } else { nil } }
        set {
            guard case .object(var object) = self else { return }
            self = .null  // drop our reference, so the members are changed in place rather than copied
            object[key] = newValue
            self = .object(object)
        }
    }

    /// Item `index` of an array; nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// Members in the order written.
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
}
