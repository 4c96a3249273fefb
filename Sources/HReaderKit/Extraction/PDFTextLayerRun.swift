import Dispatch
import Foundation
import HReaderCrypto
import HReaderRecords
import HReaderStore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `pdftotext` reading a PDF file of the user's (`documents add`) on a thread of its own, started
/// before the file is stored: the helper parses on the other core while hreader encrypts the same
/// bytes into the vault, instead of after, fed again from the vault. The helper is the same
/// `SandboxedChild` as ever, fed over its stdin pipe; the file is read by this run's thread (a regular
/// file only: a pipe cannot be read twice) and what it hands over is hashed, so the caller can tell
/// whether the text is that of the bytes it stored (a file changed in between is read from the vault).
///
///     let run = PDFTextLayerRun.start(file: url, pdftotext: "/usr/bin/pdftotext", limits: extractor.limits, maxBytes: 64 << 20)
///     let stored = try store(url)                                    // the helper parses meanwhile
///     if let layer = run?.wait(until: .now() + 2), layer.sha256 == stored.sha256 { use(layer.pages) }
public final class PDFTextLayerRun: @unchecked Sendable {
    /// What the run read: the hex SHA-256 and size of the bytes given to the helper (nil when the file
    /// could not be read to its end), and the text layer's tidy pages, or why there are none.
    struct Layer {
        var sha256: String?
        var size: Int64
        var pages: Result<[String], Error>
    }

    // Written once by the run's thread before `done` is signalled, read after a wait that got the
    // signal: the semaphore orders them. `finished` is the waiting side's alone.
    private var layer: Layer?
    private let done = DispatchSemaphore(value: 0)
    private var finished = false
    /// A byte written here stops the helper (`cancel`). Both ends are closed when the run is released,
    /// which is after its thread has ended (the thread holds the run).
    private let stop: (read: Int32, write: Int32)

    private init(stop: (Int32, Int32)) { self.stop = stop }

    deinit {
        close(stop.read)
        close(stop.write)
    }

    /// Starts `pdftotext` on the file at `url`; nil when it is not a regular file of at most `maxBytes`
    /// (the caller's limit for a document: nothing larger is stored, so nothing larger is read).
    static func start(file url: URL, pdftotext: String, limits: SandboxedChild.Limits, maxBytes: Int64) -> PDFTextLayerRun? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var info = stat()
        var fds: [Int32] = [-1, -1]
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) <= maxBytes, pipe(&fds) == 0 else {
            close(fd)
            return nil
        }
        for end in fds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let run = PDFTextLayerRun(stop: (fds[0], fds[1]))
        let child = SandboxedChild(executable: pdftotext, limits: limits)
        Thread.detachNewThread { [run] in
            run.feed(from: fd, to: child, maxBytes: maxBytes)
            run.done.signal()
        }
        return run
    }

    private func feed(from fd: Int32, to child: SandboxedChild, maxBytes: Int64) {
        defer { close(fd) }
        // Made at the first piece, after the helper has started: the first digest loads libcrypto,
        // which the helper need not wait for (it loads its own libraries meanwhile).
        var hasher: SHA256.Incremental?
        var size: Int64 = 0
        var whole = true
        var piece = [UInt8](repeating: 0, count: DocumentRepository.chunkSize)
        // Tidied here too, page by page as pdftotext writes them: when it ends, only its last page is left.
        var pages = ExtractedText.PDFPages()
        let output = Result {
            try child.run(DocumentTextExtractor.pdftotextArguments, pulling: {
                guard whole else { return nil }
                let n = piece.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { return [] }
                guard n > 0 else { whole = n == 0; return nil }
                size += Int64(n)
                // Grown past the limit while it is read: the caller stores nothing of it, and nothing is read here either.
                if size > maxBytes { whole = false; return nil }
                let bytes = Array(piece[0..<n])
                if hasher == nil { hasher = SHA256.Incremental() }
                hasher!.update(bytes)
                return bytes
            }, stop: stop.read, output: { pages.append($0) })
        }
        let digest = (hasher ?? SHA256.Incremental()).finish()
        layer = Layer(sha256: whole ? DocumentRepository.hex(digest) : nil, size: size, pages: output.map { _ in pages.finish() })
    }

    /// The text layer once the run has ended, waiting for it until `deadline` at most (nil: not yet),
    /// or for as long as it takes.
    func wait(until deadline: DispatchTime = .distantFuture) -> Layer? {
        if !finished {
            guard done.wait(timeout: deadline) == .success else { return nil }
            finished = true
        }
        return layer
    }

    /// For `documents add`, before it opens the vault: starts reading the text layer of the file at
    /// `url` when it is a PDF (by `contentType`, else by its name and first bytes, as `addDocument`
    /// tells) and `pdftotext` is installed, so that the helper parses while hreader opens the vault.
    /// Hand it to `addDocument(…, textLayer:)`, which uses it or stops it; `cancel()` it otherwise.
    public static func start(adding url: URL, contentType: String?, limits: DocumentLimits, tools: TextTools = .find()) -> PDFTextLayerRun? {
        guard let pdftotext = tools.pdftotext else { return nil }
        let type = DocumentContentType.normalized(contentType) ?? FileHandle(forReadingAtPath: url.path).flatMap { handle in
            defer { try? handle.close() }
            return DocumentContentType.guess(fileName: url.lastPathComponent, prefix: [UInt8]((try? handle.read(upToCount: 64)) ?? Data()))
        }
        guard DocumentContentType.mediaType(type) == "application/pdf" else { return nil }
        return start(file: url, pdftotext: pdftotext, limits: SandboxedChild.Limits(), maxBytes: limits.perDocument)
    }

    /// Stops the helper if it is still running and waits for the thread to end.
    public func cancel() {
        guard !finished else { return }
        var byte: UInt8 = 1
        _ = write(stop.write, &byte, 1)
        _ = wait()
    }
}
