import HReaderJSON

extension JSONParser {
    /// Parses one JSON text, a failure reported as the `RecordsError` every mapper throws, naming
    /// the input: `NDJSON line 2 is not valid JSON: unexpected end of input at line 1, column 36`.
    /// FHIR JSON is read with `duplicateNames: .refused` (FHIR forbids a name twice in an object:
    /// `FHIR JSON is not valid FHIR JSON: the member name "id" appears twice in one object at …`).
    static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes, what: String,
                                               duplicateNames: DuplicateNames = .kept) throws(RecordsError) -> JSONValue {
        do {
            return try parse(bytes, duplicateNames: duplicateNames)
        } catch where error.kind == .duplicateName {
            throw .malformed("\(what) is not valid FHIR JSON: \(error)")
        } catch {
            throw .malformed("\(what) is not valid JSON: \(error)")
        }
    }
}
