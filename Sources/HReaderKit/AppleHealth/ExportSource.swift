import Foundation
import HReaderRecords
import ZIPFoundation
import CZlibChecksum

/// Where an Apple Health export comes from: `export.xml` on disk, or the XML member of the Health
/// app's `export.zip`, streamed out of the zip as it is parsed. Nothing is written to disk: the zip
/// member is inflated chunk by chunk on a second thread into a small bounded pipe that the XML
/// reader pulls from.
public final class AppleHealthExportSource {
    /// Refuse members that inflate more than this many times their compressed size (a zip bomb);
    /// real exports compress about 20 to 30 times.
    static let maxCompressionRatio: UInt64 = 250
    static let maxClinicalRecordBytes = 10 << 20
    /// Inflating never goes this long without a chunk on a sound zip. ZIPFoundation 0.9.20 spins forever
    /// on Linux on a truncated deflate stream (upstream PR #389), without calling us back: after this
    /// long the member is declared damaged (the spinning thread ends with the process). The fuzz
    /// harness gives 2 s: libFuzzer counts an input that takes 10 s as a timeout, and this one is known.
    public static let defaultInflateStall: TimeInterval = 10

    let inflateStall: TimeInterval
    let url: URL
    private let archive: Archive?
    private let xmlEntry: Entry?
    public let xmlName: String

