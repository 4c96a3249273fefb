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
}
