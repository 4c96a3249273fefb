import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderNet

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import records from a server (FHIR R4 or RHEx) or from files (FHIR JSON/NDJSON/XML, a Bulk Data directory, RHEx c32 JSON, C-CDA/C32 documents, Garmin FIT files, Health Connect exports, Fitbit Takeout).",
        discussion: """
            Patients are created or updated by the id their source gives them; entries are updated in
            place on a re-import, and your own comments and strike-throughs are kept. Each patient is
            stored in one transaction: a failure (or a kill) leaves earlier patients complete and the
            failing one untouched; running the command again finishes the job without duplicates.
              hreader import --server https://fhir.example.org/r4 --all --as family
              hreader import --server https://fhir.example.org/r4 --patient 123 --patient 456
              hreader import --server https://fhir.example.org/r4     (the patient chosen at 'sources login --smart')
              hreader import --server https://rhex.example.org --kind rhex --patient 4f4e9fcb
              hreader import --file everything.json
              hreader import --file bulk-export/          (a directory: every .json, .ndjson, .xml, .ccd, .cda in it)
              hreader import --file summary.ccd --as me   (a C-CDA CCD, a discharge summary, a HITSP C32, …)
              hreader import --file labs.ndjson --patient 1
              hreader import --file vaccination.smart-health-card   (SMART Health Cards, verified; also shc:/ QR text)
              hreader import --link 'shlink:/eyJ1cmwiOi…'             (a SMART Health Link, or a viewer URL ending in #shlink:/…)
              hreader import --link "$(cat link.txt)" --passcode-file passcode.txt
              hreader import --apple-health export.zip --as me
              hreader import --apple-health export.zip --patient 2
              hreader import --file export.zip --as me              (the same: an Apple Health export is recognised)
              hreader import --file activity.fit --as me            (Garmin FIT files: a file, a folder, Garmin's export zip)
              hreader import --file "Health Connect.zip" --as me    (an Android Health Connect export)
              hreader import --file takeout.zip --as me             (Fitbit's data from Google Takeout)
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var network: NetworkOptions
    @Option(help: ArgumentHelp("Import from this server's base URL.", valueName: "url")) var server: String?
    @Option(help: "fhir or rhex (default: the stored source's kind, else found by asking the server).") var kind: ServerKind?
    @Flag(help: "Import every patient the server holds.") var all = false
    @Option(help: ArgumentHelp("The file (or directory of FHIR files and clinical documents, or FIT files) to import.", valueName: "path")) var file: String?
    @Option(help: ArgumentHelp("A SMART Health Link to import: shlink:/… or a viewer URL ending in #shlink:/….", valueName: "link"))
    var link: String?
    @Option(help: ArgumentHelp("With --link: a file holding the link's passcode (flag P).", valueName: "file"))
    var passcodeFile: String?
    @Option(help: ArgumentHelp("An Apple Health export (export.zip or export.xml) to import, streamed.", valueName: "file"))
    var appleHealth: String?
    @Option(help: "With --server: a remote patient id (repeatable; default: the patient chosen at a SMART login). With --file: the local patient (id or uuid) the file is about; a resource about anyone else refuses the import.")
    var patient: [String] = []
    @Option(name: .customLong("as"), help: "Relationship of new patients to you.") var relationship: Relationship?
    @Option(help: ArgumentHelp("With --server: a file holding a bearer token (stored in the vault for later syncs).", valueName: "file"))
    var tokenFile: String?
    @Flag(help: "With --file or --link: import SMART Health Cards whose issuer's keys cannot be had, marked unverified (a card that fails its check is still refused).")
    var unverified = false

    /// An Apple Health export goes to one person: `--patient P` or `--as me`, not both, nothing else
    /// (for `--apple-health`, and for an export `--file` recognises).
    var namesOneAppleHealthPerson: Bool {
        (patient.count == 1) != (relationship == .me) && patient.count <= 1 && (relationship == nil || relationship == .me)
    }

    func validate() throws {
        guard [server, file, appleHealth, link].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give one of --server URL, --file FILE, --link LINK or --apple-health FILE")
        }
        if passcodeFile != nil, link == nil { throw ValidationError("--passcode-file goes with --link") }
        if appleHealth != nil {
            guard namesOneAppleHealthPerson else {
                throw ValidationError("with --apple-health give --patient P (a local patient) or --as me")
            }
            guard !all, tokenFile == nil, kind == nil else { throw ValidationError("--all, --kind and --token-file go with --server") }
        } else if server != nil {
            guard !(all && !patient.isEmpty) else { throw ValidationError("give --all or --patient REMOTE_ID, not both") }
        } else {
            guard !all, tokenFile == nil, kind == nil else { throw ValidationError("--all, --kind and --token-file go with --server") }
            guard patient.count <= 1 else { throw ValidationError("with --file or --link, --patient names one local patient") }
        }
        if unverified, file == nil, link == nil {
            throw ValidationError("--unverified goes with --file or --link (SMART Health Cards)")
        }
    }

    func run() async throws {
        if let server { try await importServer(server) } else if let file { try importFile(file) } else if let appleHealth {
            try importAppleHealth(appleHealth)
        } else if let link {
            try importLink(link)
        }
    }

    private func importAppleHealth(_ path: String) throws {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw HReaderError.usage("cannot read \(path)") }
        let open = try global.open()
        let target = try patient.first.map { try open.patient($0) }
        let progress = ProgressLine(global: global)
        defer { progress.finish() }
        let result = try open.importAppleHealth(url, into: target) { progress.update("importing \(url.lastPathComponent): \($0)") }
        progress.finish()
        if global.json {
            print(JSONValue.object([("import", .object([("apple_health", .string(url.path))])), ("apple_health", result.jsonValue)])
                .serialized(pretty: true))
            return
        }
        let s = result.imports
        let records = result.recordsByType.values.reduce(0, +)
        print("Imported \(url.lastPathComponent) (\(result.member)): \(records) records, \(result.correlations) correlations, "
              + "\(result.workouts) workouts, \(result.activitySummaries) activity summaries, \(result.clinicalRecords) clinical records: "
              + "\(s.inserted) new entries, \(s.updated) updated, \(s.unchanged) unchanged.")
        if result.partOfCorrelation > 0 {
            print("  \(result.partOfCorrelation) blood-pressure records repeat a correlation's readings and were counted once")
        }
        for type in result.unknownTypes.keys.sorted() {
            print("  kept \(result.unknownTypes[type]!) \(type) sample(s) as observation entries (no mapping for the type)")
        }
        Self.printDetails(s)
    }

    private func importServer(_ text: String) async throws {
        let url = try ServerURL(text)
        try network.apply()
        let credential = try tokenFile.map { AuthMethod.bearer(token: try AuthOptions.secret($0, "--token-file")) }
        let open = try global.open()
        let progress = ProgressLine(global: global)
        defer { progress.finish() }
        let selection: RemotePatientSelection = all ? .all : patient.isEmpty ? .loggedIn : .ids(patient)
        let result = try await open.importFromServer(url, kind: kind, patients: selection, relationship: relationship,
                                                     credential: credential) { progress.update("importing \($0)") }
        progress.finish()
        let summary = result.summary
        for warning in summary.warnings { Terminal.warning(warning) }
        if global.json {
            print(JSONValue.object([("import", .object([("server", .string(url.description)), ("kind", .string(result.kind.rawValue)),
                                                        ("resources", .int(result.resources))])),
                                    ("summary", summary.jsonValue)]).serialized(pretty: true))
            return
        }
        let patients = summary.patientCount
        print("Imported \(patients) patient(s) from \(url) (\(result.kind.rawValue)) "
              + "(\(summary.patientsCreated) new, \(summary.patientsUpdated) updated): "
              + "\(summary.inserted) new entries, \(summary.updated) updated, \(summary.unchanged) unchanged, "
              + "\(summary.markedMissing) marked missing at the source.")
        Self.printDetails(summary)
    }

    private func importFile(_ path: String) throws {
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw HReaderError.usage("cannot read \(path)") }
        // An Apple Health export given as a file: imported as --apple-health would, with its rules.
        if let export = AppleHealthExportSource.export(at: url) {
            guard namesOneAppleHealthPerson else {
                throw HReaderError.usage("\(url.lastPathComponent) is an Apple Health export: give --patient P (a local patient) or --as me")
            }
            return try importAppleHealth(export.path)
        }
        let open = try global.open()
        let target = try patient.first.map { try open.patient($0) }
        let progress = ProgressLine(global: global)
        let (format, summary) = try open.importFile(url, into: target, relationship: relationship, unverifiedCards: unverified) {
            progress.update("importing \($0)")
        }
        progress.finish()
        if global.json {
            print(JSONValue.object([("import", .object([("file", .string(url.path)), ("format", .string(format))])),
                                    ("summary", summary.jsonValue)]).serialized(pretty: true))
            return
        }
        Self.printImported("\(url.lastPathComponent) (\(format))", summary)
    }

    /// "Imported WHAT: N patient(s) (…), N new entries, …", then the details.
    static func printImported(_ what: String, _ summary: ImportSummary) {
        print("Imported \(what): \(summary.patientCount) patient(s) "
              + "(\(summary.patientsCreated) new, \(summary.patientsUpdated) updated, \(summary.patientsMatched) already in the vault), "
              + "\(summary.inserted) new entries, \(summary.updated) updated, \(summary.unchanged) unchanged.")
        printDetails(summary)
    }

    private func importLink(_ text: String) throws {
        let passcode = try passcodeFile.map { try AuthOptions.secret($0, "--passcode-file") }
        try network.apply()
        let open = try global.open()
        let target = try patient.first.map { try open.patient($0) }
        let progress = ProgressLine(global: global)
        let (format, summary) = try open.importLink(text, passcode: passcode, into: target, relationship: relationship, unverifiedCards: unverified) {
            progress.update("importing: \($0)")
        }
        progress.finish()
        if global.json {
            print(JSONValue.object([("import", .object([("link", .bool(true)), ("format", .string(format))])),
                                    ("summary", summary.jsonValue)]).serialized(pretty: true))
            return
        }
        Self.printImported("a \(format)", summary)
    }

    static func printDetails(_ summary: ImportSummary) {
        for note in summary.notes { print("  \(note)") }
        if !summary.byType.isEmpty {
            print("  by type: " + summary.byType.keys.sorted().map { "\($0) \(summary.byType[$0]!)" }.joined(separator: ", "))
        }
        for type in summary.keptUnmapped.keys.sorted() {
            print("  kept \(summary.keptUnmapped[type]!) \(type) resource(s) as observation entries (no mapping for the type; raw kept)")
        }
        for reason in summary.skipped.keys.sorted() {
            print("  skipped \(summary.skipped[reason]!): \(reason)")
        }
        let documents = summary.documents
        if documents.stored + documents.unchanged + documents.failed + documents.referenced.values.reduce(0, +) > 0 {
            print("  documents: \(documents.stored) stored (\(documents.bytes) bytes), \(documents.unchanged) unchanged, "
                  + "\(documents.failed) failed (tried again at the next sync)")
            for reason in documents.referenced.keys.sorted() {
                print("  kept \(documents.referenced[reason]!) document(s) as references: \(reason)")
            }
            for failure in documents.failures { print("  document not fetched: \(failure)") }
            if documents.extracted + documents.queued > 0 {
                print("  text of PDFs and images: \(documents.extracted) read" + (documents.queued > 0
                    ? ", \(documents.queued) waiting (HREADER_DOCUMENTS_EXTRACT_PER_IMPORT; 'hreader documents reindex' reads them)" : ""))
            }
        }
        if summary.filedFromWaiting > 0 {
            print("  filed \(summary.filedFromWaiting) resource(s) that were waiting for their patient")
        }
        for subject in summary.waiting.keys.sorted() {
            print("  \(summary.waiting[subject]!) resource(s) about \(subject) wait in the vault until that patient is imported")
        }
    }
}
