import COpenSSL

/// HKDF-SHA256 (RFC 5869), extract then expand, through OpenSSL's EVP_PKEY_HKDF.
/// Derives independent subkeys from a key that is already random (the data key), one per `info`.
///
///     let macKey = try HKDF.sha256(key: dataKey, salt: salt, info: Array("hreader-backup 1 mac".utf8), length: 32)
public enum HKDF {
    public static func sha256(key: SecretBytes, salt: [UInt8], info: [UInt8], length: Int = 32) throws -> SecretBytes {
        guard length > 0, length <= 255 * 32 else { throw CryptoError.invalidParameters("HKDF-SHA256 output must be 1 to 8160 bytes") }
        guard key.count > 0 else { throw CryptoError.invalidParameters("HKDF needs a non-empty key") }
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { throw CryptoError.kdfFailed("HKDF-SHA256") }
        defer { EVP_PKEY_CTX_free(ctx) }
        return try key.withUnsafeBytes { ikm in
            try SecretBytes(count: length) { out in
                var outLength = length
                // An empty salt is RFC 5869's default (a string of zeros); OpenSSL wants a non-null pointer.
                let saltBytes = salt.isEmpty ? [UInt8](repeating: 0, count: 32) : salt
                guard EVP_PKEY_derive_init(ctx) == 1,
                      EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) == 1,
                      EVP_PKEY_CTX_set1_hkdf_salt(ctx, saltBytes, Int32(saltBytes.count)) == 1,
                      EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(ikm.count)) == 1,
                      info.isEmpty || EVP_PKEY_CTX_add1_hkdf_info(ctx, info, Int32(info.count)) == 1,
                      EVP_PKEY_derive(ctx, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &outLength) == 1,
                      outLength == length
                else { throw CryptoError.kdfFailed("HKDF-SHA256") }
            }
        }
    }
}
