// hreader's benchmarks. Each figure is printed beside a baseline measured in the same run, so the
// ratio means something on any machine. Nothing here is asserted; tests never time anything.
import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderStore

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The process's CPU time (user and system, every thread) spent by `body`, with its wall time:
/// the CPU time is what other work on the machine changes least.
func cpuAndWallSeconds(_ body: () throws -> Void) rethrows -> (cpu: Double, wall: Double) {
    let before = processCPUSeconds()
    let wall = try seconds(body)
    return (processCPUSeconds() - before, wall)
}

/// This process's CPU time so far, user and system, every thread.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func ms(_ s: Double) -> String { String(format: "%8.2f ms", s * 1000) }
/// Prints at once (stdout to a file is block-buffered, and a long run should show its progress).
func row(_ name: String, _ value: String, _ note: String = "") {
    say(name.padding(toLength: 46, withPad: " ", startingAt: 0) + value + (note.isEmpty ? "" : "   " + note))
}
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

// HREADER_BENCH_KEEP=DIR keeps the vaults a run made in DIR, to profile one by hand afterwards.
let keptScratch = ProcessInfo.processInfo.environment["HREADER_BENCH_KEEP"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
let scratch = keptScratch ?? FileManager.default.temporaryDirectory.appendingPathComponent("hreader-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
func removeScratch() { if keptScratch == nil { try? FileManager.default.removeItem(at: scratch) } }
defer { removeScratch() }
let password = SecretBytes(utf8: "Bench-Passw0rd")
let entryCount = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_ENTRIES"] ?? "") ?? 100_000

say("hreader benchmarks (release build; SQLCipher \(Database.libraryCipherVersion() ?? "?"), \(ProcessInfo.processInfo.activeProcessorCount) cores)")

// HREADER_BENCH_ONLY=NAME[,NAME…] runs only those groups (for a quick figure while working on one thing):
// import (sections 4 to 6 and Apple Health), apple-health, backup, json, ccda, page-crypto, documents (a 50 MB PDF,
// HREADER_BENCH_DOCUMENT_MB, and 2,000 notes over HTTP), reconcile, startup, search, health-cards
// (HREADER_BENCH_CARDS, 1,000), papers (OCR and PDF text), providers (HREADER_BENCH_BRANDS), serve (the
// web view and its load run on HREADER_BENCH_SERVE_VAULT, opened with HREADER_SESSION), wearables (FIT,
// Health Connect and Fitbit against Apple Health, HREADER_BENCH_WEARABLE_SAMPLES).
let groups: [String: () async throws -> Void] = [
    "import": {
        try await runImportBenchmarks(scratch: scratch, password: password)
        try runAppleHealthBenchmarks(scratch: scratch, password: password)
    },
    "apple-health": { try runAppleHealthBenchmarks(scratch: scratch, password: password) },
    "backup": { try runBackupBenchmarks(scratch: scratch, password: password) },
    "json": { try runJSONBenchmarks() },
    "ccda": { try runCCDABenchmarks(scratch: scratch, password: password) },
    "documents": {
        try runDocumentsBenchmarks(scratch: scratch, password: password)
        try runDocumentImportBenchmark(scratch: scratch, password: password)
    },
    "reconcile": { try runReconcileBenchmarks(scratch: scratch, password: password) },
    "startup": { try runStartupBenchmarks() },
    "page-crypto": { try runPageCryptoBenchmarks(scratch: scratch) },
    "search": { try runSearchBenchmarks(scratch: scratch, password: password) },
    "health-cards": { try runHealthCardBenchmarks(scratch: scratch, password: password) },
    "papers": { try runPapersBenchmarks(scratch: scratch, password: password) },
    "providers": { try runProvidersBenchmarks(scratch: scratch) },
    "serve": { try runServeOnGivenVault() },
    "wearables": { try runWearablesBenchmarks(scratch: scratch, password: password) },
]
if let only = ProcessInfo.processInfo.environment["HREADER_BENCH_ONLY"], !only.isEmpty {
    let names = only.split(separator: ",").map(String.init)
    if let unknown = names.first(where: { groups[$0] == nil }) {
        say("HREADER_BENCH_ONLY: names from \(groups.keys.sorted().joined(separator: ", ")); got '\(unknown)'")
        exit(2)
    }
    for name in names { try await groups[name]!() }
    say("\nDone.")
    removeScratch()
    exit(0)
}

// MARK: 1. Open/unlock: KDF versus everything else
say("\n== Unlock: where the time goes (median of 5) ==")
for (name, kdf) in [("scrypt N=2^17 r=8 p=1", KDFParameters.scryptDefault), ("PBKDF2-SHA256 600k", KDFParameters.pbkdf2Default)] {
    let service = VaultService(vault: Vault(root: scratch.appendingPathComponent("unlock-\(kdf.name)")))
    _ = try service.create(password: password, kdf: kdf)
    var kdfTimes: [Double] = [], openTimes: [Double] = []
    let salt = try SecureRandom.bytes(16)
    for _ in 0..<5 {
        kdfTimes.append(try seconds { _ = try KDF.derive(kdf, secret: password, salt: salt) })
        openTimes.append(try seconds { _ = try service.open(.password(password)).counts() })
    }
    let token = try service.startSession(.password(password), for: 600).token
    var sessionTimes: [Double] = []
    for _ in 0..<5 { sessionTimes.append(try seconds { _ = try service.open(.session(token)).counts() }) }
    let rest = median(openTimes) - median(kdfTimes)
    row("  \(name): whole open (password)", ms(median(openTimes)))
    row("    of which the KDF alone", ms(median(kdfTimes)), String(format: "%.0f%% of the open", 100 * median(kdfTimes) / median(openTimes)))
    row("    everything else (target <= 20 ms)", ms(max(rest, 0)))
    row("  open with an unlock session (no KDF)", ms(median(sessionTimes)), String(format: "%.1fx faster than with the password", median(openTimes) / median(sessionTimes)))
}

// MARK: 2. The cost of encryption: encrypted vault versus an unkeyed database, same library, same code
say("\n== \(entryCount) entries: encrypted vault vs unkeyed database (same SQLCipher library, same code) ==")
func populate(_ db: Database) throws -> (insert: Double, read: Double, rangeRead: Double) {
    let patients = PatientRepository(db), entries = EntryRepository(db)
    let patient = try patients.add(NewPatient(firstName: "Bench", lastName: "Patient"))
    let start: Int64 = 1_262_304_000  // 2010-01-01
    let insert = try seconds {
        try db.transaction {
            for i in 0..<entryCount {
                let t = start + Int64(i) * 3_153  // ten years
                try entries.add(patientID: patient.id, content: EntryContent(
                    type: i % 3 == 0 ? .vitalSign : .result, description: i % 2 == 0 ? "Heart rate" : "Glucose",
                    date: ClinicalTime(epoch: t), codes: ["LOINC": ["8867-4"]], valueNumber: Double(60 + i % 40), unit: "/min"))
            }
        }
    }
    var count = 0
    let read = try seconds { count = try entries.list(patientID: patient.id).count }
    precondition(count == entryCount)
    let rangeRead = try seconds { _ = try entries.list(patientID: patient.id, from: start + 86_400 * 365 * 5, to: start + 86_400 * (365 * 5 + 30)) }
    return (insert, read, rangeRead)
}
let encryptedService = VaultService(vault: Vault(root: scratch.appendingPathComponent("encrypted")))
_ = try encryptedService.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
let encrypted = try encryptedService.open(.password(password)).inDatabase { try populate($0) }
let plainDB = try Database.open(path: scratch.appendingPathComponent("plain.db").path, key: nil, create: true)
try Migrator().migrate(plainDB)
let plain = try populate(plainDB)
for (name, e, p) in [("insert (one transaction)", encrypted.insert, plain.insert), ("read all back", encrypted.read, plain.read),
                     ("read one month by index", encrypted.rangeRead, plain.rangeRead)] {
    row("  \(name): encrypted", ms(e), String(format: "%.0f entries/s", Double(entryCount) / e))
    row("  \(name): unkeyed baseline", ms(p), String(format: "encryption costs %.2fx", e / p))
}
// MARK: 3. Timeline pages over a lifetime of data
let timelineCount = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_TIMELINE_ENTRIES"] ?? "") ?? 1_000_000
say("\n== Timeline: \(timelineCount) entries for one patient over ten years ==")
let timelineService = VaultService(vault: Vault(root: scratch.appendingPathComponent("timeline")))
_ = try timelineService.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
let timelineVault = try timelineService.open(.password(password))
let tenYearsAgo: Int64 = 1_420_070_400  // 2015-01-01
let tenYears: Int64 = 10 * 365 * 86_400
let patient = try timelineVault.addPatient(NewPatient(firstName: "Lifetime", lastName: "Patient"))
let types: [EntryType] = [.vitalSign, .vitalSign, .vitalSign, .result, .result, .medication, .condition, .encounter, .activity, .symptom]
let vitalNames = ["Heart Rate", "Systolic Blood Pressure", "Diastolic Blood Pressure", "Body Weight", "Respiratory Rate"]
let generation = try seconds {
    try timelineVault.inDatabase { tdb in try tdb.transaction {
        let entries = EntryRepository(tdb)
        var rng = SystemRandomNumberGenerator()
        for i in 0..<timelineCount {
            let t = tenYearsAgo + Int64.random(in: 0..<tenYears, using: &rng)
            let type = types[i % types.count]
            let description = type == .vitalSign ? vitalNames[i % vitalNames.count] : "\(type.rawValue) \(i % 50)"
            try entries.insert(patientID: patient.id, content: EntryContent(
                type: type, description: description, date: ClinicalTime(epoch: t), valueNumber: Double(i % 120), unit: "u"),
                remoteID: "bench-\(i)")
        }
    } }
}
row("  generated in", ms(generation), String(format: "%.0f entries/s", Double(timelineCount) / generation))
let tokenForCLI = try timelineService.startSession(.password(password), for: 3600).token
let hreaderBinary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hreader")

/// The bare indexed SELECT of the same rows: the floor any timeline answer stands on.
@MainActor func bareSelect(from: Int64, to: Int64) throws -> Int {
    try timelineVault.inDatabase { tdb in try bareSelect(from: from, to: to, on: tdb) }
}

@MainActor func bareSelect(from: Int64, to: Int64, on tdb: Database) throws -> Int {
    let statement = try tdb.prepare("""
        SELECT id, coalesce(date_epoch, start_epoch, end_epoch), value_number FROM entries WHERE id IN (
            SELECT id FROM entries INDEXED BY entries_patient_date WHERE patient_id = ? AND date_epoch BETWEEN ? AND ?
            UNION SELECT id FROM entries INDEXED BY entries_patient_start WHERE patient_id = ? AND start_epoch BETWEEN ? AND ?
            UNION SELECT id FROM entries INDEXED BY entries_patient_end WHERE patient_id = ? AND end_epoch BETWEEN ? AND ?)
        """)
    try statement.bind([patient.id, from, to, patient.id, from, to, patient.id, from, to])
    var n = 0
    while try statement.step() { n += 1 }
    return n
}

/// A page written compact, as the CLI and the web write it (to nowhere).
@MainActor func compactPage(_ range: TimelineRange) throws {
    var out = JSONByteWriter { _ in }
    try timelineVault.writeTimeline(patient: patient, query: TimelineQuery(range: range), to: &out)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded(.up)))]
}

