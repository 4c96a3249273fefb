import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderRecords

/// The directory of patient-access endpoints: public data the vendors publish, kept apart from
/// the vault in the user's cache (`$XDG_CACHE_HOME/hreader/providers.directory`, else
/// `~/.cache/hreader/`). Nothing about the user is in it: no search, no login, no client id.
/// Its format is hreader's own (docs/formats.md, "The provider directory"):
///
///     hreader-providers 1 K=0000000000012345 W=0000000000012999   (fixed width: where the index and the words start)
///     {"id": "epic-3fa9…", "name": …}              (one brand a line, JSON)
///     …
///     {"sources": [...], "updated": "..."}         (at K: each source's location, vendor, ETag, Last-Modified)
///     58\tepic-3fa9…\t0\tr\tWI IA\tname words|alias words|portal words|city words,other city
///     …                                            (the index: one line a brand)
///     hospital\t0 5 9 …                            (at W: each word once, with the brands it is in)
///
/// A search compares the query with each word once (the words section), takes the brands of the
/// words that match from their lists, reads the index lines of those brands and then only the
/// lines of its hits; no password, no SQLite. The file is replaced whole (a temporary file beside it, then a rename):
/// an update that fails leaves the last good directory in place.
public struct ProviderDirectory: Sendable {
    public let path: String
    static let magic = "hreader-providers 1 K="
    static let wordsMark = " W="
    static let headerLength = magic.utf8.count + 16 + wordsMark.utf8.count + 16 + 1

    public init(path: String) { self.path = path }

    /// `$XDG_CACHE_HOME/hreader/providers.directory` (an absolute XDG_CACHE_HOME), else `~/.cache/hreader/…`.
    public static func defaultLocation(environment: (String) -> String?) -> ProviderDirectory {
        let cache: String
        if let xdg = environment("XDG_CACHE_HOME"), xdg.hasPrefix("/") {
            cache = xdg
        } else {
            cache = (environment("HOME") ?? NSHomeDirectory()) + "/.cache"
        }
        return ProviderDirectory(path: cache + "/hreader/providers.directory")
    }

    public var exists: Bool { FileManager.default.fileExists(atPath: path) }

    // MARK: - What a source was

    /// A source as the directory remembers it, for the next conditional GET.
    public struct SourceRecord: Sendable, Equatable {
        public var source: String
        public var vendor: String
        public var etag: String?
        public var lastModified: String?
        public var fetched: String
        public var brands: Int

        var json: JSONValue {
            .object([("source", .string(source)), ("vendor", .string(vendor)), ("etag", .text(etag)), ("last_modified", .text(lastModified)),
                     ("fetched", .string(fetched)), ("brands", .int(brands))])
        }

        init(source: String, vendor: String, etag: String?, lastModified: String?, fetched: String, brands: Int) {
            self.source = source
            self.vendor = vendor
            self.etag = etag
            self.lastModified = lastModified
            self.fetched = fetched
            self.brands = brands
        }

        init?(_ value: JSONValue) {
            guard let source = value["source"]?.string, let vendor = value["vendor"]?.string else { return nil }
            self.init(source: source, vendor: vendor, etag: value["etag"]?.string, lastModified: value["last_modified"]?.string,
                      fetched: value["fetched"]?.string ?? "", brands: value["brands"]?.int ?? 0)
        }
    }

    /// The header's facts: the sources and when the directory was last written.
    public struct Summary: Sendable {
        public var sources: [SourceRecord]
        public var updated: String?
        public var brands: Int { sources.reduce(0) { $0 + $1.brands } }
    }

    // MARK: - Reading

    /// An open directory file, mapped (a search touches only the pages it reads): its header read,
    /// its index, words and brand lines at hand. The update's rename does not disturb a mapping.
    struct Reader {
        let summary: Summary
        private let file: Data
        private let indexRange: Range<Int>
        private let wordsRange: Range<Int>

        init(path: String) throws {
            guard FileManager.default.fileExists(atPath: path) else { throw ProviderDirectory.missing() }
            let damaged = HReaderError(.failure, "the provider directory \(path) is damaged; run 'hreader providers update' to fetch it again")
            guard let file = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { throw damaged }
            let k = ProviderDirectory.magic.utf8.count, w = k + 16 + ProviderDirectory.wordsMark.utf8.count
            let parsed: (Range<Int>, Range<Int>, JSONValue)? = file.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                guard bytes.count >= ProviderDirectory.headerLength, bytes.starts(with: ProviderDirectory.magic.utf8),
                      let offset = Int(String(decoding: UnsafeBufferPointer(rebasing: bytes[k..<k + 16]), as: UTF8.self)),
                      let words = Int(String(decoding: UnsafeBufferPointer(rebasing: bytes[w..<w + 16]), as: UTF8.self)),
                      offset >= ProviderDirectory.headerLength, words >= offset, words <= bytes.count,
                      let end = bytes[offset..<words].firstIndex(of: 0x0a),
                      let meta = try? JSONParser.parse(UnsafeBufferPointer(rebasing: bytes[offset..<end])) else { return nil }
                return ((end + 1)..<words, words..<bytes.count, meta)
            }
            guard let (index, words, meta) = parsed else { throw damaged }
            self.file = file
            indexRange = index
            wordsRange = words
            summary = Summary(sources: (meta["sources"]?.array ?? []).compactMap(SourceRecord.init), updated: meta["updated"]?.string)
        }

