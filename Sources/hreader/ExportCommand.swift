import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderRecords

extension ExportGrouping: ExpressibleByArgument {}

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Send a patient's measurements to a FHIR R4 server as Observations, or write them to a file.",
        discussion: """
            Vital signs, activity and results that carry a LOINC code (not struck through) become FHIR \
            Observations. On a server the patient is found by hreader's identifier (urn:hreader:patient|<uuid>) \
            or created; Observations go the way the server's CapabilityStatement allows (transaction or batch \
            Bundles of conditional creates, conditional creates, or lookups then creates), so exporting again \
            creates nothing new and an interrupted export is finished by running it again. With --out, one \
            transaction Bundle (the Patient included) is written to a file instead. See docs/export.md.

              hreader export --patient 1 --server https://fhir.example.org/r4
              hreader export --patient 1 --server https://fhir.example.org/r4 --since 2026-01-01 --group day
              hreader export --patient 1 --out bundle.json --types vital_sign
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var network: NetworkOptions
    @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
    @Option(help: ArgumentHelp("Send to this FHIR server's base URL.", valueName: "url")) var server: String?
    @Option(help: ArgumentHelp("Write one transaction Bundle to this file (mode 0600) instead.", valueName: "file")) var out: String?
    @Option(help: ArgumentHelp("Only entries at or after this time (RFC 3339, or a date at local midnight).", valueName: "time"))
    var since: TimeArgument?
    @Option(help: ArgumentHelp("Entry types, comma-separated (default vital_sign,activity,result; also symptom, observation).",
                               valueName: "types"))
    var types: String?
    @Option(help: "Sum steps and energy per local hour or day: none, hour or day.") var group: ExportGrouping = .none
    @Option(help: ArgumentHelp("Observations per transaction Bundle.", valueName: "n")) var batchSize: Int = 100
    @Flag(help: "Also the patient's documents, as DocumentReferences with their bytes inline (into --out, or created on --server once each).")
    var withDocuments = false

    func validate() throws {
        guard (server == nil) != (out == nil) else { throw ValidationError("give one of --server URL or --out FILE") }
        guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be between 1 and 10000") }
    }

    func run() async throws {
        let options = ExportOptions(types: try chosenTypes(), since: since?.time, grouping: group, batchSize: batchSize,
                                    withDocuments: withDocuments)
        let destination: ExportDestination
        if let server {
            destination = .server(try ServerURL(server))
            try network.apply()
        } else {
            destination = .file(URL(fileURLWithPath: out!))
        }
        let open = try global.open()
        let chosen = try open.patient(patient)
        let progress = ProgressLine(global: global)
        let summary: ExportSummary
        do {
            summary = try await open.export(patient: chosen, to: destination, options: options) { progress.update($0) }
        } catch {
            progress.finish()
            throw error
        }
        progress.finish()
        if global.json {
            Output.json(["export": .object(json(summary, patient: chosen))])
            return
        }
        switch destination {
        case .server:
            print("Exported \(summary.observations) observations for \(chosen.displayName) to \(summary.destination): "
                  + "\(summary.created) created, \(summary.existing) already there")
            if withDocuments {
                print("  \(summary.documents) documents: \(summary.documentsCreated) created, \(summary.documentsExisting) already there")
            }
            if let mode = summary.mode { print("  mode: \(mode.rawValue) (\(mode.description))") }
            for note in summary.notes { print("  \(note)") }
        case .file:
            print("Wrote \(summary.observations) observations" + (withDocuments ? " and \(summary.documents) documents" : "")
                  + " to \(summary.destination)")
        }
        if summary.groupedEntries > 0 {
            print("  from \(summary.entries) entries (\(summary.groupedEntries) summed per \(group.rawValue))")
        }
        if !summary.skipped.isEmpty {
            print("  not exported: " + summary.skipped.keys.sorted().map { "\(summary.skipped[$0]!) \($0)" }.joined(separator: ", "))
        }
    }

    private func chosenTypes() throws -> Set<EntryType> {
        guard let types else { return ExportOptions.defaultTypes }
        var chosen: Set<EntryType> = []
        for name in types.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let type = EntryType(rawValue: name), ExportOptions.exportableTypes.contains(type) else {
                throw HReaderError.usage("--types takes \(ExportOptions.exportableTypes.map(\.rawValue).joined(separator: ", ")); got '\(name)'")
            }
            chosen.insert(type)
        }
        guard !chosen.isEmpty else { throw HReaderError.usage("--types names no entry type") }
        return chosen
    }

    private func json(_ summary: ExportSummary, patient: Patient) -> JSONObject {
        var object: JSONObject = [
            "patient": .string(patient.uuid),
            "observations": .int(summary.observations),
            "bundles": .int(summary.bundles),
            "entries": .int(summary.entries),
            "grouped_entries": .int(summary.groupedEntries),
            "group": .string(group.rawValue),
            "skipped": .object(JSONObject(sortingKeysOf: summary.skipped) { .int($0) }),
        ]
        if withDocuments {
            object["documents"] = .int(summary.documents)
            if server != nil {
                object["documents_created"] = .int(summary.documentsCreated)
                object["documents_existing"] = .int(summary.documentsExisting)
            }
        }
        if server != nil {
            object["server"] = .string(summary.destination)
            object["created"] = .int(summary.created)
            object["existing"] = .int(summary.existing)
            object["server_patient"] = .text(summary.serverPatient)
            object["patient_created"] = .bool(summary.patientCreated)
            object["mode"] = .text(summary.mode?.rawValue)
            object["notes"] = .strings(summary.notes)
        } else {
            object["file"] = .string(summary.destination)
        }
        return object
    }
}
