import Foundation

/// One Apple Health `Record` split into the samples' columns (migration 3): the repeated strings
/// shared through a `StringInterner`, the times as numbers, the value in its stored form, the
/// metadata joined into `extras`. The reader makes it straight from the parser's bytes, on the
/// parsing thread, so the writer only binds numbers; and only when the columns give the element
/// back exactly (`attributes`), otherwise the Record stays text and is stored as an entry.
public struct SampleRecord: Sendable {
    public struct Time: Sendable, Equatable {
        public var epoch: Int64
        public var offsetMinutes: Int

        public init(epoch: Int64, offsetMinutes: Int) { self.epoch = epoch; self.offsetMinutes = offsetMinutes }
    }

    /// Type, source name and version, device and unit: one shared object for every sample of a
    /// series, so a sample handed from the parsing thread to the writer carries one reference, not
    /// five strings whose counts both threads would keep changing.
    public var strings = SampleSeriesStrings.empty
    public var type: String { strings.type }
    public var sourceName: String { strings.sourceName }
    public var sourceVersion: String { strings.sourceVersion }
    public var device: String { strings.device }
    public var unit: String { strings.unit }
    /// The attributes in document order, 4 bits each (`SampleLayout` codes); 0 ends it.
    public var layout: UInt64 = 0
    public var start = Time(epoch: 0, offsetMinutes: 0)
    public var end: Time?
    public var creation: Time?
    /// The memory address a HealthKit device text carries, different in every sample (`DeviceAddress`).
    public var deviceAddress: Int64?
    /// A REAL when the text reads back the same, else the text ('' when there is no value).
    public var value: DatabaseValue = .text("")
    /// `MetadataEntry` children: key U+001F value, joined by U+001E (XML forbids both in values).
    public var extras: String?

    /// The Record's attributes exactly as the export wrote them.
    public var attributes: [(name: String, value: String)] {
        SampleLayout.names(layout).map { ($0, text(of: $0)) }
    }

    /// One attribute as the export wrote it; nil when the Record has none of that name.
    public func attribute(_ name: String) -> String? {
        guard let code = SampleLayout.code(name) else { return nil }
        var rest = layout
        while rest != 0 {
            if rest & 0xF == UInt64(code) { return text(of: name) }
            rest >>= 4
        }
        return nil
    }

    private func text(of name: String) -> String {
        switch name {
        case "type": return type
        case "sourceName": return sourceName
        case "sourceVersion": return sourceVersion
        case "device": return DeviceAddress.joined(device, deviceAddress)
        case "unit": return unit
        case "creationDate":
            return AppleHealthDate.text(creation?.epoch ?? start.epoch, offsetMinutes: creation?.offsetMinutes ?? start.offsetMinutes)
        case "startDate": return AppleHealthDate.text(start.epoch, offsetMinutes: start.offsetMinutes)
        case "endDate": return AppleHealthDate.text(end?.epoch ?? start.epoch, offsetMinutes: end?.offsetMinutes ?? start.offsetMinutes)
        default:
            switch value {
            case let .real(number): return SampleValue.plain(number)
            case let .text(text): return text
            default: return ""
            }
        }
    }

    /// The `MetadataEntry` children (key, value), in order.
    public var metadata: [(key: String, value: String)] { SampleExtras.split(extras) }

    public init() {}

    /// A sample another format gave (a FIT file, a Health Connect export: docs/wearables.md), in the
    /// form an export's Record has: its series' strings, start and end, value, and metadata. The
    /// layout names the attributes a Record of it would carry (an empty version, device or unit is
    /// left out), so it is read back as any Apple Health sample is.
    public init(strings: SampleSeriesStrings, start: Time, end: Time?, value: DatabaseValue, metadata: [(key: String, value: String)] = []) {
        self.strings = strings
        self.start = start
        self.end = end
        self.value = value
        extras = SampleExtras.joined(metadata)
        var layout: UInt64 = 0
        for (code, present) in [(1, true), (2, true), (3, !strings.sourceVersion.isEmpty), (4, !strings.device.isEmpty),
                                (5, !strings.unit.isEmpty), (7, true), (8, true), (9, true)] where present {
            layout = layout << 4 | UInt64(code)
        }
        self.layout = layout
    }

