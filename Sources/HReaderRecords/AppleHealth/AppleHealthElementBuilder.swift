import CLibXML2
import Foundation
import HReaderModel

/// Turns the parser's start and end events into `AppleHealthElement`s: one top-level element (with
/// its `MetadataEntry` children and a correlation's `Record`s) at a time, kept until handed over.
/// It enforces the export's shape (root `<HealthData>`) and the limits on what it keeps.
struct AppleHealthElementBuilder {
    /// The most one top-level element may keep: its attribute values and its children's, and a
    /// fixed cost for each child kept (`childBytes`, `metadataBytes`).
    static let maxElementBytes = 16 << 20
    /// The most children one element keeps: `MetadataEntry`s, and a correlation's `Record`s (a
    /// blood-pressure correlation has two Records, a food one a few dozen, any one a handful of
    /// metadata entries). A correlation of a million empty `<Record/>`s is refused, not kept.
    static let maxChildren = 1_000
    /// What keeping a correlation's `Record` costs besides its attribute values (the element and
    /// its lists, about this in memory), so that children without attributes count too.
    static let childBytes = 256
    /// What keeping a `MetadataEntry` costs besides its key and value (its place in a list).
    static let metadataBytes = 64

    private(set) var sawRoot = false
    private var depth = 0                          // elements open, the root included
    private var current: AppleHealthElement?       // the top-level element being read
    private var child: AppleHealthElement?         // a correlation's Record being read
    private var kept = 0                           // bytes `current` keeps
    private var currentChildren = 0               // children `current` keeps
    private var childChildren = 0                  // metadata entries `child` keeps
    private var inWorkoutRoute = false             // inside a Workout's <WorkoutRoute>
    private var ready: [AppleHealthElement] = []
    private var names = AppleHealthNames()
    /// The texts samples repeat (types, sources, devices, units), made once.
    private var interner = StringInterner()
    /// Records go into the samples' columns when they fit (off: every element stays text, which
    /// the fuzzer compares with).
    let splittingSamples: Bool

    init(splittingSamples: Bool = true) { self.splittingSamples = splittingSamples }

    var insideRoot: Bool { sawRoot && depth > 0 }
    /// Elements open, the root included.
    var depthOpen: Int { depth }

    /// The innermost element being kept, for "the export ends inside …".
    var openElement: (name: String, line: Int)? {
        if let child { return (child.kind.rawValue, child.line) }
        if let current { return (current.kind.rawValue, current.line) }
        return nil
    }

    mutating func start(_ localname: UnsafePointer<xmlChar>, attributes: SAXAttributes, line: Int) throws {
        depth += 1
        guard depth <= XMLPolicy.maxDepth else {
            throw RecordsError.malformed("elements nest more than \(XMLPolicy.maxDepth) deep at line \(line); an Apple Health export never does")
        }
        let name = names[localname]
        switch depth {
        case 1:
            guard name.role == .root else {
                throw RecordsError.malformed("this XML is not an Apple Health export (its root is <\(name.string)>, not <HealthData>)")
            }
            sawRoot = true
        case 2:
            guard let kind = name.kind else { return }
            kept = 0
            currentChildren = 0
            if kind == .record, splittingSamples, let sample = try sample(attributes, line: line) {
                current = AppleHealthElement(sample: sample, line: line)
            } else {
                current = AppleHealthElement(kind: kind, attributes: try keep(attributes, line: line), line: line)
            }
        case 3 where current != nil:
            if name.role == .metadataEntry {
                try keepChild(ofCurrent: true, costing: Self.metadataBytes, line: line)
                let entry = try metadata(attributes, line: line)
                current?.appendMetadata(key: entry.key, value: entry.value)
            } else if name.role == .workoutRoute, current?.kind == .workout {
                inWorkoutRoute = true
            } else if name.role == .record, current?.kind == .correlation {
                try keepChild(ofCurrent: true, costing: Self.childBytes, line: line)
                childChildren = 0
                child = AppleHealthElement(kind: .record, attributes: try keep(attributes, line: line), line: line)
            }
        case 4 where inWorkoutRoute && name.role == .fileReference:
            // The route's file (`/workout-routes/route_….gpx`), read by the import beside the XML.
            try keepChild(ofCurrent: true, costing: Self.metadataBytes, line: line)
            for index in 0..<attributes.count {
                guard let attribute = attributes.name(index), names[attribute].string == "path" else { continue }
                let path = try string(attributes.value(index), line: line)
                current?.routeFiles.append(path)
            }
        case 4 where child != nil && name.role == .metadataEntry:
            try keepChild(ofCurrent: false, costing: Self.metadataBytes, line: line)
            let entry = try metadata(attributes, line: line)
            child?.appendMetadata(key: entry.key, value: entry.value)
        default:
            break
        }
    }

