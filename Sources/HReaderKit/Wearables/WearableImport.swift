import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore
import ZIPFoundation

/// A wearable's files given to `import --file`, told apart by content (docs/wearables.md).
enum WearableInput {
    /// FIT files: one file, a folder of them, a zip of them (Garmin's export, whose zips hold zips).
    case fit(FITFiles)
    /// An Android Health Connect export: its zip, or the database it holds.
    case healthConnect(HealthConnectExport)
    /// Fitbit's data from Google Takeout: the folder or the zip.
    case fitbit(FitbitTakeout)

    var format: String {
        switch self {
        case let .fit(files): files.count == 1 ? "FIT" : files.count == 0 ? "Garmin export" : "\(files.count) FIT files"
        case .healthConnect: "Health Connect export"
        case let .fitbit(takeout): "Fitbit Takeout, \(takeout.count) files"
        }
    }

    var isFIT: Bool { if case .fit = self { true } else { false } }

    /// The source's key prefix and name.
    var sourceKey: (prefix: String, name: String) {
        switch self {
        case .fit: ("garmin-fit:", "Garmin FIT")
        case .healthConnect: ("health-connect:", "Health Connect")
        case .fitbit: ("fitbit:", "Fitbit")
        }
    }

    /// The input when it is a wearable's, else nil (then `import --file` reads records as before).
    static func detect(_ url: URL) throws -> WearableInput? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return nil }
        if isDirectory.boolValue {
            let files = FITFiles.inDirectory(url)
            if !files.isEmpty { return .fit(files) }
            return FitbitTakeout.inDirectory(url).map { .fitbit($0) }
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return nil }
        let head = [UInt8]((try? handle.read(upToCount: 16)) ?? Data())
        try? handle.close()
        if FITDecoder.recognizes(head) { return .fit(FITFiles(single: url)) }
        if head.starts(with: Array("SQLite format 3\u{0}".utf8)) { return .healthConnect(HealthConnectExport(url: url, member: nil)) }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            if let export = HealthConnectExport.inZip(url) { return .healthConnect(export) }
            if let files = try FITFiles.inZip(url) { return .fit(files) }
            if let takeout = FitbitTakeout.inZip(url) { return .fitbit(takeout) }
        }
        return nil
    }
}

/// One of Fitbit's files in a Takeout: a JSON day file of `Global Export Data/`, an exercise log
/// file (`exercise-<n>.json`), or a CSV file of `Physical Activity_GoogleData/` (docs/wearables.md).
enum FitbitFile: Equatable {
    case json(FitbitTakeoutReader.Metric)
    case exercises
    case csv(FitbitCSVReader.Metric)

    /// The file at `path` (a path in a folder or zip), or nil when it is none of Fitbit's that hreader reads.
    init?(path: String) {
        let name = (path as NSString).lastPathComponent
        if let metric = FitbitTakeoutReader.metric(ofFileNamed: name) {
            self = .json(metric)
        } else if FitbitTakeoutReader.isExerciseFile(name) {
            self = .exercises
        } else if ((path as NSString).deletingLastPathComponent as NSString).lastPathComponent == FitbitCSVReader.folder,
                  let metric = FitbitCSVReader.metric(ofFileNamed: name) {
            self = .csv(metric)
        } else {
            return nil
        }
    }
}

/// Fitbit's Takeout: every `<metric>-YYYY-MM-DD.json` and `Physical Activity_GoogleData/<metric>_….csv`
/// of a folder (and below) or a zip, and the account's `Profile.csv` (its zone and weight unit). One
/// file's bytes in memory at a time. Where a metric has CSV files, its JSON day files are the same
/// readings without their devices and offsets: they are passed over, not read twice.
struct FitbitTakeout {
    private enum Place {
        case files([URL], profile: URL?)
        case zip(URL)
    }

    private let place: Place
    let count: Int
    /// The metrics whose JSON day files are passed over: a CSV file of each was found.
    let twinsPassedOver: Set<FitbitTakeoutReader.Metric>
    static let maxFileBytes = 64 << 20