    public init(url: URL, inflateStall: TimeInterval = defaultInflateStall) throws {
        self.url = url
        self.inflateStall = inflateStall
        guard let handle = FileHandle(forReadingAtPath: url.path) else { throw HReaderError.usage("cannot read \(url.path)") }
        let magic = (try? handle.read(upToCount: 4)) ?? Data()
        try? handle.close()
        guard magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) || magic.starts(with: [0x50, 0x4B, 0x05, 0x06]) else {
            archive = nil
            xmlEntry = nil
            xmlName = url.lastPathComponent
            return
        }
        let archive: Archive
        do {
            archive = try Archive(url: url, accessMode: .read)
        } catch {
            throw HReaderError.badInput("\(url.lastPathComponent) is not a readable zip file (truncated or damaged)")
        }
        self.archive = archive
        // The export by content, not by name: the Health app localises the file name.
        var found: Entry?
        for entry in archive where entry.type == .file && entry.path.lowercased().hasSuffix(".xml") {
            guard let head = Self.head(of: entry, in: archive, stall: inflateStall) else {
                throw HReaderError.badInput("\(url.lastPathComponent): \(entry.path) does not inflate (its compressed data is damaged or truncated)")
            }
            if Self.isHealthData(head) { found = entry; break }
        }
        guard let found else {
            throw HReaderError.badInput("\(url.lastPathComponent) holds no Apple Health export (no XML member with <HealthData>)")
        }
        if found.compressedSize > 0, found.uncompressedSize / max(found.compressedSize, 1) > Self.maxCompressionRatio {
            throw HReaderError.badInput("\(url.lastPathComponent): \(found.path) inflates \(found.uncompressedSize / found.compressedSize) times its size; refusing it as a zip bomb")
        }
        xmlEntry = found
        xmlName = found.path
    }

    private struct Enough: Error {}

    /// The first bytes of a member: enough to see its DOCTYPE or root element; nil when inflating them
    /// stalls for `stall` seconds.
    private static func head(of entry: Entry, in archive: Archive, stall: TimeInterval) -> Data? {
        let pipe = ChunkPipe(capacity: 8)
        let handoff = Handoff(archive: archive, entry: entry)
        let reader = Thread {
            var size = 0
            do {
                _ = try handoff.archive.extract(handoff.entry, bufferSize: 16 << 10, skipCRC32: true) { chunk in
                    size += chunk.count
                    try pipe.put(chunk)
                    if size >= 64 << 10 { throw Enough() }
                }
            } catch {}
            pipe.finish(nil)
        }
        reader.stackSize = 1 << 20
        reader.start()
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        do {
            while true {
                let count = try buffer.withUnsafeMutableBytes { try pipe.read(into: $0, stall: stall) }
                if count == 0 { break }
                data.append(contentsOf: buffer[0..<count])
            }
        } catch {
            pipe.cancel()
            return nil
        }
        return data
    }

    /// The Apple Health export at `url` as `import --file` meets it: the Health app's zip (its
    /// `apple_health_export/` folder, or an `export.xml` in it), that folder unzipped (its `export.xml`),
    /// or the XML itself (`<HealthData>` near its start). The file to import, else nil. By a look at
    /// names and the first bytes only; the import itself checks the content.
    public static func export(at url: URL) -> URL? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return nil }
        if isDirectory.boolValue {
            let xml = url.appendingPathComponent("export.xml")
            return export(at: xml) == xml ? xml : nil
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return nil }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64 << 10)) ?? Data()
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            guard let archive = try? Archive(url: url, accessMode: .read) else { return nil }
            for (index, entry) in archive.enumerated() {
                if index >= 100_000 { break }
                let path = entry.path.lowercased()
                if path.hasPrefix("apple_health_export/") || path == "export.xml" || path.hasSuffix("/export.xml") { return url }
            }
            return nil
        }
        return isHealthData(head) ? url : nil
    }

    static func isHealthData(_ head: Data) -> Bool {
        head.range(of: Data("<!DOCTYPE HealthData".utf8)) != nil || head.range(of: Data("<HealthData".utf8)) != nil
    }

    /// Runs `body` with a byte source for the XML. For a zip, the member is inflated on another
    /// thread; its size, CRC and compression ratio are checked as it streams.
    public func withXML<T>(_ body: (@escaping AppleHealthReader.Source) throws -> T) throws -> T {
        guard let archive, let entry = xmlEntry else {
            guard let handle = FileHandle(forReadingAtPath: url.path) else { throw HReaderError.usage("cannot read \(url.path)") }
            defer { try? handle.close() }
            return try body { buffer in
                let data = try handle.read(upToCount: buffer.count) ?? Data()
                data.copyBytes(to: buffer)
                return data.count
            }
        }
        let name = url.lastPathComponent
        let messages = ZipMemberStream.Messages(
            tooLarge: { HReaderError.badInput("\(name): the export inflates beyond its declared size; refusing it as a zip bomb") },
            checksum: { HReaderError.badInput("\(name): the export's checksum does not match (the zip is damaged)") },
            unreadable: { HReaderError.badInput("\(name): the zip cannot be read (\($0)); it may be truncated or damaged") },
            stalled: { HReaderError.badInput("\(name): \(entry.path) stopped inflating (its compressed data is damaged or truncated)") })
        return try ZipMemberStream.stream(entry, of: archive, limit: entry.uncompressedSize, ratio: Self.maxCompressionRatio,
                                          stall: inflateStall, bufferSize: 256 << 10, messages: messages) { next in
            try body { try next($0) }
        }
    }

    /// The archive goes to the producer thread and is not touched here until that thread has
    /// finished (`waitUntilFinished`), so it is never used by two threads at once.
    private struct Handoff: @unchecked Sendable {
        let archive: Archive
        let entry: Entry
    }

    /// The zip's `.json` members by path, read once when the first clinical record is looked up:
    /// ZIPFoundation finds a member by path by walking the whole central directory, which for an
    /// export of thousands of clinical records was done thousands of times (3,000 records beside
    /// 2,000 route files: 499 s). At most `maxIndexed` are kept.
    private var jsonMembers: [String: Entry]?
    static let maxIndexed = 200_000

    /// The FHIR JSON a ClinicalRecord points to (`resourceFilePath` such as `/clinical-records/x.json`).
    func clinicalRecord(_ path: String) throws -> Data? {
        let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard !relative.split(separator: "/").contains("..") else { return nil }
        if let archive, let xmlEntry {
            let directory = (xmlEntry.path as NSString).deletingLastPathComponent
            let candidates = [directory.isEmpty ? relative : directory + "/" + relative, relative]
            if jsonMembers == nil {
                var members: [String: Entry] = [:]
                for entry in archive where entry.type == .file && entry.path.lowercased().hasSuffix(".json") {
                    guard members.count < Self.maxIndexed else { break }
                    members[entry.path] = entry
                }
                jsonMembers = members
            }
            guard let entry = candidates.lazy.compactMap({ self.jsonMembers?[$0] }).first else { return nil }
            guard entry.uncompressedSize <= UInt64(Self.maxClinicalRecordBytes) else { return nil }
            var data = Data()
            _ = try archive.extract(entry) { chunk in
                data.append(chunk)
                if data.count > Self.maxClinicalRecordBytes { throw HReaderError.badInput("a clinical record is larger than 10 MiB") }
            }
            return data
        }
        let file = url.deletingLastPathComponent().appendingPathComponent(relative)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
              (attributes[.size] as? Int ?? 0) <= Self.maxClinicalRecordBytes else { return nil }
        return FileManager.default.contents(atPath: file.path)
    }
}

