import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// One reading of an Apple Health export into the vault, in one transaction
/// (`OpenVault.importAppleHealth` makes one, and a second when the fast path declines the document).
/// Its properties are what the export's elements change as they stream by: the patient and source
/// the samples are stored under, the run of samples being counted, the blood-pressure Records
/// waiting for their correlation, the entries touched and the summary.
///
///     var run = try AppleHealthImportRun(vault: vault, url: export, patient: nil, pendingLimit: 20_000, fastPath: true)
///     let summary = try run.importExport { print($0) }
///
/// A value with mutating methods rather than a class: its state is reached on the writing thread
/// only, and a value's exclusive access is checked by the compiler, not on each sample at run time.
struct AppleHealthImportRun {
    private let vault: OpenVault
    private var db: Database { vault.db }
    private let source: AppleHealthExportSource
    /// `--patient`'s patient; nil with `--as me`.
    private let patient: Patient?
    private let fastPath: Bool
    private let name: String
    private let now: String
    private let mapper = AppleHealthMapper()
    private let sources: SourceRepository

    private var summary = AppleHealthSummary()
    /// The entries (not samples) that changed: only the groups they can change are recomputed.
    private var touched: Set<Int64> = []
    /// Whom the samples belong to, once known (see `owner`), and the source they are keyed by.
    private var target: Patient?
    private var keyedSource: Int64?

    // Top-level blood-pressure Records repeat the children of the correlations, which real
    // exports write after all Records. They wait in memory (their samples' form, a few
    // hundred bytes each) until the correlations come: one that no correlation repeats is
    // stored at the end. Past `pendingLimit` waiting, they are stored at once and removed
    // again, in this same transaction, when their correlation turns up (memory then holds
    // remote ids only).
    // Remote ids are kept as the hashes they write (`HealthKitText.remoteID(hash:)`).
    private var pendingBloodPressure: PendingBloodPressure
    private var looseBloodPressure: [UInt64: UpsertOutcome] = [:]                         // remote id → how it was stored
    private var correlated: Set<UInt64> = []                                              // correlation children
    private var clinicalPaths: [String] = []
    private var elements = 0

    // Records (but blood pressure, which a correlation may take back) go to the samples
    // tables (migration 3); one that does not fit their columns exactly is an entry.
    private var samples: SampleWriter?
    /// The samples of one type read last: they come together, so they are counted by runs, not
    /// hashed one by one.
    private var sampleRun: SampleRun?

    private struct SampleRun {
        var type: String
        var strings: SampleSeriesStrings
        var known: Bool
        var entryType: EntryType
        var inserted = 0, updated = 0, unchanged = 0
        var count: Int { inserted + updated + unchanged }
    }

    /// Opens the export (a zip or its XML); nothing is read or written yet.
    init(vault: OpenVault, url: URL, patient: Patient?, pendingLimit: Int, fastPath: Bool) throws {
        self.vault = vault
        source = try AppleHealthExportSource(url: url)
        summary.member = source.xmlName
        now = RFC3339.utc(Int64(Date().timeIntervalSince1970))
        name = url.lastPathComponent
        self.patient = patient
        self.fastPath = fastPath
        sources = SourceRepository(vault.db)
        pendingBloodPressure = PendingBloodPressure(limit: pendingLimit)
    }

    /// Reads the whole export into the vault in one transaction, and says what it did. Its errors
    /// are not translated: the caller must see `AppleHealthReader.FastPathDeclined` as it is.
    mutating func importExport(progress: (String) -> Void) throws -> AppleHealthSummary {
        let db = self.db
        // The import is one transaction: a page cache of 6 MiB (2 MiB by default) keeps the b-trees'
        // paths in memory instead of spilling them to the WAL and reading them back again and again
        // (measured at 1M records: 4 MiB is 8% slower, 8 MiB no faster and 2 MB more resident).
        try db.withPageCache(kibibytes: 6144) { try db.transaction {
            // With --patient the samples belong to that patient; with --as me to the patient the
            // export's <Me> describes (created once, found again by the next export).
            target = try patient ?? OpenVault.applePatient(db)
            try readElements(progress: progress)
            try storeClinicalRecords()
            try finish()
        } }
        return summary
    }

