import Foundation
import HReaderModel

/// Where data came from. Migration 1 creates the `manual` source for what the user types in.
public struct SourceRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    public struct Summary: Sendable, Equatable {
        public let id: Int64
        public let kind: SourceKind
        public let displayName: String
        public let baseURL: String?
    }

    public func manualSourceID() throws -> Int64 {
        guard let id = try db.scalarInt("SELECT id FROM sources WHERE uuid = ?", [manualSourceUUID]) else {
            throw DatabaseError(code: 1, message: "the manual source is missing", sql: nil)
        }
        return id
    }

    /// Every source, without credentials.
    public func all() throws -> [Summary] {
        try db.query("SELECT id, kind, display_name, base_url FROM sources ORDER BY id") {
            Summary(id: $0.int64(0)!, kind: SourceKind(rawValue: $0.string(1)!) ?? .manual, displayName: $0.string(2) ?? "", baseURL: $0.string(3))
        }
    }
}

extension SourceRepository {
    /// The source with this kind and base URL, created if new.
    public func findOrCreate(kind: SourceKind, baseURL: String, displayName: String, now: String) throws -> Int64 {
        if let id = try db.scalarInt("SELECT id FROM sources WHERE kind = ? AND base_url = ?", [kind.rawValue, baseURL]) { return id }
        try db.execute("INSERT INTO sources (uuid, kind, base_url, display_name, created, updated) VALUES (?, ?, ?, ?, ?, ?)",
                       [UUID().uuidString.lowercased(), kind.rawValue, baseURL, displayName, now, now])
        return db.lastInsertRowID
    }

    /// Names a source anew (an Apple Health export's devices and apps, as its latest import found them).
    public func setDisplayName(id: Int64, _ name: String, now: String) throws {
        try db.execute("UPDATE sources SET display_name = ?, updated = ? WHERE id = ? AND display_name <> ?", [name, now, id, name])
    }

    public func touchLastSync(id: Int64, now: String) throws {
        try db.execute("UPDATE sources SET last_sync = ?, updated = ? WHERE id = ?", [now, now, id])
    }
}

/// A source with what is needed to reach it again. Credentials are JSON, inside the encrypted vault.
public struct StoredSource: Sendable, Equatable {
    public let id: Int64
    public let uuid: String
    public let kind: SourceKind
    public let baseURL: String?
    public let displayName: String
    public let authKind: String
    public let credentials: String?
    public let lastSync: String?
    public let patientCount: Int
}

extension SourceRepository {
    private static let storedColumns = """
        SELECT s.id, s.uuid, s.kind, s.base_url, s.display_name, s.auth_kind, s.credentials, s.last_sync,
               (SELECT count(*) FROM patients p WHERE p.source_id = s.id)
        FROM sources s
        """

    private func stored(_ sql: String, _ arguments: [DatabaseValueConvertible?]) throws -> [StoredSource] {
        try db.query(Self.storedColumns + " " + sql, arguments) {
            StoredSource(id: $0.int64(0)!, uuid: $0.string(1)!, kind: SourceKind(rawValue: $0.string(2)!) ?? .manual, baseURL: $0.string(3),
                         displayName: $0.string(4) ?? "", authKind: $0.string(5) ?? "none", credentials: $0.string(6),
                         lastSync: $0.string(7), patientCount: Int($0.int64(8) ?? 0))
        }
    }

    public func stored(id: Int64) throws -> StoredSource? {
        try stored("WHERE s.id = ?", [id]).first
    }

    public func stored(kind: SourceKind, baseURL: String) throws -> StoredSource? {
        try stored("WHERE s.kind = ? AND s.base_url = ?", [kind.rawValue, baseURL]).first
    }

    /// Sources at this base URL, of any kind.
    public func stored(baseURL: String) throws -> [StoredSource] {
        try stored("WHERE s.base_url = ? ORDER BY s.id", [baseURL])
    }

    public func allStored() throws -> [StoredSource] {
        try stored("ORDER BY s.id", [])
    }

    /// How many patients hold records of the source: those imported from it, and those its entries or
    /// sample series were filed under (a file or an export imported `--as me` or `--patient P` brings
    /// no patient of its own). Each is an index lookup per patient (`entries_patient_source`, the
    /// series' unique key), not a scan of the entries.
    public func patientsWithRecords(sourceID: Int64) throws -> Int {
        Int(try db.scalarInt("""
            SELECT count(*) FROM patients p WHERE p.source_id = ?1
                OR EXISTS (SELECT 1 FROM entries e WHERE e.patient_id = p.id AND e.source_id = ?1)
                OR EXISTS (SELECT 1 FROM sample_series ss WHERE ss.patient_id = p.id AND ss.source_id = ?1)
            """, [sourceID]) ?? 0)
    }

    public func setCredentials(id: Int64, authKind: String, credentials: String?, now: String) throws {
        try db.execute("UPDATE sources SET auth_kind = ?, credentials = ?, updated = ? WHERE id = ?", [authKind, credentials, now, id])
    }

    /// Removes a source no patient comes from (the caller removes its patients first).
    public func remove(id: Int64) throws {
        try db.execute("DELETE FROM sources WHERE id = ?", [id])
    }
}
