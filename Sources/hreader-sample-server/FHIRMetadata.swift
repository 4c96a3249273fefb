import HReaderJSON

/// `GET [base]/metadata`: what this server can do, for clients that check before they ask. Each
/// profile's statement says what that profile does, no more.
enum CapabilityStatement {
    /// `systemInteractions` replaces the profile's `rest.interaction` (for fault modes that lack some).
    static func make(base: FHIRBase, profile: ServerProfile = .full, systemInteractions: [String]? = nil) -> JSONValue {
        let interactions: JSONValue = .array(profile.interactions.map { ["code": .string($0)] })
        let resources: [JSONValue] = profile.resourceTypes.map { type in
            var resource: JSONValue = [
                "type": .string(type),
                "interaction": interactions,
            ]
            if profile == .full {
                resource["versioning"] = "versioned"
                resource["conditionalCreate"] = true
            }
            resource["searchParam"] = .array(searchParameters(type, profile: profile).map { ["name": .string($0.0), "type": .string($0.1)] })
            if type == "Patient", profile.everything {
                resource["operation"] = [
                    ["name": "everything", "definition": "http://hl7.org/fhir/OperationDefinition/Patient-everything"]
                ]
            }
            return resource
        }
        var rest: JSONValue = [
            "mode": "server",
            "resource": .array(resources),
        ]
        let declared = systemInteractions ?? profile.systemInteractions
        if !declared.isEmpty {
            rest["interaction"] = .array(declared.map { ["code": .string($0)] })
        }
        if base.oauthSecured {
            var oauthURIs: [JSONValue] = [
                ["url": "token", "valueUri": .string("\(base.origin)/oauth/token")],
                ["url": "revoke", "valueUri": .string("\(base.origin)/oauth/revoke")],
            ]
            if base.smart { oauthURIs.insert(["url": "authorize", "valueUri": .string("\(base.origin)/oauth/authorize")], at: 0) }
            // SMART's way of telling a client where to get tokens.
            rest["security"] = [
                "service": [
                    ["coding": [["system": "http://terminology.hl7.org/CodeSystem/restful-security-service", "code": "SMART-on-FHIR"]]]
                ],
                "extension": [
                    [
                        "url": "http://fhir-registry.smarthealthit.org/StructureDefinition/oauth-uris",
                        "extension": .array(oauthURIs),
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
            "software": ["name": .string(profile == .full ? "hreader-sample-server" : "hreader-sample-server (\(profile.rawValue))"), "version": "1.0"],
            "implementation": ["description": "Sample FHIR R4 server over invented patients", "url": .string(base.url)],
            "fhirVersion": "4.0.1",
            "format": ["json"],
            "rest": [rest],
        ]
    }

    /// The search parameters declared for `type` (name, type); a minimal server refuses others.
    static func searchParameters(_ type: String, profile: ServerProfile) -> [(String, String)] {
        let common = [("_id", "token"), ("identifier", "token")]
        if type == "Patient" {
            return common + [("family", "string"), ("given", "string"), ("name", "string"), ("birthdate", "date"), ("gender", "token")]
        }
        // A minimal server declares what FHIR defines per type: AllergyIntolerance and Immunization
        // have `patient` and no `subject`.
        if profile == .minimal, ["AllergyIntolerance", "Immunization"].contains(type) { return common + [("patient", "reference")] }
        return common + [("patient", "reference"), ("subject", "reference")]
    }
}
