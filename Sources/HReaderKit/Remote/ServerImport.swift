import Foundation
import HReaderModel
import HReaderNet
import HReaderRecords
import HReaderStore

/// One remote patient's record, fetched and mapped, ready to store.
struct FetchedRecord: Sendable {
    var sourceID: Int64
    var remoteID: String
    var record: MappedRecord
    var resources: Int
    /// How the record was read (FHIR: `$everything` or per-type searches; nil for RHEx).
    var strategy: FHIRFetchStrategy?
    /// For the summary, once per import: the strategy in words, types passed over, server warnings.
    var notes: [String] = []
    /// Per request, what the server returned that was not about this patient (left out).
    var rejected: [FHIRRejectedResources] = []
}

/// What `sync` did: the import summary plus the patients that failed (the others are complete).
public struct SyncSummary: Sendable {
    public var imports = ImportSummary()
    public var sources = 0
    public var failures: [(patient: String, message: String, exitCode: Int32)] = []
}

extension SourceConnection {
    /// The whole record of one remote patient, mapped; nothing is stored here.
    func fetch(remoteID: String, sourceID: Int64) async throws -> FetchedRecord {
        switch kind {
        case .fhir:
            let fetched = try await fhir().everything(patientID: remoteID)
            let batch = fetched.batch
            guard var record = batch.records.first(where: { $0.patient.fhirID == remoteID }) else {
                if let other = batch.records.first {
                    throw HReaderError(.network, "the server answered the request for Patient/\(remoteID) with Patient \(other.patient.remoteID); "
                                       + "nothing was imported")
                }
                throw HReaderError.badInput("the server's record for patient \(remoteID) holds no Patient resource with that id")
            }
            // What is left was checked against the patient (FHIRPatientCheck): entries the mapper
            // could not attach (a reference by one of their identifiers) are this patient's too.
            record.entries += batch.unattached.map(\.entry)
            record.skipped += batch.skipped
            for other in batch.records where other.patient.remoteID != record.patient.remoteID {
                record.skipped.append(Skip(kind: "Patient", remoteID: other.patient.remoteID,
                                           reason: "another Patient in the record of \(remoteID) (linked or related)"))
            }
            if !fetched.rejected.isEmpty, record.entries.isEmpty {
                throw HReaderError(.network, FHIRRejectedResources.warnings(fetched.rejected).joined(separator: "; ")
                                   + "; nothing else the server returned is about patient \(remoteID), so nothing was imported for them")
            }
            return FetchedRecord(sourceID: sourceID, remoteID: remoteID, record: record, resources: fetched.resources,
                                 strategy: fetched.strategy, notes: fetched.notes, rejected: fetched.rejected)
        case .rhex:
            let client = try rhex()
            let (record, _) = try await client.record(id: remoteID)
            try await rhexRecords.admit(record, askedFor: remoteID, client: client, server: server)
            let count = record.entries.count + record.skipped.count + 1
            return FetchedRecord(sourceID: sourceID, remoteID: remoteID, record: record, resources: count)
        }
    }

    /// The remote ids of every patient the server holds.
    func allPatientIDs() async throws -> [String] {
        switch kind {
        case .fhir: return try await fhir().searchPatients([("_count", "100")]).records.map(\.patient.remoteID)
        case .rhex:
            let feed = try await rhex().patients()
            rhexRecords.use(feed: feed)
            return feed.map(\.id)
        }
    }
}

/// Which of a server's patients `import --server` fetches.
public enum RemotePatientSelection: Sendable, Equatable {
    /// Every patient the server lists (`--all`).
    case all
    /// These remote ids (`--patient`).
    case ids([String])
    /// The patient chosen at the SMART login to the server (neither option given).
    case loggedIn
}

extension OpenVault {
    /// `hreader import --server`: fetches each patient's whole record and stores it in one
    /// transaction per patient, in order. The first failure stops the import: earlier patients
    /// are complete, the failing one untouched, and a re-run finishes the job without duplicates.
    public func importFromServer(_ server: ServerURL, kind: ServerKind?, patients selection: RemotePatientSelection, relationship: Relationship?,
                                 credential: AuthMethod? = nil, progress: @escaping (String) -> Void = { _ in })
        async throws -> (kind: ServerKind, summary: ImportSummary, resources: Int) {
        var summary = ImportSummary()
        var resources = 0
        // Before anything is created: the patient chosen at the SMART login to this server.
        var loggedIn: String?
        if selection == .loggedIn {
            let stored = try read { try SourceRepository(db).stored(baseURL: server.description) }
                .filter { kind == nil || $0.kind == kind!.sourceKind }
            for source in stored where loggedIn == nil { loggedIn = try loginPatient(sourceID: source.id) }
            guard loggedIn != nil else {
                throw HReaderError.usage("with --server give --all or --patient REMOTE_ID: no patient was chosen at a login to \(server) "
                                         + "('hreader sources login --server \(server) --smart' logs in as one)")
            }
        }
        do {
            let connection = try await resolveConnection(server: server, kind: kind, create: true, override: credential)
            let sourceID = try read { try SourceRepository(db).stored(kind: connection.kind.sourceKind, baseURL: server.description)!.id }
            if connection.kind == .rhex { connection.rhexRecords.remember(try rhexIdentities(sourceID: sourceID)) }
            let ids: [String]
            switch selection {
            case .all: ids = try await connection.allPatientIDs()
            case let .ids(remoteIDs): ids = remoteIDs
            case .loggedIn: ids = [loggedIn!]
            }
            let importer = RecordImporter(vault: self, sourceID: sourceID, scope: server.description, isSnapshot: true)
            let documents = DocumentImporter(vault: self, sourceID: sourceID, limits: try DocumentLimits.fromEnvironment(),
                                             server: connection.kind == .fhir ? try connection.fhir() : nil,
                                             extractor: try textExtractor())
            var budget = documents.limits.perImport
            for (index, id) in ids.enumerated() {
                progress("patient \(index + 1) of \(ids.count) (\(id))")
                let fetched = try await connection.fetch(remoteID: id, sourceID: sourceID)
                resources += fetched.resources
                for note in fetched.notes where !summary.notes.contains(note) { summary.notes.append(note) }
                summary.rejected += fetched.rejected
                let filed = try importer.store(RecordImporter.Batch(fetched.record), relationship: relationship, summary: &summary)
                if let filed {
                    try await documents.run(entries: fetched.record.entries, filed: filed, counts: &summary.documents, budget: &budget)
                }
            }
            try write { try SourceRepository(db).touchLastSync(id: sourceID, now: Self.nowText()) }
            try readWaitingDocuments(&summary.documents, limits: documents.limits)
            return (connection.kind, summary, resources)
        } catch let error as NetError {
            throw HReaderError.from(network: error)
        }
    }

