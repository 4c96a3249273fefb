import Foundation
import HReaderJSON
import HReaderCrypto
import HReaderModel
import HReaderNet
import HReaderRecords
import HReaderStore

/// Where `hreader export` sends a patient's measurements.
public enum ExportDestination: Sendable {
    /// A FHIR R4 server, written to as its CapabilityStatement allows (`ExportMode`).
    case server(ServerURL)
    /// One transaction Bundle written to a file (mode 0600), the Patient included.
    case file(URL)
}

/// What an export did.
public struct ExportSummary: Sendable {
    /// The server's base URL or the file's path.
    public var destination: String
    /// Observations sent (or written).
    public var observations = 0
    /// … of which the server created, and those it already had (a conditional create that matched).
    public var created = 0
    public var existing = 0
    /// Transaction or batch Bundles sent (or written); none in the per-Observation modes.
    public var bundles = 0
    /// Vault entries the Observations stand for, and those of them summed per hour or day.
    public var entries = 0
    public var groupedEntries = 0
    /// Reason → entries of the chosen types and time that were not sent.
    public var skipped: [String: Int] = [:]
    /// The patient on the server (`Patient/p12`), and whether this export created it.
    public var serverPatient: String?
    public var patientCreated = false
    /// How the Observations were written (servers only), and what the summary should say about it.
    public var mode: ExportMode?
    public var notes: [String] = []
    /// DocumentReferences written or sent (`--with-documents`).
    public var documents = 0
    /// Of those sent to a server: created there, or there already (found by their identifier).
    public var documentsCreated = 0
    public var documentsExisting = 0

    init(destination: String) { self.destination = destination }
}

extension OpenVault {
    /// `hreader export`: the patient's measurements as FHIR R4 Observations, to a server or a file.
    ///
    /// On a server the patient is found by hreader's identifier (`urn:hreader:patient|<uuid>`, never
    /// by name) or created; the Observations are written the way the server's CapabilityStatement
    /// allows (transaction or batch Bundles of `options.batchSize` conditional creates, conditional
    /// creates, or lookups then plain creates), so a second export creates nothing and an
    /// interrupted one is finished by running it again. The vault gets one audit record, nothing else.
    ///
    /// ```swift
    /// let summary = try await vault.export(patient: ada, to: .server(try ServerURL("https://fhir.example.org/r4")),
    ///                                      options: ExportOptions(grouping: .day))
    /// print(summary.created, summary.existing)
    /// ```
    public func export(patient: Patient, to destination: ExportDestination, options: ExportOptions, now: Date = Date(),
                       progress: @escaping (String) -> Void = { _ in }) async throws -> ExportSummary {
        guard options.batchSize >= 1 else { throw HReaderError.usage("--batch-size must be at least 1") }
        let sourceKinds = try read {
            Dictionary(try SourceRepository(db).all().map { ($0.id, $0.kind) }, uniquingKeysWith: { first, _ in first })
        }
        let planner = ExportPlanner(patientUUID: patient.uuid, options: options, sourceKinds: sourceKinds, now: now)
        switch destination {
        case .file(let url):
            return try writeExport(planner, of: patient, to: url, withDocuments: options.withDocuments)
        case .server(let server):
            return try await sendExport(planner, of: patient, to: server, batchSize: options.batchSize, withDocuments: options.withDocuments,
                                        progress: progress)
        }
    }

    private func summary(_ plan: ExportPlan, destination: String) -> ExportSummary {
        var summary = ExportSummary(destination: destination)
        summary.entries = plan.entries
        summary.groupedEntries = plan.groupedEntries
        summary.skipped = plan.skipped
        return summary
    }

    // MARK: To a file

