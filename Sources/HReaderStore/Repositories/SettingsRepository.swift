import Foundation

/// Small vault-wide settings, such as the selected patient.
public struct SettingsRepository {
    let db: Database
    public init(_ db: Database) { self.db = db }

    public func value(_ key: String) throws -> String? {
        try db.scalarString("SELECT value FROM settings WHERE key = ?", [key])
    }

    /// Every setting whose key starts with `prefix`, by key.
    public func values(prefix: String) throws -> [(key: String, value: String)] {
        try db.query("SELECT key, value FROM settings WHERE substr(key, 1, ?) = ? ORDER BY key", [Int64(prefix.utf8.count), prefix]) {
            ($0.string(0) ?? "", $0.string(1) ?? "")
        }
    }

    public func set(_ key: String, _ value: String?) throws {
        if let value {
            try db.execute("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [key, value])
        } else {
            try db.execute("DELETE FROM settings WHERE key = ?", [key])
        }
    }
}

/// What was done to the vault, when. Callers pass descriptions of actions, never health data.
public struct AuditLog {
    let db: Database
    public init(_ db: Database) { self.db = db }

    public func record(_ action: String, subject: String? = nil, detail: String? = nil, now: Date = Date()) throws {
        try db.execute("INSERT INTO audit_log (at, action, subject, detail) VALUES (?, ?, ?, ?)",
                       [Timestamps.now(now), action, subject, detail])
    }

    public func count() throws -> Int { Int(try db.scalarInt("SELECT count(*) FROM audit_log") ?? 0) }
}
