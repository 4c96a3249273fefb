import Foundation
import HReaderJSON
import HReaderModel
import HReaderStore

/// The verified badge: how an entry a SMART Health Card brought was checked, as every view shows it
/// (docs/sharing.md, "The verified badge"). Read from `entry_verifications` (`HealthCardRepository`),
/// never worked out again from the entry.
extension EntryVerification {
    /// The badge's words: "verified: signed by State IIS", "signed by https://…, not among your
    /// trusted issuers", "unverified: said to be from https://…, not checked".
    public var badge: String {
        switch status {
        case .verified: return "verified: signed by \(issuer ?? iss)"
        case .untrustedIssuer: return "signed by \(iss), not among your trusted issuers"
        case .unverified: return "unverified: said to be from \(issuer ?? iss), not checked"
        }
    }

    /// The badge in a page: `<span class="badge badge-verified" title="…">…</span>`, escaped.
    public var badgeHTML: String {
        let title = "SMART Health Card from \(iss), checked \(verifiedAt)"
        return "<span class=\"badge badge-\(status.rawValue)\" data-verification=\"\(status.rawValue)\" title=\"\(HTMLText.escape(title))\">"
            + "\(status == .verified ? "&#x2713; " : "")\(HTMLText.escape(badge))</span>"
    }
}

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
