/// Why a JSON text was refused (or a Foundation value could not become JSON). The description is
/// the message and where: `invalid number (leading zero) at line 1, column 6` (columns count bytes).
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// Not JSON (RFC 8259): a syntax error, invalid UTF-8 in a string, nothing at all.
        case syntax
        /// Arrays and objects nested deeper than `JSONParser.Limits.maxDepth`.
        case tooDeep
        /// More bytes than `JSONParser.Limits.maxBytes`.
        case tooLarge
        /// A Foundation value JSON cannot hold (`JSONValue(foundation:)`): NaN, a date, ….
        case unrepresentable
        /// An object that repeats a member name, when the parser was asked to refuse that
        /// (`JSONParser.DuplicateNames.refused`; FHIR JSON forbids it).
        case duplicateName
    }

    public struct Location: Equatable, Sendable {
        /// From 0, in bytes.
        public let offset: Int
        /// From 1.
        public let line: Int
        /// From 1, in bytes from the start of the line.
        public let column: Int

        public init(offset: Int, line: Int, column: Int) {
            self.offset = offset
            self.line = line
            self.column = column
        }
    }

    public let kind: Kind
    public let message: String
    /// Where in the text; nil when the error is about the whole input or a Foundation value.
    public let location: Location?

    public init(_ kind: Kind, _ message: String, at location: Location? = nil) {
        self.kind = kind
        self.message = message
        self.location = location
    }

    public var description: String {
        guard let location else { return message }
        return "\(message) at line \(location.line), column \(location.column)"
    }
}
