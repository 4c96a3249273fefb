import CZbar
import Foundation
import HReaderJSON
import HReaderRecords

/// The QR codes in a picture or on a PDF's pages (issue 37: a SMART Health Card printed or in a PDF,
/// a link photographed off a screen). Every parser of the bytes runs in the sandboxed child, fed over
/// pipes: netpbm turns a PNG, JPEG, GIF or TIFF into a plain PNM (`pngtopnm`, …), poppler draws a
/// PDF's pages as grey PGM (`pdftoppm`), and zbar reads the codes in hreader's own child,
/// `hreader scan-qr-codes`, which loads libzbar. (zbar's `zbarimg` goes through ImageMagick, which
/// spools its input to a file in /tmp: the sandbox refuses that, and it should.)
public struct QRCodeScanner: Sendable {
    public var converters: [String: String]
    public var text: TextTools
    /// Pages of a PDF looked at (a card is a page or two; a long PDF is a document, not a card).
    public static let maxPages = 20
    /// The resolution a PDF page is drawn at: a printed card's code needs no more.
    static let dpi = 150
    /// The most pixels a picture may have for zbar (a 12-megapixel photo is well within).
    static let maxPixels = 100_000_000

    public static func find(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> QRCodeScanner {
        var converters: [String: String] = [:]
        for name in ["pngtopnm", "jpegtopnm", "giftopnm", "tifftopnm"] { converters[name] = TextTools.executable(name, environment) }
        return QRCodeScanner(converters: converters, text: TextTools.find(environment))
    }

    public enum Kind: Sendable { case png, jpeg, gif, tiff, pdf }

    /// A picture or a PDF, by its first bytes.
    public static func kind(of bytes: some Collection<UInt8>) -> Kind? {
        let head = Array(bytes.prefix(8))
        func starts(_ magic: [UInt8]) -> Bool { head.count >= magic.count && Array(head.prefix(magic.count)) == magic }
        if starts(Array("%PDF-".utf8)) { return .pdf }
        if starts([0x89, 0x50, 0x4E, 0x47]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF8".utf8)) { return .gif }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        return nil
    }

    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Every QR code's text, in the order zbar found them (page by page for a PDF).
    public func codes(in bytes: [UInt8], kind: Kind) throws -> [String] {
        guard let reader = Self.childExecutable else { throw Failure(description: "reading QR codes needs Linux's sandbox for its helpers") }
        // A picture that declares more pixels than are read here is refused before any decoder sees it,
        // as DocumentTextExtractor refuses it (the child's memory limit would stop it too, later).
        if kind != .pdf, let problem = ImageHeader.problem(bytes) { throw Failure(description: problem) }
        func drawn(_ tool: String, _ package: String, _ arguments: [String]) throws -> [UInt8] {
            guard let path = kind == .pdf ? text.pdftoppm : converters[tool] else {
                throw Failure(description: "reading a \(kind) picture's QR codes needs \(tool) (Debian: \(package))")
            }
            do { return try SandboxedChild(executable: path).run(arguments, input: bytes).stdout } catch {
                throw Failure(description: "the picture could not be read: \(error)")
            }
        }
        func scanned(_ pnm: [UInt8]) throws -> [String] {
            let outcome: SandboxedChild.Outcome
            do { outcome = try SandboxedChild(executable: reader).run(["scan-qr-codes"], input: pnm) } catch {
                throw Failure(description: "zbar could not read it: \(error)")
            }
            guard let found = try? JSONParser.parse(outcome.stdout)["codes"]?.array else {
                throw Failure(description: "zbar's helper answered something else")
            }
            return found.compactMap(\.string)
        }
        switch kind {
        case .png: return try scanned(drawn("pngtopnm", "netpbm", []))
        case .jpeg: return try scanned(drawn("jpegtopnm", "netpbm", []))
        case .gif: return try scanned(drawn("giftopnm", "netpbm", []))
        case .tiff: return try scanned(drawn("tifftopnm", "netpbm", []))
        case .pdf:
            guard let pdftotext = text.pdftotext, text.pdftoppm != nil else {
                throw Failure(description: "reading QR codes in a PDF needs poppler (Debian: poppler-utils)")
            }
            let pages: Int
            do {
                pages = ExtractedText.pages(ofPDFText: try SandboxedChild(executable: pdftotext).run(["-q", "fd://0", "-"], input: bytes).stdout).count
            } catch { throw Failure(description: "poppler could not read the PDF: \(error)") }
            var codes: [String] = []
            for page in 1...max(1, min(pages, Self.maxPages)) {
                codes += try scanned(drawn("pdftoppm", "poppler-utils", ["-r", String(Self.dpi), "-f", String(page), "-l", String(page), "-gray", "fd://0"]))
            }
            return codes
        }
    }

    /// hreader itself, which the child runs as `hreader scan-qr-codes` (Linux; nil elsewhere).
    static var childExecutable: String? {
        #if os(Linux)
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return path.hasPrefix("/") ? path : nil
        #else
        return nil
        #endif
    }

    // MARK: In the child

    /// `hreader scan-qr-codes`: the QR codes zbar finds in a PNM picture (P5 grey or P6 colour, 8 bits),
    /// as `{"codes": [TEXT, …]}`. Runs only in the sandboxed child: it is the one place libzbar is loaded.
    public static func scanPNM(_ bytes: [UInt8]) throws -> JSONValue {
        let image = try PNMImage(bytes, maxPixels: maxPixels)
        let scanner = zbar_image_scanner_create()
        defer { zbar_image_scanner_destroy(scanner) }
        zbar_image_scanner_set_config(scanner, ZBAR_NONE, ZBAR_CFG_ENABLE, 0)
        zbar_image_scanner_set_config(scanner, ZBAR_QRCODE, ZBAR_CFG_ENABLE, 1)
        let picture = zbar_image_create()
        defer { zbar_image_destroy(picture) }
        zbar_image_set_format(picture, 0x3030_3859)   // fourcc "Y800": 8-bit grey
        zbar_image_set_size(picture, UInt32(image.width), UInt32(image.height))
        var codes: [JSONValue] = []
        try image.grey.withUnsafeBufferPointer { grey in
            zbar_image_set_data(picture, grey.baseAddress, UInt(grey.count), nil)
            guard zbar_scan_image(scanner, picture) >= 0 else { throw Failure(description: "zbar failed on the picture") }
            var symbol = zbar_image_first_symbol(picture)
            while let found = symbol {
                if let data = zbar_symbol_get_data(found) {
                    let length = Int(zbar_symbol_get_data_length(found))
                    codes.append(.string(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)))
                }
                symbol = zbar_symbol_next(found)
            }
        }
        return .object([("codes", .array(codes))])
    }
}
