import Foundation

/// Turns security-question answers into one KDF secret, forgiving what people forget
/// (case, surrounding or repeated spaces, composed vs decomposed accents) and nothing else.
public enum SecretAnswers {
    public static func normalize(_ answers: [String]) throws -> SecretBytes {
        var out: [UInt8] = []
        for answer in answers {
            let words = answer.split(whereSeparator: { $0.isWhitespace })
            let folded = words.joined(separator: " ")
                .folding(options: [.caseInsensitive], locale: nil)
                .precomposedStringWithCanonicalMapping
            guard !folded.isEmpty else { throw CryptoError.invalidParameters("an answer is empty") }
            let bytes = Array(folded.utf8)
            // Length-prefixed so that ("ab", "c") and ("a", "bc") differ.
            out += Array("\(bytes.count):".utf8) + bytes
        }
        defer { out.withUnsafeMutableBytes { for i in $0.indices { $0[i] = 0 } } }
        return SecretBytes(out)
    }
}

/// The recovery key: 160 random bits shown once as Crockford base32 in groups of four
/// (`7KQ2-…`), read back forgiving case, dashes, spaces and the look-alikes O/0, I/L/1.
public enum RecoveryKey {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    static let length = 32

    /// A new key: what to show the user and the secret to derive the slot's KEK from.
    public static func generate() throws -> (display: String, secret: SecretBytes) {
        let random = try SecureRandom.bytes(20)
        var bits = 0, value = 0
        var chars: [Character] = []
        for byte in random {
            value = (value << 8) | Int(byte); bits += 8
            while bits >= 5 { chars.append(alphabet[(value >> (bits - 5)) & 31]); bits -= 5 }
            value &= (1 << bits) - 1
        }
        let canonical = String(chars)
        var groups: [String] = []
        var index = canonical.startIndex
        while index < canonical.endIndex {
            let end = canonical.index(index, offsetBy: 4)
            groups.append(String(canonical[index..<end])); index = end
        }
        return (groups.joined(separator: "-"), SecretBytes(utf8: canonical))
    }

    /// The secret for a key as typed; nil when it cannot be a recovery key.
    public static func parse(_ typed: String) -> SecretBytes? {
        var out: [Character] = []
        for c in typed.uppercased() where !(c == "-" || c.isWhitespace) {
            switch c {
            case "O": out.append("0")
            case "I", "L": out.append("1")
            default:
                guard alphabet.contains(c) else { return nil }
                out.append(c)
            }
        }
        guard out.count == length else { return nil }
        return SecretBytes(utf8: String(out))
    }
}
