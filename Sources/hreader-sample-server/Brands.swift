import HReaderJSON
import NIOHTTP1

/// `GET /brands.json`: the sample server's own User-access Brands bundle (SMART App Launch 2.2),
/// so `hreader providers update --from http://127.0.0.1:PORT/brands.json` and a login by the
/// hospital's name work against it (`make demo`). The hospital's R4 endpoint is this server's
/// /fhir; an affiliated clinic uses the hospital's portal (`partOf`); a DSTU2-only brand and one
/// whose endpoint is off show what hreader refuses. The bundle names the origin that was asked,
/// so it has an ETag of its own; a request with that ETag in If-None-Match gets a 304.
enum BrandsBundle {
    static let path = "/brands.json"

    static func respond(_ request: HTTPRequest) -> HTTPResponse {
        let body = Array(bundle(origin: request.origin).serialized(pretty: true).utf8)
        let etag = "\"brands-\(fnv1a(body))\""
        let lastModified = "Mon, 02 Nov 2026 08:00:00 GMT"
        if let match = request.header("If-None-Match"), match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            return HTTPResponse(status: .notModified, headers: [("ETag", etag), ("Last-Modified", lastModified)])
        }
        return HTTPResponse(status: .ok, contentType: "application/fhir+json", body: body,
                            headers: [("ETag", etag), ("Last-Modified", lastModified)])
    }

    static func bundle(origin: String) -> JSONValue {
        let fhir = origin + "/fhir"
        func organization(_ id: String, _ name: String, aliases: [String] = [], city: String, state: String, portal: String? = nil,
                          endpoints: [String] = [], partOf: String? = nil) -> JSONValue {
            var resource: JSONObject = [("resourceType", "Organization"), ("id", .string(id)), ("active", true), ("name", .string(name))]
            if !aliases.isEmpty { resource["alias"] = .strings(aliases) }
            resource["address"] = [["city": .string(city), "state": .string(state), "country": "US"]]
            if let portal {
                resource["extension"] = [[
                    "url": "http://hl7.org/fhir/StructureDefinition/organization-portal",
                    "extension": .array([["url": "portalName", "valueString": .string(portal)],
                                         ["url": "portalUrl", "valueUrl": .string(origin + "/portal")]]
                        + endpoints.map { ["url": "portalEndpoint", "valueReference": ["reference": .string("Endpoint/\($0)")]] }),
                ]]
            }
            if !endpoints.isEmpty { resource["endpoint"] = .array(endpoints.map { ["reference": .string("Endpoint/\($0)")] }) }
            if let partOf { resource["partOf"] = ["reference": .string("Organization/\(partOf)")] }
            return ["fullUrl": .string("\(origin)/Organization/\(id)"), "resource": .object(resource)]
        }
        func endpoint(_ id: String, _ address: String, version: String, status: String = "active") -> JSONValue {
            ["fullUrl": .string("\(origin)/Endpoint/\(id)"), "resource": [
                "resourceType": "Endpoint", "id": .string(id),
                "extension": [["url": "http://hl7.org/fhir/StructureDefinition/endpoint-fhir-version", "valueCode": .string(version)]],
                "status": .string(status),
                "connectionType": ["system": "http://terminology.hl7.org/CodeSystem/endpoint-connection-type", "code": "hl7-fhir-rest"],
                "name": .string("FHIR \(version) endpoint"), "address": .string(address),
                "payloadType": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/endpoint-payload-type", "code": "none"]]]],
            ]]
        }
        let entries: [JSONValue] = [
            organization("sample-general", "Sample General Hospital", aliases: ["Sample General", "SGH"], city: "Springfield", state: "IL",
                         portal: "MySample Health", endpoints: ["sample-r4"]),
            organization("sample-family-clinic", "Sample Family Clinic", city: "Shelbyville", state: "IL", partOf: "sample-general"),
            organization("sample-legacy", "Sample Legacy Medical Group", city: "Springfield", state: "MO", endpoints: ["sample-dstu2"]),
            organization("sample-retired", "Sample Retired Hospital", city: "Capital City", state: "IL", endpoints: ["sample-off"]),
            endpoint("sample-r4", fhir, version: "4.0.1"),
            endpoint("sample-dstu2", origin + "/dstu2/fhir", version: "1.0.2"),
            endpoint("sample-off", origin + "/retired/fhir", version: "4.0.1", status: "off"),
        ]
        return ["resourceType": "Bundle", "id": "sample-brands", "type": "collection", "timestamp": "2026-11-02T08:00:00Z",
                "entry": .array(entries)]
    }

    private static func fnv1a(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
