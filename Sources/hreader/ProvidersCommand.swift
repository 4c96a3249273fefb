import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderNet

struct ProvidersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "Find your provider's patient portal by name: a directory of the endpoints vendors publish.",
        discussion: """
            The directory is public data (SMART App Launch User-access Brands bundles), kept in
            $XDG_CACHE_HOME/hreader (else ~/.cache/hreader), outside the vault: searching it needs no
            password, and nothing about you is stored with it (docs/providers.md).
              hreader providers update
              hreader providers search saint marys madison --state WI
              hreader providers client set epic --client-id YOUR-EPIC-CLIENT-ID
              hreader sources login --provider "St. Mary's Hospital"
            """,
        subcommands: [Update.self, Search.self, Show.self, Check.self, Client.self],
        defaultSubcommand: Search.self)

    static var directory: ProviderDirectory { ProviderDirectory.defaultLocation { processEnvironment[$0] } }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "update",
            abstract: "Fetch the vendors' brands bundles (or read them from files) into the directory.",
            discussion: """
                Without --from, reads the sources of ~/.config/hreader/provider-sources.json, else the
                default list (Epic's R4 brands bundle, Oracle Health's endpoint lists). A source
                already fetched is asked again with its ETag and Last-Modified (a 304 changes nothing).
                A source that cannot be fetched or parsed keeps what it had; the others are updated.
                  hreader providers update --from brands.json --vendor epic
                """)
        @OptionGroup var global: GlobalOptions
        @OptionGroup var network: NetworkOptions
        @Option(help: ArgumentHelp("A brands bundle to read: an https URL or a file (repeatable).", valueName: "url|file"))
        var from: [String] = []
        @Option(help: ArgumentHelp("The vendor whose system the brands are on (epic, oracle, …): with --from, names them; alone, only that vendor's default sources.",
                                   valueName: "name"))
        var vendor: String?

        func run() async throws {
            try network.apply()
            var configuration = APIClients.shared.configuration
            if network.maxResponseSize == nil { configuration.maxResponseBytes = ProviderDirectory.defaultMaxBundleBytes }
            APIClients.shared.configuration = configuration
            let sources: [ProviderSource]
            if from.isEmpty {
                sources = try ProviderSourceList.sources(environment: { processEnvironment[$0] }, vendor: vendor).sources
            } else {
                let vendorName = try vendor.map(ProviderDirectory.vendorSlug) ?? "other"
                sources = from.map { item in
                    let lower = item.lowercased()
                    if lower.hasPrefix("https://") || lower.hasPrefix("http://") { return ProviderSource(location: item, vendor: vendorName) }
                    return ProviderSource(location: URL(fileURLWithPath: item).standardizedFileURL.path, vendor: vendorName)
                }
            }
            let progress = ProgressLine(global: global)
            progress.update("reading \(sources.count) source\(sources.count == 1 ? "" : "s")")
            let report = try await ProvidersCommand.directory.update(sources, maxBytes: configuration.maxResponseBytes)
            progress.finish()
            if global.json {
                Output.json(.object([("update", .object([
                    ("directory", .string(report.path)), ("written", .bool(report.written)), ("brands", .int(report.brands)),
                    ("sources", .array(report.outcomes.map(Self.json))),
                ]))]))
            } else {
                for outcome in report.outcomes {
                    switch outcome.result {
                    case let .updated(brands, endpoints):
                        global.note("\(outcome.source.location) (\(outcome.source.vendor)): \(brands) brands, \(endpoints) endpoints")
                    case let .notModified(brands):
                        global.note("\(outcome.source.location) (\(outcome.source.vendor)): not modified since the last update (\(brands) brands kept)")
                    case let .failed(error):
                        // Most messages name the source already ("… is larger than 256 MiB").
                        Terminal.error(error.message.hasPrefix(outcome.source.location) ? error.message
                                       : "\(outcome.source.location): \(error.message)")
                    }
                }
                global.note(report.written ? "The directory holds \(report.brands) brands (\(report.path))."
                                           : "The directory was not changed (\(report.brands) brands).")
            }
            if let failure = report.firstFailure { throw ExitCode(failure.exitCode) }
        }

        static func json(_ outcome: ProviderSourceOutcome) -> JSONValue {
            var members: [JSONObject.Member] = [("source", .string(outcome.source.location)), ("vendor", .string(outcome.source.vendor))]
            switch outcome.result {
            case let .updated(brands, endpoints):
                members += [("status", .string("updated")), ("brands", .int(brands)), ("endpoints", .int(endpoints))]
            case let .notModified(brands):
                members += [("status", .string("not-modified")), ("brands", .int(brands))]
            case let .failed(error):
                members += [("status", .string("failed")), ("error", .string(error.message))]
            }
            return .object(JSONObject(members))
        }
    }

    struct Search: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Search the directory by name, alias, portal or city (no password needed).",
            discussion: """
                Words match in any order and case, accents folded, "St." as "Saint", the start of a
                word, or with one typo in a word of four letters or more.
                  hreader providers search mary hospital --state WI --limit 5 --json
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Words of the provider's name, its portal's or its city.") var words: [String] = []
        @Option(help: ArgumentHelp("Only providers with a place in this state (two letters).", valueName: "ST")) var state: String?
        @Option(help: ArgumentHelp("Only providers with a place in this city.", valueName: "city")) var city: String?
        @Option(help: "At most this many (default 20).") var limit: Int = 20

        func validate() throws {
            guard (1...1000).contains(limit) else { throw ValidationError("--limit must be 1 to 1000") }
            guard !words.isEmpty || state != nil || city != nil else { throw ValidationError("give words to search for (or --state / --city)") }
        }

        /// What was asked, in the form the quick path reads too (QuickCommandLine).
        var request: ProviderSearchRequest {
            ProviderSearchRequest(global: global.values, words: words, state: state, city: city, limit: limit)
        }

        func run() throws { try request.run() }
    }

    /// "yes", "no (DSTU2 (1.0.2))", "inactive", "no endpoint".
    static func r4(_ brand: DirectoryBrand) -> String { brand.r4Text }

    static func brand(_ id: String) throws -> DirectoryBrand {
        guard let brand = try directory.brand(id: id) else {
            throw HReaderError.usage("no provider has the id \(id); find it with 'hreader providers search NAME'")
        }
        return brand
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Everything the directory knows of one provider.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The provider's id (from 'hreader providers search').") var id: String

        func run() throws {
            let found = try ProvidersCommand.brand(id)
            if global.json { Output.json(.object([("provider", found.json)])); return }
            let brand = found.brand
            var lines = ["\(brand.name)  (\(found.id))"]
            if !brand.aliases.isEmpty { lines.append("  also known as: \(brand.aliases.joined(separator: "; "))") }
            if let affiliated = brand.affiliatedWith { lines.append("  part of: \(affiliated)") }
            if let portal = brand.portalName ?? brand.portalURL {
                lines.append("  portal: \(portal)" + (brand.portalName != nil ? (brand.portalURL.map { " <\($0)>" } ?? "") : ""))
            }
            if let website = brand.website { lines.append("  website: \(website)") }
            let places = brand.places.map { [$0.city, $0.state].compactMap { $0 }.joined(separator: ", ") }
            if !places.isEmpty {
                lines.append("  places: " + places.prefix(12).joined(separator: "; ") + (places.count > 12 ? " (and \(places.count - 12) more)" : ""))
            }
            lines.append("  vendor: \(found.vendor)" + (brand.active ? "" : " (the brand is marked inactive)"))
            if brand.endpoints.isEmpty { lines.append("  no FHIR endpoint listed") }
            for endpoint in brand.endpoints {
                lines.append("  endpoint: \(endpoint.url)  \(endpoint.versionName), \(endpoint.status)")
            }
            lines.append("  log in: " + ((try? found.loginEndpoint()) != nil ? "hreader sources login --provider \(found.id)" : "not possible: " + ProvidersCommand.r4(found)))
            for line in lines { Output.line(line) }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Ask a provider's endpoint for its SMART configuration and CapabilityStatement, and say what it offers.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var network: NetworkOptions
        @Argument(help: "The provider's id.") var id: String

        func run() async throws {
            try network.apply()
            let brand = try ProvidersCommand.brand(id)
            let report = try await brand.check()
            if global.json {
                Output.json(.object([("check", .object([
                    ("id", .string(brand.id)), ("endpoint", .string(report.endpoint.url)), ("up", .bool(report.up)),
                    ("smart", report.smart.map { smart in .object([
                        ("authorization_endpoint", .string(smart.authorizationEndpoint.absoluteString)),
                        ("token_endpoint", .string(smart.tokenEndpoint.absoluteString)),
                        ("code_challenge_methods", smart.codeChallengeMethods.map { .strings($0) } ?? .null),
                        ("scopes_supported", smart.scopesSupported.map { .strings($0) } ?? .null),
                        ("capabilities", .strings(smart.capabilities)),
                    ]) } ?? .null),
                    ("smart_problem", .text(report.smartProblem)),
                    ("fhir_version", .text(report.capability?.fhirVersion)), ("software", .text(report.capability?.software)),
                    ("capability_problem", .text(report.capabilityProblem)),
                    ("pkce_s256", report.pkceS256.map(JSONValue.bool) ?? .null), ("can_log_in", .bool(report.canLogIn)),
                ]))]))
            } else {
                Output.line("\(brand.brand.name): \(report.endpoint.url)")
                if let smart = report.smart {
                    Output.line("  SMART configuration: found (authorize \(smart.authorizationEndpoint.absoluteString))")
                    Output.line("  PKCE S256: " + (smart.codeChallengeMethods.map { $0.contains("S256") ? "yes" : "no (offers \($0.joined(separator: ", ")))" }
                                                    ?? "not declared (hreader uses it)"))
                    if let scopes = smart.scopesSupported { Output.line("  scopes: \(scopes.prefix(20).joined(separator: " "))" + (scopes.count > 20 ? " …" : "")) }
                } else {
                    Output.line("  SMART configuration: none (\(report.smartProblem ?? "not found"))")
                }
                if let capability = report.capability {
                    Output.line("  CapabilityStatement: FHIR \(capability.fhirVersion)" + (capability.software.map { ", \($0)" } ?? ""))
                } else {
                    Output.line("  CapabilityStatement: not read (\(report.capabilityProblem ?? "no answer"))")
                }
                Output.line("  " + (report.canLogIn ? "hreader can log in here: hreader sources login --provider \(brand.id)"
                                                    : report.up ? "hreader cannot log in here (see above)" : "the endpoint did not answer"))
            }
            if !report.up { throw ExitCode(HReaderError.Kind.network.rawValue) }
        }
    }

    struct Client: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "client",
            abstract: "The app registration you made with a vendor, used for every provider on its system (kept in the vault).",
            discussion: """
                Register hreader as a patient-facing app with the vendor (docs/network.md says how, per
                vendor), with the redirect URI http://127.0.0.1/callback, then:
                  hreader providers client set epic --client-id 0a1b2c3d-…
                """,
            subcommands: [SetClient.self, List.self, Remove.self],
            defaultSubcommand: List.self)

        struct SetClient: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "set", abstract: "Keep a vendor's client id (and secret, scopes).")
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The vendor (epic, oracle, … as 'providers search' shows it).") var vendor: String
            @Option(help: ArgumentHelp("The client id the vendor gave your registration.", valueName: "id")) var clientId: String
            @Option(help: ArgumentHelp("A file holding the client secret, for a confidential registration.", valueName: "file"))
            var clientSecretFile: String?
            @Option(help: ArgumentHelp("The scopes to ask (repeatable, or space-separated; default: what the server suggests).", valueName: "scope"))
            var scope: [String] = []

            func run() throws {
                let secret = try clientSecretFile.map { try AuthOptions.secret($0, "--client-secret-file") }
                let scopes = scope.flatMap { $0.split(separator: " ").map(String.init) }
                let open = try global.open()
                try open.setProviderClient(ProviderClient(vendor: vendor, clientID: clientId, clientSecret: secret, scopes: scopes))
                let slug = try ProviderDirectory.vendorSlug(vendor)
                let scopeText = scopes.isEmpty ? "." : " and the scopes " + scopes.joined(separator: " ") + "."
                global.note("Logins to \(slug) providers will use client id \(clientId)" + (secret != nil ? " with its secret" : "") + scopeText)
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "The vendors' client ids kept (never their secrets).")
            @OptionGroup var global: GlobalOptions

            func run() throws {
                let clients = try global.open().providerClients()
                if global.json {
                    Output.json(.object([("clients", .array(clients.map { client in
                        .object([("vendor", .string(client.vendor)), ("client_id", .string(client.clientID)),
                                 ("confidential", .bool(client.clientSecret != nil)), ("scopes", .strings(client.scopes))])
                    }))]))
                    return
                }
                if clients.isEmpty { global.note("No client registrations kept; logins use the client id hreader."); return }
                Output.table([["VENDOR", "CLIENT ID", "SECRET", "SCOPES"]] + clients.map {
                    [$0.vendor, $0.clientID, $0.clientSecret == nil ? "no" : "yes", $0.scopes.joined(separator: " ")]
                })
            }
        }

        struct Remove: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "remove", abstract: "Forget a vendor's client registration.")
            @OptionGroup var global: GlobalOptions
            @Argument var vendor: String

            func run() throws {
                try global.open().removeProviderClient(vendor: vendor)
                global.note("Forgot the client registration for \(vendor).")
            }
        }
    }
}

/// `providers search`'s arguments, read by swift-argument-parser (ProvidersCommand.Search) or by the
/// quick path (a search is a command a person types again and again).
struct ProviderSearchRequest: Equatable {
    var global: VaultOptions
    var words: [String]
    var state: String?
    var city: String?
    var limit = 20

    func run() throws {
        let hits = try ProvidersCommand.directory.search(ProviderQuery(text: words.joined(separator: " "), state: state, city: city, limit: limit))
        if global.json {
            Output.json(.object([("providers", .array(hits.map { $0.brand.hitJSON(state: state) }))]))
            return
        }
        if hits.isEmpty { global.note("No provider matches; try fewer words, or 'hreader providers update'."); return }
        Output.table([["ID", "NAME", "PORTAL", "PLACE", "VENDOR", "R4"]] + hits.map { hit in
            let brand = hit.brand
            let place = brand.place(in: state).map { [$0.city, $0.state].compactMap { $0 }.joined(separator: ", ") } ?? ""
            return [brand.id, brand.brand.name, brand.brand.portalName ?? "", place, brand.vendor, ProvidersCommand.r4(brand)]
        })
    }
}
