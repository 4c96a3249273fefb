import CLibXML2
import Foundation

/// Reads the body of an Apple Health export (all after the root's start tag, which libxml2 has read
/// with the prolog and the DTD) without libxml2: an export is millions of `<Record …/>` start tags,
/// and libxml2 spent about half of the parsing thread's time on them.
///
/// It reads a strict subset of XML: ASCII names without namespaces, attribute values in UTF-8 with
/// the five predefined entities and character references, whitespace between elements, and
/// nothing else (no comments, processing instructions, CDATA or text). Anything outside it, and any
/// error, is `AppleHealthReader.FastPathDeclined`: the caller reads the document again with libxml2,
/// whose answer (and error message) is the authority. So what this accepts it must read exactly as
/// libxml2 does; the fuzzer and the tests compare the two on the same bytes.
///
/// The events go to the same `AppleHealthElementBuilder`, in the form libxml2's SAX2 gives them:
/// names as stable NUL-terminated pointers (one per distinct name), attributes five pointers each,
/// values as libxml2 passes them (an `&` of the document as `&#38;`, which the builder undoes).
struct AppleHealthScanner {
    /// The bytes not yet read are `buffer[start..<end]`; a start tag is read whole or not at all.
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var start = 0
    private var end = 0
    private var line: Int
    /// Open elements (the root first), by their names' pointers.
    private var open: [UnsafePointer<xmlChar>]
    private var rootClosed = false
    /// Waiting for the `>` that ends the root's start tag (libxml2 stopped just before it).
    private var rootTagOpen = true
    private var names = ScannerNames()
    /// libxml2's attribute layout: local name, prefix, URI, value, end of value.
    private var attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>
    private var attributeCapacity = 64
    /// Decoded values of the tag being read (entities, normalised whitespace); never smaller than
    /// `buffer`, so a tag's values always fit and their pointers stay put until the tag is handed on.
    private var scratch: UnsafeMutablePointer<UInt8>

    /// The largest start tag read here (a longer one is left to libxml2).
    static let maxTagBytes = 4 << 20

    /// The buffer's first size (it grows for a longer start tag).
    static let initialCapacity = 256 << 10

    init(rootName: UnsafePointer<xmlChar>, line: Int) {
        capacity = Self.initialCapacity
        buffer = .allocate(capacity: capacity)
        scratch = .allocate(capacity: capacity)
        attributes = .allocate(capacity: 5 * attributeCapacity)
        self.line = line
        open = []
        open.append(names.pointer(for: UnsafeBufferPointer(start: rootName, count: strlen(rootName))) ?? rootName)
    }

    /// Frees the buffers (call once, when done).
    func deallocate() {
        buffer.deallocate()
        scratch.deallocate()
        attributes.deallocate()
        names.deallocate()
    }

    private func declined(_ reason: String) -> AppleHealthReader.FastPathDeclined {
        AppleHealthReader.FastPathDeclined(reason: reason, line: line)
    }

