import Foundation
import HReaderStore

/// A JSON value with ordered object members, written without Foundation's serializer: payloads such as a
/// decade of timeline hold a million items, and key order is part of a readable contract.
public indirect enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        a.serialized() == b.serialized()
    }

    /// Converts what JSONSerialization produces (for values posted by the user).
    public init(any value: Any) {
        switch value {
        case let b as Bool where type(of: value) == Bool.self: self = .bool(b)
        case let n as NSNumber:
            // JSONSerialization hands booleans back as NSNumbers of type "c".
            if String(cString: n.objCType) == "c" { self = .bool(n.boolValue) } else { self = .number(n.doubleValue) }
        case let s as String: self = .string(s)
        case let a as [Any]: self = .array(a.map(JSONValue.init(any:)))
        case let o as [String: Any]: self = .object(o.keys.sorted().map { ($0, JSONValue(any: o[$0]!)) })
        default: self = .null
        }
    }

    public func serialized(pretty: Bool = false) -> String {
        var out = ""
        out.reserveCapacity(256)
        write(into: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(into out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .number(d): out += Self.format(d)
        case let .string(s): Self.quote(s, into: &out)
        case let .array(items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                item.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case let .object(members):
            if members.isEmpty { out += "{}"; return }
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                Self.quote(key, into: &out)
                out += pretty ? ": " : ":"
                value.write(into: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    static func quote(_ s: String, into out: inout String) { JSONText.quote(s, into: &out) }
}
