import Foundation

/// The helpers that read text out of PDFs and images, found on PATH: poppler's `pdftotext` and
/// `pdftoppm` (Debian `poppler-utils`) and Tesseract (`tesseract-ocr`). Any of them may be missing:
/// a document is stored all the same, with the reason it has no text ("install tesseract-ocr").
public struct TextTools: Sendable {
    public var pdftotext: String?
    public var pdftoppm: String?
    public var tesseract: String?

    public init(pdftotext: String?, pdftoppm: String?, tesseract: String?) {
        self.pdftotext = pdftotext; self.pdftoppm = pdftoppm; self.tesseract = tesseract
    }

    /// The helpers on `PATH` (absolute directories only: a relative one would depend on where hreader runs).
    public static func find(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> TextTools {
        TextTools(pdftotext: executable("pdftotext", environment), pdftoppm: executable("pdftoppm", environment),
                  tesseract: executable("tesseract", environment))
    }

    /// A helper's path in `PATH`'s absolute directories, the first that holds it; nil when none does.
    static func executable(_ name: String, _ environment: [String: String]) -> String? {
        let directories = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return directories.lazy.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The languages Tesseract has (`tesseract --list-langs`), `osd` (orientation) included; empty without it.
    public func languages() -> [String] { probe().languages }

    /// Tesseract's languages, and how its sandbox cut it off from the network (nil: not run).
    public func probe() -> (languages: [String], isolation: SandboxedChild.Isolation?) {
        guard let tesseract, let outcome = try? SandboxedChild(executable: tesseract).run(["--list-langs"], input: []) else { return ([], nil) }
        let languages = String(decoding: outcome.stdout, as: UTF8.self).split(separator: "\n").dropFirst()
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { Self.isLanguageName($0) }
        return (languages, outcome.isolation)
    }

    /// `hreader status`: what reads text from papers here.
    public func summary() -> (line: String, json: [(String, String?)]) {
        let (languages, isolation) = probe()
        var parts: [String] = []
        parts.append(pdftotext != nil && pdftoppm != nil ? "PDF text by pdftotext" : "no PDF text (install poppler-utils)")
        if tesseract == nil { parts.append("no OCR (install tesseract-ocr)") }
        else { parts.append("OCR by tesseract (languages: \(languages.filter { $0 != "osd" }.joined(separator: ", "))" + (languages.contains("osd") ? "; orientation: osd)" : ")")) }
        if let isolation { parts.append("helpers isolated by \(isolation.rawValue)") }
        return (parts.joined(separator: "; "), [("pdftotext", pdftotext), ("pdftoppm", pdftoppm), ("tesseract", tesseract),
                                               ("ocr_languages", languages.joined(separator: "+")), ("isolation", isolation?.rawValue)])
    }

    /// `eng`, `deu`, `chi_sim`, `script/Latin`: what Tesseract names a language by.
    static func isLanguageName(_ name: some StringProtocol) -> Bool {
        !name.isEmpty && name.count <= 40 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "/") }
    }

    /// Checks `eng+deu` against the installed languages: nil when it is fine, else what is wrong.
    public static func problem(languages: String, installed: [String]) -> String? {
        let asked = languages.split(separator: "+", omittingEmptySubsequences: false)
        guard !asked.isEmpty, asked.allSatisfy({ isLanguageName($0) }) else {
            return "OCR languages are Tesseract's names joined by '+', such as eng or eng+deu"
        }
        if installed.isEmpty { return nil }   // Tesseract missing: stored, read once it is installed.
        for language in asked where !installed.contains(String(language)) {
            return "the OCR language '\(language)' is not installed (installed: \(installed.filter { $0 != "osd" }.joined(separator: ", "))); "
                + "install tesseract-ocr-\(language.lowercased().replacingOccurrences(of: "_", with: "-"))"
        }
        return nil
    }
}
