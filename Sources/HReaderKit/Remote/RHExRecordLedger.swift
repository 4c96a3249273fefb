import Foundation
import HReaderNet
import HReaderRecords
import HReaderStore

/// What one run has seen of an RHEx server: its patient feed (read once, when the first record
/// needs it) and the records read from it, earlier runs' included, so that each record the server
/// answers is checked against the patient it was asked for (`RHExRecordCheck`). One per connection;
/// a sync's lane for the host uses it from one task at a time, the lock keeps that a property of
/// the type rather than of the caller.
final class RHExRecordLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var check: RHExRecordCheck?
    private var earlier: [(feedID: String, identities: [String])] = []

    /// The feed as `--all` read it already (no second request).
    func use(feed: [RHExFeedEntry]) {
        lock.withLock { if check == nil { check = Self.made(feed: feed, earlier: earlier) } }
    }

    /// The records of this source already in the vault, with the feed id each was read under.
    func remember(_ stored: [(feedID: String, identities: [String])]) {
        lock.withLock {
            earlier += stored
            for record in stored { check?.remember(record.identities, readUnder: record.feedID) }
        }
    }

    /// Throws when `record` is not the patient of feed id `asked`; else remembers it.
    func admit(_ record: MappedRecord, askedFor asked: String, client: RHExClient, server: ServerURL) async throws {
        if lock.withLock({ check == nil }) {
            // A server without a readable feed still has its records compared with each other.
            let feed = try? await client.patients()
            lock.withLock { if check == nil { check = Self.made(feed: feed, earlier: earlier) } }
        }
        let refusal = lock.withLock { check!.admit(record.patient, askedFor: asked) }
        if let refusal {
            throw HReaderError(.network, "the RHEx server \(server) answered the request for record \(asked) with the record of another "
                               + "patient (\(refusal)); it was not imported")
        }
    }

    private static func made(feed: [RHExFeedEntry]?, earlier: [(feedID: String, identities: [String])]) -> RHExRecordCheck {
        var check = RHExRecordCheck(feed: feed)
        for record in earlier { check.remember(record.identities, readUnder: record.feedID) }
        return check
    }
}

extension OpenVault {
    /// The ids each stored record of an RHEx source gives itself (`_id`, `id`, medical record
    /// number), read from the record kept in the vault, by the feed id it was imported under.
    func rhexIdentities(sourceID: Int64) throws -> [(feedID: String, identities: [String])] {
        try read {
            try db.query("""
                SELECT remote_id,
                       CASE json_type(raw, '$._id') WHEN 'object' THEN json_extract(raw, '$._id."$oid"') ELSE json_extract(raw, '$._id') END,
                       CASE json_type(raw, '$.id') WHEN 'object' THEN json_extract(raw, '$.id."$oid"') ELSE json_extract(raw, '$.id') END,
                       json_extract(raw, '$.medical_record_number')
                FROM patients WHERE source_id = ? AND json_valid(raw)
                """, [sourceID]) { row in
                var identities: [String] = []
                for column in 1...3 {
                    if let text = row.string(column)?.trimmingCharacters(in: .whitespaces), !text.isEmpty, !identities.contains(text) {
                        identities.append(text)
                    }
                }
                return (row.string(0)!, identities)
            }
        }
    }
}
