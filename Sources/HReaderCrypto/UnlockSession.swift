import Foundation
import HReaderJSON

/// An unlock session (like the Bitwarden CLI's): the data key wrapped under a fresh random session
/// key. The wrapped blob and its expiry live in the vault's `sessions/`; the session key lives only
/// in the token the user exports as `HREADER_SESSION`. Neither half alone opens the vault.
public enum UnlockSession {
    public static let format = "hreader-session"
    public static let version = 1

    public enum Failure: Error, Equatable, Sendable {
        case malformedToken
        case expired
        /// The session file does not belong to this token or vault, or was altered.
        case invalid
    }

    public struct Created: Sendable {
        public let id: String
        public let token: String
        public let file: [UInt8]
    }

    /// A session file's members (docs/formats.md, "Sessions").
    private struct Wire {
        var format: String
        var version: Int
        var vault_id: String
        var id: String
        var expires: Int64
        var nonce: String
        var wrapped_key: String

        var bytes: [UInt8] {
            JSONValue.object(["format": .string(format), "version": .int(version), "vault_id": .string(vault_id), "id": .string(id),
                              "expires": .int(expires), "nonce": .string(nonce), "wrapped_key": .string(wrapped_key)]).serializedBytes()
        }

        /// Nil unless `file` is a session file's JSON with every member of its type (in any order, `/`
        /// escaped or not: the files earlier versions wrote with JSONEncoder read the same).
        static func parse(_ file: [UInt8]) -> Wire? {
            guard case let .object(o)? = try? JSONParser.parse(file, limits: .init(maxDepth: 2, maxBytes: 1 << 16)),
                  let format = o["format"]?.string, let version = o["version"]?.int, let vaultID = o["vault_id"]?.string,
                  let id = o["id"]?.string, let expires = o["expires"]?.numberText.flatMap({ Int64($0) }),
                  let nonce = o["nonce"]?.string, let wrapped = o["wrapped_key"]?.string
            else { return nil }
            return Wire(format: format, version: version, vault_id: vaultID, id: id, expires: expires, nonce: nonce, wrapped_key: wrapped)
        }
    }

    public static func create(dataKey: SecretBytes, vaultID: String, expires: Date) throws -> Created {
        let id = (try SecureRandom.bytes(16)).hex
        let sessionKey = try SecretBytes.random(count: 32)
        let nonce = try SecureRandom.bytes(AESGCM.nonceSize)
        let expiry = Int64(expires.timeIntervalSince1970.rounded(.down))
        let wrapped = try AESGCM.seal(dataKey, key: sessionKey, nonce: nonce,
                                      associatedData: associatedData(vaultID: vaultID, id: id, expires: expiry))
        let wire = Wire(format: format, version: version, vault_id: vaultID, id: id, expires: expiry,
                        nonce: nonce.base64, wrapped_key: wrapped.base64)
        let token = sessionKey.hexEncoded(prefix: Array("hrs1.\(id).".utf8))
        let tokenString = token.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        return Created(id: id, token: tokenString, file: wire.bytes)
    }

    /// The session id named by a token, to find its file.
    public static func sessionID(in token: String) throws -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "hrs1", parts[1].count == 32, parts[2].count == 64,
              parts[1].allSatisfy({ $0.isASCII && $0.isHexDigit }), parts[2].allSatisfy({ $0.isASCII && $0.isHexDigit })
        else { throw Failure.malformedToken }
        return String(parts[1])
    }

    public static func open(token: String, file: [UInt8], vaultID: String, now: Date = Date()) throws -> SecretBytes {
        let id = try sessionID(in: token)
        guard let wire = Wire.parse(file),
              wire.format == format, wire.version == version, wire.id == id, wire.vault_id == vaultID,
              let nonce = [UInt8](base64: wire.nonce), let wrapped = [UInt8](base64: wire.wrapped_key)
        else { throw Failure.invalid }
        guard Int64(now.timeIntervalSince1970) < wire.expires else { throw Failure.expired }
        let hex = Array(token.utf8.suffix(64))
        let key = SecretBytes(count: 32) { out in
            for i in 0..<32 { out[i] = UInt8(hexValue(hex[2 * i]) << 4 | hexValue(hex[2 * i + 1])) }
        }
        do {
            return try AESGCM.open(wrapped, key: key, nonce: nonce,
                                   associatedData: associatedData(vaultID: vaultID, id: id, expires: wire.expires))
        } catch {
            throw Failure.invalid
        }
    }

    /// The expiry written in a session file, without opening it (for `status`).
    public static func expiry(of file: [UInt8]) -> Date? {
        guard let wire = Wire.parse(file) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(wire.expires))
    }

    private static func associatedData(vaultID: String, id: String, expires: Int64) -> [UInt8] {
        Array("\(format)|\(version)|\(vaultID)|\(id)|\(expires)".utf8)
    }

    private static func hexValue(_ c: UInt8) -> Int {
        switch c {
        case 0x30...0x39: return Int(c - 0x30)
        case 0x61...0x66: return Int(c - 0x61 + 10)
        case 0x41...0x46: return Int(c - 0x41 + 10)
        default: return 0
        }
    }
}

extension Array where Element == UInt8 {
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }
}
