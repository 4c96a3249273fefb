/// How an entry brought by a SMART Health Card was checked (`entries list --json`'s `verification`),
/// and the verified badge that every view shows for it (docs/sharing.md, "The verified badge"). Read
/// from the vault's `entry_verifications` (Store's `HealthCardRepository`), never worked out again
/// from the entry.
public struct EntryVerification: Equatable, Sendable {
    public enum Status: String, Sendable {
        /// The signature verifies with the issuer's key, and the issuer is among the trusted ones.
        case verified
        /// The signature verifies, but the issuer is not among the trusted ones.
        case untrustedIssuer = "untrusted-issuer"
        /// Imported with `--unverified`: the issuer's keys could not be had, nothing was checked.
        case unverified
    }

    public let status: Status
    public let iss: String
    /// The trusted issuer's name.
    public let issuer: String?
    public let kid: String?
    /// RFC 3339, UTC.
    public let verifiedAt: String

    public init(status: Status, iss: String, issuer: String?, kid: String?, verifiedAt: String) {
        self.status = status; self.iss = iss; self.issuer = issuer; self.kid = kid; self.verifiedAt = verifiedAt
    }
}

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
