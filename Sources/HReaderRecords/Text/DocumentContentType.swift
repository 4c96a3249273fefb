import Foundation

/// What kinds of document hreader keeps, and how it tells a file's kind from its name and first
/// bytes. The allow list is the issue's: text, HTML, RTF, XML (C-CDA), PDF and images; anything
/// else (an executable, an archive, a script, SVG, which can carry script) is kept as a reference
/// only, with the reason. A type is read strictly (`normalized`): what a source writes there reaches
/// the command line's tables and the web view's `Content-Type` header.
///
///     DocumentContentType.isAllowed("text/html; charset=utf-8")   // true
///     DocumentContentType.guess(fileName: "scan.pdf", prefix: bytes)  // "application/pdf"
public enum DocumentContentType {
    static let images: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/tiff", "image/webp", "image/bmp", "image/heic", "image/heif"]
    static let exact: Set<String> = [
        "application/pdf", "application/rtf", "text/rtf", "application/xml", "text/xml", "application/xhtml+xml",
        "application/hl7-v3+xml", "application/cda+xml", "application/fhir+xml", "application/fhir+json", "application/json",
    ]

    /// A content type as hreader keeps it: RFC 6838's `type/subtype` (each a letter or digit, then up
    /// to 126 letters, digits and `!#$&-^_.+`), lower-cased, with its `charset` when that is a plain
    /// name (letters, digits, `-_.:+`). Other parameters are dropped when they are well formed (RFC 9110:
    /// a token, `=`, a token or a quoted string); anything else gives nil, refused rather than repaired:
    /// a space or CR LF inside a name, a wildcard, a parameter without a value, a control character,
    /// more than 256 bytes.
    ///
    ///     DocumentContentType.normalized("Text/HTML;Charset=\"UTF-8\"; format=flowed")  // "text/html; charset=utf-8"
    ///     DocumentContentType.normalized("text/html\r\nSet-Cookie: a=b")                 // nil
    public static func normalized(_ contentType: String?) -> String? {
        guard let contentType, contentType.utf8.count <= 256 else { return nil }
        var scanner = MediaTypeScanner(Array(contentType.utf8))
        scanner.skipSpace()
        guard let type = scanner.restrictedName(), scanner.take(UInt8(ascii: "/")), let subtype = scanner.restrictedName() else { return nil }
        var charset: String?
        scanner.skipSpace()
        while scanner.take(UInt8(ascii: ";")) {
            scanner.skipSpace()
            if scanner.atEnd { break }   // "text/plain;": nothing follows
            guard let name = scanner.token(), scanner.take(UInt8(ascii: "=")), let value = scanner.token() ?? scanner.quotedString() else { return nil }
            if charset == nil, name.lowercased() == "charset", (1...40).contains(value.utf8.count),
               value.utf8.allSatisfy({ MediaTypeScanner.isAlphanumeric($0) || "-_.:+".utf8.contains($0) }) {
                charset = value.lowercased()
            }
            scanner.skipSpace()
        }
        guard scanner.atEnd else { return nil }
        let media = type.lowercased() + "/" + subtype.lowercased()
        return charset.map { "\(media); charset=\($0)" } ?? media
    }

    /// The media type without parameters, lower-cased (`text/html`); nil when not a clean type (`normalized`).
    public static func mediaType(_ contentType: String?) -> String? {
        normalized(contentType).map { String($0.prefix { $0 != ";" }) }
    }

    /// The `charset` parameter, lower-cased, when it is a plain name (`normalized`).
    public static func charset(_ contentType: String?) -> String? {
        guard let clean = normalized(contentType), let at = clean.range(of: "; charset=") else { return nil }
        return String(clean[at.upperBound...])
    }

    /// Whether a document of this type is fetched and kept; nil type (not given) is not.
    public static func isAllowed(_ contentType: String?) -> Bool {
        guard let type = mediaType(contentType) else { return false }
        if type == "image/svg+xml" { return false }
        if type.hasPrefix("text/") || exact.contains(type) || images.contains(type) { return true }
        return type.hasSuffix("+xml")
    }

    /// The reason a type is not kept, in words. A type that is not clean is not repeated: it is the
    /// source's text, and could hold anything.
    public static func refusal(_ contentType: String?) -> String {
        guard let contentType, !contentType.allSatisfy({ $0 == " " || $0 == "\t" }) else { return "no content type given" }
        guard let type = mediaType(contentType) else { return "the content type is not a media type (type/subtype, RFC 6838)" }
        return "content type \(type) is not on the allow list (text, HTML, RTF, XML, PDF, images)"
    }

