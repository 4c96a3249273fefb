/// Where data came from. Migration 1 creates the `manual` source for what the user types in.
public struct SourceRepository {
    let db: Database

    public init(_ db: Database) { self.db = db }

    public func manualSourceID() throws -> Int64 {
        guard let id = try db.scalarInt("SELECT id FROM sources WHERE uuid = ?", [manualSourceUUID]) else {
            throw DatabaseError(code: 1, message: "the manual source is missing", sql: nil)
        }
        return id
    }
}