/// A bounded queue of chunks from one producer thread to one consumer: the producer waits when it
/// is full (memory stays bounded), the consumer when it is empty.
final class ChunkPipe: @unchecked Sendable {
    enum Cancelled: Error { case cancelled, stalled }

    private let condition = NSCondition()
    private var chunks: [Data] = []
    private var current = Data()
    private var offset = 0
    private var finished = false
    private var cancelled = false
    private var error: Error?
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func put(_ chunk: Data) throws {
        condition.lock()
        defer { condition.unlock() }
        while chunks.count >= capacity && !cancelled { condition.wait() }
        if cancelled { throw Cancelled.cancelled }
        chunks.append(chunk)
        condition.broadcast()
    }

    func finish(_ error: Error?) {
        condition.lock()
        finished = true
        self.error = error
        condition.broadcast()
        condition.unlock()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the producer to finish, at most `timeout` seconds.
    func waitUntilFinished(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        while !finished, condition.wait(until: deadline) {}
        condition.unlock()
    }

    /// The next bytes; throws `Cancelled.stalled` when the producer sends nothing for `stall` seconds.
    func read(into buffer: UnsafeMutableRawBufferPointer, stall: TimeInterval) throws -> Int {
        condition.lock()
        defer { condition.unlock() }
        var deadline = Date().addingTimeInterval(stall)
        while offset >= current.count {
            if !chunks.isEmpty {
                current = chunks.removeFirst()
                offset = 0
                condition.broadcast()
                continue
            }
            if finished {
                if let error { throw error }
                return 0
            }
            if !condition.wait(until: deadline) {
                guard !chunks.isEmpty || finished else { throw Cancelled.stalled }
                deadline = Date().addingTimeInterval(stall)
            }
        }
        let count = min(buffer.count, current.count - offset)
        current.withUnsafeBytes { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<(offset + count)]))
        }
        offset += count
        return count
    }
}

extension AppleHealthExportSource {
    /// The export's workout route files, for the parsing thread.
    func workoutRoutes() -> WorkoutRouteFiles {
        WorkoutRouteFiles(url: url, inZip: archive != nil, xmlDirectory: xmlEntry.map { ($0.path as NSString).deletingLastPathComponent } ?? "",
                          stall: inflateStall)
    }
}

/// A workout's route file (`<FileReference path="/workout-routes/route_….gpx">`), summarised
/// (`WorkoutRouteGPX`): from the export's zip through an `Archive` of its own (the XML's belongs to
/// the thread inflating it), or from the folder beside `export.xml`. Used by one thread, the one
/// parsing the export (`PreparedElement`), so that reading routes never waits on the writer.
/// A route that cannot be read is a reason counted in the summary, never an error of the import.
final class WorkoutRouteFiles: @unchecked Sendable {
    /// A route file larger than this is not read (an hour's run at one point a second is about 1 MB).
    static let maxBytes = 64 << 20