    private init(place: Place, files: [FitbitFile]) {
        self.place = place
        count = files.count
        twinsPassedOver = Set(files.compactMap { if case let .csv(metric) = $0 { metric.jsonTwin } else { nil } })
    }

    static func inDirectory(_ url: URL) -> FitbitTakeout? {
        let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        var found: [(URL, FitbitFile)] = [], profile: URL?
        while let next = enumerator?.nextObject() as? URL, found.count < FITFiles.maxMembers {
            if let file = FitbitFile(path: next.path) { found.append((next, file)) }
            if next.lastPathComponent == "Profile.csv" { profile = next }
        }
        guard !found.isEmpty else { return nil }
        return FitbitTakeout(place: .files(found.map(\.0).sorted { $0.path < $1.path }, profile: profile), files: found.map(\.1))
    }

    static func inZip(_ url: URL) -> FitbitTakeout? {
        let archive: Archive
        do { archive = try Archive(url: url, accessMode: .read) } catch { return nil }
        var files: [FitbitFile] = [], members = 0
        for entry in archive where entry.type == .file {
            members += 1
            if members > FITFiles.maxMembers { return nil }
            if let file = FitbitFile(path: entry.path) { files.append(file) }
        }
        return files.isEmpty ? nil : FitbitTakeout(place: .zip(url), files: files)
    }

    private static func messages(_ name: String) -> ZipMemberStream.Messages {
        .init(tooLarge: { HReaderError.badInput("\(name): a member inflates past hreader's limits (a zip bomb?); nothing was imported") },
              checksum: { HReaderError.badInput("\(name): a member's checksum does not match (damaged); nothing was imported") },
              unreadable: { HReaderError.badInput("\(name): a member cannot be read (\($0)); nothing was imported") },
              stalled: { HReaderError.badInput("\(name): a member's data is damaged (truncated); nothing was imported") })
    }

    /// The profile's text (nil when there is none), then each file's kind, name and bytes (JSON twins
    /// of CSV metrics passed over); returns how many JSON files were passed over, by metric.
    func read(profile: (String?) throws -> Void, _ body: (FitbitFile, String, [UInt8]) throws -> Void) throws -> [FitbitTakeoutReader.Metric: Int] {
        var passedOver: [FitbitTakeoutReader.Metric: Int] = [:]
        /// Whether a file is read: not a JSON twin of a metric read from CSV.
        func reads(_ file: FitbitFile) -> Bool {
            if case let .json(metric) = file, twinsPassedOver.contains(metric) {
                passedOver[metric, default: 0] += 1
                return false
            }
            return true
        }
        func contents(_ url: URL) throws -> [UInt8] {
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            guard size <= Self.maxFileBytes else { throw HReaderError.badInput("\(url.lastPathComponent) is larger than 64 MiB; nothing was imported") }
            guard let data = FileManager.default.contents(atPath: url.path) else { throw HReaderError.usage("cannot read \(url.path)") }
            return [UInt8](data)
        }
        switch place {
        case let .files(urls, profileURL):
            try profile(try profileURL.map { String(decoding: try contents($0), as: UTF8.self) })
            for url in urls {
                guard let file = FitbitFile(path: url.path), reads(file) else { continue }
                try body(file, url.lastPathComponent, try contents(url))
            }
        case let .zip(zip):
            let archive: Archive
            do { archive = try Archive(url: zip, accessMode: .read) } catch { throw HReaderError.usage("cannot read \(zip.path)") }
            let name = zip.lastPathComponent
            func read(_ entry: ZIPFoundation.Entry) throws -> [UInt8] {
                [UInt8](try ZipMemberStream.read(entry, of: archive, limit: UInt64(Self.maxFileBytes), ratio: UInt64(DocumentPackage.maxCompressionRatio),
                                                 stall: 10, messages: Self.messages(name)))
            }
            let profileEntry = archive.first { $0.type == .file && ($0.path as NSString).lastPathComponent == "Profile.csv" }
            try profile(try profileEntry.map { String(decoding: try read($0), as: UTF8.self) })
            for entry in archive where entry.type == .file {
                guard let file = FitbitFile(path: entry.path), reads(file) else { continue }
                try body(file, (entry.path as NSString).lastPathComponent, try read(entry))
            }
        }
        return passedOver
    }
}

