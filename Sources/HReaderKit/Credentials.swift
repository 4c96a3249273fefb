import HReaderCrypto

/// How a command proves it may open the vault.
public enum Credential: Sendable {
    case password(SecretBytes)
    /// Answers to the security questions, in the order of the questions.
    case answers([String])
    case recoveryKey(SecretBytes)
    /// An `HREADER_SESSION` token from `hreader unlock`.
    case session(String)
}

/// hReader's password policy: at least 8 characters with a lower-case letter, an upper-case letter
/// and a digit.
public enum PasswordPolicy {
    public static func check(_ password: SecretBytes) throws {
        let (length, lower, upper, digit) = password.withUnsafeBytes { bytes -> (Int, Bool, Bool, Bool) in
            let text = String(decoding: bytes, as: UTF8.self)
            return (text.count, text.contains(where: \.isLowercase), text.contains(where: \.isUppercase), text.contains(where: \.isNumber))
        }
        guard length >= 8, lower, upper, digit else {
            throw HReaderError(.usage, "the password must have at least 8 characters, with a lower-case letter, an upper-case letter and a digit")
        }
    }
}
