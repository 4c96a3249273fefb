import Foundation
import HReaderJSON

/// FHIR XML (a resource or a Bundle, namespace http://hl7.org/fhir) as the JSON the FHIR JSON path
/// reads, by the rules of the FHIR specification (R4 xml.html and json.html):
///
/// - the root element's name is the `resourceType`; so is that of the element inside `contained`,
///   a Bundle entry's `resource` or any other element that holds a resource;
/// - a primitive element's `value` attribute is its JSON value: a number or a boolean for the
///   elements `FHIRXMLElements` knows to be numeric or boolean (XML does not say), else a string;
///   its `id` and `extension`s become the `_name` companion object;
/// - an `extension` keeps its `url` attribute as a member; an `id` attribute becomes `id`;
/// - the XHTML narrative `div` is kept as XML text;
/// - an element becomes an array when `FHIRXMLElements` says it repeats in R4, or when it occurs
///   more than once.
///
/// The reading itself (and what it refuses) is `FHIRXMLReader`'s.
public enum FHIRXML {
    static let namespace = "http://hl7.org/fhir"

    /// The document as the JSON value of the resource (or Bundle) it holds.
    static func parse(_ data: Data) throws -> JSONValue {
        let root = try FHIRXMLReader.read(data)
        guard root.namespace == namespace else {
            let where_ = root.namespace.map { "the namespace \($0)" } ?? "no namespace"
            throw RecordsError.malformed("this XML is not FHIR: its root <\(root.name)> is in \(where_), not \(namespace)")
        }
        return .object(try resource(root))
    }

    /// The document as FHIR JSON text (compact, members in document order).
    public static func jsonText(_ data: Data) throws -> String {
        try parse(data).serialized()
    }

    /// A resource element: `resourceType`, then its elements.
    private static func resource(_ element: XMLNode) throws -> JSONObject {
        guard element.name.first?.isUppercase == true else {
            throw RecordsError.malformed("FHIR XML: <\(element.name)> at line \(element.line) is not a resource")
        }
        return JSONObject([(key: "resourceType", value: .string(element.name))] + (try members(of: element, path: element.name)))
    }

    /// The JSON members for an element's child elements, grouped by name in the order they first occur.
    private static func members(of parent: XMLNode, path: String) throws -> [JSONObject.Member] {
        var order: [String] = []
        var groups: [String: [XMLNode]] = [:]
        for child in parent.children {
            guard child.namespace == namespace || child.xhtml != nil else {
                throw RecordsError.malformed("FHIR XML: <\(child.name)> at line \(child.line) is in \(child.namespace ?? "no namespace"), not \(namespace)")
            }
            if groups[child.name] == nil { order.append(child.name) }
            groups[child.name, default: []].append(child)
        }
        let siblings = Set(order)
        var members: [JSONObject.Member] = []
        for name in order {
            let nodes = groups[name]!
            let childPath = "\(path).\(name)"
            let primitive = nodes.contains { $0.attribute("value") != nil || isValuelessPrimitive($0) }
            let values = try nodes.map { try value(of: $0, parent: parent.name, path: childPath, primitive: primitive) }
            let companions = try nodes.map { primitive ? try companion(of: $0, path: childPath) : nil }
            if nodes.count > 1 || FHIRXMLElements.repeats(name, path: childPath, primitive: primitive, siblings: siblings) {
                if values.contains(where: { $0 != nil }) { members.append((key: name, value: .array(values.map { $0 ?? .null }))) }
                if companions.contains(where: { $0 != nil }) {
                    members.append((key: "_\(name)", value: .array(companions.map { $0.map(JSONValue.object) ?? .null })))
                }
            } else {
                if let value = values[0] { members.append((key: name, value: value)) }
                if let companion = companions[0] { members.append((key: "_\(name)", value: .object(companion))) }
            }
        }
        return members
    }

    /// A primitive element with no `value`, only an id or extensions (a birth date that is absent,
    /// with a data-absent-reason): XML does not tell it from a complex element, so its name does.
    private static func isValuelessPrimitive(_ node: XMLNode) -> Bool {
        node.attribute("value") == nil && node.xhtml == nil && FHIRXMLElements.isPrimitive(node.name)
            && node.children.allSatisfy { $0.name == "extension" }
    }

    /// The JSON value of one element; nil for a primitive without a value.
    private static func value(of node: XMLNode, parent: String, path: String, primitive: Bool) throws -> JSONValue? {
        if let xhtml = node.xhtml { return .string(xhtml) }
        if primitive {
            if let stray = node.children.first(where: { $0.name != "extension" }) {
                throw RecordsError.malformed("FHIR XML: the primitive <\(node.name)> at line \(node.line) holds <\(stray.name)>")
            }
            guard let text = node.attribute("value") else { return nil }
            switch FHIRXMLElements.kind(node.name, parent: parent, path: path) {
            case .boolean where text == "true" || text == "false": return .bool(text == "true")
            case .number where JSONNumber.isValid(text): return .number(text)
            default: return .string(text)  // as written; the mapper names a value of the wrong type
            }
        }
        // An element that holds a resource (contained, a Bundle entry's resource, an outcome): its
        // only child is named by a resource type, which starts with a capital; elements never do.
        if node.children.count == 1, node.children[0].name.first?.isUppercase == true, node.attributes.isEmpty {
            return .object(try resource(node.children[0]))
        }
        var members: [JSONObject.Member] = node.attributes.compactMap { attribute in
            ["id", "url"].contains(attribute.name) ? (key: attribute.name, value: .string(attribute.value)) : nil
        }
        members += try self.members(of: node, path: path)
        return .object(JSONObject(members))
    }

    /// The `_name` object of a primitive: its id and extensions; nil when it has neither.
    private static func companion(of node: XMLNode, path: String) throws -> JSONObject? {
        let extensions = node.children.filter { $0.name == "extension" }
        guard node.attribute("id") != nil || !extensions.isEmpty else { return nil }
        var members: [JSONObject.Member] = node.attribute("id").map { [(key: "id", value: .string($0))] } ?? []
        if !extensions.isEmpty {
            let converted = try extensions.map { try value(of: $0, parent: node.name, path: "\(path).extension", primitive: false) ?? .null }
            members.append((key: "extension", value: .array(converted)))
        }
        return JSONObject(members)
    }
}
