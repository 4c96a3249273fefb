/// Failures of the cryptographic layer. None of them carries secret material.
public enum CryptoError: Error, Equatable, Sendable {
    case randomFailed
    case invalidParameters(String)
    case kdfFailed(String)
    case encryptionFailed
    /// The ciphertext, its tag, the nonce or the associated data do not match the key: a wrong
    /// secret or a tampered blob. AES-GCM cannot tell the two apart.
    case authenticationFailed
}
