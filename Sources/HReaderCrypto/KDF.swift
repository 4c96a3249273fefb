import COpenSSL

/// Password-based key derivation. The parameters travel with each key slot so they can be raised later.
public enum KDFParameters: Equatable, Sendable {
    /// scrypt (RFC 7914). `n` is a power of two greater than 1.
    case scrypt(n: UInt64, r: UInt64, p: UInt64)
    /// PBKDF2-HMAC-SHA256 (RFC 8018).
    case pbkdf2SHA256(iterations: UInt32)

    /// OWASP's 2023 minimums: scrypt N=2^17, r=8, p=1; PBKDF2-HMAC-SHA256 600,000 iterations.
    public static let scryptDefault = KDFParameters.scrypt(n: 1 << 17, r: 8, p: 1)
    public static let pbkdf2Default = KDFParameters.pbkdf2SHA256(iterations: 600_000)

    /// True when these parameters are at least as costly as the OWASP minimums.
    public var meetsRecommendedMinimum: Bool {
        guard (try? validate()) != nil else { return false }
        switch self {
        case let .scrypt(n, r, p): return n * r * p >= (1 << 17) * 8 && r >= 8
        case let .pbkdf2SHA256(iterations): return iterations >= 600_000
        }
    }

    public var name: String {
        switch self {
        case .scrypt: return "scrypt"
        case .pbkdf2SHA256: return "pbkdf2-sha256"
        }
    }

    /// The most work one derivation may ask for (see `work`): 2^24, 16 times the default scrypt
    /// (N=2^21, r=8, p=1: about 8 s and 2 GiB here) or 16,777,216 PBKDF2 iterations (about 5 s).
    /// A crafted key file must not make an unlock run for minutes per slot.
    public static let maximumWork: UInt64 = 1 << 24

    /// The PBKDF2 iterations hreader before 0.4 let a slot have (`--pbkdf2-iterations` up to 10^8,
    /// about 30 s): a key file it wrote must still open, so reading accepts them; no new slot gets
    /// more than `maximumWork` (`validateForNewSlot`).
    public static let legacyMaximumPBKDF2Iterations: UInt32 = 100_000_000

    /// The cost of one derivation in comparable units: N·r·p for scrypt (its memory-hard loop runs
    /// 2·N·r·p Salsa20/8 block mixes), the iteration count for PBKDF2-HMAC-SHA256. One unit takes
    /// 0.3 to 0.5 µs on the reference machine for either (docs/formats.md, "Limits"). Only meaningful
    /// for parameters that `validate()` accepts (no overflow then: N·r·p ≤ 2^24).
    public var work: UInt64 {
        switch self {
        case let .scrypt(n, r, p):
            let (nr, o1) = n.multipliedReportingOverflow(by: r)
            let (nrp, o2) = nr.multipliedReportingOverflow(by: p)
            return o1 || o2 ? .max : nrp
        case let .pbkdf2SHA256(iterations): return UInt64(iterations)
        }
    }

    /// Checks the parameters before any memory or time is committed to them.
    public func validate() throws {
        switch self {
        case let .scrypt(n, r, p):
            guard n > 1, n & (n - 1) == 0, n <= (1 << 24) else {
                throw CryptoError.invalidParameters("scrypt N must be a power of two between 2 and 2^24")
            }
            guard (1...32).contains(r), (1...16).contains(p) else {
                throw CryptoError.invalidParameters("scrypt r must be 1–32 and p 1–16")
            }
            // A crafted key slot must not make us allocate or compute without bound: 128·N·r·p ≤ 2 GiB,
            // which is N·r·p ≤ 2^24, the work cap.
            guard 128 * n * r * p <= (1 << 31), n * r * p <= Self.maximumWork else {
                throw CryptoError.invalidParameters("scrypt parameters would need more than 2 GiB of memory")
            }
        case let .pbkdf2SHA256(iterations):
            guard iterations >= 1, iterations <= Self.legacyMaximumPBKDF2Iterations else {
                throw CryptoError.invalidParameters("PBKDF2 iterations must be 1–100,000,000")
            }
        }
    }

    /// `validate`, and at most `maximumWork`: what a new slot (init, passwd, key add|upgrade,
    /// recover, rekey) may ask for.
    public func validateForNewSlot() throws {
        try validate()
        guard work <= Self.maximumWork else {
            throw CryptoError.invalidParameters(self.name == "scrypt" ? "scrypt N·r·p must be at most 2^24"
                                                                       : "PBKDF2 iterations must be 1–16,777,216")
        }
    }
}

public enum KDF {
    /// Derives `length` bytes from `secret` and `salt`.
    public static func derive(_ parameters: KDFParameters, secret: SecretBytes, salt: [UInt8], length: Int = 32) throws -> SecretBytes {
        try parameters.validate()
        guard length > 0 else { throw CryptoError.invalidParameters("derived key length must be positive") }
        switch parameters {
        case let .scrypt(n, r, p):
            return try scrypt(secret: secret, salt: salt, n: n, r: r, p: p, length: length)
        case let .pbkdf2SHA256(iterations):
            return try pbkdf2SHA256(secret: secret, salt: salt, iterations: iterations, length: length)
        }
    }

    static func scrypt(secret: SecretBytes, salt: [UInt8], n: UInt64, r: UInt64, p: UInt64, length: Int) throws -> SecretBytes {
        // OpenSSL refuses N=2^17, r=8 with its 32 MiB default limit; scrypt needs 128·N·r·p bytes plus
        // the output, so give it exactly that with headroom.
        let maxmem = 128 * n * r * p + 128 * r * p + UInt64(length) + (1 << 20)
        return try secret.withUnsafeBytes { password in
            try SecretBytes(count: length) { out in
                let ok = EVP_PBE_scrypt(
                    password.baseAddress?.assumingMemoryBound(to: CChar.self), password.count,
                    salt, salt.count, n, r, p, maxmem,
                    out.baseAddress!.assumingMemoryBound(to: UInt8.self), length)
                guard ok == 1 else { throw CryptoError.kdfFailed("scrypt (N=\(n), r=\(r), p=\(p))") }
            }
        }
    }

    static func pbkdf2SHA256(secret: SecretBytes, salt: [UInt8], iterations: UInt32, length: Int) throws -> SecretBytes {
        try secret.withUnsafeBytes { password in
            try SecretBytes(count: length) { out in
                let ok = PKCS5_PBKDF2_HMAC(
                    password.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(password.count),
                    salt, Int32(salt.count), Int32(iterations), EVP_sha256(),
                    Int32(length), out.baseAddress!.assumingMemoryBound(to: UInt8.self))
                guard ok == 1 else { throw CryptoError.kdfFailed("PBKDF2-HMAC-SHA256 (\(iterations) iterations)") }
            }
        }
    }
}
