import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// What `import --apple-health` did.
public struct AppleHealthSummary: Sendable {
    public var imports = ImportSummary()
    public var member = ""
    /// Top-level `Record` elements read, by HealthKit type.
    public var recordsByType: [String: Int] = [:]
    public var correlations = 0
    /// Top-level blood-pressure Records that repeat a correlation's children (not imported again).
    public var partOfCorrelation = 0
    public var workouts = 0
    public var activitySummaries = 0
    public var clinicalRecords = 0
    /// HealthKit types without a mapping, kept as observation entries.
    public var unknownTypes: [String: Int] = [:]

    public var jsonValue: JSONValue {
        .object([
            ("member", .string(member)),
            ("records_by_type", .object(JSONObject(sortingKeysOf: recordsByType, JSONValue.int))),
            ("correlations", .int(correlations)), ("records_in_correlations", .int(partOfCorrelation)),
            ("workouts", .int(workouts)), ("activity_summaries", .int(activitySummaries)),
            ("clinical_records", .int(clinicalRecords)),
            ("unknown_types", .object(JSONObject(sortingKeysOf: unknownTypes, JSONValue.int))),
            ("summary", imports.jsonValue),
        ])
    }
}

extension OpenVault {
    /// `hreader import --apple-health FILE (--patient P | --as me)`: streams the export (zip or XML)
    /// into the vault in ONE transaction: a failed file (malformed XML, a truncated or damaged zip, a
    /// zip bomb) commits nothing. Entries update in place by a hash of what each sample says, so
    /// the same export twice adds nothing and a newer export adds only what is new.
    public func importAppleHealth(_ url: URL, into patient: Patient?, progress: (String) -> Void = { _ in }) throws -> AppleHealthSummary {
        try importAppleHealth(url, into: patient, pendingLimit: Self.pendingLimit, progress: progress)
    }

    /// `pendingLimit`: blood-pressure Records that may wait in memory for their correlation (tests
    /// make it small to exercise what happens past it). The export is read with the fast path
    /// (`AppleHealthScanner`); a document it declines is imported again, from the start, by libxml2
    /// alone (the first attempt's transaction is rolled back).
    func importAppleHealth(_ url: URL, into patient: Patient?, pendingLimit: Int, fastPath: Bool = true,
                           progress: (String) -> Void) throws -> AppleHealthSummary {
        try translatingErrors {
            do {
                return try importAppleHealthOnce(url, into: patient, pendingLimit: pendingLimit, fastPath: fastPath, progress: progress)
            } catch is AppleHealthReader.FastPathDeclined {
                return try importAppleHealthOnce(url, into: patient, pendingLimit: pendingLimit, fastPath: false, progress: progress)
            }
        }
    }

    /// One reading of the export in one transaction. Its errors are not translated yet: the caller
    /// must see `FastPathDeclined` as it is.
    private func importAppleHealthOnce(_ url: URL, into patient: Patient?, pendingLimit: Int, fastPath: Bool,
                                       progress: (String) -> Void) throws -> AppleHealthSummary {
        // One transaction on the connection throughout: in the vault's door (errors as they are).
        try exclusively {
            var run = try AppleHealthImportRun(vault: self, url: url, patient: patient, pendingLimit: pendingLimit, fastPath: fastPath)
            return try run.importExport(progress: progress)
        }
    }

    /// Top-level blood-pressure Records that may wait in memory for their correlation (about 200
    /// bytes each: 4 MiB; ten years of twice-daily readings are 15,000).
    static let pendingLimit = 20_000

    /// An export's source as people name it: "Apple Health (Ada's Apple Watch, Ada's iPhone)", the
    /// devices and apps that wrote most of its series first, at most three ("and more" after).
    static func sourceName(devices: [String]) -> String {
        guard !devices.isEmpty else { return "Apple Health" }
        let shown = devices.prefix(3).map { String($0.prefix(60)) }.joined(separator: ", ")
        return "Apple Health (\(shown)\(devices.count > 3 ? " and more" : ""))"
    }

    /// The source under which `--as me` first creates the patient of an export's <Me>, before its
    /// uuid (and so its own source key) exists; earlier versions kept every such sample there.
    static let legacyMeSource = "apple-health:me"

    /// After `patients merge`, a person's export may have been imported under one of the records
    /// merged into them: when the person has no source of their own and exactly one such record
    /// has one, that source and that record are the export's still (the same export adds nothing
    /// the second time).
    static func mergedRecordSource(_ db: Database, person: Patient) throws -> (source: Int64, record: Patient)? {
        guard person.mergedInto == nil,
              try db.scalarInt("SELECT id FROM sources WHERE kind = 'apple-health' AND base_url = ?", ["apple-health:" + person.uuid]) == nil
        else { return nil }
        let found = try db.query("""
            SELECT s.id, p.id FROM sources s JOIN patients p ON s.base_url = 'apple-health:' || p.uuid
            WHERE s.kind = 'apple-health' AND p.merged_into = ?
            """, [person.id]) { ($0.int64(0)!, $0.int64(1)!) }
        guard found.count == 1, let record = try PatientRepository(db).get(id: found[0].1) else { return nil }
        return (found[0].0, record)
    }

    /// The patient an earlier `--as me` import created, if any.
    static func applePatient(_ db: Database) throws -> Patient? {
        let ids = try db.query("""
            SELECT p.id FROM patients p JOIN sources s ON s.id = p.source_id
            WHERE s.kind = 'apple-health' AND p.remote_id = 'me' ORDER BY p.id LIMIT 1
            """) { $0.int64(0)! }
        return try ids.first.flatMap { try PatientRepository(db).get(id: $0) }
    }
}