        /// The index section, copied (about 80 bytes a brand).
        func index() throws -> [UInt8] { withSections { index, _ in Array(index) } }

        /// The index and words sections, in place.
        func withSections<T>(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
            try file.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                return try body(UnsafeBufferPointer(rebasing: bytes[indexRange]), UnsafeBufferPointer(rebasing: bytes[wordsRange]))
            }
        }

        /// The brand line at `offset`.
        func brandLine(at offset: UInt64) throws -> [UInt8] {
            file.withUnsafeBytes { raw in
                let bytes = raw.bindMemory(to: UInt8.self)
                let start = min(Int(offset), bytes.count)
                let end = bytes[start...].firstIndex(of: 0x0a) ?? bytes.count
                return Array(bytes[start..<end])
            }
        }

        func brand(at offset: UInt64) throws -> DirectoryBrand {
            guard let brand = DirectoryBrand(json: try? JSONParser.parse(try brandLine(at: offset))) else {
                throw HReaderError(.failure, "the provider directory is damaged; run 'hreader providers update' to fetch it again")
            }
            return brand
        }

        func close() {}
    }

    static func missing() -> HReaderError {
        HReaderError(.failure, "no provider directory yet; run 'hreader providers update' (or 'hreader providers update --from FILE')")
    }

    /// The sources and counts, or nil when there is no directory yet.
    public func summary() throws -> Summary? {
        guard exists else { return nil }
        let reader = try Reader(path: path)
        defer { reader.close() }
        return reader.summary
    }

    /// One index line's fields, as byte ranges of the index.
    struct IndexLine {
        var offset: UInt64
        var id: Range<Int>
        var source: Int
        var r4: Bool
        var states: Range<Int>
        var words: Range<Int>
    }

    /// Calls `body` with each index line (stops when it returns false).
    static func forEachIndexLine(_ index: UnsafeBufferPointer<UInt8>, _ body: (IndexLine) -> Bool) {
        var start = 0
        let count = index.count
        while start < count {
            var end = start
            while end < count && index[end] != 0x0a { end += 1 }
            if let line = indexLine(index, start, end), !body(line) { return }
            start = end + 1
        }
    }

    /// The line of `index` from `start` to `end` (its newline), or nil when it is not one.
    static func indexLine(_ index: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> IndexLine? {
        // The five tabs, without an array per line (a search may read 40,000 lines).
        var tabs = (0, 0, 0, 0, 0)
        var found = 0
        var i = start
        while i < end && found < 5 {
            if index[i] == 0x09 {
                switch found {
                case 0: tabs.0 = i
                case 1: tabs.1 = i
                case 2: tabs.2 = i
                case 3: tabs.3 = i
                default: tabs.4 = i
                }
                found += 1
            }
            i += 1
        }
        guard found == 5, tabs.2 + 1 < end else { return nil }
        var offset: UInt64 = 0
        for j in start..<tabs.0 { offset = offset &* 10 &+ UInt64(index[j] &- 0x30) }
        var source = 0
        for j in (tabs.1 + 1)..<tabs.2 { source = source &* 10 &+ Int(index[j] &- 0x30) }
        return IndexLine(offset: offset, id: (tabs.0 + 1)..<tabs.1, source: source, r4: index[tabs.2 + 1] == 0x72,
                         states: (tabs.3 + 1)..<tabs.4, words: (tabs.4 + 1)..<end)
    }

    /// The brand with this id.
    public func brand(id: String) throws -> DirectoryBrand? {
        guard exists else { throw Self.missing() }
        let reader = try Reader(path: path)
        defer { reader.close() }
        let index = try reader.index()
        let wanted = Array(id.utf8)
        var found: UInt64?
        index.withUnsafeBufferPointer { buffer in
            Self.forEachIndexLine(buffer) { line in
                if line.id.count == wanted.count && buffer[line.id].elementsEqual(wanted) {
                    found = line.offset
                    return false
                }
                return true
            }
        }
        return try found.map { try reader.brand(at: $0) }
    }

    // MARK: - Ids

    /// A brand's id: its vendor and a digest of its resource id there (`epic-3fa94c0d12`), the
    /// same at every update while the vendor keeps the resource's id.
    public static func brandID(vendor: String, resourceID: String) -> String {
        let digest = SHA256.hash(Array("\(vendor)\n\(resourceID)".utf8))
        return "\(vendor)-" + digest.prefix(5).map { String(format: "%02x", $0) }.joined()
    }

    /// A vendor's name as ids and settings keys use it: lower-case letters, digits and '-'.
    public static func vendorSlug(_ name: String) throws -> String {
        let slug = String(name.lowercased().unicodeScalars.filter { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "-" })
        guard !slug.isEmpty, slug.count <= 40, slug.unicodeScalars.count == name.unicodeScalars.count else {
            throw HReaderError.usage("'\(name)' is not a vendor name (letters, digits and '-', such as epic or oracle)")
        }
        return slug
    }
}

