import Foundation
import HReaderCrypto
import HReaderNet
import HReaderStore

/// Where `hreader export` sends a patient's measurements.
public enum ExportDestination: Sendable {
    /// A FHIR R4 server: transaction Bundles of conditional creates.
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
    /// Transaction Bundles sent (or written).
    public var bundles = 0
    /// Vault entries the Observations stand for, and those of them summed per hour or day.
    public var entries = 0
    public var groupedEntries = 0
    /// Reason → entries of the chosen types and time that were not sent.
    public var skipped: [String: Int] = [:]
    /// The patient on the server (`Patient/p12`), and whether this export created it.
    public var serverPatient: String?
    public var patientCreated = false

    init(destination: String) { self.destination = destination }
}

extension OpenVault {
    /// `hreader export`: the patient's measurements as FHIR R4 Observations, to a server or a file.
    ///
    /// On a server the patient is found by hreader's identifier (`urn:hreader:patient|<uuid>`, never
    /// by name) or created with a conditional create; the Observations go in transaction Bundles of
    /// `options.batchSize` conditional creates, so a second export creates nothing and an
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
        let (all, sourceKinds) = try read {
            let kinds = Dictionary(try SourceRepository(db).all().map { ($0.id, $0.kind) }, uniquingKeysWith: { first, _ in first })
            return (try entries.list(patientID: patient.id), kinds)
        }
        let plan = ExportPlanner(patientUUID: patient.uuid, options: options, sourceKinds: sourceKinds, now: now).plan(all)
        switch destination {
        case .file(let url):
            return try writeExport(plan, of: patient, to: url)
        case .server(let server):
            return try await sendExport(plan, of: patient, to: server, batchSize: options.batchSize, progress: progress)
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

    private func writeExport(_ plan: ExportPlan, of patient: Patient, to url: URL) throws -> ExportSummary {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.deletingLastPathComponent().path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw HReaderError.usage("the directory of --out \(url.path) does not exist")
        }
        let patientCreate = ExportResources.create(patient)
        let bundle = ExportResources.transaction([patientCreate] + plan.drafts.map { ExportResources.create($0, subject: patientCreate.fullURL) })
        do {
            try AtomicFile.write(Array((bundle.serialized(pretty: true) + "\n").utf8), to: url, mode: 0o600)
        } catch {
            throw HReaderError.from(error)
        }
        var summary = summary(plan, destination: url.path)
        summary.observations = plan.drafts.count
        summary.bundles = 1
        try write {
            try audit.record("export", subject: url.path,
                             detail: "patient \(patient.uuid): wrote \(summary.observations) observations from \(summary.entries) entries")
        }
        return summary
    }

    // MARK: To a server

    private func sendExport(_ plan: ExportPlan, of patient: Patient, to server: ServerURL, batchSize: Int,
                            progress: (String) -> Void) async throws -> ExportSummary {
        let guarded = GuardedVault(self)
        var summary = summary(plan, destination: server.description)
        func record(_ outcome: String) {
            try? guarded.run { vault in
                try vault.write {
                    try vault.audit.record("export", subject: server.description, detail: "patient \(patient.uuid): \(outcome), "
                        + "\(summary.created) observations created, \(summary.existing) already there, in \(summary.bundles) bundles")
                }
            }
        }
        do {
            // The server's stored source (and credentials) when there is one; none is created.
            let connection = try await resolveConnection(server: server, kind: .fhir, guarded: guarded, create: false)
            let client = try connection.fhir()
            progress("finding the patient on \(server)")
            let (id, created) = try await serverPatient(patient, on: client)
            summary.serverPatient = "Patient/\(id)"
            summary.patientCreated = created
            let total = plan.drafts.count
            let bundles = (total + batchSize - 1) / batchSize
            for (number, start) in stride(from: 0, to: total, by: batchSize).enumerated() {
                let batch = plan.drafts[start..<min(start + batchSize, total)]
                progress("sending bundle \(number + 1) of \(bundles) (\(start) of \(total) observations sent)")
                let bundle = ExportResources.transaction(batch.map { ExportResources.create($0, subject: "Patient/\(id)") })
                let answer = try await client.transaction(Data(bundle.serialized().utf8))
                let outcome = try ExportResources.outcomes(of: answer, expected: batch.count)
                summary.created += outcome.created
                summary.existing += outcome.existing
                summary.observations += batch.count
                summary.bundles += 1
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

    /// The server's Patient carrying hreader's identifier for this patient, created when there is
    /// none. Never matched by name: a server that ignores the search parameter and lists other
    /// patients does not make one of them ours.
    private func serverPatient(_ patient: Patient, on client: FHIRClient) async throws -> (id: String, created: Bool) {
        let identifier = ExportResources.patientIdentifier(patient)
        let found = try await client.searchPatients([("identifier", identifier.token)]).records
            .filter { Self.carries($0.patient.content.raw, identifier) }
        if found.count > 1 {
            throw HReaderError(.network, "\(client.base) holds \(found.count) Patients with the identifier \(identifier.token); "
                + "merge or remove the extra ones on the server, then export again")
        }
        if let match = found.first { return (match.patient.remoteID, false) }
        let result = try await client.create(type: "Patient", resource: Data(ExportResources.patient(patient).serialized().utf8),
                                             ifNoneExist: ExportResources.ifNoneExist(identifier))
        guard let id = ExportResources.resourceID(body: result.body, location: result.location, type: "Patient") else {
            throw HReaderError.badInput("\(client.base) created the Patient but did not say its id (no body, no Location)")
        }
        return (id, result.created)
    }

    /// Whether a Patient resource (JSON text) carries the identifier.
    static func carries(_ raw: String?, _ identifier: ObservationDraft.Identifier) -> Bool {
        guard let data = raw?.data(using: .utf8), let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let identifiers = object["identifier"] as? [[String: Any]] else { return false }
        return identifiers.contains { $0["system"] as? String == identifier.system && $0["value"] as? String == identifier.value }
    }
}
