import Foundation
import HReaderModel

/// One element of an Apple Health export, as the streaming reader hands it over.
public struct AppleHealthElement: Sendable {
    public enum Kind: String, Sendable {
        case me = "Me", exportDate = "ExportDate", record = "Record", correlation = "Correlation", workout = "Workout"
        case activitySummary = "ActivitySummary", clinicalRecord = "ClinicalRecord"
    }

    public var kind: Kind
    /// A top-level `Record` that fits the samples' columns exactly, already split into them (the
    /// reader does it while parsing); its attributes and metadata are then given back from it.
    public private(set) var sample: SampleRecord?
    private var textAttributes: [(name: String, value: String)]
    private var textMetadata: [(key: String, value: String)]
    /// A correlation's `Record` children.
    public var children: [AppleHealthElement] = []
    /// A workout's route files (`<WorkoutRoute><FileReference path="/workout-routes/…gpx"/>`), as written.
    public var routeFiles: [String] = []
    /// The line where the element starts, for messages.
    public var line: Int

    public init(kind: Kind, attributes: [(name: String, value: String)], metadata: [(key: String, value: String)] = [],
                children: [AppleHealthElement] = [], line: Int) {
        self.kind = kind; textAttributes = attributes; textMetadata = metadata; self.children = children; self.line = line
    }

    /// A Record given by its samples' form.
    public init(sample: SampleRecord, line: Int) {
        kind = .record; self.sample = sample; textAttributes = []; textMetadata = []; self.line = line
    }

    /// The element's attributes, in document order.
    public var attributes: [(name: String, value: String)] {
        get { sample?.attributes ?? textAttributes }
        set { textMetadata = metadata; textAttributes = newValue; sample = nil }
    }

    /// `MetadataEntry` children (key, value).
    public var metadata: [(key: String, value: String)] {
        get { sample?.metadata ?? textMetadata }
        set {
            if sample != nil { sample!.extras = SampleRecord.extras(newValue) } else { textMetadata = newValue }
        }
    }

    /// Adds a `MetadataEntry` child as the reader finds it.
    mutating func appendMetadata(key: String, value: String) {
        if sample != nil {
            // In place: a new string for each entry would copy the ones before it every time.
            if sample!.extras == nil {
                sample!.extras = key + "\u{1F}" + value
            } else {
                sample!.extras!.append("\u{1E}")
                sample!.extras!.append(key)
                sample!.extras!.append("\u{1F}")
                sample!.extras!.append(value)
            }
        } else {
            textMetadata.append((key, value))
        }
    }

    public func attribute(_ name: String) -> String? {
        if let sample { return sample.attribute(name) }
        return attributes.first { $0.name == name }?.value
    }
}

/// Reads an Apple Health export (`export.xml`) as a stream with libxml2's SAX2 push parser, handing
/// over one top-level element at a time: the bytes are pulled from `source` in 64 KiB chunks, no
/// tree is built, and memory does not grow with the export. (Foundation's `XMLParser` crashes on
/// Linux on the DTD's `#REQUIRED`/`#IMPLIED` attribute declarations, which every export has.)
/// No network access, no DTD loading, no entities: a document that declares one is refused.
public final class AppleHealthReader {
    /// Fills the buffer with the next bytes; returns how many (0 at the end), or throws.
    public typealias Source = (UnsafeMutableRawBufferPointer) throws -> Int

    /// Large enough that libxml2's per-chunk work is negligible, small enough to be nothing in memory.
    static let chunkBytes = 64 << 10

    private let source: Source
    private let splittingSamples: Bool
    private let fastPath: Bool

    /// The fast path (`AppleHealthScanner`) gave up on this document: read it again without it
    /// (`fastPath: false`), from the start; libxml2's reading is the authority.
    public struct FastPathDeclined: Error, CustomStringConvertible {
        public let reason: String
        public let line: Int
        public var description: String { "the fast reader declined at line \(line): \(reason)" }
    }

    /// `splittingSamples: false` keeps every Record as text (for comparing the two forms).
    /// `fastPath`: after the prolog (read by libxml2), the body is read by `AppleHealthScanner`,
    /// which throws `FastPathDeclined` (after handing over what it read) on anything outside the
    /// subset it reads; the caller then starts again without it.
    public init(splittingSamples: Bool = true, fastPath: Bool = false, source: @escaping Source) {
        self.source = source
        self.splittingSamples = splittingSamples
        self.fastPath = fastPath
    }

    /// Elements handed from the parsing thread to the caller's at a time, and batches in flight:
    /// memory stays bounded (about a thousand elements: a correlation with its children is a few
    /// KiB, and real exports write all of them together at the end) whatever the export's size.
    static let batchSize = 256
    static let batchesInFlight = 4

    /// Reads to the end, calling `handle` for each element of interest, on the calling thread.
    /// Throws `RecordsError.malformed` (with the line) for XML that is not well-formed, not an
    /// export or refused (entities, limits), the source's own error if reading failed, or what
    /// `handle` throws (the parse stops there). Elements completed before a parse error are handed
    /// over first. `concurrently` parses on a second thread while `handle` runs (an import's
    /// writes), in batches; the source is then read from that thread.
    public func read(concurrently: Bool = false, _ handle: (AppleHealthElement) throws -> Void) throws {
        try read(concurrently: concurrently, prepare: { $0 }, handle)
    }

