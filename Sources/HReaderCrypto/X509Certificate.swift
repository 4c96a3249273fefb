import COpenSSL
import Foundation

/// An X.509 certificate (DER), parsed by OpenSSL: what a SMART Health Card issuer's `x5c` chain is
/// made of, and what the user trusts as its anchors (docs/sharing.md, "Certificate chains").
///
///     let leaf = try X509Certificate(der: bytes)
///     leaf.hasPublicKey(key)                              // the JWK's key?
///     leaf.uniformResourceIdentifiers                     // ["https://issuer.example.org"]
///     X509Certificate.verify(leaf: leaf, intermediates: rest, anchors: trusted, at: Date())   // nil: valid
public final class X509Certificate {
    fileprivate let certificate: OpaquePointer

    public init(der: [UInt8]) throws {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let made = d2i_X509(nil, &cursor, buffer.count)
            // Bytes left over after the certificate: not one DER certificate.
            if let made, let start = buffer.baseAddress, let end = cursor, end - start != buffer.count {
                X509_free(made)
                return nil
            }
            return made
        }
        guard let parsed else {
            ERR_clear_error()
            throw CryptoError.invalidParameters("not a DER X.509 certificate")
        }
        certificate = parsed
    }

    deinit { X509_free(certificate) }

    /// Whether the certificate's subject public key is `key`.
    public func hasPublicKey(_ key: P256PublicKey) -> Bool {
        defer { ERR_clear_error() }
        guard let own = X509_get0_pubkey(certificate) else { return false }
        return EVP_PKEY_eq(own, key.evpKey) == 1
    }

    /// The `uniformResourceIdentifier` names of its subjectAltName extension, in order.
    public var uniformResourceIdentifiers: [String] {
        defer { ERR_clear_error() }
        guard let names = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return [] }
        let stack = OpaquePointer(names)
        defer { GENERAL_NAMES_free(stack) }
        var found: [String] = []
        for index in 0..<max(0, OPENSSL_sk_num(stack)) {
            guard let raw = OPENSSL_sk_value(stack, index) else { continue }
            let name = raw.assumingMemoryBound(to: GENERAL_NAME.self).pointee
            guard name.type == GEN_URI, let text = name.d.uniformResourceIdentifier else { continue }
            let length = Int(ASN1_STRING_length(text))
            guard length >= 0, let bytes = ASN1_STRING_get0_data(text) else { continue }
            found.append(String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self))
        }
        return found
    }

    /// Validates `leaf` up to one of `anchors` through `intermediates` with OpenSSL's X.509
    /// verification (RFC 5280: signatures, validity at `time`, CA constraints, path length). An
    /// anchor may be a root or an intermediate CA the user trusts (partial chains are accepted:
    /// the chain ends at the first trusted certificate). Returns nil when it validates, else
    /// OpenSSL's reason ("certificate has expired", "unable to get local issuer certificate").
    public static func verify(leaf: X509Certificate, intermediates: [X509Certificate], anchors: [X509Certificate], at time: Date) -> String? {
        defer { ERR_clear_error() }
        guard !anchors.isEmpty else { return "no trust anchor" }
        guard let store = X509_STORE_new() else { return "out of memory" }
        defer { X509_STORE_free(store) }
        for anchor in anchors where X509_STORE_add_cert(store, anchor.certificate) != 1 {
            return "an anchor could not be added"
        }
        _ = X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        guard let untrusted = OPENSSL_sk_new_null() else { return "out of memory" }
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in intermediates {
            guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.certificate)) > 0 else { return "out of memory" }
        }
        guard let context = X509_STORE_CTX_new() else { return "out of memory" }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.certificate, untrusted) == 1 else { return "the verification could not start" }
        X509_STORE_CTX_set_time(context, 0, time_t(time.timeIntervalSince1970))
        // Keeps the certificates alive while OpenSSL holds their pointers.
        return withExtendedLifetime((leaf, intermediates, anchors)) {
            if X509_verify_cert(context) == 1 { return nil }
            let code = X509_STORE_CTX_get_error(context)
            return X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
        }
    }

    /// The DER bytes of each `CERTIFICATE` block of PEM text (other blocks are skipped); throws on a
    /// block that is not base64.
    public static func derBlocks(pem: String) throws -> [[UInt8]] {
        var blocks: [[UInt8]] = []
        var body: String?
        for line in pem.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if line == "-----END CERTIFICATE-----", let text = body {
                guard let der = Data(base64Encoded: text) else { throw CryptoError.invalidParameters("a PEM certificate is not base64") }
                blocks.append(Array(der))
                body = nil
            } else if body != nil {
                body! += line
            }
        }
        return blocks
    }

    /// PEM text of DER certificates, 64 characters a line.
    public static func pem(_ certificates: [[UInt8]]) -> String {
        certificates.map { der in
            let text = Data(der).base64EncodedString()
            var lines: [Substring] = []
            var index = text.startIndex
            while index < text.endIndex {
                let end = text.index(index, offsetBy: 64, limitedBy: text.endIndex) ?? text.endIndex
                lines.append(text[index..<end])
                index = end
            }
            return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
        }.joined()
    }
}
