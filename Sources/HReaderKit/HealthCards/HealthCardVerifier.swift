import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel
import HReaderNet
import HReaderRecords
import HReaderStore

/// Checks SMART Health Cards before anything of them is stored (docs/sharing.md, "Trust"):
///
/// 1. the issuer's keys: pinned by the user (`issuers add --jwks`), else fetched from
///    `ISS/.well-known/jwks.json` through the issuer host's queue, else the copy kept from the
///    last fetch; none at all → refused (exit 6) unless `--unverified`;
/// 2. the key the card names (`kid`, its thumbprint) among them, and the ES256 signature over
///    the card's header and payload with it; a key the issuer does not publish, or a signature
///    that does not verify → refused (exit 7);
/// 3. when the key carries an x5c certificate chain: its leaf is for this key and for `iss`, and
///    the chain validates up to the trust anchors the user gave for the issuer (`IssuerCertificates`);
///    else refused (exit 7);
/// 4. `nbf` not in the future;
/// 5. when the key has `crlVersion`, the key's revocation list: a card whose `rid` it lists
///    (issued before the listed time, when it gives one) → refused (exit 7);
/// 6. the issuer among the trusted ones → `verified`, else `untrusted-issuer`.
///
/// Nothing is written while checking: what was fetched is kept (`commit`) only with the import.
final class HealthCardVerifier {
    private let vault: OpenVault
    private let allowUnverified: Bool
    private let now: Date
    /// Per issuer: the keys found and how, so one import fetches each issuer's keys once.
    private var keySets: [String: KeySet] = [:]
    private var lists: [String: RevocationList] = [:]
    /// What to keep in the vault with the import: fetched keys and lists.
    private var fetchedKeys: [String: [IssuerKey]] = [:]
    private var fetchedLists: [(iss: String, list: RevocationList, rids: String)] = []
    private(set) var notes: [String] = []

    /// Seconds a card's `nbf` may be ahead of this machine's clock.
    static let clockSkew: TimeInterval = 300

    init(vault: OpenVault, allowUnverified: Bool, now: Date = Date()) {
        self.vault = vault
        self.allowUnverified = allowUnverified
        self.now = now
    }

    private struct KeySet {
        var keys: [IssuerKey]
        /// Where they came from: `pinned`, `fetched`, `kept` (the last fetch's copy: the issuer
        /// could not be reached), or nil: none to be had (`why`).
        var origin: String?
        var why: String?
    }

    /// The verification of each card, in order; throws the first refusal (nothing is written).
    func check(_ cards: [HealthCard]) throws -> [EntryVerification] {
        let stamp = RFC3339.utc(Int64(now.timeIntervalSince1970))
        var results: [EntryVerification] = []
        for (i, card) in cards.enumerated() {
            let which = cards.count == 1 ? "the card" : "card \(i + 1) of \(cards.count)"
            let trusted = try vault.read { try HealthCardRepository(vault.db).issuer(card.issuer) }
            func refuse(_ why: String) -> HReaderError {
                HReaderError(.integrity, "\(which) (issuer \(card.issuer)) \(why); nothing was imported")
            }
            let set = try keys(of: card.issuer, trusted: trusted)
            guard let origin = set.origin else {
                guard allowUnverified else {
                    throw HReaderError(.network, "\(which): the keys of its issuer \(card.issuer) cannot be had (\(set.why ?? "unknown")); "
                                       + "nothing was imported (--unverified imports it unchecked)")
                }
                results.append(EntryVerification(status: .unverified, iss: card.issuer, issuer: trusted?.name, kid: card.keyID, verifiedAt: stamp))
                notes.append("\(which) was imported unverified: its issuer's keys could not be had")
                continue
            }
            guard let key = set.keys.first(where: { $0.keyID == card.keyID }) else {
                if origin == "kept", allowUnverified {
                    results.append(EntryVerification(status: .unverified, iss: card.issuer, issuer: trusted?.name, kid: card.keyID, verifiedAt: stamp))
                    continue
                }
                if origin == "kept" {
                    throw HReaderError(.network, "\(which): its key \(card.keyID) is not among the keys kept for \(card.issuer), which cannot "
                                       + "be reached now (\(set.why ?? "")); nothing was imported (--unverified imports it unchecked)")
                }
                throw refuse("is signed with key \(card.keyID), which its issuer does not publish (\(origin == "pinned" ? "pinned keys" : "jwks.json")): "
                             + "it is forged or signed by someone else")
            }
            let (x, y) = key.coordinates
            let publicKey: P256PublicKey
            do { publicKey = try P256PublicKey(x: x, y: y) } catch { throw refuse("names key \(key.keyID), which is not a usable P-256 key") }
            guard publicKey.isValidSignature(card.signature, of: card.signingInput) else {
                throw refuse("does not verify: its signature does not match its content (the card was changed, or is forged)")
            }
            if let chain = key.certificateChain {
                let anchors = try vault.read { try SettingsRepository(vault.db).value(IssuerCertificates.settingKey(card.issuer)) }
                let (refusal, checked) = IssuerCertificates.check(chain: chain, key: publicKey, iss: card.issuer, anchorsPEM: anchors, at: now)
                if let refusal { throw refuse(refusal) }
                if !checked {
                    notes.append("\(which): its key's x5c certificate chain was not validated: you gave no trust anchors for \(card.issuer) "
                                 + "('hreader issuers add \(card.issuer) --ca FILE')")
                }
            }
            if TimeInterval(card.notBefore) > now.timeIntervalSince1970 + Self.clockSkew {
                throw refuse("is not valid before \(RFC3339.utc(card.notBefore)) (nbf), later than now")
            }
            if let version = key.crlVersion {
                switch try revocationList(iss: card.issuer, key: key, version: version) {
                case let .some(list):
                    if let rid = card.revocationID, list.revokes(revocationID: rid, notBefore: card.notBefore) {
                        throw refuse("is revoked by its issuer (rid \(rid) is on the revocation list of key \(key.keyID))")
                    }
                case .none:
                    guard allowUnverified else {
                        throw HReaderError(.network, "\(which): the revocation list of its issuer's key (\(card.issuer)/.well-known/crl/"
                                           + "\(key.keyID).json) cannot be had; nothing was imported (--unverified imports it unchecked)")
                    }
                    results.append(EntryVerification(status: .unverified, iss: card.issuer, issuer: trusted?.name, kid: card.keyID, verifiedAt: stamp))
                    continue
                }
            }
            let status: EntryVerification.Status = trusted == nil ? .untrustedIssuer : .verified
            if trusted == nil {
                notes.append("\(which) is signed by \(card.issuer), not among your trusted issuers ('hreader issuers add' trusts it)")
            }
            if origin == "kept" { notes.append("\(card.issuer) could not be reached; its keys kept from the last fetch were used") }
            results.append(EntryVerification(status: status, iss: card.issuer, issuer: trusted?.name, kid: card.keyID, verifiedAt: stamp))
        }
        return results
    }

