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
        if let count = request.queryValue("clinics").flatMap(Int.init) { return streamed(request, clinics: min(max(count, 0), 1_000_000)) }
        let body = Array(bundle(origin: request.origin).serialized(pretty: true).utf8)
        let etag = "\"brands-\(fnv1a(body))\""
        let lastModified = "Mon, 02 Nov 2026 08:00:00 GMT"
        if let match = request.header("If-None-Match"), match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            return HTTPResponse(status: .notModified, headers: [("ETag", etag), ("Last-Modified", lastModified)])
        }
        return HTTPResponse(status: .ok, contentType: "application/fhir+json", body: body,
                            headers: [("ETag", etag), ("Last-Modified", lastModified)])
    }

    /// `/brands.json?clinics=N`: the same bundle and N generated clinics more ("Streamed Clinic 7",
    /// each with an R4 endpoint of its own), streamed in chunks without a length, no ETag: a large
    /// download that arrives a piece at a time (hreader's limit must hold as it streams).
    static func streamed(_ request: HTTPRequest, clinics: Int) -> HTTPResponse {
        let origin = request.origin
        return HTTPResponse(status: .ok, headers: [("Content-Type", "application/fhir+json")], body: .stream(contentLength: nil) { sink in
            var chunk = Array(#"{"resourceType":"Bundle","id":"sample-brands-many","type":"collection","entry":["#.utf8)
            for (i, entry) in entries(origin: origin).enumerated() {
                if i > 0 { chunk.append(0x2c) }
                chunk += entry.serializedBytes()
            }
            for n in 0..<clinics {
                chunk.append(0x2c)
                chunk += organization(origin, "streamed-\(n)", "Streamed Clinic \(n)", city: "Springfield", state: "IL",
                                      endpoints: ["streamed-\(n)-r4"]).serializedBytes()
                chunk.append(0x2c)
                chunk += endpoint(origin, "streamed-\(n)-r4", origin + "/fhir", version: "4.0.1").serializedBytes()
                if chunk.count >= 64 << 10 {
                    try await sink.write(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            try await sink.write(chunk + Array("]}".utf8))
        })
    }

    static func bundle(origin: String) -> JSONValue {
        ["resourceType": "Bundle", "id": "sample-brands", "type": "collection", "timestamp": "2026-11-02T08:00:00Z",
         "entry": .array(entries(origin: origin))]
    }

    static func entries(origin: String) -> [JSONValue] {
        let fhir = origin + "/fhir"
        return [
            organization(origin, "sample-general", "Sample General Hospital", aliases: ["Sample General", "SGH"], city: "Springfield",
                         state: "IL", portal: "MySample Health", endpoints: ["sample-r4"]),
            organization(origin, "sample-family-clinic", "Sample Family Clinic", city: "Shelbyville", state: "IL", partOf: "sample-general"),
            organization(origin, "sample-legacy", "Sample Legacy Medical Group", city: "Springfield", state: "MO", endpoints: ["sample-dstu2"]),
            organization(origin, "sample-retired", "Sample Retired Hospital", city: "Capital City", state: "IL", endpoints: ["sample-off"]),
            endpoint(origin, "sample-r4", fhir, version: "4.0.1"),
            endpoint(origin, "sample-dstu2", origin + "/dstu2/fhir", version: "1.0.2"),
            endpoint(origin, "sample-off", origin + "/retired/fhir", version: "4.0.1", status: "off"),
        ]
    }

    /// An Organization entry of this origin, in the IG's shape.
    static func organization(_ origin: String, _ id: String, _ name: String, aliases: [String] = [], city: String, state: String,
                             portal: String? = nil, endpoints: [String] = [], partOf: String? = nil) -> JSONValue {
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

    /// An Endpoint entry of this origin, in the IG's shape.
    static func endpoint(_ origin: String, _ id: String, _ address: String, version: String, status: String = "active") -> JSONValue {
        ["fullUrl": .string("\(origin)/Endpoint/\(id)"), "resource": [
            "resourceType": "Endpoint", "id": .string(id),
            "extension": [["url": "http://hl7.org/fhir/StructureDefinition/endpoint-fhir-version", "valueCode": .string(version)]],
            "status": .string(status),
            "connectionType": ["system": "http://terminology.hl7.org/CodeSystem/endpoint-connection-type", "code": "hl7-fhir-rest"],
            "name": .string("FHIR \(version) endpoint"), "address": .string(address),
            "payloadType": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/endpoint-payload-type", "code": "none"]]]],
        ]]
    }

    private static func fnv1a(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}
