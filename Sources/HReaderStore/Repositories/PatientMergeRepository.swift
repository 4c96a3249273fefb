import Foundation

/// Joining two patients who are one person, and undoing it (migration 5, docs/reconciliation.md).
///
/// A patient row is one source's record of a person. A merge makes OTHER's rows part of KEEP
/// (`merged_into`) and shows everything OTHER holds under KEEP: entries, documents and Apple Health
/// sample series (each keeps its record in `source_patient_id`, so re-imports and sync of OTHER's
/// sources find them and file what they bring under KEEP), timeline items, and the selection.
/// OTHER's identities, applet choices and applet data stay on OTHER's row, unused while merged. An
/// unmerge gives OTHER's records back everything whose record is theirs (what was imported from
/// their sources while merged included) and the timeline items the merge moved. Callers run both
/// inside a transaction.
public struct PatientMergeRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    public struct Merge: Sendable, Equatable {
        public var id: Int64
        public var keepID: Int64
        public var otherID: Int64
        public var mergedAt: String
        public var undoneAt: String?
    }

    /// Tables whose rows know their record (`source_patient_id`): an unmerge gives back every row
    /// whose record is one of OTHER's.
    static let recordTables = ["entries", "documents", "sample_series"]
    /// Tables whose rows belong to a person with no record of their own (what the user posted): a
    /// merge moves OTHER's to KEEP and remembers which, an unmerge moves those back (what was added
    /// under KEEP since stays).
    static let movedTables = ["timeline_items"]

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case samePerson
        case merged(Int64, into: Int64)
        case noMerge(Int64)
        case alreadyUndone(Int64)

        public var description: String {
            switch self {
            case .samePerson: "the two patients are one person already"
            case let .merged(id, into): "patient \(id) is merged into patient \(into); name \(into) instead"
            case let .noMerge(id): "no merge \(id) to undo; see 'hreader patients merges'"
            case let .alreadyUndone(id): "merge \(id) was undone already"
            }
        }
    }

    /// Makes `otherID` part of `keepID`. Both must be people (not merged into anyone).
    @discardableResult
    public func merge(keep keepID: Int64, other otherID: Int64, now: Date = Date()) throws -> Merge {
        guard keepID != otherID else { throw Failure.samePerson }
        for id in [keepID, otherID] {
            if let into = try db.scalarInt("SELECT merged_into FROM patients WHERE id = ?", [id]) { throw Failure.merged(id, into: into) }
        }
        // OTHER's person: OTHER and every record merged into it earlier, with what each pointed at.
        let records = try db.query("SELECT id, merged_into FROM patients WHERE id = ? OR merged_into = ? ORDER BY id",
                                   [otherID, otherID]) { ($0.int64(0)!, $0.int64(1)) }
        var moved: [String: [Int64]] = [:]
        for table in Self.movedTables {
            moved[table] = try db.query("SELECT id FROM \(table) WHERE patient_id = ? ORDER BY id", [otherID]) { $0.int64(0)! }
            try db.execute("UPDATE \(table) SET patient_id = ? WHERE patient_id = ?", [keepID, otherID])
        }
        for table in Self.recordTables {
            try db.execute("UPDATE \(table) SET patient_id = ? WHERE patient_id = ?", [keepID, otherID])
        }
        try db.execute("UPDATE patients SET merged_into = ? WHERE id = ? OR merged_into = ?", [keepID, otherID, otherID])
        let selected = try db.scalarString("SELECT value FROM settings WHERE key = 'selected_patient'") == String(otherID)
        if selected { try db.execute("UPDATE settings SET value = ? WHERE key = 'selected_patient'", [String(keepID)]) }

        let recordsJSON = records.map { "{\"id\":\($0.0),\"merged_into\":\($0.1.map(String.init) ?? "null")}" }.joined(separator: ",")
        let movedJSON = moved.sorted { $0.key < $1.key }.map { "\"\($0.key)\":[\($0.value.map(String.init).joined(separator: ","))]" }
            .joined(separator: ",")
        let undo = "{\"records\":[\(recordsJSON)],\"moved\":{\(movedJSON)},\"selected\":\(selected)}"
        let stamp = Timestamps.now(now)
        try db.execute("INSERT INTO patient_merges (keep_id, other_id, undo, merged_at) VALUES (?, ?, ?, ?)",
                       [keepID, otherID, undo, stamp])
        return Merge(id: db.lastInsertRowID, keepID: keepID, otherID: otherID, mergedAt: stamp, undoneAt: nil)
    }

    /// Undoes a merge: OTHER's records are their own person again (those merged into OTHER before,
    /// into OTHER again), with every entry, document and sample series their sources brought (also
    /// those imported since the merge), the items moved, and the selection. Returns the merge.
    @discardableResult
    public func unmerge(_ mergeID: Int64, now: Date = Date()) throws -> Merge {
        guard let merge = try get(mergeID) else { throw Failure.noMerge(mergeID) }
        guard merge.undoneAt == nil else { throw Failure.alreadyUndone(mergeID) }
        // A later merge of KEEP into someone else moved OTHER's records along: undo that one first.
        if let into = try db.scalarInt("SELECT merged_into FROM patients WHERE id = ?", [merge.keepID]) {
            throw Failure.merged(merge.keepID, into: into)
        }
        let undo = try db.scalarString("SELECT undo FROM patient_merges WHERE id = ?", [mergeID]) ?? "{}"
        let records = try db.query("""
            SELECT json_extract(value, '$.id'), json_extract(value, '$.merged_into') FROM json_each(?, '$.records')
            """, [undo]) { ($0.int64(0)!, $0.int64(1)) }
        let recordIDs = records.map(\.0)
        let list = recordIDs.map(String.init).joined(separator: ",")
        for table in Self.recordTables {
            try db.execute("UPDATE \(table) SET patient_id = ? WHERE patient_id = ? AND source_patient_id IN (\(list))",
                           [merge.otherID, merge.keepID])
        }
        for (id, into) in records {
            try db.execute("UPDATE patients SET merged_into = ? WHERE id = ?", [into, id])
        }
        for table in Self.movedTables {
            let ids = try db.query("SELECT value FROM json_each(?, ?)", [undo, "$.moved.\(table)"]) { $0.int64(0)! }
            let update = try db.prepare("UPDATE \(table) SET patient_id = ? WHERE id = ? AND patient_id = ?")
            for id in ids {
                try update.bind([merge.otherID, id, merge.keepID])
                try update.step()
                update.reset()
            }
        }
        if try db.scalarInt("SELECT json_extract(?, '$.selected')", [undo]) == 1,
           try db.scalarString("SELECT value FROM settings WHERE key = 'selected_patient'") == String(merge.keepID) {
            try db.execute("UPDATE settings SET value = ? WHERE key = 'selected_patient'", [String(merge.otherID)])
        }
        let stamp = Timestamps.now(now)
        try db.execute("UPDATE patient_merges SET undone_at = ? WHERE id = ?", [stamp, mergeID])
        var undone = merge
        undone.undoneAt = stamp
        return undone
    }

    public func get(_ id: Int64) throws -> Merge? {
        try db.query("SELECT id, keep_id, other_id, merged_at, undone_at FROM patient_merges WHERE id = ?", [id], Self.row).first
    }

    /// Merges into a person (all, or those not undone), the latest first.
    public func merges(into keepID: Int64? = nil, includingUndone: Bool = true) throws -> [Merge] {
        var sql = "SELECT id, keep_id, other_id, merged_at, undone_at FROM patient_merges WHERE 1"
        var args: [DatabaseValueConvertible?] = []
        if let keepID { sql += " AND keep_id = ?"; args.append(keepID) }
        if !includingUndone { sql += " AND undone_at IS NULL" }
        return try db.query(sql + " ORDER BY id DESC", args, Self.row)
    }

    static func row(_ s: Statement) -> Merge {
        Merge(id: s.int64(0)!, keepID: s.int64(1)!, otherID: s.int64(2)!, mergedAt: s.string(3)!, undoneAt: s.string(4))
    }
}
