/// Reads a binary property list (`bplist00`, as Foundation and CoreFoundation write it):
///
///     "bplist00" | objects … | offset table | trailer (32 bytes)
///
/// The trailer gives the size of an offset and of an object reference, the number of objects, the
/// top object and where the offset table starts. Every object begins with a marker byte: its type
/// in the high nibble, its size or count in the low one (0xF: an integer object with the count
/// follows). Every offset, count and reference is checked against the file before it is used; an
/// object that contains itself is refused rather than followed.
struct BinaryPropertyListReader {
    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    /// Where the offset table starts, which is where the objects end.
    private let tableOffset: Int
    private var budget = PropertyList.Budget()
    /// The objects being read, outermost first: one met again inside itself is a cycle.
    private var path: [Int] = []

    static func read(_ bytes: [UInt8]) throws -> PropertyList {
        var reader = try BinaryPropertyListReader(bytes)
        return try reader.value(of: reader.topObject, depth: 0)
    }

    private let topObject: Int

    private init(_ bytes: [UInt8]) throws {
        self.bytes = bytes
        guard bytes.count >= 8 + 1 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
            throw Self.damaged("it is too short to hold a trailer")
        }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw Self.damaged("its trailer gives offsets of \(offsetSize) and references of \(referenceSize) bytes")
        }
        guard let count = Self.integer(bytes, at: trailer + 8, size: 8), let top = Self.integer(bytes, at: trailer + 16, size: 8),
              let table = Self.integer(bytes, at: trailer + 24, size: 8) else {
            throw Self.damaged("its trailer holds numbers beyond the file")
        }
        // The table of `count` offsets lies between the objects and the trailer.
        let (tableBytes, overflow) = count.multipliedReportingOverflow(by: offsetSize)
        guard count >= 1, !overflow, table >= 9, table <= trailer, tableBytes <= trailer - table else {
            throw Self.damaged("its offset table does not fit in the file")
        }
        guard top < count else { throw Self.damaged("its top object is not in the offset table") }
        objectCount = count
        topObject = top
        tableOffset = table
    }

    private static func damaged(_ why: String) -> RecordsError {
        RecordsError.malformed("the binary property list is damaged: \(why)")
    }

    /// A big-endian unsigned integer of `size` bytes at `start`, if it lies in `bytes` and fits an Int.
    private static func integer(_ bytes: [UInt8], at start: Int, size: Int) -> Int? {
        guard start >= 0, size >= 1, size <= 8, start <= bytes.count - size else { return nil }
        var value: UInt64 = 0
        for index in start..<(start + size) { value = value << 8 | UInt64(bytes[index]) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }

    /// `size` bytes at `start`, which must lie among the objects.
    private func slice(_ start: Int, _ size: Int, of object: Int) throws -> ArraySlice<UInt8> {
        guard size >= 0, start >= 8, start <= tableOffset, size <= tableOffset - start else {
            throw Self.damaged("object \(object) runs past the objects")
        }
        return bytes[start..<(start + size)]
    }

    private func offset(of object: Int) throws -> Int {
        guard let offset = Self.integer(bytes, at: tableOffset + object * offsetSize, size: offsetSize),
              offset >= 8, offset < tableOffset else {
            throw Self.damaged("object \(object) has an offset outside the objects")
        }
        return offset
    }

    private mutating func value(of object: Int, depth: Int) throws -> PropertyList {
        guard !path.contains(object) else { throw Self.damaged("object \(object) contains itself") }
        try budget.take(depth: depth, at: "object \(object)")
        let start = try offset(of: object)
        let marker = bytes[start]
        let low = Int(marker & 0x0F)
        switch marker >> 4 {
        case 0x0:
            switch low {
            case 0x8: return .bool(false)
            case 0x9: return .bool(true)
            default: throw Self.damaged("object \(object) is a null or fill object, which property lists do not hold")
            }
        case 0x1:
            guard low <= 4 else { throw Self.damaged("object \(object) is an integer of \(1 << min(low, 15)) bytes") }
            return .integer(try signedInteger(try slice(start + 1, 1 << low, of: object), object: object))
        case 0x2:
            guard low == 2 || low == 3 else { throw Self.damaged("object \(object) is a real of an unknown size") }
            let raw = try slice(start + 1, 1 << low, of: object).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .real(low == 2 ? Double(Float(bitPattern: UInt32(raw))) : Double(bitPattern: raw))
        case 0x3:
            guard low == 3 else { throw Self.damaged("object \(object) is a date of an unknown size") }
            let raw = try slice(start + 1, 8, of: object).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .date(Double(bitPattern: raw))
        case 0x4:
            let (count, first) = try length(low, after: start, of: object)
            let field = try slice(first, count, of: object)
            try budget.take(bytes: count, at: "object \(object)")
            return .data(Array(field))
        case 0x5:
            let (count, first) = try length(low, after: start, of: object)
            let field = try slice(first, count, of: object)
            try budget.take(bytes: count, at: "object \(object)")
            guard field.allSatisfy({ $0 < 0x80 }) else { throw Self.damaged("object \(object) is an ASCII string with other bytes") }
            return .string(String(decoding: field, as: UTF8.self))
        case 0x6:
            let (count, first) = try length(low, after: start, of: object)
            guard count <= Int.max / 2 else { throw Self.damaged("object \(object) is a string longer than the file") }
            let field = try slice(first, count * 2, of: object)
            try budget.take(bytes: field.count, at: "object \(object)")
            var units: [UInt16] = []
            units.reserveCapacity(count)
            var index = field.startIndex
            while index < field.endIndex {
                units.append(UInt16(field[index]) << 8 | UInt16(field[index + 1]))
                index += 2
            }
            var text = ""
            var iterator = units.makeIterator()
            var decoder = UTF16()
            while true {
                switch decoder.decode(&iterator) {
                case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
                case .emptyInput: return .string(text)
                case .error: throw Self.damaged("object \(object) is a string that is not valid UTF-16")
                }
            }
        case 0x8:
            throw RecordsError.malformed("the binary property list holds a UID (object \(object)): it is a keyed archive, not a property list of values")
        case 0xA:
            let (count, first) = try length(low, after: start, of: object)
            let references = try self.references(count, at: first, of: object)
            path.append(object)
            defer { path.removeLast() }
            var items: [PropertyList] = []
            items.reserveCapacity(min(count, 1024))
            for reference in references { items.append(try value(of: reference, depth: depth + 1)) }
            return .array(items)
        case 0xB, 0xC:
            throw RecordsError.malformed("the binary property list holds a set (object \(object)), which hreader does not read; use arrays")
        case 0xD:
            let (count, first) = try length(low, after: start, of: object)
            guard count <= Int.max / 2 else { throw Self.damaged("object \(object) is a dictionary larger than the file") }
            let references = try self.references(count * 2, at: first, of: object)
            path.append(object)
            defer { path.removeLast() }
            var members: [String: PropertyList] = [:]
            for index in 0..<count {
                guard case .string(let key) = try value(of: references[index], depth: depth + 1) else {
                    throw Self.damaged("dictionary \(object) has a key that is not a string")
                }
                guard members[key] == nil else {
                    throw RecordsError.malformed("the binary property list has the key '\(XMLPropertyListReader.excerpt(key))' twice in dictionary \(object)")
                }
                members[key] = try value(of: references[count + index], depth: depth + 1)
            }
            return .dictionary(members)
        default:
            throw Self.damaged("object \(object) has the unknown marker 0x\(String(marker, radix: 16))")
        }
    }

    /// 1, 2 and 4-byte integers are unsigned, 8-byte ones signed; a 16-byte one (how Foundation writes
    /// an unsigned value past Int64.max) is read when it fits Int64.
    private func signedInteger(_ field: ArraySlice<UInt8>, object: Int) throws -> Int64 {
        let low = field.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch field.count {
        case 8: return Int64(bitPattern: low)
        case 16:
            let high = field.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let value = Int64(bitPattern: low)
            guard (high == 0 && value >= 0) || (high == .max && value < 0) else {
                throw RecordsError.malformed("the binary property list has an integer beyond 64 bits (object \(object))")
            }
            return value
        default: return Int64(low)
        }
    }

    /// The count of a data, string, array or dictionary object, and where its contents start: the
    /// marker's low nibble, or an integer object after the marker when the nibble is 0xF.
    private func length(_ low: Int, after start: Int, of object: Int) throws -> (count: Int, first: Int) {
        guard low == 0xF else { return (low, start + 1) }
        let marker = try slice(start + 1, 1, of: object).first!
        let size = 1 << Int(marker & 0x0F)
        guard marker >> 4 == 0x1, size <= 8 else { throw Self.damaged("object \(object) has a count that is not an integer") }
        let field = try slice(start + 2, size, of: object)
        guard let count = Self.integer(bytes, at: field.startIndex, size: size), count <= tableOffset else {
            throw Self.damaged("object \(object) has a count larger than the file")
        }
        return (count, start + 2 + size)
    }

    /// `count` object references at `start`, each one checked to name an object.
    private func references(_ count: Int, at start: Int, of object: Int) throws -> [Int] {
        let (size, overflow) = count.multipliedReportingOverflow(by: referenceSize)
        guard !overflow else { throw Self.damaged("object \(object) holds more references than the file") }
        let field = try slice(start, size, of: object)
        return try stride(from: field.startIndex, to: field.endIndex, by: referenceSize).map { at in
            guard let reference = Self.integer(bytes, at: at, size: referenceSize), reference < objectCount else {
                throw Self.damaged("object \(object) refers to an object that does not exist")
            }
            return reference
        }
    }
}
