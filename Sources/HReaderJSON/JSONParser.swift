/// The one JSON parser: strict RFC 8259, producing `JSONValue`s that keep member order, repeated
/// names and number literals. A UTF-8 byte order mark at the start is skipped; strings must be valid
/// UTF-8; `\uD83D\uDE00` pairs join, and a lone surrogate escape becomes U+FFFD. Errors are
/// `JSONError`s naming the line and column; input over `Limits.maxBytes`, or nested deeper than
/// `Limits.maxDepth`, is refused before it can exhaust memory or the stack.
///
/// ```swift
/// let value = try JSONParser.parse(data)                          // Data, [UInt8], a slice, …
/// let small = try JSONParser.parse(body, limits: .init(maxDepth: 64, maxBytes: 1 << 20))
/// let fhir = try JSONParser.parse(data, duplicateNames: .refused) // {"id":"a","id":"b"} is an error
/// ```
public struct JSONParser {
    public struct Limits: Sendable {
        /// Arrays and objects inside one another (a top-level `[]` is depth 1).
        public var maxDepth: Int
        /// The whole input, byte order mark and whitespace included.
        public var maxBytes: Int

        public init(maxDepth: Int = 512, maxBytes: Int = 1 << 30) {
            self.maxDepth = maxDepth
            self.maxBytes = maxBytes
        }

        /// 512 levels (far beyond any FHIR resource, well within a thread's stack) and 1 GiB (what
        /// comes over the network is bounded sooner, by `maxResponseBytes`).
        public static let `default` = Limits()
    }