    /// Metadata entries as `extras` holds them (nil for none).
    public static func extras(_ metadata: [(key: String, value: String)]) -> String? { SampleExtras.joined(metadata) }

    /// From text attributes (tests, and Records read some other way); nil when they do not fit the columns exactly.
    public init?(attributes: [(name: String, value: String)], metadata: [(key: String, value: String)] = []) {
        var interner = StringInterner(interning: false)
        var parser = SampleRecordParser()
        for (name, value) in attributes {
            guard let field = SampleLayout.code(name) else { return nil }
            var value = value
            let fits = value.withUTF8 { parser.add(field: field, $0, interner: &interner) }
            guard fits else { return nil }
        }
        guard let record = parser.finish(interner: &interner) else { return nil }
        self = record
        extras = SampleExtras.joined(metadata)
    }
}

/// The names of the attributes a sample's columns hold, and their 4-bit codes (the series' layout).
public enum SampleLayout {
    public static let names = ["", "type", "sourceName", "sourceVersion", "device", "unit", "creationDate", "startDate", "endDate", "value"]

    public static func code(_ name: String) -> UInt8? {
        guard let index = names.firstIndex(of: name), index > 0 else { return nil }
        return UInt8(index)
    }

    /// "type,sourceName,…", as the series stores its layout.
    package static func text(_ layout: UInt64) -> String { self.names(layout).joined(separator: ",") }

    static func names(_ layout: UInt64) -> [String] {
        var names: [String] = [], rest = layout
        while rest != 0 { names.append(Self.names[Int(rest & 0xF)]); rest >>= 4 }
        return names.reversed()
    }

    package static func layout(_ text: String) -> UInt64? {
        var code: UInt64 = 0
        for name in text.split(separator: ",") {
            guard let index = names.firstIndex(of: String(name)), index > 0 else { return nil }
            code = code << 4 | UInt64(index)
        }
        return code
    }
}

/// Metadata entries in one text column: key U+001F value, entries joined by U+001E.
enum SampleExtras {
    static func joined(_ metadata: [(key: String, value: String)]) -> String? {
        guard !metadata.isEmpty else { return nil }
        var text = ""
        for (i, entry) in metadata.enumerated() {
            if i > 0 { text += "\u{1E}" }
            text += entry.key + "\u{1F}" + entry.value
        }
        return text
    }

    static func split(_ extras: String?) -> [(key: String, value: String)] {
        guard let extras else { return [] }
        return extras.split(separator: "\u{1E}", omittingEmptySubsequences: false).map { pair in
            let parts = pair.split(separator: "\u{1F}", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }
}

/// The strings of one series (`SampleRecord.strings`).
public final class SampleSeriesStrings: Hashable, Sendable {
    public let type, sourceName, sourceVersion, device, unit: String

    public init(type: String, sourceName: String, sourceVersion: String, device: String, unit: String) {
        self.type = type; self.sourceName = sourceName; self.sourceVersion = sourceVersion; self.device = device; self.unit = unit
    }

    public static let empty = SampleSeriesStrings(type: "", sourceName: "", sourceVersion: "", device: "", unit: "")

    public static func == (a: SampleSeriesStrings, b: SampleSeriesStrings) -> Bool {
        a === b || (a.type == b.type && a.sourceName == b.sourceName && a.sourceVersion == b.sourceVersion && a.device == b.device && a.unit == b.unit)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type); hasher.combine(sourceName); hasher.combine(sourceVersion); hasher.combine(device); hasher.combine(unit)
    }
}

/// Builds a `SampleRecord` one attribute at a time from UTF-8 bytes (the SAX parser's buffers).
public struct SampleRecordParser {
    private var record = SampleRecord()
    private var type = "", sourceName = "", sourceVersion = "", device = "", unit = ""
    private var seen: UInt16 = 0
    private var hasType = false, hasStart = false

    public init() {}

