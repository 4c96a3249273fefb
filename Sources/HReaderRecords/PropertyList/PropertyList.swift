import Foundation

/// A property list, read from an XML plist (`<plist>`, as hReader's `HReaderApplets.plist`) or a
/// binary one (`bplist00`) without Foundation: on Linux, `PropertyListSerialization` leaks the error
/// of every file it cannot read and crashed on a binary set (both found by the applet-plist fuzzer).
///
///     let list = try PropertyList.read(Data("<plist><array><string>a</string></array></plist>".utf8))
///     list    // .array([.string("a")])
///
/// Refused, with a `RecordsError` naming what and where: the OpenStep text format, a DOCTYPE that
/// declares anything (entities above all), keys repeated in a dictionary, integers beyond 64 bits,
/// binary sets, UIDs (keyed archives) and nulls, objects that contain themselves, and anything past
/// the limits below.
public enum PropertyList: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    /// Seconds since 2001-01-01T00:00:00Z, as property lists count time.
    case date(Double)
    case data([UInt8])
    case array([PropertyList])
    case dictionary([String: PropertyList])

    public enum Format: Sendable { case xml, binary }

    /// The largest file read. An applet list is a few kilobytes; hReader's own is 3.
    public static let maxBytes = 4 << 20
    /// How deep arrays and dictionaries may nest.
    public static let maxDepth = 32
    /// How many values the whole list may hold once read: a binary plist can refer to one object
    /// many times, so a small file could otherwise stand for an enormous tree.
    public static let maxValues = 100_000
    /// How many bytes of strings and data (keys included) the whole list may hold once read, each
    /// counted every time it is referred to: a 140 KB binary plist that refers to one 40 KB string
    /// 100,000 times would otherwise stand for 4 GB. Four times the largest file read.
    public static let maxTextBytes = 16 << 20

    /// Seconds from 1970-01-01 to 2001-01-01, where plist dates count from.
    public static let referenceDateOffset: Double = 978_307_200

    public static func read(_ data: Data) throws -> PropertyList {
        guard data.count <= maxBytes else {
            throw RecordsError.malformed("the property list is \(data.count) bytes, more than the \(maxBytes) hreader reads")
        }
        switch format(of: data) {
        case .binary?: return try BinaryPropertyListReader.read([UInt8](data))
        case .xml?: return try XMLPropertyListReader.read(data)
        case nil: throw RecordsError.malformed("the file is not an XML or binary property list")
        }
    }

    /// Binary when it starts with `bplist00`; XML when its first character, after a byte order mark
    /// and whitespace, is `<` (or it starts with a UTF-16 byte order mark, which libxml2 reads).
    public static func format(of data: Data) -> Format? {
        var bytes = data.prefix(4096)[...]
        if bytes.starts(with: Array("bplist00".utf8)) { return .binary }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return .xml }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == 0x3C ? .xml : nil
    }

    /// Counts values, depth and the bytes of strings and data while a reader builds the tree, and
    /// says where a limit was passed.
    struct Budget {
        private(set) var values = 0
        private(set) var textBytes = 0

        /// A string's or a data's bytes, once more.
        mutating func take(bytes: Int, at place: @autoclosure () -> String) throws {
            textBytes += bytes
            guard textBytes <= PropertyList.maxTextBytes else {
                throw RecordsError.malformed("the property list holds more than \(PropertyList.maxTextBytes >> 20) MiB of strings and data once read (\(place()))")
            }
        }

        mutating func take(depth: Int, at place: @autoclosure () -> String) throws {
            values += 1
            guard values <= PropertyList.maxValues else {
                throw RecordsError.malformed("the property list holds more than \(PropertyList.maxValues) values (\(place()))")
            }
            guard depth <= PropertyList.maxDepth else {
                throw RecordsError.malformed("the property list nests arrays and dictionaries deeper than \(PropertyList.maxDepth) (\(place()))")
            }
        }
    }
}
