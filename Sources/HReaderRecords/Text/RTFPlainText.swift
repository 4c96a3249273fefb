/// RTF reduced to its text: groups, control words and symbols, `\'hh` bytes in the document's code
/// page (Windows-1252, else ISO-8859-1), `\uN` with its `\ucN` fallback characters skipped, and the
/// destinations that hold no reading text skipped whole (`\*`, font, colour and style tables,
/// `\info`, pictures, objects, headers and footers, field instructions). `\bin` data is skipped by its
/// length. A single forward scan with a bounded stack: linear work on any input, however nested or
/// broken.
///
///     RTFPlainText.text(Array(#"{\rtf1\ansi{\fonttbl{\f0 Arial;}}Caf\'e9 \u8364? 5\par}"#.utf8))  // "Café € 5"
public enum RTFPlainText {
    /// Destinations skipped with everything in them.
    static let skippedDestinations: Set<String> = [
        "fonttbl", "colortbl", "stylesheet", "info", "pict", "object", "header", "headerl", "headerr", "headerf",
        "footer", "footerl", "footerr", "footerf", "fldinst", "themedata", "colorschememapping", "datastore",
        "latentstyles", "listtable", "listoverridetable", "rsidtbl", "generator", "xmlnstbl", "mmathPr", "filetbl",
        "revtbl", "pgdsctbl", "bkmkstart", "bkmkend", "nonshppict", "shppict", "shpinst", "sp", "sn", "sv", "template",
        "operator", "author", "title", "subject", "keywords", "comment", "doccomm", "xe", "tc", "private", "passwordhash",
        "wgrffmtfilter", "listtext", "pntext", "pntxta", "pntxtb", "fldtype", "objdata", "blipuid", "factoidname",
    ]

    /// Groups nested deeper than this are read as skipped.
    static let maxDepth = 256

    struct State {
        var skip = false
        var fallback = 1   // \ucN: characters after \uN to skip
    }

    public static func text(_ bytes: [UInt8]) -> String {
        var out = String.UnicodeScalarView()
        var stack: [State] = []
        var state = State()
        var depth = 0           // groups open beyond the stack (too deep)
        var windows1252 = true
        var toSkip = 0          // fallback characters still to skip after a \uN
        var highSurrogate: UInt32?
        var index = 0
        let count = bytes.count
        var groupJustOpened = false

        func emit(_ scalar: Unicode.Scalar) {
            if toSkip > 0 { toSkip -= 1; return }
            if state.skip || depth > 0 { return }
            out.append(scalar)
        }
        func emitByte(_ byte: UInt8) {
            emit(windows1252 ? DocumentText.windows1252Scalar(byte) : Unicode.Scalar(byte))
        }
        func emitText(_ text: String) {
            if toSkip > 0 { toSkip = 0 }
            if state.skip || depth > 0 { return }
            out.append(contentsOf: text.unicodeScalars)
        }

        while index < count {
            let byte = bytes[index]
            let opened = groupJustOpened
            groupJustOpened = false
            switch byte {
            case UInt8(ascii: "{"):
                toSkip = 0
                if stack.count < maxDepth && depth == 0 { stack.append(state) } else { depth += 1 }
                groupJustOpened = true
                index += 1
            case UInt8(ascii: "}"):
                toSkip = 0
                if depth > 0 { depth -= 1 } else if let previous = stack.popLast() { state = previous }
                index += 1
            case 0x0D, 0x0A:
                index += 1
            case UInt8(ascii: "\\"):
                index += 1
                guard index < count else { break }
                let next = bytes[index]
                if HTMLPlainText.isLetter(next) {
                    let wordStart = index
                    while index < count, HTMLPlainText.isLetter(bytes[index]), index - wordStart < 32 { index += 1 }
                    let word = String(decoding: bytes[wordStart..<index], as: UTF8.self)
                    var parameter: Int?
                    var negative = false
                    if index < count, bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
                    let digitsStart = index
                    while index < count, (0x30...0x39).contains(bytes[index]), index - digitsStart < 10 { index += 1 }
                    if index > digitsStart, let value = Int(String(decoding: bytes[digitsStart..<index], as: UTF8.self)) {
                        parameter = negative ? -value : value
                    }
                    if index < count, bytes[index] == 0x20 { index += 1 }
                    if skippedDestinations.contains(word) { state.skip = true; continue }
                    switch word {
                    case "par", "line", "sect", "page", "row": highSurrogate = nil; emitText("\n")
                    case "tab", "cell": emitText("\t")
                    case "emdash": emit("\u{2014}")
                    case "endash": emit("\u{2013}")
                    case "bullet": emit("\u{2022}")
                    case "lquote": emit("\u{2018}")
                    case "rquote": emit("\u{2019}")
                    case "ldblquote": emit("\u{201C}")
                    case "rdblquote": emit("\u{201D}")
                    case "emspace", "enspace", "qmspace": emit(" ")
                    case "ansicpg": windows1252 = parameter == 1252
                    case "mac", "pc", "pca": windows1252 = false
                    case "uc": state.fallback = max(0, min(parameter ?? 1, 8))
                    case "u":
                        guard let parameter else { break }
                        var value = UInt32(truncatingIfNeeded: parameter < 0 ? parameter + 65536 : parameter) & 0xFFFF
                        toSkip = 0
                        if (0xD800...0xDBFF).contains(value) {
                            highSurrogate = value
                        } else {
                            if (0xDC00...0xDFFF).contains(value), let high = highSurrogate {
                                value = 0x10000 + ((high - 0xD800) << 10) + (value - 0xDC00)
                            }
                            highSurrogate = nil
                            if let scalar = Unicode.Scalar(value), value != 0 { emit(scalar) }
                        }
                        toSkip = state.fallback
                    case "bin":
                        // Binary data of that many bytes: never text.
                        index = min(count, index + max(0, parameter ?? 0))
                    default:
                        break
                    }
                } else {
                    index += 1
                    switch next {
                    case UInt8(ascii: "'"):
                        if index + 1 < count, let value = UInt8(String(decoding: bytes[index...(index + 1)], as: UTF8.self), radix: 16) {
                            index += 2
                            emitByte(value)
                        }
                    case UInt8(ascii: "*"):
                        state.skip = true
                        _ = opened
                    case UInt8(ascii: "~"): emit(" ")
                    case UInt8(ascii: "_"): emit("-")
                    case UInt8(ascii: "-"): break
                    case UInt8(ascii: "\\"), UInt8(ascii: "{"), UInt8(ascii: "}"): emitByte(next)
                    case 0x0D, 0x0A: emitText("\n")
                    default: break
                    }
                }
            default:
                emitByte(byte)
                index += 1
            }
        }
        return tidy(String(out))
    }

    /// No spaces at the ends of lines, at most one empty line in a row.
    static func tidy(_ text: String) -> String {
        var lines: [Substring] = []
        var empty = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var trimmed = line[...]
            while let last = trimmed.last, last == " " || last == "\t" { trimmed = trimmed.dropLast() }
            if trimmed.isEmpty { empty += 1; if empty > 1 { continue } } else { empty = 0 }
            lines.append(trimmed)
        }
        return lines.joined(separator: "\n")
    }
}
