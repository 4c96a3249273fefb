import Foundation
import HReaderCrypto
import HReaderKit
import HReaderModel
import HReaderStore

/// `hreader documents add` of a 50 MB PDF (HREADER_BENCH_DOCUMENT_MB) and `documents get` of it,
/// end to end through the binary: seconds and peak resident memory (goal: flat, at most 64 MiB,
/// whatever the size), against `cp` of the same file (the disk's floor) and the peak memory of
/// `hreader documents list` on the same vault (the program's own floor).
func runDocumentsBenchmarks(scratch: URL, password: SecretBytes) throws {
    let megabytes = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_DOCUMENT_MB"] ?? "") ?? 50
    say("\n== documents: add and get a \(megabytes) MB PDF, end to end ==")
    guard let (_, hreader) = siblingBinaries() else { return }
    let root = scratch.appendingPathComponent("documents-bench")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }

    let service = VaultService(vault: Vault(root: root.appendingPathComponent("vault")))
    _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
    _ = try service.open(.password(password)).addPatient(NewPatient(firstName: "Bench", lastName: "Mark"))
    let token = try service.startSession(.password(password), for: 3600).token
    let session = ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin", "HREADER_DOCUMENT_MAX_BYTES": "1G"]
    let vault = ["--vault", service.vault.root.path]

    // The PDF: a header and pseudo-random bytes (incompressible, as a scan's image data is).
    let pdf = root.appendingPathComponent("scan.pdf")
    FileManager.default.createFile(atPath: pdf.path, contents: nil)
    let handle = try FileHandle(forWritingTo: pdf)
    var generator = SystemRandomNumberGenerator()
    handle.write(Data("%PDF-1.7\n".utf8))
    for _ in 0..<megabytes {
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        chunk.withUnsafeMutableBytes { raw in
            for i in stride(from: 0, to: raw.count, by: 8) { raw.storeBytes(of: generator.next() as UInt64, toByteOffset: i, as: UInt64.self) }
        }
        handle.write(Data(chunk))
    }
    try handle.close()

    let copy = root.appendingPathComponent("copy.pdf")
    let cp = try spawnMeasured(URL(fileURLWithPath: "/bin/cp"), [pdf.path, copy.path], memory: false)
    try? FileManager.default.removeItem(at: copy)
    let size = Double(megabytes)
    row("  cp scan.pdf (baseline)", ms(cp.seconds), String(format: "%.0f MB/s", size / cp.seconds))
    let floor = try spawnMeasured(hreader, ["documents", "list", "--quiet"] + vault, environment: session)
    row("  hreader documents list (memory baseline)", ms(floor.seconds), String(format: "peak RSS %.0f MB", Double(floor.peakKB) / 1024))

    let added = try spawnMeasured(hreader, ["documents", "add", pdf.path, "--patient", "1", "--quiet"] + vault, environment: session)
    row("  documents add", ms(added.seconds), String(format: "%.0f MB/s, %.1fx cp, peak RSS %.0f MB (%+.0f MB over the baseline; goal ≤ 64 MiB)",
                                                     size / added.seconds, added.seconds / cp.seconds, Double(added.peakKB) / 1024,
                                                     Double(added.peakKB - floor.peakKB) / 1024))
    let out = root.appendingPathComponent("out.pdf")
    let got = try spawnMeasured(hreader, ["documents", "get", "1", "--out", out.path, "--quiet"] + vault, environment: session)
    row("  documents get", ms(got.seconds), String(format: "%.0f MB/s, %.1fx cp, peak RSS %.0f MB", size / got.seconds,
                                                   got.seconds / cp.seconds, Double(got.peakKB) / 1024))
    let same = FileManager.default.contentsEqual(atPath: pdf.path, andPath: out.path)
    row("  bytes back", same ? "identical" : "DIFFERENT")
    let checked = try spawnMeasured(hreader, ["check", "--quiet"] + vault, environment: session)
    row("  check (SHA-256 of every document)", ms(checked.seconds), String(format: "peak RSS %.0f MB", Double(checked.peakKB) / 1024))
}

/// Import of 2,000 text notes (about 10 kB each, each a Binary by url) from the sample server on
/// loopback, end to end through the binary, against writing the same bytes and texts into a vault
/// directly (DocumentRepository, one transaction) in the same run.
func runDocumentImportBenchmark(scratch: URL, password: SecretBytes) throws {
    let count = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_DOCUMENT_NOTES"] ?? "") ?? 2_000
    say("\n== documents: import of \(count) notes over HTTP (sample server on loopback) ==")
    guard let (_, hreader) = siblingBinaries() else { return }
    guard let (server, base) = try startSampleServer(["--patients", "1", "--entries-per-patient", "10", "--bulk-notes", String(count)]) else {
        return
    }
    defer { server.terminate(); server.waitUntilExit() }

    let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("document-import")))
    _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
    let token = try service.startSession(.password(password), for: 3600).token
    let run = try spawnMeasured(hreader, ["import", "--server", base + "/fhir", "--patient", "p1", "--vault", service.vault.root.path, "--quiet"],
                                environment: ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"])
    let open = try service.open(.password(password))
    let stored = try open.documents().filter { $0.state == .fetched }
    let bytes = stored.reduce(0) { $0 + Int($1.size ?? 0) }
    row("  hreader import --server (\(stored.count) documents fetched)", ms(run.seconds),
        String(format: "%.0f documents/s, %.1f MB, peak RSS %.0f MB", Double(stored.count) / run.seconds, Double(bytes) / 1e6,
               Double(run.peakKB) / 1024))

    // The same bytes written straight into a vault: the floor under fetching them.
    let texts = try stored.map { document -> [UInt8] in
        var out: [UInt8] = []
        try open.readDocumentBytes(document) { out += $0 }
        return out
    }
    let direct = VaultService(vault: Vault(root: scratch.appendingPathComponent("document-direct")))
    _ = try direct.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
    let target = try direct.open(.password(password))
    let patient = try target.addPatient(NewPatient(firstName: "Bench", lastName: "Mark"))
    let floor = try seconds {
        try target.inDatabase { db in try db.transaction {
            let documents = DocumentRepository(db)
            let source = try documents.manualSourceID()
            for (n, text) in texts.enumerated() {
                let id = try documents.insert(DocumentDraft(patientID: patient.id, sourceID: source, title: "Note \(n)",
                                                            contentType: "text/plain", state: .fetched))
                var given = false
                _ = try documents.writeBytes(id: id) { given ? nil : { given = true; return text }() }
                try documents.setText(id: id, String(decoding: text, as: UTF8.self))
            }
        } }
    }
    row("  the same bytes written directly (floor)", ms(floor),
        String(format: "the import takes %.1fx its time (fetching %d Binaries, mapping, the rest of the record)", run.seconds / floor, texts.count))
}
