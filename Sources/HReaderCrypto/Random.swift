import COpenSSL

/// Public random bytes (salts, nonces, identifiers) from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&out, Int32(count)) == 1 else { throw CryptoError.randomFailed }
        return out
    }
}

extension SecureRandom {
    /// A random (version 4) UUID in lower case, from OpenSSL's CSPRNG: Foundation's `UUID()` opens and
    /// reads /dev/urandom on every call on Linux, which an import of thousands of entries feels.
    public static func uuidString() throws -> String {
        var b = try bytes(16)
        b[6] = b[6] & 0x0F | 0x40
        b[8] = b[8] & 0x3F | 0x80
        let hex = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: 36) { out in
            var o = 0
            for (i, byte) in b.enumerated() {
                if i == 4 || i == 6 || i == 8 || i == 10 { out[o] = 0x2D; o += 1 }
                out[o] = hex[Int(byte >> 4)]
                out[o + 1] = hex[Int(byte & 0xF)]
                o += 2
            }
            return o
        }
    }
}
