import Foundation
import HReaderJSON
import HReaderModel
import HReaderNet
import HReaderRecords

/// Where brands come from: a vendor's published URL, or a file.
public struct ProviderSource: Sendable, Equatable {
    /// An http(s) URL or an absolute file path.
    public var location: String
    public var vendor: String

    public init(location: String, vendor: String) {
        self.location = location
        self.vendor = vendor
    }

    public var isURL: Bool { location.lowercased().hasPrefix("https://") || location.lowercased().hasPrefix("http://") }
}

/// How one source's update went.
public struct ProviderSourceOutcome: Sendable {
    public enum Result: Sendable {
        case updated(brands: Int, endpoints: Int)
        /// The server answered 304: the copy kept is current.
        case notModified(brands: Int)
        /// Nothing of this source changed; its previous brands (if any) stay.
        case failed(HReaderError)
    }

    public var source: ProviderSource
    public var result: Result
}

public struct ProviderUpdateReport: Sendable {
    public var outcomes: [ProviderSourceOutcome]
    public var brands: Int
    public var endpoints: Int
    public var written: Bool
    public var path: String

    public var firstFailure: HReaderError? {
        outcomes.lazy.compactMap { if case let .failed(error) = $0.result { error } else { nil } }.first
    }
}

extension ProviderDirectory {
    /// The largest bundle read (Epic's R4 brands bundle is tens of megabytes).
    public static let defaultMaxBundleBytes = 256 << 20

