import ArgumentParser
import Foundation
import HReaderKit
import HReaderNet
import HReaderStore

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
        if global.json {
            print(JSONValue.object([("sync", .object([("sources", .number(Double(summary.sources))),
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
        subcommands: [SourcesListCommand.self, SourcesLoginCommand.self, SourcesRemoveCommand.self])
}

struct SourcesListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List sources (never their secrets).")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let sources = try global.open().sourcesList()
        if global.json {
            print(JSONValue.object([("sources", .array(sources.map { s in
                .object([("id", .number(Double(s.id))), ("kind", .string(s.kind)), ("url", s.url.map { .string($0) } ?? .null),
                         ("name", .string(s.name)), ("auth", .string(s.auth)), ("patients", .number(Double(s.patients))),
                         ("last_sync", s.lastSync.map { .string($0) } ?? .null)])
            }))]).serialized(pretty: true))
            return
        }
        if sources.isEmpty {
            global.note("no sources yet: 'hreader import --server URL --all' or 'hreader sources login'")
            return
        }
        for s in sources {
            print("\(s.id)  \(s.kind)  \(s.url ?? s.name)  auth \(s.auth)  \(s.patients) patient(s)  last sync \(s.lastSync ?? "never")")
        }
    }
}

struct SourcesLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Store a server's credentials in the vault (encrypted) and check them.",
        discussion: """
              hreader sources login --server https://fhir.example.org/r4 --kind fhir --token-file token.txt
              hreader sources login --server https://rhex.example.org --kind rhex --auth oauth2 \\
                  --token-url https://rhex.example.org/oauth/token --client-id hreader --refresh-token-file refresh.txt
              hreader sources login --server https://fhir.example.org/r4 --auth basic --user me --secret-file pw.txt
            Secrets are read from files; they never appear on the command line, in output or in logs.
            OAuth2 access tokens are renewed with the refresh token when under 60 s are left.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var network: NetworkOptions
    @OptionGroup var credentials: AuthOptions
    @Option(help: ArgumentHelp("The server's base URL.", valueName: "url")) var server: String
    @Option(help: "fhir or rhex (default: found by asking the server).") var kind: ServerKind?
    @Flag(help: "Store without contacting the server.") var noCheck = false

    func run() async throws {
        let url = try ServerURL(server)
        guard let method = try credentials.method() else {
            throw HReaderError.usage("give a credential: --token-file, --auth basic --user --secret-file, or --auth oauth2 --token-url --refresh-token-file")
        }
        try network.apply()
        let open = try global.open()
        let resolvedKind: ServerKind
        if let kind { resolvedKind = kind } else { resolvedKind = try await open.serverKind(url) }
        let message = try await open.login(server: url, kind: resolvedKind, method: method, check: !noCheck)
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
