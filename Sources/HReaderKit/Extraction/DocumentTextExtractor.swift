import Foundation
import HReaderRecords
import HReaderStore

/// Reads a document's text: in process for text, HTML, RTF and XML (`DocumentText`); for a PDF, its
/// own text layer by `pdftotext`, and the pages without one rendered at 300 dpi (grey PGM) by `pdftoppm` and read
/// by Tesseract; for an image, Tesseract. Every helper runs as a `SandboxedChild`, fed the decrypted
/// bytes on stdin: nothing is written to disk, and a hostile file can at most make its helper fail.
///
///     let result = DocumentTextExtractor(tools: .find(), languages: "eng").extract(bytes, contentType: "application/pdf")
///     // result.method == .pdfText, result.text == "Discharge summary…"
public struct DocumentTextExtractor: Sendable {
    public var tools: TextTools
    /// Tesseract's languages (`eng`, `eng+deu`).
    public var languages: String
    /// Read PDF pages without a text layer, and images, by OCR.
    public var ocr = true
    /// Rendering resolution of a PDF page for OCR.
    public var dpi = 300
    /// At most this many pages of one PDF are read by OCR (the rest are noted).
    public var maxOCRPages = 200
    public var limits = SandboxedChild.Limits()
    /// How long `documents add` waits, its transaction open, for a PDF's text layer once the bytes are
    /// stored (to keep both in one commit); a slower text is kept in a transaction of its own.
    /// Well within another writer's `busy_timeout` (10 s).
    public var textLayerWait: TimeInterval = 2
    /// Called before each page is read by OCR (page, of pages): progress on a terminal.
    public var progress: (@Sendable (Int, Int) -> Void)? = nil

    public init(tools: TextTools, languages: String) {
        self.tools = tools; self.languages = languages
    }

    /// Whether this kind of document needs a helper (a PDF or an image) rather than `DocumentText`.
    public static func needsHelper(_ contentType: String?) -> Bool {
        guard let type = DocumentContentType.mediaType(contentType) else { return false }
        return type == "application/pdf" || type.hasPrefix("image/")
    }

    public func extract(_ bytes: [UInt8], contentType: String?) -> DocumentTextResult {
        extract(.inMemory(bytes), contentType: contentType)
    }

    /// As above, the bytes streamed to each helper from `bytes` (the vault's chunks), never whole in memory
    /// but for text read in process (at most `DocumentText.maxInputBytes`).
    public func extract(_ bytes: DocumentBytes, contentType: String?) -> DocumentTextResult {
        let type = DocumentContentType.mediaType(contentType) ?? ""
        if type == "application/pdf" { return pdf(bytes) }
        if type.hasPrefix("image/") { return image(bytes, type: type) }
        if DocumentContentType.hasReadableText(contentType) {
            guard let whole = try? bytes.whole(limit: DocumentText.maxInputBytes) else {
                return DocumentTextResult(text: nil, method: .none, note: "too large to read as text")
            }
            let text = DocumentText.readable(whole, contentType: contentType)
            return text.map { DocumentTextResult(text: $0, method: .text) }
                ?? DocumentTextResult(text: nil, method: .none, note: "no readable text")
        }
        return DocumentTextResult(text: nil, method: .none, note: "no readable text in this kind of document")
    }

    static let installPoppler = "no text: install poppler-utils"
    static let installTesseract = "no text: install tesseract-ocr"
    static let heicUnread = "not read: HEIC photos cannot be read here; save the photo as JPEG or PNG and add that"

    func image(_ bytes: DocumentBytes, type: String) -> DocumentTextResult {
        guard ocr else { return DocumentTextResult(text: nil, method: .none, note: "not read: OCR was turned off") }
        let first = try? bytes.first()
        // Tesseract reads images through leptonica, which has no HEIC decoder; Debian's HEIC tools
        // (libheif's) read a named file only, and the decrypted photo must not be written to disk.
        if type == "image/heic" || type == "image/heif" || first.map(DocumentContentType.isHEIF) == true {
            return DocumentTextResult(text: nil, method: .none, note: Self.heicUnread)
        }
        guard tools.tesseract != nil else { return DocumentTextResult(text: nil, method: .none, note: Self.installTesseract) }
        if let first, let problem = ImageHeader.problem(first) {
            return DocumentTextResult(text: nil, method: .none, note: "not read: \(problem)")
        }
        do {
            let page = try recognize(bytes)
            guard !page.text.isEmpty else { return DocumentTextResult(text: nil, method: .none, note: "OCR found no text", languages: languages) }
            return DocumentTextResult(text: page.text, method: .ocr, confidence: page.confidence, languages: languages)
        } catch {
            return DocumentTextResult(text: nil, method: .none, note: "not read: \(error)", languages: languages)
        }
    }