/// A Health Connect export: the database, alone or in the export's zip (`health_connect_export.db`).
/// Its bytes are read into memory (bounded) and opened there (`Database.openForeign`): the
/// plaintext database is never written to disk, not even inflated to a temporary file.
struct HealthConnectExport {
    let url: URL
    /// The database's member in the zip; nil when `url` is the database.
    let member: String?

    static func inZip(_ url: URL) -> HealthConnectExport? {
        let archive: Archive
        do { archive = try Archive(url: url, accessMode: .read) } catch { return nil }
        var members = 0
        for entry in archive where entry.type == .file {
            members += 1
            if members > 10_000 { return nil }
            if entry.path.lowercased().hasSuffix("health_connect_export.db") { return HealthConnectExport(url: url, member: entry.path) }
        }
        return nil
    }

    /// The largest database read: it is copied, sealed, into the vault's directory while it is read
    /// (`SealedScratch`), so its size costs disk for the import's length, not memory.
    static let maxBytes: UInt64 = 8 << 30

    /// The database, copied as it is read (inflated from the zip, or from its file) into a sealed
    /// scratch file in `directory`: one chunk in memory at a time.
    func sealed(in directory: URL) throws -> SealedScratch {
        let name = url.lastPathComponent
        let limit = Self.maxBytes
        let scratch: SealedScratch
        do { scratch = try SealedScratch(in: directory) } catch {
            throw HReaderError(.failure, "cannot make a scratch copy of \(name) beside the vault (\(error)); nothing was imported")
        }
        func write(_ chunk: UnsafeRawBufferPointer) throws {
            do { try scratch.write(chunk) } catch {
                throw HReaderError(.failure, "cannot write the scratch copy of \(name) beside the vault (\(error)); nothing was imported")
            }
        }
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        guard let member else {
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? UInt64) ?? 0
            guard size <= limit else { throw HReaderError.badInput("\(name) is larger than \(limit >> 30) GiB; nothing was imported") }
            guard let file = FileHandle(forReadingAtPath: url.path) else { throw HReaderError.usage("cannot read \(url.path)") }
            defer { try? file.close() }
            while let data = try file.read(upToCount: buffer.count), !data.isEmpty {
                try data.withUnsafeBytes { try write($0) }
            }
            return scratch
        }
        let archive: Archive
        do { archive = try Archive(url: url, accessMode: .read) } catch { throw HReaderError.usage("cannot read \(url.path)") }
        guard let entry = archive.first(where: { $0.path == member }) else { throw HReaderError.badInput("\(name): \(member) went missing") }
        let messages = ZipMemberStream.Messages(
            tooLarge: { HReaderError.badInput("\(name): \(member) inflates past \(limit >> 30) GiB or 250 times its size (a zip bomb?); nothing was imported") },
            checksum: { HReaderError.badInput("\(name): \(member)'s checksum does not match (damaged); nothing was imported") },
            unreadable: { HReaderError.badInput("\(name): \(member) cannot be read (\($0)); nothing was imported") },
            stalled: { HReaderError.badInput("\(name): \(member) is damaged (truncated); nothing was imported") })
        try ZipMemberStream.stream(entry, of: archive, limit: limit, ratio: UInt64(DocumentPackage.maxCompressionRatio), stall: 10,
                                   bufferSize: 256 << 10, messages: messages) { next in
            while true {
                let count = try buffer.withUnsafeMutableBytes { try next($0) }
                if count == 0 { break }
                try buffer.withUnsafeBytes { try write(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            }
        }
        return scratch
    }
}

/// Where FIT files are read from, one at a time (only one file's bytes are in memory at once).
struct FITFiles {
    private enum Place {
        case files([URL])
        case zip(URL)
    }

