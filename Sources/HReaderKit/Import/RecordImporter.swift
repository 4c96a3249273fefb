import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// What an import did, for the summary line and `--json`.
public struct ImportSummary: Sendable {
    public var patientsCreated = 0
    public var patientsUpdated = 0
    public var patientsUnchanged = 0
    /// Patients already in the vault whose records this import added to: named by `--patient`, found
    /// by a resource's subject, or described by the source but first seen elsewhere (found by an
    /// identifier or id; their demographics are kept).
    public var patientsMatched = 0
    /// Every patient the import wrote to, however it was found.
    public var patientCount: Int { patientsCreated + patientsUpdated + patientsUnchanged + patientsMatched }
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
    /// Resources whose patient is not in the vault yet, by who they wait for: kept in the vault and
    /// filed when an import brings that patient.
    public var waiting: [String: Int] = [:]
    /// Resources that had been waiting and were filed under their patient by this import.
    public var filedFromWaiting = 0
    /// What the import wants the user to know once (a server without `$everything`, …).
    public var notes: [String] = []
    /// What servers returned that was not about the patient asked for, per request: left out,
    /// never filed under anyone.
    public var rejected: [FHIRRejectedResources] = []
    /// The sources' faults the user must see even when the import goes on, each named once (for stderr).
    public var warnings: [String] { FHIRRejectedResources.warnings(rejected) }
    public var patientIDs: [Int64] = []
    /// Attachments kept as documents (issue 26): stored, unchanged, failed (tried again at the next
    /// sync), kept as references.
    public var documents = DocumentImportCounts()

    public var jsonValue: JSONValue {
        .object([
            ("patients", .object([("created", .int(patientsCreated)), ("updated", .int(patientsUpdated)),
                                  ("unchanged", .int(patientsUnchanged)), ("matched", .int(patientsMatched)),
                                  ("ids", .array(patientIDs.map { .int($0) }))])),
            ("entries", .object([("inserted", .int(inserted)), ("updated", .int(updated)),
                                 ("unchanged", .int(unchanged)), ("marked_missing", .int(markedMissing)),
                                 ("by_type", .object(JSONObject(sortingKeysOf: byType, JSONValue.int)))])),
            ("skipped", .object(JSONObject(sortingKeysOf: skipped, JSONValue.int))),
            ("kept_unmapped", .object(JSONObject(sortingKeysOf: keptUnmapped, JSONValue.int))),
            ("waiting", .object(JSONObject(sortingKeysOf: waiting, JSONValue.int))),
            ("filed_from_waiting", .int(filedFromWaiting)),
            ("documents", .object([("stored", .int(documents.stored)), ("unchanged", .int(documents.unchanged)),
                                   ("failed", .int(documents.failed)), ("bytes", .int(Int(documents.bytes))),
                                   ("referenced", .object(JSONObject(sortingKeysOf: documents.referenced, JSONValue.int))),
                                   ("failures", .array(documents.failures.map { .string($0) })),
                                   ("extracted", .int(documents.extracted)), ("queued", .int(documents.queued))])),
            ("notes", .array(notes.map { .string($0) })),
            ("warnings", .array(warnings.map { .string($0) })),
            ("rejected", .array(rejected.map { rejected in
                .object([("request", .string(rejected.request)), ("about_other_patients", .int(rejected.aboutOthers)),
                         ("unchecked", .object(JSONObject(sortingKeysOf: rejected.unchecked, JSONValue.int)))])
            })),
        ])
    }
}

/// Stores mapped records in the vault: one transaction per patient, updating in place by
/// (source, remote id) and keeping the user's own fields, so a failure or a kill leaves earlier
/// patients complete and the failing one untouched, and a re-run finishes with no duplicates.
/// Who each record is about is decided by `PatientMatcher`, inside the same transaction.
struct RecordImporter {
    let vault: OpenVault
    let sourceID: Int64
    /// Where the source's relative `Patient/<id>` references point: a server's base URL, or `file`.
    let scope: String
    /// A full snapshot of each patient's record (a server's record, not a partial file): entries the
    /// source no longer has are marked missing (never deleted).
    let isSnapshot: Bool
    /// The one file source of earlier versions ("Imported files"), whose entries this source takes
    /// over when it states them again (`FileSources`).
    var takingOverFrom: Int64? = nil
    /// How the SMART Health Card behind each input was checked (`MappedEntry.input` → verification):
    /// kept with every entry of that input.
    var verifications: [Int: EntryVerification] = [:]

