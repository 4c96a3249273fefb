// hreader's benchmarks. Each figure is printed beside a baseline measured in the same run, so the
// ratio means something on any machine. Nothing here is asserted; tests never time anything.
import Foundation
import HReaderCrypto
import HReaderKit
import HReaderStore

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func ms(_ s: Double) -> String { String(format: "%8.2f ms", s * 1000) }
func row(_ name: String, _ value: String, _ note: String = "") {
    print(name.padding(toLength: 46, withPad: " ", startingAt: 0) + value + (note.isEmpty ? "" : "   " + note))
}

let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: scratch) }
let password = SecretBytes(utf8: "Bench-Passw0rd")
let entryCount = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_ENTRIES"] ?? "") ?? 100_000

print("hreader benchmarks (release build; SQLCipher \(Database.libraryCipherVersion() ?? "?"), \(ProcessInfo.processInfo.activeProcessorCount) cores)")

// MARK: 1. Open/unlock: KDF versus everything else
print("\n== Unlock: where the time goes (median of 5) ==")
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
print("\n== \(entryCount) entries: encrypted vault vs unkeyed database (same SQLCipher library, same code) ==")
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
let encrypted = try populate(encryptedService.open(.password(password)).db)
let plainDB = try Database.open(path: scratch.appendingPathComponent("plain.db").path, key: nil, create: true)
try Migrator().migrate(plainDB)
let plain = try populate(plainDB)
for (name, e, p) in [("insert (one transaction)", encrypted.insert, plain.insert), ("read all back", encrypted.read, plain.read),
                     ("read one month by index", encrypted.rangeRead, plain.rangeRead)] {
    row("  \(name): encrypted", ms(e), String(format: "%.0f entries/s", Double(entryCount) / e))
    row("  \(name): unkeyed baseline", ms(p), String(format: "encryption costs %.2fx", e / p))
}
print("\nDone.")
