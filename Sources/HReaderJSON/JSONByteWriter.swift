/// Compact JSON written straight to an output (stdout, an HTTP body) in chunks, byte for byte what
/// `JSONValue.serialized()` writes for the same value: a decade page of a million numbers never
/// becomes a tree of a million nodes, nor one string of its whole size.
///
///     var out = JSONByteWriter { bytes in try stdout.write(bytes) }
///     out.raw("{\"a\":"); out.int(1); out.raw(",\"b\":"); out.value(["x", .double(2.5)]); out.raw("}")
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

    /// An integer, as `JSONValue.int` writes it (the digits without a String in between).
    public mutating func int(_ value: Int64) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        var v = value.magnitude
        if v == 0 { buffer.append(UInt8(ascii: "0")); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // up to 20 digits, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { bytes in
            while v > 0 {
                bytes[23 - count] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                count += 1
            }
            buffer.append(contentsOf: bytes[(24 - count)...])
        }
    }

    /// A Double, as `JSONValue.double` writes it (`JSONNumber.text`): `null` for what JSON cannot hold.
    public mutating func double(_ value: Double) {
        if let whole = JSONNumber.integral(value) { return int(whole) }
        guard let text = JSONNumber.text(value) else { return raw("null") }
        buffer.append(contentsOf: text.utf8)
    }

    /// A string literal, escaped as `JSONText.quote` does.
    public mutating func string(_ s: String) {
        let start = buffer.count
        JSONText.quote(s, into: &buffer)
        if replacingControls { Self.replaceControls(in: &buffer, start ..< buffer.count) }
    }

    /// Any value, compact. (A `.verbatim` value is written as it is; the terminal filter still applies to its strings.)
    public mutating func value(_ value: JSONValue) {
        let start = buffer.count
        value.write(into: &buffer, pretty: false, sortingKeys: false, indent: 0)
        if replacingControls { Self.replaceControls(in: &buffer, start ..< buffer.count) }
    }

    /// DEL (7F) and C1 controls (C2 80…C2 9F) in `range` become U+FFFD (EF BF BD). Outside strings
    /// JSON text is ASCII punctuation, digits and literals, so only strings can hold them.
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
}