    /// Whose record a batch of entries is.
    enum Owner {
        /// The patient the source describes: found in the vault by `PatientMatcher`, or created.
        case described(MappedPatient)
        /// A patient already in the vault, and identities the input names them by (`import --file F
        /// --patient P`: the file's Patient, or the one reference its resources share).
        case existing(Patient, aliases: [PatientIdentityRepository.Identity])
    }

    /// One patient's entries from one source, stored in one transaction.
    struct Batch {
        var owner: Owner
        var entries: [MappedEntry]
        var skipped: [Skip]

        init(owner: Owner, entries: [MappedEntry], skipped: [Skip] = []) {
            self.owner = owner; self.entries = entries; self.skipped = skipped
        }

        init(_ record: MappedRecord) {
            self.init(owner: .described(record.patient), entries: record.entries, skipped: record.skipped)
        }
    }

    var matcher: PatientMatcher { PatientMatcher(db: vault.db, sourceID: sourceID, scope: scope) }

    /// Who a batch was filed under: the person it is shown under (the record's own patient, or the
    /// one it was merged into) and the source's record of them (the patient row whose source stated
    /// it, which an unmerge gives it back to).
    struct Filed: Equatable {
        let person: Int64
        let record: Int64
    }

    /// Who the batch was filed under; nil when it was not stored (an ambiguous patient).
    @discardableResult
    func store(_ batch: Batch, relationship: Relationship?, summary: inout ImportSummary) throws -> Filed? {
        // 16 MiB of page cache: a 12,000-entry C-CDA stores 50 ms faster (of 190) for 16 MB more
        // resident; 32 MiB gained 10 ms more.
        // In the vault's door throughout, so no other thread's use meets the larger cache or comes between.
        try vault.exclusively {
            try vault.db.withPageCache(kibibytes: 16 << 10) { try storeInTransaction(batch, relationship: relationship, summary: &summary) }
        }
    }

    private func storeInTransaction(_ batch: Batch, relationship: Relationship?, summary: inout ImportSummary) throws -> Filed? {
        try vault.write { () -> Filed? in
            let identities = vault.identities
            let patient: Patient
            switch batch.owner {
            case let .existing(existing, aliases):
                patient = existing
                if !summary.patientIDs.contains(patient.personID) { summary.patientsMatched += 1 }
                for alias in aliases { try identities.add(alias, patientID: patient.id) }
            case let .described(described):
                var notes: [String] = []
                let match = try matcher.match(described, notes: &notes)
                for note in notes where !summary.notes.contains(note) { summary.notes.append(note) }
                switch match {
                case let .ambiguous(reason):
                    summary.skipped["a Patient not imported: \(reason); nothing was filed under anyone", default: 0] += 1
                    summary.skipped["a resource of that Patient not imported", default: 0] += batch.entries.count
                    return nil
                case let .found(found) where found.sourceID != sourceID || found.remoteID != described.remoteID:
                    // First seen elsewhere: the records join them, their demographics stay as they are.
                    patient = found
                    summary.patientsMatched += 1
                case let .found(found):
                    patient = try upsert(described, remoteID: found.remoteID, relationship: relationship, summary: &summary)
                case let .new(remoteID):
                    patient = try upsert(described, remoteID: remoteID, relationship: relationship, summary: &summary)
                }
                for identity in matcher.identities(of: described) { try identities.add(identity, patientID: patient.id) }
            }
            // `patient` is the source's record; what it states is shown under its person (the record
            // itself, or the person it was merged into: `patients merge`).
            let person = patient.personID
            if !summary.patientIDs.contains(person) { summary.patientIDs.append(person) }
            // What this batch added or changed: the groups those entries can change are recomputed.
            var touched: Set<Int64> = []
            // Kept earlier while its patient was unknown (only files wait), and now filed: it waits no more.
            let takesBackWaiting = try scope == PatientMatcher.fileScope && !vault.pending.isEmpty(sourceID: sourceID)
            // The batch's new entries are indexed for search in one statement at its end.
            try SearchRepository(vault.db).deferringIndex {
                for entry in batch.entries {
                    try store(entry, sourceID: sourceID, record: patient, takingBackWaiting: takesBackWaiting, summary: &summary, touched: &touched)
                }
            }
            if isSnapshot {
                let marked = try vault.entries.markMissingEntries(recordID: patient.id, sourceID: sourceID, keeping: Set(batch.entries.map(\.remoteID)))
                summary.markedMissing += marked.count
                touched.formUnion(marked)
            }
            for skip in batch.skipped { summary.skipped[skip.reason, default: 0] += 1 }
            try fileWaiting(for: patient, summary: &summary, touched: &touched)
            // A re-import or sync that changed nothing leaves the groups as they are.
            try FactGrouping(vault.db).regroup(patientID: person, touched: touched)
            try vault.audit.record("import", subject: patient.uuid,
                                   detail: "source \(sourceID): \(batch.entries.count) entries, \(batch.skipped.count) skipped")
            return Filed(person: person, record: patient.id)
        }
    }