    private let url: URL
    private let inZip: Bool
    private let xmlDirectory: String
    private let stall: TimeInterval
    private var archive: Archive?
    /// The zip's `.gpx` members by path, read once: finding a member by path walks the whole
    /// central directory, which for an export of thousands of routes would be done thousands of times.
    private var gpxMembers: [String: Entry] = [:]
    /// At most this many route files are indexed (a real export has one per outdoor workout).
    static let maxIndexed = 100_000
    /// After a member stalled, its thread may still hold the archive: no route is read after it.
    private var broken = false

    init(url: URL, inZip: Bool, xmlDirectory: String, stall: TimeInterval) {
        self.url = url
        self.inZip = inZip
        self.xmlDirectory = xmlDirectory
        self.stall = stall
    }

    /// The route at `path`, or why there is none ("a workout route whose file is missing from the export").
    func summary(_ path: String) -> Result<RouteSummary, WorkoutRouteProblem> {
        let relative = path.hasPrefix("/") ? String(path.dropFirst()) : path
        guard !relative.isEmpty, !relative.split(separator: "/").contains("..") else { return .failure(.missing) }
        let data: Data
        if inZip {
            guard !broken else { return .failure(.unreadable("an earlier route file stalled")) }
            do {
                if archive == nil {
                    let opened: Archive = try Archive(url: url, accessMode: .read)
                    for entry in opened where entry.type == .file && entry.path.lowercased().hasSuffix(".gpx") {
                        guard gpxMembers.count < Self.maxIndexed else { break }
                        gpxMembers[entry.path] = entry
                    }
                    archive = opened
                }
            } catch {
                return .failure(.unreadable("the zip cannot be opened again"))
            }
            let candidates = [xmlDirectory.isEmpty ? relative : xmlDirectory + "/" + relative, relative]
            guard let archive, let entry = candidates.lazy.compactMap({ self.gpxMembers[$0] }).first else { return .failure(.missing) }
            let messages = ZipMemberStream.Messages(tooLarge: { HReaderError.badInput("too large") }, checksum: { HReaderError.badInput("its checksum does not match") },
                                                    unreadable: { HReaderError.badInput("\($0)") }, stalled: { HReaderError.badInput("stalled") })
            do {
                data = try ZipMemberStream.read(entry, of: archive, limit: UInt64(Self.maxBytes), ratio: AppleHealthExportSource.maxCompressionRatio,
                                                stall: stall, messages: messages)
            } catch let error as HReaderError {
                if error.message == "stalled" { broken = true }
                if error.message == "too large" { return .failure(.tooLarge) }
                return .failure(.unreadable(error.message))
            } catch {
                return .failure(.unreadable("\(error)"))
            }
        } else {
            let file = url.deletingLastPathComponent().appendingPathComponent(relative)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: file.path) else { return .failure(.missing) }
            guard (attributes[.size] as? Int ?? 0) <= Self.maxBytes else { return .failure(.tooLarge) }
            guard let contents = FileManager.default.contents(atPath: file.path) else { return .failure(.missing) }
            data = contents
        }
        do {
            return .success(try WorkoutRouteGPX.summary(data, name: (relative as NSString).lastPathComponent))
        } catch let error as RecordsError {
            return .failure(.notGPX(error.description))
        } catch {
            return .failure(.notGPX("\(error)"))
        }
    }
}

/// Why a workout has no route summary: the summary's "skipped" reasons.
enum WorkoutRouteProblem: Error, Sendable {
    case missing, tooLarge, unreadable(String), notGPX(String)

    var reason: String {
        switch self {
        case .missing: "a workout route whose file is missing from the export"
        case .tooLarge: "a workout route file larger than 64 MiB"
        case .unreadable: "a workout route file that cannot be read from the zip"
        case .notGPX: "a workout route file that is not GPX"
        }
    }
}
