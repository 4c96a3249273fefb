import HReaderCrypto
import HReaderJSON

/// Why a SMART Health Link, its manifest or one of its files is not taken (docs/sharing.md).
public enum HealthLinkError: Error, Equatable, CustomStringConvertible {
    /// Not a link, a manifest or a request as the spec shapes them.
    case malformed(String)
    /// A file that does not decrypt, or decrypts to something that is not what it says: treated as changed.
    case invalidFile(String)

    public var description: String {
        switch self {
        case let .malformed(message), let .invalidFile(message): message
        }
    }
}

/// A SMART Health Link (HL7 "SMART Health Cards and Links" IG, STU1): `shlink:/` and the base64url
/// of a JSON payload, alone or after the `#` of a viewer's URL.
///
///     let link = try HealthLink(text: "https://viewer.example.org#shlink:/eyJ1cmwiOi…")
///     link.url, link.key, link.expires, link.flags.contains("P")
///
/// Payload members: `url` (the manifest, or with flag `U` the one file), `key` (43 characters of
/// base64url: 32 bytes), `exp` (seconds since 1970), `flag` (letters of `L` long-term, `P`
/// passcode, `U` direct file), `label` (at most 80 characters), `v` (1).
public struct HealthLink: Sendable, Equatable {
    public static let prefix = "shlink:/"
    /// A link longer than this is refused before it is decoded (a QR code holds at most ~4 KB).
    public static let maxLinkBytes = 16 << 10
    public static let maxLabelCharacters = 80

    public let url: String
    /// The 32-byte key, as the payload spells it (43 characters of base64url).
    public let key: String
    public let expires: Int64?
    /// The flag letters, in payload order (`"LP"`, `"U"`, …).
    public let flags: String
    public let label: String?

    public var keyBytes: [UInt8] { Base64URL.decode(key) ?? [] }
    public var isDirectFile: Bool { flags.contains("U") }
    public var needsPasscode: Bool { flags.contains("P") }

    public init(url: String, key: [UInt8], expires: Int64?, flags: String, label: String?) {
        self.url = url
        self.key = Base64URL.encode(key)
        self.expires = expires
        self.flags = flags
        self.label = label
    }

    /// Reads a `shlink:/…` link or a viewer URL ending in `#shlink:/…` (whitespace around is ignored).
    public init(text: String) throws(HealthLinkError) {
        var body = Substring(text.utf8.count > Self.maxLinkBytes ? "" : text)
        guard !body.isEmpty else { throw .malformed("the link is empty or longer than \(Self.maxLinkBytes >> 10) KiB") }
        body = body.drop { $0.isWhitespace }
        while body.last?.isWhitespace == true { body.removeLast() }
        if let hash = body.range(of: "#" + Self.prefix) {
            body = body[body.index(after: hash.lowerBound)...]
        }
        guard body.hasPrefix(Self.prefix) else {
            throw .malformed("not a SMART Health Link (shlink:/…, or a viewer URL ending in #shlink:/…)")
        }
        var encoded = body.dropFirst(Self.prefix.count)
        while encoded.last == "=" { encoded.removeLast() }   // some writers pad; the spec does not
        guard let bytes = Base64URL.decode(encoded.utf8) else { throw .malformed("the link's payload is not base64url") }
        let payload: JSONObject
        do {
            guard let object = try JSONParser.parse(bytes, duplicateNames: .refused).object else {
                throw HealthLinkError.malformed("the link's payload is not a JSON object")
            }
            payload = object
        } catch let error as HealthLinkError {
            throw error
        } catch {
            throw .malformed("the link's payload is not JSON: \(error)")
        }
        try self.init(payload: payload)
    }

    /// Reads the payload object.
    public init(payload: JSONObject) throws(HealthLinkError) {
        if let version = payload.present("v") {
            guard version.int == 1 else { throw .malformed("the link has version \(version.serialized()); this hreader reads version 1") }
        }
        guard let url = payload["url"]?.string, !url.isEmpty else { throw .malformed("the link names no url") }
        let lower = url.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { throw .malformed("the link's url is not http(s): \(url.prefix(80))") }
        guard let key = payload["key"]?.string, key.utf8.count == 43, Base64URL.decode(key)?.count == 32 else {
            throw .malformed("the link's key is not 43 characters of base64url (32 bytes)")
        }
        var expires: Int64?
        if let exp = payload.present("exp") {
            guard let seconds = exp.number, seconds.isFinite, abs(seconds) < 1e12 else { throw .malformed("the link's exp is not a time in seconds") }
            expires = Int64(seconds.rounded(.down))
        }
        let flags = payload["flag"]?.string ?? ""
        guard flags.allSatisfy({ "LPU".contains($0) }), Set(flags).count == flags.count else {
            throw .malformed("the link's flag \(flags.prefix(20)) has letters other than L, P and U, or repeats one")
        }
        guard !(flags.contains("U") && flags.contains("P")) else { throw .malformed("the link's flags U and P cannot go together") }
        var label: String?
        if let text = payload.present("label") {
            guard let string = text.string, string.count <= Self.maxLabelCharacters else {
                throw .malformed("the link's label is not a text of at most \(Self.maxLabelCharacters) characters")
            }
            label = string
        }
        self.url = url
        self.key = key
        self.expires = expires
        self.flags = flags
        self.label = label
    }

    public var payload: JSONObject {
        var object: JSONObject = [("url", .string(url)), ("key", .string(key))]
        if let expires { object.members.append(("exp", .int(expires))) }
        if !flags.isEmpty { object.members.append(("flag", .string(flags))) }
        if let label { object.members.append(("label", .string(label))) }
        object.members.append(("v", .int(1)))
        return object
    }

    /// `shlink:/` and the payload.
    public var text: String { Self.prefix + Base64URL.encode(Array(JSONValue.object(payload).serialized().utf8)) }

    /// The link behind a viewer: `https://viewer.example.org#shlink:/…`.
    public func text(viewer: String) -> String {
        let base = viewer.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? viewer
        return base + "#" + text
    }

    /// Whether the link has expired at `now` (seconds since 1970).
    public func hasExpired(at now: Int64) -> Bool { expires.map { $0 <= now } ?? false }
}