    /// Reads what it can of `bytes` (with what was left of the previous call) into `builder`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, into builder: inout AppleHealthElementBuilder) throws {
        if start > 0 {
            // Move what is left to the front.
            let left = end - start
            if left > 0 { buffer.update(from: buffer + start, count: left) }
            start = 0
            end = left
        }
        if end + bytes.count > capacity {
            let needed = end + bytes.count
            guard needed <= Self.maxTagBytes + (256 << 10) else { throw declined("a start tag longer than \(Self.maxTagBytes >> 20) MiB") }
            var grown = capacity
            while grown < needed { grown *= 2 }
            let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
            bigger.update(from: buffer, count: end)
            buffer.deallocate()
            buffer = bigger
            scratch.deallocate()
            scratch = .allocate(capacity: grown)
            capacity = grown
        }
        if let base = bytes.baseAddress, bytes.count > 0 {
            (buffer + end).update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
            end += bytes.count
        }
        try scan(into: &builder)
    }

    /// The end of the document: it must have closed the root, with nothing but whitespace after.
    mutating func finish(into builder: inout AppleHealthElementBuilder) throws {
        try scan(into: &builder)
        guard rootClosed, start == end else { throw declined("the document ends before its root closes") }
    }

    // MARK: Scanning

    private static let space: UInt8 = 0x20, tab: UInt8 = 0x09, newline: UInt8 = 0x0A, lessThan: UInt8 = 0x3C
    private static let greaterThan: UInt8 = 0x3E, slash: UInt8 = 0x2F, equals: UInt8 = 0x3D, ampersand: UInt8 = 0x26

    private mutating func scan(into builder: inout AppleHealthElementBuilder) throws {
        var p = start
        while true {
            while p < end, buffer[p] == Self.space || buffer[p] == Self.newline || buffer[p] == Self.tab {
                if buffer[p] == Self.newline { line += 1 }
                p += 1
            }
            start = p
            guard p < end else { return }
            if rootTagOpen {
                // libxml2 stopped at the end of the root's start tag: `>` (an empty root, `/>`, is left to it).
                guard buffer[p] == Self.greaterThan else { throw declined("the root's start tag does not end as expected") }
                rootTagOpen = false
                p += 1
                continue
            }
            guard !rootClosed else { throw declined("content after the root element") }
            guard buffer[p] == Self.lessThan else { throw declined("text between elements") }
            guard p + 1 < end else { return }
            let next = buffer[p + 1]
            if next == Self.slash {
                guard let after = try endTag(at: p) else { return }
                builder.end()
                open.removeLast()
                if open.isEmpty { rootClosed = true }
                p = after
            } else if ScannerNames.isNameStart(next) {
                guard let after = try startTag(at: p, into: &builder) else { return }
                p = after
            } else {
                throw declined("markup other than elements (a comment, a processing instruction, CDATA)")
            }
        }
    }

    /// `</name S?>` at `p`: the offset after it, or nil when it is not all here yet.
    private mutating func endTag(at p: Int) throws -> Int? {
        var q = p + 2
        let nameStart = q
        while q < end, ScannerNames.isNameChar(buffer[q]) { q += 1 }
        let nameEnd = q
        var newlines = 0
        while q < end, buffer[q] == Self.space || buffer[q] == Self.newline || buffer[q] == Self.tab {
            if buffer[q] == Self.newline { newlines += 1 }
            q += 1
        }
        guard q < end else {
            if q - p > 4096 { throw declined("an end tag that does not end") }
            return nil
        }
        guard buffer[q] == Self.greaterThan, let current = open.last else { throw declined("a malformed end tag") }
        let length = strlen(current)
        guard nameEnd - nameStart == length, memcmp(buffer + nameStart, current, length) == 0 else {
            throw declined("an end tag that does not match its start tag")
        }
        line += newlines
        return q + 1
    }

    /// A start tag at `p`, handed to `builder`: the offset after it, or nil when it is not all here yet.
    private mutating func startTag(at p: Int, into builder: inout AppleHealthElementBuilder) throws -> Int? {
        var q = p + 1
        let nameStart = q
        while q < end, ScannerNames.isNameChar(buffer[q]) { q += 1 }
        guard q < end else { return try incomplete(p) }
        guard let name = names.pointer(for: UnsafeBufferPointer(start: buffer + nameStart, count: q - nameStart), position: 0) else {
            throw declined("a name outside the plain ASCII names")
        }
        var newlines = 0
        var count = 0
        var used = 0   // scratch bytes taken by this tag's values
        while true {
            // Whitespace, then `>`, `/>` or an attribute (which needs whitespace before it).
            var spaced = false
            while q < end, buffer[q] == Self.space || buffer[q] == Self.newline || buffer[q] == Self.tab {
                if buffer[q] == Self.newline { newlines += 1 }
                spaced = true
                q += 1
            }
            guard q < end else { return try incomplete(p) }
            let b = buffer[q]
            if b == Self.greaterThan || b == Self.slash {
                var after = q + 1
                let empty = b == Self.slash
                if empty {
                    guard q + 1 < end else { return try incomplete(p) }
                    guard buffer[q + 1] == Self.greaterThan else { throw declined("a `/` not followed by `>`") }
                    after = q + 2
                }
                guard open.count < XMLPolicy.maxDepth + 8 else { throw declined("elements nest too deep") }
                line += newlines
                try builder.start(name, attributes: SAXAttributes(base: attributes, count: count), line: line)
                if empty { builder.end() } else { open.append(name) }
                return after
            }
            guard spaced, ScannerNames.isNameStart(b) else { throw declined("a malformed start tag") }
            // name S? = S? quote value quote
            let attributeStart = q
            while q < end, ScannerNames.isNameChar(buffer[q]) { q += 1 }
            guard q < end else { return try incomplete(p) }
            guard let attributeName = names.pointer(for: UnsafeBufferPointer(start: buffer + attributeStart, count: q - attributeStart),
                                                    position: count + 1) else {
                throw declined("a name outside the plain ASCII names")
            }
            while q < end, buffer[q] == Self.space || buffer[q] == Self.newline || buffer[q] == Self.tab {
                if buffer[q] == Self.newline { newlines += 1 }
                q += 1
            }
            guard q < end else { return try incomplete(p) }
            guard buffer[q] == Self.equals else { throw declined("an attribute without `=`") }
            q += 1
            while q < end, buffer[q] == Self.space || buffer[q] == Self.newline || buffer[q] == Self.tab {
                if buffer[q] == Self.newline { newlines += 1 }
                q += 1
            }
            guard q < end else { return try incomplete(p) }
            let quote = buffer[q]
            guard quote == 0x22 || quote == 0x27 else { throw declined("an unquoted attribute value") }
            q += 1
            guard let value = try self.value(from: q, quote: quote, scratchUsed: &used, newlines: &newlines) else { return try incomplete(p) }
            q = value.after
            // `xmlns` declares a namespace: libxml2 hands it over apart from the attributes.
            guard strcmp(attributeName, "xmlns") != 0 else { throw declined("a namespace declaration") }
            // Each name once (libxml2 refuses a repeated attribute).
            for i in 0..<count where attributes[5 * i] == attributeName { throw declined("an attribute given twice") }
            guard count < attributeCapacity else { throw declined("more than \(attributeCapacity) attributes") }
            attributes[5 * count] = attributeName
            attributes[5 * count + 1] = nil
            attributes[5 * count + 2] = nil
            attributes[5 * count + 3] = UnsafePointer(value.start)
            attributes[5 * count + 4] = UnsafePointer(value.start + value.count)
            count += 1
        }
    }

    private func incomplete(_ p: Int) throws -> Int? {
        if end - p > Self.maxTagBytes { throw declined("a start tag longer than \(Self.maxTagBytes >> 20) MiB") }
        return nil
    }

    /// An attribute value from `from` to its closing `quote`, as libxml2 hands it on: where it
    /// lies in `buffer` when nothing changes, else decoded into `scratch`. nil when the closing
    /// quote is not here yet.
    private func value(from: Int, quote: UInt8, scratchUsed: inout Int, newlines: inout Int)
        throws -> (start: UnsafeMutablePointer<UInt8>, count: Int, after: Int)? {
        var q = from
        // Plain bytes (printable ASCII but `<`, `&` and the quotes) need nothing: the common case.
        while q < end, ScannerNames.isPlain(buffer[q]) {
            q += 1
        }
        guard q < end else { return nil }
        if buffer[q] == quote { return (buffer + from, q - from, q + 1) }
        // Something to check or change: copy what was plain, then go byte by byte.
        let out = scratch + scratchUsed
        var n = q - from
        out.update(from: buffer + from, count: n)
        var lines = 0
        while true {
            guard q < end else { return nil }
            let b = buffer[q]
            if b == quote { break }
            if ScannerNames.isPlain(b) || b == 0x22 || b == 0x27 {
                out[n] = b; n += 1; q += 1
            } else if b == Self.tab || b == Self.newline {
                // Attribute-value normalisation: each whitespace character becomes a space.
                if b == Self.newline { lines += 1 }
                out[n] = Self.space; n += 1; q += 1
            } else if b == Self.ampersand {
                guard let (written, length) = try reference(at: q, into: out + n) else { return nil }
                n += written
                q += length
            } else if b >= 0x80 {
                let length = try utf8Length(at: q)
                guard length > 0 else { return nil }
                for i in 0..<length { out[n + i] = buffer[q + i] }
                n += length
                q += length
            } else {
                // `<`, a carriage return (line ends are normalised first), other control characters.
                throw declined("a character in an attribute value that needs libxml2")
            }
        }
        scratchUsed += n
        newlines += lines
        return (out, n, q + 1)
    }

    /// An entity or character reference at `q` (`&…;`), written to `out` as libxml2 passes it on:
    /// the bytes written and the reference's length; nil when it is not all here yet.
    private func reference(at q: Int, into out: UnsafeMutablePointer<UInt8>) throws -> (written: Int, length: Int)? {
        var r = q + 1
        while r < end, r - q < 16, buffer[r] != 0x3B { r += 1 }
        // `r` may be `end` even after 15 bytes of body (the `&` 16 bytes before the end): the byte
        // that decides is not here yet, and `buffer[end]` is past what was read (past the buffer, when full).
        if r == end { return nil }
        guard buffer[r] == 0x3B else { throw declined("an unterminated reference") }
        let body = buffer + q + 1, count = r - q - 1, length = r - q + 1
        func named(_ name: StaticString) -> Bool {
            count == name.utf8CodeUnitCount && memcmp(body, name.utf8Start, count) == 0
        }
        func write(_ text: StaticString) -> (Int, Int) {
            out.update(from: text.utf8Start, count: text.utf8CodeUnitCount)
            return (text.utf8CodeUnitCount, length)
        }
        if named("lt") { return write("<") }
        if named("gt") { return write(">") }
        if named("quot") { return write("\"") }
        if named("apos") { return write("'") }
        if named("amp") { return write("&#38;") }
        guard count >= 2, body[0] == 0x23 else { throw declined("a reference to an entity the document does not have") }
        let hex = body[1] == 0x78
        let first = hex ? 2 : 1
        guard count > first, count - first <= 8 else { throw declined("a malformed character reference") }
        var code: UInt32 = 0
        for i in first..<count {
            let d = body[i]
            let v: UInt32
            switch d {
            case 0x30...0x39: v = UInt32(d - 0x30)
            case 0x61...0x66 where hex: v = UInt32(d - 0x61 + 10)
            case 0x41...0x46 where hex: v = UInt32(d - 0x41 + 10)
            default: throw declined("a malformed character reference")
            }
            code = code * (hex ? 16 : 10) + v
        }
        guard code == 0x9 || code == 0xA || code == 0xD || (0x20...0xD7FF).contains(code) || (0xE000...0xFFFD).contains(code)
                || (0x10000...0x10FFFF).contains(code) else {
            throw declined("a character reference to a character XML does not allow")
        }
        if code == 0x26 { return write("&#38;") }
        // UTF-8 by hand.
        switch code {
        case ..<0x80:
            out[0] = UInt8(code)
            return (1, length)
        case ..<0x800:
            out[0] = UInt8(0xC0 | code >> 6); out[1] = UInt8(0x80 | code & 0x3F)
            return (2, length)
        case ..<0x10000:
            out[0] = UInt8(0xE0 | code >> 12); out[1] = UInt8(0x80 | code >> 6 & 0x3F); out[2] = UInt8(0x80 | code & 0x3F)
            return (3, length)
        default:
            out[0] = UInt8(0xF0 | code >> 18); out[1] = UInt8(0x80 | code >> 12 & 0x3F)
            out[2] = UInt8(0x80 | code >> 6 & 0x3F); out[3] = UInt8(0x80 | code & 0x3F)
            return (4, length)
        }
    }

    /// The length of the UTF-8 sequence at `q` when it is one of a character XML allows; 0 when
    /// it is not all here yet.
    private func utf8Length(at q: Int) throws -> Int {
        let b0 = buffer[q]
        let length: Int
        var scalar: UInt32
        switch b0 {
        case 0xC2...0xDF: length = 2; scalar = UInt32(b0 & 0x1F)
        case 0xE0...0xEF: length = 3; scalar = UInt32(b0 & 0x0F)
        case 0xF0...0xF4: length = 4; scalar = UInt32(b0 & 0x07)
        default: throw declined("bytes that are not UTF-8")
        }
        guard q + length <= end else { return 0 }
        for i in 1..<length {
            let b = buffer[q + i]
            guard b & 0xC0 == 0x80 else { throw declined("bytes that are not UTF-8") }
            scalar = scalar << 6 | UInt32(b & 0x3F)
        }
        let shortest: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard scalar >= shortest, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar), scalar != 0xFFFE, scalar != 0xFFFF else {
            throw declined("a character XML does not allow")
        }
        return length
    }
}