    /// A file's type from its first bytes, else its name's extension; nil when neither says.
    public static func guess(fileName: String, prefix: [UInt8]) -> String? {
        func starts(_ magic: [UInt8]) -> Bool { prefix.count >= magic.count && Array(prefix[0..<magic.count]) == magic }
        if starts(Array("%PDF-".utf8)) { return "application/pdf" }
        if starts([0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF8".utf8)) { return "image/gif" }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "image/tiff" }
        if starts(Array("{\\rtf".utf8)) { return "text/rtf" }
        if isHEIF(prefix) { return "image/heic" }
        let byExtension: [String: String] = [
            "txt": "text/plain", "text": "text/plain", "md": "text/markdown", "csv": "text/csv",
            "html": "text/html", "htm": "text/html", "xhtml": "application/xhtml+xml", "rtf": "text/rtf",
            "xml": "application/xml", "cda": "application/hl7-v3+xml", "ccd": "application/hl7-v3+xml",
            "pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
            "tif": "image/tiff", "tiff": "image/tiff", "webp": "image/webp", "bmp": "image/bmp", "heic": "image/heic",
            "json": "application/json",
        ]
        return byExtension[(fileName as NSString).pathExtension.lowercased()]
    }

    /// An ISO base media file whose major brand is one of HEIF's (ISO/IEC 23008-12): an iPhone's photo.
    /// `ftyp` at offset 4, then the four-letter brand.
    public static func isHEIF(_ prefix: [UInt8]) -> Bool {
        guard prefix.count >= 12, Array(prefix[4..<8]) == Array("ftyp".utf8) else { return false }
        let brand = String(decoding: prefix[8..<12], as: UTF8.self)
        return ["heic", "heix", "heim", "heis", "hevc", "hevx", "hevm", "hevs", "mif1", "msf1"].contains(brand)
    }

    /// Whether hreader reads text out of this type (plain text, HTML, RTF, XML).
    public static func hasReadableText(_ contentType: String?) -> Bool {
        guard let type = mediaType(contentType) else { return false }
        return type.hasPrefix("text/") || type == "application/rtf" || type == "application/xml" || type.hasSuffix("+xml")
            || type == "application/json" || type == "application/fhir+json"
    }
}

/// The bytes of a content type, read left to right by the rules of RFC 6838 (names) and RFC 9110
/// (parameters). Only ASCII is accepted anywhere.
private struct MediaTypeScanner {
    let bytes: [UInt8]
    var at = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { at == bytes.count }

    static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard !atEnd, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    /// Optional white space: spaces and tabs.
    mutating func skipSpace() {
        while !atEnd, bytes[at] == 0x20 || bytes[at] == 0x09 { at += 1 }
    }

    /// RFC 6838 §4.2 `restricted-name`: 1 to 127 characters, the first a letter or digit.
    mutating func restrictedName() -> String? {
        guard !atEnd, Self.isAlphanumeric(bytes[at]) else { return nil }
        return run(upTo: 127) { Self.isAlphanumeric($0) || "!#$&-^_.+".utf8.contains($0) }
    }

    /// RFC 9110 §5.6.2 `token`.
    mutating func token() -> String? {
        run(upTo: 256) { Self.isAlphanumeric($0) || "!#$%&'*+-.^_`|~".utf8.contains($0) }
    }

    /// RFC 9110 §5.6.4 `quoted-string`, its value unescaped; no bytes outside ASCII.
    mutating func quotedString() -> String? {
        let start = at
        guard take(0x22) else { return nil }
        var value: [UInt8] = []
        while !atEnd {
            let byte = bytes[at]
            at += 1
            switch byte {
            case 0x22: return String(decoding: value, as: UTF8.self)
            case 0x5C:
                guard !atEnd, bytes[at] == 0x09 || (0x20...0x7E).contains(bytes[at]) else { at = start; return nil }
                value.append(bytes[at])
                at += 1
            case 0x09, 0x20...0x7E: value.append(byte)
            default: at = start; return nil
            }
        }
        at = start
        return nil
    }

    /// The longest run (at least one, at most `limit` bytes) of bytes `allowed` accepts.
    private mutating func run(upTo limit: Int, _ allowed: (UInt8) -> Bool) -> String? {
        let start = at
        while !atEnd, at - start < limit, allowed(bytes[at]) { at += 1 }
        guard at > start, atEnd || !allowed(bytes[at]) else { at = start; return nil }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }
}
