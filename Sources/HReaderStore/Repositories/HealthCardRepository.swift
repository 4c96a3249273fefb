import Foundation
import HReaderModel

/// The SMART Health Card side of the vault (migration 10, docs/sharing.md): the issuers the user
/// trusts, issuers' keys and revocation lists kept from their last fetch, and how each entry a
/// card brought was verified.
///
///     let cards = HealthCardRepository(db)
///     try cards.addIssuer(iss: "https://spec.smarthealth.cards/examples/issuer", name: "Example", pinned: false, origin: "user")
///     try cards.setVerification(EntryVerification(status: .verified, …), entryID: 12)
public struct HealthCardRepository {
    let db: Database
    public init(_ db: Database) { self.db = db }

    // MARK: Trusted issuers

    public struct Issuer: Equatable, Sendable {
        public let iss: String
        public let name: String?
        public let pinned: Bool
        public let origin: String
        public let added: String
    }

    /// Adds the issuer, or updates its name, pinning and origin (a name already given is kept
    /// when `name` is nil).
    public func addIssuer(iss: String, name: String?, pinned: Bool, origin: String, now: Date = Date()) throws {
        try db.execute("""
            INSERT INTO card_issuers (iss, name, pinned, origin, added) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(iss) DO UPDATE SET name = coalesce(excluded.name, card_issuers.name),
                pinned = max(card_issuers.pinned, excluded.pinned), origin = excluded.origin
            """, [iss, name, Int64(pinned ? 1 : 0), origin, Timestamps.now(now)])
    }

    public func issuer(_ iss: String) throws -> Issuer? {
        try db.query("SELECT iss, name, pinned, origin, added FROM card_issuers WHERE iss = ?", [iss], Self.issuer).first
    }

    public func issuers() throws -> [Issuer] {
        try db.query("SELECT iss, name, pinned, origin, added FROM card_issuers ORDER BY iss", [], Self.issuer)
    }

    /// Removes the issuer from the trusted ones, and the keys and lists kept for it. Entries
    /// already imported keep the verification they had. False when it was not there.
    @discardableResult
    public func removeIssuer(_ iss: String) throws -> Bool {
        let present = try issuer(iss) != nil
        try db.execute("DELETE FROM card_issuers WHERE iss = ?", [iss])
        try db.execute("DELETE FROM card_issuer_keys WHERE iss = ?", [iss])
        try db.execute("DELETE FROM card_revocation_lists WHERE iss = ?", [iss])
        return present
    }

    private static func issuer(_ row: Statement) -> Issuer {
        Issuer(iss: row.string(0) ?? "", name: row.string(1), pinned: row.int64(2) == 1, origin: row.string(3) ?? "user", added: row.string(4) ?? "")
    }

    // MARK: Keys

    public struct StoredKey: Equatable, Sendable {
        public let kid: String
        /// The JWK as published (JSON text).
        public let jwk: String
        public let pinned: Bool
        public let fetched: String
    }

    /// The issuer's kept keys.
    public func keys(of iss: String) throws -> [StoredKey] {
        try db.query("SELECT kid, jwk, pinned, fetched FROM card_issuer_keys WHERE iss = ? ORDER BY kid", [iss]) { row in
            StoredKey(kid: row.string(0) ?? "", jwk: row.string(1) ?? "", pinned: row.int64(2) == 1, fetched: row.string(3) ?? "")
        }
    }

    /// Replaces the issuer's keys of this kind (pinned, or fetched) with `keys` (kid, JWK text).
    public func replaceKeys(of iss: String, pinned: Bool, with keys: [(kid: String, jwk: String)], now: Date = Date()) throws {
        try db.execute("DELETE FROM card_issuer_keys WHERE iss = ? AND pinned = ?", [iss, Int64(pinned ? 1 : 0)])
        let stamp = Timestamps.now(now)
        for key in keys {
            try db.execute("""
                INSERT INTO card_issuer_keys (iss, kid, jwk, pinned, fetched) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(iss, kid) DO UPDATE SET jwk = excluded.jwk, pinned = max(card_issuer_keys.pinned, excluded.pinned),
                    fetched = excluded.fetched
                """, [iss, key.kid, key.jwk, Int64(pinned ? 1 : 0), stamp])
        }
    }

    // MARK: Revocation lists

    public func revocationList(iss: String, kid: String) throws -> (counter: Int, rids: String)? {
        try db.query("SELECT ctr, list FROM card_revocation_lists WHERE iss = ? AND kid = ?", [iss, kid]) { row in
            (Int(row.int64(0) ?? 0), row.string(1) ?? "[]")
        }.first
    }

