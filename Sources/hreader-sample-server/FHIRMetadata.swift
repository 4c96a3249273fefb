/// `GET [base]/metadata`: what this server can do, for clients that check before they ask.
enum CapabilityStatement {
    static func make(base: FHIRBase) -> JSON {
        let interactions: JSON = .array(["read", "vread", "search-type", "create", "update", "delete"].map { ["code": .string($0)] })
        let resources: [JSON] = FHIRTypes.all.map { type in
            var resource: JSON = [
                "type": .string(type),
                "interaction": interactions,
                "versioning": "versioned",
                "conditionalCreate": true,
                "searchParam": .array(searchParameters(type).map { ["name": .string($0.0), "type": .string($0.1)] }),
            ]
            if type == "Patient" {
                resource["operation"] = [
                    ["name": "everything", "definition": "http://hl7.org/fhir/OperationDefinition/Patient-everything"]
                ]
            }
            return resource
        }
        var rest: JSON = [
            "mode": "server",
            "resource": .array(resources),
            "interaction": [["code": "transaction"], ["code": "batch"]],
        ]
        if base.oauthSecured {
            // SMART's way of telling a client where to get tokens.
            rest["security"] = [
                "service": [
                    ["coding": [["system": "http://terminology.hl7.org/CodeSystem/restful-security-service", "code": "SMART-on-FHIR"]]]
                ],
                "extension": [
                    [
                        "url": "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris",
                        "extension": [
                            ["url": "token", "valueUri": .string("\(base.origin)/oauth/token")],
                            ["url": "revoke", "valueUri": .string("\(base.origin)/oauth/revoke")],
                        ],
                    ]
                ],
            ]
        }
        return [
            "resourceType": "CapabilityStatement",
            "id": "hreader-sample-server",
            "status": "active",
            "date": "2024-06-01",
            "publisher": "hreader sample server (invented data)",
            "kind": "instance",
            "software": ["name": "hreader-sample-server", "version": "1.0"],
            "implementation": ["description": "Sample FHIR R4 server over invented patients", "url": .string(base.url)],
            "fhirVersion": "4.0.1",
            "format": ["json"],
            "rest": [rest],
        ]
    }

    private static func searchParameters(_ type: String) -> [(String, String)] {
        let common = [("_id", "token"), ("identifier", "token")]
        if type == "Patient" {
            return common + [("family", "string"), ("given", "string"), ("name", "string"), ("birthdate", "date"), ("gender", "token")]
        }
        return common + [("patient", "reference"), ("subject", "reference")]
    }
}
