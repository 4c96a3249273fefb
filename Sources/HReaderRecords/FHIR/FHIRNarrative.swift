import Foundation

/// A FHIR narrative (`Narrative.div`) checked against FHIR R4's rules for its XHTML
/// (https://hl7.org/fhir/R4/narrative.html, txt-1 and txt-2), for documents that a clinician's
/// system shows: only the basic formatting elements and attributes of HTML 4 chapters 7–11 and 15,
/// `<a>` and images; no head or body, no script, no form, no frame, iframe or object, no event
/// attribute (`onerror`), no `javascript:` or other link that is not to a page or an anchor.
///
///     FHIRNarrative.sanitized(#"<div xmlns="http://www.w3.org/1999/xhtml"><p>Asthma</p></div>"#)   // the same div
///     FHIRNarrative.sanitized(#"<div xmlns="http://www.w3.org/1999/xhtml"><script>…</script></div>"#)  // nil
///
/// It is an allow-list over a real parse: libxml2 reads the div under `XMLPolicy` (no DTD, no
/// entity, no network), every element, attribute and URL must be on the lists below, and the div
/// that comes back is written again from what was parsed (comments and processing instructions
/// left out, text and values escaped), never the source's text. Anything else is refused whole
/// (nil), for the caller to put a narrative of its own in its place: nothing is passed through.
public enum FHIRNarrative {
    static let xhtmlNamespace = "http://www.w3.org/1999/xhtml"

    /// The formatting elements of HTML 4 chapters 7–11 and 15 that FHIR allows (the FHIR
    /// validator's list, image maps left out), and `img`.
    static let elements: Set<String> = [
        "div", "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "span", "a", "img",
        "b", "i", "em", "strong", "small", "big", "tt", "sub", "sup", "code", "samp", "kbd", "var", "dfn", "q",
        "abbr", "acronym", "cite", "blockquote", "address", "bdo", "pre", "ins", "del",
        "ul", "ol", "li", "dl", "dt", "dd",
        "table", "caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "th", "td",
    ]

    /// Attributes of no namespace that any of them may have (`xml:lang` aside); `href` and `name`
    /// only on `a`, `src` and `alt` only on `img`; `style` only as `safeStyle` allows.
    static let attributes: Set<String> = [
        "id", "class", "title", "lang", "dir", "style",
        "align", "valign", "width", "height", "border", "cellpadding", "cellspacing", "frame", "rules", "summary",
        "colspan", "rowspan", "span", "scope", "headers", "abbr", "axis", "char", "charoff", "nowrap",
        "start", "type", "value", "compact", "datetime",
    ]

    /// How deep elements may nest inside the div.
    static let maxDepth = 64

    /// The div written again from its parse, when it keeps to the rules; nil when it does not.
    public static func sanitized(_ div: String) -> String? {
        guard !div.isEmpty, div.utf8.count <= 1 << 20,
              XMLTextReader.doctype(in: Data(div.utf8)) == nil,
              let reader = try? XMLTextReader(Data(div.utf8), what: "the narrative") else { return nil }
        var out = ""
        var open: [String] = []
        var sawRoot = false
        var content = false  // txt-2: some text, or an image
        do {
            while try reader.read() {
                switch reader.nodeType {
                case .elementStart:
                    let name = reader.localName
                    guard reader.namespaceURI == xhtmlNamespace, elements.contains(name), open.count < maxDepth else { return nil }
                    if open.isEmpty {
                        guard !sawRoot, name == "div" else { return nil }
                        sawRoot = true
                    }
                    out += "<" + name
                    if open.isEmpty { out += " xmlns=\"\(xhtmlNamespace)\"" }
                    for attribute in reader.attributes() {
                        if attribute.isNamespaceDeclaration {
                            // Only the XHTML namespace may be declared (as the default, or a prefix for it).
                            guard attribute.value == xhtmlNamespace else { return nil }
                            continue
                        }
                        let attributeName: String
                        if attribute.namespaceURI == "http://www.w3.org/XML/1998/namespace", attribute.localName == "lang" {
                            attributeName = "xml:lang"
                        } else {
                            guard attribute.namespaceURI == nil, allowed(attribute.localName, on: name, value: attribute.value) else { return nil }
                            attributeName = attribute.localName
                        }
                        out += " " + attributeName + "=\"" + escape(attribute.value, quote: true) + "\""
                    }
                    if name == "img" { content = true }
                    if reader.isEmptyElement {
                        out += "/>"
                    } else {
                        out += ">"
                        open.append(name)
                    }
                case .elementEnd:
                    guard let name = open.popLast() else { return nil }
                    out += "</" + name + ">"
                case .text, .cdata, .whitespace, .significantWhitespace:
                    guard !open.isEmpty else { continue }
                    let text = reader.value
                    if !content, text.contains(where: { !$0.isWhitespace }) { content = true }
                    out += escape(text, quote: false)
                case .comment, .processingInstruction:
                    continue
                default:  // entities, a DOCTYPE, anything else
                    return nil
                }
            }
        } catch {
            return nil
        }
        guard sawRoot, open.isEmpty, content else { return nil }
        return out
    }

