import Foundation
import HReaderRecords
import HReaderStore

/// What an import did, for the summary line and `--json`.
public struct ImportSummary: Sendable {
    public var patientsCreated = 0
    public var patientsUpdated = 0
    public var patientsUnchanged = 0
    public var inserted = 0
    public var updated = 0
    public var unchanged = 0
    public var markedMissing = 0
    /// Entries stored (inserted or updated or unchanged), by entry type.
    public var byType: [String: Int] = [:]
    /// Reasons for what was not imported, with counts.
    public var skipped: [String: Int] = [:]
    /// Resources of types without a mapping, kept as observation entries (raw kept), with counts.
    public var keptUnmapped: [String: Int] = [:]
    public var patientIDs: [Int64] = []

    public var jsonValue: JSONValue {
        .object([
            ("patients", .object([("created", .number(Double(patientsCreated))), ("updated", .number(Double(patientsUpdated))),
                                  ("unchanged", .number(Double(patientsUnchanged))),
                                  ("ids", .array(patientIDs.map { .number(Double($0)) }))])),
            ("entries", .object([("inserted", .number(Double(inserted))), ("updated", .number(Double(updated))),
                                 ("unchanged", .number(Double(unchanged))), ("marked_missing", .number(Double(markedMissing))),
                                 ("by_type", .object(byType.keys.sorted().map { ($0, .number(Double(byType[$0]!))) }))])),
            ("skipped", .object(skipped.keys.sorted().map { ($0, .number(Double(skipped[$0]!))) })),
            ("kept_unmapped", .object(keptUnmapped.keys.sorted().map { ($0, .number(Double(keptUnmapped[$0]!))) })),
        ])
    }
}

/// Stores mapped records in the vault: one transaction per patient, updating in place by
/// (source, remote id) and keeping the user's own fields, so a failure or a kill leaves earlier
/// patients complete and the failing one untouched, and a re-run finishes with no duplicates.
struct RecordImporter {
    let vault: OpenVault
    let sourceID: Int64
    /// A full snapshot of each patient's record (a server's record, not a partial file): entries the
    /// source no longer has are marked missing (never deleted).
    let isSnapshot: Bool

    /// Whose record a batch of entries is.
    enum Owner {
        /// The patient the source describes: created or updated by its remote id.
        case described(MappedPatient)
        /// A patient already in the vault (`import --file F --patient P`).
        case existing(Patient)
    }

    /// One patient's entries from one source, stored in one transaction.
    struct Batch {
        var owner: Owner
        var entries: [MappedEntry]
        var skipped: [Skip]
        var keptUnmapped: [Skip] = []

        init(owner: Owner, entries: [MappedEntry], skipped: [Skip], keptUnmapped: [Skip] = []) {
            self.owner = owner; self.entries = entries; self.skipped = skipped; self.keptUnmapped = keptUnmapped
        }

        init(_ record: MappedRecord) {
            self.init(owner: .described(record.patient), entries: record.entries, skipped: record.skipped, keptUnmapped: record.keptUnmapped)
        }
    }

    func store(_ batch: Batch, relationship: Relationship?, summary: inout ImportSummary) throws {
        try vault.write {
            let patient: Patient
            switch batch.owner {
            case let .existing(existing):
                patient = existing
            case let .described(described):
                var content = described.content
                if let relationship { content.relationship = relationship }
                let (stored, outcome) = try vault.patients.upsert(sourceID: sourceID, remoteID: described.remoteID, content)
                patient = stored
                switch outcome {
                case .inserted: summary.patientsCreated += 1
                case .updated: summary.patientsUpdated += 1
                case .unchanged: summary.patientsUnchanged += 1
                }
            }
            if !summary.patientIDs.contains(patient.id) { summary.patientIDs.append(patient.id) }
            for entry in batch.entries {
                switch try vault.entries.upsert(patientID: patient.id, sourceID: sourceID, remoteID: entry.remoteID, content: entry.content) {
                case .inserted: summary.inserted += 1
                case .updated: summary.updated += 1
                case .unchanged: summary.unchanged += 1
                }
                summary.byType[entry.content.type.rawValue, default: 0] += 1
            }
            if isSnapshot {
                summary.markedMissing += try vault.entries.markMissing(patientID: patient.id, sourceID: sourceID,
                                                                       keeping: Set(batch.entries.map(\.remoteID)))
            }
            for skip in batch.skipped { summary.skipped[skip.reason, default: 0] += 1 }
            for kept in batch.keptUnmapped { summary.keptUnmapped[kept.kind, default: 0] += 1 }
            try vault.audit.record("import", subject: patient.uuid,
                                   detail: "source \(sourceID): \(batch.entries.count) entries, \(batch.skipped.count) skipped")
        }
    }
}

