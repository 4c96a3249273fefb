import Foundation
import HReaderNet
import HReaderRecords

/// How `hreader export` writes Observations to a server, chosen from its CapabilityStatement.
public enum ExportMode: String, Sendable {
    /// `transaction` Bundles of conditional creates: each Bundle all or nothing.
    case transaction
    /// `batch` Bundles of conditional creates: each entry succeeds or fails on its own.
    case batch
    /// One `POST` per Observation with `If-None-Exist`.
    case conditionalCreate = "conditional-create"
    /// The identifiers searched first, then a plain `POST` for each Observation the server lacks
    /// (for servers without conditional create, which would otherwise duplicate).
    case lookupCreate = "lookup-create"

    /// For the summary: "transaction Bundles of conditional creates".
    public var description: String {
        switch self {
        case .transaction: "transaction Bundles of conditional creates"
        case .batch: "batch Bundles of conditional creates"
        case .conditionalCreate: "one conditional create (If-None-Exist) per observation"
        case .lookupCreate: "identifiers looked up first, then a plain create for each missing observation"
        }
    }

    /// The safest write the server declares. The Bundles hold conditional creates, so they are
    /// chosen only when Observation declares `conditionalCreate` too: a server that ignores
    /// `ifNoneExist` would create every Observation again.
    static func best(for capability: FHIRCapability, type: String = "Observation") -> ExportMode {
        guard capability.allowsConditionalCreate(on: type) else { return .lookupCreate }
        if capability.systemInteractions.contains("transaction") { return .transaction }
        if capability.systemInteractions.contains("batch") { return .batch }
        return .conditionalCreate
    }
}

/// Sends creates of one resource type (Observations; DocumentReferences with `--with-documents`) to
/// one server in one mode, and counts what the server created and what it already had. Without a CapabilityStatement it starts with transactions (as servers
/// mostly take them) and, when one is refused with a 4xx, goes on with lookups and plain creates.
struct ResourceSender {
    let client: FHIRClient
    private(set) var mode: ExportMode
    /// No CapabilityStatement to go by: a refused transaction switches to `lookupCreate`.
    let mayFallBack: Bool
    private(set) var notes: [String] = []
    private(set) var created = 0
    private(set) var existing = 0
    private(set) var bundles = 0
    /// Batch entries the server refused: their count and the first one's reason.
    private(set) var refused = 0
    private(set) var firstRefusal: String?

    init(client: FHIRClient, mode: ExportMode, mayFallBack: Bool) {
        self.client = client
        self.mode = mode
        self.mayFallBack = mayFallBack
    }

    mutating func send(_ creates: [ExportResources.Create]) async throws {
        switch mode {
        case .transaction:
            do {
                let answer = try await client.transaction(Data(ExportResources.bundle(creates, type: "transaction").serialized().utf8))
                let outcome = try ExportResources.outcomes(of: answer, expected: creates.count)
                count(created: outcome.created, existing: outcome.existing)
                bundles += 1
            } catch let NetError.status(code, _, _) where mayFallBack && (FHIRClient.isClientError(code) || code == 501) {
                // A transaction is all or nothing: the refused one wrote nothing; send it the safe way.
                mode = .lookupCreate
                notes.append("no CapabilityStatement; a transaction was refused (\(code)): \(ExportMode.lookupCreate.description)")
                try await send(creates)
            }
        case .batch:
            let answer = try await client.batch(Data(ExportResources.bundle(creates, type: "batch").serialized().utf8))
            for (index, result) in try ExportResources.entryResults(of: answer, expected: creates.count, kind: "batch").enumerated() {
                switch result {
                case .created: created += 1
                case .existing: existing += 1
                case .refused(let why):
                    refused += 1
                    if firstRefusal == nil { firstRefusal = "\(creates[index].identifier.token): \(why)" }
                }
            }
            bundles += 1
        case .conditionalCreate:
            for create in creates {
                let result = try await client.create(type: create.type, resource: Data(create.resource.serialized().utf8),
                                                     ifNoneExist: ExportResources.ifNoneExist(create.identifier))
                count(created: result.created ? 1 : 0, existing: result.created ? 0 : 1)
            }
        case .lookupCreate:
            let there = try await client.existingIdentifiers(type: creates.first?.type ?? "Observation", among: creates.map(\.identifier.token))
            for create in creates {
                if there.contains(create.identifier.token) {
                    existing += 1
                    continue
                }
                _ = try await client.create(type: create.type, resource: Data(create.resource.serialized().utf8))
                created += 1
            }
        }
    }

    private mutating func count(created: Int, existing: Int) {
        self.created += created
        self.existing += existing
    }
}
