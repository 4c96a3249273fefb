import COpenSSL

/// Bytes that must never leak: a data key, a derived key, a password.
///
/// The storage is allocated once, never copied by value, wiped with `OPENSSL_cleanse` when the
/// last reference goes, and never printed (`description` says only how long it is).
///
///     let key = try SecretBytes.random(count: 32)
///     key.withUnsafeBytes { buffer in use(buffer) }
public final class SecretBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // @unchecked Sendable: `storage` is written only in `init` and wiped only in `deinit`, when no
    // other reference can exist; between the two it is read-only, so sharing it across threads is safe.
    private let storage: UnsafeMutableRawBufferPointer

    public var count: Int { countStored }

    /// Takes a copy of `bytes`. The caller should wipe its own copy if it was secret.
    public init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        UnsafeMutableRawBufferPointer(rebasing: storage[0..<bytes.count]).copyBytes(from: bytes)
        self.countStored = bytes.count
    }

    private let countStored: Int

    /// Fills a new buffer of `count` bytes through `fill`, without a copy passing through an array.
    public init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        countStored = count
        // If `fill` throws, deinit still runs (every property is set) and wipes and frees the buffer.
        try fill(UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// `count` cryptographically random bytes from OpenSSL's `RAND_bytes`.
    public static func random(count: Int) throws -> SecretBytes {
        try SecretBytes(count: count) { buffer in
            guard count == 0 || RAND_bytes(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(count)) == 1 else {
                throw CryptoError.randomFailed
            }
        }
    }

    /// The UTF-8 bytes of a string typed by the user. Swift strings cannot be wiped; keep their life short.
    public convenience init(utf8 string: String) {
        self.init(Array(string.utf8))
    }

    deinit {
        OPENSSL_cleanse(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<countStored]))
    }

    /// Constant-time comparison.
    public func isEqual(to other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { a in
            other.withUnsafeBytes { b in
                count == 0 || CRYPTO_memcmp(a.baseAddress, b.baseAddress, count) == 0
            }
        }
    }

    /// A new secret holding `prefix`, the lower-case hex of these bytes, then `suffix`
    /// (for SQLCipher's raw key literal `x'…'`), built without an intermediate String.
    public func hexEncoded(prefix: [UInt8] = [], suffix: [UInt8] = []) -> SecretBytes {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        return SecretBytes(count: prefix.count + 2 * count + suffix.count) { out in
            var i = 0
            for b in prefix { out[i] = b; i += 1 }
            withUnsafeBytes { input in
                for byte in input {
                    out[i] = digits[Int(byte >> 4)]; out[i + 1] = digits[Int(byte & 0x0f)]; i += 2
                }
            }
            for b in suffix { out[i] = b; i += 1 }
        }
    }

    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
}
