import Foundation

/// The readable text of a document's bytes, kept (encrypted) for `documents show` and search:
/// plain text decoded by its charset, HTML reduced to text (`HTMLPlainText`: no script or style,
/// links shown as text), RTF to text (`RTFPlainText`), XML to the text of its elements. PDF and
/// images have none here (nil). The work is linear in the input and the text is bounded.
///
///     DocumentText.readable([UInt8]("<p>Take <b>metformin</b></p>".utf8), contentType: "text/html")  // "Take metformin"
public enum DocumentText {
    /// Inputs larger than this are not read for text (the bytes are still kept).
    public static let maxInputBytes = 16 << 20
    /// The longest text kept.
    public static let maxTextCharacters = 4 << 20

    public static func readable(_ bytes: [UInt8], contentType: String?) -> String? {
        guard DocumentContentType.hasReadableText(contentType), !bytes.isEmpty, bytes.count <= maxInputBytes,
              let type = DocumentContentType.mediaType(contentType) else { return nil }
        let text: String
        switch type {
        case "text/html", "application/xhtml+xml":
            text = HTMLPlainText.text(decode(bytes, charset: DocumentContentType.charset(contentType)))
        case "text/rtf", "application/rtf":
            text = RTFPlainText.text(bytes)
        case _ where type == "application/xml" || type == "text/xml" || type.hasSuffix("+xml"):
            text = HTMLPlainText.text(decode(bytes, charset: DocumentContentType.charset(contentType)), markup: .xml)
        default:
            text = decode(bytes, charset: DocumentContentType.charset(contentType))
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        return trimmed.count > maxTextCharacters ? String(trimmed.prefix(maxTextCharacters)) : trimmed
    }

    /// Bytes as text in their charset: UTF-8 (the default; a BOM dropped), UTF-16 with a BOM,
    /// ISO-8859-1, Windows-1252 and US-ASCII. Undecodable bytes become U+FFFD; NUL is dropped.
    public static func decode(_ bytes: [UInt8], charset: String?) -> String {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if body.starts(with: [0xFF, 0xFE]) || body.starts(with: [0xFE, 0xFF]) || charset?.hasPrefix("utf-16") == true {
            let big = body.starts(with: [0xFE, 0xFF]) || charset == "utf-16be"
            if body.starts(with: [0xFF, 0xFE]) || body.starts(with: [0xFE, 0xFF]) { body = body.dropFirst(2) }
            var units: [UInt16] = []
            units.reserveCapacity(body.count / 2)
            var index = body.startIndex
            while index + 1 < body.endIndex {
                let a = UInt16(body[index]), b = UInt16(body[index + 1])
                units.append(big ? (a << 8 | b) : (b << 8 | a))
                index += 2
            }
            return String(decoding: units, as: UTF16.self).replacingOccurrences(of: "\0", with: "")
        }
        switch charset {
        case "iso-8859-1", "latin1", "iso_8859-1", "l1":
            return String(String.UnicodeScalarView(body.compactMap { $0 == 0 ? nil : Unicode.Scalar($0) }))
        case "windows-1252", "cp1252":
            return windows1252(body)
        default:
            // UTF-8 when it is; else (no charset said, and it is not UTF-8) read as Windows-1252.
            if charset == nil, String(validating: body, as: UTF8.self) == nil { return windows1252(body) }
            return String(decoding: body, as: UTF8.self).replacingOccurrences(of: "\0", with: "")
        }
    }

    /// Windows-1252's characters for 0x80–0x9F (0 where it has none); the rest is ISO-8859-1.
    static let cp1252High: [UInt32] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
        0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
    ]

    static func windows1252Scalar(_ byte: UInt8) -> Unicode.Scalar {
        if (0x80...0x9F).contains(byte) {
            let value = cp1252High[Int(byte - 0x80)]
            return value == 0 ? "\u{FFFD}" : Unicode.Scalar(value)!
        }
        return Unicode.Scalar(byte)
    }

    static func windows1252<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var out = String.UnicodeScalarView()
        for byte in bytes where byte != 0 { out.append(windows1252Scalar(byte)) }
        return String(out)
    }
}
