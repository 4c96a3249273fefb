import HReaderRecords
import XCTest

/// What the text helpers hand back, made into text (issue 39): Tesseract's TSV into lines and a mean
/// confidence, pdftotext's pages, and lab lines proposed only when they read as one result.
final class ExtractedTextTests: XCTestCase {
    static let header = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"

    func word(_ block: Int, _ paragraph: Int, _ line: Int, _ n: Int, _ confidence: Double, _ text: String) -> String {
        "5\t1\t\(block)\t\(paragraph)\t\(line)\t\(n)\t0\t0\t10\t10\t\(confidence)\t\(text)\n"
    }

    func testOCRWordsBecomeLinesAndParagraphsWithTheirMeanConfidence() {
        let tsv = Self.header + "1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t\n"
            + word(1, 1, 1, 1, 90, "Discharge") + word(1, 1, 1, 2, 80, "summary")
            + word(1, 1, 2, 1, 70, "Second") + word(1, 1, 2, 2, 60, "line")
            + "5\t1\t1\t1\t2\t3\t0\t0\t10\t10\t-1\t \n"
            + word(2, 1, 1, 1, 100, "Next\u{1B}[2J")
        let read = ExtractedText.ocr(tsv: Array(tsv.utf8))
        XCTAssertEqual(read.text, "Discharge summary\nSecond line\n\nNext[2J")
        XCTAssertEqual(read.words, 5)
        XCTAssertEqual(read.confidence ?? 0, 80, accuracy: 0.001)
        XCTAssertNil(ExtractedText.ocr(tsv: Array(Self.header.utf8)).confidence, "no words, no confidence")
    }

    func testPDFTextIsSplitIntoPagesAndScansAreToldApart() {
        let pages = ExtractedText.pages(ofPDFText: Array("First page text here and more\n\n\u{0C}12\n\u{0C}".utf8))
        XCTAssertEqual(pages, ["First page text here and more", "12"])
        XCTAssertTrue(ExtractedText.hasText(pages[0]))
        XCTAssertFalse(ExtractedText.hasText(pages[1]), "a page number alone is a scan")
    }

    /// Pages are tidied straight from pdftotext's bytes, as they come, each line written into the result once: the
    /// same text as decoding each page and tidying it line by line, as hreader did before (kept here as
    /// the reference), for bytes of every kind: controls, format characters, blank runs, trailing
    /// spaces, stray and truncated UTF-8.
    func testPagesTidiedFromBytesReadAsTheDecodedTextTidiedLineByLine() {
        func reference(_ text: String) -> String {
            var out: [UInt8] = []
            var blankRun = 0
            var count = 0
            var line: [UInt8] = []
            for raw in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false) {
                line.removeAll(keepingCapacity: true)
                var characters = 0
                if raw.allSatisfy({ $0 < 0x80 }) {
                    for byte in raw where byte >= 0x20 && byte != 0x7F || byte == 0x09 { line.append(byte) }
                    characters = line.count
                } else {
                    for scalar in String(decoding: raw, as: UTF8.self).unicodeScalars {
                        if scalar.value < 0x80 {
                            guard scalar.value >= 0x20 && scalar.value != 0x7F || scalar == "\t" else { continue }
                        } else {
                            let category = scalar.properties.generalCategory
                            guard category != .control, category != .format || scalar == "\u{200D}" else { continue }
                        }
                        line.append(contentsOf: String(scalar).utf8)
                        characters += 1
                    }
                }
                while let last = line.last, last == 0x20 || last == 0x09 { line.removeLast(); characters -= 1 }
                if line.isEmpty { blankRun += 1; if blankRun > 1 || out.isEmpty { continue } } else { blankRun = 0 }
                if count + characters + 1 > ExtractedText.maxCharacters { break }
                if !out.isEmpty { out.append(0x0A) }
                out += line
                count += characters + 1
            }
            while out.last == 0x0A { out.removeLast() }
            return String(decoding: out, as: UTF8.self)
        }
        let pieces: [[UInt8]] = [Array("Word".utf8), Array(" ".utf8), [0x09], [0x0A], [0x0A, 0x0A, 0x0A], [0x0C], [0x0D], [0x00], [0x1B], [0x7F],
                                 Array("é".utf8), Array("\u{202E}".utf8), Array("\u{200D}".utf8), Array("\u{85}".utf8), Array("日本".utf8),
                                 [0x80], [0xE2], [0xE2, 0x80], [0xFF], [0xF0, 0x9F, 0x98]]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...40, using: &generator) { bytes += pieces.randomElement(using: &generator)! }
            var expected = bytes.split(separator: 0x0C, omittingEmptySubsequences: false).map { reference(String(decoding: $0, as: UTF8.self)) }
            if expected.count > 1 { expected.removeLast() }
            XCTAssertEqual(ExtractedText.pages(ofPDFText: bytes), expected, "\(bytes)")
            // The same, as pdftotext's output comes: in pieces cut anywhere.
            var pages = ExtractedText.PDFPages()
            var rest = bytes[...]
            while !rest.isEmpty {
                let piece = rest.prefix(Int.random(in: 1...8, using: &generator))
                Array(piece).withUnsafeBufferPointer { pages.append($0) }
                rest = rest.dropFirst(piece.count)
            }
            XCTAssertEqual(pages.finish(), expected, "\(bytes) in pieces")
            XCTAssertEqual(ExtractedText.tidy(String(decoding: bytes, as: UTF8.self)), reference(String(decoding: bytes, as: UTF8.self)), "\(bytes)")
        }
    }

    func testLabLinesReadAsResultsAndOtherLinesDoNot() throws {
        let text = """
            City Lab report 2024
            Haemoglobin 13.2 g/dL (reference 12.0 - 16.0)
            Sodium: 139 mmol/L (ref 135-145)
            Potassium 5.9 mmol/L 3.5 - 5.1 H
            Creatinine <0,5 mg/dL (0,6\u{2013}1,2)
            HbA1c 6.1 % (4.0 - 5.6)
            Seen on 12 March by Dr Smith
            Page 1 of 2
            Range 16 - 12 mmol/L (16 - 12)
            """
        let found = LabLines.proposals(in: text)
        XCTAssertEqual(found.map(\.name), ["Haemoglobin", "Sodium", "Potassium", "Creatinine", "HbA1c"])
        XCTAssertEqual(found[0], LabLine(line: 2, name: "Haemoglobin", value: 13.2, valueText: "13.2", unit: "g/dL", low: 12, high: 16,
                                         text: "Haemoglobin 13.2 g/dL (reference 12.0 - 16.0)"))
        XCTAssertEqual(found[1].low, 135)
        XCTAssertEqual(found[2].high, 5.1)
        XCTAssertEqual(found[3].valueText, "<0,5")
        XCTAssertEqual(found[3].value, 0.5)
        XCTAssertEqual(found[3].high, 1.2)
        XCTAssertEqual(found[4].unit, "%")
        XCTAssertNil(LabLines.parse("Seen on 12 March by Dr Smith"))
        XCTAssertNil(LabLines.parse("12 Haemoglobin g/dL"), "a name starts with a letter")
    }
}