    private let place: Place
    /// Files found (a zip's are counted when it is read).
    let count: Int

    /// Zips hold at most this many members hreader looks at; a zip inside inflates to at most this.
    static let maxMembers = 200_000
    static let maxNestedZipBytes: UInt64 = 1 << 30

    init(single url: URL) { place = .files([url]); count = 1 }
    private init(_ place: Place, count: Int) { self.place = place; self.count = count }

    var isEmpty: Bool { count == 0 }

    /// Every `.fit` file in the folder and its subfolders, in path order.
    static func inDirectory(_ url: URL) -> FITFiles {
        let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        var found: [URL] = []
        while let next = enumerator?.nextObject() as? URL, found.count < maxMembers {
            if next.pathExtension.lowercased() == "fit" { found.append(next) }
        }
        return FITFiles(.files(found.sorted { $0.path < $1.path }), count: found.count)
    }

    /// A zip with `.fit` members, or zips inside holding them (Garmin's export); nil when it has neither
    /// (read by names only: a zip inside is looked into when the import reads it).
    static func inZip(_ url: URL) throws -> FITFiles? {
        let archive: Archive
        do { archive = try Archive(url: url, accessMode: .read) } catch { return nil }
        var fits = 0, zips = 0
        for entry in archive where entry.type == .file {
            let lower = entry.path.lowercased()
            if lower.hasSuffix(".fit") { fits += 1 } else if lower.hasSuffix(".zip") && lower.contains("di_connect") { zips += 1 }
            guard fits + zips <= maxMembers else { throw HReaderError.badInput("\(url.lastPathComponent) holds more than \(maxMembers) members; refused") }
        }
        return fits + zips == 0 ? nil : FITFiles(.zip(url), count: fits)
    }

    private static func messages(_ name: String) -> ZipMemberStream.Messages {
        .init(tooLarge: { HReaderError.badInput("\(name): a member inflates past hreader's limits (a zip bomb?); nothing was imported") },
              checksum: { HReaderError.badInput("\(name): a member's checksum does not match (damaged); nothing was imported") },
              unreadable: { HReaderError.badInput("\(name): a member cannot be read (\($0)); nothing was imported") },
              stalled: { HReaderError.badInput("\(name): a member's data is damaged (truncated); nothing was imported") })
    }

    /// A zip inside the zip, read in order as it inflates (`SequentialZip`): only one FIT file's bytes
    /// are held, never the inner zip, and nothing goes to disk. Returns its members passed over.
    private static func nested(_ entry: ZIPFoundation.Entry, of archive: Archive, name: String, members: inout Int,
                               _ body: (String, [UInt8]) throws -> Void) throws -> Int {
        var passedOver = 0, counted = members
        defer { members = counted }
        try ZipMemberStream.stream(entry, of: archive, limit: maxNestedZipBytes, ratio: UInt64(DocumentPackage.maxCompressionRatio), stall: 10,
                                   bufferSize: 256 << 10, messages: messages(name)) { read in
            var inner = SequentialZip(limits: .init(memberBytes: FITDecoder.maxFileBytes, ratio: DocumentPackage.maxCompressionRatio,
                                                    members: maxMembers), read: read)
            do {
                while let member = try inner.next(wanted: { $0.lowercased().hasSuffix(".fit") }) {
                    counted += 1
                    guard counted <= maxMembers else { throw HReaderError.badInput("\(name) holds more than \(maxMembers) members; refused") }
                    if let bytes = member.bytes { try body((member.name as NSString).lastPathComponent, bytes) } else { passedOver += 1 }
                }
            } catch let failure as SequentialZip.Failure {
                throw HReaderError.badInput("\(name): \(entry.path): \(failure.description); nothing was imported")
            }
        }
        return passedOver
    }

