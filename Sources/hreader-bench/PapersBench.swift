import Foundation
import HReaderCrypto
import HReaderKit
import HReaderModel
import HReaderStore

/// Papers become text (issue 39), end to end through the binary, each against the helpers run by
/// hand on the same file in the same run:
/// - a 10-page scanned PDF (no text layer): `hreader documents add` (pdftotext fed from the file while
///   it is stored, then per page pdftoppm at 300 dpi and Tesseract, each in its sandbox, the PDF
///   streamed from the vault) against
///   `pdftoppm -r 300 -f N -l N -gray -png scan.pdf | tesseract stdin stdout --psm 1 -l eng tsv` for
///   the same pages (goal ≤ 1.2×), and hreader's peak memory against `documents list` (goal: flat);
/// - a 200-page PDF with a text layer: `documents add` against `pdftotext scan.pdf -` (goal ≤ +10%).
func runPapersBenchmarks(scratch: URL, password: SecretBytes) throws {
    say("\n== papers: text from a 10-page scan and a 200-page PDF, end to end ==")
    let tools = TextTools.find()
    guard let pdftotext = tools.pdftotext, let pdftoppm = tools.pdftoppm, let tesseract = tools.tesseract else {
        say("  (poppler-utils or tesseract-ocr missing: run make deps; skipped)")
        return
    }
    guard let (_, hreader) = siblingBinaries() else { return }
    let root = scratch.appendingPathComponent("papers-bench")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }

    let service = VaultService(vault: Vault(root: root.appendingPathComponent("vault")))
    _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
    _ = try service.open(.password(password)).addPatient(NewPatient(firstName: "Bench", lastName: "Mark"))
    let token = try service.startSession(.password(password), for: 3600).token
    let session = ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin", "OMP_THREAD_LIMIT": "1"]
    let vault = ["--vault", service.vault.root.path]

    // A letter's page of text, 30 lines.
    func page(_ n: Int) -> [String] {
        (1...30).map { line in "Page \(n) line \(line): the patient was seen in clinic and the plan was discussed with the family" }
    }
    // The scan: each page drawn with a text layer, rasterised at 150 dpi into a JPEG, wrapped in an image-only PDF.
    var jpegs: [Data] = []
    for n in 1...10 {
        jpegs.append(try runTool(pdftoppm, ["-r", "150", "-gray", "-jpeg", "fd://0"], input: PaperFixtures.textPDF([page(n)])))
    }
    let scan = root.appendingPathComponent("scan.pdf")
    try PaperFixtures.scannedPDF(jpegs).write(to: scan)

    let shell = URL(fileURLWithPath: "/bin/sh")
    let byHand = try spawnMeasured(shell, ["-c", "for n in 1 2 3 4 5 6 7 8 9 10; do \(pdftoppm) -r 300 -f $n -l $n -gray -png \(scan.path) "
                                           + "| \(tesseract) stdin stdout --psm 1 -l eng tsv; done"], environment: session, memory: false)
    row("  pdftoppm | tesseract, 10 pages (baseline)", ms(byHand.seconds), String(format: "%.2f s a page", byHand.seconds / 10))
    let floor = try spawnMeasured(hreader, ["documents", "list", "--quiet"] + vault, environment: session)
    let added = try spawnMeasured(hreader, ["documents", "add", scan.path, "--patient", "1", "--quiet"] + vault, environment: session)
    // The machine's load changes over a minute: the baseline again after, and the ratio to the mean of both.
    let again = try spawnMeasured(shell, ["-c", "for n in 1 2 3 4 5 6 7 8 9 10; do \(pdftoppm) -r 300 -f $n -l $n -gray -png \(scan.path) "
                                          + "| \(tesseract) stdin stdout --psm 1 -l eng tsv; done"], environment: session, memory: false)
    let baseline = (byHand.seconds + again.seconds) / 2
    row("  documents add, 10 scanned pages", ms(added.seconds),
        String(format: "%.2fx the baseline (goal ≤ 1.2x; baseline after: %.1f s); peak RSS %.0f MB (documents list: %.0f MB)",
               added.seconds / baseline, again.seconds, Double(added.peakKB) / 1024, Double(floor.peakKB) / 1024))
    let open = try service.open(.session(token))
    if let stored = try open.documents().first {
        row("    text", stored.textSummary, stored.textNote ?? "")
    }

    // 200 pages with a text layer.
    let long = root.appendingPathComponent("long.pdf")
    try PaperFixtures.textPDF((1...200).map(page)).write(to: long)
    var plain: [Double] = [], ours: [Double] = [], storing: [Double] = []
    var peak = 0
    var bare = session
    bare["PATH"] = "/nonexistent"   // no helpers: what storing the PDF costs by itself
    for _ in 0..<3 {
        plain.append(try spawnMeasured(URL(fileURLWithPath: pdftotext), ["-q", "-enc", "UTF-8", long.path, "-"], environment: session, memory: false).seconds)
        storing.append(try spawnMeasured(hreader, ["documents", "add", long.path, "--patient", "1", "--quiet"] + vault, environment: bare).seconds)
        let run = try spawnMeasured(hreader, ["documents", "add", long.path, "--patient", "1", "--quiet"] + vault, environment: session)
        ours.append(run.seconds)
        peak = max(peak, run.peakKB)
    }
    row("  pdftotext, 200 pages (baseline, median of 3)", ms(median(plain)))
    row("  documents add without helpers (storing only)", ms(median(storing)))
    row("  documents add, 200 text pages (median of 3)", ms(median(ours)),
        String(format: "text: %+.0f%% over pdftotext (goal ≤ +10%%), whole add %+.0f%%; peak RSS %.0f MB",
               100 * ((median(ours) - median(storing)) / median(plain) - 1), 100 * (median(ours) / median(plain) - 1), Double(peak) / 1024))
    let stored = try open.documents().first
    row("    text", stored?.textSummary ?? "?", String(format: "%d characters", (try stored.flatMap { try open.documentText($0) })?.count ?? 0))
}

/// PDFs written by hand: pages of Helvetica text, or JPEG scans with no text layer.
enum PaperFixtures {
    static func textPDF(_ pages: [[String]]) -> Data {
        var objects = [Data("<< /Type /Catalog /Pages 2 0 R >>".utf8),
                       Data("<< /Type /Pages /Kids [\((0..<pages.count).map { "\(4 + 2 * $0) 0 R" }.joined(separator: " "))] /Count \(pages.count) >>".utf8),
                       Data("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".utf8)]
        for (i, lines) in pages.enumerated() {
            let content = "BT /F1 11 Tf 40 760 Td 22 TL " + lines.map { "(\($0)) '" }.joined(separator: " ") + " ET"
            objects.append(Data("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents \(5 + 2 * i) 0 R >>".utf8))
            objects.append(Data("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream".utf8))
        }
        return pdf(objects)
    }

    static func scannedPDF(_ jpegs: [Data]) -> Data {
        var objects = [Data("<< /Type /Catalog /Pages 2 0 R >>".utf8),
                       Data("<< /Type /Pages /Kids [\((0..<jpegs.count).map { "\(3 + 3 * $0) 0 R" }.joined(separator: " "))] /Count \(jpegs.count) >>".utf8)]
        for (i, jpeg) in jpegs.enumerated() {
            let (width, height, components) = jpegSize(jpeg) ?? (1275, 1650, 3)
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
}