    /// How `pdftotext` is asked for a PDF's text layer: the PDF on stdin, UTF-8 text on stdout, a form
    /// feed after each page.
    static let pdftotextArguments = ["-q", "-enc", "UTF-8", "fd://0", "-"]

    /// As `extract`, for a PDF whose text layer was read already (`PDFTextLayerRun`): `bytes` are only
    /// read again to render the pages without one for OCR.
    func pdf(_ bytes: DocumentBytes, layer: Result<[String], Error>? = nil) -> DocumentTextResult {
        guard let pdftotext = tools.pdftotext else { return DocumentTextResult(text: nil, method: .none, note: Self.installPoppler) }
        let layer = layer ?? Result {
            ExtractedText.pages(ofPDFText: try bytes.feed(SandboxedChild(executable: pdftotext, limits: limits), Self.pdftotextArguments).stdout)
        }
        return pdfWithoutOCR(layer) ?? pdfWithOCR(bytes, pages: (try? layer.get()) ?? [])
    }

    /// A PDF's text when its text layer is the whole answer: every page has one, or OCR is off or its
    /// tools are missing, or `pdftotext` failed (the reason). Nil when pages without a text layer are to
    /// be read by OCR. Nothing runs here: `documents add` stores this in the transaction of the bytes.
    func pdfWithoutOCR(_ layer: Result<[String], Error>) -> DocumentTextResult? {
        guard tools.pdftotext != nil else { return DocumentTextResult(text: nil, method: .none, note: Self.installPoppler) }
        let pages: [String]
        switch layer {
        case let .success(read): pages = read
        case let .failure(error): return DocumentTextResult(text: nil, method: .none, note: "not read: \(error)")
        }
        let missing = pages.indices.filter { !ExtractedText.hasText(pages[$0]) }
        guard missing.isEmpty || !ocr || tools.tesseract == nil || tools.pdftoppm == nil else { return nil }
        var notes: [String] = []
        if !missing.isEmpty {
            notes.append(!ocr ? "\(missing.count) of \(pages.count) pages without a text layer (not read: OCR was turned off)"
                         : "\(missing.count) of \(pages.count) pages without a text layer: install " + (tools.pdftoppm == nil ? "poppler-utils" : "tesseract-ocr"))
        }
        return pdfResult(pages, texts: pages, missing: missing, notes: notes, confidences: [])
    }

    /// The pages without a text layer rendered at `dpi` by `pdftoppm` (fed `bytes` again for each) and
    /// read by Tesseract, at most `maxOCRPages` of them.
    func pdfWithOCR(_ bytes: DocumentBytes, pages: [String]) -> DocumentTextResult {
        let missing = pages.indices.filter { !ExtractedText.hasText(pages[$0]) }
        var texts = pages
        var notes: [String] = []
        var confidences: [(Double, Int)] = []
        var failed: [String] = []
        for (done, index) in missing.prefix(maxOCRPages).enumerated() {
            progress?(done + 1, min(missing.count, maxOCRPages))
            do {
                // Grey PGM: no compression to spend time on (a letter page at 300 dpi is 8.4 MB, held
                // once; PNG took 2.5 times as long to render here).
                let image = try bytes.feed(SandboxedChild(executable: tools.pdftoppm!, limits: limits),
                                           ["-r", String(dpi), "-f", String(index + 1), "-l", String(index + 1), "-gray", "fd://0"]).stdout
                let page = try recognize(.inMemory(image))
                // A thin text layer (a one-line label) stays the page's text when OCR reads nothing.
                if !page.text.isEmpty { texts[index] = page.text }
                if let confidence = page.confidence { confidences.append((confidence, page.words)) }
            } catch {
                failed.append("page \(index + 1): \(error)")
            }
        }
        if missing.count > maxOCRPages { notes.append("\(missing.count - maxOCRPages) pages beyond the first \(maxOCRPages) scanned ones not read") }
        if let first = failed.first { notes.append(failed.count == 1 ? "not read: \(first)" : "\(failed.count) pages not read (\(first))") }
        return pdfResult(pages, texts: texts, missing: missing, notes: notes, confidences: confidences)
    }

