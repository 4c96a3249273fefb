import HReaderJSON

/// Who wrote a FHIR file, when it says: a document Bundle's Composition `custodian` (the
/// organization that keeps the document), else its first `author`; else the Bundle's `meta.source`.
/// A reference is read by its `display`, else by the name of the Organization, Practitioner,
/// PractitionerRole or Device the Bundle holds under that fullUrl or `Type/id`. Nil when the file
/// names nobody (a plain resource, a searchset, NDJSON): then the file is named by its name.
///
///     FHIRDocumentAuthor.name(of: bundle)   // "Gastroenterology @ Home"
public enum FHIRDocumentAuthor {
    public static func name(of object: JSONObject) -> String? {
        guard object["resourceType"]?.string == "Bundle" else { return nil }
        let resources = (object["entry"]?.array ?? []).compactMap(\.object).compactMap { entry -> (String?, JSONObject)? in
            guard let resource = entry["resource"]?.object else { return nil }
            return (entry["fullUrl"]?.string, resource)
        }
        if object["type"]?.string == "document",
           let composition = resources.first(where: { $0.1["resourceType"]?.string == "Composition" })?.1 {
            let references = [composition["custodian"]] + (composition["author"]?.array ?? []).map { Optional($0) }
            for reference in references.compactMap({ $0?.object }) {
                if let name = self.name(of: reference, in: resources) { return name }
            }
        }
        if let source = object["meta"]?["source"]?.string.map(trimmed), !source.isEmpty, !source.hasPrefix("#") {
            return String(source.prefix(200))
        }
        return nil
    }

    private static func name(of reference: JSONObject, in resources: [(String?, JSONObject)]) -> String? {
        if let display = reference["display"]?.string.map(trimmed), !display.isEmpty { return display }
        guard let target = reference["reference"]?.string, !target.isEmpty else { return nil }
        let resource = resources.first { fullUrl, resource in
            if fullUrl == target { return true }
            guard let type = resource["resourceType"]?.string, let id = resource["id"]?.string else { return false }
            return target == "\(type)/\(id)" || target.hasSuffix("/\(type)/\(id)")
        }?.1
        guard let resource else { return nil }
        let text: String?
        switch resource["resourceType"]?.string {
        case "Organization"?: text = resource["name"]?.string
        case "Practitioner"?: text = humanName(resource["name"]?.array?.first?.object)
        case "PractitionerRole"?: text = resource["organization"]?["display"]?.string ?? resource["practitioner"]?["display"]?.string
        case "Device"?: text = resource["deviceName"]?.array?.first?["name"]?.string
        default: text = nil
        }
        return text.map(trimmed).flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func humanName(_ name: JSONObject?) -> String? {
        guard let name else { return nil }
        if let text = name["text"]?.string, !trimmed(text).isEmpty { return text }
        let parts = (name["prefix"]?.array ?? []) + (name["given"]?.array ?? []) + [name["family"] ?? .null]
        let words = parts.compactMap(\.string).map(trimmed).filter { !$0.isEmpty }
        return words.isEmpty ? nil : words.joined(separator: " ")
    }

    private static func trimmed(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}
