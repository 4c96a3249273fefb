import Foundation

/// One element of an Apple Health export, as the streaming reader hands it over.
public struct AppleHealthElement: Sendable {
    public enum Kind: String, Sendable {
        case me = "Me", exportDate = "ExportDate", record = "Record", correlation = "Correlation", workout = "Workout"
        case activitySummary = "ActivitySummary", clinicalRecord = "ClinicalRecord"
    }

    public var kind: Kind
    /// The element's attributes, in document order.
    public var attributes: [(name: String, value: String)]
    /// `MetadataEntry` children (key, value).
    public var metadata: [(key: String, value: String)] = []
    /// A correlation's `Record` children.
    public var children: [AppleHealthElement] = []
    /// The line where the element starts, for messages.
    public var line: Int

    public init(kind: Kind, attributes: [(name: String, value: String)], metadata: [(key: String, value: String)] = [],
                children: [AppleHealthElement] = [], line: Int) {
        self.kind = kind; self.attributes = attributes; self.metadata = metadata; self.children = children; self.line = line
    }

    public func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
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

    public init(source: @escaping Source) {
        self.source = source
    }

    /// Reads to the end, calling `handle` for each element of interest. Throws
    /// `RecordsError.malformed` (with the line) for XML that is not well-formed, not an export or
    /// refused (entities, limits), the source's own error if reading failed, or what `handle`
    /// throws (the parse stops there).
    public func read(_ handle: (AppleHealthElement) throws -> Void) throws {
        let parser = try AppleHealthSAXParser()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkBytes, alignment: 16)
        defer { chunk.deallocate() }
        var count = 0
        repeat {
            count = try source(chunk)
            guard (0...chunk.count).contains(count) else {
                throw RecordsError.malformed("the export's source returned \(count) bytes for a \(chunk.count)-byte buffer")
            }
            let failure = parser.push(UnsafeRawBufferPointer(rebasing: chunk[..<count]), final: count == 0)
            try parser.handOver(handle)
            if let failure { throw failure }
        } while count > 0
    }
}