    private func upsert(_ described: MappedPatient, remoteID: String, relationship: Relationship?,
                        summary: inout ImportSummary) throws -> Patient {
        var content = described.content
        if let relationship { content.relationship = relationship }
        let (stored, outcome) = try vault.patients.upsert(sourceID: sourceID, remoteID: remoteID, content)
        switch outcome {
        case .inserted: summary.patientsCreated += 1
        case .updated: summary.patientsUpdated += 1
        case .unchanged: summary.patientsUnchanged += 1
        }
        return stored
    }

    private func store(_ entry: MappedEntry, sourceID: Int64, record: Patient, takingBackWaiting: Bool,
                       summary: inout ImportSummary, touched: inout Set<Int64>) throws {
        // Taken over from the one file source of earlier versions: its source (and so its record) changed.
        var moved = false
        if let legacy = takingOverFrom, legacy != sourceID {
            moved = try vault.entries.move(recordID: record.id, remoteID: entry.remoteID, from: legacy, to: sourceID)
        }
        let stored = try vault.entries.upsertEntry(patientID: record.personID, recordID: record.id, sourceID: sourceID,
                                                   remoteID: entry.remoteID, content: entry.content)
        if moved { touched.insert(stored.id) }
        if let verification = verifications[entry.input] {
            try HealthCardRepository(vault.db).setVerification(verification, entryID: stored.id)
        }
        switch stored.outcome {
        case .inserted: summary.inserted += 1; touched.insert(stored.id)
        case .updated: summary.updated += 1; touched.insert(stored.id)
        case .unchanged: summary.unchanged += 1
        }
        summary.byType[entry.content.type.rawValue, default: 0] += 1
        if let type = entry.unmappedType { summary.keptUnmapped[type, default: 0] += 1 }
        if takingBackWaiting { try vault.pending.remove(sourceID: sourceID, remoteID: entry.remoteID) }
    }

    /// Files the resources that were waiting for one of this patient's identities (imported
    /// before the patient was): the same transaction, so they are filed once or not at all.
    private func fileWaiting(for patient: Patient, summary: inout ImportSummary, touched: inout Set<Int64>) throws {
        for identity in try vault.identities.identities(of: patient.id) {
            for pending in try vault.pending.waiting(for: identity) {
                let batch = try? FHIRMapper().mapBundle(Data(pending.raw.utf8))
                if let entry = batch?.unattached.first?.entry ?? batch?.records.first?.entries.first {
                    try store(entry, sourceID: pending.sourceID, record: patient, takingBackWaiting: false, summary: &summary, touched: &touched)
                    summary.filedFromWaiting += 1
                }
                try vault.pending.remove(id: pending.id)
            }
        }
    }

    /// Keeps resources whose patient is not in the vault yet, until an import brings them.
    func park(_ entries: [MappedEntry], waitingFor identity: PatientIdentityRepository.Identity, summary: inout ImportSummary) throws {
        try vault.write {
            let now = RFC3339.utc(Int64(Date().timeIntervalSince1970))
            for entry in entries {
                guard let raw = entry.content.raw else { continue }
                try vault.pending.park(sourceID: sourceID, remoteID: entry.remoteID, waitingFor: identity, raw: raw, now: now)
            }
        }
        summary.waiting[identity.description, default: 0] += entries.count
    }
}
