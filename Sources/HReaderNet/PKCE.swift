import Foundation
import HReaderCrypto

/// Proof Key for Code Exchange (RFC 7636) with the S256 method: the verifier stays in this process;
/// only its SHA-256 (the challenge) goes into the authorization URL, so whoever sees the URL or
/// steals the code on its way back cannot redeem it.
///
///     let pkce = try PKCE()
///     // authorize: code_challenge=pkce.challenge&code_challenge_method=S256
///     // token:     code_verifier=pkce.verifier
public struct PKCE: Sendable {
    public static let method = "S256"

    /// 32 random bytes, base64url without padding: 43 characters of [A-Za-z0-9-_].
    public let verifier: String
    public let challenge: String

    public init() throws {
        try self.init(verifier: Base64URL.encode(SecureRandom.bytes(32)))
    }

    /// A given verifier (tests, known vectors).
    public init(verifier: String) {
        self.verifier = verifier
        self.challenge = Self.challenge(for: verifier)
    }

    /// `BASE64URL(SHA256(ASCII(verifier)))`.
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }

    /// A random `state` value: 16 bytes, base64url. It ties the redirect to this login.
    public static func randomState() throws -> String {
        Base64URL.encode(try SecureRandom.bytes(16))
    }
}
