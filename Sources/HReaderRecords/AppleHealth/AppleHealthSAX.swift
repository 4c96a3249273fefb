import CLibXML2
import Foundation

/// libxml2's SAX2 push parser over an Apple Health export: bytes go in with `push`, finished
/// top-level elements come out with `handOver`. No tree is built, and no callback runs the caller's
/// code: the callbacks only collect, and the reader hands the elements over between chunks.
/// The callbacks reach this object through libxml2's user-data pointer; nothing is global.
final class AppleHealthSAXParser {
    private var context: xmlParserCtxtPtr?
    private var builder: AppleHealthElementBuilder
    /// Our own reason to stop (an entity declaration, a limit); it outranks libxml2's error.
    private var refusal: Error?

    /// Where libxml2 stopped for `AppleHealthScanner` to go on: the offset of the end of the root's
    /// start tag (its `>`) in the bytes pushed, its line, and the root's name.
    struct HandOff {
        let offset: Int
        let line: Int
        let rootName: UnsafePointer<xmlChar>
    }
    private let handingOffAtRoot: Bool
    private(set) var handOff: HandOff?

    /// `handingOffAtRoot`: stop once the root's start tag is read (`handOff`), when the document
    /// is one the scanner can go on with (UTF-8, no attribute the DTD makes other than CDATA).
    init(splittingSamples: Bool = true, handingOffAtRoot: Bool = false) throws {
        self.handingOffAtRoot = handingOffAtRoot
        builder = AppleHealthElementBuilder(splittingSamples: splittingSamples)
        var handler = Self.handler()
        // Unretained: the callbacks only run inside `push`, while this object is alive.
        let user = Unmanaged.passUnretained(self).toOpaque()
        XMLPolicy.prepareThread()
        guard let context = xmlCreatePushParserCtxt(&handler, user, nil, 0, nil) else {
            throw RecordsError.malformed("the export cannot be read as XML (libxml2 could not start)")
        }
        // The Health app writes UTF-8 only. A declared encoding is not followed: libxml2 switches on
        // the declaration differently depending on where the chunks end (an export declaring
        // "UTF-8." was read whole and refused in small chunks; found by the fuzzer), and nothing real
        // declares another. A byte-order mark still decides, as in any XML.
        xmlCtxtUseOptions(context, XMLPolicy.parserOptions | Int32(XML_PARSE_IGNORE_ENC.rawValue))
        self.context = context
    }

    deinit { xmlFreeParserCtxt(context) }

