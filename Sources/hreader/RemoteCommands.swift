import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderNet

struct RemoteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Look at what a server holds before importing.",
        subcommands: [RemotePatientsCommand.self])
}

struct RemotePatientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "patients",
        abstract: "List the patients a FHIR or RHEx server holds (hReader's people feed).",
        discussion: """
            Uses the stored credentials of the server's source ('hreader sources login'), if any.
              hreader remote patients --server https://fhir.example.org/r4 --family Quinlan
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var network: NetworkOptions
    @Option(help: ArgumentHelp("The server's base URL.", valueName: "url")) var server: String
    @Option(help: "fhir or rhex (default: the stored source's kind, else found by asking the server).") var kind: ServerKind?
    @Option(help: "Only patients whose family name starts so.") var family: String?

    func run() async throws {
        let url = try ServerURL(server)
        try network.apply()
        let open = try global.open()
        let (kind, patients) = try await open.remotePatients(server: url, kind: kind, family: family)
        if global.json {
            print(JSONValue.object([("server", .string(url.description)), ("kind", .string(kind.rawValue)),
                                    ("patients", .array(patients.map { p in
                                        .object([("id", .string(p.id)), ("name", .string(p.name)),
                                                 ("birth_date", p.birthDate.map { .string($0) } ?? .null),
                                                 ("gender", p.gender.map { .string($0) } ?? .null)])
                                    }))]).serialized(pretty: true))
            return
        }
        if patients.isEmpty {
            global.note("\(url) (\(kind.rawValue)) holds no patients" + (family.map { " with a family name starting '\($0)'" } ?? ""))
            return
        }
        let idWidth = max(2, patients.map(\.id.count).max() ?? 2)
        print("ID".padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  NAME")
        for p in patients {
            let extra = [p.birthDate, p.gender].compactMap { $0 }.joined(separator: ", ")
            print(p.id.padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  " + p.name + (extra.isEmpty ? "" : "  (\(extra))"))
        }
    }
}

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Re-import every patient that came from a server (or one): updates in place, keeps your notes.",
        discussion: """
            Serial per host, parallel across hosts. Entries the server no longer has are marked
            (entries list shows missing_at_source), never deleted. Each patient commits on its own: a
            failure leaves the others complete; the exit code is that of the first failure.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var network: NetworkOptions
    @Option(help: "Only this local patient (id or uuid).") var patient: String?

    func run() async throws {
        try network.apply()
        let open = try global.open()
        let only = try patient.map { try open.patient($0) }
        let progress = ProgressLine(global: global)
        let summary = try await open.sync(patient: only) { progress.update("syncing \($0)") }
        progress.finish()
        let s = summary.imports
        let patients = s.patientCount
        for warning in s.warnings { Terminal.warning(warning) }
        if global.json {
            print(JSONValue.object([("sync", .object([("sources", .int(summary.sources)),
                                                      ("failures", .array(summary.failures.map {
                                                          .object([("patient", .string($0.patient)), ("error", .string($0.message))])
                                                      }))])),
                                    ("summary", s.jsonValue)]).serialized(pretty: true))
        } else {
            print("Synced \(patients) patient(s) from \(summary.sources) source(s): \(s.inserted) new entries, \(s.updated) updated, "
                  + "\(s.unchanged) unchanged, \(s.markedMissing) marked missing at the source.")
            ImportCommand.printDetails(s)
        }
        if let first = summary.failures.first {
            for failure in summary.failures { Terminal.error("sync of \(failure.patient) failed: \(failure.message)") }
            throw ExitCode(first.exitCode)
        }
    }
}

struct SourcesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "The servers and files records came from, and their credentials.",
        subcommands: [SourcesListCommand.self, SourcesLoginCommand.self, SourcesRemoveCommand.self, SourcesPriorityCommand.self])
}

