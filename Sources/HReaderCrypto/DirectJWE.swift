/// JWE compact serialization (RFC 7516 §7.1) with direct encryption (`alg: dir`) and AES-256-GCM
/// (`enc: A256GCM`), as SMART Health Links carry their files: five base64url parts joined by dots,
/// `header..iv.ciphertext.tag`, the encrypted key empty (the key is shared: it rides in the link).
/// The associated data is the ASCII of the first part, so a changed header fails like a changed
/// byte of ciphertext. The header's JSON is the caller's to write and to read (HReaderRecords):
/// this type only moves bytes.
///
///     let compact = try DirectJWE.seal(plaintext, key: key, protectedHeader: Array(#"{"alg":"dir","enc":"A256GCM"}"#.utf8))
///     let parts = try DirectJWE.Parts(compact)        // parts.header: the header's JSON bytes
///     let plaintext = try parts.open(key: key)        // throws .authenticationFailed on any change
public enum DirectJWE {
    /// The largest compact JWE read: the link files are a patient summary, a few megabytes at most.
    public static let maxCompactBytes = 64 << 20

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not five base64url parts, a non-empty encrypted key, an IV that is not 96 bits, a tag that is not 128.
        case malformed(String)
        /// The tag does not match: a changed byte, a changed header, or another key.
        case authenticationFailed

        public var description: String {
            switch self {
            case let .malformed(why): "not a compact JWE: \(why)"
            case .authenticationFailed: "it does not decrypt with the link's key (changed, damaged, or encrypted with another key)"
            }
        }
    }

    /// A compact JWE taken apart, not yet decrypted.
    public struct Parts: Sendable {
        /// The first part as it appears (the associated data).
        public let encodedHeader: [UInt8]
        /// The protected header's JSON bytes.
        public let header: [UInt8]
        public let iv: [UInt8]
        public let ciphertext: [UInt8]
        public let tag: [UInt8]

        public init(_ compact: String) throws(Failure) {
            let bytes = Array(compact.utf8)
            guard bytes.count <= DirectJWE.maxCompactBytes else {
                throw .malformed("\(bytes.count) bytes, more than the \(DirectJWE.maxCompactBytes >> 20) MiB read")
            }
            let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            guard parts.count == 5 else { throw .malformed("\(parts.count) dot-separated parts, not 5") }
            guard parts[1].isEmpty else { throw .malformed("an encrypted key is present; alg dir has none") }
            guard !parts[0].isEmpty, let header = Base64URL.decode(parts[0]) else { throw .malformed("the header is not base64url") }
            guard let iv = Base64URL.decode(parts[2]), iv.count == AESGCM.nonceSize else { throw .malformed("the IV is not 96 bits of base64url") }
            guard let ciphertext = Base64URL.decode(parts[3]) else { throw .malformed("the ciphertext is not base64url") }
            guard let tag = Base64URL.decode(parts[4]), tag.count == AESGCM.tagSize else { throw .malformed("the tag is not 128 bits of base64url") }
            encodedHeader = Array(parts[0])
            self.header = header
            self.iv = iv
            self.ciphertext = ciphertext
            self.tag = tag
        }

        /// The plaintext; nothing partial on failure.
        public func open(key: SecretBytes) throws -> SecretBytes {
            do {
                return try AESGCM.open(ciphertext + tag, key: key, nonce: iv, associatedData: encodedHeader)
            } catch CryptoError.authenticationFailed {
                throw Failure.authenticationFailed
            }
        }
    }

    /// The compact JWE of `plaintext` under `key` (32 bytes), with a fresh random IV.
    public static func seal(_ plaintext: SecretBytes, key: SecretBytes, protectedHeader: [UInt8]) throws -> String {
        let encodedHeader = Base64URL.encode(protectedHeader)
        let iv = try SecureRandom.bytes(AESGCM.nonceSize)
        let sealed = try AESGCM.seal(plaintext, key: key, nonce: iv, associatedData: Array(encodedHeader.utf8))
        let cut = sealed.count - AESGCM.tagSize
        return encodedHeader + ".." + Base64URL.encode(iv) + "." + Base64URL.encode(Array(sealed[..<cut])) + "."
            + Base64URL.encode(Array(sealed[cut...]))
    }
}
