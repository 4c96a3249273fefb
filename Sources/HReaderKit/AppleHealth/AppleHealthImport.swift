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
        let source = try AppleHealthExportSource(url: url)
        var summary = AppleHealthSummary()
        // The entries (not samples) that changed: only the groups they can change are recomputed.
        var touched: Set<Int64> = []
        summary.member = source.xmlName
        let mapper = AppleHealthMapper()
        let now = RFC3339.utc(Int64(Date().timeIntervalSince1970))
        let name = url.lastPathComponent

        // The import is one transaction: a page cache of 6 MiB (2 MiB by default) keeps the b-trees'
        // paths in memory instead of spilling them to the WAL and reading them back again and again
        // (measured at 1M records: 4 MiB is 8% slower, 8 MiB no faster and 2 MB more resident).
        try db.withPageCache(kibibytes: 6144) { try db.transaction {
            let sources = SourceRepository(db)
            // With --patient the samples belong to that patient; with --as me to the patient the
            // export's <Me> describes (created once, found again by the next export). Either way the
            // source is keyed by that patient's uuid, so `--as me` and `--patient <me>` are one
            // source and the same export adds nothing the second time, however the patient is named.
            var target = try patient ?? Self.applePatient(db)
            var keyedSource: Int64?
            func owner(_ me: (birthDate: String?, gender: String?)? = nil) throws -> Patient {
                if let target, keyedSource != nil { return target }
                if target == nil {
                    var new = NewPatient(firstName: "Me", lastName: "(Apple Health)")
                    new.relationship = .me
                    new.birthDate = me?.birthDate
                    new.gender = me?.gender
                    let creator = try sources.findOrCreate(kind: .appleHealth, baseURL: Self.legacyMeSource, displayName: "Apple Health", now: now)
                    target = try patients.upsert(sourceID: creator, remoteID: "me", new).0
                    summary.imports.patientsCreated += 1
                } else if patient == nil {
                    summary.imports.patientsUnchanged += 1
                }
                let owner = target!
                // Vaults written before this rule keep the me patient's samples under `apple-health:me`:
                // that source becomes the patient's own.
                try db.execute("""
                    UPDATE sources SET base_url = ? WHERE id = ? AND kind = 'apple-health' AND base_url = ?
                    AND NOT EXISTS (SELECT 1 FROM sources WHERE kind = 'apple-health' AND base_url = ?)
                    """, ["apple-health:" + owner.uuid, owner.sourceID, Self.legacyMeSource, "apple-health:" + owner.uuid])
                // The export of a record merged into this person stays that record's: its source, and the
                // record its entries were stated in (so they are found again, not added twice).
                if let (source, record) = try Self.mergedRecordSource(db, person: owner) {
                    keyedSource = source
                    target = record
                    return record
                }
                keyedSource = try sources.findOrCreate(kind: .appleHealth, baseURL: "apple-health:" + owner.uuid,
                                                       displayName: "Apple Health", now: now)
                return owner
            }
            func sourceID() throws -> Int64 {
                _ = try owner()
                return keyedSource!
            }

            // Top-level blood-pressure Records repeat the children of the correlations, which real
            // exports write after all Records. They wait in memory (their samples' form, a few
            // hundred bytes each) until the correlations come: one that no correlation repeats is
            // stored at the end. Past `pendingLimit` waiting, they are stored at once and removed
            // again, in this same transaction, when their correlation turns up (memory then holds
            // remote ids only).
            // Remote ids are kept as the hashes they write (`HealthKitText.remoteID(hash:)`).
            var pendingBloodPressure = PendingBloodPressure(limit: pendingLimit)
            var looseBloodPressure: [UInt64: UpsertOutcome] = [:]                         // remote id → how it was stored
            var correlated: Set<UInt64> = []                                              // correlation children
            var clinicalPaths: [String] = []
            var elements = 0

            func count(_ outcome: UpsertOutcome, _ type: EntryType, by delta: Int) {
                switch outcome {
                case .inserted: summary.imports.inserted += delta
                case .updated: summary.imports.updated += delta
                case .unchanged: summary.imports.unchanged += delta
                }
                summary.imports.byType[type.rawValue, default: 0] += delta
                if summary.imports.byType[type.rawValue] == 0 { summary.imports.byType[type.rawValue] = nil }
            }

            @discardableResult
            func store(_ result: AppleHealthMapper.Result, unknownType: String? = nil) throws -> UpsertOutcome? {
                switch result {
                case let .skip(skip):
                    summary.imports.skipped[skip.reason, default: 0] += 1
                    return nil
                case let .entry(entry):
                    let patient = try owner()
                    let (outcome, id) = try entries.upsertEntry(patientID: patient.personID, recordID: patient.id, sourceID: try sourceID(),
                                                                remoteID: entry.remoteID, content: entry.content)
                    count(outcome, entry.content.type, by: 1)
                    // (Also an entry that is no longer of a kind grouped: it leaves its fact.)
                    if outcome != .unchanged { touched.insert(id) }
                    if let unknownType { summary.unknownTypes[unknownType, default: 0] += 1 }
                    return outcome
                }
            }

            // Records (but blood pressure, which a correlation may take back) go to the samples
            // tables (migration 3); one that does not fit their columns exactly is an entry.
            var samples: SampleWriter?
            // Samples of one type come together: they are counted by runs, not hashed one by one.
            struct Run {
                var type: String
                var strings: SampleSeriesStrings
                var known: Bool
                var entryType: EntryType
                var inserted = 0, updated = 0, unchanged = 0
                var count: Int { inserted + updated + unchanged }
            }
            var run: Run?
            func flushRun() {
                guard let r = run else { return }
                summary.recordsByType[r.type, default: 0] += r.count
                if !r.known { summary.unknownTypes[r.type, default: 0] += r.count }
                for (outcome, n) in [(UpsertOutcome.inserted, r.inserted), (.updated, r.updated), (.unchanged, r.unchanged)] where n > 0 {
                    count(outcome, r.entryType, by: n)
                }
                run = nil
            }
            func storeSample(_ record: SampleRecord) throws {
                if samples == nil { samples = try SampleWriter(db, patientID: try owner().personID, recordID: try owner().id, sourceID: try sourceID()) }
                let (outcome, entryType) = try samples!.add(record, mapping: AppleHealthMapper.seriesMapping)
                if let r = run, r.strings === record.strings, r.entryType == entryType {
                    // the same series as the sample before: the same run
                } else if let r = run, r.type == record.type, r.entryType == entryType {
                    run!.strings = record.strings
                } else {
                    flushRun()
                    run = Run(type: record.type, strings: record.strings, known: AppleHealthMapper.isKnown(record.type), entryType: entryType)
                }
                switch outcome {
                case .inserted: run!.inserted += 1
                case .updated: run!.updated += 1
                case .unchanged: run!.unchanged += 1
                }
            }
            func storeLooseBloodPressure(_ element: AppleHealthElement, id: UInt64) throws {
                if let outcome = try store(mapper.record(element)) { looseBloodPressure[id] = outcome }
            }
            func storePendingBloodPressure() throws {
                for (key, element) in pendingBloodPressure.drain() { try storeLooseBloodPressure(element, id: key) }
            }

            do {
                try source.withXML { bytes in
                    try AppleHealthReader(fastPath: fastPath, source: bytes).read(concurrently: true, prepare: PreparedElement.init) { item in
                        elements += 1
                        if elements % 10_000 == 0 { progress("\(elements) elements") }
                        let prepared: PreparedElement.Other
                        switch item {
                        case .sample(let sample):
                            try storeSample(sample)
                            return
                        case .other(let other):
                            prepared = other
                        }
                        let element = prepared.element
                        switch element.kind {
                        case .me:
                            if patient == nil { _ = try owner(AppleHealthMapper.me(element)) }
                        case .exportDate:
                            break
                        case .record:
                            if let id = prepared.bloodPressureID {
                                summary.recordsByType[element.attribute("type") ?? "", default: 0] += 1
                                if correlated.contains(id) {
                                    summary.partOfCorrelation += 1
                                } else if !pendingBloodPressure.add(element, key: id) {
                                    try storeLooseBloodPressure(element, id: id)
                                }
                            } else if let mapped = prepared.mapped {
                                let type = element.attribute("type") ?? ""
                                summary.recordsByType[type, default: 0] += 1
                                try store(mapped, unknownType: AppleHealthMapper.isKnown(type) ? nil : type)
                            }
                        case .correlation:
                            summary.correlations += 1
                            for id in prepared.childIDs {
                                correlated.insert(id)
                                if pendingBloodPressure.remove(id) {
                                    summary.partOfCorrelation += 1
                                } else if let outcome = looseBloodPressure.removeValue(forKey: id) {
                                    try entries.removeFromSource(recordID: try owner().id, sourceID: try sourceID(),
                                                                 remoteID: HealthKitText.remoteID(hash: id))
                                    count(outcome, .vitalSign, by: -1)
                                    summary.partOfCorrelation += 1
                                }
                            }
                            let type = element.attribute("type") ?? ""
                            if let mapped = prepared.mapped { try store(mapped, unknownType: AppleHealthMapper.isKnown(type) ? nil : type) }
                        case .workout:
                            summary.workouts += 1
                            if let mapped = prepared.mapped { try store(mapped) }
                        case .activitySummary:
                            summary.activitySummaries += 1
                            if let mapped = prepared.mapped { try store(mapped) }
                        case .clinicalRecord:
                            summary.clinicalRecords += 1
                            if let path = element.attribute("resourceFilePath") { clinicalPaths.append(path) } else {
                                summary.imports.skipped["a ClinicalRecord without a resourceFilePath", default: 0] += 1
                            }
                        }
                    }
                }
                // Blood pressure no correlation repeated.
                try storePendingBloodPressure()
            } catch let error as RecordsError {
                throw HReaderError.badInput("\(name): \(error.description)")
            }

            // Clinical records: the FHIR resources they point to, through the FHIR mapping.
            for path in clinicalPaths {
                guard let data = try source.clinicalRecord(path) else {
                    summary.imports.skipped["a ClinicalRecord whose file is missing from the export", default: 0] += 1
                    continue
                }
                do {
                    let batch = try FHIRMapper().mapBundle(data)
                    let mapped = batch.records.flatMap(\.entries) + batch.unattached.map(\.entry)
                    for type in mapped.compactMap(\.unmappedType) { summary.imports.keptUnmapped[type, default: 0] += 1 }
                    for skip in batch.allSkipped { summary.imports.skipped[skip.reason, default: 0] += 1 }
                    for entry in mapped { try store(.entry(MappedEntry(remoteID: "clinical:" + entry.remoteID, content: entry.content))) }
                } catch let error as RecordsError {
                    summary.imports.skipped["a clinical record that is not FHIR JSON (\(error.description))", default: 0] += 1
                }
            }
            flushRun()
            try samples?.finish()
            let owner = try owner()
            if !summary.imports.patientIDs.contains(owner.personID) { summary.imports.patientIDs.append(owner.personID) }
            try FactGrouping(db).regroup(patientID: owner.personID, touched: touched)
            try sources.touchLastSync(id: try sourceID(), now: now)
            try sources.setDisplayName(id: try sourceID(), Self.sourceName(devices: try db.query("""
                SELECT source_name FROM sample_series WHERE source_id = ? AND source_name <> ''
                GROUP BY source_name ORDER BY count(*) DESC, source_name LIMIT 4
                """, [try sourceID()]) { $0.string(0)! }), now: now)
            try audit.record("import.apple-health", subject: owner.uuid,
                             detail: "\(summary.imports.inserted) new, \(summary.imports.updated) updated, \(summary.imports.unchanged) unchanged entries")
        } }
        return summary
    }

    /// Top-level blood-pressure Records that may wait in memory for their correlation (about 200
    /// bytes each: 4 MiB; ten years of twice-daily readings are 15,000).
    static let pendingLimit = 20_000

    /// Top-level blood-pressure Records waiting for their correlation, kept small: their samples'
    /// form in arrival order, and an index by the remote id's hash.
    struct PendingBloodPressure {
        private var samples: [SampleRecord] = []
        private var lines: [Int32] = []
        private var keys: [UInt64] = []
        private var index: [UInt64: Int32] = [:]
        let limit: Int

        init(limit: Int) { self.limit = limit }

        /// Keeps a Record to wait; false when it cannot (the limit reached, or not in the samples' form).
        mutating func add(_ element: AppleHealthElement, key: UInt64) -> Bool {
            if index[key] != nil { return true }   // the same reading twice: one waits
            guard samples.count < limit, let sample = element.sample else { return false }
            index[key] = Int32(samples.count)
            samples.append(sample)
            lines.append(Int32(clamping: element.line))
            keys.append(key)
            return true
        }

        /// Whether the Record was waiting (it no longer is).
        mutating func remove(_ key: UInt64) -> Bool { index.removeValue(forKey: key) != nil }

        /// The Records still waiting, in arrival order; none wait afterwards.
        mutating func drain() -> [(key: UInt64, element: AppleHealthElement)] {
            let waiting = keys.indices.filter { index[keys[$0]] == Int32($0) }
                .map { (key: keys[$0], element: AppleHealthElement(sample: samples[$0], line: Int(lines[$0]))) }
            self = PendingBloodPressure(limit: limit)
            return waiting
        }
    }

    /// An export's element with what the parsing thread made of it already (the mapping is pure,
    /// and the thread that writes is the import's bottleneck).
    enum PreparedElement: Sendable {
        /// A Record that fits the samples' columns (not blood pressure, which a correlation may repeat).
        case sample(SampleRecord)
        /// Anything else (a few in a hundred): boxed, so the batches of samples stay small.
        indirect case other(Other)

        struct Other: Sendable {
            var element: AppleHealthElement
            /// A top-level blood-pressure Record's remote id (its hash).
            var bloodPressureID: UInt64?
            /// A correlation's children's remote ids (their hashes).
            var childIDs: [UInt64] = []
            /// What the element becomes as an entry, when it becomes one.
            var mapped: AppleHealthMapper.Result?
        }

        init(_ element: AppleHealthElement) {
            // Most elements: a sample, handed on as it is.
            if let sample = element.sample, !Self.isBloodPressure(sample.type) {
                self = .sample(sample)
                return
            }
            var other = Other(element: element)
            let mapper = AppleHealthMapper()
            switch element.kind {
            case .record:
                if Self.isBloodPressure(element.attribute("type") ?? "") {
                    other.bloodPressureID = AppleHealthMapper.remoteIDHash(element)
                } else if let sample = SampleRecord(attributes: element.attributes, metadata: element.metadata) {
                    self = .sample(sample)
                    return
                } else {
                    other.mapped = mapper.record(element)
                }
            case .correlation:
                other.childIDs = element.children.map(AppleHealthMapper.remoteIDHash)
                other.mapped = mapper.correlation(element)
            case .workout:
                other.mapped = mapper.workout(element)
            case .activitySummary:
                other.mapped = mapper.activitySummary(element)
            case .me, .exportDate, .clinicalRecord:
                break
            }
            self = .other(other)
        }

        static func isBloodPressure(_ type: String) -> Bool {
            // Lengths first: this runs for every sample.
            switch type.utf8.count {
            case 45: type == "HKQuantityTypeIdentifierBloodPressureSystolic"
            case 46: type == "HKQuantityTypeIdentifierBloodPressureDiastolic"
            default: false
            }
        }
    }

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
