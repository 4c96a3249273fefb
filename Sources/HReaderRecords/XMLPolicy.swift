import CLibXML2

/// How hreader lets libxml2 read XML it did not write (an Apple Health export, an RHEx feed):
/// nothing is fetched, nothing is expanded, nothing grows without bound.
enum XMLPolicy {
    /// No network, no DTD loading, no entity substitution, errors handed to us rather than printed.
    /// Never `XML_PARSE_HUGE`: it switches off libxml2's own size and entity-amplification limits.
    static let parserOptions = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)

    /// The longest attribute value kept (libxml2's own limit without XML_PARSE_HUGE is 10 MB).
    static let maxValueBytes = 1 << 20
    /// How deep elements may nest (an Apple Health export nests 4 deep, an Atom feed 3).
    static let maxDepth = 32

    /// Call on the thread that is about to parse, before it creates a parser. libxml2 wants its
    /// global state set up once before threads use it, and its error handler is per thread: errors
    /// raised without a parser context (an encoding that cannot be converted) would otherwise be
    /// printed to stderr by the default handler, beside hreader's own one line. Errors reach us
    /// through the parser context instead (`lastError`).
    static func prepareThread() {
        _ = initialized
        xmlSetStructuredErrorFunc(nil) { _, _ in }
    }

    private static let initialized: Void = { xmlInitParser() }()
}
