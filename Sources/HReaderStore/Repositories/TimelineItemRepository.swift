import Foundation
import HReaderModel

/// Items the user posts to the timeline (levels, medications, regimens), as hReader's web view did.
public struct TimelineItemRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    static func row(_ s: Statement) -> TimelineItem {
        TimelineItem(id: s.int64(0)!, uuid: s.string(1)!, patientID: s.int64(2)!, type: s.string(3)!, data: s.string(4)!,
                     time: s.int64(5)!, created: s.string(6)!)
    }

    /// Stores an item; `data` must be a JSON object (the schema checks it).
    @discardableResult
    public func add(patientID: Int64, type: String, data: String, time: Int64, now: Date = Date()) throws -> TimelineItem {
        try db.execute("INSERT INTO timeline_items (uuid, patient_id, type, data, time_epoch, created) VALUES (?, ?, ?, ?, ?, ?)",
                       [UUID().uuidString.lowercased(), patientID, type, data, time, Timestamps.now(now)])
        return try db.query("SELECT id, uuid, patient_id, type, data, time_epoch, created FROM timeline_items WHERE id = ?",
                            [db.lastInsertRowID], Self.row)[0]
    }

    /// Items of a patient with time in [from, to], in time order.
    public func list(patientID: Int64, from: Int64, to: Int64, types: [String]? = nil) throws -> [TimelineItem] {
        var sql = "SELECT id, uuid, patient_id, type, data, time_epoch, created FROM timeline_items WHERE patient_id = ? AND time_epoch BETWEEN ? AND ?"
        var args: [DatabaseValueConvertible?] = [patientID, from, to]
        if let types, !types.isEmpty {
            sql += " AND type IN (\(Array(repeating: "?", count: types.count).joined(separator: ",")))"
            args += types.map { $0 as DatabaseValueConvertible? }
        }
        return try db.query(sql + " ORDER BY time_epoch, id", args, Self.row)
    }
}
