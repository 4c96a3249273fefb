import HReaderStore

/// Compact JSON written straight to an output (stdout, an HTTP body) in chunks, byte for byte what
/// `JSONValue.serialized()` writes for the same value: a decade page of a million numbers never
/// becomes a tree of a million nodes, nor one string of its whole size.
///
///     var out = JSONByteWriter { bytes in try stdout.write(bytes) }
///     out.raw("{\"a\":"); out.number(1); out.raw("}")
///     try out.flush()
public struct JSONByteWriter {
    private var buffer: [UInt8] = []
    private let chunkBytes: Int
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    /// Also replaces DEL and C1 control characters in strings by U+FFFD, as hreader's terminal filter
    /// does to everything it prints (JSON escapes the C0 controls already).
    private let replacingControls: Bool

    public init(chunkBytes: Int = 64 << 10, replacingControls: Bool = false, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.chunkBytes = chunkBytes
        self.replacingControls = replacingControls
        self.sink = sink
        buffer.reserveCapacity(chunkBytes + 1024)
    }

    /// Hands what is written so far to the sink when a chunk is full (call it between items).
    public mutating func flushIfFull() throws {
        if buffer.count >= chunkBytes { try flush() }
    }

    public mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try sink($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Bytes written as they are (punctuation, keys known to need no escape).
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    public mutating func raw(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    /// A number as `JSONValue.format` writes it: integers without a fraction, others in Swift's
    /// shortest form, `null` for what JSON cannot hold.
    public mutating func number(_ d: Double) {
        guard d.isFinite else { return raw("null") }
        if d == d.rounded(), abs(d) < 1e15 {
            var v = Int64(d)
            if v < 0 { buffer.append(0x2D); v = -v }
            if v == 0 { buffer.append(0x30); return }
            var digits: (UInt64, UInt64) = (0, 0)   // up to 16 digits, written backwards
            var count = 0
            withUnsafeMutableBytes(of: &digits) { bytes in
                while v > 0 {
                    bytes[15 - count] = UInt8(0x30 + v % 10)
                    v /= 10
                    count += 1
                }
                buffer.append(contentsOf: bytes[(16 - count)...])
            }
            return
        }
        buffer.append(contentsOf: String(d).utf8)
    }

    /// A string literal, escaped as `JSONText.quote` does.
    public mutating func string(_ s: String) {
        buffer.append(0x22)
        let start = buffer.count
        for byte in s.utf8 {
            switch byte {
            case 0x22: buffer.append(0x5C); buffer.append(0x22)
            case 0x5C: buffer.append(0x5C); buffer.append(0x5C)
            case 0x0A: buffer.append(0x5C); buffer.append(0x6E)
            case 0x0D: buffer.append(0x5C); buffer.append(0x72)
            case 0x09: buffer.append(0x5C); buffer.append(0x74)
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                buffer.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: buffer.append(byte)
            }
        }
        if replacingControls { Self.replaceControls(in: &buffer, start ..< buffer.count) }
        buffer.append(0x22)
    }

    /// DEL (7F) and C1 controls (C2 80…C2 9F) in `range` become U+FFFD (EF BF BD).
    private static func replaceControls(in buffer: inout [UInt8], _ range: Range<Int>) {
        guard buffer[range].contains(where: { $0 == 0x7F || $0 == 0xC2 }) else { return }
        var out: [UInt8] = []
        var i = range.lowerBound
        while i < range.upperBound {
            if buffer[i] == 0x7F {
                out += [0xEF, 0xBF, 0xBD]; i += 1
            } else if buffer[i] == 0xC2, i + 1 < range.upperBound, (0x80...0x9F).contains(buffer[i + 1]) {
                out += [0xEF, 0xBF, 0xBD]; i += 2
            } else {
                out.append(buffer[i]); i += 1
            }
        }
        buffer.replaceSubrange(range, with: out)
    }

    /// Any value, compact.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case let .bool(b): raw(b ? "true" : "false")
        case let .number(d): number(d)
        case let .string(s): string(s)
        case let .verbatim(text):
            // Written as is (it is JSON already); the terminal filter still applies to its strings.
            let start = buffer.count
            raw(text)
            if replacingControls { Self.replaceControls(in: &buffer, start ..< buffer.count) }
        case let .array(items):
            buffer.append(0x5B)
            for (i, item) in items.enumerated() {
                if i > 0 { buffer.append(0x2C) }
                self.value(item)
            }
            buffer.append(0x5D)
        case let .object(members):
            buffer.append(0x7B)
            for (i, (key, item)) in members.enumerated() {
                if i > 0 { buffer.append(0x2C) }
                string(key)
                buffer.append(0x3A)
                self.value(item)
            }
            buffer.append(0x7D)
        }
    }
}
