/// The identities by which records name a patient (migration 2): a FHIR Patient's identifiers and
/// the ids its sources give it. A lookup answers every patient an identity names, so the caller can
/// tell "nobody", "this one" and "ambiguous" apart and never guess.
public struct PatientIdentityRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    public enum Kind: String, Sendable {
        /// `system|value` of a FHIR Identifier.
        case identifier
        /// `<scope>|Patient/<id>`: a FHIR server's base URL or `file` for the relative references of files.
        case reference
    }

    public struct Identity: Hashable, Sendable, CustomStringConvertible {
        public var kind: Kind
        public var value: String

        public init(_ kind: Kind, _ value: String) { self.kind = kind; self.value = value }

        /// The identity of `Patient/<id>` in a scope (a server's base URL, or `file`).
        public static func reference(scope: String, id: String) -> Identity { Identity(.reference, "\(scope)|Patient/\(id)") }

        public var description: String {
            switch kind {
            case .identifier: "identifier \(value)"
            case .reference: value.hasPrefix("file|") ? String(value.dropFirst("file|".count)) : value.replacingOccurrences(of: "|", with: "/")
            }
        }
    }

    /// Records that `patientID` is known by `identity` (nothing happens when it already is).
    public func add(_ identity: Identity, patientID: Int64) throws {
        try db.execute("INSERT OR IGNORE INTO patient_identities (kind, value, patient_id) VALUES (?, ?, ?)",
                       [identity.kind.rawValue, identity.value, patientID])
    }

    /// The patients an identity names, in id order.
    public func patients(_ identity: Identity) throws -> [Int64] {
        try db.query("SELECT patient_id FROM patient_identities WHERE kind = ? AND value = ? ORDER BY patient_id",
                     [identity.kind.rawValue, identity.value]) { $0.int64(0)! }
    }

    public func identities(of patientID: Int64) throws -> [Identity] {
        try db.query("SELECT kind, value FROM patient_identities WHERE patient_id = ? ORDER BY kind, value", [patientID]) {
            Identity(Kind(rawValue: $0.string(0)!) ?? .identifier, $0.string(1)!)
        }
    }

    /// The remote ids (`Patient/<id>`) by which patients are known in a scope, with the patient:
    /// what `sync` asks a server for.
    public func references(scope: String) throws -> [(patientID: Int64, remoteID: String)] {
        let prefix = "\(scope)|Patient/"
        return try db.query("""
            SELECT patient_id, substr(value, ?) FROM patient_identities
            WHERE kind = 'reference' AND substr(value, 1, ?) = ? ORDER BY patient_id
            """, [prefix.utf8.count + 1, prefix.utf8.count, prefix]) { ($0.int64(0)!, $0.string(1)!) }
    }
}

/// Resources about a patient who is not in the vault yet, kept (encrypted, like everything in the
/// vault) until an import brings that patient: then they are filed under them.
public struct PendingResourceRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    public struct Pending: Sendable {
        public var id: Int64
        public var sourceID: Int64
        public var remoteID: String
        public var raw: String
    }

    /// Keeps a resource until its patient comes; a resource kept before is replaced.
    public func park(sourceID: Int64, remoteID: String, waitingFor subject: PatientIdentityRepository.Identity, raw: String,
                     now: String) throws {
        try db.execute("""
            INSERT INTO pending_resources (source_id, remote_id, subject_kind, subject_value, raw, created) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (source_id, remote_id) DO UPDATE SET subject_kind = excluded.subject_kind,
                subject_value = excluded.subject_value, raw = excluded.raw
            """, [sourceID, remoteID, subject.kind.rawValue, subject.value, raw, now])
    }

    /// The resources waiting for a patient known by `identity`.
    public func waiting(for identity: PatientIdentityRepository.Identity) throws -> [Pending] {
        try db.query("SELECT id, source_id, remote_id, raw FROM pending_resources WHERE subject_kind = ? AND subject_value = ? ORDER BY id",
                     [identity.kind.rawValue, identity.value]) { Pending(id: $0.int64(0)!, sourceID: $0.int64(1)!, remoteID: $0.string(2)!, raw: $0.string(3)!) }
    }

    public func remove(id: Int64) throws {
        try db.execute("DELETE FROM pending_resources WHERE id = ?", [id])
    }

    /// Whether nothing of `sourceID` waits (an import then has nothing to take back per entry).
    public func isEmpty(sourceID: Int64) throws -> Bool {
        try db.scalarInt("SELECT EXISTS (SELECT 1 FROM pending_resources WHERE source_id = ?)", [sourceID]) == 0
    }

    /// Removes a resource kept earlier, when an import finds its patient after all.
    public func remove(sourceID: Int64, remoteID: String) throws {
        try db.execute("DELETE FROM pending_resources WHERE source_id = ? AND remote_id = ?", [sourceID, remoteID])
    }

    /// How many resources wait, by the identity they wait for.
    public func counts() throws -> [(subject: PatientIdentityRepository.Identity, count: Int)] {
        try db.query("SELECT subject_kind, subject_value, count(*) FROM pending_resources GROUP BY 1, 2 ORDER BY 1, 2") {
            (PatientIdentityRepository.Identity(PatientIdentityRepository.Kind(rawValue: $0.string(0)!) ?? .identifier, $0.string(1)!),
             Int($0.int64(2)!))
        }
    }
}
