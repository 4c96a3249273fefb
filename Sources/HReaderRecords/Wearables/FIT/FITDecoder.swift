import Foundation

/// A decoder of the FIT protocol (Garmin's Flexible and Interoperable Data Transfer), written from
/// the protocol's description (docs/wearables.md): the file header and its CRC, definition and data
/// messages with their local message types, compressed-timestamp headers, developer fields (their
/// bytes skipped), either byte order, the base types' invalid values, and the CRC of the file.
/// Several FIT files chained one after the other in one file are read in turn.
///
/// It checks the whole file before it hands over a message: a header that lies about its size, a
/// truncated file, a bad CRC, a data message of a local type never defined are one error, and
/// nothing of the file was handed on.
///
///     let messages = try FITDecoder.decode(bytes)
///     for message in messages where message.global == FITProfile.Message.record { … message.value(FITProfile.Record.heartRate) … }
public struct FITDecoder {
    /// Files larger than this are refused before they are read (a day's monitoring file is a few
    /// hundred KiB; a long activity with every second recorded a few MiB).
    public static let maxFileBytes = 64 << 20
    /// Messages in one file: far more than any file of `maxFileBytes` of real data holds (the
    /// smallest data message is one byte: this bounds what a hostile file of one-byte messages costs).
    public static let maxMessages = 4_000_000

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notFIT(String)
        case malformed(String)

