import Foundation
import HReaderModel

/// Patients, in the order of hReader's people picker: display order, then last and first name.
public struct PatientRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    static let columns = "id, uuid, source_id, remote_id, first_name, last_name, gender, birth_date, race, ethnicity, relationship, display_order, created, updated, merged_into"

    static func row(_ s: Statement) -> Patient {
        Patient(id: s.int64(0)!, uuid: s.string(1)!, sourceID: s.int64(2)!, remoteID: s.string(3)!,
                firstName: s.string(4) ?? "", lastName: s.string(5) ?? "", gender: s.string(6), birthDate: s.string(7),
                race: s.string(8), ethnicity: s.string(9), relationship: Relationship(rawValue: s.string(10) ?? "") ?? .other,
                displayOrder: s.int(11) ?? 0, created: s.string(12)!, updated: s.string(13)!, mergedInto: s.int64(14))
    }

    /// The people of the vault: patients not merged into another.
    public func all() throws -> [Patient] {
        try db.query("""
            SELECT \(Self.columns) FROM patients WHERE merged_into IS NULL
            ORDER BY display_order, last_name COLLATE NOCASE, first_name COLLATE NOCASE, id
            """, [], Self.row)
    }

    /// How many people (patients not merged into another).
    public func count() throws -> Int { Int(try db.scalarInt("SELECT count(*) FROM patients WHERE merged_into IS NULL") ?? 0) }

    /// The source records merged into a person, in id order.
    public func merged(into personID: Int64) throws -> [Patient] {
        try db.query("SELECT \(Self.columns) FROM patients WHERE merged_into = ? ORDER BY id", [personID], Self.row)
    }

    /// The person a patient row is shown as: itself, or the one it was merged into.
    public func person(of id: Int64) throws -> Patient? {
        guard let row = try get(id: id) else { return nil }
        guard let into = row.mergedInto else { return row }
        return try get(id: into)
    }

    public func get(id: Int64) throws -> Patient? {
        try db.query("SELECT \(Self.columns) FROM patients WHERE id = ?", [id], Self.row).first
    }

    /// Finds a person by local id, uuid, or a uuid prefix of at least 8 characters. A record merged
    /// into another person finds that person: what was said of either is said of them now.
    public func find(_ reference: String) throws -> Patient? {
        try findRow(reference).flatMap { try person(of: $0.id) }
    }

    /// `find`, without following a merge: the patient row itself.
    public func findRow(_ reference: String) throws -> Patient? {
        // An all-digit reference is a local id first, else a uuid prefix that happens to be digits.
        if let id = Int64(reference), let found = try get(id: id) { return found }
        let lowered = reference.lowercased()
        if let exact = try db.query("SELECT \(Self.columns) FROM patients WHERE uuid = ?", [lowered], Self.row).first { return exact }
        guard lowered.count >= 8 else { return nil }
        let matches = try db.query("SELECT \(Self.columns) FROM patients WHERE substr(uuid, 1, ?) = ? LIMIT 2",
                                   [lowered.count, lowered], Self.row)
        return matches.count == 1 ? matches[0] : nil
    }

    public func find(sourceID: Int64, remoteID: String) throws -> Patient? {
        try db.query("SELECT \(Self.columns) FROM patients WHERE source_id = ? AND remote_id = ?", [sourceID, remoteID], Self.row).first
    }

    /// Adds a patient. Until the user first reorders, every patient has order 0 and the picker is
    /// alphabetical; after that, new patients go to the end.
    public func add(_ new: NewPatient, now: Date = Date()) throws -> Patient {
        let uuid = UUID().uuidString.lowercased()
        let sourceID = try new.sourceID ?? SourceRepository(db).manualSourceID()
        let maxOrder = try db.scalarInt("SELECT coalesce(max(display_order), 0) FROM patients") ?? 0
        let stamp = Timestamps.now(now)
        try db.execute("""
            INSERT INTO patients (uuid, source_id, remote_id, first_name, last_name, gender, birth_date, race, ethnicity,
                                  relationship, display_order, raw, created, updated)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [uuid, sourceID, new.remoteID ?? uuid, new.firstName, new.lastName, new.gender, new.birthDate, new.race,
                  new.ethnicity, new.relationship.rawValue, maxOrder == 0 ? 0 : maxOrder + 1, new.raw, stamp, stamp])
        return try get(id: db.lastInsertRowID)!
    }

    /// Removes a person with everything of theirs, the records merged into them too (cascades).
    public func remove(id: Int64) throws {
        try db.execute("DELETE FROM patients WHERE id = ?", [id])
    }

    /// Moves a patient to `position` (1-based) in the picker and renumbers everyone 1…n.
    public func move(id: Int64, to position: Int) throws {
        var order = try all().map(\.id)
        guard let from = order.firstIndex(of: id) else { return }
        order.remove(at: from)
        order.insert(id, at: min(max(position - 1, 0), order.count))
        let statement = try db.prepare("UPDATE patients SET display_order = ? WHERE id = ?")
        for (index, patientID) in order.enumerated() {
            try statement.bind([index + 1, patientID])
            try statement.step()
        }
    }
}

enum Timestamps {
    /// RFC 3339 in UTC, second precision.
    static func now(_ date: Date = Date()) -> String { RFC3339.utc(Int64(date.timeIntervalSince1970.rounded(.down))) }
}
