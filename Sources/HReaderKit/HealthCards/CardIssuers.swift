import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// `hreader issuers …`: the SMART Health Card issuers the user trusts (docs/sharing.md, "Trust").
extension OpenVault {
    public typealias CardIssuer = HealthCardRepository.Issuer

    /// An issuer's `iss` as cards name it: an https URL (http only to this machine), no trailing
    /// slash, no query or fragment.
    public static func normalizedIssuer(_ text: String) throws -> String {
        var iss = text.trimmingCharacters(in: .whitespaces)
        while iss.hasSuffix("/") { iss.removeLast() }
        guard let url = URL(string: iss), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty,
              url.query == nil, url.fragment == nil, url.user == nil else {
            throw HReaderError.usage("\(text) is not an issuer URL (https://issuer.example.org/path)")
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw HReaderError.usage("\(text): an issuer is an https URL (plain http only on this machine)")
        }
        return iss
    }

    /// Trusts `iss` (again: updates its name); with `jwks`, pins its keys: cards from it are then
    /// checked with these keys only, never fetched ones. Returns the issuer and how many keys were pinned.
    @discardableResult
    public func addIssuer(_ text: String, name: String?, jwks: URL?, ca: URL? = nil) throws -> (issuer: CardIssuer, pinnedKeys: Int) {
        let iss = try Self.normalizedIssuer(text)
        // The trust anchors of its keys' x5c chains: every certificate parsed before anything is kept.
        let anchors = try ca.map(IssuerCertificates.anchors(from:))
        var pinned: [IssuerKey] = []
        if let jwks {
            guard let data = FileManager.default.contents(atPath: jwks.path) else { throw HReaderError.usage("cannot read \(jwks.path)") }
            do {
                let (keys, refused) = try IssuerKey.keySet(Array(data))
                guard !keys.isEmpty else {
                    throw HReaderError.badInput("\(jwks.lastPathComponent) holds no usable ES256 key" + (refused.first.map { ": \($0)" } ?? ""))
                }
                pinned = keys
            } catch let error as HealthCardError {
                throw HReaderError.badInput("\(jwks.lastPathComponent): \(error)")
            }
        }
        return try write {
            let repository = HealthCardRepository(db)
            try repository.addIssuer(iss: iss, name: name.flatMap { $0.isEmpty ? nil : $0 }, pinned: jwks != nil, origin: "user")
            if jwks != nil {
                try repository.replaceKeys(of: iss, pinned: true, with: pinned.map { ($0.keyID, JSONValue.object($0.jwk).serialized(sortingKeys: true)) })
            }
            if let anchors {
                try SettingsRepository(db).set(IssuerCertificates.settingKey(iss), X509Certificate.pem(anchors))
            }
            let detail = [jwks != nil ? "\(pinned.count) pinned keys" : nil, anchors.map { "\($0.count) trust anchors" }].compactMap { $0 }
            try audit.record("issuers.add", subject: iss, detail: detail.isEmpty ? nil : detail.joined(separator: ", "))
            return (try repository.issuer(iss)!, pinned.count)
        }
    }

    public func cardIssuers() throws -> [CardIssuer] { try read { try HealthCardRepository(db).issuers() } }

    /// How many trust anchors the user gave for the issuer's x5c chains (`issuers add --ca`).
    public func cardIssuerAnchorCount(_ iss: String) throws -> Int {
        try read {
            guard let pem = try SettingsRepository(db).value(IssuerCertificates.settingKey(iss)) else { return 0 }
            return (try? X509Certificate.derBlocks(pem: pem).count) ?? 0
        }
    }

    /// The keys kept for an issuer (pinned or fetched), by kid.
    public func cardIssuerKeys(_ iss: String) throws -> [HealthCardRepository.StoredKey] {
        try read { try HealthCardRepository(db).keys(of: iss) }
    }

    public func removeIssuer(_ text: String) throws {
        var iss = text.trimmingCharacters(in: .whitespaces)
        while iss.hasSuffix("/") { iss.removeLast() }
        let removed = try write {
            let removed = try HealthCardRepository(db).removeIssuer(iss)
            try SettingsRepository(db).set(IssuerCertificates.settingKey(iss), nil)
            if removed { try audit.record("issuers.remove", subject: iss) }
            return removed
        }
        guard removed else { throw HReaderError.usage("\(text) is not among your trusted issuers; see 'hreader issuers list'") }
    }

    /// Trusts every issuer of a trust framework's directory (`{"participating_issuers": [{"iss",
    /// "name"}, …]}`, as the VCI directory publishes it). Returns how many were new and how many
    /// were known (their names updated); entries that are no issuer URL are refused, before any is added.
    public func importIssuerDirectory(_ url: URL) throws -> (added: Int, updated: Int) {
        guard let data = FileManager.default.contents(atPath: url.path) else { throw HReaderError.usage("cannot read \(url.path)") }
        let name = url.lastPathComponent
        guard let object = (try? JSONParser.parse(data, duplicateNames: .refused))?.object,
              let list = object["participating_issuers"]?.array else {
            throw HReaderError.badInput("\(name) is not an issuer directory (a JSON object with a participating_issuers array)")
        }
        var issuers: [(iss: String, name: String?)] = []
        for (i, item) in list.enumerated() {
            guard let entry = item.object, let text = entry["iss"]?.string else {
                throw HReaderError.badInput("\(name): participating_issuers[\(i)] has no iss; nothing was imported")
            }
            let iss: String
            do { iss = try Self.normalizedIssuer(text) } catch let error as HReaderError {
                throw HReaderError.badInput("\(name): participating_issuers[\(i)]: \(error.message); nothing was imported")
            }
            issuers.append((iss, entry["name"]?.string.flatMap { $0.isEmpty ? nil : $0 }))
        }
        return try write {
            let repository = HealthCardRepository(db)
            var added = 0, updated = 0
            for issuer in issuers {
                if try repository.issuer(issuer.iss) == nil { added += 1 } else { updated += 1 }
                try repository.addIssuer(iss: issuer.iss, name: issuer.name, pinned: false, origin: String(name.prefix(200)))
            }
            try audit.record("issuers.import-directory", subject: name, detail: "\(added) added, \(updated) updated")
            return (added, updated)
        }
    }
}

extension EntryVerification {
    /// `{"status", "iss", "issuer", "kid", "verified_at"}` (issuer and kid null when unknown).
    public var jsonValue: JSONValue {
        .object([("status", .string(status.rawValue)), ("iss", .string(iss)), ("issuer", issuer.map(JSONValue.string) ?? .null),
                 ("kid", kid.map(JSONValue.string) ?? .null), ("verified_at", .string(verifiedAt))])
    }

    /// One line for a person: "verified: signed by Example Clinic (https://…)".
    public var summary: String {
        let who = issuer.map { "\($0) (\(iss))" } ?? iss
        switch status {
        case .verified: return "verified: signed by \(who), a trusted issuer, on checking at \(verifiedAt)"
        case .untrustedIssuer: return "signed by \(iss), not among your trusted issuers"
        case .unverified: return "unverified: said to be from \(who); its signature could not be checked (imported with --unverified)"
        }
    }
}