    /// Reads each source (a URL conditionally, with the ETag and Last-Modified kept from the last
    /// time; a file whole) and writes the directory again when any changed: a source that was
    /// read replaces its own brands, every other source's brands stay. A source that cannot be
    /// fetched or parsed changes nothing of its own; when none changed the file is not touched.
    public func update(_ sources: [ProviderSource], maxBytes: Int = ProviderDirectory.defaultMaxBundleBytes,
                       clients: APIClients = .shared, now: Date = Date()) async throws -> ProviderUpdateReport {
        let old: Reader?
        if exists {
            do { old = try Reader(path: path) } catch { old = nil }   // a damaged cache is fetched again
        } else {
            old = nil
        }
        defer { old?.close() }
        let oldSources = old?.summary.sources ?? []
        var outcomes: [ProviderSourceOutcome] = []
        var parsed: [(source: ProviderSource, reader: BrandsBundleReader, etag: String?, lastModified: String?)] = []
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for source in sources {
            let previous = oldSources.first { $0.source == source.location && $0.vendor == source.vendor }
            do {
                // The organizations and endpoints wait in files of the cache until the bundle ends.
                var reader = BrandsBundleReader(spool: try DirectorySpool(directory: directory))
                var etag: String?, lastModified: String?
                if source.isURL {
                    guard let url = URL(string: source.location) else { throw HReaderError.usage("\(source.location) is not a URL") }
                    // The download streams to a file of the cache (the limit holding as it comes),
                    // then is read from there like a bundle given as a file; the file goes either way.
                    let download = directory + "/.providers.download.\(getpid()).\(SpoolFile.next())"
                    defer { unlink(download) }
                    let answer: DirectoryBundleClient.Answer
                    do {
                        answer = try await DirectoryBundleClient(url, clients: clients)
                            .fetch(etag: previous?.etag, lastModified: previous?.lastModified, into: download)
                    } catch NetError.responseTooLarge {
                        throw Self.tooLarge(source, clients.configuration.maxResponseBytes)
                    } catch let error as NetError {
                        throw HReaderError.from(network: error)
                    }
                    switch answer {
                    case .notModified:
                        outcomes.append(ProviderSourceOutcome(source: source, result: .notModified(brands: previous?.brands ?? 0)))
                        continue
                    case let .changed(newETag, newLastModified):
                        try Self.feedFile(&reader, path: download, source, maxBytes: maxBytes)
                        etag = newETag
                        lastModified = newLastModified
                    }
                } else {
                    try Self.feedFile(&reader, path: source.location, source, maxBytes: maxBytes)
                }
                do { try reader.checkComplete() } catch {
                    throw HReaderError.badInput("\(source.location): \(error); nothing of it was kept")
                }
                parsed.append((source, reader, etag, lastModified))
            } catch let error as HReaderError {
                outcomes.append(ProviderSourceOutcome(source: source, result: .failed(error)))
            }
        }
        guard !parsed.isEmpty else {
            let summary = old?.summary
            return ProviderUpdateReport(outcomes: outcomes, brands: summary?.brands ?? 0, endpoints: 0, written: false, path: path)
        }

        // Write the whole directory beside the old one, then put it in its place.
        let temporary = directory + "/.providers.directory.\(getpid()).tmp"
        let writer = try DirectoryWriter(path: temporary)
        var committed = false
        defer { if !committed { writer.abandon() } }

        let replaced = Set(parsed.map(\.source.location))
        var records: [SourceRecord] = []
        var sourceNumbers: [String: Int] = [:]
        func number(_ source: String) -> Int {
            if let n = sourceNumbers[source] { return n }
            sourceNumbers[source] = sourceNumbers.count
            return sourceNumbers.count - 1
        }
        var written: Set<String> = []
        var endpointCount = 0
        let fetched = RFC3339.utc(Int64(now.timeIntervalSince1970))
        for i in parsed.indices {
            let source = parsed[i].source
            let n = number(source.location)
            var brands = 0, endpoints = 0
            try parsed[i].reader.finish { brand in
                let id = Self.brandID(vendor: source.vendor, resourceID: brand.resourceID)
                guard written.insert(id).inserted else { return }
                try writer.append(DirectoryBrand(id: id, vendor: source.vendor, source: source.location, brand: brand), source: n)
                brands += 1
                endpoints += brand.endpoints.count
            }
            parsed[i].reader = BrandsBundleReader()   // its ids and its files go before the next source's brands are resolved
            endpointCount += endpoints
            records.append(SourceRecord(source: source.location, vendor: source.vendor, etag: parsed[i].etag,
                                        lastModified: parsed[i].lastModified, fetched: fetched, brands: brands))
            outcomes = outcomes.filter { $0.source != source }
            outcomes.append(ProviderSourceOutcome(source: source, result: .updated(brands: brands, endpoints: endpoints)))
        }
        // The brands of the sources not read this time, as they were.
        if let old {
            var kept: [(offset: UInt64, source: Int, id: String)] = []
            old.withSections { buffer, _ in
                Self.forEachIndexLine(buffer) { line in
                    guard line.source < oldSources.count, !replaced.contains(oldSources[line.source].source) else { return true }
                    kept.append((line.offset, line.source, String(decoding: UnsafeBufferPointer(rebasing: buffer[line.id]), as: UTF8.self)))
                    return true
                }
            }
            var keptCounts: [Int: Int] = [:]
            for item in kept where item.source < oldSources.count && !replaced.contains(oldSources[item.source].source) {
                guard !written.contains(item.id), let brand = try? old.brand(at: item.offset) else { continue }
                written.insert(item.id)
                try writer.append(brand, source: number(oldSources[item.source].source))
                keptCounts[item.source, default: 0] += 1
                endpointCount += brand.brand.endpoints.count
            }
            for (i, record) in oldSources.enumerated() where !replaced.contains(record.source) && keptCounts[i] != nil {
                var record = record
                record.brands = keptCounts[i] ?? 0
                records.append(record)
            }
        }
        records.sort { (sourceNumbers[$0.source] ?? 0) < (sourceNumbers[$1.source] ?? 0) }
        let meta = JSONValue.object([("sources", .array(records.map(\.json))), ("updated", .string(fetched))])
        try writer.finish(meta: meta)
        guard rename(temporary, path) == 0 else {
            throw HReaderError(.failure, "cannot put the provider directory in place at \(path): \(String(cString: strerror(errno)))")
        }
        committed = true
        return ProviderUpdateReport(outcomes: outcomes, brands: written.count, endpoints: endpointCount, written: true, path: path)
    }

    private static func tooLarge(_ source: ProviderSource, _ limit: Int) -> HReaderError {
        HReaderError.badInput("\(source.location) is larger than \(limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit >> 10) KiB"); "
                             + "nothing of it was kept (raise --max-response-size)")
    }

    /// Feeds the bundle at `path` (the source's file, or its download) a megabyte at a time.
    private static func feedFile(_ reader: inout BrandsBundleReader, path: String, _ source: ProviderSource, maxBytes: Int) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw HReaderError.usage("cannot read \(path)") }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        guard size <= maxBytes else { throw tooLarge(source, maxBytes) }
        var total = 0
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                total += chunk.count
                guard total <= maxBytes else { throw tooLarge(source, maxBytes) }
                try chunk.withUnsafeBytes { try reader.feed($0) }
            }
        } catch let error as BrandsBundleError {
            throw HReaderError.badInput("\(source.location): \(error); nothing of it was kept")
        }
    }
}

