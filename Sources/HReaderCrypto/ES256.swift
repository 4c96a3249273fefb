import COpenSSL

/// An ECDSA P-256 public key, for checking ES256 signatures (RFC 7518 §3.4) such as a SMART Health
/// Card's. Made from a JWK's `x` and `y` (32 bytes each); OpenSSL refuses a point that is not on
/// the curve.
///
///     let key = try P256PublicKey(x: xBytes, y: yBytes)
///     let good = key.isValidSignature(rs, of: Array("header.payload".utf8))   // rs: 64 bytes, r || s
public final class P256PublicKey {
    private let key: OpaquePointer
    /// The key as OpenSSL holds it, for comparing with a certificate's (`X509Certificate.hasPublicKey`).
    var evpKey: OpaquePointer { key }

    /// DER of a SubjectPublicKeyInfo for id-ecPublicKey on prime256v1, up to the uncompressed
    /// point's leading 0x04 (RFC 5480): the key is this prefix, then x, then y.
    private static let publicKeyInfoPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
        0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
    ]

    public init(x: [UInt8], y: [UInt8]) throws {
        guard x.count == 32, y.count == 32 else {
            throw CryptoError.invalidParameters("a P-256 key's x and y are 32 bytes each (got \(x.count) and \(y.count))")
        }
        let der = Self.publicKeyInfoPrefix + x + y
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            ERR_clear_error()
            throw CryptoError.invalidParameters("the key's x and y are not a point on the P-256 curve")
        }
        key = parsed
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` (the JWS form: r and s, 32 bytes each, big-endian) is this key's
    /// ECDSA-SHA256 signature of `message`.
    public func isValidSignature(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == 64, let der = Self.derSignature(r: Array(signature[0..<32]), s: Array(signature[32..<64])) else {
            return false
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context); ERR_clear_error() }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
    }

    /// The DER `Ecdsa-Sig-Value` (SEQUENCE of two INTEGERs, RFC 3279) OpenSSL verifies; nil for a
    /// zero r or s, which no valid signature has.
    static func derSignature(r: [UInt8], s: [UInt8]) -> [UInt8]? {
        func integer(_ bytes: [UInt8]) -> [UInt8]? {
            var value = Array(bytes.drop { $0 == 0 })
            guard !value.isEmpty else { return nil }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }   // positive: a leading zero when the high bit is set
            return [0x02, UInt8(value.count)] + value
        }
        guard let r = integer(r), let s = integer(s) else { return nil }
        let body = r + s   // at most 2 × 35 bytes: the length fits one byte
        return [0x30, UInt8(body.count)] + body
    }
}

/// JWK thumbprints (RFC 7638), as a SMART Health Card's `kid` names its key.
public enum JWKThumbprint {
    /// The base64url SHA-256 of `{"crv":…,"kty":"EC","x":…,"y":…}`: the required members, in
    /// lexicographic order, without whitespace. `x` and `y` are taken as given (base64url text).
    public static func ellipticCurve(crv: String, x: String, y: String) -> String {
        let canonical = "{\"crv\":\(quoted(crv)),\"kty\":\"EC\",\"x\":\(quoted(x)),\"y\":\(quoted(y))}"
        return Base64URL.encode(SHA256.hash(Array(canonical.utf8)))
    }

    /// A JSON string; the members are base64url or curve names, but anything else is escaped too.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Base64url without padding (RFC 4648 §5), as JOSE writes it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of base64url text (no padding, no whitespace); nil for any other character, a
    /// length no encoding has, or bits left over that an encoder would have written as zero (so
    /// that one value has one text: a changed last character is never the same value).
    public static func decode<S: Sequence>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for c in text {
            let v: UInt32
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "_"): v = 63
            default: return nil
            }
            buffer = buffer << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(buffer >> UInt32(bits) & 0xff))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        // 6 bits left: a length no encoding has; 2 or 4: the padding bits must be zero.
        guard bits != 6, buffer == 0 else { return nil }
        return out
    }

    public static func decode(_ text: String) -> [UInt8]? { decode(text.utf8) }
}