    /// The pages' texts (the layer's, and OCR's where it read) joined into the document's.
    private func pdfResult(_ pages: [String], texts: [String], missing: [Int], notes: [String], confidences: [(Double, Int)]) -> DocumentTextResult {
        // Each page is tidy already; joined, only the whole's length is left to bound.
        var text = texts.filter { !$0.isEmpty }.joined(separator: "\n\n")
        if text.utf8.count > ExtractedText.maxCharacters { text = ExtractedText.tidy(text) }
        let note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        // Any letter or digit read is text, however short (a label's one line, which is too thin a
        // layer to skip OCR for); OCR's stray marks of a blank page are not.
        guard text.unicodeScalars.contains(where: { $0.properties.isAlphabetic || ("0"..."9").contains($0) }) else {
            return DocumentTextResult(text: text.isEmpty ? nil : text, method: .none,
                                      note: note ?? (pages.isEmpty ? "not read: the PDF has no pages" : "no text found"),
                                      languages: confidences.isEmpty ? nil : languages)
        }
        if confidences.isEmpty { return DocumentTextResult(text: text, method: .pdfText, note: note) }
        let words = confidences.reduce(0) { $0 + $1.1 }
        let mean = words == 0 ? nil : confidences.reduce(0.0) { $0 + $1.0 * Double($1.1) } / Double(words)
        let mixed = missing.count < pages.count ? "\(pages.count - missing.count) of \(pages.count) pages from the text layer" : nil
        return DocumentTextResult(text: text, method: .ocr, confidence: mean, note: [mixed, note].compactMap { $0 }.joined(separator: "; ").nilIfEmpty,
                                  languages: languages)
    }

    /// One image (PNG, JPEG, TIFF, …) through Tesseract: automatic page segmentation with orientation
    /// and script detection (`--psm 1`), so a page photographed sideways reads.
    func recognize(_ image: DocumentBytes) throws -> (text: String, confidence: Double?, words: Int) {
        let outcome = try image.feed(SandboxedChild(executable: tools.tesseract!, limits: limits),
                                     ["stdin", "stdout", "--psm", "1", "-l", languages, "tsv"])
        return ExtractedText.ocr(tsv: outcome.stdout)
    }
}

/// A document's bytes, read from the start as often as a helper needs them (each PDF page is rendered
/// by its own `pdftoppm`, fed the whole file): from memory, or from the vault one chunk at a time.
public struct DocumentBytes {
    /// A fresh stream of the bytes: each call of what it returns gives the next piece, nil at the end.
    let open: () throws -> () throws -> [UInt8]?

    public init(open: @escaping () throws -> () throws -> [UInt8]?) { self.open = open }

    public static func inMemory(_ bytes: [UInt8]) -> DocumentBytes {
        DocumentBytes {
            var offset = 0
            return {
                guard offset < bytes.count else { return nil }
                let end = min(bytes.count, offset + DocumentRepository.chunkSize)
                defer { offset = end }
                return Array(bytes[offset..<end])
            }
        }
    }

    /// The first piece (an image's header).
    func first() throws -> [UInt8]? { try open()() }

    /// All of it, when it is at most `limit` bytes; nil when larger.
    func whole(limit: Int) throws -> [UInt8]? {
        let next = try open()
        var all: [UInt8] = []
        while let piece = try next() {
            all += piece
            if all.count > limit { return nil }
        }
        return all
    }

    /// Runs `child` with these bytes on its stdin.
    func feed(_ child: SandboxedChild, _ arguments: [String]) throws -> SandboxedChild.Outcome {
        let next = try open()
        var failure: Error?
        let outcome = try child.run(arguments, pulling: {
            do { return try next() } catch { failure = error; return nil }
        })
        if let failure { throw failure }
        return outcome
    }
}

/// The dimensions an image declares, read from its header before any decoder sees it: an image
/// that asks for more pixels than `maxPixels` is refused in the parent (the child's memory limit
/// would stop it too, later).
enum ImageHeader {
    static let maxPixels = 100_000_000

    static func problem(_ bytes: [UInt8]) -> String? {
        guard let (width, height) = dimensions(bytes) else { return nil }
        if width == 0 || height == 0 { return "the image declares no pixels" }
        if width * height > maxPixels { return "the image declares \(width) × \(height) pixels, over the \(maxPixels / 1_000_000) million read here" }
        return nil
    }

    /// PNG (IHDR) and JPEG (the first SOF marker); nil for others.
    static func dimensions(_ b: [UInt8]) -> (Int, Int)? {
        func be(_ i: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 << 8 | Int(b[i + $1]) } }
        if b.count >= 24, b[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], b[12..<16] == [0x49, 0x48, 0x44, 0x52] {
            return (be(16, 4), be(20, 4))
        }
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var i = 2
        while i + 9 < b.count {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { i += 2; continue }
            let length = be(i + 2, 2)
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC { return (be(i + 7, 2), be(i + 5, 2)) }
            guard length >= 2 else { return nil }
            i += 2 + length
        }
        return nil
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
