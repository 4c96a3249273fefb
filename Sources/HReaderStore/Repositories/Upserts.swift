import Foundation
import HReaderModel

/// What a re-import did to one row.
public enum UpsertOutcome: Sendable, Equatable {
    case inserted, updated, unchanged
}

extension PatientRepository {
    /// Creates the patient a source knows by `remoteID`, or refreshes its demographics and raw document.
    /// The user's choices (relationship, display order) are kept; `relationship` applies to a new patient.
    public func upsert(sourceID: Int64, remoteID: String, _ new: NewPatient, now: Date = Date()) throws -> (Patient, UpsertOutcome) {
        guard let existing = try find(sourceID: sourceID, remoteID: remoteID) else {
            var created = new
            created.sourceID = sourceID
            created.remoteID = remoteID
            return (try add(created, now: now), .inserted)
        }
        let raw = try db.scalarString("SELECT raw FROM patients WHERE id = ?", [existing.id])
        if raw == new.raw && existing.firstName == new.firstName && existing.lastName == new.lastName
            && existing.gender == new.gender && existing.birthDate == new.birthDate {
            return (existing, .unchanged)
        }
        try db.execute("""
            UPDATE patients SET first_name = ?, last_name = ?, gender = ?, birth_date = ?, race = ?, ethnicity = ?, raw = ?, updated = ?
            WHERE id = ?
            """, [new.firstName, new.lastName, new.gender, new.birthDate, new.race, new.ethnicity, new.raw, Timestamps.now(now), existing.id])
        return (try get(id: existing.id)!, .updated)
    }
}

extension EntryRepository {
    /// Inserts the entry a source knows by `remoteID`, or replaces what the source says about it.
    /// Never touches the user's own fields (comments, patient comments, strike-through): hReader lost
    /// them on every sync. A re-appearing entry is no longer marked missing.
    ///
    /// An entry is one per source record (`recordID`, the patient row the source's record is; the
    /// person `patientID` itself unless that record was merged into them): a re-import finds it
    /// there, whoever it is shown under now.
    @discardableResult
    public func upsert(patientID: Int64, recordID: Int64? = nil, sourceID: Int64, remoteID: String, content c: EntryContent,
                       now: Date = Date()) throws -> UpsertOutcome {
        try upsertEntry(patientID: patientID, recordID: recordID, sourceID: sourceID, remoteID: remoteID, content: c, now: now).outcome
    }

    /// `upsert`, with the entry's local id (what an import hands regrouping as touched).
    public func upsertEntry(patientID: Int64, recordID: Int64? = nil, sourceID: Int64, remoteID: String, content c: EntryContent,
                            now: Date = Date()) throws -> (outcome: UpsertOutcome, id: Int64) {
        let record = recordID ?? patientID
        // Most rows of a first import are new: try the insert first, look up only on a conflict.
        if try insert(patientID: patientID, recordID: record, content: c, sourceID: sourceID, remoteID: remoteID, now: now, ifNew: true) {
            return (.inserted, db.lastInsertRowID)
        }
        let existing = try db.query("""
            SELECT id, raw, type, description, missing_at_source FROM entries
            WHERE source_patient_id = ? AND source_id = ? AND remote_id = ?
            """, [record, sourceID, remoteID]) { ($0.int64(0)!, $0.string(1), $0.string(2), $0.string(3), $0.string(4)) }.first
        guard let (id, raw, type, description, missing) = existing else {
            try insert(patientID: patientID, recordID: record, content: c, sourceID: sourceID, remoteID: remoteID, now: now, ifNew: false)
            return (.inserted, db.lastInsertRowID)
        }
        if raw == c.raw && type == c.type.rawValue && description == c.description && missing == nil { return (.unchanged, id) }
        // Another kind of entry now: it leaves its fact in the regrouping that follows (which finds
        // its old group by its `fact_copies` pointers, left until then).
        try db.execute("""
            UPDATE entries SET type = ?, description = ?, status = ?, date_text = ?, date_epoch = ?, start_text = ?, start_epoch = ?,
                end_text = ?, end_epoch = ?, codes = ?, value_number = ?, value_text = ?, unit = ?, dose = ?, reaction = ?, severity = ?,
                raw = ?, missing_at_source = NULL, updated = ?
            WHERE id = ?
            """, [c.type.rawValue, c.description, c.status, c.date?.text, c.date?.epoch, c.start?.text, c.start?.epoch, c.end?.text,
                  c.end?.epoch, Self.encodeCodes(c.codes), c.valueNumber, c.valueText, c.unit, c.dose, c.reaction, c.severity, c.raw,
                  Timestamps.now(now), id])
        return (.updated, id)
    }

    /// Marks the entries of a source's record of a patient (`recordID`, see `upsert`) that a full
    /// snapshot no longer holds; they are kept. Returns how many were newly marked.
    @discardableResult
    public func markMissing(recordID: Int64, sourceID: Int64, keeping remoteIDs: Set<String>, now: Date = Date()) throws -> Int {
        try markMissingEntries(recordID: recordID, sourceID: sourceID, keeping: remoteIDs, now: now).count
    }

    /// `markMissing`, with the ids of the entries newly marked.
    public func markMissingEntries(recordID: Int64, sourceID: Int64, keeping remoteIDs: Set<String>, now: Date = Date()) throws -> [Int64] {
        let present = try db.query("SELECT id, remote_id FROM entries WHERE source_patient_id = ? AND source_id = ? AND missing_at_source IS NULL",
                                   [recordID, sourceID]) { ($0.int64(0)!, $0.string(1)!) }
        var marked: [Int64] = []
        for (id, remoteID) in present where !remoteIDs.contains(remoteID) {
            try db.execute("UPDATE entries SET missing_at_source = ? WHERE id = ?", [Timestamps.now(now), id])
            marked.append(id)
        }
        return marked
    }
}

extension EntryRepository {
    /// Gives the entry one source knows by `remoteID` in a record to another source (which states it
    /// now), unless that source has it already. Ids and the user's fields stay. Returns whether it moved.
    @discardableResult
    public func move(recordID: Int64, remoteID: String, from: Int64, to: Int64) throws -> Bool {
        try db.execute("UPDATE OR IGNORE entries SET source_id = ? WHERE source_patient_id = ? AND source_id = ? AND remote_id = ?",
                       [to, recordID, from, remoteID])
        return db.changes > 0
    }

    /// Removes the entry a source knows by `remoteID` (within the caller's transaction): for an
    /// import that finds out later in the same file that a row repeats another.
    public func removeFromSource(recordID: Int64, sourceID: Int64, remoteID: String) throws {
        try db.execute("DELETE FROM entries WHERE source_patient_id = ? AND source_id = ? AND remote_id = ?", [recordID, sourceID, remoteID])
    }
}
