import CLibXML2
import Foundation
import HReaderCrypto
import HReaderKit
import HReaderRecords
import HReaderStore

/// `import --file` of a long C-CDA (a 5 MB CCD with years of results and vitals) against the
/// parse floor: the same bytes read node by node by libxml2's streaming reader alone, with the
/// options hreader reads XML with, doing nothing with them (goal: the import within 2x of it).
func runCCDABenchmarks(scratch: URL, password: SecretBytes) throws {
    let bytes = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_CCDA_BYTES"] ?? "") ?? 5_000_000
    say("\n== import --file of a C-CDA document: a generated CCD of \(bytes / 1_000_000) MB ==")
    guard let (_, hreader) = siblingBinaries() else { return }
    let document = Data(CCDAGenerator.document(bytes: bytes).utf8)
    let file = scratch.appendingPathComponent("long-ccd.xml")
    try document.write(to: file)

    var floors: [Double] = []
    var nodes = 0
    for _ in 0..<5 {
        floors.append(seconds { nodes = libxml2Nodes(document) })
    }
    let floor = median(floors)
    row("  libxml2 alone (streaming reader, every node)", ms(floor),
        String(format: "%.0f MB/s, %d nodes (median of 5)", Double(document.count) / 1e6 / floor, nodes))

    // Where the import's time goes: reading the document into resources, then mapping those.
    var reads: [Double] = [], maps: [Double] = []
    for _ in 0..<3 {
        reads.append(try seconds { _ = try CCDADocument.read(document, what: "long-ccd.xml") })
        maps.append(try seconds { _ = try FHIRMapper().map(files: [("long-ccd.xml", document, .ccda)]) })
    }
    row("  CCDADocument.read (tree and resources)", ms(median(reads)), String(format: "%.1fx the libxml2 floor", median(reads) / floor))
    row("  read and FHIRMapper (the resources as entries)", ms(median(maps)), String(format: "%.1fx the libxml2 floor", median(maps) / floor))

    // The same import in this process (no process start, no KDF): mapping and storing, and so
    // storing alone (matching, upserts, the search index) as the difference.
    var inProcess: [Double] = []
    for run in 0..<3 {
        let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("ccda-in-process-\(run)")))
        _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
        let open = try service.open(.password(password))
        inProcess.append(try seconds { _ = try open.importFile(file) })
        try? FileManager.default.removeItem(at: service.vault.root)
    }
    row("  importFile in this process (read, map, store)", ms(median(inProcess)), String(format: "%.1fx the libxml2 floor", median(inProcess) / floor))
    let inProcessWall = median(inProcess)
    row("    of which storing (matching, upserts, the search index)", ms(max(0, median(inProcess) - median(maps))))
    // What the rows alone cost: the same mapped entries inserted bare into a fresh vault in one
    // transaction (each row with its source resource and the table's indexes, encrypted), without
    // matching, provenance or the search index: the part of storing no import can leave out.
    let batch = try FHIRMapper().map(files: [("long-ccd.xml", document, .ccda)])
    var bare: [Double] = []
    var bareRows = 0
    for run in 0..<3 {
        let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("ccda-bare-\(run)")))
        _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
        let open = try service.open(.password(password))
        let source = try open.inDatabase { db in
            try SourceRepository(db).findOrCreate(kind: .file, baseURL: "file:long-ccd.xml", displayName: "long-ccd.xml", now: "2026-11-26T00:00:00Z")
        }
        let now = Date()
        bare.append(try seconds {
            // With the page cache an import of records runs with (RecordImporter).
            try open.inDatabase { db in try db.withPageCache(kibibytes: 16 << 10) { try db.transaction {
                let entries = EntryRepository(db)
                bareRows = 0
                for record in batch.records {
                    let patient = try PatientRepository(db).add(record.patient.content)
                    for entry in record.entries {
                        _ = try entries.insert(patientID: patient.id, content: entry.content, sourceID: source, remoteID: entry.remoteID, now: now)
                        bareRows += 1
                    }
                }
            } } }
        })
        try? FileManager.default.removeItem(at: service.vault.root)
    }
    row("    the same rows inserted bare", ms(median(bare)),
        String(format: "%d rows in one transaction, no matching or search index; %.1fx the libxml2 floor on its own; "
               + "the import in this process is %.2fx this", bareRows, median(bare) / floor, inProcessWall / median(bare)))
    let bareWall = median(bare)
    // The same without reconciliation (no grouping index, no regrouping): what grouping facts adds.
    var plain: [Double] = []
    FactGrouping.skippedForBenchmark = true
    for run in 0..<3 {
        let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("ccda-plain-\(run)")))
        _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
        let open = try service.open(.password(password))
        try open.inDatabase { try $0.execute("DROP INDEX entries_facts") }
        plain.append(try seconds { _ = try open.importFile(file) })
        try? FileManager.default.removeItem(at: service.vault.root)
    }
    FactGrouping.skippedForBenchmark = false
    row("    the same without reconciliation", ms(median(plain)),
        String(format: "reconciliation adds %.0f ms (%.0f%%)", (median(inProcess) - median(plain)) * 1000,
               100 * (median(inProcess) - median(plain)) / median(plain)))

    var imports: [Double] = [], peaks: [Int] = []
    var entries = 0
    for run in 0..<3 {
        let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("ccda-\(run)")))
        _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
        let token = try service.startSession(.password(password), for: 600).token
        let env = ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"]
        let measured = try spawnMeasured(hreader, ["import", "--file", file.path, "--vault", service.vault.root.path, "--quiet"], environment: env)
        imports.append(measured.seconds)
        peaks.append(measured.peakKB)
        if run == 0 { entries = try service.open(.session(token)).counts().entries }
        try? FileManager.default.removeItem(at: service.vault.root)
    }
    let wall = median(imports)
    row("  hreader import --file (with a session)", ms(wall),
        String(format: "%d entries; %.2fx the same rows inserted bare (goal <= 2x, process start and matching included), "
               + "%.1fx the libxml2 floor; peak RSS %.0f MB (median of 3)",
               entries, wall / bareWall, wall / floor, Double(peaks.sorted()[peaks.count / 2]) / 1024))
    row("    of which the process (start, unlock, open, exit)", ms(max(0, wall - median(inProcess))))
    try? FileManager.default.removeItem(at: file)
}

/// Reads every node of `data` with libxml2's streaming reader and returns how many there were.
func libxml2Nodes(_ data: Data) -> Int {
    data.withUnsafeBytes { raw -> Int in
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOCDATA.rawValue)
        guard let reader = xmlReaderForMemory(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(data.count), nil, nil, options) else {
            return 0
        }
        defer { xmlFreeTextReader(reader) }
        var count = 0
        while xmlTextReaderRead(reader) == 1 { count += 1 }
        return count
    }
}
