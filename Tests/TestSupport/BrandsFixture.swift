import Foundation

/// User-access Brands bundles (SMART App Launch 2.2) written by the tests, in the IG's shape:
/// Organizations with the portal extension, aliases, addresses and `partOf`, and the Endpoints
/// they name, with the fhir-version extension. Nothing here is a vendor's data.
public struct BrandsFixture {
    public struct Brand {
        public var id: String
        public var name: String
        public var aliases: [String] = []
        public var places: [(city: String, state: String)] = []
        public var portal: String?
        public var endpoints: [String] = []
        public var partOf: String?

        public init(_ id: String, _ name: String, aliases: [String] = [], places: [(city: String, state: String)] = [], portal: String? = nil,
                    endpoints: [String] = [], partOf: String? = nil) {
            self.id = id
            self.name = name
            self.aliases = aliases
            self.places = places
            self.portal = portal
            self.endpoints = endpoints
            self.partOf = partOf
        }
    }

    public struct Endpoint {
        public var id: String
        public var address: String
        public var version: String?
        public var status: String

        public init(_ id: String, _ address: String, version: String? = "4.0.1", status: String = "active") {
            self.id = id
            self.address = address
            self.version = version
            self.status = status
        }
    }

    public var brands: [Brand]
    public var endpoints: [Endpoint]
    public var base = "https://ehr.example.org"

    public init(brands: [Brand], endpoints: [Endpoint]) {
        self.brands = brands
        self.endpoints = endpoints
    }

    public var object: [String: Any] {
        var entries: [[String: Any]] = brands.map { brand in
            var resource: [String: Any] = ["resourceType": "Organization", "id": brand.id, "active": true, "name": brand.name,
                                           "identifier": [["system": "urn:ietf:rfc:3986", "value": "\(base)/\(brand.id)"]],
                                           "type": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/organization-type", "code": "prov"]]]]]
            if !brand.aliases.isEmpty { resource["alias"] = brand.aliases }
            if !brand.places.isEmpty { resource["address"] = brand.places.map { ["city": $0.city, "state": $0.state, "country": "US"] } }
            var extensions: [[String: Any]] = [["url": "http://hl7.org/fhir/StructureDefinition/organization-brand",
                                                "extension": [["url": "brandLogo", "valueUrl": "\(base)/logo/\(brand.id).png"]]]]
            if let portal = brand.portal {
                var parts: [[String: Any]] = [["url": "portalName", "valueString": portal], ["url": "portalUrl", "valueUrl": "\(base)/portal"]]
                parts += brand.endpoints.map { ["url": "portalEndpoint", "valueReference": ["reference": "Endpoint/\($0)"]] }
                extensions.append(["url": "http://hl7.org/fhir/StructureDefinition/organization-portal", "extension": parts])
            }
            resource["extension"] = extensions
            if !brand.endpoints.isEmpty { resource["endpoint"] = brand.endpoints.map { ["reference": "Endpoint/\($0)"] } }
            if let partOf = brand.partOf { resource["partOf"] = ["reference": "Organization/\(partOf)"] }
            return ["fullUrl": "\(base)/Organization/\(brand.id)", "resource": resource]
        }
        entries += endpoints.map { endpoint in
            var resource: [String: Any] = ["resourceType": "Endpoint", "id": endpoint.id, "status": endpoint.status, "address": endpoint.address,
                                           "name": "FHIR endpoint \(endpoint.id)",
                                           "connectionType": ["system": "http://terminology.hl7.org/CodeSystem/endpoint-connection-type",
                                                              "code": "hl7-fhir-rest"],
                                           "payloadType": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/endpoint-payload-type",
                                                                        "code": "none"]]]]]
            if let version = endpoint.version {
                resource["extension"] = [["url": "http://hl7.org/fhir/StructureDefinition/endpoint-fhir-version", "valueCode": version]]
            }
            return ["fullUrl": "\(base)/Endpoint/\(endpoint.id)", "resource": resource]
        }
        return ["resourceType": "Bundle", "id": "brands", "type": "collection", "timestamp": "2026-11-01T00:00:00Z", "entry": entries]
    }

    public var data: Data { try! JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) }

    /// Brands with several endpoints, an affiliated brand (partOf), aliases, an inactive
    /// endpoint, two brands of one name in different states, a DSTU2-only brand, accents.
    public static var varied: BrandsFixture {
        BrandsFixture(brands: [
            Brand("stmary-wi", "St. Mary's Hospital", aliases: ["SSM Health Saint Mary's", "Mary Hospital Madison"],
                  places: [("Madison", "WI"), ("Janesville", "WI")], portal: "MyChart Saint Mary", endpoints: ["stmary-wi-r4", "stmary-wi-r2"]),
            Brand("stmary-mn", "Saint Mary's Hospital", places: [("Rochester", "MN")], portal: "Patient Online", endpoints: ["stmary-mn-r4"]),
            Brand("stmary-clinic", "Mary's Family Practice", places: [("Sun Prairie", "WI")], partOf: "stmary-wi"),
            Brand("santa-rosa", "Clínica Santa Rosa", aliases: ["Santa Rosa Clinic"], places: [("San Antonio", "TX")], portal: "Mi Salud",
                  endpoints: ["santa-rosa-r4"]),
            Brand("legacy", "Legacy Valley Medical Center", places: [("Fresno", "CA")], endpoints: ["legacy-r2"]),
            Brand("closed", "Closed Creek Hospital", places: [("Boise", "ID")], endpoints: ["closed-r4"]),
            Brand("presbyterian", "Northwestern Presbyterian Hospital", places: [("Chicago", "IL")], endpoints: ["presby-r4"]),
        ], endpoints: [
            Endpoint("stmary-wi-r4", "https://fhir.stmary-wi.example.org/api/FHIR/R4/"),
            Endpoint("stmary-wi-r2", "https://fhir.stmary-wi.example.org/api/FHIR/DSTU2/", version: "1.0.2"),
            Endpoint("stmary-mn-r4", "https://fhir.stmary-mn.example.org/r4"),
            Endpoint("santa-rosa-r4", "https://ehr.santarosa.example.org/fhir/r4"),
            Endpoint("legacy-r2", "https://legacy.example.org/fhir/dstu2", version: "1.0.2"),
            Endpoint("closed-r4", "https://closed.example.org/fhir/r4", status: "off"),
            Endpoint("presby-r4", "https://presby.example.org/FHIR/R4"),
        ])
    }
}
