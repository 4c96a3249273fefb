import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderStore

/// Issue 40: `import --file` of a Garmin watch's FIT files (a zip as Garmin exports it: a decade of
/// daily monitoring files), of an Android Health Connect export and of Fitbit's Takeout, against
/// `import --apple-health` of a generated export of the same number of samples, in the same run, and
/// fitdecode (PyPI) decoding the same FIT files: seconds, samples/s, peak memory, and the ratio (the goal:
/// at most 1.5x the Apple Health path, at most 64 MiB). HREADER_BENCH_WEARABLE_SAMPLES sets the
/// sizes (default 1,000,000).
func runWearablesBenchmarks(scratch: URL, password: SecretBytes) throws {
    let sizes = (ProcessInfo.processInfo.environment["HREADER_BENCH_WEARABLE_SAMPLES"] ?? "1000000")
        .split(separator: ",").compactMap { Int($0) }
    say("\n== import --file of FIT files against import --apple-health, the same number of samples ==")
    guard let (generator, hreader) = siblingBinaries() else { return }
    for size in sizes {
        let fit = scratch.appendingPathComponent("garmin-\(size).zip")
        let counts = scratch.appendingPathComponent("garmin-\(size).json")
        _ = try spawnMeasured(generator, ["--format", "fit", "--out", fit.path, "--records", String(size), "--days", "3650",
                                          "--workouts", "0", "--counts", counts.path])
        let samples = (try? JSONParser.parse(Data(contentsOf: counts)))?.object?["samples"]?.int ?? size
        let export = scratch.appendingPathComponent("export-\(samples).zip")
        _ = try spawnMeasured(generator, ["--out", export.path, "--records", String(samples), "--days", "3650", "--clinical", "0"])

        func importInto(_ name: String, _ arguments: [String]) throws -> (seconds: Double, peakKB: Int) {
            let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("\(name)-\(size)")))
            _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
            let token = try service.startSession(.password(password), for: 3600).token
            let run = try spawnMeasured(hreader, ["import"] + arguments + ["--as", "me", "--vault", service.vault.root.path, "--quiet"],
                                        environment: ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"])
            try? FileManager.default.removeItem(at: service.vault.root)
            return (run.seconds, run.peakKB)
        }
        let health = scratch.appendingPathComponent("Health Connect \(size).zip")
        _ = try spawnMeasured(generator, ["--format", "health-connect", "--out", health.path, "--records", String(samples), "--days", "3650"])
        let takeout = scratch.appendingPathComponent("takeout-\(size).zip")
        _ = try spawnMeasured(generator, ["--format", "fitbit", "--out", takeout.path, "--records", String(samples), "--days", "3650"])
        let garmin = try importInto("garmin", ["--file", fit.path])
        let fitbit = try importInto("fitbit", ["--file", takeout.path])
        let android = try importInto("android", ["--file", health.path])
        let apple = try importInto("apple", ["--apple-health", export.path])
        row("  \(samples) samples: FIT zip (3650 daily files)", ms(garmin.seconds),
            String(format: "%.0f samples/s, peak RSS %.0f MB", Double(samples) / garmin.seconds, Double(garmin.peakKB) / 1024))
        row("    Health Connect export (about the same number)", ms(android.seconds),
            String(format: "%.0f samples/s, peak RSS %.0f MB (the database read from a sealed copy)", Double(samples) / android.seconds,
                   Double(android.peakKB) / 1024))
        row("    Fitbit Takeout (about the same number, 18,250 day files)", ms(fitbit.seconds),
            String(format: "%.0f samples/s, peak RSS %.0f MB", Double(samples) / fitbit.seconds, Double(fitbit.peakKB) / 1024))
        try? FileManager.default.removeItem(at: takeout)
        row("    the same number by import --apple-health", ms(apple.seconds),
            String(format: "%.0f samples/s, peak RSS %.0f MB; FIT takes %.2fx its time, Health Connect %.2fx, Fitbit %.2fx", Double(samples) / apple.seconds,
                   Double(apple.peakKB) / 1024, garmin.seconds / apple.seconds, android.seconds / apple.seconds, fitbit.seconds / apple.seconds))
        try? FileManager.default.removeItem(at: health)
        // The reference: fitdecode (PyPI) decoding every message of the same zip's FIT files, nothing stored.
        let packageRoot = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let python = [ProcessInfo.processInfo.environment["HREADER_FITDECODE_PYTHON"],
                      packageRoot.appendingPathComponent(".build/pyenv/bin/python3").path]
            .compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
        if let python {
            let script = """
                import fitdecode, io, sys, zipfile
                n = 0
                def read(data):
                    global n
                    with fitdecode.FitReader(io.BytesIO(data)) as reader:
                        for frame in reader:
                            if isinstance(frame, fitdecode.FitDataMessage): n += 1
                outer = zipfile.ZipFile(sys.argv[1])
                for info in outer.infolist():
                    if info.filename.lower().endswith('.fit'): read(outer.read(info))
                    elif info.filename.lower().endswith('.zip'):
                        inner = zipfile.ZipFile(io.BytesIO(outer.read(info)))
                        for m in inner.infolist():
                            if m.filename.lower().endswith('.fit'): read(inner.read(m))
                print(n)
                """
            do {
                let reference = try spawnMeasured(URL(fileURLWithPath: python), ["-c", script, fit.path])
                row("    fitdecode (reference: decoding only, nothing stored)", ms(reference.seconds),
                    String(format: "peak RSS %.0f MB; hreader's whole import takes %.2fx its time", Double(reference.peakKB) / 1024,
                           garmin.seconds / reference.seconds))
            } catch {
                say("    fitdecode (reference) failed: \(error.localizedDescription)")
            }
        } else {
            say("    (fitdecode not installed: `make bench` installs it into .build/pyenv)")
        }
        try? FileManager.default.removeItem(at: fit)
        try? FileManager.default.removeItem(at: export)
        try? FileManager.default.removeItem(at: counts)
    }
}
