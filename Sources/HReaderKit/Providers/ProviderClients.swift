import Foundation
import HReaderJSON
import HReaderRecords
import HReaderStore

/// The app registration a person made with a vendor (Epic, Oracle Health, …): the client id it
/// gave (and a secret, if it gave one), and the scopes to ask. One registration serves every
/// provider on that vendor's system, so it is kept once per vendor, in the vault (a client
/// secret is a secret; the directory beside the vault holds only public data).
public struct ProviderClient: Sendable, Equatable {
    public var vendor: String
    public var clientID: String
    public var clientSecret: String?
    /// Empty: the scopes the server's SMART configuration suggests.
    public var scopes: [String]

    public init(vendor: String, clientID: String, clientSecret: String? = nil, scopes: [String] = []) {
        self.vendor = vendor
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scopes = scopes
    }

    static let keyPrefix = "provider_client."

    var stored: String {
        var members: [JSONObject.Member] = [("client_id", .string(clientID)), ("scopes", .strings(scopes))]
        if let clientSecret { members.append(("client_secret", .string(clientSecret))) }
        return JSONValue.object(JSONObject(members)).serialized(sortingKeys: true)
    }

    init?(vendor: String, stored: String) {
        guard let value = try? JSONParser.parse(stored), let id = value["client_id"]?.string else { return nil }
        self.init(vendor: vendor, clientID: id, clientSecret: value["client_secret"]?.string,
                  scopes: (value["scopes"]?.array ?? []).compactMap(\.string))
    }
}

extension OpenVault {
    /// `hreader providers client set`: keeps (or replaces) a vendor's registration.
    public func setProviderClient(_ client: ProviderClient) throws {
        let vendor = try ProviderDirectory.vendorSlug(client.vendor)
        guard !client.clientID.isEmpty, client.clientID.count <= 500, !client.clientID.contains(where: \.isWhitespace) else {
            throw HReaderError.usage("--client-id takes the id the vendor gave your registration (no spaces)")
        }
        var client = client
        client.vendor = vendor
        try write {
            try SettingsRepository(db).set(ProviderClient.keyPrefix + vendor, client.stored)
            try audit.record("providers.client.set", subject: vendor, detail: client.clientSecret == nil ? "public client" : "confidential client")
        }
    }

    public func providerClient(vendor: String) throws -> ProviderClient? {
        let vendor = try ProviderDirectory.vendorSlug(vendor)
        return try read { try SettingsRepository(db).value(ProviderClient.keyPrefix + vendor) }
            .flatMap { ProviderClient(vendor: vendor, stored: $0) }
    }

    public func providerClients() throws -> [ProviderClient] {
        try read { try SettingsRepository(db).values(prefix: ProviderClient.keyPrefix) }.compactMap {
            ProviderClient(vendor: String($0.key.dropFirst(ProviderClient.keyPrefix.count)), stored: $0.value)
        }
    }

    public func removeProviderClient(vendor: String) throws {
        let vendor = try ProviderDirectory.vendorSlug(vendor)
        try write {
            let settings = SettingsRepository(db)
            guard try settings.value(ProviderClient.keyPrefix + vendor) != nil else {
                throw HReaderError.usage("no client registration is kept for \(vendor); see 'hreader providers client list'")
            }
            try settings.set(ProviderClient.keyPrefix + vendor, nil)
            try audit.record("providers.client.remove", subject: vendor)
        }
    }
}

extension DirectoryBrand {
    /// The endpoint a login by provider uses, or why there is none: no endpoint known, only
    /// DSTU2 (or another version hreader does not speak), or the R4 one not active.
    public func loginEndpoint() throws -> ProviderEndpoint {
        if let endpoint = patientAccessEndpoint { return endpoint }
        let who = "\(brand.name) (\(id))"
        guard !brand.endpoints.isEmpty else {
            throw HReaderError(.failure, "\(who): its vendor lists no FHIR endpoint for it, so hreader cannot log in there; "
                               + "give --server URL if you know its FHIR base URL")
        }
        if let r4 = brand.endpoints.first(where: \.isR4) {
            throw HReaderError(.failure, "\(who): its R4 endpoint \(r4.url) is marked \(r4.status) by its vendor, not active; "
                               + "try again after 'hreader providers update', or ask the provider")
        }
        let versions = Set(brand.endpoints.map(\.versionName)).sorted().joined(separator: ", ")
        if brand.endpoints.allSatisfy({ $0.fhirVersion == nil }) {
            // Nothing says the version: the CapabilityStatement will (hreader checks it at login).
            if let active = brand.endpoints.first(where: \.isActive) { return active }
        }
        throw HReaderError(.failure, "\(who) offers only \(versions) endpoints, and hreader logs in to FHIR R4 (4.0.x) only")
    }
}

extension SmartLoginRequest {
    /// The login `sources login --provider` and the web view's provider page both run for a brand:
    /// its login endpoint (`loginEndpoint`, with its refusals), the client id, secret and scopes of
    /// the vendor's registration (`providers client set`), or hreader's public client id without one.
    /// A client id given by the person (`--client-id`) overrides the registration and drops its
    /// secret; scopes given override its scopes.
    public init(provider brand: DirectoryBrand, registration: ProviderClient?, clientID: String? = nil, scopes: [String] = []) throws {
        let endpoint = try brand.loginEndpoint()
        let chosen = scopes.isEmpty ? (registration?.scopes ?? []) : scopes
        self.init(server: try ServerURL(endpoint.url), clientID: clientID ?? registration?.clientID ?? Self.defaultClientID,
                  scopes: chosen.isEmpty ? nil : chosen)
        clientSecret = clientID == nil ? registration?.clientSecret : nil
    }
}
