import Foundation

/// A "Blue Button" viewer page: an HTML file that carries the patient's C-CDA document as the text
/// of a `<script>` element (`<script type="text/xml" id="ccda">…</script>`) and renders it with the
/// page's own script. hreader never runs the page; it takes the document out of it.
public enum BlueButtonPage {
    /// Whether the bytes look like an HTML page (a doctype or an `<html` element near the start).
    public static func isHTML(_ data: Data) -> Bool {
        let head = String(decoding: data.prefix(4096), as: UTF8.self).lowercased()
        return head.contains("<!doctype html") || head.contains("<html")
    }

    /// The XML of the first `<script>` element whose text holds a `<ClinicalDocument`, from its
    /// XML declaration (or the root element) to the end of `</ClinicalDocument>`; nil when no
    /// script carries one.
    public static func embeddedDocument(in data: Data) -> Data? {
        let bytes = [UInt8](data)
        var at = 0
        while let open = ByteSearch.find("<script", in: bytes, from: at, ignoringCase: true) {
            guard let tagEnd = bytes[open...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
            let contentStart = tagEnd + 1
            let contentEnd = ByteSearch.find("</script", in: bytes, from: contentStart, ignoringCase: true) ?? bytes.count
            let content = Array(bytes[contentStart..<contentEnd])
            if let root = ByteSearch.find("<ClinicalDocument", in: content, from: 0, ignoringCase: false),
               let close = ByteSearch.find("</ClinicalDocument>", in: content, from: root, ignoringCase: false) {
                let start = ByteSearch.find("<?xml", in: content, from: 0, ignoringCase: false).flatMap { $0 < root ? $0 : nil } ?? root
                return Data(content[start..<(close + "</ClinicalDocument>".utf8.count)])
            }
            at = contentEnd
        }
        return nil
    }
}
