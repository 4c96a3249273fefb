import COpenSSL

public enum SHA256 {
    public static func hash(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = EVP_Digest(data, data.count, &out, &length, EVP_sha256(), nil)
        precondition(ok == 1 && length == 32, "EVP_Digest(SHA-256) failed")
        return out
    }
}

/// SHA-1, only to check digests that other formats give (an IHE XDM package's document hashes);
/// never for anything hreader itself protects.
public enum SHA1 {
    public static func hash(_ data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        let ok = EVP_Digest(data, data.count, &out, &length, EVP_sha1(), nil)
        precondition(ok == 1 && length == 20, "EVP_Digest(SHA-1) failed")
        return out
    }
}