/// Writes a directory file: the header with room for the index's offset, the brand lines as
/// they come, then the index, then the header again with the offset. Buffered; `finish` flushes
/// and syncs, `abandon` removes the file. The index lines wait in a spool file of their own
/// until the brand lines are all written; only the words and their postings stay in memory.
final class DirectoryWriter {
    private let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var position: UInt64 = 0
    private let index: SpoolFile
    private var indexBytes = 0
    /// Each folded word, and the brands it is in: the offset of the brand's line in the index section
    /// (after the sources line) × 4 + the field (0 name, 1 alias, 2 portal, 3 city).
    private var postings: [String: [UInt32]] = [:]

    init(path: String) throws {
        unlink(path)
        guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o644]),
              let handle = FileHandle(forWritingAtPath: path) else {
            throw HReaderError(.failure, "cannot write \(path)")
        }
        self.path = path
        self.handle = handle
        index = try SpoolFile(path: (path as NSString).deletingLastPathComponent + "/.providers.spool.\(getpid()).\(SpoolFile.next()).i")
        // The header's place: the index's offset is written in it at the end.
        append(Array(header(0, 0).utf8))
    }

    private func append(_ bytes: [UInt8]) {
        buffer += bytes
        position += UInt64(bytes.count)
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// The brand's line, and its index line.
    func append(_ brand: DirectoryBrand, source: Int) throws {
        // A posting is a UInt32 (the line's offset × 4 + its field): 1 GiB of index, far past any bundle's.
        guard indexBytes < Int(UInt32.max / 4) - (1 << 20) else { throw HReaderError.badInput("the provider directory's index would be over 1 GiB") }
        let offset = position
        append(Array(brand.json.serialized().utf8) + [0x0a])
        let b = brand.brand
        let cities = b.places.compactMap { $0.city }.map { DirectoryText.words($0).joined(separator: " ") }.filter { !$0.isEmpty }
        var seenCities: Set<String> = []
        let states = Set(b.places.compactMap { $0.state?.uppercased().filter { $0.isLetter } }.filter { !$0.isEmpty }).sorted()
        let fields = [
            DirectoryText.words(b.name).joined(separator: " "),
            b.aliases.flatMap(DirectoryText.words).joined(separator: " "),
            (b.portalName.map(DirectoryText.words) ?? []).joined(separator: " "),
            cities.filter { seenCities.insert($0).inserted }.joined(separator: ","),
        ]
        for (field, text) in fields.enumerated() {
            for word in Set(text.split(whereSeparator: { $0 == " " || $0 == "," })) {
                postings[String(word), default: []].append(UInt32(indexBytes * 4 + field))
            }
        }
        let r4 = b.endpoints.contains(where: \.isPatientAccessR4)
        let line = "\(offset)\t\(brand.id)\t\(source)\t\(r4 ? "r" : "-")\t\(states.joined(separator: " "))\t\(fields.joined(separator: "|"))\n"
        let bytes = Array(line.utf8)
        try index.append(bytes)
        indexBytes += bytes.count
        if buffer.count > 1 << 20 { try flush() }
    }

    private func header(_ index: UInt64, _ words: UInt64) -> String {
        func digits(_ n: UInt64) -> String { let text = String(n); return String(repeating: "0", count: 16 - text.count) + text }
        return ProviderDirectory.magic + digits(index) + ProviderDirectory.wordsMark + digits(words) + "\n"
    }

    func finish(meta: JSONValue) throws {
        // The meta line (known only now) opens the index section the header points to.
        let indexOffset = position
        append(Array(meta.serialized().utf8) + [0x0a])
        try flush()
        try index.forEachChunk { chunk in
            buffer = chunk
            position += UInt64(chunk.count)
            try flush()
        }
        let wordsOffset = position
        for word in postings.keys.sorted() {
            append(Array(word.utf8) + [0x09] + Array(postings[word]!.sorted().map(String.init).joined(separator: " ").utf8) + [0x0a])
            if buffer.count > 1 << 20 { try flush() }
        }
        postings = [:]
        try flush()
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: Array(header(indexOffset, wordsOffset).utf8))
        try handle.synchronize()
        try handle.close()
    }

    func abandon() {
        try? handle.close()
        unlink(path)
    }
}