/// A brand as the directory keeps it: the brand, its id, the vendor and source it came from.
public struct DirectoryBrand: Sendable, Equatable {
    public var id: String
    public var vendor: String
    public var source: String
    public var brand: ProviderBrand

    public init(id: String, vendor: String, source: String, brand: ProviderBrand) {
        self.id = id
        self.vendor = vendor
        self.source = source
        self.brand = brand
    }

    /// The endpoint a login uses: the first active R4 one.
    public var patientAccessEndpoint: ProviderEndpoint? { brand.endpoints.first(where: \.isPatientAccessR4) }

    /// Whether hreader can log in: "yes" (an active R4 endpoint), "inactive" (an R4 endpoint, not
    /// active), "no (DSTU2 (1.0.2))" (other versions only), "no endpoint". The search table's R4
    /// column and the web view's results say it.
    public var r4Text: String {
        if patientAccessEndpoint != nil { return "yes" }
        if brand.endpoints.isEmpty { return "no endpoint" }
        if brand.endpoints.contains(where: \.isR4) { return "inactive" }
        return "no (" + Set(brand.endpoints.map(\.versionName)).sorted().joined(separator: ", ") + ")"
    }

    /// The place shown for the brand: the first of its places (in `state` when one is asked).
    public func place(in state: String? = nil) -> ProviderPlace? {
        if let state, let match = brand.places.first(where: { $0.state?.uppercased() == state.uppercased() }) { return match }
        return brand.places.first
    }

    /// The line kept in the directory (and the whole brand `providers show --json` gives).
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("vendor", .string(vendor)), ("source", .string(source)), ("name", .string(brand.name)),
            ("aliases", .strings(brand.aliases)), ("portal", .text(brand.portalName)), ("portal_url", .text(brand.portalURL)),
            ("website", .text(brand.website)),
            ("places", .array(brand.places.map { .object([("city", .text($0.city)), ("state", .text($0.state))]) })),
            ("affiliated_with", .text(brand.affiliatedWith)), ("active", .bool(brand.active)),
            ("endpoints", .array(brand.endpoints.map(Self.json))),
        ])
    }

    /// `{"id", "name", "aliases", "portal", "city", "state", "vendor", "endpoints": [{"url", "fhir_version", "status"}]}`:
    /// a search hit (issue 38's shape).
    public func hitJSON(state: String? = nil) -> JSONValue {
        let place = place(in: state)
        return .object([
            ("id", .string(id)), ("name", .string(brand.name)), ("aliases", .strings(brand.aliases)), ("portal", .text(brand.portalName)),
            ("city", .text(place?.city)), ("state", .text(place?.state)), ("vendor", .string(vendor)),
            ("endpoints", .array(brand.endpoints.map { .object([("url", .string($0.url)), ("fhir_version", .text($0.fhirVersion)),
                                                                ("status", .string($0.status))]) })),
        ])
    }

    static func json(_ endpoint: ProviderEndpoint) -> JSONValue {
        .object([("url", .string(endpoint.url)), ("fhir_version", .text(endpoint.fhirVersion)), ("status", .string(endpoint.status)),
                 ("name", .text(endpoint.name))])
    }

    init?(json value: JSONValue?) {
        guard let value, let id = value["id"]?.string, let name = value["name"]?.string else { return nil }
        let endpoints = (value["endpoints"]?.array ?? []).compactMap { item -> ProviderEndpoint? in
            guard let url = item["url"]?.string else { return nil }
            return ProviderEndpoint(url: url, fhirVersion: item["fhir_version"]?.string, status: item["status"]?.string ?? "active",
                                    name: item["name"]?.string)
        }
        let brand = ProviderBrand(resourceID: "", name: name, aliases: (value["aliases"]?.array ?? []).compactMap(\.string),
                                  portalName: value["portal"]?.string, portalURL: value["portal_url"]?.string, website: value["website"]?.string,
                                  places: (value["places"]?.array ?? []).map { ProviderPlace(city: $0["city"]?.string, state: $0["state"]?.string) },
                                  affiliatedWith: value["affiliated_with"]?.string, endpoints: endpoints, active: value["active"]?.bool ?? true)
        self.init(id: id, vendor: value["vendor"]?.string ?? "", source: value["source"]?.string ?? "", brand: brand)
    }
}