        public var description: String {
            switch self {
            case let .notFIT(why): "not a FIT file: \(why)"
            case let .malformed(why): "damaged FIT file: \(why)"
            }
        }
    }

    /// One field of a data message: its number in the profile, base type and values (an array field
    /// has several; a value equal to the base type's invalid value is nil).
    public struct Field: Sendable, Equatable {
        public var number: UInt8
        public var baseType: UInt8
        public var values: [Double?]
        public var text: String?
    }

    /// A data message, decoded: its global message number, its fields, and its time (the timestamp
    /// field 253, or the time a compressed-timestamp header gives), seconds since the FIT epoch.
    public struct Message: Sendable {
        public var global: UInt16
        public var fields: [Field]
        public var timestamp: UInt32?
        /// The last full timestamp seen before this message (for `timestamp_16` fields).
        public var previousTimestamp: UInt32?

        /// The field's first value, scaled (`value / scale - offset`), nil when absent or invalid.
        public func value(_ number: UInt8, scale: Double = 1, offset: Double = 0) -> Double? {
            guard let field = fields.first(where: { $0.number == number }), let raw = field.values.first ?? nil else { return nil }
            return raw / scale - offset
        }

        /// The field's first value as a whole number, nil when absent, invalid or out of `Int`'s range
        /// (a hostile file may give any field any base type).
        public func integer(_ number: UInt8) -> Int? {
            value(number).flatMap { Int(exactly: $0.rounded(.towardZero)) }
        }

        /// The field's first value as a FIT time (or any 32-bit unsigned number), nil when it is none.
        public func uint32(_ number: UInt8) -> UInt32? {
            value(number).flatMap { UInt32(exactly: $0.rounded(.towardZero)) }
        }

        public func values(_ number: UInt8) -> [Double?] { fields.first { $0.number == number }?.values ?? [] }

        public func text(_ number: UInt8) -> String? { fields.first { $0.number == number }?.text }
    }

    /// Seconds between 1970-01-01T00:00:00Z and FIT's epoch, 1989-12-31T00:00:00Z.
    public static let epochOffset: Int64 = 631_065_600

    /// Whether the bytes begin as a FIT file does: a header size of 12 or 14 and `.FIT` at byte 8.
    public static func recognizes(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= 12 else { return false }
        let head = Array(bytes.prefix(12))
        return (head[0] == 12 || head[0] == 14) && head[8] == 0x2E && head[9] == 0x46 && head[10] == 0x49 && head[11] == 0x54
    }

    /// Every data message of the file, in order. Throws `Failure` for anything that is not a whole,
    /// intact FIT file.
    public static func decode(_ bytes: [UInt8]) throws -> [Message] {
        var messages: [Message] = []
        try decode(bytes) { messages.append($0) }
        return messages
    }

    /// Checks the file (sizes and CRCs) first, then hands over its data messages one by one.
    public static func decode(_ bytes: [UInt8], _ each: (Message) throws -> Void) throws {
        guard bytes.count <= maxFileBytes else { throw Failure.malformed("larger than \(maxFileBytes >> 20) MiB") }
        // First pass: every chained file's header and CRCs, so nothing is handed over from a damaged file.
        var files: [Range<Int>] = []
        var at = 0
        repeat {
            let range = try checkFile(bytes, at: at, first: files.isEmpty)
            files.append(range)
            at = range.upperBound + 2
        } while at < bytes.count
        var count = 0
        for range in files {
            var reader = MessageReader(bytes: bytes, range: range)
            try reader.read { message in
                count += 1
                guard count <= maxMessages else { throw Failure.malformed("more than \(maxMessages) messages") }
                try each(message)
            }
        }
    }

    /// The data records of the file starting at `at` (after its header, before its CRC), once its
    /// header and CRCs check.
    private static func checkFile(_ bytes: [UInt8], at: Int, first: Bool) throws -> Range<Int> {
        let left = bytes.count - at
        guard left >= 12 else {
            throw first ? Failure.notFIT("shorter than a FIT header") : Failure.malformed("\(left) stray bytes after the file's CRC")
        }
        let headerSize = Int(bytes[at])
        guard headerSize == 12 || headerSize == 14 else { throw first ? Failure.notFIT("a header of \(headerSize) bytes") : Failure.malformed("a chained file's header of \(headerSize) bytes") }
        guard bytes[at + 8] == 0x2E, bytes[at + 9] == 0x46, bytes[at + 10] == 0x49, bytes[at + 11] == 0x54 else {
            throw first ? Failure.notFIT("no .FIT signature at byte 8") : Failure.malformed("a chained file without its .FIT signature")
        }
        guard left >= headerSize else { throw Failure.malformed("truncated inside its header") }
        let protocolMajor = bytes[at + 1] >> 4
        guard protocolMajor <= 2 else { throw Failure.malformed("protocol version \(protocolMajor).x, which hreader does not know") }
        if headerSize == 14 {
            let stated = UInt16(bytes[at + 12]) | UInt16(bytes[at + 13]) << 8
            if stated != 0 && stated != crc(bytes[at..<(at + 12)]) { throw Failure.malformed("the header's CRC does not match") }
        }
        let dataSize = Int(UInt32(bytes[at + 4]) | UInt32(bytes[at + 5]) << 8 | UInt32(bytes[at + 6]) << 16 | UInt32(bytes[at + 7]) << 24)
        let start = at + headerSize
        guard dataSize <= left - headerSize - 2 else {
            throw Failure.malformed("the header states \(dataSize) bytes of data, but the file holds \(max(0, left - headerSize - 2)) (truncated, or the header lies)")
        }
        let end = start + dataSize
        let stated = UInt16(bytes[end]) | UInt16(bytes[end + 1]) << 8
        // The file's CRC covers the header and the data; a writer that computes none writes 0.
        if stated != 0 && stated != crc(bytes[at..<end]) { throw Failure.malformed("the file's CRC does not match (damaged or truncated)") }
        return start..<end
    }

    /// CRC-16 as the FIT protocol defines it (polynomial 0xA001, four bits at a time).
    public static func crc(_ bytes: some Sequence<UInt8>, initial: UInt16 = 0) -> UInt16 {
        let table: [UInt16] = [0x0000, 0xCC01, 0xD801, 0x1400, 0xF001, 0x3C00, 0x2800, 0xE401,
                               0xA001, 0x6C00, 0x7800, 0xB401, 0x5000, 0x9C01, 0x8801, 0x4400]
        var crc = initial
        for byte in bytes {
            var tmp = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ table[Int(byte & 0xF)]
            tmp = table[Int(crc & 0xF)]
            crc = (crc >> 4) & 0x0FFF
            crc = crc ^ tmp ^ table[Int((byte >> 4) & 0xF)]
        }
        return crc
    }

    /// Reads the records of one file's data.
    private struct MessageReader {
        struct FieldDefinition { var number: UInt8; var size: Int; var baseType: UInt8 }
        struct Definition { var global: UInt16; var bigEndian: Bool; var fields: [FieldDefinition]; var developerBytes: Int; var size: Int }

        let bytes: [UInt8]
        var at: Int
        let end: Int
        var definitions = [Definition?](repeating: nil, count: 16)
        var lastTimestamp: UInt32?

        init(bytes: [UInt8], range: Range<Int>) { self.bytes = bytes; at = range.lowerBound; end = range.upperBound }

        mutating func take(_ n: Int, _ what: String) throws -> Int {
            guard n >= 0, end - at >= n else { throw Failure.malformed("truncated inside a \(what) at byte \(at)") }
            defer { at += n }
            return at
        }

        mutating func read(_ each: (Message) throws -> Void) throws {
            while at < end {
                let header = bytes[try take(1, "record header")]
                if header & 0x80 != 0 {
                    // A compressed-timestamp header: local type in bits 5–6, a 5-bit time offset.
                    let local = Int((header >> 5) & 0x3)
                    let offset = UInt32(header & 0x1F)
                    guard let last = lastTimestamp else { throw Failure.malformed("a compressed timestamp before any full timestamp, at byte \(at - 1)") }
                    var time = (last & ~0x1F) + offset
                    if offset < last & 0x1F { time &+= 0x20 }
                    try data(local: local, compressedTime: time, each)
                } else if header & 0x40 != 0 {
                    try define(local: Int(header & 0x0F), developer: header & 0x20 != 0)
                } else {
                    try data(local: Int(header & 0x0F), compressedTime: nil, each)
                }
            }
        }

        mutating func define(local: Int, developer: Bool) throws {
            let head = try take(5, "definition")
            let architecture = bytes[head + 1]
            guard architecture <= 1 else { throw Failure.malformed("a definition with architecture \(architecture), at byte \(head)") }
            let bigEndian = architecture == 1
            let global = bigEndian ? UInt16(bytes[head + 2]) << 8 | UInt16(bytes[head + 3]) : UInt16(bytes[head + 3]) << 8 | UInt16(bytes[head + 2])
            let count = Int(bytes[head + 4])
            let start = try take(3 * count, "definition")
            var fields: [FieldDefinition] = []
            fields.reserveCapacity(count)
            var size = 0
            for i in 0..<count {
                let field = FieldDefinition(number: bytes[start + 3 * i], size: Int(bytes[start + 3 * i + 1]), baseType: bytes[start + 3 * i + 2])
                size += field.size
                fields.append(field)
            }
            var developerBytes = 0
            if developer {
                let n = Int(bytes[try take(1, "definition")])
                let devStart = try take(3 * n, "definition")
                for i in 0..<n { developerBytes += Int(bytes[devStart + 3 * i + 1]) }
            }
            definitions[local] = Definition(global: global, bigEndian: bigEndian, fields: fields, developerBytes: developerBytes, size: size + developerBytes)
        }

        mutating func data(local: Int, compressedTime: UInt32?, _ each: (Message) throws -> Void) throws {
            guard let definition = definitions[local] else {
                throw Failure.malformed("a data message of local type \(local), which no definition before it defines (byte \(at - 1))")
            }
            let start = try take(definition.size, "data message")
            var fields: [Field] = []
            fields.reserveCapacity(definition.fields.count)
            var offset = start
            var timestamp = compressedTime
            let previous = lastTimestamp
            for def in definition.fields {
                let field = Self.field(bytes, at: offset, def, bigEndian: definition.bigEndian)
                offset += def.size
                if def.number == 253, let raw = field.values.first ?? nil, let t = UInt32(exactly: raw.rounded(.towardZero)) { timestamp = t }
                fields.append(field)
            }
            // Developer fields (offset … + developerBytes) are skipped: their meaning is the app's.
            if let timestamp { lastTimestamp = timestamp }
            try each(Message(global: definition.global, fields: fields, timestamp: timestamp, previousTimestamp: previous))
        }

        /// A field's values; a size that is not a multiple of its base type's reads as bytes.
        static func field(_ bytes: [UInt8], at offset: Int, _ def: FieldDefinition, bigEndian: Bool) -> Field {
            let base = def.baseType & 0x1F
            let width = FITProfile.BaseType.width(base)
            if base == 0x07 {
                // A string: UTF-8, up to its first NUL; empty (all NUL) is invalid.
                let raw = bytes[offset..<(offset + def.size)]
                let text = raw.prefix { $0 != 0 }
                return Field(number: def.number, baseType: def.baseType, values: [], text: text.isEmpty ? nil : String(decoding: text, as: UTF8.self))
            }
            guard let width, def.size % width == 0, def.size > 0 else {
                return Field(number: def.number, baseType: 0x0D, values: bytes[offset..<(offset + def.size)].map { Double($0) }, text: nil)
            }
            var values: [Double?] = []
            values.reserveCapacity(def.size / width)
            var i = offset
            while i < offset + def.size {
                var raw: UInt64 = 0
                for k in 0..<width {
                    let byte = UInt64(bytes[bigEndian ? i + k : i + width - 1 - k])
                    raw = raw << 8 | byte
                }
                values.append(FITProfile.BaseType.value(raw, base: base))
                i += width
            }
            return Field(number: def.number, baseType: def.baseType, values: values, text: nil)
        }
    }
}
