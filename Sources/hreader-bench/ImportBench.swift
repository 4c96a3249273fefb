import Foundation
import HReaderCrypto
import HReaderKit
import HReaderNet
import HReaderRecords
import HReaderStore

/// Import benchmarks: from the sample server over loopback, and `import --file` of a large NDJSON
/// set against bare inserts of the same rows.
func runImportBenchmarks(scratch: URL, password: SecretBytes) async throws {
    let env = ProcessInfo.processInfo.environment
    let patients = Int(env["HREADER_BENCH_SERVER_PATIENTS"] ?? "") ?? 100
    let perPatient = Int(env["HREADER_BENCH_SERVER_ENTRIES"] ?? "") ?? 200
    let ndjsonResources = Int(env["HREADER_BENCH_NDJSON_RESOURCES"] ?? "") ?? 100_000

    func freshVault(_ name: String) throws -> VaultService {
        let service = VaultService(vault: Vault(root: scratch.appendingPathComponent(name)))
        _ = try service.create(password: password, kdf: .scrypt(n: 1024, r: 8, p: 1))
        return service
    }

    // MARK: 4. From the sample server
    say("\n== Import from the sample server on loopback: \(patients) patients x \(perPatient) resources ==")
    if let (server, base) = try startSampleServer(["--patients", String(patients), "--entries-per-patient", String(perPatient)]) {
        defer { server.terminate(); server.waitUntilExit() }
        for kind in [ServerKind.fhir, .rhex] {
            let open = try freshVault("server-\(kind.rawValue)").open(.password(password))
            NetworkStatistics.reset()
            var result: (kind: ServerKind, summary: ImportSummary, resources: Int)?
            let wall = try await asyncSeconds {
                result = try await open.importFromServer(try ServerURL("\(base)/\(kind.rawValue)"), kind: kind, patients: .all, relationship: nil)
            }
            let waited = NetworkStatistics.snapshot
            let stored = result!.summary.inserted
            let patientsDone = result!.summary.patientsCreated
            row("  \(kind.rawValue): \(patientsDone) patients, \(stored) entries", ms(wall),
                String(format: "%.1f patients/s, %.0f resources/s", Double(patientsDone) / wall, Double(result!.resources) / wall))
            row("    waiting on the server (\(waited.requests) requests)", ms(waited.seconds),
                String(format: "hreader itself: %.0f%% of the wall time", 100 * max(0, wall - waited.seconds) / wall))
        }
    }

    // MARK: 5. import --file of a large NDJSON set
    let perNDJSONPatient = 1000
    let ndjsonPatients = max(1, ndjsonResources / perNDJSONPatient)
    say("\n== import --file of NDJSON: \(ndjsonPatients) patients + \(ndjsonPatients * perNDJSONPatient) Observations ==")
    let file = scratch.appendingPathComponent("bulk.ndjson")
    _ = FileManager.default.createFile(atPath: file.path, contents: nil)
    let handle = try FileHandle(forWritingTo: file)
    let loincs = [("8867-4", "Heart rate", "/min"), ("2093-3", "Cholesterol [Mass/volume] in Serum or Plasma", "mg/dL"),
                  ("29463-7", "Body weight", "kg"), ("55423-8", "Number of steps", "/d")]
    for p in 0..<ndjsonPatients {
        var chunk = #"{"resourceType":"Patient","id":"bulk-\#(p)","name":[{"family":"Bulk\#(p)","given":["Test"]}],"gender":"female","birthDate":"1970-01-01"}"# + "\n"
        for k in 0..<perNDJSONPatient {
            let (code, display, unit) = loincs[k % loincs.count]
            let category = code == "2093-3" ? "laboratory" : code == "55423-8" ? "activity" : "vital-signs"
            let day = 1 + k % 28, month = 1 + (k / 28) % 12, year = 2010 + k / 336
            chunk += #"{"resourceType":"Observation","id":"o-\#(p)-\#(k)","status":"final","category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"\#(category)"}]}],"code":{"coding":[{"system":"http://loinc.org","code":"\#(code)","display":"\#(display)"}]},"subject":{"reference":"Patient/bulk-\#(p)"},"effectiveDateTime":"\#(String(format: "%04d-%02d-%02dT08:30:00Z", year, month, day))","valueQuantity":{"value":\#(60 + k % 50),"unit":"\#(unit)","system":"http://unitsofmeasure.org","code":"\#(unit)"}}"# + "\n"
        }
        handle.write(Data(chunk.utf8))
    }
    try handle.close()
    let size = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0

    let importVault = try freshVault("ndjson-import").open(.password(password))
    var summary: ImportSummary?
    let importTime = try seconds { summary = try importVault.importFile(file).summary }
    let resources = summary!.inserted + ndjsonPatients
    row("  hreader import --file (\(size >> 20) MB)", ms(importTime), String(format: "%.0f resources/s", Double(resources) / importTime))

    // The baseline: the same rows, already mapped, inserted bare into a vault (no reading, parsing,
    // mapping or upsert lookups).
    let batch = try FHIRMapper().mapNDJSON(try Data(contentsOf: file))
    let bareVault = try freshVault("ndjson-bare").open(.password(password))
    let bare = try seconds {
        try bareVault.inDatabase { db in
            for record in batch.records {
                try db.transaction {
                    let patient = try PatientRepository(db).add(record.patient.content)
                    for entry in record.entries { try EntryRepository(db).add(patientID: patient.id, content: entry.content) }
                }
            }
        }
    }
    row("  bare inserts of the same rows", ms(bare), String(format: "import costs %.2fx bare inserts", importTime / bare))
}

func asyncSeconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
