/// A FHIR base URL a brand's patients log in to, as a brands bundle's `Endpoint` gives it.
public struct ProviderEndpoint: Sendable, Equatable {
    public var url: String
    /// `4.0.1`, `1.0.2`, …; nil when neither the endpoint's `endpoint-fhir-version` extension nor its
    /// address says.
    public var fhirVersion: String?
    /// `Endpoint.status`: active, suspended, error, off, entered-in-error, test.
    public var status: String
    public var name: String?

    public init(url: String, fhirVersion: String?, status: String, name: String? = nil) {
        self.url = url
        self.fhirVersion = fhirVersion
        self.status = status
        self.name = name
    }

    public var isR4: Bool { fhirVersion?.hasPrefix("4.") ?? false }
    public var isActive: Bool { status == "active" }
    /// An endpoint hreader can log in to: FHIR R4 and active.
    public var isPatientAccessR4: Bool { isR4 && isActive }

    /// "R4 (4.0.1)", "DSTU2 (1.0.2)", "version unknown".
    public var versionName: String {
        guard let version = fhirVersion else { return "version unknown" }
        let name = version.hasPrefix("4.3") ? "R4B" : version.hasPrefix("4.") ? "R4" : version.hasPrefix("1.0") ? "DSTU2"
            : version.hasPrefix("3.") ? "STU3" : version.hasPrefix("5.") ? "R5" : "FHIR"
        return "\(name) (\(version))"
    }
}

/// Where a brand says it is (one of `Organization.address`).
public struct ProviderPlace: Sendable, Equatable {
    public var city: String?
    public var state: String?

    public init(city: String?, state: String?) {
        self.city = city
        self.state = state
    }
}

/// One brand of a User-access Brands bundle (SMART App Launch 2.2): what a patient knows their
/// provider by, its portal, and the FHIR endpoints behind it. Public data, published by vendors.
public struct ProviderBrand: Sendable, Equatable {
    /// `Organization.id` in its bundle (for an endpoint-only list, the `Endpoint.id`).
    public var resourceID: String
    public var name: String
    public var aliases: [String]
    public var portalName: String?
    public var portalURL: String?
    public var website: String?
    public var places: [ProviderPlace]
    /// The name of the brand this one is `partOf` (an affiliated practice of a health system).
    public var affiliatedWith: String?
    public var endpoints: [ProviderEndpoint]
    /// `Organization.active` (absent: true).
    public var active: Bool

    public init(resourceID: String, name: String, aliases: [String] = [], portalName: String? = nil, portalURL: String? = nil,
                website: String? = nil, places: [ProviderPlace] = [], affiliatedWith: String? = nil, endpoints: [ProviderEndpoint] = [],
                active: Bool = true) {
        self.resourceID = resourceID
        self.name = name
        self.aliases = aliases
        self.portalName = portalName
        self.portalURL = portalURL
        self.website = website
        self.places = places
        self.affiliatedWith = affiliatedWith
        self.endpoints = endpoints
        self.active = active
    }
}