struct SourcesListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List sources (never their secrets).")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let sources = try global.open().sourcesList()
        if global.json {
            print(JSONValue.object([("sources", .array(sources.map { s in
                .object([("id", .int(s.id)), ("kind", .string(s.kind)), ("url", s.url.map { .string($0) } ?? .null),
                         ("name", .string(s.name)), ("auth", .string(s.auth)), ("smart", .bool(s.smart)),
                         ("login_patient", s.loginPatient.map { .string($0) } ?? .null), ("patients", .int(s.patients)),
                         ("last_sync", s.lastSync.map { .string($0) } ?? .null)])
            }))]).serialized(pretty: true))
            return
        }
        if sources.isEmpty {
            global.note("no sources yet: 'hreader import --server URL --all' or 'hreader sources login'")
            return
        }
        for s in sources {
            let auth = s.smart ? "\(s.auth) (SMART" + (s.loginPatient.map { ", patient \($0))" } ?? ")") : s.auth
            print("\(s.id)  \(s.kind)  \(s.url ?? s.name)  auth \(auth)  \(s.patients) patient(s)  last sync \(s.lastSync ?? "never")")
        }
    }
}

struct SourcesLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to a patient portal (SMART App Launch), or store a server's credentials, and check them.",
        discussion: """
              hreader sources login --server https://fhir.example.org/r4 --smart --client-id ID
              hreader sources login --provider "St. Mary's Hospital" --provider-state WI
              hreader sources login --server https://fhir.example.org/r4 --kind fhir --token-file token.txt
              hreader sources login --server https://rhex.example.org --kind rhex --auth oauth2 \\
                  --token-url https://rhex.example.org/oauth/token --client-id hreader --refresh-token-file refresh.txt
              hreader sources login --server https://fhir.example.org/r4 --auth basic --user me --secret-file pw.txt
            --smart prints a URL to open in a browser (and opens it when it can); you log in at your
            provider and choose the patient, the browser comes back to http://127.0.0.1:PORT/callback,
            and the tokens are stored encrypted in the vault. 'hreader import --server URL' then imports
            that patient, and 'hreader sync' keeps it current.
            --provider ID|NAME finds the FHIR base URL in the provider directory ('hreader providers')
            and logs in with SMART, with the client id kept for its vendor ('hreader providers client
            set'; --client-id overrides it). Several providers of that name: exit 2, listing them.
            Secrets are read from files; they never appear on the command line, in output or in logs.
            OAuth2 access tokens are renewed with the refresh token when under 60 s are left.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var network: NetworkOptions
    @OptionGroup var credentials: AuthOptions
    @Option(help: ArgumentHelp("The server's base URL.", valueName: "url")) var server: String?
    @Option(help: ArgumentHelp("Log in with SMART to a provider of the directory, by its id or name ('hreader providers search').",
                               valueName: "id|name"))
    var provider: String?
    @Option(help: ArgumentHelp("With --provider NAME: only providers with a place in this state.", valueName: "ST")) var providerState: String?
    @Option(help: "fhir or rhex (default: found by asking the server).") var kind: ServerKind?
    @Flag(help: "Store without contacting the server (with --smart: do not read the patient after the login).") var noCheck = false
    @Flag(help: "Log in through the browser with SMART App Launch (OAuth2 authorization code with PKCE, a public client).")
    var smart = false
    @Option(help: ArgumentHelp("With --smart: the scopes to ask (repeatable, or space-separated; default: launch/patient openid fhirUser offline_access patient/*.rs, or patient/*.read for SMART v1 servers).",
                               valueName: "scope"))
    var scope: [String] = []
    @Option(help: ArgumentHelp("With --smart: listen for the browser's redirect on this port of 127.0.0.1 (default: any free port).", valueName: "port"))
    var redirectPort: Int?
    @Option(help: ArgumentHelp("With --smart: how long to wait for the browser (e.g. 90s, 5m).", valueName: "duration"))
    var loginTimeout: DurationArgument = DurationArgument(argument: "5m")!
    @Flag(help: "With --smart: print the URL only; do not start a browser.") var noBrowser = false

    func validate() throws {
        guard (server == nil) != (provider == nil) else { throw ValidationError("give --server URL or --provider ID|NAME (one of them)") }
        if providerState != nil && provider == nil { throw ValidationError("--provider-state goes with --provider") }
        if smart || provider != nil {
            guard credentials.auth == nil, credentials.tokenFile == nil, credentials.user == nil, credentials.secretFile == nil,
                  credentials.tokenUrl == nil, credentials.clientSecretFile == nil, credentials.refreshTokenFile == nil else {
                throw ValidationError(provider == nil ? "--smart takes no other credential options than --client-id (it is a public client)"
                                      : "--provider takes no other credential options than --client-id (a vendor's secret is kept with 'hreader providers client set')")
            }
            guard kind == nil || kind == .fhir else { throw ValidationError("--smart logs in to FHIR servers") }
            if let redirectPort, !(1...65_535).contains(redirectPort) { throw ValidationError("--redirect-port must be 1 to 65535") }
        } else if !scope.isEmpty || redirectPort != nil || noBrowser {
            throw ValidationError("--scope, --redirect-port and --no-browser go with --smart")
        }
    }

    func run() async throws {
        if let provider { return try await providerLogin(provider) }
        let url = try ServerURL(server ?? "")
        if smart { return try await smartLogin(url) }
        guard let method = try credentials.method() else {
            throw HReaderError.usage("give a credential: --smart, --token-file, --auth basic --user --secret-file, or --auth oauth2 --token-url --refresh-token-file")
        }
        try network.apply()
        let open = try global.open()
        let resolvedKind: ServerKind
        if let kind { resolvedKind = kind } else { resolvedKind = try await open.serverKind(url) }
        let message = try await open.login(server: url, kind: resolvedKind, method: method, check: !noCheck)
        global.note(message)
    }

    /// `--provider`: the brand's R4 endpoint from the directory, its vendor's client settings.
    private func providerLogin(_ reference: String) async throws {
        let directory = ProvidersCommand.directory
        let brand: DirectoryBrand
        switch try directory.resolve(reference, state: providerState) {
        case let .found(found):
            brand = found
        case .none:
            throw HReaderError.usage("no provider in the directory matches '\(reference)'; try 'hreader providers search WORDS'"
                                     + (directory.exists ? "" : " after 'hreader providers update'"))
        case let .ambiguous(brands):
            // The list goes with the error, to stderr: stdout stays for what was asked.
            Terminal.note("Several providers match '\(reference)':")
            for line in Output.tableLines([["ID", "NAME", "PLACE", "VENDOR", "R4"]] + brands.map { found in
                [found.id, found.brand.name, found.place(in: providerState).map { [$0.city, $0.state].compactMap { $0 }.joined(separator: ", ") } ?? "",
                 found.vendor, ProvidersCommand.r4(found)]
            }, width: nil) { Terminal.note("  " + line) }
            throw HReaderError.usage("'\(reference)' names \(brands.count) providers; give one's id: hreader sources login --provider ID")
        }
        let endpoint = try brand.loginEndpoint()   // its refusals come before the password is asked
        let open = try global.open()
        let request = try SmartLoginRequest(provider: brand, registration: try open.providerClient(vendor: brand.vendor),
                                            clientID: credentials.clientId, scopes: scope.flatMap { $0.split(separator: " ").map(String.init) })
        global.note("\(brand.brand.name) (\(brand.id), \(brand.vendor)): \(endpoint.url)")
        try await smartLogin(request, open: open)
    }

    private func smartLogin(_ url: ServerURL) async throws {
        let scopes = scope.flatMap { $0.split(separator: " ").map(String.init) }
        try await smartLogin(SmartLoginRequest(server: url, clientID: credentials.clientId ?? SmartLoginRequest.defaultClientID,
                                               scopes: scopes.isEmpty ? nil : scopes), open: try global.open())
    }

    /// `chosen`: the server, client and scopes; the rest comes from the options.
    private func smartLogin(_ chosen: SmartLoginRequest, open: OpenVault) async throws {
        try network.apply()
        var request = chosen
        let url = chosen.server
        request.redirectPort = redirectPort ?? 0
        request.timeout = loginTimeout.seconds
        request.check = !noCheck
        // A browser only when a person is looking (stdout is a terminal).
        request.openBrowser = !noBrowser && Terminal.stdoutIsTerminal
        let outcome = try await open.smartLogin(request, prompt: { prompt in
            // The URL is the one thing the user must see, --quiet or not (it is on stderr, like a prompt).
            Terminal.note("Open this URL in a browser to log in to \(url) (scopes: \(prompt.scopes.joined(separator: " "))):")
            Terminal.note("  \(prompt.authorizationURL.absoluteString)")
            if let problem = prompt.browserProblem { Terminal.note("(the browser was not started: \(problem))") }
            Terminal.note("Waiting up to \(loginTimeout.text) for the browser to come back to \(prompt.redirectURI) …")
        }, confirm: { identity in
            // On a terminal the patient sees whom the tokens are for before they are kept: a login
            // finished by someone else's code would show their name here.
            guard Terminal.stdinIsTerminal else {
                Terminal.note("The tokens are for \(identity.description).")
                return true
            }
            // The server's words (the patient's id and name) go through the terminal filter, as every message does.
            let question = TerminalText.clean("The tokens are for \(identity.description). Store them? [y/N] ")
            let answer = try Terminal.readVisibleLine(prompt: question, allowEmpty: true)
            return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
        })
        if global.json {
            print(JSONValue.object([("login", .object([
                ("server", .string(outcome.server)), ("method", .string("smart")),
                ("patient", outcome.patient.map { .string($0) } ?? .null),
                ("patient_name", outcome.patientName.map { .string($0) } ?? .null),
                ("scope", outcome.scope.map { .string($0) } ?? .null),
                ("expires", outcome.expiresAt.map { .string(RFC3339.utc(Int64($0))) } ?? .null),
                ("refreshable", .bool(outcome.refreshable)), ("checked", .bool(outcome.checked)),
            ]))]).serialized(pretty: true))
            return
        }
        var message = "logged in to \(outcome.server) with SMART App Launch"
        if let patient = outcome.patient {
            message += " as patient \(patient)" + (outcome.patientName.map { " (\($0))" } ?? "")
                + "; 'hreader import --server \(outcome.server)' imports that record"
        } else {
            message += "; the server named no patient: give --patient to 'hreader import --server'"
        }
        if !outcome.refreshable { message += ". The server gave no refresh token: log in again when the access token expires" }
        global.note(message)
    }
}

struct SourcesRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Forget a source and its credentials (with --with-patients, also the patients imported from it).")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The source's id or base URL (see 'hreader sources list').") var source: String
    @Option(help: "fhir or rhex, when both kinds share the URL.") var kind: ServerKind?
    @Flag(help: "Also remove the patients (and their entries) that came from this source.") var withPatients = false

    func run() throws {
        let (url, patients) = try global.open().removeSource(source, kind: kind, withPatients: withPatients)
        global.note("removed source \(url)" + (patients > 0 ? " and \(patients) patient(s)" : ""))
    }
}

struct SourcesPriorityCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "priority",
        abstract: "Which device's activity counts first when several counted a day.",
        discussion: """
              hreader sources priority                  # the order, each source's kind
              hreader sources priority "Anna's iPhone"  # the phone first
              hreader sources priority --reset          # watch, app, phone
            Day totals of steps, distance and energy count each day once: the
            first source counts whole, a later one only the part of its time no
            earlier one covers (prorated), as Apple Health does. Named sources
            come first, in the order given; the others follow by kind (a watch
            or band, an app, a phone, guessed from the name), then by name.
            Every sample stays stored, so a new order changes the next
            timeline, summary, export and web page.
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: ArgumentHelp("Sources to count first, in order (as listed without names).", valueName: "name")) var names: [String] = []
    @Flag(help: "Forget the names given before: the default order.") var reset = false

    func validate() throws {
        if reset && !names.isEmpty { throw ValidationError("--reset takes no names") }
    }

    func run() throws {
        let open = try global.open()
        let order = reset ? try open.resetSourcePriority() : names.isEmpty ? try open.sourcePriority() : try open.setSourcePriority(names)
        if global.json {
            Output.json(.object([("sources", .array(order.enumerated().map { index, source in
                .object([("rank", .int(Int64(index + 1))), ("name", .string(source.name)), ("kind", .string(source.kind.name)),
                         ("named", .bool(source.named)), ("series", .int(Int64(source.series)))])
            }))]))
            return
        }
        if order.isEmpty {
            global.note("no samples yet: the order applies once a watch, phone or app's readings are imported")
            return
        }
        Output.table(order.enumerated().map { index, source in
            ["\(index + 1)", source.name, source.kind.name + (source.named ? ", named" : "")]
        })
    }
}
