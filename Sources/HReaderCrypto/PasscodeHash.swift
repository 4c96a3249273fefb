/// A SMART Health Link's passcode as the vault keeps it: scrypt (N=2^15, r=8, p=1, a 16-byte random
/// salt), written `scrypt$N$r$p$<salt base64>$<hash base64>`. Lighter than a key slot's KDF: the
/// server checks it on every manifest request, and the lock after a few wrong tries (not the hash)
/// is what stops guessing; the hash only keeps the passcode out of the vault's plain columns.
///
///     let stored = try PasscodeHash.make("1234")
///     PasscodeHash.matches("1234", stored)    // true
public enum PasscodeHash {
    static let parameters = KDFParameters.scrypt(n: 1 << 15, r: 8, p: 1)

    public static func make(_ passcode: String) throws -> String {
        let salt = try SecureRandom.bytes(16)
        let hash = try KDF.derive(parameters, secret: SecretBytes(utf8: passcode), salt: salt)
        guard case let .scrypt(n, r, p) = parameters else { preconditionFailure() }
        return "scrypt$\(n)$\(r)$\(p)$\(salt.base64)$\(hash.withUnsafeBytes { Array($0) }.base64)"
    }

    /// Whether `passcode` is the one `stored` was made from (constant time over the hash); false for
    /// a stored text this type did not write.
    public static func matches(_ passcode: String, _ stored: String) -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let n = UInt64(parts[1]), let r = UInt64(parts[2]), let p = UInt64(parts[3]),
              let salt = [UInt8](base64: parts[4]), let expected = [UInt8](base64: parts[5]),
              let hash = try? KDF.derive(.scrypt(n: n, r: r, p: p), secret: SecretBytes(utf8: passcode), salt: salt, length: expected.count)
        else { return false }
        return hash.isEqual(to: SecretBytes(expected))
    }
}