    /// Parses the next bytes (`final` with the last, possibly empty, chunk). Returns why the
    /// document is refused, if it is; elements completed before that are still handed over.
    func push(_ bytes: UnsafeRawBufferPointer, final: Bool) -> Error? {
        guard let context, refusal == nil, handOff == nil else { return refusal }
        let status = xmlParseChunk(context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), final ? 1 : 0)
        if let refusal { return refusal }
        if handOff != nil { return nil }
        if status != 0 || context.pointee.wellFormed == 0 { return malformed(context, final: final) }
        if final && !builder.sawRoot {
            return RecordsError.malformed("the file holds no <HealthData> element: not an Apple Health export")
        }
        return nil
    }

    /// The builder, for the scanner that goes on after the hand-off.
    func withBuilder<T>(_ body: (inout AppleHealthElementBuilder) throws -> T) rethrows -> T {
        try body(&builder)
    }

    /// Hands the elements completed so far to `handle`, in document order.
    func handOver(_ handle: (AppleHealthElement) throws -> Void) rethrows {
        try builder.handOver(handle)
    }

    private func malformed(_ context: xmlParserCtxtPtr, final: Bool) -> Error {
        let error = context.pointee.lastError
        let line = error.line > 0 ? Int(error.line) : currentLine(context)
        // At the end of the input libxml2 says "extra content at the end of the document" when the
        // end never came.
        if final, builder.insideRoot, error.code == Int32(XML_ERR_DOCUMENT_END.rawValue) {
            guard let open = builder.openElement else {
                return RecordsError.malformed("the export ends at line \(currentLine(context)) without its closing </HealthData>: it is truncated")
            }
            return RecordsError.malformed("the export ends inside a <\(open.name)> element (line \(open.line)): it is truncated")
        }
        let detail = error.message.map { ": " + String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        return RecordsError.malformed("the export is not well-formed XML at line \(line)\(detail)")
    }

    private func currentLine(_ context: xmlParserCtxtPtr) -> Int {
        context.pointee.input.map { Int($0.pointee.line) } ?? 0
    }

    /// Stops libxml2 at once (it calls no more callbacks) and remembers why.
    private func refuse(_ error: Error) {
        guard refusal == nil else { return }
        refusal = error
        xmlStopParser(context)
    }

    // MARK: Callbacks

    private func startElement(_ name: UnsafePointer<xmlChar>, _ attributes: SAXAttributes) {
        guard refusal == nil, let context else { return }
        do {
            try builder.start(name, attributes: attributes, line: currentLine(context))
        } catch {
            refuse(error)
            return
        }
        if handingOffAtRoot, builder.depthOpen == 1, canHandOff(context) {
            handOff = HandOff(offset: Int(xmlByteConsumed(context)), line: currentLine(context), rootName: name)
            xmlStopParser(context)
        }
    }

    /// Whether the scanner reads the rest as libxml2 would: the input is UTF-8 as it is (no
    /// converter), and the DTD declared no attribute other than CDATA (libxml2 normalises those).
    private func canHandOff(_ context: xmlParserCtxtPtr) -> Bool {
        guard let input = context.pointee.input, input.pointee.buf?.pointee.encoder == nil else { return false }
        if let special = context.pointee.attsSpecial, xmlHashSize(special) > 0 { return false }
        return xmlByteConsumed(context) >= 0
    }

    private func endElement() {
        guard refusal == nil else { return }
        builder.end()
    }

    private func entityDeclared() {
        guard let context else { return }
        refuse(RecordsError.malformed("the export declares entities (line \(currentLine(context))); an Apple Health export never does; refused"))
    }

    private static func parser(_ user: UnsafeMutableRawPointer?) -> AppleHealthSAXParser? {
        user.map { Unmanaged<AppleHealthSAXParser>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Only what the export needs: elements, and the entity declarations we refuse. No character
    /// data, no DTD structures, no external subset or entity resolution (those callbacks are nil,
    /// so libxml2 loads nothing).
    private static func handler() -> xmlSAXHandler {
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = { user, localname, _, _, _, _, count, defaulted, attributes in
            guard let localname else { return }
            // Defaulted attributes (values the DTD supplies) come last; the document did not say them.
            AppleHealthSAXParser.parser(user)?.startElement(localname, SAXAttributes(base: attributes, count: Int(count - defaulted)))
        }
        handler.endElementNs = { user, _, _, _ in AppleHealthSAXParser.parser(user)?.endElement() }
        handler.entityDecl = { user, _, _, _, _, _ in AppleHealthSAXParser.parser(user)?.entityDeclared() }
        handler.unparsedEntityDecl = { user, _, _, _, _ in AppleHealthSAXParser.parser(user)?.entityDeclared() }
        handler.serror = { _, _ in }   // read from the context's lastError instead of printed
        return handler
    }
}

/// The attributes libxml2 hands to startElementNs: five pointers each (local name, prefix, URI,
/// value, end of value); the value is not NUL-terminated.
struct SAXAttributes {
    let base: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    let count: Int

    func name(_ index: Int) -> UnsafePointer<xmlChar>? { base?[5 * index] }

    func value(_ index: Int) -> UnsafeBufferPointer<UInt8> {
        guard let base, let start = base[5 * index + 3], let end = base[5 * index + 4] else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: start, count: end - start)
    }
}
