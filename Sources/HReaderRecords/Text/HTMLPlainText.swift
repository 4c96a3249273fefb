import Foundation

/// HTML (or XML) reduced to the text a person reads, for display in a terminal and for search. It
/// never runs or keeps anything: script, style, template and head content is dropped whole,
/// comments and processing instructions too, tags become line breaks or spaces, entities are
/// decoded, and a link is shown as its text followed by its address in parentheses (http, https and
/// mailto only; a `javascript:` or `data:` link shows its text alone). The result is plain text;
/// where it is shown as HTML again, it is escaped (`HTMLText.escape`).
///
/// A single forward scan over tag soup, with no tree and no recursion: the work is linear in the
/// input, whatever its nesting or errors. (FHIRNarrative is the other reader of HTML here: it checks
/// well-formed XHTML against FHIR's allow list to show it as HTML; this one reads anything, to text.)
///
///     HTMLPlainText.text("<p>Dose: <b>5&nbsp;mg</b></p><script>alert(1)</script>")  // "Dose: 5 mg"
public enum HTMLPlainText {
    public enum Markup: Sendable { case html, xml }

    /// Elements whose content is never text to read.
    static let dropped: Set<String> = ["script", "style", "template", "head", "noscript", "iframe", "object", "svg", "math", "title"]
    /// Elements that start a new line.
    static let blocks: Set<String> = [
        "p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "ul", "ol", "dl", "dt", "dd", "blockquote",
        "pre", "section", "article", "header", "footer", "hr", "address", "caption", "thead", "tbody", "tfoot", "body", "html",
        "paragraph", "list", "item", "content",   // CDA narrative blocks
    ]

