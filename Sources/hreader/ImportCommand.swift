import ArgumentParser
import Foundation
import HReaderKit
import HReaderStore

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import records from a file: a FHIR R4 Bundle or resource (JSON), FHIR NDJSON, or an RHEx c32 record.",
        discussion: """
            The format is told by content. Patients are created or updated by the id the file gives them;
            entries are updated in place on a re-import of the same file, and your own comments and
            strike-throughs are kept. Each patient is stored in one transaction.
              hreader import --file everything.json
              hreader import --file labs.ndjson --patient 1
            Importing from servers (--server) is planned; see docs/cli.md.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: ArgumentHelp("The file to import.", valueName: "file")) var file: String
    @Option(help: "Put every entry under this local patient (id or uuid).") var patient: String?
    @Option(name: .customLong("as"), help: "Relationship of new patients to you.") var relationship: Relationship?

    func run() throws {
        let url = URL(fileURLWithPath: file)
        guard FileManager.default.isReadableFile(atPath: url.path) else { throw HReaderError.usage("cannot read \(file)") }
        let open = try global.open()
        let target = try patient.map { try open.patient($0) }
        let showProgress = !global.quiet && !global.json && isatty(STDERR_FILENO) == 1
        let (format, summary) = try open.importFile(url, into: target, relationship: relationship) { message in
            if showProgress { Terminal.note("importing \(message)") }
        }
        if global.json {
            print(JSONValue.object([("import", .object([("file", .string(url.path)), ("format", .string(format.rawValue))])),
                                    ("summary", summary.jsonValue)]).serialized(pretty: true))
            return
        }
        let patients = summary.patientsCreated + summary.patientsUpdated + summary.patientsUnchanged
        print("Imported \(url.lastPathComponent) (\(format.rawValue)): \(patients) patient(s) "
              + "(\(summary.patientsCreated) new, \(summary.patientsUpdated) updated), "
              + "\(summary.inserted) new entries, \(summary.updated) updated, \(summary.unchanged) unchanged.")
        if !summary.byType.isEmpty {
            print("  by type: " + summary.byType.keys.sorted().map { "\($0) \(summary.byType[$0]!)" }.joined(separator: ", "))
        }
        for reason in summary.skipped.keys.sorted() {
            print("  skipped \(summary.skipped[reason]!): \(reason)")
        }
    }
}
