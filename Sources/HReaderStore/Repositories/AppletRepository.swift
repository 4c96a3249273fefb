import Foundation

/// Each patient's ordered list of applets, and each applet's private key/value storage per patient.
///
/// A patient whose list was never set has no rows: callers show the default list. Once the list is set
/// (even to nothing), a marker row with an empty identifier at position 0 records that it is the
/// user's own, so an emptied list stays empty instead of falling back to the default.
///
///     let applets = AppletRepository(db)
///     try applets.add("org.mitre.hreader.bmi", patientID: 1, startingFrom: defaults)
///     try applets.setData(applet: "org.example.steps", patientID: 1, key: "goal", value: "8000")
public struct AppletRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    /// The identifier of the marker row; never a valid applet identifier.
    static let marker = ""

    // MARK: The patient's list

    /// The patient's applets in order, or nil when the list was never set.
    public func identifiers(patientID: Int64) throws -> [String]? {
        let rows = try db.query("SELECT applet FROM patient_applets WHERE patient_id = ? ORDER BY position, applet",
                                [patientID]) { $0.string(0) ?? "" }
        guard !rows.isEmpty else { return nil }
        return rows.filter { $0 != Self.marker }
    }

    /// Replaces the patient's list (duplicates after the first are dropped).
    public func setIdentifiers(_ identifiers: [String], patientID: Int64) throws {
        try db.execute("DELETE FROM patient_applets WHERE patient_id = ?", [patientID])
        try db.execute("INSERT INTO patient_applets (patient_id, applet, position) VALUES (?, ?, 0)", [patientID, Self.marker])
        var seen: Set<String> = [Self.marker]
        var position = 0
        for identifier in identifiers where seen.insert(identifier).inserted {
            position += 1
            try db.execute("INSERT INTO patient_applets (patient_id, applet, position) VALUES (?, ?, ?)",
                           [patientID, identifier, position])
        }
    }

    /// Adds `identifier` at `position` (1-based; nil or past the end: last). Returns false, changing
    /// nothing, when it is already in the list.
    @discardableResult
    public func add(_ identifier: String, at position: Int? = nil, patientID: Int64, startingFrom defaults: [String]) throws -> Bool {
        var list = try identifiers(patientID: patientID) ?? defaults
        guard !list.contains(identifier) else { return false }
        let index = position.map { min(max($0 - 1, 0), list.count) } ?? list.count
        list.insert(identifier, at: index)
        try setIdentifiers(list, patientID: patientID)
        return true
    }

    /// Removes `identifier`; returns false when it was not in the list.
    @discardableResult
    public func remove(_ identifier: String, patientID: Int64, startingFrom defaults: [String]) throws -> Bool {
        var list = try identifiers(patientID: patientID) ?? defaults
        guard let index = list.firstIndex(of: identifier) else { return false }
        list.remove(at: index)
        try setIdentifiers(list, patientID: patientID)
        return true
    }

    /// Moves `identifier` to `position` (1-based, clamped to the list); returns false when it is not in the list.
    @discardableResult
    public func move(_ identifier: String, to position: Int, patientID: Int64, startingFrom defaults: [String]) throws -> Bool {
        var list = try identifiers(patientID: patientID) ?? defaults
        guard let index = list.firstIndex(of: identifier) else { return false }
        list.remove(at: index)
        list.insert(identifier, at: min(max(position - 1, 0), list.count))
        try setIdentifiers(list, patientID: patientID)
        return true
    }

    // MARK: The applet's private storage

    /// Everything `applet` stored for the patient.
    public func data(applet: String, patientID: Int64) throws -> [String: String] {
        let rows = try db.query("SELECT key, value FROM applet_data WHERE applet = ? AND patient_id = ? ORDER BY key",
                                [applet, patientID]) { s -> (String, String) in
            let value = s.blob(1).map { String(decoding: $0, as: UTF8.self) } ?? ""
            return (s.string(0) ?? "", value)
        }
        return Dictionary(rows, uniquingKeysWith: { first, _ in first })
    }

    /// Stores `value` under `key`; nil removes the key.
    public func setData(applet: String, patientID: Int64, key: String, value: String?, now: Date = Date()) throws {
        guard let value else {
            try db.execute("DELETE FROM applet_data WHERE applet = ? AND patient_id = ? AND key = ?", [applet, patientID, key])
            return
        }
        try db.execute("""
            INSERT INTO applet_data (applet, patient_id, key, value, updated) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(applet, patient_id, key) DO UPDATE SET value = excluded.value, updated = excluded.updated
            """, [applet, patientID, key, Array(value.utf8), Timestamps.now(now)])
    }

    /// The number of keys `applet` stores for the patient.
    public func dataCount(applet: String, patientID: Int64) throws -> Int {
        Int(try db.scalarInt("SELECT count(*) FROM applet_data WHERE applet = ? AND patient_id = ?", [applet, patientID]) ?? 0)
    }
}