/// The formats `hreader import --file` reads, told apart by content.
public enum RecordFileFormat: String, Sendable {
    case fhirJSON = "FHIR JSON"
    case fhirNDJSON = "FHIR NDJSON"
    case rhex = "RHEx c32 JSON"

    /// NDJSON when several lines each hold a resource; a FHIR resource or Bundle when the document
    /// has a `resourceType`; else an RHEx/hData c32 record.
    static func detect(_ data: Data) throws -> RecordFileFormat {
        let lines = data.split(separator: 0x0a, omittingEmptySubsequences: true)
            .filter { !$0.allSatisfy { $0 == 0x20 || $0 == 0x0d || $0 == 0x09 } }
        if lines.count > 1, let first = lines.first,
           let object = try? JSONSerialization.jsonObject(with: Data(first)) as? [String: Any], object["resourceType"] != nil {
            return .fhirNDJSON
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw HReaderError.badInput("the file is not a JSON object, FHIR NDJSON or an RHEx record")
        }
        return object["resourceType"] != nil ? .fhirJSON : .rhex
    }
}

extension OpenVault {
    /// Imports a FHIR Bundle / resource / NDJSON file or an RHEx c32 JSON record. With `patient`, every
    /// entry goes to that local patient (the file may describe at most one patient). The file is
    /// mapped whole before anything is written: bad input writes nothing.
    public func importFile(_ url: URL, into patient: Patient? = nil, relationship: Relationship? = nil,
                           progress: (String) -> Void = { _ in }) throws -> (format: RecordFileFormat, summary: ImportSummary) {
        let data: Data
        do {
            data = try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw HReaderError.usage("cannot read \(url.path)")
        }
        let format: RecordFileFormat
        do {
            format = try RecordFileFormat.detect(data)
        } catch {
            // The record parser says where the JSON breaks (line and column); Foundation's would not.
            do { _ = try FHIRMapper().mapBundle(data) } catch let e as RecordsError {
                throw HReaderError.badInput("\(url.lastPathComponent): \(e.description)")
            }
            throw HReaderError.badInput("\(url.lastPathComponent): not a JSON object, FHIR NDJSON or an RHEx record")
        }
        var records: [MappedRecord]
        var unattached: [MappedEntry] = []
        var keptLoose: [Skip] = []   // unmapped-type resources among `unattached`
        var summary = ImportSummary()
        do {
            switch format {
            case .rhex:
                records = [try RHExMapper().map(data)]
            case .fhirJSON, .fhirNDJSON:
                let batch = format == .fhirJSON ? try FHIRMapper().mapBundle(data) : try FHIRMapper().mapNDJSON(data)
                records = batch.records
                unattached = batch.unattached.map(\.entry)
                keptLoose = batch.keptUnmapped
                for skip in batch.skipped { summary.skipped[skip.reason, default: 0] += 1 }
            for kept in batch.keptUnmapped { summary.keptUnmapped[kept.kind, default: 0] += 1 }
            }
        } catch let error as RecordsError {
            throw HReaderError.badInput("\(url.lastPathComponent): \(error.description)")
        }

        // Group into one batch per patient. Entries that name no patient of the file belong to --patient,
        // or to the file's only patient; otherwise there is no one to give them to.
        var batches: [RecordImporter.Batch]
        if let patient {
            guard records.count <= 1 else {
                throw HReaderError.usage("\(url.lastPathComponent) holds \(records.count) patients; --patient takes a file about one")
            }
            batches = [RecordImporter.Batch(owner: .existing(patient), entries: (records.first?.entries ?? []) + unattached,
                                            skipped: records.first?.skipped ?? [], keptUnmapped: (records.first?.keptUnmapped ?? []) + keptLoose)]
        } else {
            batches = records.map { RecordImporter.Batch($0) }
            if !unattached.isEmpty {
                if batches.count == 1 {
                    batches[0].entries += unattached
                    batches[0].keptUnmapped += keptLoose
                } else {
                    summary.skipped["no Patient in the file for its subject (use --patient)", default: 0] += unattached.count
                }
            }
        }

        let sourceID = try write {
            try SourceRepository(db).findOrCreate(kind: .file, baseURL: "file://" + url.standardizedFileURL.path,
                                                  displayName: url.lastPathComponent, now: RFC3339.utc(Int64(Date().timeIntervalSince1970)))
        }
        let importer = RecordImporter(vault: self, sourceID: sourceID, isSnapshot: false)
        for (index, batch) in batches.enumerated() {
            progress("patient \(index + 1) of \(batches.count): \(batch.entries.count) entries")
            try importer.store(batch, relationship: relationship, summary: &summary)
        }
        return (format, summary)
    }
}