    /// Adds attribute `field` (a `SampleLayout` code); false when the Record does not fit the columns
    /// exactly (a date not in the export's format, an attribute twice).
    public mutating func add(field: UInt8, _ bytes: UnsafeBufferPointer<UInt8>, interner: inout StringInterner) -> Bool {
        guard (1...9).contains(field) else { return false }
        let bit: UInt16 = 1 << (field - 1)
        guard seen & bit == 0 else { return false }
        seen |= bit
        record.layout = record.layout << 4 | UInt64(field)
        switch field {
        case 1:
            type = interner.string(bytes, field: 1)
            hasType = !bytes.isEmpty
        case 2: sourceName = interner.string(bytes, field: 2)
        case 3: sourceVersion = interner.string(bytes, field: 3)
        case 4:
            let (text, address) = DeviceAddress.split(bytes, interner: &interner)
            device = text
            record.deviceAddress = address
        case 5: unit = interner.string(bytes, field: 5)
        case 6, 7, 8:
            guard let t = AppleHealthDate.parse(bytes, exact: true) else { return false }
            let time = SampleRecord.Time(epoch: t.epoch, offsetMinutes: t.offsetMinutes)
            if field == 6 { record.creation = time } else if field == 7 { record.start = time; hasStart = true } else { record.end = time }
        default:
            record.value = SampleValue.stored(bytes)
        }
        return true
    }

    /// The record, or nil without a type or a start.
    public func finish(interner: inout StringInterner) -> SampleRecord? {
        guard hasType && hasStart else { return nil }
        var record = record
        record.strings = interner.series(type: type, sourceName: sourceName, sourceVersion: sourceVersion, device: device, unit: unit)
        return record
    }
}

/// Strings made once per distinct text: an export repeats a few dozen types, sources, devices and
/// units over millions of Records. Keyed by the bytes (no String made to look one up); bounded, so
/// a document of endless distinct values makes fresh strings instead of growing it.
public struct StringInterner {
    private static let slots = 4096
    private static let maxBytes = 512
    private var hashes: [UInt64]
    private var strings: [String?]
    private var count = 0
    private var series: [SampleSeriesStrings: SampleSeriesStrings] = [:]
    /// The series asked for last, most recent first: an export lists a type's samples together,
    /// and a few sources (watch, phone) take turns within a type.
    private var recentSeries: [SampleSeriesStrings] = []
    /// The string each attribute (a `SampleLayout` code) had last: the next sample nearly always
    /// repeats it, and comparing the bytes is cheaper than hashing them.
    private var lastByField = [String](repeating: "", count: 16)

    /// Without `interning`, every call makes a fresh string (for one-off uses).
    public init(interning: Bool = true) {
        hashes = interning ? [UInt64](repeating: 0, count: Self.slots) : []
        strings = interning ? [String?](repeating: nil, count: Self.slots) : []
    }

    /// `string(bytes)`, trying first what attribute `field` (0..<16) was last.
    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, field: Int) -> String {
        if Self.equal(lastByField[field], bytes) { return lastByField[field] }
        let string = string(bytes)
        lastByField[field] = string
        return string
    }

    public mutating func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        guard bytes.count <= Self.maxBytes, !hashes.isEmpty else { return String(decoding: bytes, as: UTF8.self) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        hash |= 1   // 0 marks an empty slot
        var slot = Int(truncatingIfNeeded: hash >> 20) & (Self.slots - 1)
        while hashes[slot] != 0 {
            if hashes[slot] == hash, let string = strings[slot], Self.equal(string, bytes) { return string }
            slot = (slot + 1) & (Self.slots - 1)
        }
        let string = String(decoding: bytes, as: UTF8.self)
        if count < Self.slots / 2 {
            hashes[slot] = hash
            strings[slot] = string
            count += 1
        }
        return string
    }

    /// The one shared object for these five strings (the recent ones are tried first, by strings
    /// that are nearly always the interned ones, so `==` is a comparison of pointers).
    public mutating func series(type: String, sourceName: String, sourceVersion: String, device: String, unit: String) -> SampleSeriesStrings {
        for (i, recent) in recentSeries.enumerated() where recent.type == type && recent.sourceName == sourceName
            && recent.sourceVersion == sourceVersion && recent.device == device && recent.unit == unit {
            if i > 0 { recentSeries.swapAt(i, i - 1) }
            return recent
        }
        let fresh = SampleSeriesStrings(type: type, sourceName: sourceName, sourceVersion: sourceVersion, device: device, unit: unit)
        guard !hashes.isEmpty else { return fresh }
        let shared = series[fresh] ?? fresh
        if series[fresh] == nil, series.count < Self.slots { series[fresh] = fresh }
        if recentSeries.count == 8 { recentSeries.removeLast() }
        recentSeries.insert(shared, at: 0)
        return shared
    }