/// Names as libxml2's dictionary gives them: one NUL-terminated copy per distinct name, for the
/// scanner's life, so the builder's tables (keyed by pointer) work unchanged. Only plain ASCII names
/// (letters, digits, `_`, `-`, `.`; no `:`, so no namespaces), at most a thousand of them.
struct ScannerNames {
    private static let slots = 2048
    private var keys = [UInt64](repeating: 0, count: slots)
    private var pointers = [UnsafeMutablePointer<UInt8>?](repeating: nil, count: slots)
    private var lengths = [Int](repeating: 0, count: slots)
    private var count = 0

    static func isNameStart(_ b: UInt8) -> Bool { (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A || b == 0x5F }

    /// Whether bit `b` of a 256-bit set (four words, lowest first) is set: tests in registers, no
    /// table in memory (a static array costs a lazy-initialisation check and a retain per byte).
    @inline(__always)
    static func inSet(_ b: UInt8, _ w0: UInt64, _ w1: UInt64, _ w2: UInt64, _ w3: UInt64) -> Bool {
        let word: UInt64
        switch b >> 6 {
        case 0: word = w0
        case 1: word = w1
        case 2: word = w2
        default: word = w3
        }
        return word >> UInt64(b & 63) & 1 == 1
    }

    /// Letters, digits, `_`, `-`, `.`.
    @inline(__always)
    static func isNameChar(_ b: UInt8) -> Bool {
        // 0x2D '-', 0x2E '.', 0x30-0x39; 0x41-0x5A, 0x5F '_', 0x61-0x7A.
        inSet(b, 0x03FF_6000_0000_0000, 0x07FF_FFFE_87FF_FFFE, 0, 0)
    }

    /// Bytes an attribute value keeps as they are: printable ASCII but `<`, `&` and the quotes.
    @inline(__always)
    static func isPlain(_ b: UInt8) -> Bool {
        // 0x20-0x7E without 0x22 '"', 0x26 '&', 0x27 '\'', 0x3C '<'.
        inSet(b, 0xEFFF_FF3B_0000_0000, 0x7FFF_FFFF_FFFF_FFFF, 0, 0)
    }

    /// How many of `count` bytes at `p` are name characters.
    static func length(of p: UnsafeMutablePointer<UInt8>, upTo count: Int) -> Int {
        var n = 0
        while n < count, isNameChar(p[n]) { n += 1 }
        return n
    }

    /// The name found last at each position of a tag (0 the element, then its attributes): the
    /// next tag nearly always repeats it, and comparing bytes is cheaper than hashing them.
    private var recent = [(pointer: UnsafePointer<xmlChar>?, length: Int)](repeating: (nil, 0), count: 32)

    /// `pointer(for:)`, trying first the name found last at `position`.
    mutating func pointer(for bytes: UnsafeBufferPointer<UInt8>, position: Int) -> UnsafePointer<xmlChar>? {
        guard position < recent.count else { return pointer(for: bytes) }
        let last = recent[position]
        if let p = last.pointer, last.length == bytes.count, memcmp(p, bytes.baseAddress!, bytes.count) == 0 { return p }
        let found = pointer(for: bytes)
        recent[position] = (found, bytes.count)
        return found
    }

    /// The stable pointer for this name; nil when it is not a plain name or there are too many.
    mutating func pointer(for bytes: UnsafeBufferPointer<UInt8>) -> UnsafePointer<xmlChar>? {
        guard let first = bytes.first, Self.isNameStart(first), bytes.count <= 256 else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { hash = (hash ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        hash |= 1
        var slot = Int(truncatingIfNeeded: hash >> 24) & (Self.slots - 1)
        while keys[slot] != 0 {
            if keys[slot] == hash, lengths[slot] == bytes.count, let p = pointers[slot], memcmp(p, bytes.baseAddress!, bytes.count) == 0 {
                return UnsafePointer(p)
            }
            slot = (slot + 1) & (Self.slots - 1)
        }
        guard count < Self.slots / 2 else { return nil }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes.count + 1)
        copy.update(from: bytes.baseAddress!, count: bytes.count)
        copy[bytes.count] = 0
        keys[slot] = hash
        pointers[slot] = copy
        lengths[slot] = bytes.count
        count += 1
        return UnsafePointer(copy)
    }

    func deallocate() {
        for p in pointers { p?.deallocate() }
    }
}
