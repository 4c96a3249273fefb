import HReaderCrypto
import HReaderJSON

/// One file of a SMART Health Link: a compact JWE, `alg: dir`, `enc: A256GCM`, optionally
/// `zip: DEF` (raw DEFLATE before encryption) and `cty` (its content type), under the link's key.
///
///     let (type, bytes) = try HealthLinkFile.open(jwe, key: link.keyBytes)
///     let jwe = try HealthLinkFile.seal(Array(ips.utf8), contentType: HealthLinkFile.fhirJSON, key: key)
public enum HealthLinkFile {
    public static let fhirJSON = "application/fhir+json"
    public static let healthCard = "application/smart-health-card"
    /// The largest a file may inflate to: a whole record's summary is well under it.
    public static let maxInflatedBytes = 32 << 20

    /// The decrypted content and the header's `cty`, when it names one.
    public static func open(_ compact: String, key: [UInt8], maxInflatedBytes: Int = HealthLinkFile.maxInflatedBytes)
        throws(HealthLinkError) -> (contentType: String?, content: [UInt8]) {
        let parts: DirectJWE.Parts
        do { parts = try DirectJWE.Parts(compact.trimmingWhitespace) } catch { throw .invalidFile(error.description) }
        guard let header = try? JSONParser.parse(parts.header, duplicateNames: .refused).object else {
            throw .invalidFile("the JWE header is not a JSON object")
        }
        guard header["alg"]?.string == "dir" else { throw .invalidFile("the JWE's alg is \(header["alg"]?.serialized() ?? "missing"), not dir") }
        guard header["enc"]?.string == "A256GCM" else { throw .invalidFile("the JWE's enc is \(header["enc"]?.serialized() ?? "missing"), not A256GCM") }
        if let critical = header.present("crit") { throw .invalidFile("the JWE header has critical extensions \(critical.serialized())") }
        let compressed: Bool
        switch header.present("zip") {
        case nil: compressed = false
        case .string("DEF")?: compressed = true
        case let other?: throw .invalidFile("the JWE's compression is \(other.serialized()), not DEF")
        }
        guard key.count == 32 else { throw .invalidFile("the link's key is not 32 bytes") }
        let plaintext: SecretBytes
        do { plaintext = try parts.open(key: SecretBytes(key)) } catch {
            throw .invalidFile((error as? DirectJWE.Failure)?.description ?? "it does not decrypt")
        }
        var content = plaintext.withUnsafeBytes { Array($0) }
        if compressed {
            do { content = try RawInflate.inflate(content, limit: maxInflatedBytes) } catch {
                switch error {
                case let .tooLarge(limit): throw .invalidFile("it inflates to more than \(limit >> 20) MiB; refused")
                case let .damaged(why): throw .invalidFile("it does not inflate (\(why))")
                }
            }
        } else if content.count > maxInflatedBytes {
            throw .invalidFile("it is larger than \(maxInflatedBytes >> 20) MiB")
        }
        return (header["cty"]?.string, content)
    }

    /// The compact JWE of `content`, DEFLATEd, with `cty` naming its type, under `key` (32 bytes).
    public static func seal(_ content: [UInt8], contentType: String, key: [UInt8]) throws -> String {
        let header = JSONValue.object([("alg", .string("dir")), ("enc", .string("A256GCM")), ("cty", .string(contentType)),
                                       ("zip", .string("DEF"))]).serialized()
        return try DirectJWE.seal(SecretBytes(RawDeflate.deflate(content)), key: SecretBytes(key), protectedHeader: Array(header.utf8))
    }
}

private extension String {
    var trimmingWhitespace: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s.removeFirst() }
        while s.last?.isWhitespace == true { s.removeLast() }
        return String(s)
    }
}
