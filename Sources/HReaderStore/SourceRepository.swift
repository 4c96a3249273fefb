import Foundation

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

    public func touchLastSync(id: Int64, now: String) throws {
        try db.execute("UPDATE sources SET last_sync = ?, updated = ? WHERE id = ?", [now, now, id])
    }
}
