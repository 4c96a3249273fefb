import COpenSSL

/// Public random bytes (salts, nonces, identifiers) from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&out, Int32(count)) == 1 else { throw CryptoError.randomFailed }
        return out
    }
}
