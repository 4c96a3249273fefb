import Foundation

/// A small writer of FIT files, for the tests, the generator and the fuzz seeds (never a
/// third-party file): the header with its CRC, definition and data messages on local message
/// types, either byte order, compressed-timestamp headers, developer fields, and the file's CRC-16 as
/// the FIT protocol defines it. Independent of hreader's decoder (it shares no code with it).
///
///     var fit = FITWriter()
///     fit.define(local: 0, global: 20, fields: [(253, 4, 0x86), (3, 1, 0x02)])
///     fit.data(local: 0, [.uint(FITWriter.time("2026-03-01T08:00:00Z")), .uint(71)])
///     let bytes = fit.file()
public struct FITWriter {
    public enum Value {
        /// A number, written in the field's width (an invalid value is written as the number it is).
        case uint(UInt64)
        /// A signed number, two's complement in the field's width.
        case int(Int64)
        /// Several numbers (an array field).
        case array([UInt64])
        /// A string, padded with NULs to the field's size.
        case string(String)
    }

    public struct Field {
        public var number: UInt8
        public var size: UInt8
        public var baseType: UInt8
    }

    private struct Definition {
        var fields: [Field]
        var developer: [UInt8]        // sizes
        var bigEndian: Bool
    }

    public var headerSize: UInt8 = 14
    /// Whether the header's CRC is computed (0 written otherwise, which readers accept).
    public var headerCRC = true
    public var protocolVersion: UInt8 = 0x20
    public var profileVersion: UInt16 = 2132
    private var records: [UInt8] = []
    private var definitions: [UInt8: Definition] = [:]

    public init() {}

    /// Seconds since the FIT epoch (1989-12-31T00:00:00Z) of an RFC 3339 UTC time.
    public static func time(_ text: String) -> UInt32 {
        let formatter = ISO8601DateFormatter()
        return UInt32(formatter.date(from: text)!.timeIntervalSince1970 - 631_065_600)
    }

    public static func time(unix: Int64) -> UInt32 { UInt32(unix - 631_065_600) }

    /// A definition message: `fields` as (number, size, base type); `developer` fields as
    /// (number, size, developer data index).
    public mutating func define(local: UInt8, global: UInt16, fields: [(UInt8, UInt8, UInt8)],
                                developer: [(UInt8, UInt8, UInt8)] = [], bigEndian: Bool = false) {
        records.append(0x40 | (developer.isEmpty ? 0 : 0x20) | (local & 0x0F))
        records.append(0)
        records.append(bigEndian ? 1 : 0)
        records += bigEndian ? [UInt8(global >> 8), UInt8(global & 0xFF)] : [UInt8(global & 0xFF), UInt8(global >> 8)]
        records.append(UInt8(fields.count))
        for f in fields { records += [f.0, f.1, f.2] }
        if !developer.isEmpty {
            records.append(UInt8(developer.count))
            for d in developer { records += [d.0, d.1, d.2] }
        }
        definitions[local] = Definition(fields: fields.map { Field(number: $0.0, size: $0.1, baseType: $0.2) },
                                        developer: developer.map(\.1), bigEndian: bigEndian)
    }

    /// A data message with a normal header.
    public mutating func data(local: UInt8, _ values: [Value], developer: [[UInt8]] = []) {
        records.append(local & 0x0F)
        body(local: local, values, developer: developer)
    }

    /// A data message with a compressed-timestamp header (local types 0–3, a 5-bit time offset).
    public mutating func compressed(local: UInt8, timeOffset: UInt8, _ values: [Value]) {
        records.append(0x80 | ((local & 0x3) << 5) | (timeOffset & 0x1F))
        body(local: local, values, developer: [])
    }

    /// Raw bytes appended to the records (for damaged files).
    public mutating func raw(_ bytes: [UInt8]) { records += bytes }

    private mutating func body(local: UInt8, _ values: [Value], developer: [[UInt8]]) {
        let definition = definitions[local]!
        precondition(values.count == definition.fields.count, "one value per field")
        for (field, value) in zip(definition.fields, values) {
            let width = Self.width(field.baseType)
            var numbers: [UInt64] = []
            switch value {
            case let .uint(n): numbers = [n]
            case let .int(n): numbers = [UInt64(bitPattern: n)]
            case let .array(a): numbers = a
            case let .string(s):
                var bytes = Array(s.utf8.prefix(Int(field.size)))
                bytes += [UInt8](repeating: 0, count: Int(field.size) - bytes.count)
                records += bytes
                continue
            }
            var written = 0
            for n in numbers where written + width <= Int(field.size) {
                var bytes = (0..<width).map { UInt8(truncatingIfNeeded: n >> (8 * UInt64($0))) }
                if definition.bigEndian { bytes.reverse() }
                records += bytes
                written += width
            }
            records += [UInt8](repeating: 0xFF, count: Int(field.size) - written)
        }
        for (i, size) in definition.developer.enumerated() {
            var bytes = i < developer.count ? Array(developer[i].prefix(Int(size))) : []
            bytes += [UInt8](repeating: 0, count: Int(size) - bytes.count)
            records += bytes
        }
    }

    static func width(_ baseType: UInt8) -> Int {
        switch baseType & 0x1F {
        case 0x03, 0x04, 0x0B: 2
        case 0x05, 0x06, 0x08, 0x0C: 4
        case 0x09, 0x0E, 0x0F, 0x10: 8
        default: 1
        }
    }

    /// The whole file: header (with its CRC), the records, the file's CRC. `statedDataSize`
    /// overrides the data size the header states (a lying header).
    public func file(statedDataSize: UInt32? = nil, fileCRC: UInt16? = nil) -> [UInt8] {
        let size = statedDataSize ?? UInt32(records.count)
        var header: [UInt8] = [headerSize, protocolVersion, UInt8(profileVersion & 0xFF), UInt8(profileVersion >> 8),
                               UInt8(size & 0xFF), UInt8((size >> 8) & 0xFF), UInt8((size >> 16) & 0xFF), UInt8(size >> 24),
                               0x2E, 0x46, 0x49, 0x54]
        if headerSize == 14 {
            let crc = headerCRC ? Self.crc(header) : 0
            header += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        }
        let body = header + records
        let crc = fileCRC ?? Self.crc(body)
        return body + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }

    /// The FIT protocol's CRC-16, computed bit by bit (polynomial 0xA001, reflected), not with the
    /// nibble table the protocol's example and hreader's decoder use: two writings of one CRC.
    public static func crc(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xA001 : crc >> 1 }
        }
        return crc
    }
}
