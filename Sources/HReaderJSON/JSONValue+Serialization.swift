/// The one JSON serializer: compact (no whitespace at all) or pretty (two spaces a level,
/// `"name": value`, empty arrays and objects as `[]` and `{}`), members in order or sorted by name.
/// `JSONByteWriter` writes the same bytes for the same value, straight to an output.
extension JSONValue {
    /// JSON text. With `sortingKeys`, object members are written in key order: the canonical form
    /// used to hash an entry that has no id.
    public func serialized(pretty: Bool = false, sortingKeys: Bool = false) -> String {
        String(decoding: serializedBytes(pretty: pretty, sortingKeys: sortingKeys), as: UTF8.self)
    }

    /// `serialized(…)` as UTF-8 bytes (an HTTP body, a file).
    public func serializedBytes(pretty: Bool = false, sortingKeys: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out, pretty: pretty, sortingKeys: sortingKeys, indent: 0)
        return out
    }

    /// `serializedBytes(pretty:)` of this value laid out as it is `level` levels deep in a document,
    /// appended to `out`: a document too large to build as one value (an export's Bundle) is written
    /// an element at a time, byte for byte as its whole serialization would be.
    public func appendSerialized(to out: inout [UInt8], pretty: Bool = false, sortingKeys: Bool = false, level: Int) {
        write(into: &out, pretty: pretty, sortingKeys: sortingKeys, indent: level)
    }

    func write(into out: inout [UInt8], pretty: Bool, sortingKeys: Bool, indent: Int) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .number(let n): out += n.utf8
        case .string(let s): JSONText.quote(s, into: &out)
        case .verbatim(let text):
            if pretty { Self.reindent(text, into: &out, level: indent) } else { out += text.utf8 }
        case .array(let items):
            if items.isEmpty { out += "[]".utf8; return }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(into: &out, indent + 1) }
                item.write(into: &out, pretty: pretty, sortingKeys: sortingKeys, indent: indent + 1)
            }
            if pretty { Self.newline(into: &out, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.isEmpty { out += "{}".utf8; return }
            out.append(UInt8(ascii: "{"))
            let members = sortingKeys ? object.members.sorted { $0.key < $1.key } : object.members
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { Self.newline(into: &out, indent + 1) }
                JSONText.quote(member.key, into: &out)
                out += pretty ? ": ".utf8 : ":".utf8
                member.value.write(into: &out, pretty: pretty, sortingKeys: sortingKeys, indent: indent + 1)
            }
            if pretty { Self.newline(into: &out, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func newline(into out: inout [UInt8], _ level: Int) {
        out.append(UInt8(ascii: "\n"))
        if 2 * level <= spaces.count {
            spaces.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[0..<(2 * level)])) }
        } else {
            out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
        }
    }

    /// The indentation of the levels most documents reach, copied rather than repeated byte by byte.
    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 64)

    /// JSON text (valid, in any layout) laid out as pretty output lays out values, starting at
    /// `level`: whitespace outside strings dropped, every token kept as it is.
    static func reindent(_ text: String, into out: inout [UInt8], level: Int) {
        let bytes = Array(text.utf8)
        var depth = level
        var inString = false, escaped = false
        var i = 0
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        while i < bytes.count {
            let byte = bytes[i]
            i += 1
            if inString {
                out.append(byte)
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true; out.append(byte)
            case _ where isSpace(byte): continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                // An empty object or array stays on its line.
                while i < bytes.count, isSpace(bytes[i]) { i += 1 }
                out.append(byte)
                if i < bytes.count, bytes[i] == close { i += 1; out.append(close); continue }
                depth += 1
                newline(into: &out, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline(into: &out, depth)
                out.append(byte)
            case UInt8(ascii: ","): out.append(byte); newline(into: &out, depth)
            case UInt8(ascii: ":"): out += ": ".utf8
            default: out.append(byte)
            }
        }
    }
}
