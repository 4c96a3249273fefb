import HReaderJSON

extension JSONParser {
    /// Parses one JSON text, a failure reported as the `RecordsError` every mapper throws, naming
    /// the input: `NDJSON line 2 is not valid JSON: unexpected end of input at line 1, column 36`.
    static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes, what: String) throws(RecordsError) -> JSONValue {
        do {
            return try parse(bytes)
        } catch {
            throw .malformed("\(what) is not valid JSON: \(error)")
        }
    }
}