    /// An object that repeats a member name: RFC 8259 only says names SHOULD be unique, and by
    /// default every member is kept (lookups take the last); formats that forbid it (FHIR JSON)
    /// ask for `.refused`, a `JSONError` of kind `.duplicateName` at the second name.
    public enum DuplicateNames: Sendable { case kept, refused }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: Limits
    private let refusesDuplicateNames: Bool
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, limits: Limits, duplicateNames: DuplicateNames) {
        self.bytes = bytes
        self.limits = limits
        refusesDuplicateNames = duplicateNames == .refused
    }

    /// Parses one JSON text.
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes, limits: Limits = .default,
                                                       duplicateNames: DuplicateNames = .kept) throws(JSONError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { parse(buffer: $0, limits: limits, duplicateNames: duplicateNames) }
            ?? Array(bytes).withUnsafeBufferPointer { parse(buffer: $0, limits: limits, duplicateNames: duplicateNames) }
        return try result.get()
    }

    /// Parses one JSON text held in a string.
    public static func parse(_ text: String, limits: Limits = .default, duplicateNames: DuplicateNames = .kept) throws(JSONError) -> JSONValue {
        var text = text
        return try text.withUTF8 { parse(buffer: $0, limits: limits, duplicateNames: duplicateNames) }.get()
    }

    /// How a parse ends. Not a Result: its `Failure: Error` requirement cost a process's first parse a
    /// runtime conformance lookup (a scan of every conformance record, 40 µs of a short command).
    private enum Outcome {
        case value(JSONValue)
        case failure(JSONError)

        func get() throws(JSONError) -> JSONValue {
            switch self {
            case let .value(value): return value
            case let .failure(error): throw error
            }
        }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>, limits: Limits, duplicateNames: DuplicateNames) -> Outcome {
        var parser = JSONParser(buffer, limits: limits, duplicateNames: duplicateNames)
        do throws(Failure) {
            guard buffer.count <= limits.maxBytes else {
                return .failure(JSONError(.tooLarge, "too large (\(buffer.count) bytes, the limit is \(limits.maxBytes))"))
            }
            if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF { parser.index = 3 }  // a UTF-8 byte order mark
            parser.skipWhitespace()
            guard parser.index < buffer.count else { throw parser.failure("no JSON value (empty input)") }
            let value = try parser.value()
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.failure("unexpected data after the JSON value") }
            return .value(value)
        } catch {
            return .failure(parser.error(error))
        }
    }

    private struct Failure: Error {
        var kind: JSONError.Kind
        var message: String
        var position: Int
    }

    private func failure(_ message: String, at position: Int? = nil, kind: JSONError.Kind = .syntax) -> Failure {
        Failure(kind: kind, message: message, position: min(position ?? index, bytes.count))
    }

    /// The failure with its line and column, counted only now that they are needed.
    private func error(_ failure: Failure) -> JSONError {
        var line = 1, lineStart = 0
        for i in 0..<failure.position where bytes[i] == UInt8(ascii: "\n") { line += 1; lineStart = i + 1 }
        return JSONError(failure.kind, failure.message,
                         at: .init(offset: failure.position, line: line, column: failure.position - lineStart + 1))
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func describe(_ byte: UInt8) -> String {
        byte >= 0x21 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func value() throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        case let byte: throw failure("unexpected \(describe(byte))")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count,
              UnsafeBufferPointer(rebasing: bytes[index..<index + count]).elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: count)) else {
            throw failure("invalid literal (expected \(word))")
        }
        index += count
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= limits.maxDepth else { throw failure("nested deeper than \(limits.maxDepth) levels", kind: .tooDeep) }
    }

    private mutating func object() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [JSONObject.Member] = []
        var names: Set<String>?  // for refusing repeated names in a large object
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(JSONObject(members)) }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input in an object") }
            guard bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes, found \(describe(bytes[index]))") }
            let nameStart = index
            let key = try string()
            if refusesDuplicateNames { try refuseRepeated(key, in: members, names: &names, at: nameStart) }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after member name \"\(key)\"") }
            index += 1
            skipWhitespace()
            members.append((key, try value()))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input in an object") }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(JSONObject(members))
            case let byte: throw failure("expected ',' or '}' in an object, found \(describe(byte))")
            }
        }
    }

    /// Throws when `members` already has `key`: a plain scan while the object is small (most are),
    /// a set of its names from the 16th member on.
    private func refuseRepeated(_ key: String, in members: [JSONObject.Member], names: inout Set<String>?, at position: Int) throws(Failure) {
        let repeated: Bool
        if members.count < 16 {
            repeated = members.contains { $0.key == key }
        } else {
            if names == nil { names = Set(members.lazy.map(\.key)) }
            repeated = !names!.insert(key).inserted
        }
        guard repeated else { return }
        let shown = JSONValue.string(String(key.prefix(64))).serialized()
        throw failure("the member name \(shown) appears twice in one object", at: position, kind: .duplicateName)
    }

    private mutating func array() throws(Failure) -> JSONValue {
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
            case let byte: throw failure("expected ',' or ']' in an array, found \(describe(byte))")
            }
        }
    }

    private mutating func number() throws(Failure) -> String {
        let start = index
        let scan = Self.numberEnd(in: bytes, from: start)
        if let message = scan.error { throw failure(message, at: start) }
        index = scan.end
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    /// Where the JSON number starting at `start` ends, or what is wrong with it: the grammar, once,
    /// for the parser and `JSONNumber.isValid`.
    static func numberEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, error: String?) {
        var index = start
        func digits() -> Int {
            let from = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - from
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0 else { return (index, "invalid number") }
        if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 { return (index, "invalid number (leading zero)") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return (index, "invalid number (no digits after '.')") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return (index, "invalid number (no digits in the exponent)") }
        }
        return (index, nil)
    }

    /// A string starting at the opening quote. Most strings hold no escape: they are read in one run.
    private mutating func string() throws(Failure) -> String {
        let start = index
        index += 1
        let runStart = index
        var allBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<index])
                guard let text = Self.text(run, ascii: allBits < 0x80) else { throw failure("invalid UTF-8 in a string", at: start) }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            allBits |= byte
            index += 1
        }
        return try escapedString(start: start, runStart: runStart)
    }

    /// The string of UTF-8 bytes, nil when they are not valid UTF-8. `String(decoding:)` replaces
    /// what is invalid by U+FFFD, so valid bytes are exactly those it keeps as they are (it is also
    /// much faster here than the generic `String(validating:)`).
    private static func text(_ utf8: UnsafeBufferPointer<UInt8>, ascii: Bool) -> String? {
        var text = String(decoding: utf8, as: UTF8.self)
        return ascii || text.withUTF8({ $0.elementsEqual(utf8) }) ? text : nil
    }

    /// The rest of a string that holds escapes (or is not well formed), from `runStart`.
    private mutating func escapedString(start: Int, runStart: Int) throws(Failure) -> String {
        var buffer: [UInt8] = []
        var runStart = runStart
        while true {
            guard index < bytes.count else { throw failure("unterminated string", at: start) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                guard let text = buffer.withUnsafeBufferPointer({ Self.text($0, ascii: false) }) else {
                    throw failure("invalid UTF-8 in a string", at: start)
                }
                index += 1
                return text
            } else if byte == UInt8(ascii: "\\") {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
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
    private mutating func escape(into buffer: inout [UInt8]) throws(Failure) {
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
            UTF8.encode(scalar) { buffer.append($0) }
        default:
            throw failure("invalid escape '\\\(Character(Unicode.Scalar(byte)))' in a string", at: index - 2)
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("incomplete \\u escape") }
        var code: UInt32 = 0
        for byte in UnsafeBufferPointer(rebasing: bytes[index..<index + 4]) {
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