    private static func equal(_ string: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var string = string
        return string.withUTF8 { stored in
            stored.count == bytes.count && (stored.isEmpty || memcmp(stored.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
    }
}

/// A sample's value: a REAL when its text reads back the same (`72`, `0.98`), else the text itself
/// (`72.50`, `HKCategoryValueSeverityModerate`); '' as a text when the Record has no value (its
/// series' layout says so).
enum SampleValue {
    static func stored(_ text: String?) -> DatabaseValue {
        guard let text, !text.isEmpty else { return .text("") }
        if let number = Double(text), number.isFinite, plain(number) == text { return .real(number) }
        return .text(text)
    }

    static func stored(_ bytes: UnsafeBufferPointer<UInt8>) -> DatabaseValue {
        if let integer = plainInteger(bytes) { return .real(Double(integer)) }
        return stored(String(decoding: bytes, as: UTF8.self))
    }

    /// The value of digits that `plain` writes back the same (`72`, `-3`, `0`; not `072`, `-0`, `+1`),
    /// read without making a string: most samples' values.
    private static func plainInteger(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { i = 1 }
        let digits = bytes.count - i
        guard digits > 0, digits <= 15 else { return nil }
        if bytes[i] == UInt8(ascii: "0") && (digits > 1 || negative) { return nil }
        var value: Int64 = 0
        while i < bytes.count {
            let digit = bytes[i] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            i += 1
        }
        return negative ? -value : value
    }

    static func plain(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }
}

/// A HealthKit device as exports write it, `<<HKDevice: 0x2a8f52a90>, name:Apple Watch, …>`, carries the
/// address of an object in memory, different in every sample: it is kept per sample, the rest per series.
enum DeviceAddress {
    static let prefix = "<<HKDevice: 0x"
    private static let prefixBytes = Array(prefix.utf8)

    /// The device without its address, and the address; the text unchanged (and nil) when it does not
    /// read back exactly (upper-case digits, leading zeros, more than 15 digits).
    static func split(_ text: String) -> (String, Int64?) {
        var interner = StringInterner(interning: false)
        var text = text
        return text.withUTF8 { split($0, interner: &interner) }
    }

    static func split(_ bytes: UnsafeBufferPointer<UInt8>, interner: inout StringInterner) -> (String, Int64?) {
        let prefix = prefixBytes
        guard bytes.count > prefix.count, memcmp(bytes.baseAddress!, prefix, prefix.count) == 0 else { return (interner.string(bytes, field: 4), nil) }
        var address: Int64 = 0, digits = 0
        var i = prefix.count
        while i < bytes.count, digits <= 15 {
            let b = bytes[i]
            let digit: Int64
            switch b {
            case 0x30...0x39: digit = Int64(b - 0x30)
            case 0x61...0x66: digit = Int64(b - 0x61 + 10)
            case 0x41...0x46: return (interner.string(bytes), nil)   // upper case would not read back
            default: digit = -1
            }
            if digit < 0 { break }
            address = address << 4 | digit
            digits += 1
            i += 1
        }
        // Leading zeros (but a lone "0") would not read back either.
        guard digits > 0, digits <= 15, !(digits > 1 && bytes[prefix.count] == 0x30) else { return (interner.string(bytes), nil) }
        // The rest, after the prefix: interned as prefix + rest, without the address.
        let restCount = bytes.count - i
        let device = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: prefix.count + restCount) { buffer in
            let base = buffer.baseAddress!
            prefix.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: prefix.count) }
            (base + prefix.count).update(from: bytes.baseAddress! + i, count: restCount)
            return interner.string(UnsafeBufferPointer(buffer), field: 4)
        }
        return (device, address)
    }

    static func joined(_ device: String, _ address: Int64?) -> String {
        guard let address, device.hasPrefix(prefix) else { return device }
        return prefix + String(address, radix: 16) + device.dropFirst(prefix.count)
    }
}
