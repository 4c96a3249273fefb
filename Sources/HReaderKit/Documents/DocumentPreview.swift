import Foundation
import HReaderModel
import HReaderStore

/// A page of a stored PDF as a PNG, for the web view's document page: rendered by `pdftoppm` as the
/// text extraction renders its scans, in a sandboxed child (no network, no file it could write,
/// memory, CPU and time limits), the PDF on its stdin a chunk at a time and the image on its stdout.
/// Nothing is written to disk, and the vault's PDF never meets poppler in hreader's own process.
public enum DocumentPreview {
    /// Pages are drawn this many pixels wide at most (a screen's column), whatever their size.
    public static let width = 1000
    /// A PNG is at most this large; a page that draws larger is refused.
    public static let maxBytes = 16 << 20
    /// A PDF is drawn from memory up to this size.
    public static let maxPDFBytes = 64 << 20

    public enum Failure: Error, CustomStringConvertible {
        case notAPDF(String)
        case noBytes(String)
        case noRenderer
        case noSuchPage(Int)
        case failed(String)

        public var description: String {
            switch self {
            case let .notAPDF(type): return "only a PDF has pages to preview (this is \(type))"
            case let .noBytes(state): return "the document has no bytes in the vault (\(state))"
            case .noRenderer: return "no PDF preview: pdftoppm is not installed (Debian's poppler-utils)"
            case let .noSuchPage(page): return "the PDF has no page \(page)"
            case let .failed(reason): return "the page could not be drawn: \(reason)"
            }
        }
    }

    /// Page `page` (from 1) of `bytes` as a PNG at most `width` pixels wide.
    public static func png(_ bytes: DocumentBytes, page: Int, tools: TextTools = .find(),
                           limits: SandboxedChild.Limits = previewLimits) throws -> [UInt8] {
        guard let pdftoppm = tools.pdftoppm else { throw Failure.noRenderer }
        guard page >= 1, page <= 100_000 else { throw Failure.noSuchPage(page) }
        let outcome: SandboxedChild.Outcome
        do {
            outcome = try bytes.feed(SandboxedChild(executable: pdftoppm, limits: limits),
                                     ["-png", "-scale-to", String(width), "-f", String(page), "-l", String(page), "fd://0"])
        } catch let failure as SandboxedChild.Failure {
            // pdftoppm's 99 ("other error") is what it answers a page range past the last page with.
            throw failure.exitCode == 99 ? Failure.noSuchPage(page) : Failure.failed(failure.description)
        }
        // pdftoppm draws nothing, and says nothing, for a page past the last.
        guard outcome.stdout.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else {
            throw outcome.stdout.isEmpty ? Failure.noSuchPage(page) : Failure.failed("pdftoppm did not answer with a PNG")
        }
        return outcome.stdout
    }

    /// A page view's limits: a tenth of the OCR's time, its output bounded by `maxBytes`.
    public static var previewLimits: SandboxedChild.Limits {
        var limits = SandboxedChild.Limits()
        limits.cpuSeconds = 20
        limits.timeout = 30
        limits.outputBytes = maxBytes
        return limits
    }
}

extension OpenVault {
    /// A stored PDF's bytes, whole, for `DocumentPreview`: read on this connection and drawn off it
    /// (the web server does not hold a connection while poppler works). At most `limit` bytes.
    public func previewablePDF(_ document: StoredDocument, limit: Int = DocumentPreview.maxPDFBytes) throws -> [UInt8] {
        guard DocumentDelivery(document).contentType == "application/pdf" else {
            throw DocumentPreview.Failure.notAPDF(document.contentType ?? "of no known type")
        }
        guard document.state == .fetched, document.sha256 != nil else { throw DocumentPreview.Failure.noBytes(document.state.rawValue) }
        guard let whole = try storedBytes(of: document).whole(limit: limit) else { throw DocumentPreview.Failure.failed("the PDF is larger than \(limit >> 20) MiB") }
        return whole
    }
}
