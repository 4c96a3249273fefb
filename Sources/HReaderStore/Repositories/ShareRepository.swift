import Foundation

/// The SMART Health Links the user has shared (migration 11, docs/sharing.md).
///
///     let shares = ShareRepository(db)
///     try shares.insert(share)
///     try shares.revoke(id: share.id)
public struct ShareRepository {
    let db: Database
    public init(_ db: Database) { self.db = db }

    public struct Share: Equatable, Sendable {
        public enum Mode: String, Sendable { case `static`, served }

        public let id: String
        public let patientID: Int64?
        public let label: String?
        public let created: String
        /// RFC 3339; nil: never.
        public let expires: String?
        public let flag: String
        public let mode: Mode
        public let url: String
        public let filePath: String?
        public let key: [UInt8]
        public let content: String?
        public let passcodeHash: String?
        public let attemptsLeft: Int?
        public let revoked: String?
        public let accesses: Int
        public let lastAccess: String?

        public init(id: String, patientID: Int64?, label: String?, created: String, expires: String?, flag: String, mode: Mode, url: String,
                    filePath: String?, key: [UInt8], content: String?, passcodeHash: String?, attemptsLeft: Int?, revoked: String? = nil,
                    accesses: Int = 0, lastAccess: String? = nil) {
            self.id = id; self.patientID = patientID; self.label = label; self.created = created; self.expires = expires
            self.flag = flag; self.mode = mode; self.url = url; self.filePath = filePath; self.key = key; self.content = content
            self.passcodeHash = passcodeHash; self.attemptsLeft = attemptsLeft; self.revoked = revoked; self.accesses = accesses
            self.lastAccess = lastAccess
        }
    }

    public func insert(_ share: Share) throws {
        try db.execute("""
            INSERT INTO shares (id, patient_id, label, created, expires, flag, mode, url, file_path, link_key, content, passcode_hash,
                                attempts_left)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [share.id, share.patientID, share.label, share.created, share.expires, share.flag, share.mode.rawValue, share.url,
                  share.filePath, share.key, share.content, share.passcodeHash, share.attemptsLeft.map { Int64($0) }])
    }

    private static let columns = """
        id, patient_id, label, created, expires, flag, mode, url, file_path, link_key, content, passcode_hash, attempts_left, revoked,
        accesses, last_access
        """

    /// Every share, newest first, without the served JWE (a listing needs none).
    public func all() throws -> [Share] {
        try db.query("SELECT \(Self.columns.replacingOccurrences(of: "content", with: "NULL")) FROM shares ORDER BY created DESC, id",
                     [], Self.share)
    }

    public func share(id: String) throws -> Share? {
        try db.query("SELECT \(Self.columns) FROM shares WHERE id = ?", [id], Self.share).first
    }

    /// Marks the share revoked (and drops its served content); false when unknown or already revoked.
    @discardableResult
    public func revoke(id: String, now: Date = Date()) throws -> Bool {
        try db.execute("UPDATE shares SET revoked = ?, content = NULL WHERE id = ? AND revoked IS NULL", [Timestamps.now(now), id])
        return db.changes > 0
    }

    public func recordAccess(id: String, now: Date = Date()) throws {
        try db.execute("UPDATE shares SET accesses = accesses + 1, last_access = ? WHERE id = ?", [Timestamps.now(now), id])
    }

    public func setAttemptsLeft(id: String, _ attempts: Int) throws {
        try db.execute("UPDATE shares SET attempts_left = ? WHERE id = ?", [Int64(attempts), id])
    }

    private static func share(_ row: Statement) -> Share {
        Share(id: row.string(0) ?? "", patientID: row.int64(1), label: row.string(2), created: row.string(3) ?? "", expires: row.string(4),
              flag: row.string(5) ?? "", mode: Share.Mode(rawValue: row.string(6) ?? "") ?? .served, url: row.string(7) ?? "",
              filePath: row.string(8), key: row.blob(9) ?? [], content: row.string(10), passcodeHash: row.string(11),
              attemptsLeft: row.int(12), revoked: row.string(13), accesses: row.int(14) ?? 0, lastAccess: row.string(15))
    }
}
