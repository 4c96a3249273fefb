import HReaderJSON

/// Why a brands bundle was refused. Nothing of a refused bundle is kept.
public enum BrandsBundleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not one JSON object (unbalanced, truncated, text after the end).
    case notJSON(String)
    /// A JSON object, but not a FHIR Bundle of brands.
    case notBundle(String)
    /// `entry[index]` is not a valid JSON object, or a resource in it is malformed.
    case badEntry(index: Int, String)

    public var description: String {
        switch self {
        case let .notJSON(why): return "not a JSON document: \(why)"
        case let .notBundle(why): return "not a brands bundle: \(why)"
        case let .badEntry(index, why): return "entry[\(index)]: \(why)"
        }
    }
}

/// Reads a User-access Brands bundle (SMART App Launch 2.2: `Organization` brands and the
/// `Endpoint`s they name), or a vendor's endpoint list in the same Bundle shape (Oracle Health's
/// Organization + Endpoint lists; Epic's older R4 list, Endpoints each with a contained
/// Organization), a chunk at a time: a bundle of 60,000 endpoints is read without holding it, or
/// its JSON tree, in memory. Each `entry` is cut out of the stream and parsed strictly on its own;
/// the envelope around the entries is checked for balance and for `"resourceType": "Bundle"`.
///
///     var reader = BrandsBundleReader()
///     while let chunk = try file.read(upToCount: 1 << 20) { try reader.feed(chunk) }
///     try reader.finish { brand in directory.append(brand) }
///
/// Brands are resolved at `finish`: an Organization's endpoints are its `endpoint` references
/// and its portal's `portalEndpoint`s; an affiliated brand (`partOf`) with none of its own uses
/// its parent's portal and endpoints; an Endpoint no Organization names is a brand of its own
/// (named by its contained or managing Organization, else by its own name, else its host).
public struct BrandsBundleReader {
    /// An entry larger than this is refused (a brand with its logo inline is a few hundred kB).
    public static let maxEntryBytes = 4 << 20
    /// Longest text kept of a name, alias, URL or city.
    static let maxText = 500
    static let maxAliases = 50
    static let maxPlaces = 200
    static let maxEndpointsPerBrand = 100

    // The envelope scanner.
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var started = false
    private var ended = false
    private enum Expect { case key, colon, value, scalar, comma }
    private var expect = Expect.key
    private var stringBytes: [UInt8] = []
    private var stringTooLong = false
    private var currentKey: [UInt8] = []
    private var resourceType: String?
    private var inEntryArray = false
    private var sawEntryArray = false
    private var capture: [UInt8] = []
    private var capturing = false
    private var entryIndex = 0
    private var offset = 0

    // What the entries said: the records are in the spool, here only where each id is.
    private let spool: BrandsBundleSpool
    private var organizationCount = 0
    private var endpointCount = 0
    private var organizationByID: [String: Int32] = [:]
    private var organizationByURL: [String: Int32] = [:]
    private var endpointByID: [String: Int32] = [:]
    private var endpointByURL: [String: Int32] = [:]

    /// A reader that keeps the bundle's organizations and endpoints in `spool` until `finish`
    /// (in memory unless told otherwise; `providers update` gives one of files, so that its memory
    /// does not grow with the bundle's brands).
    public init(spool: BrandsBundleSpool = MemoryBrandsBundleSpool()) {
        self.spool = spool
    }