    mutating func end() {
        if depth == 3 { inWorkoutRoute = false }
        if depth == 3, let finished = child.take() {
            current?.children.append(finished)
        } else if depth == 2, let finished = current.take() {
            ready.append(finished)
        }
        depth -= 1
    }

    /// Hands over the finished elements in document order and forgets them.
    mutating func handOver(_ handle: (AppleHealthElement) throws -> Void) rethrows {
        defer { ready.removeAll(keepingCapacity: true) }
        for element in ready { try handle(element) }
    }

    /// A Record's attributes straight into the samples' columns, from libxml2's buffers; nil when
    /// they do not fit exactly (another attribute, an inexact date): then it is text.
    private mutating func sample(_ attributes: SAXAttributes, line: Int) throws -> SampleRecord? {
        var parser = SampleRecordParser()
        for index in 0..<attributes.count {
            guard let name = attributes.name(index) else { continue }
            let field = names.field(name)
            let bytes = attributes.value(index)
            try account(bytes, line: line)
            guard field != 0 else { return nil }
            let fits: Bool
            if !bytes.isEmpty, memchr(bytes.baseAddress!, 0x26, bytes.count) != nil {
                var restored = Self.ampersandsRestored(bytes)
                fits = restored.withUTF8 { parser.add(field: field, $0, interner: &interner) }
            } else {
                fits = parser.add(field: field, bytes, interner: &interner)
            }
            guard fits else { return nil }
        }
        return parser.finish(interner: &interner)
    }

    private mutating func keep(_ attributes: SAXAttributes, line: Int) throws -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = []
        pairs.reserveCapacity(attributes.count)
        for index in 0..<attributes.count {
            guard let name = attributes.name(index) else { continue }
            pairs.append((names[name].string, try string(attributes.value(index), line: line)))
        }
        return pairs
    }

    private mutating func metadata(_ attributes: SAXAttributes, line: Int) throws -> (key: String, value: String) {
        var entry = (key: "", value: "")
        for index in 0..<attributes.count {
            guard let name = attributes.name(index) else { continue }
            switch names[name].role {
            case .key: entry.key = try string(attributes.value(index), line: line)
            case .value: entry.value = try string(attributes.value(index), line: line)
            default: continue
            }
        }
        return entry
    }

    /// Counts a child about to be kept against the limits: one more child of `current` (or of a
    /// correlation's `child`), and its fixed cost against what the top-level element keeps.
    private mutating func keepChild(ofCurrent: Bool, costing bytes: Int, line: Int) throws {
        let count: Int
        if ofCurrent { currentChildren += 1; count = currentChildren } else { childChildren += 1; count = childChildren }
        if count > Self.maxChildren, let parent = ofCurrent ? current : child {
            throw RecordsError.malformed("the <\(parent.kind.rawValue)> at line \(parent.line) has more than \(Self.maxChildren) "
                                         + "children (MetadataEntry, Record); an export's have a handful; refused")
        }
        try charge(bytes, line: line)
    }

    /// Counts a value against the limits on what one element keeps.
    private mutating func account(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) throws {
        guard bytes.count <= XMLPolicy.maxValueBytes else {
            throw RecordsError.malformed("an attribute value at line \(line) is longer than \(XMLPolicy.maxValueBytes >> 20) MiB; refused")
        }
        try charge(bytes.count + 16, line: line)
    }

    private mutating func charge(_ bytes: Int, line: Int) throws {
        kept += bytes
        guard kept <= Self.maxElementBytes else {
            throw RecordsError.malformed("the element at line \(line) holds more than \(Self.maxElementBytes >> 20) MiB of attributes and children; refused")
        }
    }

    private mutating func string(_ bytes: UnsafeBufferPointer<UInt8>, line: Int) throws -> String {
        try account(bytes, line: line)
        guard let start = bytes.baseAddress, memchr(start, 0x26, bytes.count) != nil else {
            return String(decoding: bytes, as: UTF8.self)
        }
        return Self.ampersandsRestored(bytes)
    }

    private static let ampersandEscape = Array("&#38;".utf8)

    /// Without entity substitution libxml2 (2.9) hands over every "&" of a value, from "&amp;" or
    /// "&#38;", as "&#38;" for a tree builder to parse again. No other "&" can be left in a value,
    /// so this undoes it exactly. (The reader test's `&#38;#38;` would catch a libxml2 that stops.)
    static func ampersandsRestored(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let escape = ampersandEscape
        return String(unsafeUninitializedCapacity: bytes.count) { out in
            var (from, to) = (0, 0)
            while from < bytes.count {
                out[to] = bytes[from]
                to += 1
                let escaped = bytes[from] == 0x26 && from + escape.count <= bytes.count
                    && escape.indices.allSatisfy { bytes[from + $0] == escape[$0] }
                from += escaped ? escape.count : 1
            }
            return to
        }
    }
}

