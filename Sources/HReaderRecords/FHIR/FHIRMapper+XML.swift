import Foundation

extension FHIRMapper {
    /// A FHIR XML document (a Bundle or a single resource), read as the JSON it stands for
    /// (`FHIRXML`) and mapped as `mapBundle` maps JSON. Each entry's `raw` is that JSON.
    public func mapXML(_ data: Data) throws -> MappedBatch {
        var input = FHIRInput()
        try Self.addXML(data, into: &input, what: nil)
        return map(consume input)
    }

    @discardableResult
    static func addXML(_ data: Data, into input: inout FHIRInput, what name: String?) throws -> String? {
        guard let object = try FHIRXML.parse(data).object else {
            throw RecordsError.malformed("\(name.map { "\($0): " } ?? "")the FHIR XML holds no resource")
        }
        let path = object["resourceType"]?.string == "Bundle" ? "Bundle" : "resource"
        try input.add(object, path: name.map { "\($0): \(path)" } ?? path, fullUrl: nil)
        return FHIRDocumentAuthor.name(of: object)
    }
}
