import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderRecords
import HReaderStore

/// `import --apple-health` of generated exports (200k and 1M records): records/s and peak memory of
/// the hreader process, against the reference importer healthkit-to-sqlite on the same files, and
/// the parse floor under it: the reader alone over the same zip.
func runAppleHealthBenchmarks(scratch: URL, password: SecretBytes) throws {
    let sizes = (ProcessInfo.processInfo.environment["HREADER_BENCH_HEALTH_RECORDS"] ?? "200000,1000000")
        .split(separator: ",").compactMap { Int($0) }
    say("\n== import --apple-health: generated exports (real format, streamed) ==")
    guard let (generator, hreader) = siblingBinaries() else { return }
    let packageRoot = hreader.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let reference = [ProcessInfo.processInfo.environment["HREADER_HEALTHKIT_TO_SQLITE"],
                     packageRoot.appendingPathComponent(".build/pyenv/bin/healthkit-to-sqlite").path,
                     packageRoot.appendingPathComponent("pyenv/bin/healthkit-to-sqlite").path]
        .compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }

    for size in sizes {
        let zip = scratch.appendingPathComponent("export-\(size).zip")
        _ = try spawnMeasured(generator, ["--out", zip.path, "--records", String(size), "--days", "3650"])
        let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("health-\(size)")))
        _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
        let token = try service.startSession(.password(password), for: 3600).token
        let run = try spawnMeasured(hreader, ["import", "--apple-health", zip.path, "--as", "me", "--vault", service.vault.root.path, "--quiet"],
                                  environment: ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"])
        row("  \(size) records: hreader", ms(run.seconds),
            String(format: "%.0f records/s, peak RSS %.0f MB", Double(size) / run.seconds, Double(run.peakKB) / 1024))
        let vaultBytes = directoryBytes(service.vault.root, matching: "vault.db")
        row("    vault", String(format: "%8.1f MB", Double(vaultBytes) / 1e6), String(format: "%.0f bytes a record", Double(vaultBytes) / Double(size)))
        try timelinePages(service: service, token: token, hreader: hreader, withServer: size == sizes.max())
        let floor = try appleHealthParseFloor(zip)
        row("    parse floor (reader alone, no writes)", ms(floor.seconds),
            String(format: "%.0f records/s, %.0f MB/s of XML (%d elements); parse floor %.1f s = %.0f%% of the import",
                   Double(size) / floor.seconds, Double(floor.bytes) / 1e6 / floor.seconds, floor.elements,
                   floor.seconds, 100 * floor.seconds / run.seconds))
        let libxml2 = try appleHealthParseFloor(zip, fastPath: false)
        row("      the same read by libxml2 alone", ms(libxml2.seconds),
            String(format: "%.0f MB/s of XML; the fast path takes %.2fx its time", Double(libxml2.bytes) / 1e6 / libxml2.seconds,
                   floor.seconds / libxml2.seconds))
        if let reference {
            let db = scratch.appendingPathComponent("reference-\(size).db")
            do {
                let ref = try spawnMeasured(URL(fileURLWithPath: reference), [zip.path, db.path])
                row("    healthkit-to-sqlite (reference)", ms(ref.seconds),
                    String(format: "%.0f records/s, peak RSS %.0f MB; hreader takes %.2fx its time (%.1fx faster)", Double(size) / ref.seconds,
                           Double(ref.peakKB) / 1024, run.seconds / ref.seconds, ref.seconds / run.seconds))
                let refBytes = (try? FileManager.default.attributesOfItem(atPath: db.path)[.size] as? Int) ?? 0
                row("    healthkit-to-sqlite database", String(format: "%8.1f MB", Double(refBytes) / 1e6),
                    String(format: "%.0f bytes a record; the vault is %.2fx its size", Double(refBytes) / Double(size),
                           Double(vaultBytes) / Double(max(refBytes, 1))))
            } catch {
                say("    healthkit-to-sqlite (reference) failed on this export: \(error.localizedDescription)")
            }
            try? FileManager.default.removeItem(at: db)
        } else {
            say("    (healthkit-to-sqlite not installed: `make bench` installs it into .build/pyenv)")
        }
        try? FileManager.default.removeItem(at: zip)
        try? FileManager.default.removeItem(at: service.vault.root)
    }
}