for page in TimelinePage.allCases {
    let runs = page == .decade ? 5 : (page == .year ? 10 : 40)
    var latencies: [Double] = [], bare: [Double] = [], rows = 0
    var rng = SystemRandomNumberGenerator()
    for _ in 0..<runs {
        let at = ClinicalTime(epoch: tenYearsAgo + (page == .decade ? tenYears : Int64.random(in: 400 * 86_400..<tenYears, using: &rng)))
        let range = TimelineRange.page(page, at: at)
        latencies.append(try seconds { try compactPage(range) })
        bare.append(try seconds { rows = try bareSelect(from: range.start, to: range.end) })
    }
    row("  \(page.rawValue) page (~\(rows) rows): median", ms(median(latencies)), String(format: "p99 %.2f ms; bare indexed SELECT %.2f ms (%.1fx)",
        percentile(latencies, 0.99) * 1000, median(bare) * 1000, median(latencies) / max(median(bare), 1e-9)))
    if FileManager.default.isExecutableFile(atPath: hreaderBinary.path) {
        var wall: [Double] = []
        for _ in 0..<(page == .decade ? 3 : 5) {
            wall.append(try spawnMeasured(hreaderBinary, ["timeline", "--vault", timelineService.vault.root.path, "--patient", String(patient.id),
                                                          "--page", page.rawValue, "--at", RFC3339.utc(tenYearsAgo + tenYears)],
                                          environment: ["HREADER_SESSION": tokenForCLI, "PATH": "/usr/bin:/bin"], memory: false).seconds)
        }
        row("    end to end: hreader timeline (session)", ms(median(wall)))
    }
}

try runServeBenchmarks(hreader: hreaderBinary, vault: timelineService.vault.root, session: tokenForCLI, patient: patient,
                       end: tenYearsAgo + tenYears) { range in
    try seconds { try compactPage(range) }
}

try await runImportBenchmarks(scratch: scratch, password: password)
try runAppleHealthBenchmarks(scratch: scratch, password: password)
try runWearablesBenchmarks(scratch: scratch, password: password)
try runCCDABenchmarks(scratch: scratch, password: password)
try runReconcileBenchmarks(scratch: scratch, password: password)
try runStartupBenchmarks()
try runPageCryptoBenchmarks(scratch: scratch)
try runSearchBenchmarks(scratch: scratch, password: password)
try runHealthCardBenchmarks(scratch: scratch, password: password)
try runProvidersBenchmarks(scratch: scratch)
try runBackupBenchmarks(scratch: scratch, password: password)
try runDocumentsBenchmarks(scratch: scratch, password: password)
try runDocumentImportBenchmark(scratch: scratch, password: password)
try runPapersBenchmarks(scratch: scratch, password: password)
try runJSONBenchmarks()

say("\nDone.")
