/// What the text helpers (pdftotext, Tesseract) hand back, made into readable text: pure functions, no
/// I/O, bounded, fuzzed (`make fuzz FUZZ_HARNESSES=extracted-text`). Their output is untrusted like
/// the document it came from.
public enum ExtractedText {
    /// The most text kept for one document (as `DocumentText`).
    public static let maxCharacters = 4 << 20

    /// A page of `pdftotext` output with fewer letters or digits than this has no usable text layer
    /// (a scan, perhaps with a stray page number), and is read by OCR instead.
    public static let minimumPageCharacters = 16

    /// `pdftotext`'s output split into pages (it ends each page with a form feed).
    public static func pages(ofPDFText bytes: [UInt8]) -> [String] {
        var pages = PDFPages()
        bytes.withUnsafeBufferPointer { pages.append($0) }
        return pages.finish()
    }

    /// `pages(ofPDFText:)` while `pdftotext` is still writing: each page is tidied (straight from its
    /// bytes) as soon as its form feed has come, so only the last is left when the helper ends.
    ///
    ///     var pages = ExtractedText.PDFPages()
    ///     pages.append(piece)             // as many times as pieces come
    ///     let text = pages.finish()
    public struct PDFPages: Sendable {
        private var pages: [String] = []
        /// The bytes of the page being written.
        private var partial: [UInt8] = []

        public init() {}

        public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
            var start = 0
            for end in bytes.indices where bytes[end] == 0x0C {
                if partial.isEmpty {
                    pages.append(tidy(utf8: UnsafeBufferPointer(rebasing: bytes[start..<end])))
                } else {
                    partial += bytes[start..<end]
                    pages.append(partial.withUnsafeBufferPointer { tidy(utf8: $0) })
                    partial.removeAll(keepingCapacity: true)
                }
                start = end + 1
            }
            partial += bytes[start...]
        }

        /// The pages, once the output has ended. The form feed ends a page, so the piece after the last
        /// one is not a page; output without any is one page.
        public func finish() -> [String] {
            pages.isEmpty ? [partial.withUnsafeBufferPointer { tidy(utf8: $0) }] : pages
        }
    }

    /// Whether a page's text layer holds enough to be read without OCR.
    public static func hasText(_ page: String) -> Bool {
        var count = 0
        for scalar in page.unicodeScalars where scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
            count += 1
            if count >= minimumPageCharacters { return true }
        }
        return false
    }

    /// Tesseract's TSV output (`tesseract … tsv`): the words joined into lines (by block, paragraph and
    /// line number) and paragraphs, and the mean confidence of the words (nil when there are none).
    public static func ocr(tsv bytes: [UInt8]) -> (text: String, confidence: Double?, words: Int) {
        var lines: [String] = []
        var line: [Substring] = []
        var lineKey: (Int, Int, Int, Int)? = nil
        var paragraphKey: (Int, Int, Int)? = nil
        var confidenceSum = 0.0
        var words = 0
        var characters = 0
        func endLine() {
            if !line.isEmpty { lines.append(line.joined(separator: " ")); characters += lines.last!.count + 1 }
            line = []
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for row in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if characters > maxCharacters { break }
            let fields = row.split(separator: "\t", maxSplits: 11, omittingEmptySubsequences: false)
            // level page_num block_num par_num line_num word_num left top width height conf text
            guard fields.count == 12, fields[0] == "5", let page = Int(fields[1]), let block = Int(fields[2]), let paragraph = Int(fields[3]),
                  let number = Int(fields[4]), let confidence = Double(fields[10]), confidence >= 0, confidence <= 100 else { continue }
            let word = fields[11].trimmingCharacters(in: " \r")
            guard !word.isEmpty else { continue }
            let key = (page, block, paragraph, number)
            if lineKey == nil || lineKey! != key {
                endLine()
                if let previous = paragraphKey, previous != (page, block, paragraph), !lines.isEmpty, lines.last != "" { lines.append("") }
                lineKey = key
                paragraphKey = (page, block, paragraph)
            }
            line.append(word)
            confidenceSum += confidence
            words += 1
        }
        endLine()
        let joined = tidy(lines.joined(separator: "\n"))
        return (joined, words > 0 ? confidenceSum / Double(words) : nil, words)
    }

    /// Control characters but line breaks and tabs removed, trailing spaces trimmed, runs of blank
    /// lines made one, cut at `maxCharacters`. One pass over the UTF-8 bytes; only lines with
    /// non-ASCII text look at Unicode properties (format characters such as bidi overrides go too).
    public static func tidy(_ text: String) -> String {
        var text = text
        return text.withUTF8 { tidy(utf8: $0) }
    }

    /// As above, over UTF-8 bytes as a helper wrote them: what is not UTF-8 becomes U+FFFD, as
    /// `String(decoding:as:)` makes it (a line break never falls inside a UTF-8 sequence, so each line
    /// decodes alone). Each line is written straight into the result, and taken back when it is dropped.
    static func tidy(utf8 bytes: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(min(bytes.count, maxCharacters))
        var blankRun = 0
        var count = 0
        var start = 0
        while start <= bytes.count {
            var end = start
            var ascii = true
            while end < bytes.count, bytes[end] != 0x0A {
                if bytes[end] >= 0x80 { ascii = false }
                end += 1
            }
            defer { start = end + 1 }
            let before = out.count
            if before > 0 { out.append(0x0A) }
            let body = out.count
            var characters = 0
            if ascii {
                for i in start..<end {
                    let byte = bytes[i]
                    if byte >= 0x20 && byte != 0x7F || byte == 0x09 { out.append(byte) }
                }
                characters = out.count - body
            } else {
                for scalar in String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self).unicodeScalars {
                    if scalar.value < 0x80 {
                        guard scalar.value >= 0x20 && scalar.value != 0x7F || scalar == "\t" else { continue }
                    } else {
                        let category = scalar.properties.generalCategory
                        guard category != .control, category != .format || scalar == "\u{200D}" else { continue }
                    }
                    UTF8.encode(scalar) { out.append($0) }
                    characters += 1
                }
            }
            while out.count > body, out[out.count - 1] == 0x20 || out[out.count - 1] == 0x09 { out.removeLast(); characters -= 1 }
            if out.count == body {
                blankRun += 1
                if blankRun > 1 || before == 0 { out.removeSubrange(before...); continue }
            } else {
                blankRun = 0
            }
            if count + characters + 1 > maxCharacters { out.removeSubrange(before...); break }
            count += characters + 1
        }
        while out.last == 0x0A { out.removeLast() }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> Substring {
        var s = self[...]
        while let first = s.first, set.contains(first) { s = s.dropFirst() }
        while let last = s.last, set.contains(last) { s = s.dropLast() }
        return s
    }
}