    /// `read`, with `prepare` run on each element before `handle` gets what it made: on the parsing
    /// thread when `concurrently`, so that pure work (mapping an element to an entry) is not done on
    /// the thread that writes.
    public func read<Item>(concurrently: Bool = false, prepare: @escaping @Sendable (AppleHealthElement) -> Item,
                           _ handle: (Item) throws -> Void) throws {
        guard concurrently else { return try parse { try handle(prepare($0)) } }
        let batches = BoundedQueue<[Item]>(capacity: Self.batchesInFlight)
        let reader = UncheckedSendable(self)
        let parser = Thread {
            var batch: [Item] = []
            batch.reserveCapacity(Self.batchSize)
            do {
                try reader.value.parse { element in
                    batch.append(prepare(element))
                    if batch.count == Self.batchSize {
                        try batches.put(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                if !batch.isEmpty { try batches.put(batch) }
                batches.finish(nil)
            } catch is BoundedQueue<[Item]>.Cancelled {
                batches.finish(nil)
            } catch {
                if !batch.isEmpty { try? batches.put(batch) }
                batches.finish(error)
            }
        }
        parser.stackSize = 8 << 20
        parser.start()
        // Whatever happens here, the parsing thread is done with the source before this returns.
        defer {
            batches.cancel()
            batches.waitUntilFinished()
        }
        while let batch = try batches.take() {
            for element in batch { try handle(element) }
        }
    }

    private func parse(_ handle: (AppleHealthElement) throws -> Void) throws {
        let parser = try AppleHealthSAXParser(splittingSamples: splittingSamples, handingOffAtRoot: fastPath)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
        defer { chunk.deallocate() }
        var count = 0
        var pushed = 0   // bytes given to libxml2 before this chunk
        func next() throws -> Int {
            let count = try source(chunk)
            guard (0...chunk.count).contains(count) else {
                throw RecordsError.malformed("the export's source returned \(count) bytes for a \(chunk.count)-byte buffer")
            }
            return count
        }
        repeat {
            count = try next()
            let failure = parser.push(UnsafeRawBufferPointer(rebasing: chunk[..<count]), final: count == 0)
            try parser.handOver(handle)
            if let handOff = parser.handOff {
                // libxml2 read the prolog and stopped at the end of the root's start tag: the rest is the scanner's.
                let offset = handOff.offset - pushed
                guard (0...count).contains(offset) else {
                    throw FastPathDeclined(reason: "libxml2 stopped outside the bytes it was given", line: handOff.line)
                }
                var scanner = AppleHealthScanner(rootName: handOff.rootName, line: handOff.line)
                defer { scanner.deallocate() }
                // What the scanner completed before it stopped (an error, a limit) is handed over
                // first, as libxml2's path does.
                func scan(_ body: (inout AppleHealthElementBuilder) throws -> Void) throws {
                    do { try parser.withBuilder(body) } catch {
                        try parser.handOver(handle)
                        throw error
                    }
                    try parser.handOver(handle)
                }
                try scan { try scanner.feed(UnsafeRawBufferPointer(rebasing: chunk[offset..<count]), into: &$0) }
                while true {
                    count = try next()
                    try scan { builder in
                        if count == 0 {
                            try scanner.finish(into: &builder)
                        } else {
                            try scanner.feed(UnsafeRawBufferPointer(rebasing: chunk[..<count]), into: &builder)
                        }
                    }
                    if count == 0 { return }
                }
            }
            if let failure { throw failure }
            pushed += count
        } while count > 0
    }
}

/// What one thread hands another, only ever used by one of them at a time (the queue's lock orders it).
public struct UncheckedSendable<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}

/// A bounded queue from one producer thread to one consumer: `put` waits while it is full, `take`
/// while it is empty; `finish` ends it (with the producer's error, which `take` throws after the
/// last item); `cancel` makes the producer's next `put` throw. The import's reader and an export's
/// writer hand their work over through it.
public final class BoundedQueue<Item>: @unchecked Sendable {
    public struct Cancelled: Error {}

    private let condition = NSCondition()
    private var items: [Item] = []
    private let capacity: Int
    private var finished = false
    private var cancelled = false
    private var error: Error?

    public init(capacity: Int) { self.capacity = capacity }

    public func put(_ item: Item) throws {
        condition.lock()
        defer { condition.unlock() }
        while items.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw Cancelled() }
        items.append(item)
        condition.broadcast()
    }

    public func finish(_ error: Error?) {
        condition.lock()
        defer { condition.unlock() }
        finished = true
        self.error = error
        condition.broadcast()
    }

    /// The next item; nil at the end; the producer's error once the items before it are taken.
    public func take() throws -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty && !finished { condition.wait() }
        if !items.isEmpty {
            condition.broadcast()
            return items.removeFirst()
        }
        if let error { throw error }
        return nil
    }

    public func cancel() {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        items.removeAll()
        condition.broadcast()
    }

    public func waitUntilFinished() {
        condition.lock()
        defer { condition.unlock() }
        while !finished { condition.wait() }
    }
}
