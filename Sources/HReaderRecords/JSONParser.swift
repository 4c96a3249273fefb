import Foundation

/// A strict JSON parser (RFC 8259) producing `JSONValue`s that keep member order and number
/// literals. Errors name the byte offset, line and column; nesting deeper than `maxDepth` is an
/// error rather than a stack overflow.
struct JSONParser {
    static let maxDepth = 512

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Parses one JSON text. `what` names the input in errors ("NDJSON line 3").
    static func parse(_ data: Data, what: String = "input") throws -> JSONValue {
        try parse(Array(data), what: what)
    }

    static func parse(_ bytes: [UInt8], what: String = "input") throws -> JSONValue {
        var parser = JSONParser(bytes)
        do {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }  // a UTF-8 byte order mark
            parser.skipWhitespace()
            guard parser.index < bytes.count else { throw parser.failure("no JSON value (empty input)") }
            let value = try parser.value()
            parser.skipWhitespace()
            guard parser.index == bytes.count else { throw parser.failure("unexpected data after the JSON value") }
            return value
        } catch let failure as Failure {
            throw RecordsError.malformed("\(what) is not valid JSON: \(failure.message) at line \(failure.line), column \(failure.column)")
        }
    }

    private struct Failure: Error {
        var message: String
        var line: Int
        var column: Int
    }

    private func failure(_ message: String, at position: Int? = nil) -> Failure {
        let end = min(position ?? index, bytes.count)
        var line = 1, lineStart = 0
        for i in 0..<end where bytes[i] == UInt8(ascii: "\n") { line += 1; lineStart = i + 1 }
        return Failure(message: message, line: line, column: end - lineStart + 1)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func describeByte(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func value() throws -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        case let byte: throw failure("unexpected \(describeByte(byte))")
        }
    }

    private mutating func literal(_ word: String) throws {
        let expected = Array(word.utf8), count = expected.count
        guard index + count <= bytes.count, bytes[index..<index + count].elementsEqual(expected) else {
            throw failure("invalid literal (expected \(word))")
        }
        index += count
    }

    private mutating func enter() throws {
        depth += 1
        guard depth <= JSONParser.maxDepth else { throw failure("nested deeper than \(JSONParser.maxDepth) levels") }
    }

    private mutating func object() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [JSONObject.Member] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(JSONObject(members)) }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input in an object") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes, found \(describeByte(bytes[index]))") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after member name \"\(key)\"") }
            index += 1
            skipWhitespace()
            members.append(JSONObject.Member(key: key, value: try value()))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input in an object") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(JSONObject(members))
            case let byte: throw failure("expected ',' or '}' in an object, found \(describeByte(byte))")
            }
        }
    }

    private mutating func array() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input in an array") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
            case let byte: throw failure("expected ',' or ']' in an array, found \(describeByte(byte))")
            }
        }
    }

    private mutating func number() throws -> String {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0 else { throw failure("invalid number", at: start) }
        if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 { throw failure("invalid number (leading zero)", at: start) }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("invalid number (no digits after '.')", at: start) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("invalid number (no digits in the exponent)", at: start) }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A string starting at the opening quote.
    private mutating func string() throws -> String {
        let start = index
        index += 1
        var buffer: [UInt8] = []
        var runStart = index
        while true {
            guard index < bytes.count else { throw failure("unterminated string", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text: String?
                if buffer.isEmpty {
                    text = String(bytes: bytes[runStart..<index], encoding: .utf8)
                } else {
                    buffer.append(contentsOf: bytes[runStart..<index])
                    text = String(bytes: buffer, encoding: .utf8)
                }
                guard let text else { throw failure("invalid UTF-8 in a string", at: start) }
                index += 1
                return text
            } else if byte == UInt8(ascii: "\\") {
                buffer.append(contentsOf: bytes[runStart..<index])
                try escape(into: &buffer)
                runStart = index
            } else if byte < 0x20 {
                throw failure("unescaped control character in a string")
            } else {
                index += 1
            }
        }
    }

    /// An escape sequence starting at the backslash, appended to `buffer` as UTF-8.
    private mutating func escape(into buffer: inout [UInt8]) throws {
        index += 1
        guard index < bytes.count else { throw failure("unterminated string") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var code = try hex4()
            if (0xD800...0xDBFF).contains(code), index + 1 < bytes.count,
               bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                let save = index
                index += 2
                let low = try hex4()
                if (0xDC00...0xDFFF).contains(low) {
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    index = save  // not a pair: the high surrogate alone becomes U+FFFD below
                }
            }
            let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"  // a lone surrogate
            buffer.append(contentsOf: String(Character(scalar)).utf8)
        default:
            throw failure("invalid escape '\\\(Character(Unicode.Scalar(byte)))' in a string", at: index - 2)
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("incomplete \\u escape") }
        var code: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            code = code << 4 | UInt32(digit)
        }
        index += 4
        return code
    }
}
