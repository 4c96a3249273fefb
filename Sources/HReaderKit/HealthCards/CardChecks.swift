import Foundation
import HReaderModel
import HReaderStore

/// The card checks of entries as every view shows them: an entry's own, else that of a copy of the
/// same fact (the badge's words are Model's `EntryVerification.badge`).
extension OpenVault {
    /// The card check of each of these entries that has one, by entry id: the entry's own, else
    /// (a fact several sources state) the first of its copies a card brought, as `entries list` shows it.
    public func cardChecks(of listed: [Entry]) throws -> [Int64: EntryVerification] {
        try read {
            let repository = HealthCardRepository(db)
            var found = try repository.verifications(of: listed.map(\.id))
            let rest = listed.filter { found[$0.id] == nil && !EntryRepository.isSample($0) }
            guard !rest.isEmpty, try repository.hasVerifications() else { return found }
            for entry in rest where try entries.factID(of: entry.id) != nil {
                let copies = try entries.copies(of: entry.id).map(\.entryID).filter { $0 != entry.id }
                guard !copies.isEmpty else { continue }
                let checks = try repository.verifications(of: copies)
                if let first = copies.lazy.compactMap({ checks[$0] }).first { found[entry.id] = first }
            }
            return found
        }
    }
}
