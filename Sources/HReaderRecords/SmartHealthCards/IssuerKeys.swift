import Foundation
import HReaderCrypto
import HReaderJSON

/// One public key of a SMART Health Card issuer, from its JWK Set (`ISS/.well-known/jwks.json`, or
/// a file the user pins): an EC P-256 key for ES256 whose `kid` is its own thumbprint.
public struct IssuerKey: Sendable, Equatable {
    public let keyID: String
    /// base64url, 32 bytes each once decoded.
    public let x: String
    public let y: String
    /// Present when the issuer publishes a revocation list for this key (`ISS/.well-known/crl/KID.json`);
    /// it grows each time the list changes.
    public let crlVersion: Int?
    /// The JWK as published (kept in the vault's cache).
    public let jwk: JSONObject
    /// The key's X.509 certificate chain (`x5c`: DER certificates, the leaf first), when the issuer
    /// publishes one: checked against the trust anchors the user gave for the issuer.
    public let certificateChain: [[UInt8]]?

    /// The key's bytes, for `P256PublicKey`.
    public var coordinates: (x: [UInt8], y: [UInt8]) { (Base64URL.decode(x) ?? [], Base64URL.decode(y) ?? []) }

    /// A JWK, checked: EC, P-256, not marked for anything but signatures with ES256, x and y of 32
    /// bytes, and `kid` its RFC 7638 thumbprint. A key carrying a private part (`d`) is refused: an
    /// issuer that publishes it has lost it.
    public init(jwk: JSONObject) throws(HealthCardError) {
        let kid = jwk["kid"]?.string ?? ""
        let name = kid.isEmpty ? "a key without kid" : "key \(kid)"
        guard jwk["kty"]?.string == "EC", jwk["crv"]?.string == "P-256" else {
            throw .malformed("\(name) is not an EC P-256 key (kty EC, crv P-256)")
        }
        if let alg = jwk["alg"]?.string, alg != "ES256" { throw .malformed("\(name) is for \(alg), not ES256") }
        if let use = jwk["use"]?.string, use != "sig" { throw .malformed("\(name) is for use \(use), not sig") }
        guard jwk.present("d") == nil else { throw .malformed("\(name) carries its private part (d): the issuer has published its secret") }
        guard let x = jwk["x"]?.string, let y = jwk["y"]?.string, Base64URL.decode(x)?.count == 32, Base64URL.decode(y)?.count == 32 else {
            throw .malformed("\(name): x and y must be base64url of 32 bytes each")
        }
        let thumbprint = JWKThumbprint.ellipticCurve(crv: "P-256", x: x, y: y)
        guard kid == thumbprint else { throw .malformed("\(name): its kid is not its JWK thumbprint (\(thumbprint))") }
        var crlVersion: Int?
        if let value = jwk.present("crlVersion") {
            guard let version = value.int, version >= 0 else { throw .malformed("\(name): crlVersion is not a whole number") }
            crlVersion = version
        }
        var chain: [[UInt8]]?
        if let value = jwk.present("x5c") {
            // Standard base64 (RFC 7517 §4.7, not base64url), each a DER certificate.
            guard let list = value.array, !list.isEmpty, list.count <= 10 else { throw .malformed("\(name): x5c is not a list of 1 to 10 certificates") }
            chain = try list.map { item throws(HealthCardError) in
                guard let text = item.string, text.utf8.count <= 16_384, let der = Self.base64(text), !der.isEmpty else {
                    throw .malformed("\(name): an x5c certificate is not base64 DER")
                }
                return der
            }
        }
        certificateChain = chain
        keyID = kid
        self.x = x
        self.y = y
        self.crlVersion = crlVersion
        self.jwk = jwk
    }

    /// Standard base64 with padding, as x5c writes it.
    static func base64(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2b || $0 == 0x2f || $0 == 0x3d }),
              let data = Data(base64Encoded: text) else { return nil }
        return Array(data)
    }

    /// The keys of a JWK Set (`{"keys": […]}`), the unusable ones with why.
    public static func keySet(_ bytes: [UInt8]) throws(HealthCardError) -> (keys: [IssuerKey], refused: [String]) {
        guard let set = try? JSONParser.parse(bytes, duplicateNames: .refused).object, let list = set["keys"]?.array else {
            throw .malformed("not a JWK Set (a JSON object with a keys array)")
        }
        var keys: [IssuerKey] = [], refused: [String] = []
        for (i, item) in list.enumerated() {
            guard let jwk = item.object else { refused.append("keys[\(i)] is not an object"); continue }
            do { keys.append(try IssuerKey(jwk: jwk)) } catch { refused.append(error.description) }
        }
        return (keys, refused)
    }
}

/// An issuer's card revocation list for one key (`ISS/.well-known/crl/KID.json`):
/// `{"kid", "method": "rid", "ctr", "rids": ["<rid>" or "<rid>.<timestamp>", …]}`. A listed rid
/// with a timestamp revokes the cards issued (`nbf`) before that time; without one, every card.
public struct RevocationList: Sendable, Equatable {
    public let keyID: String
    /// The list's version: the key's `crlVersion` when the list is current.
    public let counter: Int
    /// rid → the time before which its cards are revoked (nil: all of them).
    public let revoked: [String: Int64?]

    public init(_ bytes: [UInt8]) throws(HealthCardError) {
        guard let list = try? JSONParser.parse(bytes, duplicateNames: .refused).object else {
            throw .malformed("the revocation list is not a JSON object")
        }
        guard let kid = list["kid"]?.string, !kid.isEmpty else { throw .malformed("the revocation list names no key (kid)") }
        guard (list["method"]?.string ?? "rid") == "rid" else {
            throw .malformed("the revocation list uses method \(list["method"]?.string ?? ""), which this reader does not know (only rid)")
        }
        guard let counter = list["ctr"]?.int, counter >= 0 else { throw .malformed("the revocation list has no counter (ctr)") }
        guard let rids = list["rids"]?.array else { throw .malformed("the revocation list has no rids array") }
        var revoked: [String: Int64?] = [:]
        for item in rids {
            guard let text = item.string else { throw .malformed("the revocation list's rids holds \(item.kindDescription), expected strings") }
            let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
            let rid = String(parts[0])
            guard Self.isRevocationID(rid) else { throw .malformed("the revocation list's rid \"\(text.prefix(40))\" is not base64url of at most 24 characters") }
            var before: Int64?
            if parts.count == 2 {
                guard let time = Int64(parts[1]) else { throw .malformed("the revocation list's rid \"\(text.prefix(40))\" has a timestamp that is not a number") }
                before = time
            }
            // Listed twice: the wider revocation wins (no timestamp, or the later one).
            if let existing = revoked[rid] {
                guard let old = existing, let new = before else { revoked[rid] = .some(nil); continue }
                revoked[rid] = max(old, new)
            } else {
                revoked[rid] = before
            }
        }
        keyID = kid
        self.counter = counter
        self.revoked = revoked
    }

    /// Whether the list revokes a card with this rid, issued at `notBefore`.
    public func revokes(revocationID rid: String, notBefore: Int64) -> Bool {
        guard let entry = revoked[rid] else { return false }
        guard let before = entry else { return true }
        return notBefore < before
    }

    /// base64url, 1 to 24 characters (the spec's bound).
    static func isRevocationID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 24 && text.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d || $0 == 0x5f
        }
    }
}