    /// Reads, groups and writes in one pass: the Bundle goes to the file an Observation at a time.
    private func writeExport(_ planner: ExportPlanner, of patient: Patient, to url: URL, withDocuments: Bool) throws -> ExportSummary {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw HReaderError.usage("the directory of --out \(url.path) does not exist")
        }
        let patientCreate = ExportResources.create(patient)
        var plan = ExportPlan()
        var documents = 0
        do {
            try AtomicFile.write(to: url, mode: 0o600) { append in
                try withoutActuallyEscaping(append) { append in
                    var bundle = ExportResources.TransactionWriter(sink: append)
                    try bundle.add(patientCreate)
                    plan = try readingAside(planner, of: patient) { batch in
                        for draft in batch { try bundle.add(ExportResources.create(draft, subject: patientCreate.fullURL)) }
                    }
                    if withDocuments {
                        // The bytes of each document go inline (base64) into the Bundle, so they are in memory
                        // here, one document at a time while it is encoded.
                        for document in try self.documents(patient: patient) where document.state == .fetched {
                            var bytes: [UInt8] = []
                            try readDocumentBytes(document) { bytes += $0 }
                            try bundle.add(ExportResources.create(document, bytes: bytes, subject: patientCreate.fullURL))
                            documents += 1
                        }
                    }
                    try bundle.finish()
                }
            }
        } catch let error as HReaderError {
            throw error
        } catch {
            throw HReaderError.from(error)
        }
        var summary = summary(plan, destination: url.path)
        summary.observations = plan.observations
        summary.documents = documents
        summary.bundles = 1
        try write {
            try audit.record("export", subject: url.path,
                             detail: "patient \(patient.uuid): wrote \(summary.observations) observations from \(summary.entries) entries")
        }
        return summary
    }

    /// What an export reads and plans, handed to `write` a batch at a time from a second thread:
    /// reading the vault and writing JSON are each about half of an export's work, so on two cores
    /// they overlap (as the import parses and writes on two threads). Returns what the plan counted.
    private func readingAside(_ planner: ExportPlanner, of patient: Patient,
                              write: ([ObservationDraft]) throws -> Void) throws -> ExportPlan {
        enum Piece: Sendable {
            case drafts([ObservationDraft])
            case done(ExportPlan)
        }
        let pieces = BoundedQueue<Piece>(capacity: 4)
        // The vault goes to the reading thread and is used there only: this thread does not touch it
        // until that one has finished (`waitUntilFinished`, below, before anything else is read).
        let vault = UncheckedSendable(self)
        let reader = Thread {
            do {
                var drafts = try vault.value.read { try ExportDrafts(vault.value.db, patient: patient, planner: planner) }
                while true {
                    let batch = try vault.value.read { try drafts.next(512) }
                    if batch.isEmpty { break }
                    try pieces.put(.drafts(batch))
                }
                try pieces.put(.done(drafts.plan))
                pieces.finish(nil)
            } catch is BoundedQueue<Piece>.Cancelled {
                pieces.finish(nil)
            } catch {
                pieces.finish(error)
            }
        }
        reader.stackSize = 8 << 20
        reader.start()
        defer {
            pieces.cancel()
            pieces.waitUntilFinished()
        }
        var plan = ExportPlan()
        while let piece = try pieces.take() {
            switch piece {
            case .drafts(let batch): try write(batch)
            case .done(let counted): plan = counted
            }
        }
        return plan
    }

    // MARK: To a server

    /// Reads, groups and sends in one pass: a Bundle of `batchSize` Observations is read from the
    /// vault when the last one has gone.
    private func sendExport(_ planner: ExportPlanner, of patient: Patient, to server: ServerURL, batchSize: Int, withDocuments: Bool,
                            progress: (String) -> Void) async throws -> ExportSummary {
        var summary = ExportSummary(destination: server.description)
        func record(_ outcome: String) {
            try? write {
                try audit.record("export", subject: server.description, detail: "patient \(patient.uuid): \(outcome), "
                    + "\(summary.created) observations created, \(summary.existing) already there, in \(summary.bundles) bundles")
            }
        }
        do {
            // The server's stored source (and credentials) when there is one; none is created.
            let connection = try await resolveConnection(server: server, kind: .fhir, create: false)
            let client = try connection.fhir()
            progress("reading what \(server) supports")
            let statement = try await client.statement()
            var sender: ResourceSender
            switch statement {
            case .declared(let capability):
                // Refused here, before anything is written, rather than by the first POST.
                try Self.require("create", on: "Observation", by: capability, at: server.description)
                if withDocuments {
                    try Self.require("create", on: "DocumentReference", by: capability, at: server.description, because: " (--with-documents)")
                }
                sender = ResourceSender(client: client, mode: .best(for: capability), mayFallBack: false)
            case .unreadable(let why):
                sender = ResourceSender(client: client, mode: .transaction, mayFallBack: true)
                summary.notes.append("no CapabilityStatement (\(why)): transactions, with lookups and plain creates if they are refused")
            }
            progress("finding the patient on \(server)")
            let (id, created) = try await serverPatient(patient, on: client, statement: statement)
            summary.serverPatient = "Patient/\(id)"
            summary.patientCreated = created
            // The vault is read between sends, through the door that credential renewals take too.
            var drafts = try read { try ExportDrafts(db, patient: patient, planner: planner) }
            var plan = ExportPlan()
            while true {
                let batch = try read { try drafts.next(batchSize) }
                plan = drafts.plan
                guard !batch.isEmpty else { break }
                progress("sending batch \(summary.bundles + 1) (\(summary.observations) observations sent)")
                try await sender.send(batch.map { ExportResources.create($0, subject: "Patient/\(id)") })
                summary.created = sender.created
                summary.existing = sender.existing
                summary.bundles = sender.bundles
                summary.observations += batch.count
            }
            summary.entries = plan.entries
            summary.groupedEntries = plan.groupedEntries
            summary.skipped = plan.skipped
            let total = summary.observations
            summary.mode = sender.mode
            summary.notes += sender.notes
            if withDocuments {
                // One document at a time: its bytes go inline (base64), so only one is in memory at once.
                var documentSender: ResourceSender
                switch statement {
                case .declared(let capability):
                    documentSender = ResourceSender(client: client, mode: .best(for: capability, type: "DocumentReference"), mayFallBack: false)
                case .unreadable:
                    documentSender = ResourceSender(client: client, mode: sender.mode, mayFallBack: true)
                }
                let documents = try self.documents(patient: patient).filter { $0.state == .fetched }
                for (number, document) in documents.enumerated() {
                    progress("sending document \(number + 1) of \(documents.count)")
                    var bytes: [UInt8] = []
                    try readDocumentBytes(document) { bytes += $0 }
                    try await documentSender.send([ExportResources.create(document, bytes: bytes, subject: "Patient/\(id)")])
                    summary.documents += 1
                    summary.documentsCreated = documentSender.created
                    summary.documentsExisting = documentSender.existing
                }
                summary.notes += documentSender.notes
                if documentSender.refused > 0 {
                    throw HReaderError(.network, "\(server) refused \(documentSender.refused) of \(documents.count) documents "
                        + "(first: \(documentSender.firstRefusal ?? "no reason given")); the others were sent")
                }
            }
            if sender.refused > 0 {
                throw HReaderError(.network, "\(server) refused \(sender.refused) of \(total) observations in its batch-responses "
                    + "(first: \(sender.firstRefusal ?? "no reason given")); the others were sent")
            }
        } catch let error as NetError {
            record("failed")
            throw HReaderError.from(network: error)
        } catch {
            record("failed")
            throw error
        }
        record("done")
        return summary
    }

    /// Fails unless the CapabilityStatement declares `interaction` on `type`: one line naming what
    /// is missing, before anything was sent.
    static func require(_ interaction: String, on type: String, by capability: FHIRCapability, at server: String,
                        because reason: String = "") throws {
        guard !capability.allows(interaction, on: type) else { return }
        let readOnly = capability.resources.values.allSatisfy { !$0.interactions.contains("create") && !$0.interactions.contains("update") }
        throw HReaderError(.network, "cannot export to \(server): its CapabilityStatement declares no '\(interaction)' for \(type)"
            + reason + (readOnly ? " (the server is read-only)" : "") + "; nothing was sent")
    }

    /// The server's Patient carrying hreader's identifier for this patient, created when there is
    /// none. Never matched by name: a server that ignores the search parameter and lists other
    /// patients does not make one of them ours.
    private func serverPatient(_ patient: Patient, on client: FHIRClient, statement: FHIRStatement) async throws -> (id: String, created: Bool) {
        let identifier = ExportResources.patientIdentifier(patient)
        let found = try await client.searchPatients([("identifier", identifier.token)]).records
            .filter { Self.carries($0.patient.content.raw, identifier) }
        if found.count > 1 {
            throw HReaderError(.network, "\(client.base) holds \(found.count) Patients with the identifier \(identifier.token); "
                + "merge or remove the extra ones on the server, then export again")
        }
        if let match = found.first { return (match.patient.remoteID, false) }
        // A conditional create where the server declares one (or says nothing), else a plain one:
        // the search above has just found none.
        var conditional = true
        if case .declared(let capability) = statement {
            try Self.require("create", on: "Patient", by: capability, at: client.base.absoluteString,
                             because: " and the patient is not there yet")
            conditional = capability.allowsConditionalCreate(on: "Patient")
        }
        let result = try await client.create(type: "Patient", resource: Data(ExportResources.patient(patient).serialized().utf8),
                                             ifNoneExist: conditional ? ExportResources.ifNoneExist(identifier) : nil)
        guard let id = ExportResources.resourceID(body: result.body, location: result.location, type: "Patient") else {
            throw HReaderError.badInput("\(client.base) created the Patient but did not say its id (no body, no Location)")
        }
        return (id, result.created)
    }

    /// Whether a Patient resource (JSON text) carries the identifier.
    static func carries(_ raw: String?, _ identifier: ObservationDraft.Identifier) -> Bool {
        guard let raw, let identifiers = (try? JSONParser.parse(raw))?["identifier"]?.array else { return false }
        return identifiers.contains { $0["system"]?.string == identifier.system && $0["value"]?.string == identifier.value }
    }
}
