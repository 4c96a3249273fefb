import Foundation
import HReaderNet
import HReaderRecords

/// What `hreader providers check` found at a brand's endpoint: its SMART configuration
/// (`.well-known/smart-configuration`) and its CapabilityStatement (`metadata`), each read or why not.
public struct ProviderCheckReport: Sendable {
    public var endpoint: ProviderEndpoint
    public var smart: SmartConfiguration?
    public var smartProblem: String?
    public var capability: FHIRCapability?
    public var capabilityProblem: String?

    /// Answers, and whether hreader can log in: SMART endpoints, PKCE S256 (or not declared), R4.
    public var up: Bool { smart != nil || capability != nil }
    public var pkceS256: Bool? { smart.map { $0.codeChallengeMethods?.contains(PKCE.method) ?? false } }
    public var canLogIn: Bool {
        guard smart != nil || capability?.oauthURIs["authorize"] != nil else { return false }
        if let methods = smart?.codeChallengeMethods, !methods.contains(PKCE.method) { return false }
        if let version = capability?.fhirVersion, !version.hasPrefix("4.") { return false }
        return true
    }
}

extension DirectoryBrand {
    /// Probes the brand's login endpoint (else its first endpoint): both documents, each failure
    /// reported rather than thrown.
    public func check(clients: APIClients = .shared) async throws -> ProviderCheckReport {
        guard let endpoint = patientAccessEndpoint ?? brand.endpoints.first else {
            throw HReaderError(.failure, "\(brand.name) (\(id)): its vendor lists no FHIR endpoint for it")
        }
        guard let url = URL(string: endpoint.url) else { throw HReaderError.badInput("\(endpoint.url) is not a URL") }
        var report = ProviderCheckReport(endpoint: endpoint)
        do {
            report.smart = try await SmartConfiguration.wellKnown(fhirBase: url, clients: clients)
        } catch let error as SmartError {
            report.smartProblem = error.description
        } catch let error as NetError {
            report.smartProblem = HReaderError.from(network: error).message
        }
        do {
            report.capability = try await FHIRClient(base: url, clients: clients).capability()
        } catch let error as NetError {
            report.capabilityProblem = HReaderError.from(network: error).message
        }
        return report
    }
}
