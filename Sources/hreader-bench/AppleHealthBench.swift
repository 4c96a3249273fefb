import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderRecords
import HReaderStore

/// `import --apple-health` of generated exports (1M and 10M records): records/s and peak memory of
/// the hreader process, against the reference importer healthkit-to-sqlite on the same files, and
/// the parse floor under it: the reader alone over the same zip; at each size the timeline pages, the
/// web view (largest size), check, backup and search, and the views of the whole person (summary,
/// patients show, a day-grouped export); then how each figure grew with the size.
func runAppleHealthBenchmarks(scratch: URL, password: SecretBytes) throws {
    // One and ten million records (issue 27: a decade of a watch; the growth lines compare them).
    let sizes = (ProcessInfo.processInfo.environment["HREADER_BENCH_HEALTH_RECORDS"] ?? "1000000,10000000")
        .split(separator: ",").compactMap { Int($0) }
    say("\n== import --apple-health: generated exports (real format, streamed) ==")
    guard let (generator, hreader) = siblingBinaries() else { return }
    let packageRoot = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let reference = [ProcessInfo.processInfo.environment["HREADER_HEALTHKIT_TO_SQLITE"],
                     packageRoot.appendingPathComponent(".build/pyenv/bin/healthkit-to-sqlite").path,
                     packageRoot.appendingPathComponent("pyenv/bin/healthkit-to-sqlite").path]
        .compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }

    // Per size: import seconds, peak RSS, vault bytes, and the reference's seconds, for the growth lines.
    var grown: [(size: Int, seconds: Double, peakKB: Int, bytes: Int, reference: Double?)] = []
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
        try vaultWideCommands(service: service, token: token, hreader: hreader, vaultBytes: vaultBytes)
        try wholeRecordViews(service: service, token: token, hreader: hreader, importSeconds: run.seconds)
        var referenceSeconds: Double?
        // Ten million records read in seconds each: one run of each read above a few million.
        let floorRuns = size > 2_000_000 ? 1 : 3
        let floor = try appleHealthParseFloor(zip, runs: floorRuns)
        row("    parse floor (reader alone, no writes)", ms(floor.seconds),
            String(format: "%.0f records/s, %.0f MB/s of XML (%d elements); parse floor %.1f s = %.0f%% of the import",
                   Double(size) / floor.seconds, Double(floor.bytes) / 1e6 / floor.seconds, floor.elements,
                   floor.seconds, 100 * floor.seconds / run.seconds))
        let libxml2 = try appleHealthParseFloor(zip, fastPath: false, runs: floorRuns)
        row("      the same read by libxml2 alone", ms(libxml2.seconds),
            String(format: "%.0f MB/s of XML; the fast path takes %.2fx its time", Double(libxml2.bytes) / 1e6 / libxml2.seconds,
                   floor.seconds / libxml2.seconds))
        // healthkit-to-sqlite takes about 30 s a million records: above HREADER_BENCH_REFERENCE_MAX records
        // (1M by default) the growth line scales its time at the smaller size instead.
        let referenceMax = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_REFERENCE_MAX"] ?? "") ?? 1_000_000
        if let reference, size <= referenceMax {
            let db = scratch.appendingPathComponent("reference-\(size).db")
            do {
                let ref = try spawnMeasured(URL(fileURLWithPath: reference), [zip.path, db.path])
                referenceSeconds = ref.seconds
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
        } else if reference == nil {
            say("    (healthkit-to-sqlite not installed: `make bench` installs it into .build/pyenv)")
        }
        try? FileManager.default.removeItem(at: zip)
        try? FileManager.default.removeItem(at: service.vault.root)
        grown.append((size, run.seconds, run.peakKB, vaultBytes, referenceSeconds))
    }
    // Growth from the smallest size to each larger one (issue 27: linear plus at most 20%, memory flat,
    // bytes per record no worse).
    if let base = grown.first {
        for large in grown.dropFirst() {
            let factor = Double(large.size) / Double(base.size)
            row("  growth \(base.size) -> \(large.size) records", String(format: "%7.1fx", large.seconds / base.seconds),
                String(format: "import time for %.0fx the records (goal <= %.0fx); peak RSS %.0f -> %.0f MB (goal <= 64 MiB); "
                       + "bytes a record %.0f -> %.0f", factor, factor * 1.2, Double(base.peakKB) / 1024, Double(large.peakKB) / 1024,
                       Double(base.bytes) / Double(base.size), Double(large.bytes) / Double(large.size)))
            if let reference = large.reference ?? base.reference.map({ $0 * factor }) {
                row("    healthkit-to-sqlite at \(large.size)", ms(reference),
                    (large.reference == nil ? "its time at \(base.size) x \(Int(factor)) (not run at this size)" : "measured")
                    + String(format: "; hreader takes %.2fx its time", large.seconds / reference))
            }
        }
    }
}

