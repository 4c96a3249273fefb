import Foundation
import HReaderCrypto
import HReaderRecords
import HReaderStore

/// x5c certificate chains of SMART Health Card issuers' keys (docs/sharing.md, "Certificate
/// chains"), checked as the spec says when a key carries one:
///
/// 1. the leaf certificate's public key is the JWK's key;
/// 2. the leaf's subjectAltName holds `iss` as a URI;
/// 3. the chain validates with OpenSSL's X.509 verification up to a trust anchor the user gave for
///    the issuer (`hreader issuers add ISS --ca FILE`), at the time of the check.
///
/// A key without x5c is checked as before. A chain whose issuer has no anchors is held to 1 and 2
/// only (said in a note): nothing to validate it against.
enum IssuerCertificates {
    /// The vault setting that keeps the anchors of an issuer (PEM text), inside the encrypted vault.
    static func settingKey(_ iss: String) -> String { "health-cards.trust-anchors " + iss }

    /// Why the chain is refused, or nil when it passes; `checked` says whether it was validated up
    /// to an anchor (false: the issuer has none).
    static func check(chain: [[UInt8]], key: P256PublicKey, iss: String, anchorsPEM: String?, at time: Date) -> (refusal: String?, checked: Bool) {
        let certificates: [X509Certificate]
        do { certificates = try chain.map { try X509Certificate(der: $0) } } catch {
            return ("has an x5c certificate chain that is not DER X.509 certificates", false)
        }
        let leaf = certificates[0]
        guard leaf.hasPublicKey(key) else {
            return ("names a key whose x5c certificate is for another key (the leaf's public key is not the JWK's)", false)
        }
        let names = leaf.uniformResourceIdentifiers
        guard names.contains(iss) else {
            return ("names a key whose x5c certificate is not for \(iss) (its subjectAltName URIs: "
                    + (names.isEmpty ? "none" : names.joined(separator: ", ")) + ")", false)
        }
        guard let anchorsPEM else { return (nil, false) }
        // Kept anchors that no longer read (they were checked when given): refused, never taken as none.
        guard let anchors = try? X509Certificate.derBlocks(pem: anchorsPEM).map({ try X509Certificate(der: $0) }), !anchors.isEmpty else {
            return ("names a key with an x5c chain, and the trust anchors kept for \(iss) cannot be read; give them again with "
                    + "'hreader issuers add \(iss) --ca FILE'", false)
        }
        if let reason = X509Certificate.verify(leaf: leaf, intermediates: Array(certificates.dropFirst()), anchors: anchors, at: time) {
            return ("names a key whose x5c certificate chain does not validate against your trust anchors for it: \(reason)", true)
        }
        return (nil, true)
    }

    /// The certificates of a PEM file, or of every `.pem`, `.crt` and `.cer` file of a directory,
    /// each parsed (so that a file that is no certificate is refused now, not at the next import).
    static func anchors(from url: URL) throws -> [[UInt8]] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw HReaderError.usage("cannot read \(url.path)")
        }
        var files = [url]
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
            files = names.filter { ["pem", "crt", "cer"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
                .map { url.appendingPathComponent($0) }
        }
        var found: [[UInt8]] = []
        for file in files {
            guard let data = FileManager.default.contents(atPath: file.path), data.count <= 1 << 20 else {
                throw HReaderError.badInput("\(file.lastPathComponent): cannot be read, or is over 1 MiB")
            }
            let blocks: [[UInt8]]
            do { blocks = try X509Certificate.derBlocks(pem: String(decoding: data, as: UTF8.self)) } catch {
                throw HReaderError.badInput("\(file.lastPathComponent): a PEM certificate in it is not base64")
            }
            for der in blocks {
                do { _ = try X509Certificate(der: der) } catch {
                    throw HReaderError.badInput("\(file.lastPathComponent): holds something that is not an X.509 certificate")
                }
            }
            found += blocks
        }
        guard !found.isEmpty else {
            throw HReaderError.badInput("\(url.lastPathComponent) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return found
    }
}
