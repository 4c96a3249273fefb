import Foundation
import HReaderCrypto
import HReaderKit
import HReaderStore

/// `hreader backup --out`, `backup --verify` and `restore` of a vault holding an Apple Health export
/// (1M samples by default, HREADER_BENCH_BACKUP_RECORDS), end to end through the binary: seconds and
/// MB/s of `vault.db`, against a plain `cp` of the same `vault.db` in the same run (the physical floor
/// on this disk), with and without an fsync of the copy (a backup fsyncs, `cp` does not).
func runBackupBenchmarks(scratch: URL, password: SecretBytes) throws {
    let records = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_BACKUP_RECORDS"] ?? "") ?? 1_000_000
    say("\n== backup and restore: a vault of \(records) Apple Health samples, end to end ==")
    guard let (generator, hreader) = siblingBinaries() else { return }
    let root = scratch.appendingPathComponent("backup-bench")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }

    // The vault, built the way a user builds it: a generated export imported by hreader.
    let zip = root.appendingPathComponent("export.zip")
    _ = try spawnMeasured(generator, ["--out", zip.path, "--records", String(records), "--days", "730"])
    let service = VaultService(vault: Vault(root: root.appendingPathComponent("vault")))
    _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
    let token = try service.startSession(.password(password), for: 3600).token
    let session = ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"]
    let imported = try spawnMeasured(hreader, ["import", "--apple-health", zip.path, "--as", "me", "--vault", service.vault.root.path, "--quiet"],
                                   environment: session)
    try? FileManager.default.removeItem(at: zip)
    let database = service.vault.databaseURL
    let bytes = (try FileManager.default.attributesOfItem(atPath: database.path)[.size] as? Int) ?? 0
    let megabytes = Double(bytes) / 1e6
    row("  vault.db", String(format: "%8.1f MB", megabytes), String(format: "imported in %.1f s", imported.seconds))
    let passwordFile = root.appendingPathComponent("password")
    try password.withUnsafeBytes { Data($0) }.write(to: passwordFile)
    chmod(passwordFile.path, 0o600)

    // The floor: cp of the same file (warm cache, as the backup's reads are), median of 3.
    let cp = URL(fileURLWithPath: "/bin/cp"), sync = URL(fileURLWithPath: "/bin/sync")
    let copy = root.appendingPathComponent("copy.db")
    var cpTimes: [Double] = [], cpSyncTimes: [Double] = []
    for _ in 0..<3 {
        try? FileManager.default.removeItem(at: copy)
        let plain = try spawnMeasured(cp, [database.path, copy.path], memory: false).seconds
        try? FileManager.default.removeItem(at: copy)
        let synced = try seconds {
            _ = try spawnMeasured(cp, [database.path, copy.path], memory: false)
            if FileManager.default.isExecutableFile(atPath: sync.path) { _ = try spawnMeasured(sync, [copy.path], memory: false) }
        }
        cpTimes.append(plain)
        cpSyncTimes.append(synced)
    }
    try? FileManager.default.removeItem(at: copy)
    let floor = median(cpTimes), syncedFloor = median(cpSyncTimes)
    row("  cp vault.db (baseline)", ms(floor), String(format: "%.0f MB/s", megabytes / floor))
    row("  cp vault.db + sync (baseline)", ms(syncedFloor), String(format: "%.0f MB/s", megabytes / syncedFloor))

    let backupFile = root.appendingPathComponent("vault.hrbackup")
    func report(_ name: String, _ run: (seconds: Double, peakKB: Int, pageFaults: Int)) {
        row("  \(name)", ms(run.seconds), String(format: "%.0f MB/s, %.1fx cp, %.1fx cp+sync, peak RSS %.0f MB", megabytes / run.seconds,
                                                run.seconds / floor, run.seconds / syncedFloor, Double(run.peakKB) / 1024))
    }
    var backups: [(seconds: Double, peakKB: Int, pageFaults: Int)] = []
    for _ in 0..<3 {
        backups.append(try spawnMeasured(hreader, ["backup", "--out", backupFile.path, "--vault", service.vault.root.path, "--quiet"],
                                       environment: session))
    }
    report("hreader backup --out (session)", backups.sorted { $0.seconds < $1.seconds }[1])
    let fileBytes = (try FileManager.default.attributesOfItem(atPath: backupFile.path)[.size] as? Int) ?? 0
    row("    backup file", String(format: "%8.1f MB", Double(fileBytes) / 1e6), String(format: "%d bytes over vault.db", fileBytes - bytes))
    report("hreader backup --verify", try spawnMeasured(hreader, ["backup", "--verify", backupFile.path, "--password-file", passwordFile.path, "--quiet"],
                                                      environment: ["PATH": "/usr/bin:/bin", "TMPDIR": root.path]))
    let restored = root.appendingPathComponent("restored")
    report("hreader restore", try spawnMeasured(hreader, ["restore", backupFile.path, "--vault", restored.path, "--password-file", passwordFile.path, "--quiet"],
                                              environment: ["PATH": "/usr/bin:/bin"]))
    let restoredBytes = (try FileManager.default.attributesOfItem(atPath: restored.appendingPathComponent("vault.db").path)[.size] as? Int) ?? 0
    row("    restored vault.db", String(format: "%8.1f MB", Double(restoredBytes) / 1e6), restoredBytes == bytes ? "same size as the original" : "differs in size")
}