    public static func text(_ source: String, markup: Markup = .html) -> String {
        let bytes = Array(source.utf8)
        var out = Output()
        var index = 0
        var links: [String?] = []   // href of each open <a>
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                // Text up to the next tag.
                let start = index
                while index < count, bytes[index] != UInt8(ascii: "<") { index += 1 }
                out.append(decodeEntities(bytes[start..<index]))
                continue
            }
            // <!-- comment -->, <![CDATA[ … ]]>, <!DOCTYPE …>, <? … ?>
            if starts(bytes, at: index, with: "<!--") {
                index = find(bytes, "-->", from: index + 4).map { $0 + 3 } ?? count
                continue
            }
            if starts(bytes, at: index, with: "<![CDATA[") {
                let end = find(bytes, "]]>", from: index + 9) ?? count
                if markup == .xml { out.append(String(decoding: bytes[(index + 9)..<end], as: UTF8.self)) }
                index = min(count, end + 3)
                continue
            }
            if index + 1 < count, bytes[index + 1] == UInt8(ascii: "!") || bytes[index + 1] == UInt8(ascii: "?") {
                index = find(bytes, ">", from: index + 2).map { $0 + 1 } ?? count
                continue
            }
            let closing = index + 1 < count && bytes[index + 1] == UInt8(ascii: "/")
            var cursor = index + (closing ? 2 : 1)
            let nameStart = cursor
            while cursor < count, isNameByte(bytes[cursor]) { cursor += 1 }
            guard cursor > nameStart, isLetter(bytes[nameStart]) else {
                // A '<' that opens no tag is text.
                out.append("<")
                index += 1
                continue
            }
            var name = String(decoding: bytes[nameStart..<cursor], as: UTF8.self).lowercased()
            if let colon = name.lastIndex(of: ":") { name = String(name[name.index(after: colon)...]) }
            let (attributes, end, selfClosing) = readAttributes(bytes, from: cursor, wantHref: !closing && name == "a")
            index = end
            if closing {
                if name == "a", let href = links.popLast() ?? nil { out.append(" (\(href))") }
                if blocks.contains(name) { out.newline() } else if markup == .xml || name == "td" || name == "th" { out.space() }
                continue
            }
            if markup == .html, dropped.contains(name) {
                // Everything up to the matching end tag (or the end of the input) is dropped; as in a
                // browser, `<script/>` opens a script all the same.
                index = endOfElement(bytes, name: name, from: index)
                out.space()
                continue
            }
            switch name {
            case "a" where !selfClosing: links.append(attributes)
            case "li", "item": out.newline(); out.append("• ")
            case "td", "th": out.space()
            case "img":
                break
            default:
                if blocks.contains(name) { out.newline() } else if markup == .xml { out.space() }
            }
        }
        return out.finish()
    }

    /// Reads a tag's attributes up to its `>`, honouring quotes; answers an `a`'s href when it is a
    /// link worth showing, the index after the tag, and whether it ended with `/>`.
    static func readAttributes(_ bytes: [UInt8], from start: Int, wantHref: Bool) -> (href: String?, end: Int, selfClosing: Bool) {
        var index = start
        var href: String?
        var selfClosing = false
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ">") { return (href, index + 1, selfClosing) }
            if byte == UInt8(ascii: "/") { selfClosing = true; index += 1; continue }
            if isSpace(byte) { index += 1; continue }
            selfClosing = false
            let nameStart = index
            while index < count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ">"),
                  bytes[index] != UInt8(ascii: "/") { index += 1 }
            let attributeName = String(decoding: bytes[nameStart..<index], as: UTF8.self).lowercased()
            while index < count, isSpace(bytes[index]) { index += 1 }
            guard index < count, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            while index < count, isSpace(bytes[index]) { index += 1 }
            var valueStart = index, valueEnd = index
            if index < count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") {
                let quote = bytes[index]
                valueStart = index + 1
                valueEnd = valueStart
                while valueEnd < count, bytes[valueEnd] != quote { valueEnd += 1 }
                index = min(count, valueEnd + 1)
            } else {
                while index < count, !isSpace(bytes[index]), bytes[index] != UInt8(ascii: ">") { index += 1 }
                valueEnd = index
            }
            if wantHref, attributeName == "href" {
                let value = decodeEntities(bytes[valueStart..<valueEnd]).trimmingCharacters(in: .whitespacesAndNewlines)
                let lower = value.lowercased()
                if lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("mailto:") { href = value }
            }
        }
        return (href, count, selfClosing)
    }

    /// The index after `</name …>`, or the end of the input.
    static func endOfElement(_ bytes: [UInt8], name: String, from start: Int) -> Int {
        let needle = Array(("</" + name).utf8)
        var index = start
        let count = bytes.count
        while index + needle.count <= count {
            if bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "/") {
                var match = true
                for k in 2..<needle.count where lower(bytes[index + k]) != needle[k] { match = false; break }
                let after = index + needle.count
                if match, after == count || !isNameByte(bytes[after]) {
                    return find(bytes, ">", from: after).map { $0 + 1 } ?? count
                }
            }
            index += 1
        }
        return count
    }

    // MARK: Entities

    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "copy": "©", "reg": "®", "trade": "™",
        "hellip": "…", "mdash": "—", "ndash": "–", "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "bull": "•",
        "middot": "·", "deg": "°", "plusmn": "±", "times": "×", "divide": "÷", "micro": "µ", "para": "¶", "sect": "§",
        "frac12": "½", "frac14": "¼", "frac34": "¾", "le": "≤", "ge": "≥", "ne": "≠", "eacute": "é", "egrave": "è",
        "agrave": "à", "aacute": "á", "uuml": "ü", "ouml": "ö", "auml": "ä", "szlig": "ß", "ccedil": "ç", "ntilde": "ñ",
        "euro": "€", "pound": "£", "shy": "",
    ]

    /// Text with `&name;`, `&#NNN;` and `&#xHH;` decoded; what is not an entity stays as it is.
    static func decodeEntities(_ bytes: ArraySlice<UInt8>) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        var out = ""
        var index = bytes.startIndex
        var plainStart = index
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: "&") else { index += 1; continue }
            // At most 32 bytes to the ';'.
            var end = index + 1
            while end < bytes.endIndex, end - index <= 32, bytes[end] != UInt8(ascii: ";"), bytes[end] != UInt8(ascii: "&") { end += 1 }
            guard end < bytes.endIndex, bytes[end] == UInt8(ascii: ";") else { index += 1; continue }
            let body = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
            var replacement: String?
            if body.hasPrefix("#") {
                let digits = body.dropFirst()
                let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
                if let value, value != 0, let scalar = Unicode.Scalar(value) { replacement = String(Character(scalar)) }
                else if value != nil { replacement = "\u{FFFD}" }
            } else {
                replacement = named[body] ?? named[body.lowercased()]
            }
            if let replacement {
                out += String(decoding: bytes[plainStart..<index], as: UTF8.self)
                out += replacement
                index = end + 1
                plainStart = index
            } else {
                index += 1
            }
        }
        out += String(decoding: bytes[plainStart..<bytes.endIndex], as: UTF8.self)
        return out
    }

    // MARK: Bytes

    static func starts(_ bytes: [UInt8], at index: Int, with text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return text.withUTF8Buffer { needle in
            for k in 0..<count where lower(bytes[index + k]) != lower(needle[k]) { return false }
            return true
        }
    }

    static func find(_ bytes: [UInt8], _ text: StaticString, from start: Int) -> Int? {
        let count = text.utf8CodeUnitCount
        guard start <= bytes.count, count > 0 else { return nil }
        return text.withUTF8Buffer { needle -> Int? in
            var index = start
            while index + count <= bytes.count {
                if bytes[index] == needle[0] {
                    var match = true
                    for k in 1..<count where bytes[index + k] != needle[k] { match = false; break }
                    if match { return index }
                }
                index += 1
            }
            return nil
        }
    }

    static func lower(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte }
    static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "_")
    }
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C }

    /// Text with runs of white space made one space, at most one empty line in a row, and no
    /// spaces at the ends of lines.
    struct Output {
        var text = ""
        var pendingSpace = false
        var pendingNewlines = 0

        mutating func append(_ piece: String) {
            for character in piece {
                if character.isWhitespace && !character.isNewline || character == "\u{00A0}" {
                    if !text.isEmpty { pendingSpace = true }
                } else if character.isNewline {
                    if !text.isEmpty { pendingSpace = true }
                } else {
                    if pendingNewlines > 0 {
                        text += String(repeating: "\n", count: min(2, pendingNewlines))
                        pendingNewlines = 0
                        pendingSpace = false
                    } else if pendingSpace {
                        text += " "
                        pendingSpace = false
                    }
                    text.append(character)
                }
            }
        }

        mutating func space() { if !text.isEmpty { pendingSpace = true } }
        mutating func newline() { if !text.isEmpty { pendingNewlines += 1 } }
        func finish() -> String { text }
    }
}
