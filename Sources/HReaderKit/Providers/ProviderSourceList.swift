import Foundation
import HReaderJSON

/// The vendors' published lists `hreader providers update` reads when given no `--from`: this
/// file's list, unless the user keeps their own at `$XDG_CONFIG_HOME/hreader/provider-sources.json`
/// (else `~/.config/hreader/…`), in the same shape. Each is public data about providers, fetched
/// with no credential (docs/providers.md lists where each comes from).
public enum ProviderSourceList {
    /// The default list. One place to change when a vendor moves its list.
    public static let defaultText = """
        {
          "sources": [
            {"vendor": "epic", "url": "https://open.epic.com/Endpoints/Brands",
             "about": "Epic's R4 User-access Brands bundle (SMART App Launch 2.2)"},
            {"vendor": "oracle", "url": "https://raw.githubusercontent.com/oracle-samples/ignite-endpoints/main/oracle_health_fhir_endpoints/millennium_patient_r4_endpoints.json",
             "about": "Oracle Health (Cerner) Millennium patient-access R4 endpoints, Organization + Endpoint bundle"},
            {"vendor": "oracle", "url": "https://raw.githubusercontent.com/oracle-samples/ignite-endpoints/main/oracle_health_fhir_endpoints/soarian_patient_r4_endpoints.json",
             "about": "Oracle Health Soarian patient-access R4 endpoints"}
          ]
        }
        """

    /// `$XDG_CONFIG_HOME/hreader/provider-sources.json`, else `~/.config/hreader/provider-sources.json`.
    public static func userFile(environment: (String) -> String?) -> String {
        if let xdg = environment("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return xdg + "/hreader/provider-sources.json" }
        return (environment("HOME") ?? NSHomeDirectory()) + "/.config/hreader/provider-sources.json"
    }

    /// The user's list if they keep one, else the default; only `vendor`'s sources when given.
    public static func sources(environment: (String) -> String?, vendor: String? = nil) throws -> (sources: [ProviderSource], from: String) {
        let file = userFile(environment: environment)
        let sources: [ProviderSource]
        let from: String
        if let data = FileManager.default.contents(atPath: file) {
            sources = try parse(Array(data), name: file)
            from = file
        } else {
            sources = try parse(Array(defaultText.utf8), name: "the default list")
            from = "the default list"
        }
        guard let vendor else { return (sources, from) }
        let slug = try ProviderDirectory.vendorSlug(vendor)
        let chosen = sources.filter { $0.vendor == slug }
        guard !chosen.isEmpty else {
            throw HReaderError.usage("\(from) has no source for vendor \(slug) (it has: \(Set(sources.map(\.vendor)).sorted().joined(separator: ", ")))")
        }
        return (chosen, from)
    }

    static func parse(_ bytes: [UInt8], name: String) throws -> [ProviderSource] {
        guard let list = (try? JSONParser.parse(bytes, duplicateNames: .refused))?["sources"]?.array else {
            throw HReaderError.badInput("\(name) is not a provider source list ({\"sources\": [{\"vendor\", \"url\"}]})")
        }
        return try list.enumerated().map { i, item in
            guard let vendor = item["vendor"]?.string, let url = item["url"]?.string,
                  url.lowercased().hasPrefix("https://") || url.lowercased().hasPrefix("http://") || url.hasPrefix("/") else {
                throw HReaderError.badInput("\(name): sources[\(i)] needs a vendor and a url (https, or an absolute file path)")
            }
            return ProviderSource(location: url, vendor: try ProviderDirectory.vendorSlug(vendor))
        }
    }
}
