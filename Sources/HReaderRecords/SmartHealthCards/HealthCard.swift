import HReaderCrypto
import HReaderJSON

/// Why a SMART Health Card, or the file that carries cards, is not taken (docs/sharing.md).
public enum HealthCardError: Error, Equatable, CustomStringConvertible {
    /// The file or text is not what it claims to be (a card file without cards, a QR text with a
    /// missing chunk): nothing was checked.
    case malformed(String)
    /// A card that cannot be verified as it stands: not a compact JWS, not ES256, a payload that
    /// does not inflate or is not a health card. Treated as a changed or forged card.
    case invalid(String)

    public var description: String {
        switch self {
        case let .malformed(message), let .invalid(message): message
        }
    }
}

/// One SMART Health Card, parsed but not yet verified: a compact JWS (RFC 7515) whose header says
/// `alg: ES256`, `zip: DEF`, and the `kid` of the issuer's key, and whose payload, raw-DEFLATEd,
/// is a JWT claim set with `iss`, `nbf` and a `vc` holding the FHIR Bundle.
///
///     let card = try HealthCard(compact: jws)
///     let key = try P256PublicKey(x: …, y: …)            // the issuer's key whose thumbprint is card.keyID
///     key.isValidSignature(card.signature, of: card.signingInput)
public struct HealthCard: Sendable {
    /// The largest payload a card may inflate to: a card fits a QR code (a few kilobytes); a file's
    /// card may be larger, but a megabyte of FHIR is far beyond any issued.
    public static let maxInflatedBytes = 1 << 20
    /// The largest compact JWS read.
    public static let maxCompactBytes = 4 << 20
    /// The type every health card names in `vc.type`.
    public static let healthCardType = "https://smarthealth.cards#health-card"

    /// The JWS header's `kid`: the base64url SHA-256 JWK thumbprint of the signing key.
    public let keyID: String
    /// The bytes the signature covers: the header and payload as they appear, joined by a dot.
    public let signingInput: [UInt8]
    /// r || s, 32 bytes each.
    public let signature: [UInt8]
    /// `iss`: the issuer's base URL (its keys are at `iss + "/.well-known/jwks.json"`).
    public let issuer: String
    /// `nbf`: when the card was issued, in seconds since 1970.
    public let notBefore: Int64
    /// `vc.rid`: the revocation identifier, when the issuer gave one.
    public let revocationID: String?
    public let types: [String]
    public let fhirVersion: String?
    /// `vc.credentialSubject.fhirBundle`.
    public let fhirBundle: JSONObject

    public init(compact: String, maxInflatedBytes: Int = HealthCard.maxInflatedBytes) throws(HealthCardError) {
        let bytes = Array(compact.utf8)
        guard bytes.count <= Self.maxCompactBytes else {
            throw .invalid("the card is \(bytes.count) bytes long, more than the \(Self.maxCompactBytes >> 20) MiB a card may be")
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
            throw .invalid("not a compact JWS (three base64url parts joined by dots)")
        }
        guard let headerBytes = Base64URL.decode(parts[0]), let header = try? JSONParser.parse(headerBytes, duplicateNames: .refused).object else {
            throw .invalid("the JWS header is not base64url JSON")
        }
        guard header["alg"]?.string == "ES256" else {
            throw .invalid("the card is signed with \(header["alg"]?.string.map { "alg \($0)" } ?? "no alg"), not ES256")
        }
        if let critical = header.present("crit") {
            throw .invalid("the JWS header has critical extensions \(critical.serialized()) this reader does not know")
        }
        guard let kid = header["kid"]?.string, !kid.isEmpty else { throw .invalid("the JWS header names no key (kid)") }
        let compressed: Bool
        switch header.present("zip") {
        case nil: compressed = false
        case .string("DEF")?: compressed = true
        case let other?: throw .invalid("the payload's compression is \(other.serialized()), not DEF")
        }
        guard let signature = Base64URL.decode(parts[2]), signature.count == 64 else {
            throw .invalid("the signature is not 64 base64url bytes (r and s of ES256)")
        }
        guard let payloadBytes = Base64URL.decode(parts[1]) else { throw .invalid("the JWS payload is not base64url") }
        let claims: [UInt8]
        if compressed {
            do {
                claims = try RawInflate.inflate(payloadBytes, limit: maxInflatedBytes)
            } catch {
                switch error {
                case let .tooLarge(limit):
                    throw .invalid("the payload inflates to more than \(limit >> 10) KiB; refused (a card is a few KiB)")
                case let .damaged(why):
                    throw .invalid("the payload does not inflate (\(why)): the card was changed or damaged")
                }
            }
        } else {
            guard payloadBytes.count <= maxInflatedBytes else { throw .invalid("the payload is larger than \(maxInflatedBytes >> 10) KiB") }
            claims = payloadBytes
        }
        guard let payload = try? JSONParser.parse(claims, duplicateNames: .refused).object else {
            throw .invalid("the payload is not a JSON object: the card was changed or damaged")
        }
        guard let iss = payload["iss"]?.string, !iss.isEmpty else { throw .invalid("the payload names no issuer (iss)") }
        guard let nbfNumber = payload["nbf"]?.number, nbfNumber.isFinite, abs(nbfNumber) < 1e12 else {
            throw .invalid("the payload has no issuance time (nbf)")
        }
        guard let vc = payload["vc"]?.object else { throw .invalid("the payload has no verifiable credential (vc)") }
        let types = (vc["type"]?.array ?? []).compactMap(\.string)
        guard types.contains(Self.healthCardType) else {
            throw .invalid("the credential's type does not include \(Self.healthCardType)")
        }
        guard let subject = vc["credentialSubject"]?.object, let bundle = subject["fhirBundle"]?.object,
              bundle["resourceType"]?.string == "Bundle" else {
            throw .invalid("the credential carries no FHIR Bundle (vc.credentialSubject.fhirBundle)")
        }
        var rid: String?
        if let value = vc.present("rid") {
            guard let text = value.string, RevocationList.isRevocationID(text) else {
                throw .invalid("the card's revocation id (vc.rid) is not base64url of at most 24 characters")
            }
            rid = text
        }
        keyID = kid
        signingInput = Array(bytes[..<(parts[0].count + 1 + parts[1].count)])
        self.signature = signature
        issuer = iss
        notBefore = Int64(nbfNumber.rounded(.down))
        revocationID = rid
        self.types = types
        fhirVersion = subject["fhirVersion"]?.string
        fhirBundle = bundle
    }
}
