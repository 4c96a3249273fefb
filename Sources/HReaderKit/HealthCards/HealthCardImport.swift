import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// Reading the cards of a file for `import --file` (docs/sharing.md).
enum HealthCardImport {
    /// Every card of the file, parsed. A file that is not what it claims (no cards, a QR chunk
    /// missing) is bad input (exit 5); a card that cannot be read as a signed health card is
    /// refused as changed or forged (exit 7). Either way nothing is imported.
    static func cards(in data: Data, name: String) throws -> [HealthCard] {
        let compact: [String]
        do { compact = try HealthCardFile.credentials(in: data) } catch {
            throw HReaderError.badInput("\(name): \(error); nothing was imported")
        }
        return try compact.enumerated().map { i, jws in
            do { return try HealthCard(compact: jws.trimmingCharacters(in: .whitespacesAndNewlines)) } catch {
                let which = compact.count == 1 ? "the card" : "card \(i + 1) of \(compact.count)"
                throw HReaderError(.integrity, "\(name): \(which) is refused: \(error); nothing was imported")
            }
        }
    }

    /// "2 SMART Health Cards: 1 verified, 1 signed by an issuer not among your trusted ones".
    static func describe(_ checked: [EntryVerification]) -> String {
        let counts = Dictionary(grouping: checked, by: \.status).mapValues(\.count)
        var parts: [String] = []
        if let n = counts[.verified] { parts.append("\(n) verified") }
        if let n = counts[.untrustedIssuer] { parts.append("\(n) signed by an issuer not among your trusted ones") }
        if let n = counts[.unverified] { parts.append("\(n) not verified (--unverified)") }
        return "\(checked.count) SMART Health Card\(checked.count == 1 ? "" : "s"): " + parts.joined(separator: ", ")
    }
}