    /// `hreader sync`: re-imports every stored remote patient (or one), serial per host and parallel
    /// across hosts. Updates in place, keeps the user's fields, marks what the server no longer has.
    /// A failing patient is reported and the others go on; each patient commits on its own.
    public func sync(patient only: Patient? = nil, progress: @escaping (String) -> Void = { _ in }) async throws -> SyncSummary {
        // Remote patients by source.
        let targets: [(source: StoredSource, remoteIDs: [String])] = try read {
            let sources = try SourceRepository(db).allStored().filter { $0.kind == .fhir || $0.kind == .rhex }
            return try sources.compactMap { source in
                // The patients this server created, and those first seen elsewhere that it knows by an id.
                var ids = try db.query("SELECT id, remote_id FROM patients WHERE source_id = ? ORDER BY display_order, id",
                                       [source.id]) { ($0.int64(0)!, $0.string(1)!) }
                if let base = source.baseURL {
                    ids += try identities.references(scope: base).filter { known in !ids.contains { $0.1 == known.remoteID } }
                        .map { ($0.patientID, $0.remoteID) }
                }
                let remoteIDs = ids.filter { only == nil || $0.0 == only!.id }.map(\.1)
                return remoteIDs.isEmpty ? nil : (source, remoteIDs)
            }
        }
        if let only, targets.isEmpty {
            throw HReaderError.usage("patient \(only.id) was not imported from a server; nothing to sync")
        }
        var summary = SyncSummary()
        summary.sources = targets.count
        // One lane per host: a host's patients one after another (its client is serial anyway).
        var lanes: [Origin: [(connection: SourceConnection, sourceID: Int64, remoteID: String)]] = [:]
        var connections: [Int64: SourceConnection] = [:]
        for (source, ids) in targets {
            let connection = try connection(sourceID: source.id)
            if connection.kind == .rhex { connection.rhexRecords.remember(try rhexIdentities(sourceID: source.id)) }
            connections[source.id] = connection
            let origin = Origin(connection.server.url)!
            for id in ids { lanes[origin, default: []].append((connection, source.id, id)) }
        }
        let total = lanes.values.reduce(0) { $0 + $1.count }

        enum Outcome: Sendable {
            case fetched(FetchedRecord, scope: String)
            case failed(remoteID: String, server: String, error: HReaderError)
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Outcome.self)
        let producer = Task {
            await withTaskGroup(of: Void.self) { group in
                for lane in lanes.values {
                    group.addTask {
                        for item in lane {
                            do {
                                continuation.yield(.fetched(try await item.connection.fetch(remoteID: item.remoteID, sourceID: item.sourceID),
                                                        scope: item.connection.server.description))
                            } catch {
                                let translated = (error as? NetError).map { HReaderError.from(network: $0) } ?? HReaderError.from(error)
                                continuation.yield(.failed(remoteID: item.remoteID, server: item.connection.server.description, error: translated))
                            }
                        }
                    }
                }
            }
            continuation.finish()
        }
        var done = 0
        var synced: Set<Int64> = []
        let limits = try DocumentLimits.fromEnvironment()
        var budget = limits.perImport
        for await outcome in stream {
            done += 1
            switch outcome {
            case let .fetched(fetched, scope):
                progress("patient \(done) of \(total) (\(fetched.remoteID))")
                for note in fetched.notes where !summary.imports.notes.contains(note) { summary.imports.notes.append(note) }
                summary.imports.rejected += fetched.rejected
                let importer = RecordImporter(vault: self, sourceID: fetched.sourceID, scope: scope, isSnapshot: true)
                do {
                    let filed = try importer.store(RecordImporter.Batch(fetched.record), relationship: nil, summary: &summary.imports)
                    synced.insert(fetched.sourceID)
                    if let filed, let connection = connections[fetched.sourceID] {
                        let documents = DocumentImporter(vault: self, sourceID: fetched.sourceID, limits: limits,
                                                         server: connection.kind == .fhir ? try connection.fhir() : nil,
                                                         extractor: try textExtractor())
                        try await documents.run(entries: fetched.record.entries, filed: filed,
                                                counts: &summary.imports.documents, budget: &budget)
                    }
                } catch {
                    summary.failures.append((fetched.remoteID, HReaderError.from(error).message, HReaderError.from(error).exitCode))
                }
            case let .failed(remoteID, server, error):
                summary.failures.append(("\(remoteID) at \(server)", error.message, error.exitCode))
            }
        }
        await producer.value
        for sourceID in synced {
            try write { try SourceRepository(db).touchLastSync(id: sourceID, now: Self.nowText()) }
        }
        try readWaitingDocuments(&summary.imports.documents, limits: limits)
        return summary
    }
}
