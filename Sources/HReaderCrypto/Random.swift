import COpenSSL
import Foundation

/// Public random bytes (salts, nonces, identifiers) from OpenSSL's CSPRNG.
public enum SecureRandom {
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count == 0 || RAND_bytes(&out, Int32(count)) == 1 else { throw CryptoError.randomFailed }
        return out
    }
}

extension SecureRandom {
    /// Random bytes for identifiers, drawn from OpenSSL 4 KiB at a time: one RAND_bytes call (its DRBG
    /// and locks) per entry was 5% of storing a large import. Identifiers are not secrets.
    private final class IdentifierPool: @unchecked Sendable {
        let lock = NSLock()   // Synchronization's Mutex needs macOS 15
        var bytes: [UInt8] = []
        var next = 0
    }
    private static let identifierPool = IdentifierPool()

    static func identifierBytes(_ count: Int) throws -> [UInt8] {
        let pool = identifierPool
        pool.lock.lock()
        defer { pool.lock.unlock() }
        if pool.next + count > pool.bytes.count {
            pool.bytes = try bytes(max(4096, count))
            pool.next = 0
        }
        defer { pool.next += count }
        return Array(pool.bytes[pool.next..<pool.next + count])
    }

    /// A random (version 4) UUID in lower case, from OpenSSL's CSPRNG: Foundation's `UUID()` opens and
    /// reads /dev/urandom on every call on Linux, which an import of thousands of entries feels.
    public static func uuidString() throws -> String {
        var b = try identifierBytes(16)
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