    /// Reads the next bytes of the bundle.
    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) throws(BrandsBundleError) {
        for byte in bytes { try next(byte) }
    }

    /// The same over a buffer (not generic: a caller in another module would otherwise pay a
    /// protocol call a byte).
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(BrandsBundleError) {
        for i in 0..<bytes.count { try next(bytes[i]) }
    }

    private mutating func next(_ byte: UInt8) throws(BrandsBundleError) {
        offset += 1
        if capturing {
            try captureByte(byte)
        } else {
            try envelopeByte(byte)
        }
    }

    private mutating func captureByte(_ byte: UInt8) throws(BrandsBundleError) {
        capture.append(byte)
        if capture.count > Self.maxEntryBytes {
            throw .badEntry(index: entryIndex, "larger than \(Self.maxEntryBytes >> 20) MiB")
        }
        if inString {
            if escaped { escaped = false } else if byte == 0x5c { escaped = true } else if byte == 0x22 { inString = false }
            return
        }
        switch byte {
        case 0x22: inString = true
        case 0x7b, 0x5b: depth += 1
        case 0x7d, 0x5d:
            depth -= 1
            if depth == 2 {
                capturing = false
                try readEntry(capture)
                capture.removeAll(keepingCapacity: true)
                entryIndex += 1
                expect = .comma
            }
        default: break
        }
    }

    private mutating func envelopeByte(_ byte: UInt8) throws(BrandsBundleError) {
        if inString {
            if escaped {
                escaped = false
            } else if byte == 0x5c {
                escaped = true
            } else if byte == 0x22 {
                inString = false
                if depth == 1 { endTopString() }
                return
            }
            if depth == 1 {
                if stringBytes.count < 64 { stringBytes.append(byte) } else { stringTooLong = true }
            }
            return
        }
        switch byte {
        case 0x20, 0x0a, 0x0d, 0x09:
            if expect == .scalar { expect = .comma }
            return
        case _ where ended:
            throw .notJSON("text after the end of the bundle, at byte \(offset)")
        case _ where !started && (byte == 0xef || byte == 0xbb || byte == 0xbf):
            return   // a UTF-8 byte order mark
        case 0x7b:   // {
            if !started {
                started = true
                depth = 1
                expect = .key
                return
            }
            if inEntryArray && depth == 2 {
                guard expect == .value else { throw .notJSON("a missing comma between entries, at byte \(offset)") }
                capturing = true
                capture = [byte]
                depth = 3
                return
            }
            try valueStarts()
            depth += 1
        case 0x5b:   // [
            guard started else { throw .notJSON("a brands bundle is a JSON object, not an array") }
            if depth == 1 && expect == .value && currentKey == Array("entry".utf8) {
                guard !sawEntryArray else { throw .notBundle("two entry arrays") }
                sawEntryArray = true
                inEntryArray = true
                depth = 2
                expect = .value
                return
            }
            try valueStarts()
            depth += 1
        case 0x7d, 0x5d:   // } ]
            guard started else { throw .notJSON("unexpected '\(Character(Unicode.Scalar(byte)))' at byte \(offset)") }
            if inEntryArray && depth == 2 {
                guard byte == 0x5d else { throw .notJSON("the entry array is not closed, at byte \(offset)") }
                inEntryArray = false
                depth = 1
                expect = .comma
                return
            }
            depth -= 1
            if depth == 0 {
                guard byte == 0x7d else { throw .notJSON("unbalanced ']' at byte \(offset)") }
                ended = true
            } else if depth == 1 {
                expect = .comma
            }
        case 0x22:   // "
            guard started else { throw .notJSON("a brands bundle is a JSON object") }
            if depth == 1 {
                guard expect == .key || expect == .value else { throw .notJSON("a missing comma or colon at byte \(offset)") }
            } else if inEntryArray && depth == 2 {
                throw .badEntry(index: entryIndex, "not a JSON object")
            }
            inString = true
            stringBytes.removeAll(keepingCapacity: true)
            stringTooLong = false
        case 0x3a:   // :
            if depth == 1 {
                guard expect == .colon else { throw .notJSON("an unexpected ':' at byte \(offset)") }
                expect = .value
            }
        case 0x2c:   // ,
            if depth == 1 {
                guard expect == .comma || expect == .scalar else { throw .notJSON("an unexpected ',' at byte \(offset)") }
                expect = .key
            } else if inEntryArray && depth == 2 {
                guard expect == .comma else { throw .notJSON("an unexpected ',' in the entry array at byte \(offset)") }
                expect = .value
            }
        default:
            guard started else { throw .notJSON("a brands bundle is a JSON object") }
            if inEntryArray && depth == 2 { throw .badEntry(index: entryIndex, "not a JSON object") }
            guard byte < 0x80, byte == 0x2d || byte == 0x2b || byte == 0x2e || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7a)
                    || byte == 0x45 else {
                throw .notJSON("an unexpected byte at \(offset)")
            }
            if depth == 1 {
                // A number, true, false or null: its bytes run until a space, a comma or the end.
                if expect == .value { expect = .scalar } else if expect != .scalar {
                    throw .notJSON("an unexpected '\(Character(Unicode.Scalar(byte)))' at byte \(offset)")
                }
            }
        }
    }

    private mutating func valueStarts() throws(BrandsBundleError) {
        if depth == 1 {
            guard expect == .value else { throw .notJSON("a value where a member name belongs, at byte \(offset)") }
        }
    }

    private mutating func endTopString() {
        switch expect {
        case .key:
            currentKey = stringTooLong ? [] : stringBytes
            expect = .colon
        case .value:
            if currentKey == Array("resourceType".utf8) { resourceType = String(decoding: stringBytes, as: UTF8.self) }
            expect = .comma
        default:
            break
        }
    }

    /// Resolves the brands once the whole bundle is in, and hands each to `body`.
    public mutating func finish(_ body: (ProviderBrand) throws -> Void) throws {
        try checkComplete()
        try resolve(body)
    }

    /// Throws unless the whole bundle is in and is one: after it, `finish` fails only if `body` does.
    public func checkComplete() throws(BrandsBundleError) {
        guard started else { throw .notJSON("empty") }
        guard ended, !inString, !capturing else { throw .notJSON("cut short (the bundle does not end)") }
        guard resourceType == "Bundle" else {
            throw .notBundle(resourceType.map { "its resourceType is \($0)" } ?? "it has no resourceType")
        }
        guard organizationCount > 0 || endpointCount > 0 else { throw .notBundle("it holds no Organization and no Endpoint") }
    }

    /// Reads a whole bundle held in memory (a test, a fuzz input).
    public static func brands<Bytes: Sequence<UInt8>>(in bytes: Bytes) throws -> [ProviderBrand] {
        var reader = BrandsBundleReader()
        try reader.feed(bytes)
        var brands: [ProviderBrand] = []
        try reader.finish { brands.append($0) }
        return brands
    }

    // MARK: - Entries

    private mutating func readEntry(_ bytes: [UInt8]) throws(BrandsBundleError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes, limits: JSONParser.Limits(maxDepth: 64, maxBytes: Self.maxEntryBytes))
        } catch {
            throw .badEntry(index: entryIndex, "\(error)")
        }
        guard let entry = value.object else { throw .badEntry(index: entryIndex, "not a JSON object") }
        guard let resource = entry["resource"]?.object else { return }   // a search entry's outcome, a deleted entry
        let fullURL = Self.text(entry["fullUrl"])
        switch resource["resourceType"]?.string {
        case "Organization":
            let organization = try organization(resource, fullURL: fullURL)
            try keep { try spool.append(organization) }
            let number = Int32(organizationCount)
            organizationCount += 1
            if organizationByID[organization.id] == nil { organizationByID[organization.id] = number }
            if let url = organization.fullURL, organizationByURL[url] == nil { organizationByURL[url] = number }
        case "Endpoint":
            guard let endpoint = try endpoint(resource, fullURL: fullURL) else { return }
            try keep { try spool.append(endpoint) }
            let number = Int32(endpointCount)
            endpointCount += 1
            if endpointByID[endpoint.id] == nil { endpointByID[endpoint.id] = number }
            if let url = endpoint.fullURL, endpointByURL[url] == nil { endpointByURL[url] = number }
        default:
            return
        }
    }

    /// A spool that cannot keep a record refuses the entry (a full disk is not the bundle's fault,
    /// but nothing of the bundle can be kept either way).
    private func keep(_ body: () throws -> Void) throws(BrandsBundleError) {
        do { try body() } catch { throw .badEntry(index: entryIndex, "cannot be kept: \(error)") }
    }

    private func organization(_ resource: JSONObject, fullURL: String?) throws(BrandsBundleError) -> BrandsBundleOrganization {
        let id = Self.text(resource["id"]) ?? fullURL.map { Self.key($0, type: "Organization") } ?? "entry-\(entryIndex)"
        var organization = BrandsBundleOrganization(fullURL: Self.unusual(fullURL, type: "Organization", id: id), id: id,
                                           name: Self.text(resource["name"]),
                                           aliases: Array((resource["alias"]?.array ?? []).compactMap { Self.text($0) }.prefix(Self.maxAliases)),
                                           places: [], partOf: Self.text(resource["partOf"]?["reference"]).map { Self.key($0, type: "Organization") },
                                           endpointReferences: (resource["endpoint"]?.array ?? []).compactMap {
                                               Self.text($0["reference"]).map { Self.key($0, type: "Endpoint") }
                                           },
                                           portalName: nil, portalURL: nil, website: nil, active: resource["active"]?.bool ?? true)
        for address in (resource["address"]?.array ?? []).prefix(Self.maxPlaces) {
            let place = ProviderPlace(city: Self.text(address["city"]), state: Self.text(address["state"]))
            if (place.city != nil || place.state != nil) && !organization.places.contains(place) { organization.places.append(place) }
        }
        organization.website = (resource["telecom"]?.array ?? []).first { $0["system"]?.string == "url" }.flatMap { Self.webURL($0["value"]) }
        for extensionValue in resource["extension"]?.array ?? [] {
            guard let url = extensionValue["url"]?.string, url.hasSuffix("organization-portal") || url.hasSuffix("/portal") else { continue }
            for part in extensionValue["extension"]?.array ?? [] {
                switch part["url"]?.string {
                case "portalName": organization.portalName = organization.portalName ?? Self.text(part["valueString"])
                case "portalUrl": organization.portalURL = organization.portalURL ?? Self.webURL(part["valueUrl"])
                case "portalEndpoint":
                    if let reference = Self.text(part["valueReference"]?["reference"]) {
                        organization.endpointReferences.append(Self.key(reference, type: "Endpoint"))
                    }
                default: break
                }
            }
        }
        return organization
    }

    private func endpoint(_ resource: JSONObject, fullURL: String?) throws(BrandsBundleError) -> BrandsBundleEndpoint? {
        guard let address = Self.webURL(resource["address"]) else { return nil }   // not a web address: nothing to log in to
        if let type = resource["connectionType"]?["code"]?.string, type != "hl7-fhir-rest" { return nil }
        var version: String?
        for extensionValue in resource["extension"]?.array ?? [] {
            if let url = extensionValue["url"]?.string, url.hasSuffix("endpoint-fhir-version") || url.hasSuffix("/fhir-version") {
                version = Self.text(extensionValue["valueCode"])
            }
        }
        version = version ?? Self.versionFromAddress(address)
        let id = Self.text(resource["id"]) ?? fullURL.map { Self.key($0, type: "Endpoint") } ?? address
        // Epic's list names the organization in a contained resource its managingOrganization points to.
        var organizationName: String?
        let managing = resource["managingOrganization"]
        if let reference = managing?["reference"]?.string {
            let local = reference.hasPrefix("#") ? String(reference.dropFirst()) : reference
            organizationName = (resource["contained"]?.array ?? []).first {
                $0["resourceType"]?.string == "Organization" && $0["id"]?.string == local
            }.flatMap { Self.text($0["name"]) }
        }
        organizationName = organizationName ?? Self.text(managing?["display"])
        let endpoint = ProviderEndpoint(url: address, fhirVersion: version, status: Self.text(resource["status"]) ?? "active",
                                        name: Self.text(resource["name"]))
        return BrandsBundleEndpoint(fullURL: Self.unusual(fullURL, type: "Endpoint", id: id), id: id, endpoint: endpoint,
                           organizationName: organizationName)
    }

    /// A reference as it is kept: the id it names when it is `Type/id` or ends so, else itself.
    static func key(_ reference: String, type: String) -> String {
        let parts = reference.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[parts.count - 2] == type, let id = parts.last, !id.isEmpty else { return reference }
        return String(id)
    }

    /// An entry's fullUrl when a reference by it would not name the resource's id (`urn:uuid:…`).
    private static func unusual(_ fullURL: String?, type: String, id: String) -> String? {
        guard let fullURL, key(fullURL, type: type) != id else { return nil }
        return fullURL
    }

    /// `…/R4`, `…/api/FHIR/DSTU2/`, `…/r4/tenant/`: the version the address names.
    static func versionFromAddress(_ address: String) -> String? {
        let segments = address.lowercased().split(separator: "/").map(String.init)
        if segments.contains("r4") { return "4.0.1" }
        if segments.contains("dstu2") || segments.contains("r2") { return "1.0.2" }
        if segments.contains("stu3") || segments.contains("r3") || segments.contains("dstu3") { return "3.0.2" }
        return nil
    }

    /// A non-empty string, trimmed, control characters out, at most `maxText` characters.
    static func text(_ value: JSONValue?) -> String? {
        guard let string = value?.string else { return nil }
        var out = ""
        var space = false
        for scalar in string.unicodeScalars {
            if scalar.value < 0x20 || (scalar.value >= 0x7f && scalar.value < 0xa0) || scalar.properties.generalCategory == .format
                || scalar == " " {
                space = !out.isEmpty
                continue
            }
            if space { out.unicodeScalars.append(" ") }
            space = false
            out.unicodeScalars.append(scalar)
            if out.unicodeScalars.count >= maxText { break }
        }
        return out.isEmpty ? nil : out
    }

    /// An http(s) URL with a host, or nil.
    static func webURL(_ value: JSONValue?) -> String? {
        guard let text = text(value), !text.contains(" ") else { return nil }
        let lower = text.lowercased()
        guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { return nil }
        let rest = lower.drop { $0 != ":" }.dropFirst(3)
        guard let host = rest.split(separator: "/", maxSplits: 1).first, !host.isEmpty else { return nil }
        return text
    }

    // MARK: - Resolving

    /// The first organization (or endpoint) a reference names, by id or by an unusual fullUrl
    /// (as if one table held both, in the bundle's order).
    private static func lookup(_ key: String, _ byID: [String: Int32], _ byURL: [String: Int32]) -> Int? {
        switch (byID[key], byURL[key]) {
        case let (a?, b?): return Int(min(a, b))
        case let (a?, nil), let (nil, a?): return Int(a)
        case (nil, nil): return nil
        }
    }

    /// The endpoints an organization names itself, each once, in its order.
    private func ownEndpoints(_ organization: BrandsBundleOrganization) -> [Int] {
        var seen: Set<Int> = []
        return organization.endpointReferences.compactMap { reference in
            guard let i = Self.lookup(reference, endpointByID, endpointByURL), seen.insert(i).inserted else { return nil }
            return i
        }
    }

    /// Three passes over the spool, one record in memory at a time besides the ids: which
    /// endpoints an organization names; each organization's brand (its parents read again when
    /// it inherits their portal); then each endpoint no organization names, as a brand of its own.
    private func resolve(_ body: (ProviderBrand) throws -> Void) throws {
        try spool.finishWriting()
        var named = [Bool](repeating: false, count: endpointCount)
        for i in 0..<organizationCount {
            for e in ownEndpoints(try spool.organization(i)) { named[e] = true }
        }
        for i in 0..<organizationCount {
            let organization = try spool.organization(i)
            guard organizationByID[organization.id] == Int32(i) else { continue }   // an id seen before
            var parentName: String?
            var portalName = organization.portalName
            var portalURL = organization.portalURL
            var list = ownEndpoints(organization)
            if let reference = organization.partOf, var parent = Self.lookup(reference, organizationByID, organizationByURL), parent != i {
                var above = try spool.organization(parent)
                parentName = above.name
                // An affiliated brand without endpoints of its own logs in through its parent's portal (up a few levels).
                var hops = 0
                while list.isEmpty, hops < 8 {
                    list = ownEndpoints(above)
                    portalName = portalName ?? above.portalName
                    portalURL = portalURL ?? above.portalURL
                    guard let next = above.partOf.flatMap({ Self.lookup($0, organizationByID, organizationByURL) }), next != parent else { break }
                    parent = next
                    above = try spool.organization(parent)
                    hops += 1
                }
            }
            guard let name = organization.name ?? portalName else { continue }
            try body(ProviderBrand(resourceID: organization.id, name: name, aliases: organization.aliases, portalName: portalName,
                                   portalURL: portalURL, website: organization.website, places: organization.places,
                                   affiliatedWith: parentName,
                                   endpoints: try list.prefix(Self.maxEndpointsPerBrand).map { try spool.endpoint($0).endpoint },
                                   active: organization.active))
        }
        var seenIDs: Set<String> = []
        for i in 0..<endpointCount where !named[i] {
            let endpoint = try spool.endpoint(i)
            guard seenIDs.insert(endpoint.id).inserted else { continue }
            let host = endpoint.endpoint.url.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
            let name = endpoint.organizationName ?? endpoint.endpoint.name ?? host ?? endpoint.endpoint.url
            try body(ProviderBrand(resourceID: endpoint.id, name: name, endpoints: [endpoint.endpoint]))
        }
    }
}
