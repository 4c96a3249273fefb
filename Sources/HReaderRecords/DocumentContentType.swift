import Foundation

/// What kinds of document hreader keeps, and how it tells a file's kind from its name and first
/// bytes. The allow list is the issue's: text, HTML, RTF, XML (C-CDA), PDF and images; anything
/// else (an executable, an archive, a script, SVG, which can carry script) is kept as a reference
/// only, with the reason.
///
///     DocumentContentType.isAllowed("text/html; charset=utf-8")   // true
///     DocumentContentType.guess(fileName: "scan.pdf", prefix: bytes)  // "application/pdf"
public enum DocumentContentType {
    static let images: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/tiff", "image/webp", "image/bmp", "image/heic", "image/heif"]
    static let exact: Set<String> = [
        "application/pdf", "application/rtf", "text/rtf", "application/xml", "text/xml", "application/xhtml+xml",
        "application/hl7-v3+xml", "application/cda+xml", "application/fhir+xml", "application/fhir+json", "application/json",
    ]

    /// The media type without parameters, lower-cased (`text/html`).
    public static func mediaType(_ contentType: String?) -> String? {
        guard let first = contentType?.split(separator: ";").first else { return nil }
        let type = first.trimmingCharacters(in: .whitespaces).lowercased()
        return type.isEmpty ? nil : type
    }

    /// The `charset` parameter, lower-cased.
    public static func charset(_ contentType: String?) -> String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "charset" {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'")).lowercased()
            }
        }
        return nil
    }

    /// Whether a document of this type is fetched and kept; nil type (not given) is not.
    public static func isAllowed(_ contentType: String?) -> Bool {
        guard let type = mediaType(contentType) else { return false }
        if type == "image/svg+xml" { return false }
        if type.hasPrefix("text/") || exact.contains(type) || images.contains(type) { return true }
        return type.hasSuffix("+xml")
    }

    /// The reason a type is not kept, in words.
    public static func refusal(_ contentType: String?) -> String {
        guard let type = mediaType(contentType) else { return "no content type given" }
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

    /// Whether hreader reads text out of this type (plain text, HTML, RTF, XML).
    public static func hasReadableText(_ contentType: String?) -> Bool {
        guard let type = mediaType(contentType) else { return false }
        return type.hasPrefix("text/") || type == "application/rtf" || type == "application/xml" || type.hasSuffix("+xml")
            || type == "application/json" || type == "application/fhir+json"
    }
}
