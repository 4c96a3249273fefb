import Foundation
import HReaderJSON
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
    /// JSON text written as it is: a source's raw resource, whose member order and number literals
    /// (`120.0`) must survive (`FHIRResourceText`). The text must be valid JSON; pretty output
    /// re-indents it without changing a token.
    case verbatim(String)

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
        case let .verbatim(text):
            if pretty { Self.indent(text, into: &out, level: indent) } else { out += text }
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

    /// Compact JSON text laid out as `serialized(pretty: true)` lays out values, starting at `level`.
    static func indent(_ text: String, into out: inout String, level: Int) {
        var depth = level
        var inString = false, escaped = false
        var chars = Array(text.unicodeScalars)[...]
        func newline(_ depth: Int) { out += "\n" + String(repeating: "  ", count: depth) }
        while let c = chars.popFirst() {
            if inString {
                out.unicodeScalars.append(c)
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
                continue
            }
            switch c {
            case "\"": inString = true; out += "\""
            case " ", "\n", "\r", "\t": continue
            case "{", "[":
                let close: Unicode.Scalar = c == "{" ? "}" : "]"
                // An empty object or array stays on its line.
                while let next = chars.first, [" ", "\n", "\r", "\t"].contains(next) { chars.removeFirst() }
                if chars.first == close { chars.removeFirst(); out.unicodeScalars.append(c); out.unicodeScalars.append(close); continue }
                out.unicodeScalars.append(c)
                depth += 1
                newline(depth)
            case "}", "]":
                depth -= 1
                newline(depth)
                out.unicodeScalars.append(c)
            case ",": out += ","; newline(depth)
            case ":": out += ": "
            default: out.unicodeScalars.append(c)
            }
        }
    }

    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return String(d)
    }

    static func quote(_ s: String, into out: inout String) { JSONText.quote(s, into: &out) }
}