    /// Calls `body` with each file's name and bytes, in order (a zip's in its order, walked once: a
    /// member is never looked up by name, which ZIPFoundation does by a scan); returns the zip
    /// members passed over (neither FIT files nor zips of them).
    @discardableResult
    func forEach(_ body: (String, [UInt8]) throws -> Void) throws -> Int {
        switch place {
        case let .files(urls):
            for url in urls {
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
                guard size <= FITDecoder.maxFileBytes else {
                    throw HReaderError.badInput("\(url.lastPathComponent) is larger than \(FITDecoder.maxFileBytes >> 20) MiB, more than a FIT file holds; nothing was imported")
                }
                guard let data = FileManager.default.contents(atPath: url.path) else { throw HReaderError.usage("cannot read \(url.path)") }
                try body(url.lastPathComponent, [UInt8](data))
            }
            return 0
        case let .zip(zip):
            let archive: Archive
            do { archive = try Archive(url: zip, accessMode: .read) } catch { throw HReaderError.usage("cannot read \(zip.path)") }
            let name = zip.lastPathComponent
            var passedOver = 0, members = 0
            func read(_ entry: ZIPFoundation.Entry, of archive: Archive) throws {
                let data = try ZipMemberStream.read(entry, of: archive, limit: UInt64(FITDecoder.maxFileBytes),
                                                    ratio: UInt64(DocumentPackage.maxCompressionRatio), stall: 10, messages: Self.messages(name))
                try body((entry.path as NSString).lastPathComponent, [UInt8](data))
            }
            for entry in archive where entry.type == .file {
                members += 1
                guard members <= Self.maxMembers else { throw HReaderError.badInput("\(name) holds more than \(Self.maxMembers) members; refused") }
                let lower = entry.path.lowercased()
                if lower.hasSuffix(".fit") {
                    try read(entry, of: archive)
                } else if lower.hasSuffix(".zip") && lower.contains("di_connect") {
                    passedOver += try Self.nested(entry, of: archive, name: name, members: &members, body)
                } else {
                    passedOver += 1
                }
            }
            return passedOver
        }
    }
}

extension OpenVault {
    /// `import --file` of a wearable's files (FIT files, a folder or zip of them): read, mapped and
    /// stored in ONE transaction through the samples' writer, as Apple Health samples are: a file that
    /// fails (not whole, a bad CRC, a header that lies) commits nothing; the same files again add
    /// nothing. Files carry no patient: `patient`, or with `.me` the vault's own person (created the
    /// first time).
    func importWearables(_ input: WearableInput, name: String, into patient: Patient?, relationship: Relationship?,
                         progress: (String) -> Void) throws -> (format: String, summary: ImportSummary) {
        guard patient != nil || relationship == .me else {
            throw HReaderError.usage("\(name) is a wearable's data (\(input.format)), which names no one: give --patient P or --as me")
        }
        var summary = ImportSummary()
        let now = RFC3339.utc(Int64(Date().timeIntervalSince1970))
        try translatingErrors { try db.withPageCache(kibibytes: 6144) { try db.transaction {
            let owner = try patient ?? wearer(&summary, now: now)
            let sources = SourceRepository(db)
            let (prefix, sourceName) = input.sourceKey
            let sourceID = try sources.findOrCreate(kind: .file, baseURL: prefix + owner.uuid, displayName: sourceName, now: now)
            let writer = try SampleWriter(db, patientID: owner.personID, recordID: owner.id, sourceID: sourceID)
            var kinds: [String: (inserted: Int, updated: Int, unchanged: Int)] = [:]
            var unmapped: [String: Int] = [:]
            var devices: [String] = []
            var touched: Set<Int64> = []
            var stored = 0
            func count(_ outcome: UpsertOutcome, kind: String, type: EntryType) {
                var counts = kinds[kind] ?? (0, 0, 0)
                switch outcome {
                case .inserted: counts.inserted += 1; summary.inserted += 1
                case .updated: counts.updated += 1; summary.updated += 1
                case .unchanged: counts.unchanged += 1; summary.unchanged += 1
                }
                kinds[kind] = counts
                summary.byType[type.rawValue, default: 0] += 1
                stored += 1
                if stored % 100_000 == 0 { progress("\(stored) readings") }
            }
            func storeSample(_ sample: SampleRecord) throws {
                let (outcome, type) = try writer.add(sample, mapping: AppleHealthMapper.seriesMapping)
                count(outcome, kind: sample.type, type: type)
            }
            func storeEntry(_ entry: MappedEntry) throws {
                let (outcome, id) = try entries.upsertEntry(patientID: owner.personID, recordID: owner.id, sourceID: sourceID,
                                                            remoteID: entry.remoteID, content: entry.content)
                count(outcome, kind: entry.content.description == "Blood pressure" ? "Blood pressure" : "exercise session", type: entry.content.type)
                if outcome != .unchanged { touched.insert(id) }
            }
            switch input {
            case let .fit(fit):
                var files = 0, notesOfFiles = 0
                let mapper = FITMapper()
                let passedOver = try fit.forEach { fileName, bytes in
                    files += 1
                    if files % 50 == 0 { progress("\(files) files") }
                    let readings: WearableReadings
                    do { readings = try mapper.map(bytes, name: fileName) } catch let failure as FITDecoder.Failure {
                        throw HReaderError.badInput("\(fileName): \(failure.description); nothing was imported")
                    }
                    for sample in readings.samples { try storeSample(sample) }
                    for entry in readings.entries { try storeEntry(entry) }
                    for (message, n) in readings.unmapped { unmapped[message, default: 0] += n }
                    for (reason, n) in readings.skipped { summary.skipped[reason, default: 0] += n }
                    for device in readings.devices where !devices.contains(device) { devices.append(device) }
                    if notesOfFiles < 3 { summary.notes += readings.notes }
                    notesOfFiles += readings.notes.count
                }
                if notesOfFiles > 3 { summary.notes.append("\(notesOfFiles - 3) more file(s) state no local time") }
                if passedOver > 0 { summary.notes.append("passed over \(passedOver) member(s) that are not FIT files") }
            case let .healthConnect(export):
                let name = export.member.map { ($0 as NSString).lastPathComponent } ?? export.url.lastPathComponent
                let foreign: Database
                do { foreign = try Database.openForeign(sealed: try export.sealed(in: vault.root)) } catch let failure as Database.ForeignFailure {
                    throw HReaderError.badInput("\(name): not a readable SQLite database (\(failure)); nothing was imported")
                }
                guard HealthConnectReader.recognizes(foreign) else {
                    throw HReaderError.badInput("\(name) is a SQLite database, but not a Health Connect export (no application_info_table); nothing was imported")
                }
                let outcome: HealthConnectReader.Outcome
                do {
                    outcome = try HealthConnectReader().read(foreign, sample: storeSample, entry: storeEntry)
                } catch let failure as HealthConnectReader.Failure {
                    throw HReaderError.badInput("\(name): \(failure.description); nothing was imported")
                } catch let error as DatabaseError where error.isIntegrityFailure {
                    throw HReaderError.badInput("\(name): the database is damaged (\(error)); nothing was imported")
                }
                for (table, n) in outcome.unmapped { unmapped[table, default: 0] += n }
                for (reason, n) in outcome.skipped { summary.skipped[reason, default: 0] += n }
                devices = outcome.devices
            case let .fitbit(takeout):
                var reader = FitbitTakeoutReader()
                var csvReader = FitbitCSVReader()
                var files = 0
                let passedOver = try takeout.read(profile: { text in
                    let stated: (timeZone: TimeZone?, kilogramsPerWeightUnit: Double?) = text.map(FitbitTakeoutReader.profile) ?? (nil, nil)
                    if let zone = stated.timeZone { reader.zone = .named(zone) }
                    csvReader.zone = reader.zone
                    reader.kilogramsPerWeightUnit = stated.kilogramsPerWeightUnit
                    summary.notes.append(stated.timeZone.map { "times placed in the account's zone, \($0.identifier) (Profile.csv)" }
                                         ?? "the export states no zone (no timezone in Profile.csv): times placed in \(reader.zone.name)")
                }) { file, name, bytes in
                    files += 1
                    if files % 100 == 0 { progress("\(files) of \(takeout.count) files") }
                    do {
                        let skipped = switch file {
                        case let .json(metric): try reader.read(bytes, metric: metric, name: name, sample: storeSample)
                        case .exercises: try reader.readExercises(bytes, name: name, entry: storeEntry)
                        case let .csv(metric): try csvReader.read(bytes, metric: metric, name: name, sample: storeSample)
                        }
                        for (reason, n) in skipped { summary.skipped[reason, default: 0] += n }
                    } catch let failure as FitbitTakeoutReader.Failure {
                        throw HReaderError.badInput("\(failure.description); nothing was imported")
                    }
                }
                for metric in passedOver.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                    summary.notes.append("\(metric.rawValue): read from Physical Activity_GoogleData's CSV files; its \(passedOver[metric]!) JSON "
                                         + "day file(s), the same readings without devices or offsets, passed over")
                }
            }
            try writer.finish()
            // One line per kind: "Heart rate: 3600 samples (3600 new, 0 updated, 0 unchanged)".
            for type in kinds.keys.sorted() {
                let c = kinds[type]!
                let label = type == "exercise session" ? "Exercise sessions" : type == "Blood pressure" ? type : AppleHealthMapper.seriesMapping(type).description
                summary.notes.append("\(label): \(c.inserted + c.updated + c.unchanged) (\(c.inserted) new, \(c.updated) updated, \(c.unchanged) unchanged)")
            }
            if !unmapped.isEmpty {
                summary.notes.append("\(input.isFIT ? "messages" : "tables") read but not mapped: " + unmapped.keys.sorted().map { "\($0) \(unmapped[$0]!)" }.joined(separator: ", "))
            }
            if !summary.patientIDs.contains(owner.personID) { summary.patientIDs.append(owner.personID) }
            if patient != nil { summary.patientsMatched += 1 }
            try FactGrouping(db).regroup(patientID: owner.personID, touched: touched)
            try sources.touchLastSync(id: sourceID, now: now)
            if !devices.isEmpty {
                let shown = devices.prefix(3).joined(separator: ", ") + (devices.count > 3 ? " and more" : "")
                try sources.setDisplayName(id: sourceID, "\(sourceName) (\(shown))", now: now)
            }
            try audit.record("import.wearable", subject: owner.uuid,
                             detail: "\(input.format): \(summary.inserted) new, \(summary.updated) updated, \(summary.unchanged) unchanged")
        } } }
        return (input.format, summary)
    }

    /// `--as me` for a wearable's files: the person an Apple Health `--as me` made, else the vault's
    /// first person marked as you, else a new "Me" (found again by the next import).
    private func wearer(_ summary: inout ImportSummary, now: String) throws -> Patient {
        if let me = try Self.applePatient(db) {
            summary.patientsUnchanged += 1
            return me
        }
        if let id = try db.scalarInt("SELECT id FROM patients WHERE relationship = 'me' AND merged_into IS NULL ORDER BY id LIMIT 1"),
           let me = try PatientRepository(db).get(id: id) {
            summary.patientsUnchanged += 1
            return me
        }
        var new = NewPatient(firstName: "Me", lastName: "(Wearables)")
        new.relationship = .me
        let creator = try SourceRepository(db).findOrCreate(kind: .file, baseURL: "wearables:me", displayName: "Wearables", now: now)
        summary.patientsCreated += 1
        return try patients.upsert(sourceID: creator, remoteID: "me", new).0
    }
}
