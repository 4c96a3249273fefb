import COpenSSL

/// One-shot digest of `data` with OpenSSL's `md`, `size` bytes long.
private func digest(_ data: [UInt8], _ md: OpaquePointer?, size: Int, name: String) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: size)
    var length: UInt32 = 0
    let ok = EVP_Digest(data, data.count, &out, &length, md, nil)
    precondition(ok == 1 && Int(length) == size, "EVP_Digest(\(name)) failed")
    return out
}

public enum SHA256 {
    public static func hash(_ data: [UInt8]) -> [UInt8] { digest(data, EVP_sha256(), size: 32, name: "SHA-256") }

    /// A SHA-256 over bytes that arrive in pieces (a file read in chunks).
    ///
    ///     let hasher = SHA256.Incremental()
    ///     hasher.update(chunk)
    ///     let digest = hasher.finish()
    public final class Incremental {
        private let context: OpaquePointer

        public init() {
            guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
                preconditionFailure("EVP_DigestInit_ex(SHA-256) failed")
            }
            self.context = context
        }

        deinit { EVP_MD_CTX_free(context) }

        public func update(_ bytes: [UInt8]) {
            precondition(EVP_DigestUpdate(context, bytes, bytes.count) == 1, "EVP_DigestUpdate(SHA-256) failed")
        }

        /// The digest; call once.
        public func finish() -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            precondition(EVP_DigestFinal_ex(context, &out, &length) == 1 && length == 32, "EVP_DigestFinal_ex(SHA-256) failed")
            return out
        }
    }
}

/// SHA-1, only to check digests that other formats give (an IHE XDM package's document hashes);
/// never for anything hreader itself protects.
public enum SHA1 {
    public static func hash(_ data: [UInt8]) -> [UInt8] { digest(data, EVP_sha1(), size: 20, name: "SHA-1") }
}
