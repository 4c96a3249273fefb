import CLibXML2
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

    public func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }
}

/// Reads an Apple Health export (`export.xml`) as a stream with libxml2's `xmlTextReader`, handing
/// over one top-level element at a time: memory does not grow with the export. (Foundation's
/// `XMLParser` crashes on Linux on the DTD's `#REQUIRED`/`#IMPLIED` attribute declarations, which
/// every export has.) No network access, no external entities or DTD loading, no entity expansion.
public final class AppleHealthReader {
    /// Fills the buffer with the next bytes; returns how many (0 at the end), or throws.
    public typealias Source = (UnsafeMutableRawBufferPointer) throws -> Int

    private final class Context {
        let source: Source
        var error: Error?
        init(_ source: @escaping Source) { self.source = source }
    }

    private let context: Context

    public init(source: @escaping Source) {
        context = Context(source)
    }

    /// Reads to the end, calling `handle` for each element of interest. Throws
    /// `RecordsError.malformed` (with the line) for XML that is not well-formed or not an export,
    /// the source's own error if reading failed, or what `handle` throws.
    public func read(_ handle: (AppleHealthElement) throws -> Void) throws {
        let unmanaged = Unmanaged.passUnretained(context)
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
                            | XML_PARSE_COMPACT.rawValue | XML_PARSE_HUGE.rawValue)
        let readCallback: xmlInputReadCallback = { pointer, buffer, length in
            guard let pointer, let buffer, length > 0 else { return 0 }
            let context = Unmanaged<Context>.fromOpaque(pointer).takeUnretainedValue()
            do {
                return Int32(try context.source(UnsafeMutableRawBufferPointer(start: buffer, count: Int(length))))
            } catch {
                context.error = error
                return -1
            }
        }
        guard let reader = xmlReaderForIO(readCallback, nil, unmanaged.toOpaque(), nil, nil, options) else {
            throw RecordsError.malformed("the export cannot be read as XML")
        }
        defer { xmlFreeTextReader(reader) }

        var sawRoot = false
        while true {
            let status = xmlTextReaderRead(reader)
            if status == 0 { break }
            if status < 0 { throw failure(reader) }
            guard xmlTextReaderNodeType(reader) == 1 else { continue }   // elements only
            let depth = xmlTextReaderDepth(reader)
            let name = Self.string(xmlTextReaderConstLocalName(reader)) ?? ""
            if depth == 0 {
                guard name == "HealthData" else {
                    throw RecordsError.malformed("this XML is not an Apple Health export (its root is <\(name)>, not <HealthData>)")
                }
                sawRoot = true
                continue
            }
            guard depth == 1, let kind = AppleHealthElement.Kind(rawValue: name) else { continue }
            var element = AppleHealthElement(kind: kind, attributes: Self.attributes(reader), line: Int(xmlTextReaderGetParserLineNumber(reader)))
            if xmlTextReaderIsEmptyElement(reader) == 0 {
                try readChildren(reader, into: &element)
            }
            try handle(element)
        }
        if let error = context.error { throw error }
        guard sawRoot else { throw RecordsError.malformed("the file holds no <HealthData> element: not an Apple Health export") }
    }

    /// MetadataEntry children and a correlation's Records, up to the element's end.
    private func readChildren(_ reader: xmlTextReaderPtr, into element: inout AppleHealthElement) throws {
        var child: AppleHealthElement?   // a correlation's Record being read
        while true {
            let status = xmlTextReaderRead(reader)
            if status == 0 { throw RecordsError.malformed("the export ends inside a <\(element.kind.rawValue)> element (line \(element.line)): it is truncated") }
            if status < 0 { throw failure(reader) }
            let type = xmlTextReaderNodeType(reader)
            let depth = xmlTextReaderDepth(reader)
            if type == 15 {   // end element
                if depth == 1 { return }
                if depth == 2, let finished = child { element.children.append(finished); child = nil }
                continue
            }
            guard type == 1 else { continue }
            let name = Self.string(xmlTextReaderConstLocalName(reader)) ?? ""
            if name == "MetadataEntry" {
                let attributes = Self.attributes(reader)
                let key = attributes.first { $0.name == "key" }?.value ?? "", value = attributes.first { $0.name == "value" }?.value ?? ""
                if depth == 2 { element.metadata.append((key, value)) } else if depth == 3 { child?.metadata.append((key, value)) }
            } else if depth == 2, name == "Record", element.kind == .correlation {
                let record = AppleHealthElement(kind: .record, attributes: Self.attributes(reader), line: Int(xmlTextReaderGetParserLineNumber(reader)))
                if xmlTextReaderIsEmptyElement(reader) == 1 { element.children.append(record) } else { child = record }
            }
        }
    }

    private func failure(_ reader: xmlTextReaderPtr) -> Error {
        if let error = context.error { return error }
        let line = xmlTextReaderGetParserLineNumber(reader)
        var detail = ""
        if let last = xmlGetLastError(), let message = last.pointee.message {
            detail = ": " + String(cString: message).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return RecordsError.malformed("the export is not well-formed XML at line \(line)\(detail)")
    }

    private static func attributes(_ reader: xmlTextReaderPtr) -> [(name: String, value: String)] {
        var attributes: [(name: String, value: String)] = []
        guard xmlTextReaderHasAttributes(reader) == 1 else { return attributes }
        while xmlTextReaderMoveToNextAttribute(reader) == 1 {
            attributes.append((string(xmlTextReaderConstLocalName(reader)) ?? "", string(xmlTextReaderConstValue(reader)) ?? ""))
        }
        xmlTextReaderMoveToElement(reader)
        return attributes
    }

    private static func string(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
