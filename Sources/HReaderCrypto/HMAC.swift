import COpenSSL

/// HMAC-SHA256 (RFC 2104) over a stream of bytes, through OpenSSL's EVP_DigestSign.
///
///     let mac = try HMACSHA256(key: macKey)
///     try mac.update(header); try mac.update(body)
///     let tag = try mac.finalize()   // 32 bytes
public final class HMACSHA256 {
    public static let size = 32
    private let context: OpaquePointer
    private let key: OpaquePointer
    private var finished = false

    public init(key: SecretBytes) throws {
        guard key.count > 0 else { throw CryptoError.invalidParameters("an HMAC key must not be empty") }
        guard let pkey = key.withUnsafeBytes({ EVP_PKEY_new_raw_private_key(EVP_PKEY_HMAC, nil, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }) else {
            throw CryptoError.invalidParameters("OpenSSL refused the HMAC key")
        }
        guard let ctx = EVP_MD_CTX_new() else { EVP_PKEY_free(pkey); throw CryptoError.encryptionFailed }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else {
            EVP_MD_CTX_free(ctx); EVP_PKEY_free(pkey)
            throw CryptoError.encryptionFailed
        }
        context = ctx
        self.key = pkey
    }

    deinit {
        EVP_MD_CTX_free(context)
        EVP_PKEY_free(key)
    }

    public func update(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!finished, "HMACSHA256 used after finalize()")
        guard bytes.count > 0 else { return }
        guard EVP_DigestSignUpdate(context, bytes.baseAddress, bytes.count) == 1 else { throw CryptoError.encryptionFailed }
    }

    public func update(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try update($0) }
    }

    /// The 32-byte tag. The object cannot be used afterwards.
    public func finalize() throws -> [UInt8] {
        precondition(!finished, "HMACSHA256 finalized twice")
        finished = true
        var out = [UInt8](repeating: 0, count: Self.size)
        var length = Self.size
        guard EVP_DigestSignFinal(context, &out, &length) == 1, length == Self.size else { throw CryptoError.encryptionFailed }
        return out
    }

    /// The tag of one message.
    public static func authenticate(_ message: [UInt8], key: SecretBytes) throws -> [UInt8] {
        let mac = try HMACSHA256(key: key)
        try mac.update(message)
        return try mac.finalize()
    }

    /// Constant-time comparison of two tags.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.isEmpty || CRYPTO_memcmp(a, b, a.count) == 0
    }
}