/// What reads or copies the whole vault, end to end with a session: `check`, `backup --out` (MB/s of
/// vault.db; goal >= 100 MB/s), and a search over it.
func vaultWideCommands(service: VaultService, token: String, hreader: URL, vaultBytes: Int) throws {
    let session = ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"]
    let root = service.vault.root.path
    let check = try spawnMeasured(hreader, ["check", "--vault", root, "--quiet"], environment: session)
    row("    hreader check", ms(check.seconds), String(format: "%.0f MB/s of vault.db, peak RSS %.0f MB", Double(vaultBytes) / 1e6 / check.seconds,
                                                      Double(check.peakKB) / 1024))
    let out = service.vault.root.deletingLastPathComponent().appendingPathComponent("scale.hrbackup")
    let backup = try spawnMeasured(hreader, ["backup", "--out", out.path, "--vault", root, "--quiet"], environment: session)
    try? FileManager.default.removeItem(at: out)
    row("    hreader backup --out", ms(backup.seconds), String(format: "%.0f MB/s (goal >= 100), peak RSS %.0f MB",
                                                              Double(vaultBytes) / 1e6 / backup.seconds, Double(backup.peakKB) / 1024))
    let search = try spawnMeasured(hreader, ["search", "metformin", "--vault", root, "--json"], environment: session, memory: false)
    row("    hreader search (session)", ms(search.seconds))
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
    guard let patient = try vault.allPatients().first,
          let latest = try vault.inDatabase({ try EntryRepository($0).latestTime(patientID: patient.id) }) else { return }
    try vault.inDatabase { db in try db.transaction {
        let entries = EntryRepository(db)
        let kinds: [EntryType] = [.condition, .medication, .result, .encounter, .immunization, .allergy, .procedure]
        for i in 0..<10_000 {
            let type = kinds[i % kinds.count]
            try entries.insert(patientID: patient.id, content: EntryContent(
                type: type, description: "\(type.rawValue) \(i % 40)", date: ClinicalTime(epoch: latest - Int64(i) * 31_536), valueNumber: Double(i % 90),
                unit: "u"), remoteID: "bench-clinical-\(i)")
        }
    } }
    let zone = TimeZone(identifier: "UTC")!
    func page(_ range: TimelineRange) throws -> Int {
        var bytes = 0
        var out = JSONByteWriter { bytes += $0.count }
        try vault.writeTimeline(patient: patient, query: TimelineQuery(range: range), to: &out)
        return bytes
    }
    // Real exports have dense days (a watch, a phone and a scale at once) beside sparse ones: the
    // densest UTC day of the vault is measured too, the day a user waits longest for.
    let densest = try vault.inDatabase { db in
        try db.query("""
            SELECT s.start_epoch / 86400 AS day, count(*) FROM samples s JOIN sample_series ss ON ss.id = s.series_id
            WHERE ss.patient_id = ? GROUP BY day ORDER BY 2 DESC LIMIT 1
            """, [patient.id]) { $0.int64(0) }
    }.first.flatMap { $0 }.map { $0 * 86_400 } ?? (latest - 86_400)
    let pages: [(name: String, start: Int64, end: Int64)] = [
        ("day", latest - 86_400, latest), ("densest day", densest, densest + 86_399),
        ("month", latest - 86_400 * 31, latest), ("decade", latest - 86_400 * 3653, latest),
    ]
    for (name, start, end) in pages {
        let range = TimelineRange(start: start, end: end, timeZone: zone)
        var bytes = 0
        // The decade page of ten million samples is a 90 MB answer: three runs of it.
        let runs = name == "decade" ? 3 : 9
        let inProcess = median((0..<runs).map { _ in (try? seconds { bytes = try page(range) }) ?? 0 })
        var count = 0
        let bare = median((0..<runs).map { _ in (try? seconds {
            count = try vault.inDatabase { db in
                try db.query("""
                    SELECT s.start_epoch, s.value FROM sample_series ss JOIN samples s ON s.series_id = ss.id
                    WHERE ss.patient_id = ? AND s.start_epoch BETWEEN ? AND ?
                    """, [patient.id, range.start, range.end]) { ($0.int64(0), $0.double(1)) }.count
            }
        }) ?? 0 })
        row("    timeline \(name) page, in process", ms(inProcess),
            String(format: "%d samples, %d bytes of JSON; bare SELECT %.2f ms, %.1fx", count, bytes, bare * 1000, inProcess / max(bare, 1e-9)))
        if name == "month" || name == "decade" {
            // Its activity alone: day totals, each day counted once where the watch and the phone both
            // counted it (issue 40's source priority), against SQLite's plain per-day sums of the same.
            var activityBytes = 0
            let activity = median((0..<runs).map { _ in (try? seconds {
                activityBytes = 0
                var out = JSONByteWriter { activityBytes += $0.count }
                try vault.writeTimeline(patient: patient, query: TimelineQuery(range: range, keys: ["activity"]), to: &out)
            }) ?? 0 })
            var days = 0
            let summed = median((0..<runs).map { _ in (try? seconds {
                days = try vault.inDatabase { db in
                    try db.query("""
                        SELECT s.start_epoch / 86400 AS day, ss.description, total(s.value) FROM sample_series ss JOIN samples s ON s.series_id = ss.id
                        WHERE ss.patient_id = ? AND ss.type = 'activity' AND s.start_epoch BETWEEN ? AND ? GROUP BY day, ss.description
                        """, [patient.id, range.start, range.end]) { $0.double(2) }.count
                }
            }) ?? 0 })
            row("      its activity alone (source priority)", ms(activity),
                String(format: "%d day totals; SQLite's plain sums %.2f ms, %.1fx", days, summed * 1000, activity / max(summed, 1e-9)))
        }
        var wall: [Double] = []
        var faults = 0
        for _ in 0..<(name == "decade" ? 3 : 9) {
            let run = try spawnMeasured(hreader, ["timeline", "--vault", service.vault.root.path, "--patient", String(patient.id),
                                                  "--from", RFC3339.utc(range.start), "--to", RFC3339.utc(range.end)],
                                        environment: ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"], memory: false)
            wall.append(run.seconds)
            faults = run.pageFaults
        }
        row("      end to end: hreader timeline (session)", ms(median(wall)),
            String(format: "%.1fx the bare SELECT; %d page faults", median(wall) / max(bare, 1e-9), faults))
    }
    if withServer {
        try runServeBenchmarks(hreader: hreader, vault: service.vault.root, session: token, patient: patient, end: latest, load: true) { range in
            try seconds { _ = try page(range) }
        }
    }
}

/// The parse floor: the reader over the export with no database writes, through the same zip
/// streaming path as the import (the member inflated on a second thread into a bounded pipe).
/// Median of 3.
func appleHealthParseFloor(_ zip: URL, fastPath: Bool = true, runs: Int = 3) throws -> (seconds: Double, elements: Int, bytes: Int) {
    var times: [Double] = [], elements = 0, bytes = 0
    for _ in 0..<runs {
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