    /// The issuer's keys: pinned, else fetched now, else kept from the last fetch.
    private func keys(of iss: String, trusted: HealthCardRepository.Issuer?) throws -> KeySet {
        if let found = keySets[iss] { return found }
        let stored = try vault.read { try HealthCardRepository(vault.db).keys(of: iss) }
        func parse(_ rows: [HealthCardRepository.StoredKey]) -> [IssuerKey] {
            rows.compactMap { row in (try? JSONParser.parse(row.jwk))?.object.flatMap { try? IssuerKey(jwk: $0) } }
        }
        var set: KeySet
        if trusted?.pinned == true {
            set = KeySet(keys: parse(stored.filter(\.pinned)), origin: "pinned")
        } else {
            do {
                let bytes = try HealthCardIssuerClient(iss: iss).keySet()
                let (keys, refused) = try IssuerKey.keySet(bytes)
                for why in refused { notes.append("\(iss)/.well-known/jwks.json: a key was passed over: \(why)") }
                fetchedKeys[iss] = keys
                set = KeySet(keys: keys, origin: "fetched")
            } catch let error as HealthCardError {
                set = fallback(stored, parse, why: "its jwks.json is unusable: \(error)")
            } catch let error as NetError {
                set = fallback(stored, parse, why: error.description)
            }
        }
        keySets[iss] = set
        return set
    }

    private func fallback(_ stored: [HealthCardRepository.StoredKey], _ parse: ([HealthCardRepository.StoredKey]) -> [IssuerKey],
                          why: String) -> KeySet {
        let kept = parse(stored.filter { !$0.pinned })
        return kept.isEmpty ? KeySet(keys: [], origin: nil, why: why) : KeySet(keys: kept, origin: "kept", why: why)
    }

    /// The key's revocation list, current for `version`: the kept one when its counter has reached
    /// the key's crlVersion, else fetched (and kept with the import); nil when it cannot be had.
    private func revocationList(iss: String, key: IssuerKey, version: Int) throws -> RevocationList? {
        let name = iss + " " + key.keyID
        if let found = lists[name] { return found }
        let kept = try vault.read { try HealthCardRepository(vault.db).revocationList(iss: iss, kid: key.keyID) }
        var list: RevocationList?
        if let kept, kept.counter >= version, let parsed = try? RevocationList(Self.keptListBytes(kept)) {
            list = parsed
        } else {
            do {
                let bytes = try HealthCardIssuerClient(iss: iss).revocationList(kid: key.keyID)
                let fetched = try RevocationList(bytes)
                guard fetched.keyID == key.keyID else {
                    throw HealthCardError.malformed("the list at crl/\(key.keyID).json is for key \(fetched.keyID)")
                }
                list = fetched
                fetchedLists.append((iss, fetched, String(decoding: bytes, as: UTF8.self)))
            } catch let error as HealthCardError {
                notes.append("\(iss): the revocation list of key \(key.keyID) is unusable: \(error)")
                list = kept.flatMap { try? RevocationList(Self.keptListBytes($0)) }
            } catch is NetError {
                // An older list still revokes what it lists.
                list = kept.flatMap { try? RevocationList(Self.keptListBytes($0)) }
                if list != nil { notes.append("\(iss): its revocation list could not be fetched; the one kept from the last fetch was used") }
            }
        }
        lists[name] = list
        return list
    }

    private static func keptListBytes(_ kept: (counter: Int, rids: String)) -> [UInt8] { Array(kept.rids.utf8) }

    /// Keeps what was fetched, in the import's transaction.
    func commit() throws {
        let repository = HealthCardRepository(vault.db)
        for (iss, keys) in fetchedKeys {
            try repository.replaceKeys(of: iss, pinned: false, with: keys.map { ($0.keyID, JSONValue.object($0.jwk).serialized(sortingKeys: true)) },
                                       now: now)
        }
        for item in fetchedLists {
            try repository.setRevocationList(iss: item.iss, kid: item.list.keyID, counter: item.list.counter, rids: item.rids, now: now)
        }
    }
}