/// Element and attribute names as Swift strings, made once per distinct name. libxml2 hands out
/// names from its dictionary (one pointer per distinct name for the parser's life; SAX2.c stores
/// them in its nodes uncopied), so the pointer is the key: an open-addressing table of pointers,
/// cheaper than hashing into a Dictionary for each of the export's millions of attributes.
struct AppleHealthNames {
    enum Role { case root, metadataEntry, record, key, value, workoutRoute, fileReference, other }

    struct Name {
        let string: String
        let kind: AppleHealthElement.Kind?
        let role: Role
        /// The sample column an attribute of this name fills (`SampleLayout`), 0 for none.
        let field: UInt8
    }

    /// Slots in the table; it fills to half of them, then further names (an export has about 80)
    /// are made afresh each time, so a document of endless distinct names cannot grow it.
    private static let slots = 1024
    private var keys = [UInt](repeating: 0, count: slots)
    private var names = [Name?](repeating: nil, count: slots)
    private var fields = [UInt8](repeating: 0, count: slots)
    private var count = 0

    /// `self[pointer].field`, without copying the name's string out (once per attribute).
    mutating func field(_ pointer: UnsafePointer<xmlChar>) -> UInt8 {
        let key = UInt(bitPattern: pointer)
        let slot = Int(truncatingIfNeeded: (key >> 4) ^ (key >> 14)) & (Self.slots - 1)
        if keys[slot] == key { return fields[slot] }
        return self[pointer].field
    }

    subscript(pointer: UnsafePointer<xmlChar>) -> Name {
        mutating get {
            let key = UInt(bitPattern: pointer)
            var slot = Int(truncatingIfNeeded: (key >> 4) ^ (key >> 14)) & (Self.slots - 1)
            while keys[slot] != 0 {
                if keys[slot] == key, let name = names[slot] { return name }
                slot = (slot + 1) & (Self.slots - 1)
            }
            let string = String(cString: pointer)
            let name = Name(string: string, kind: AppleHealthElement.Kind(rawValue: string), role: Self.role(string),
                            field: SampleLayout.code(string) ?? 0)
            if count < Self.slots / 2 {
                keys[slot] = key
                names[slot] = name
                fields[slot] = name.field
                count += 1
            }
            return name
        }
    }

    private static func role(_ name: String) -> Role {
        switch name {
        case "HealthData": .root
        case "MetadataEntry": .metadataEntry
        case "Record": .record
        case "key": .key
        case "value": .value
        case "WorkoutRoute": .workoutRoute
        case "FileReference": .fileReference
        default: .other
        }
    }
}