/// Bytes of the files whose name starts with `prefix` (the database, its WAL) in a directory.
func directoryBytes(_ directory: URL, matching prefix: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.filter { $0.hasPrefix(prefix) }.reduce(0) { total, name in
        total + ((try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.size] as? Int) ?? 0)
    }
}

/// The timeline's day and decade pages over the imported vault (ten years of samples) with 10,000
/// clinical entries added: in process, written compact as the CLI and the web write them (median of
/// 9), against the bare SELECT of the same samples' numbers; end to end through `hreader timeline`
/// with a session; and, for the largest export, over HTTP from `hreader serve`.
func timelinePages(service: VaultService, token: String, hreader: URL, withServer: Bool) throws {
    let vault = try service.open(.session(token))
    guard let patient = try vault.patients.all().first, let latest = try vault.entries.latestTime(patientID: patient.id) else { return }
    try vault.db.transaction {
        let entries = EntryRepository(vault.db)
        let kinds: [EntryType] = [.condition, .medication, .result, .encounter, .immunization, .allergy, .procedure]
        for i in 0..<10_000 {
            let type = kinds[i % kinds.count]
            try entries.insert(patientID: patient.id, content: EntryContent(
                type: type, description: "\(type.rawValue) \(i % 40)", date: ClinicalTime(epoch: latest - Int64(i) * 31_536), valueNumber: Double(i % 90),
                unit: "u"), remoteID: "bench-clinical-\(i)")
        }
    }
    let zone = TimeZone(identifier: "UTC")!
    func page(_ range: TimelineRange) throws -> Int {
        var bytes = 0
        var out = JSONByteWriter { bytes += $0.count }
        try vault.writeTimeline(patient: patient, query: TimelineQuery(range: range), to: &out)
        return bytes
    }
    for (name, length) in [("day", Int64(86_400)), ("decade", Int64(86_400 * 3653))] {
        let range = TimelineRange(start: latest - length, end: latest, timeZone: zone)
        var bytes = 0
        let inProcess = median((0..<9).map { _ in (try? seconds { bytes = try page(range) }) ?? 0 })
        var count = 0
        let bare = median((0..<9).map { _ in (try? seconds {
            count = try vault.db.query("""
                SELECT s.start_epoch, s.value FROM sample_series ss JOIN samples s ON s.series_id = ss.id
                WHERE ss.patient_id = ? AND s.start_epoch BETWEEN ? AND ?
                """, [patient.id, range.start, range.end]) { ($0.int64(0), $0.double(1)) }.count
        }) ?? 0 })
        row("    timeline \(name) page, in process", ms(inProcess),
            String(format: "%d samples, %d bytes of JSON; bare SELECT %.2f ms, %.1fx", count, bytes, bare * 1000, inProcess / max(bare, 1e-9)))
        var wall: [Double] = []
        for _ in 0..<(name == "decade" ? 3 : 9) {
            wall.append(try spawnMeasured(hreader, ["timeline", "--vault", service.vault.root.path, "--patient", String(patient.id),
                                                    "--from", RFC3339.utc(range.start), "--to", RFC3339.utc(range.end)],
                                          environment: ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"], memory: false).seconds)
        }
        row("      end to end: hreader timeline (session)", ms(median(wall)), String(format: "%.1fx the bare SELECT", median(wall) / max(bare, 1e-9)))
    }
    if withServer {
        try runServeBenchmarks(hreader: hreader, vault: service.vault.root, session: token, patient: patient, end: latest) { range in
            try seconds { _ = try page(range) }
        }
    }
}

/// The parse floor: the reader over the export with no database writes, through the same zip
/// streaming path as the import (the member inflated on a second thread into a bounded pipe).
/// Median of 3.
func appleHealthParseFloor(_ zip: URL, fastPath: Bool = true) throws -> (seconds: Double, elements: Int, bytes: Int) {
    var times: [Double] = [], elements = 0, bytes = 0
    for _ in 0..<3 {
        (elements, bytes) = (0, 0)
        let export = try AppleHealthExportSource(url: zip)
        times.append(try seconds {
            try export.withXML { source in
                let counting: AppleHealthReader.Source = { buffer in
                    let count = try source(buffer)
                    bytes += count
                    return count
                }
                try AppleHealthReader(fastPath: fastPath, source: counting).read { _ in elements += 1 }
            }
        })
    }
    return (median(times), elements, bytes)
}

