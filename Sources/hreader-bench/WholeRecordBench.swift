import Foundation
import HReaderKit
import HReaderStore

/// The views of a whole person over the imported Apple Health vault (issue 41), end to end with a
/// session, beside the import they share the vault with: `summary` with every built-in tile,
/// `patients show`, and `export --types vital_sign --group day` to a file. Time and peak memory of the
/// hreader process, and each time as a fraction of the import's in the same run. Goals: the views
/// <= 100 ms and <= 64 MiB at 10M samples, linear in what they print; the export within 2x the
/// import's time, <= 64 MiB. (The web patient page is measured with the server's load run.) And
/// `share create` of the same person (issue 37: <= 300 ms).
func wholeRecordViews(service: VaultService, token: String, hreader: URL, importSeconds: Double) throws {
    let session = ["HREADER_SESSION": token, "PATH": "/usr/bin:/bin"]
    let root = service.vault.root.path
    let patient = "1"
    for applet in ["org.mitre.hreader.bmi", "org.mitre.hreader.vital-sign.oxygen-saturation", "org.mitre.hreader.vital-sign.respiratory-rate",
                   "org.mitre.hreader.vital-sign.total-cholesterol", "org.mitre.hreader.encounters", "org.mitre.hreader.immunizations",
                   "org.mitre.hreader.functionalstatus", "org.mitre.hreader.tbi", "org.hreader.activity"] {
        _ = try spawnMeasured(hreader, ["applets", "add", applet, "--patient", patient, "--vault", root, "--quiet"], environment: session, memory: false)
    }
    /// Median time and the highest peak of up to 5 runs (one, when a run takes over 2 s).
    func measured(_ arguments: [String]) throws -> (seconds: Double, peakKB: Int) {
        var times: [Double] = [], peak = 0
        repeat {
            let run = try spawnMeasured(hreader, arguments + ["--vault", root], environment: session)
            times.append(run.seconds)
            peak = max(peak, run.peakKB)
        } while times.count < 5 && times[0] < 2
        return (median(times), peak)
    }
    func mb(_ kb: Int) -> Double { Double(kb) / 1024 }
    func ofImport(_ seconds: Double) -> String { String(format: "%.4fx the import's time", seconds / importSeconds) }
    let summary = try measured(["summary", "--patient", patient])
    row("    hreader summary (11 tiles, session)", ms(summary.seconds),
        String(format: "%@; peak RSS %.0f MB (goals at 10M samples: <= 100 ms, <= 64 MiB)", ofImport(summary.seconds), mb(summary.peakKB)))
    let show = try measured(["patients", "show", patient])
    row("    hreader patients show (session)", ms(show.seconds),
        String(format: "%@; peak RSS %.0f MB", ofImport(show.seconds), mb(show.peakKB)))
    let out = service.vault.root.deletingLastPathComponent().appendingPathComponent("export-day.json")
    let export = try spawnMeasured(hreader, ["export", "--patient", patient, "--types", "vital_sign", "--group", "day", "--out", out.path,
                                             "--vault", root, "--quiet"], environment: session)
    let exported = (try? FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) ?? 0
    try? FileManager.default.removeItem(at: out)
    row("    hreader export --types vital_sign --group day", ms(export.seconds),
        String(format: "%.0f MB of Bundle, %.0f MB/s; %.2fx the import's time (goal <= 2x); peak RSS %.0f MB (goal <= 64 MiB)",
               Double(exported) / 1e6, Double(exported) / 1e6 / export.seconds, export.seconds / importSeconds, mb(export.peakKB)))

    // Sharing the person's summary (issue 37): the IPS built, sealed and written for a static host,
    // against building the same IPS alone.
    let shares = service.vault.root.deletingLastPathComponent().appendingPathComponent("shares")
    try FileManager.default.createDirectory(at: shares, withIntermediateDirectories: true)
    let ips = try measured(["summary", "--patient", patient, "--format", "ips"])
    let share = try measured(["share", "create", "--patient", patient, "--out", shares.path, "--base-url", "https://me.example.org/shl", "--quiet"])
    try? FileManager.default.removeItem(at: shares)
    row("    hreader share create --out (session)", ms(share.seconds),
        String(format: "goal <= 300 ms; the IPS alone (summary --format ips) %.1f ms; peak RSS %.0f MB", ips.seconds * 1000, mb(share.peakKB)))
}
