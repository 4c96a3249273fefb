import COpenSSL

/// AES-256-GCM with a 96-bit nonce and a 128-bit tag (OpenSSL EVP). Output is ciphertext ‖ tag.
public enum AESGCM {
    public static let keySize = 32
    public static let nonceSize = 12
    public static let tagSize = 16

    /// Encrypts `plaintext` under `key`; `associatedData` is authenticated but not encrypted.
    public static func seal(_ plaintext: SecretBytes, key: SecretBytes, nonce: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        try checkSizes(key: key, nonce: nonce)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError.encryptionFailed }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + tagSize)
        var length: Int32 = 0
        let ok: Bool = key.withUnsafeBytes { k in
            plaintext.withUnsafeBytes { p in
                out.withUnsafeMutableBufferPointer { o -> Bool in
                    guard EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                          EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1,
                          EVP_EncryptInit_ex(ctx, nil, nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce) == 1
                    else { return false }
                    if !associatedData.isEmpty {
                        guard EVP_EncryptUpdate(ctx, nil, &length, associatedData, Int32(associatedData.count)) == 1 else { return false }
                    }
                    var written = 0
                    if p.count > 0 {
                        guard EVP_EncryptUpdate(ctx, o.baseAddress, &length, p.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(p.count)) == 1 else { return false }
                        written = Int(length)
                    }
                    guard EVP_EncryptFinal_ex(ctx, o.baseAddress! + written, &length) == 1 else { return false }
                    return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), o.baseAddress! + p.count) == 1
                }
            }
        }
        guard ok else { throw CryptoError.encryptionFailed }
        return out
    }

    /// Decrypts and authenticates; throws `.authenticationFailed` on any mismatch and returns nothing partial.
    public static func open(_ sealed: [UInt8], key: SecretBytes, nonce: [UInt8], associatedData: [UInt8]) throws -> SecretBytes {
        try checkSizes(key: key, nonce: nonce)
        guard sealed.count >= tagSize else { throw CryptoError.authenticationFailed }
        let cipherCount = sealed.count - tagSize
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError.encryptionFailed }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var tag = Array(sealed[cipherCount...])
        return try key.withUnsafeBytes { k in
            try SecretBytes(count: cipherCount) { out in
                var length: Int32 = 0
                guard EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceSize), nil) == 1,
                      EVP_DecryptInit_ex(ctx, nil, nil, k.baseAddress!.assumingMemoryBound(to: UInt8.self), nonce) == 1
                else { throw CryptoError.encryptionFailed }
                if !associatedData.isEmpty {
                    guard EVP_DecryptUpdate(ctx, nil, &length, associatedData, Int32(associatedData.count)) == 1 else {
                        throw CryptoError.authenticationFailed
                    }
                }
                var written = 0
                let outBase = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
                if cipherCount > 0 {
                    let ok = sealed.withUnsafeBufferPointer { s in
                        EVP_DecryptUpdate(ctx, outBase, &length, s.baseAddress, Int32(cipherCount))
                    }
                    guard ok == 1 else { throw CryptoError.authenticationFailed }
                    written = Int(length)
                }
                guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag) == 1 else {
                    throw CryptoError.authenticationFailed
                }
                // Final verifies the tag; on failure SecretBytes' init wipes what was decrypted.
                guard EVP_DecryptFinal_ex(ctx, outBase + written, &length) == 1 else {
                    throw CryptoError.authenticationFailed
                }
            }
        }
    }

    private static func checkSizes(key: SecretBytes, nonce: [UInt8]) throws {
        guard key.count == keySize else { throw CryptoError.invalidParameters("AES-256-GCM needs a 32-byte key") }
        guard nonce.count == nonceSize else { throw CryptoError.invalidParameters("AES-256-GCM needs a 12-byte nonce") }
    }
}
