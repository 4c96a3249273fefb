import Foundation
import HReaderCrypto
import HReaderKit
import HReaderStore
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Papers become text (issue 39), end to end with the real helpers (poppler's pdftotext and pdftoppm,
/// Tesseract 5; `make test` installs them through .ci/deps.sh): a PDF's text layer, a scanned PDF and
/// a photo read by OCR (one of them sideways), all found by `hreader search`; hostile files refused
/// by the child without harm to hreader or the vault; a child that cannot open a socket or write a
/// file; no word of the papers in the vault directory or $TMPDIR; documents stored without the tools
/// read by `reindex` once they are there; lab lines proposed and stored only when accepted.
///
/// The fixtures are made here: PDFs written by hand (Helvetica, drawn by poppler with the system's
/// fonts), rasterised by `pdftoppm` into the "scans" and "photos".
final class DocumentTextExtractionTests: CLITestCase {
    static let tools = ["/usr/bin/pdftotext", "/usr/bin/pdftoppm", "/usr/bin/tesseract"]

    override func setUpWithError() throws {
        try super.setUpWithError()
        for tool in Self.tools where !FileManager.default.isExecutableFile(atPath: tool) {
            XCTFail("\(tool) is missing: run .ci/deps.sh (make test does)")
            throw XCTSkip("text helpers missing")
        }
        _ = try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Byron"]))
    }

    // MARK: Fixtures

    /// A PDF with a text layer: one page per element of `pages`, each a list of lines in 14 pt Helvetica.
    static func textPDF(_ pages: [[String]], rotate: Int = 0, mediaBox: String = "0 0 612 792") -> Data {
        var objects = ["<< /Type /Catalog /Pages 2 0 R >>",
                       "<< /Type /Pages /Kids [\((0..<pages.count).map { "\(4 + 2 * $0) 0 R" }.joined(separator: " "))] /Count \(pages.count) >>",
                       "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
        for (i, lines) in pages.enumerated() {
            let content = "BT /F1 14 Tf 50 700 Td 20 TL " + lines.map { "(\($0)) '" }.joined(separator: " ") + " ET"
            objects.append("<< /Type /Page /Parent 2 0 R /MediaBox [\(mediaBox)] \(rotate != 0 ? "/Rotate \(rotate)" : "") "
                           + "/Resources << /Font << /F1 3 0 R >> >> /Contents \(5 + 2 * i) 0 R >>")
            objects.append("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream")
        }
        return pdf(objects.map { Data($0.utf8) })
    }

    /// An image-only PDF (a scan): each JPEG a page of its own, no text layer.
    static func scannedPDF(_ jpegs: [Data]) throws -> Data {
        var objects = [Data("<< /Type /Catalog /Pages 2 0 R >>".utf8),
                       Data("<< /Type /Pages /Kids [\((0..<jpegs.count).map { "\(3 + 3 * $0) 0 R" }.joined(separator: " "))] /Count \(jpegs.count) >>".utf8)]
        for (i, jpeg) in jpegs.enumerated() {
            let (width, height, components) = try XCTUnwrap(jpegSize(jpeg))
            // 150 dpi: the page is as large as the paper it was scanned from.
            let w = Double(width) * 72 / 150, h = Double(height) * 72 / 150
            let content = "q \(w) 0 0 \(h) 0 0 cm /Im0 Do Q"
            objects.append(Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(w) \(h)] /Resources << /XObject << /Im0 \(5 + 3 * i) 0 R >> >> /Contents \(4 + 3 * i) 0 R >>".utf8))
            objects.append(Data("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream".utf8))
            objects.append(Data("<< /Type /XObject /Subtype /Image /Width \(width) /Height \(height) /ColorSpace /\(components == 1 ? "DeviceGray" : "DeviceRGB") /BitsPerComponent 8 /Filter /DCTDecode /Length \(jpeg.count) >>\nstream\n".utf8)
                           + jpeg + Data("\nendstream".utf8))
        }
        return pdf(objects)
    }

    static func pdf(_ objects: [Data]) -> Data {
        var out = Data("%PDF-1.4\n".utf8)
        var offsets: [Int] = []
        for (n, object) in objects.enumerated() {
            offsets.append(out.count)
            out += Data("\(n + 1) 0 obj\n".utf8) + object + Data("\nendobj\n".utf8)
        }
        let xref = out.count
        out += Data("xref\n0 \(objects.count + 1)\n0000000000 65535 f \n".utf8)
        for offset in offsets { out += Data(String(format: "%010d 00000 n \n", offset).utf8) }
        out += Data("trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n".utf8)
        return out
    }

    /// A JPEG's width, height and number of colour components (its first SOF marker).
    static func jpegSize(_ data: Data) -> (Int, Int, Int)? {
        let b = [UInt8](data)
        var i = 2
        while i + 9 < b.count, b[i] == 0xFF {
            let marker = b[i + 1], length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if marker == 0xC0 || marker == 0xC1 || marker == 0xC2 { return (Int(b[i + 7]) << 8 | Int(b[i + 8]), Int(b[i + 5]) << 8 | Int(b[i + 6]), Int(b[i + 9])) }
            i += 2 + length
        }
        return nil
    }

    /// Runs a helper directly (to make fixtures), bytes in and out by pipes.
    static func run(_ tool: String, _ arguments: [String], input: Data) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let writer = Thread { stdin.fileHandleForWriting.write(input); try? stdin.fileHandleForWriting.close() }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "\(tool) \(arguments)")
        return output
    }

    /// A page of a PDF as an image, the way a scanner or a camera would give it.
    static func render(_ pdf: Data, page: Int = 1, format: String, dpi: Int = 150) throws -> Data {
        try run("/usr/bin/pdftoppm", ["-r", String(dpi), "-f", String(page), "-l", String(page), "-gray", "-\(format)", "fd://0"], input: pdf)
    }

    func write(_ name: String, _ data: Data) throws -> String {
        let url = workDir.appendingPathComponent(name)
        try data.write(to: url)
        return url.path
    }

    func add(_ path: String, _ extra: [String] = [], env: [String: String] = [:]) throws -> [String: Any] {
        let result = try ok(withPassword(["documents", "add", path, "--patient", "1", "--json"] + extra), env: env)
        return try XCTUnwrap(try json(result)["document"] as? [String: Any])
    }

    func searchTitles(_ word: String) throws -> [String] {
        let hits = try json(try ok(withPassword(["search", word, "--json"])))["hits"] as? [[String: Any]] ?? []
        return hits.filter { $0["kind"] as? String == "document" }.compactMap { $0["title"] as? String }
    }

    // MARK: Tests

    func testTextLayerScanAndSidewaysPhotoAreReadAndFoundBySearch() throws {
        let letter = Self.textPDF([["Discharge summary for Zanzibarite patient", "Seen by the cardiology team"],
                                   ["Second page mentions Quokkanese words"]])
        let text = try add(try write("letter.pdf", letter), ["--title", "Letter"])
        XCTAssertEqual(text["text_method"] as? String, "pdf-text")

        // A scan: the same kind of page rasterised, in an image-only PDF.
        let scanPage = Self.textPDF([["Consultation letter about Marmalading fever", "The patient was seen on Tuesday morning"]])
        let scan = try Self.scannedPDF([try Self.render(scanPage, format: "jpeg", dpi: 150)])
        XCTAssertTrue(try Self.run("/usr/bin/pdftotext", ["fd://0", "-"], input: scan).allSatisfy { $0 == 0x0c || $0 == 0x0a || $0 == 0x20 },
                      "the scan has no text layer")
        let scanned = try add(try write("scan.pdf", scan), ["--title", "Scan"])
        XCTAssertEqual(scanned["text_method"] as? String, "ocr")
        let confidence = try XCTUnwrap(scanned["text_confidence"] as? Double)
        XCTAssertGreaterThan(confidence, 60)
        XCTAssertLessThanOrEqual(confidence, 100)

        // A photo of a card, sideways (the page turned by 90 degrees before it was taken).
        let card = Self.textPDF([["Vaccination card Tetanus booster", "Batch Periwinkleton given"]], rotate: 90)
        let photo = try Self.render(card, format: "png", dpi: 200)
        let photoID = try add(try write("card.png", photo), ["--title", "Card"])["id"] as? Int
        XCTAssertEqual(try searchTitles("Periwinkleton"), ["Card"], "the sideways card reads")

        XCTAssertEqual(try searchTitles("zanzibarite"), ["Letter"])
        XCTAssertEqual(try searchTitles("quokkanese"), ["Letter"], "the second page is read too")
        XCTAssertEqual(try searchTitles("marmalading"), ["Scan"])
        XCTAssertEqual(try searchTitles("marigold"), [])

        let list = try ok(withPassword(["documents", "list"])).stdout
        XCTAssertTrue(list.contains("pdf-text"), list)
        XCTAssertTrue(list.contains("ocr \(Int(confidence.rounded()))%"), list)
        let shown = try ok(withPassword(["documents", "show", String(try XCTUnwrap(photoID))])).stdout
        XCTAssertTrue(shown.contains("text:") && shown.contains("ocr"), shown)
        XCTAssertTrue(shown.contains("Periwinkleton"), shown)

        // Nothing of the papers' words outside the encrypted database.
        let scannedFiles = assertNoPlaintext(["Zanzibarite", "Quokkanese", "Marmalading", "Periwinkleton"])
        XCTAssertFalse(scannedFiles.isEmpty)
        XCTAssertEqual(filesWithContents(under: childTemp).count, 0, "no temporary file left in $TMPDIR")
    }

    func testHostileFilesAreRefusedByTheChildAndTheVaultStaysWhole() throws {
        let before = try add(try write("fine.pdf", Self.textPDF([["A fine letter about Thistlewick"]])))
        XCTAssertEqual(before["text_method"] as? String, "pdf-text")
        // A corrupt PDF: a header, then garbage.
        var corrupt = Data("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\n".utf8)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<4096 { corrupt.append(UInt8.random(in: 0...255, using: &generator)) }
        let broken = try add(try write("broken.pdf", corrupt))
        XCTAssertEqual(broken["text_method"] as? String, "none")
        XCTAssertNotNil(broken["text_note"] as? String)
        // An image bomb the parent lets through (GIF: not read by hreader itself): a 65535 × 65535 screen.
        var gif = Data("GIF89a".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00])
        gif += Data([0x2C, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3B])
        let bomb = try add(try write("bomb.gif", gif), ["--content-type", "image/gif"])
        XCTAssertEqual(bomb["text_method"] as? String, "none")
        let note = try XCTUnwrap(bomb["text_note"] as? String)
        XCTAssertTrue(note.hasPrefix("not read: tesseract"), note)
        XCTAssertFalse(note.contains("\n"), "one line")
        // A PNG whose header asks for 10 billion pixels never reaches a decoder.
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]) + Data("IHDR".utf8)
        png += Data([0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0, 8, 0, 0, 0, 0, 0, 0, 0, 0])
        let pngBomb = try add(try write("bomb.png", png))
        XCTAssertTrue((pngBomb["text_note"] as? String ?? "").contains("100000 × 100000"), "\(pngBomb)")
        // A page of 200 × 200 inches: rendering it for OCR would take 3.6 billion pixels; the child's
        // memory limit stops it.
        let huge = Self.scannedPDFWithHugePage()
        let (added, peakMB) = try hreaderMeasuringMemory(withPassword(["documents", "add", try write("huge.pdf", huge), "--patient", "1", "--json"]))
        XCTAssertEqual(added.status, 0, added.stderr)
        XCTAssertLessThan(peakMB, 300, "the parent never holds the page")
        let hugeDocument = try XCTUnwrap(try json(added)["document"] as? [String: Any])
        XCTAssertEqual(hugeDocument["text_method"] as? String, "none", "\(hugeDocument)")

        // Every document is stored, whole, and the vault checks out.
        XCTAssertEqual(try json(try ok(withPassword(["documents", "list", "--json"])))["documents"].map { ($0 as? [Any])?.count }, 5)
        try ok(withPassword(["check"]))
        XCTAssertEqual(try searchTitles("thistlewick"), ["fine"])
    }

    /// An iPhone's photo (HEIC): Tesseract cannot read it, so it is stored and says what to do instead of
    /// passing on the helper's failure; told by its bytes, whatever its name.
    func testAHEICPhotoIsStoredAndSaysWhatToDo() throws {
        // The start of an iPhone HEIC: an `ftyp` box of major brand heic, compatible mif1, then a meta box.
        var heic = Data([0, 0, 0, 0x18]) + Data("ftypheic".utf8) + Data([0, 0, 0, 0]) + Data("mif1heic".utf8)
        heic += Data([0, 0, 0, 0x0C]) + Data("meta".utf8) + Data([0, 0, 0, 0])
        for name in ["IMG_0042.HEIC", "card.jpg"] {
            let document = try add(try write(name, heic))
            XCTAssertEqual(document["content_type"] as? String, "image/heic", name)
            XCTAssertEqual(document["text_method"] as? String, "none", name)
            let note = try XCTUnwrap(document["text_note"] as? String, name)
            XCTAssertTrue(note.contains("HEIC") && note.contains("JPEG"), note)
        }
        XCTAssertEqual(try json(try ok(withPassword(["documents", "list", "--json"])))["documents"].map { ($0 as? [Any])?.count }, 2)
    }

    /// One page with a 14400 pt square media box and an image on it, no text layer.
    static func scannedPDFWithHugePage() -> Data {
        let content = "q 14400 0 0 14400 0 0 cm /Im0 Do Q"
        return pdf([Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
                    Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 14400 14400] /Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>".utf8),
                    Data("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream".utf8),
                    Data("<< /Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 4 >>\nstream\n".utf8)
                        + Data([0, 255, 255, 0]) + Data("\nendstream".utf8)])
    }

    func testTheChildCannotOpenASocketNorWriteAFile() throws {
        // A server on loopback that the test itself reaches, so that a failure below is the sandbox's.
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(server, 0)
        defer { close(server) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        XCTAssertEqual(withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, length) } }, 0)
        XCTAssertEqual(listen(server, 8), 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(server, $0, &length) } }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let written = workDir.appendingPathComponent("written-by-child")
        let script = """
            import socket, sys
            try:
                s = socket.create_connection(("127.0.0.1", \(port)), timeout=3); print("connected")
            except OSError as e:
                print("no socket:", e.errno)
            try:
                open(sys.argv[1], "w").write("x"); print("wrote")
            except OSError as e:
                print("no file:", e.errno)
            """
        // The same program, not sandboxed, connects and writes.
        let plain = String(decoding: try Self.run("/usr/bin/python3", ["-c", script, written.path + "-plain"], input: Data()), as: UTF8.self)
        XCTAssertEqual(plain, "connected\nwrote\n")
        for seccompOnly in [false, true] {
            let child = SandboxedChild(executable: "/usr/bin/python3", seccompOnly: seccompOnly)
            let outcome = try child.run(["-c", script, written.path], input: [])
            XCTAssertEqual(outcome.isolation, seccompOnly ? .seccomp : .networkNamespace)
            XCTAssertEqual(String(decoding: outcome.stdout, as: UTF8.self), "no socket: \(EACCES)\nno file: \(EACCES)\n", "seccomp only: \(seccompOnly)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: written.path))
        }
        // A child that runs past its time is killed; one that talks too much is cut off.
        var slow = SandboxedChild(executable: "/bin/sleep")
        slow.limits.timeout = 1
        let started = Date()
        XCTAssertThrowsError(try slow.run(["30"], input: [])) { XCTAssertTrue("\($0)".contains("longer than 1 s"), "\($0)") }
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        var chatty = SandboxedChild(executable: "/usr/bin/yes")
        chatty.limits.outputBytes = 1 << 20
        XCTAssertThrowsError(try chatty.run([], input: [])) { XCTAssertTrue("\($0)".contains("more than 1 MiB"), "\($0)") }
    }

    func testDocumentsStoredWithoutTheToolsAreReadByReindexOnceTheyAreThere() throws {
        // hreader finds its helpers on PATH: a PATH without them is a machine without poppler and Tesseract.
        let bare = ["PATH": "/nonexistent"]
        let letter = try add(try write("letter.pdf", Self.textPDF([["Referral about Brindlewood syndrome"]])), env: bare)
        XCTAssertEqual(letter["text_method"] as? String, "none")
        XCTAssertEqual(letter["text_note"] as? String, "no text: install poppler-utils")
        let photo = try Self.render(Self.textPDF([["Prescription for Cobblestonia tablets"]]), format: "png", dpi: 200)
        let image = try add(try write("rx.png", photo), env: bare)
        XCTAssertEqual(image["text_note"] as? String, "no text: install tesseract-ocr")
        let list = try ok(withPassword(["documents", "list"]), env: bare).stdout
        XCTAssertTrue(list.contains("no text: install tesseract-ocr"), list)
        XCTAssertTrue(try ok(withPassword(["status"]), env: bare).stdout.contains("no OCR (install tesseract-ocr)"))
        XCTAssertEqual(try searchTitles("brindlewood"), [])

        let status = try ok(withPassword(["status"])).stdout
        XCTAssertTrue(status.contains("OCR by tesseract (languages: eng"), status)
        let reindexed = try json(try ok(withPassword(["documents", "reindex", "--json"])))
        XCTAssertEqual(reindexed["read"] as? Int, 2)
        XCTAssertEqual(reindexed["with_text"] as? Int, 2)
        XCTAssertEqual(try searchTitles("brindlewood"), ["letter"])
        XCTAssertEqual(try searchTitles("cobblestonia"), ["rx"])
        // Read already: a second reindex has nothing to do, unless asked to OCR again.
        XCTAssertEqual(try json(try ok(withPassword(["documents", "reindex", "--json"])))["read"] as? Int, 0)
        XCTAssertEqual(try json(try ok(withPassword(["documents", "reindex", "--ocr", "--json"])))["read"] as? Int, 2)
        // A language that is not installed is refused before anything is read.
        let missing = try hreader(withPassword(["documents", "reindex", "--ocr", "--ocr-lang", "xyz"]))
        XCTAssertEqual(missing.status, 2, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("'xyz' is not installed"), missing.stderr)
    }

    func testTheWebViewShowsAPhotoBesideWhatOCRReadOfIt() throws {
        let photo = try Self.render(Self.textPDF([["Allergy card Hollyhockine reaction"]]), format: "png", dpi: 200)
        let id = try XCTUnwrap(try add(try write("allergy.png", photo))["id"] as? Int)
        let served = try serve()
        defer { stop(served) }
        let page = try served.bearer("/documents/\(id)")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("Hollyhockine"), page.body)
        XCTAssertTrue(page.body.contains("<img class=\"document-page\" src=\"\(served.prefix)/documents/\(id)/file\""), page.body)
        XCTAssertTrue(page.body.contains("<dt>Text</dt><dd>ocr "), page.body)
        XCTAssertEqual(try served.bearer("/documents/\(id)/file").header("Content-Type"), "image/png")
    }

    /// A PDF's pages are drawn for the web view by the sandboxed pdftoppm, one page at a time, with
    /// links to the pages beside it; a page past the last, a broken PDF and a photo get one clear answer.
    func testTheWebViewDrawsAPDFsPagesInTheSandbox() throws {
        let two = try XCTUnwrap(try add(try write("two.pdf", Self.textPDF([["First page Quillfeather"], ["Second page Quillfeather"]])))["id"] as? Int)
        var corrupt = Data("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\n".utf8)
        corrupt += Data(repeating: 0x41, count: 2048)
        let broken = try XCTUnwrap(try add(try write("broken.pdf", corrupt))["id"] as? Int)
        let photo = try XCTUnwrap(try add(try write("photo.png", try Self.render(Self.textPDF([["A photo"]]), format: "png", dpi: 72)))["id"] as? Int)
        let served = try serve()
        defer { stop(served) }

        let page = try served.bearer("/documents/\(two)?page=2")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("src=\"\(served.prefix)/documents/\(two)/pages/2\""), page.body)
        XCTAssertTrue(page.body.contains("href=\"\(served.prefix)/documents/\(two)?page=1\">Page 1</a>"), page.body)
        for number in [1, 2] {
            let png = try served.bearer("/documents/\(two)/pages/\(number)")
            XCTAssertEqual(png.status, 200, png.body)
            XCTAssertEqual(png.header("Content-Type"), "image/png")
            XCTAssertTrue(png.body.contains("IHDR") && png.body.contains("IEND"), "a whole PNG")
            XCTAssertTrue(png.header("Content-Security-Policy")?.hasPrefix("sandbox") == true)
        }
        let past = try served.bearer("/documents/\(two)/pages/3")
        XCTAssertEqual(past.status, 404, past.body)
        XCTAssertTrue(past.body.contains("the PDF has no page 3"), past.body)
        XCTAssertEqual(try served.bearer("/documents/\(two)/pages/first").status, 400)
        let unreadable = try served.bearer("/documents/\(broken)/pages/1")
        XCTAssertTrue([404, 422].contains(unreadable.status), "\(unreadable.status) \(unreadable.body)")
        XCTAssertFalse(unreadable.body.contains("AAAA"), "nothing of the file in the answer")
        let notPDF = try served.bearer("/documents/\(photo)/pages/1")
        XCTAssertEqual(notPDF.status, 404)
        XCTAssertTrue(notPDF.body.contains("only a PDF has pages to preview"), notPDF.body)
        // The server is still there, and so is every document.
        XCTAssertEqual(try served.bearer("/documents/\(two)").status, 200)
    }

    func testAnImportReadsItsPapersUpToItsBoundAndQueuesTheRest() throws {
        let words = ["Saffronella", "Tamarindo", "Quillwort"]
        let references = words.enumerated().map { i, word in
            let pdf = Self.textPDF([["Attached letter about \(word) and its follow up"]]).base64EncodedString()
            return #"{"resource":{"resourceType":"DocumentReference","id":"d\#(i)","status":"current","subject":{"reference":"Patient/f1"},"# +
                #""description":"Letter \#(i)","content":[{"attachment":{"contentType":"application/pdf","data":"\#(pdf)"}}]}}"#
        }
        let bundle = #"{"resourceType":"Bundle","type":"collection","entry":[{"resource":{"resourceType":"Patient","id":"f1","# +
            #""name":[{"family":"Fileson","given":["Fay"]}]}},"# + references.joined(separator: ",") + "]}"
        let imported = try ok(withPassword(["import", "--file", try file("bundle.json", bundle), "--json"]),
                              env: ["HREADER_DOCUMENTS_EXTRACT_PER_IMPORT": "1"])
        let counts = try XCTUnwrap((try json(imported)["summary"] as? [String: Any])?["documents"] as? [String: Any])
        XCTAssertEqual(counts["stored"] as? Int, 3)
        XCTAssertEqual(counts["extracted"] as? Int, 1)
        XCTAssertEqual(counts["queued"] as? Int, 2)
        let listed = try json(try ok(withPassword(["documents", "list", "--json"])))["documents"] as? [[String: Any]] ?? []
        XCTAssertEqual(listed.compactMap { $0["text_method"] as? String }.sorted(), ["pdf-text", "pending", "pending"])
        XCTAssertEqual(try words.map { try searchTitles($0).count }, [1, 0, 0], "the first is read, the others wait")
        // The next import (nothing new in it) reads what waits, within its own bound.
        let again = try ok(withPassword(["import", "--file", workDir.appendingPathComponent("bundle.json").path, "--json"]),
                           env: ["HREADER_DOCUMENTS_EXTRACT_PER_IMPORT": "1"])
        let second = try XCTUnwrap((try json(again)["summary"] as? [String: Any])?["documents"] as? [String: Any])
        XCTAssertEqual(second["stored"] as? Int, 0)
        XCTAssertEqual(second["extracted"] as? Int, 1)
        XCTAssertEqual(second["queued"] as? Int, 1)
        XCTAssertEqual(try words.map { try searchTitles($0).count }, [1, 1, 0])
        XCTAssertEqual(try json(try ok(withPassword(["documents", "reindex", "--json"])))["read"] as? Int, 1)
        XCTAssertEqual(try words.map { try searchTitles($0).count }, [1, 1, 1])
        assertNoPlaintext(words)
    }

    func testLabLinesAreProposedAndOnlyAcceptedOnesStored() throws {
        let report = Self.textPDF([["City Lab report", "Haemoglobin 13.2 g/dL (reference 12.0 - 16.0)", "Sodium 139 mmol/L (ref 135 - 145)",
                                    "Comment: sample received late", "Potassium 5.9 mmol/L 3.5 - 5.1 H"]])
        let id = String(try XCTUnwrap(try add(try write("labs.pdf", report), ["--date", "2024-05-06"])["id"] as? Int))
        let proposed = try json(try ok(withPassword(["documents", "propose", id, "--json"])))["proposals"] as? [[String: Any]] ?? []
        XCTAssertEqual(proposed.compactMap { $0["name"] as? String }, ["Haemoglobin", "Sodium", "Potassium"])
        XCTAssertEqual(proposed.first?["value"] as? Double, 13.2)
        XCTAssertEqual(proposed.first?["unit"] as? String, "g/dL")
        XCTAssertEqual(proposed.last?["high"] as? Double, 5.1)
        let results = { try self.json(try self.ok(self.withPassword(["entries", "list", "--patient", "1", "--type", "result", "--json"]))) }
        let before = try results()
        XCTAssertEqual((before["entries"] as? [Any])?.count ?? 0, 0, "nothing stored by proposing")

        XCTAssertEqual(try hreader(withPassword(["documents", "propose", id, "--accept", "7"])).status, 2)
        try ok(withPassword(["documents", "propose", id, "--accept", "1", "3"]))
        let entries = try XCTUnwrap(try results()["entries"] as? [[String: Any]])
        XCTAssertEqual(Set(entries.compactMap { $0["description"] as? String }), ["Haemoglobin", "Potassium"])
        let shown = try ok(withPassword(["entries", "show", "\(entries.first { $0["description"] as? String == "Potassium" }!["id"]!)"])).stdout
        XCTAssertTrue(shown.contains("From document \(id) (labs), line 5: Potassium 5.9 mmol/L 3.5 - 5.1 H"), "provenance: \(shown)")
    }

    // MARK: A text layer is kept with its bytes

    /// The commits in the vault's write-ahead log since it was last emptied: its commit frames (each
    /// frame's header is outside the encryption: page number, the database's size after a commit, the
    /// log's salts). `open` must stay open meanwhile: the last connection to close empties the log.
    func commitsInTheLog() throws -> Int {
        let wal = [UInt8](try Data(contentsOf: vaultDir.appendingPathComponent("vault.db-wal")))
        guard wal.count >= 32 else { return 0 }
        func be32(_ i: Int) -> UInt32 { wal[i..<(i + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        let pageSize = Int(be32(8)), salts = (be32(16), be32(20))
        var commits = 0
        var frame = 32
        while frame + 24 + pageSize <= wal.count, be32(frame + 8) == salts.0, be32(frame + 12) == salts.1 {
            if be32(frame + 4) != 0 { commits += 1 }
            frame += 24 + pageSize
        }
        return commits
    }

    /// A PDF with a text layer is stored with its text in one transaction (the text read by pdftotext
    /// from the file while the bytes are stored), found by search at once; so is the reason when
    /// pdftotext refuses a file. Crash safety: a kill can never leave the bytes without their text.
    func testATextPDFIsStoredWithItsTextInOneCommit() throws {
        let open = try VaultService(vault: Vault(root: vaultDir)).open(.password(SecretBytes(utf8: Self.password)))
        _ = try open.inDatabase { try $0.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)") }
        XCTAssertEqual(try commitsInTheLog(), 0)
        let pages = (1...40).map { n in (1...30).map { "Page \(n) line \($0) of the Gorseberry referral, seen in clinic" } }
        let pdf = Self.textPDF(pages)
        let letter = try add(try write("letter.pdf", pdf))
        XCTAssertEqual(letter["text_method"] as? String, "pdf-text")
        XCTAssertEqual(try commitsInTheLog(), 1, "the bytes and their text in one commit")
        XCTAssertEqual(try searchTitles("gorseberry"), ["letter"])
        let id = String(try XCTUnwrap(letter["id"] as? Int))
        XCTAssertTrue(try ok(withPassword(["documents", "show", id])).stdout.contains("Page 40 line 30 of the Gorseberry referral"))
        XCTAssertEqual(try ok(withPassword(["documents", "get", id, "--out", "-"])).stdout, String(decoding: pdf, as: UTF8.self))

        // A file pdftotext refuses: stored whole, with the reason, in one commit too.
        _ = try open.inDatabase { try $0.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)") }
        let corrupt = Data("%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >> endobj\n".utf8) + Data(repeating: 0x41, count: 4096)
        let broken = try add(try write("broken.pdf", corrupt))
        XCTAssertEqual(try commitsInTheLog(), 1)
        XCTAssertEqual(broken["text_method"] as? String, "none")
        XCTAssertTrue((broken["text_note"] as? String ?? "").hasPrefix("not read: pdftotext refused the file (exit "), "\(broken)")
        XCTAssertEqual(broken["sha256"] as? String, DocumentRepository.hex(SHA256.hash([UInt8](corrupt))))
        try ok(withPassword(["check"]))
        XCTAssertTrue(try ok(withPassword(["documents", "list"])).stdout.contains("pdf-text"))
    }

    /// A page whose text layer is one short line (a label): too thin to trust as the page's text, so
    /// OCR reads the page too; what was read is the document's text, never "no text found" beside it
    /// (it said so, with the text stored and found by search, until 2026-12-03).
    func testAShortTextLayerIsTextNotNothing() throws {
        let label = try add(try write("label.pdf", Self.textPDF([["Take one daily"]])))
        XCTAssertNotEqual(label["text_method"] as? String, "none", "\(label)")
        XCTAssertNotEqual(label["text_note"] as? String, "no text found", "\(label)")
        let id = String(try XCTUnwrap(label["id"] as? Int))
        XCTAssertTrue(try ok(withPassword(["documents", "show", id])).stdout.lowercased().contains("daily"))
        XCTAssertEqual(try searchTitles("daily"), ["label"])
        XCTAssertFalse(try ok(withPassword(["documents", "list"])).stdout.contains("no text found"))
    }

    /// The text layer read by the helper beside the storing, when it comes too late for the transaction
    /// of the bytes or has more than the helper may give: the document is stored all the same, its
    /// text (or the reason it has none) kept, nothing lost.
    func testALateOrOversizedTextLayerStillLeavesTheDocumentWhole() throws {
        let open = try VaultService(vault: Vault(root: vaultDir)).open(.password(SecretBytes(utf8: Self.password)))
        let patient = try open.patient("1")
        let pages = (1...50).map { n in (1...30).map { "Page \(n) line \($0): the Hawthornia clinic letter goes on and on" } }
        let url = URL(fileURLWithPath: try write("long.pdf", Self.textPDF(pages)))
        let bytes = [UInt8](try Data(contentsOf: url))

        // Not waited for at all: the bytes are committed first, the text in a second transaction.
        var late = try open.textExtractor()
        late.textLayerWait = 0
        let first = try open.addDocument(file: url, patient: patient, title: "late", extractor: late)
        XCTAssertEqual(first.textMethod, .pdfText)
        XCTAssertTrue(try XCTUnwrap(try open.documentText(first)).contains("Page 50 line 30: the Hawthornia clinic letter"))

        // pdftotext gives more than it may (64 KiB here; the text is about 90 KiB): no text, the reason, the bytes whole.
        var small = try open.textExtractor()
        small.limits.outputBytes = 64 << 10
        let second = try open.addDocument(file: url, patient: patient, title: "oversized", extractor: small)
        XCTAssertEqual(second.textMethod, DocumentTextMethod.none)
        XCTAssertEqual(second.textNote, "not read: pdftotext gave more than 64 KiB and was stopped")
        XCTAssertNil(try open.documentText(second))
        XCTAssertEqual(second.sha256, DocumentRepository.hex(SHA256.hash(bytes)))
        var stored: [UInt8] = []
        try open.readDocumentBytes(second) { stored += $0 }
        XCTAssertEqual(stored, bytes)
        XCTAssertEqual(try open.damagedDocuments(), [])
        XCTAssertEqual(try searchTitles("hawthornia"), ["late"])
        XCTAssertEqual(try searchTitles("oversized"), ["oversized"], "found by its title")
    }

    /// A PDF of a typed page and a scanned one: the typed page's text is read once (beside the
    /// storing), only the scanned page by OCR, from the vault, after the bytes are committed.
    func testAPDFOfATypedAndAScannedPageIsReadByLayerAndOCR() throws {
        let scanned = try Self.render(Self.textPDF([["Operation note about Bramblethorpe", "The wound was closed in layers"]]), format: "jpeg", dpi: 150)
        let (width, height, components) = try XCTUnwrap(Self.jpegSize(scanned))
        let w = Double(width) * 72 / 150, h = Double(height) * 72 / 150
        let typed = "BT /F1 14 Tf 50 700 Td 20 TL (Typed cover letter about Larkspurian care) ' ET"
        let drawn = "q \(w) 0 0 \(h) 0 0 cm /Im0 Do Q"
        let pdf = Self.pdf([Data("<< /Type /Catalog /Pages 2 0 R >>".utf8), Data("<< /Type /Pages /Kids [4 0 R 6 0 R] /Count 2 >>".utf8),
                            Data("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".utf8),
                            Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>".utf8),
                            Data("<< /Length \(typed.utf8.count) >>\nstream\n\(typed)\nendstream".utf8),
                            Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(w) \(h)] /Resources << /XObject << /Im0 8 0 R >> >> /Contents 7 0 R >>".utf8),
                            Data("<< /Length \(drawn.utf8.count) >>\nstream\n\(drawn)\nendstream".utf8),
                            Data("<< /Type /XObject /Subtype /Image /Width \(width) /Height \(height) /ColorSpace /\(components == 1 ? "DeviceGray" : "DeviceRGB") /BitsPerComponent 8 /Filter /DCTDecode /Length \(scanned.count) >>\nstream\n".utf8)
                                + scanned + Data("\nendstream".utf8)])
        let document = try add(try write("mixed.pdf", pdf))
        XCTAssertEqual(document["text_method"] as? String, "ocr")
        XCTAssertEqual(document["text_note"] as? String, "1 of 2 pages from the text layer")
        XCTAssertEqual(try searchTitles("larkspurian"), ["mixed"])
        XCTAssertEqual(try searchTitles("bramblethorpe"), ["mixed"])
        assertNoPlaintext(["Larkspurian", "Bramblethorpe"])
    }
}