    public func setRevocationList(iss: String, kid: String, counter: Int, rids: String, now: Date = Date()) throws {
        try db.execute("""
            INSERT INTO card_revocation_lists (iss, kid, ctr, list, fetched) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(iss, kid) DO UPDATE SET ctr = excluded.ctr, list = excluded.list, fetched = excluded.fetched
            """, [iss, kid, Int64(counter), rids, Timestamps.now(now)])
    }

    // MARK: Entries' verification

    public func setVerification(_ verification: EntryVerification, entryID: Int64) throws {
        try db.execute("""
            INSERT INTO entry_verifications (entry_id, status, iss, issuer, kid, verified_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(entry_id) DO UPDATE SET status = excluded.status, iss = excluded.iss, issuer = excluded.issuer,
                kid = excluded.kid, verified_at = excluded.verified_at
            """, [entryID, verification.status.rawValue, verification.iss, verification.issuer, verification.kid, verification.verifiedAt])
    }

    // The cards' entries are the outer loop (CROSS JOIN keeps SQLite from reordering it): they are few,
    // and each finds its entry by id. Left to choose, SQLite walked every entry of the patient through
    // `entries_patient_source` and read each row for `user_deleted`: a third of `hreader summary`'s
    // time on a vault of 10M samples (thousands of pages decrypted for an empty answer).
    static let patientVerificationsSQL = """
        SELECT v.entry_id, v.status, v.iss, v.issuer, v.kid, v.verified_at FROM entry_verifications v CROSS JOIN entries e ON e.id = v.entry_id
        WHERE e.patient_id = ?
        """
    static let verificationCountsSQL = """
        SELECT v.status, v.iss, v.issuer, COUNT(*), MAX(v.verified_at) FROM entry_verifications v CROSS JOIN entries e ON e.id = v.entry_id
        WHERE e.patient_id = ? AND e.user_deleted = 0 GROUP BY v.status, v.iss, v.issuer ORDER BY v.status, v.iss
        """

    /// Whether any entry of the vault came from a card (the views skip looking further when none did).
    public func hasVerifications() throws -> Bool {
        try db.query("SELECT EXISTS (SELECT 1 FROM entry_verifications)", []) { $0.int64(0) == 1 }.first ?? false
    }

    /// The verification of every entry of the patient a card brought, by entry id (few: a card
    /// holds a handful of entries; the timeline's detail reads them at once).
    public func verifications(patientID: Int64) throws -> [Int64: EntryVerification] {
        var found: [Int64: EntryVerification] = [:]
        try db.forEachRow(Self.patientVerificationsSQL, [patientID]) { row in
            guard let id = row.int64(0), let status = row.string(1).flatMap(EntryVerification.Status.init(rawValue:)) else { return }
            found[id] = EntryVerification(status: status, iss: row.string(2) ?? "", issuer: row.string(3), kid: row.string(4), verifiedAt: row.string(5) ?? "")
        }
        return found
    }

    /// How many of the patient's entries (struck ones left out) each issuer's cards brought, by
    /// status, issuer and name: the terminal summary's "Health cards:" line. One indexed join.
    public func verificationCounts(patientID: Int64) throws -> [(verification: EntryVerification, count: Int)] {
        try db.query(Self.verificationCountsSQL, [patientID]) { row in
            (EntryVerification(status: row.string(0).flatMap(EntryVerification.Status.init(rawValue:)) ?? .unverified, iss: row.string(1) ?? "",
                               issuer: row.string(2), kid: nil, verifiedAt: row.string(4) ?? ""), Int(row.int64(3) ?? 0))
        }
    }

    /// The verification of each of these entries that has one.
    public func verifications(of entryIDs: [Int64]) throws -> [Int64: EntryVerification] {
        var found: [Int64: EntryVerification] = [:]
        // In slices: SQLite's bound-parameter limit.
        for start in stride(from: 0, to: entryIDs.count, by: 500) {
            let slice = Array(entryIDs[start..<min(start + 500, entryIDs.count)])
            let marks = Array(repeating: "?", count: slice.count).joined(separator: ",")
            try db.forEachRow("SELECT entry_id, status, iss, issuer, kid, verified_at FROM entry_verifications WHERE entry_id IN (\(marks))",
                              slice) { row in
                guard let id = row.int64(0), let status = row.string(1).flatMap(EntryVerification.Status.init(rawValue:)) else { return }
                found[id] = EntryVerification(status: status, iss: row.string(2) ?? "", issuer: row.string(3), kid: row.string(4),
                                              verifiedAt: row.string(5) ?? "")
            }
        }
        return found
    }
}