    // MARK: The owner and the source

    /// The patient the samples are stored under, created from the export's <Me> (`me`) if need be.
    /// Either way the source is keyed by that patient's uuid, so `--as me` and `--patient <me>` are
    /// one source and the same export adds nothing the second time, however the patient is named.
    private mutating func owner(_ me: (birthDate: String?, gender: String?)? = nil) throws -> Patient {
        if let target, keyedSource != nil { return target }
        if target == nil {
            var new = NewPatient(firstName: "Me", lastName: "(Apple Health)")
            new.relationship = .me
            new.birthDate = me?.birthDate
            new.gender = me?.gender
            let creator = try sources.findOrCreate(kind: .appleHealth, baseURL: OpenVault.legacyMeSource, displayName: "Apple Health", now: now)
            target = try vault.patients.upsert(sourceID: creator, remoteID: "me", new).0
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
            """, ["apple-health:" + owner.uuid, owner.sourceID, OpenVault.legacyMeSource, "apple-health:" + owner.uuid])
        // The export of a record merged into this person stays that record's: its source, and the
        // record its entries were stated in (so they are found again, not added twice).
        if let (source, record) = try OpenVault.mergedRecordSource(db, person: owner) {
            keyedSource = source
            target = record
            return record
        }
        keyedSource = try sources.findOrCreate(kind: .appleHealth, baseURL: "apple-health:" + owner.uuid,
                                               displayName: "Apple Health", now: now)
        return owner
    }

    private mutating func sourceID() throws -> Int64 {
        _ = try owner()
        return keyedSource!
    }

    // MARK: Reading the export

    /// The export's elements, in the order they come; then the blood pressure no correlation repeated.
    private mutating func readElements(progress: (String) -> Void) throws {
        let source = self.source, fastPath = self.fastPath
        let routes = source.workoutRoutes()
        do {
            try source.withXML { bytes in
                try AppleHealthReader(fastPath: fastPath, source: bytes).read(concurrently: true, prepare: { PreparedElement($0, routes: routes) }) { item in
                    try handle(item, progress: progress)
                }
            }
            try storePendingBloodPressure()
        } catch let error as RecordsError {
            throw HReaderError.badInput("\(name): \(error.description)")
        }
    }

    private mutating func handle(_ item: PreparedElement, progress: (String) -> Void) throws {
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
                    let recordID = try owner().id, sourceID = try self.sourceID()
                    try vault.entries.removeFromSource(recordID: recordID, sourceID: sourceID, remoteID: HealthKitText.remoteID(hash: id))
                    count(outcome, .vitalSign, by: -1)
                    summary.partOfCorrelation += 1
                }
            }
            let type = element.attribute("type") ?? ""
            if let mapped = prepared.mapped { try store(mapped, unknownType: AppleHealthMapper.isKnown(type) ? nil : type) }
        case .workout:
            summary.workouts += 1
            for problem in prepared.routeProblems { summary.imports.skipped[problem.reason, default: 0] += 1 }
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

    // MARK: Storing

    private mutating func count(_ outcome: UpsertOutcome, _ type: EntryType, by delta: Int) {
        switch outcome {
        case .inserted: summary.imports.inserted += delta
        case .updated: summary.imports.updated += delta
        case .unchanged: summary.imports.unchanged += delta
        }
        summary.imports.byType[type.rawValue, default: 0] += delta
        if summary.imports.byType[type.rawValue] == 0 { summary.imports.byType[type.rawValue] = nil }
    }

    /// An element mapped to an entry, stored as one (or counted as skipped).
    @discardableResult
    private mutating func store(_ result: AppleHealthMapper.Result, unknownType: String? = nil) throws -> UpsertOutcome? {
        switch result {
        case let .skip(skip):
            summary.imports.skipped[skip.reason, default: 0] += 1
            return nil
        case let .entry(entry):
            let owner = try self.owner(), sourceID = try self.sourceID()
            let (outcome, id) = try vault.entries.upsertEntry(patientID: owner.personID, recordID: owner.id, sourceID: sourceID,
                                                              remoteID: entry.remoteID, content: entry.content)
            count(outcome, entry.content.type, by: 1)
            // (Also an entry that is no longer of a kind grouped: it leaves its fact.)
            if outcome != .unchanged { touched.insert(id) }
            if let unknownType { summary.unknownTypes[unknownType, default: 0] += 1 }
            return outcome
        }
    }

    /// Counts the run of samples read last into the summary.
    private mutating func flushSampleRun() {
        guard let r = sampleRun else { return }
        summary.recordsByType[r.type, default: 0] += r.count
        if !r.known { summary.unknownTypes[r.type, default: 0] += r.count }
        for (outcome, n) in [(UpsertOutcome.inserted, r.inserted), (.updated, r.updated), (.unchanged, r.unchanged)] where n > 0 {
            count(outcome, r.entryType, by: n)
        }
        sampleRun = nil
    }

    private mutating func storeSample(_ record: SampleRecord) throws {
        if samples == nil {
            let owner = try self.owner(), sourceID = try self.sourceID()
            samples = try SampleWriter(db, patientID: owner.personID, recordID: owner.id, sourceID: sourceID)
        }
        let (outcome, entryType) = try samples!.add(record, mapping: AppleHealthMapper.seriesMapping)
        if let r = sampleRun, r.strings === record.strings, r.entryType == entryType {
            // the same series as the sample before: the same run
        } else if let r = sampleRun, r.type == record.type, r.entryType == entryType {
            sampleRun!.strings = record.strings
        } else {
            flushSampleRun()
            sampleRun = SampleRun(type: record.type, strings: record.strings, known: AppleHealthMapper.isKnown(record.type), entryType: entryType)
        }
        switch outcome {
        case .inserted: sampleRun!.inserted += 1
        case .updated: sampleRun!.updated += 1
        case .unchanged: sampleRun!.unchanged += 1
        }
    }

    private mutating func storeLooseBloodPressure(_ element: AppleHealthElement, id: UInt64) throws {
        if let outcome = try store(mapper.record(element)) { looseBloodPressure[id] = outcome }
    }

    private mutating func storePendingBloodPressure() throws {
        for (key, element) in pendingBloodPressure.drain() { try storeLooseBloodPressure(element, id: key) }
    }

    /// Clinical records: the FHIR resources they point to, through the FHIR mapping.
    private mutating func storeClinicalRecords() throws {
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
    }

    /// The last run counted, the samples' writer finished, the touched facts regrouped, the source
    /// named after the devices that wrote most, and the import audited.
    private mutating func finish() throws {
        flushSampleRun()
        try samples?.finish()
        let owner = try self.owner(), sourceID = try self.sourceID()
        if !summary.imports.patientIDs.contains(owner.personID) { summary.imports.patientIDs.append(owner.personID) }
        try FactGrouping(db).regroup(patientID: owner.personID, touched: touched)
        try sources.touchLastSync(id: sourceID, now: now)
        let devices = try db.query("""
            SELECT source_name FROM sample_series WHERE source_id = ? AND source_name <> ''
            GROUP BY source_name ORDER BY count(*) DESC, source_name LIMIT 4
            """, [sourceID]) { $0.string(0)! }
        try sources.setDisplayName(id: sourceID, OpenVault.sourceName(devices: devices), now: now)
        try vault.audit.record("import.apple-health", subject: owner.uuid,
                               detail: "\(summary.imports.inserted) new, \(summary.imports.updated) updated, \(summary.imports.unchanged) unchanged entries")
    }
}

extension AppleHealthImportRun {
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
            /// Why a workout's route files gave no route, for the summary.
            var routeProblems: [WorkoutRouteProblem] = []
        }

        /// `routes`: the export's route files, read here, on the parsing thread, for a workout that has one.
        init(_ element: AppleHealthElement, routes: WorkoutRouteFiles? = nil) {
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
                // A workout has one route file; should it list more, the first that reads is its route.
                var route: RouteSummary?
                for path in element.routeFiles.prefix(4) where route == nil {
                    guard let routes else { break }
                    switch routes.summary(path) {
                    case let .success(found): route = found
                    case let .failure(problem): other.routeProblems.append(problem)
                    }
                }
                other.mapped = mapper.workout(element, route: route)
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
}
