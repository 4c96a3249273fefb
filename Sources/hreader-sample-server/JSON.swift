/// A lossless JSON value: object members keep their order and numbers keep their literal text,
/// so a resource stored and served back is the resource received (FHIR gives `120.0` meaning).
enum JSON: Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    static func int<I: BinaryInteger>(_ value: I) -> JSON { .number(String(value)) }

    /// A decimal with a fixed number of places, e.g. `118.0`.
    static func decimal(_ value: Double, places: Int) -> JSON { .number(formatDecimal(value, places: places)) }

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var array: [JSON]? { if case .array(let a) = self { return a }; return nil }
    var object: JSONObject? { if case .object(let o) = self { return o }; return nil }
    var isNull: Bool { if case .null = self { return true }; return false }

    subscript(key: String) -> JSON? {
        get { object?[key] }
        set {
            guard case .object(var members) = self else { return }
            self = .null  // drop our reference so the members are mutated in place, not copied
            members[key] = newValue
            self = .object(members)
        }
    }

    subscript(index: Int) -> JSON? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }
}

/// Object members in document order. Objects in FHIR and hData are small, so lookup is linear.
struct JSONObject: Sendable {
    private(set) var members: [(key: String, value: JSON)]

    init(_ members: [(key: String, value: JSON)] = []) { self.members = members }

    var keys: [String] { members.map(\.key) }

    /// Plain loops: this runs for every member of every generated resource, also in debug builds.
    private func index(of key: String) -> Int? {
        var i = 0
        while i < members.count {
            if members[i].key == key { return i }
            i += 1
        }
        return nil
    }

    subscript(key: String) -> JSON? {
        get { index(of: key).map { members[$0].value } }
        set {
            let index = index(of: key)
            switch (index, newValue) {
            case (let i?, let value?): members[i].value = value
            case (let i?, nil): members.remove(at: i)
            case (nil, let value?): members.append((key, value))
            case (nil, nil): break
            }
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .number(String(value)) }
    init(floatLiteral value: Double) { self = .number(String(value)) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: JSON...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSON)...) { self = .object(JSONObject(elements)) }
    init(nilLiteral: ()) { self = .null }
}

/// `%.Nf` without Foundation's locale-dependent formatting.
func formatDecimal(_ value: Double, places: Int) -> String {
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let scaled = Int64((abs(value) * scale).rounded())
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard places > 0 else { return sign + String(scaled) }
    let whole = scaled / Int64(scale)
    var fraction = String(scaled % Int64(scale))
    while fraction.count < places { fraction = "0" + fraction }
    return "\(sign)\(whole).\(fraction)"
}

// MARK: - Writing

extension JSON {
    /// Compact UTF-8 text.
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(into: &out)
        return out
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): JSON.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

// MARK: - Parsing

struct JSONParseError: Error, CustomStringConvertible {
    let message: String
    let offset: Int
    var description: String { "\(message) at byte \(offset)" }
}

/// Strict RFC 8259 parsing with a depth limit (a hostile body must not overflow the stack).
struct JSONParser {
    private let bytes: [UInt8]
    private var position = 0
    private var depth = 0
    private static let maxDepth = 256

    static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSON {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: position) }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipWhitespace() {
        while let b = current, b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { position += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSON) throws(JSONParseError) -> JSON {
        for byte in literal.utf8 {
            guard current == byte else { throw error("invalid literal") }
            position += 1
        }
        return value
    }

    private mutating func parseValue() throws(JSONParseError) -> JSON {
        guard let byte = current else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > Self.maxDepth { throw error("nesting too deep") }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSON {
        try enter()
        defer { depth -= 1 }
        position += 1
        var object = JSONObject()
        skipWhitespace()
        if current == UInt8(ascii: "}") { position += 1; return .object(object) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':'") }
            position += 1
            skipWhitespace()
            object[key] = try parseValue()  // a repeated name keeps its last value
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(object)
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSON {
        try enter()
        defer { depth -= 1 }
        position += 1
        var items: [JSON] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { position += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(items)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = position
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { throw error("invalid number") }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if current == UInt8(ascii: ".") {
            position += 1
            guard let d = current, isDigit(d) else { throw error("invalid number") }
            skipDigits()
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard let d = current, isDigit(d) else { throw error("invalid number") }
            skipDigits()
        }
        return .number(String(decoding: bytes[start..<position], as: UTF8.self))
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let b = current, isDigit(b) { position += 1 }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1  // the opening quote
        var buffer: [UInt8] = []
        while true {
            guard let byte = current else { throw error("unterminated string") }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = current else { throw error("unterminated string") }
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escaped)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"): buffer.append(contentsOf: try parseUnicodeEscape())
                default: throw error("invalid escape")
                }
            case 0..<0x20:
                throw error("control character in string")
            default:
                buffer.append(byte)
            }
        }
    }

    /// `\uXXXX`, joining a surrogate pair; a lone surrogate becomes U+FFFD.
    private mutating func parseUnicodeEscape() throws(JSONParseError) -> [UInt8] {
        var code = try parseHex4()
        if (0xD800..<0xDC00).contains(code), position + 1 < bytes.count,
            bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
        {
            let saved = position
            position += 2
            let low = try parseHex4()
            if (0xDC00..<0xE000).contains(low) {
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else {
                position = saved
            }
        }
        let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let b = current else { throw error("invalid \\u escape") }
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }
}