    /// Whether attribute `name` may stand on element `element` with this value.
    static func allowed(_ name: String, on element: String, value: String) -> Bool {
        switch name {
        case "href": return element == "a" && safeLink(value)
        case "name": return element == "a"
        case "src": return element == "img" && safeImage(value)
        case "alt": return element == "img"
        case "style": return safeStyle(value)
        default: return attributes.contains(name)
        }
    }

    /// A link to an anchor in the page (`#…`), a relative path, or an `http`, `https` or `mailto`
    /// URL: no other scheme (`javascript:`, `data:`, `vbscript:`), and no whitespace or control
    /// character, which browsers drop from a URL before they look at its scheme (`java\tscript:`).
    static func safeLink(_ value: String) -> Bool {
        guard !value.isEmpty, value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && !$0.properties.isWhitespace }),
              !value.contains("\\") else { return false }
        // A scheme is what comes before the first `:` when no `/`, `?` or `#` comes before it.
        guard let colon = value.firstIndex(of: ":") else { return true }
        if value[..<colon].contains(where: { "/?#".contains($0) }) { return true }
        return ["http", "https", "mailto"].contains(value[..<colon].lowercased())
    }

    /// An image inside the resource (`#id`, a contained Binary) or inline PNG, GIF or JPEG data:
    /// never an address elsewhere, which a viewer would fetch when it opens the document.
    static func safeImage(_ value: String) -> Bool {
        guard value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else { return false }
        if value.hasPrefix("#") { return value.count > 1 }
        let lower = value.lowercased()
        return ["data:image/png;base64,", "data:image/gif;base64,", "data:image/jpeg;base64,"].contains { lower.hasPrefix($0) }
            && value.drop(while: { $0 != "," }).dropFirst().allSatisfy { $0.isLetter || $0.isNumber || "+/=".contains($0) }
    }

    /// Inline style made of plain declarations of the properties below, whose values are words,
    /// numbers with units, percentages, `#` colours and `rgb()`/`rgba()`: no `url()`, `expression()`,
    /// `@import`, escapes or quotes, through which style fetches or runs something.
    static let styleProperties: Set<String> = [
        "color", "background-color", "font-weight", "font-style", "font-size", "font-family", "text-decoration",
        "text-align", "vertical-align", "white-space", "border", "border-top", "border-bottom", "border-left",
        "border-right", "border-width", "border-style", "border-color", "border-collapse", "padding", "padding-top",
        "padding-bottom", "padding-left", "padding-right", "margin", "margin-top", "margin-bottom", "margin-left",
        "margin-right", "width", "height", "min-width", "max-width", "display", "list-style-type", "text-indent",
        "line-height",
    ]

    static func safeStyle(_ style: String) -> Bool {
        for declaration in style.split(separator: ";") {
            guard declaration.contains(where: { !$0.isWhitespace }) else { continue }
            let parts = declaration.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, styleProperties.contains(parts[0].trimmingCharacters(in: .whitespaces).lowercased()) else { return false }
            var value = parts[1].lowercased()
            for function in ["rgba(", "rgb("] { value = value.replacingOccurrences(of: function, with: " ") }
            guard value.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || " #%.,-)\t".contains($0) }) else { return false }
        }
        return true
    }

    /// Text (or an attribute value, `quote`) for XML: `&`, `<`, `>` (and `"`) as entities.
    static func escape(_ text: String, quote: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"" where quote: out += "&quot;"
            case "\n" where quote: out += "&#10;"
            case "\t" where quote: out += "&#9;"
            case "\r": out += "&#13;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
