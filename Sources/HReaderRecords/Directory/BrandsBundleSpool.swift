import HReaderJSON

// What a brands bundle's reader keeps of each entry until the bundle has been read, and where it
// keeps it. A brand may name an endpoint that comes later in the bundle, so nothing can be
// resolved before the end; what is kept is small on purpose: references are kept as the id they
// name (`Endpoint/x`, `https://…/Endpoint/x` → `x`), a fullUrl only when it is not `…/Type/id`.

/// An `Organization` entry as the reader keeps it.
public struct BrandsBundleOrganization: Sendable, Equatable {
    public var fullURL: String?
    public var id: String
    public var name: String?
    public var aliases: [String]
    public var places: [ProviderPlace]
    public var partOf: String?
    public var endpointReferences: [String]
    public var portalName: String?
    public var portalURL: String?
    public var website: String?
    public var active: Bool
}

/// An `Endpoint` entry as the reader keeps it.
public struct BrandsBundleEndpoint: Sendable, Equatable {
    public var fullURL: String?
    public var id: String
    public var endpoint: ProviderEndpoint
    /// The name of its contained or managing Organization (Epic's endpoint-only list).
    public var organizationName: String?
}

/// Where a `BrandsBundleReader` keeps the organizations and endpoints until `finish`: records
/// numbered from 0 in the order appended, each kind on its own. Reads come only after
/// `finishWriting`, one record at a time, in any order.
///
/// `MemoryBrandsBundleSpool` keeps them in arrays (a test, a fuzz input, a small bundle);
/// `providers update` keeps them in files of the cache (HReaderKit), so that a bundle of
/// 60,000 endpoints costs its ids in memory, not its records.
public protocol BrandsBundleSpool: AnyObject {
    func append(_ organization: BrandsBundleOrganization) throws
    func append(_ endpoint: BrandsBundleEndpoint) throws
    func finishWriting() throws
    func organization(_ number: Int) throws -> BrandsBundleOrganization
    func endpoint(_ number: Int) throws -> BrandsBundleEndpoint
}

/// The records in arrays.
public final class MemoryBrandsBundleSpool: BrandsBundleSpool {
    private var organizations: [BrandsBundleOrganization] = []
    private var endpoints: [BrandsBundleEndpoint] = []

    public init() {}

    public func append(_ organization: BrandsBundleOrganization) { organizations.append(organization) }
    public func append(_ endpoint: BrandsBundleEndpoint) { endpoints.append(endpoint) }
    public func finishWriting() {}
    public func organization(_ number: Int) -> BrandsBundleOrganization { organizations[number] }
    public func endpoint(_ number: Int) -> BrandsBundleEndpoint { endpoints[number] }
}

// MARK: - A record as bytes

/// Why a spooled record did not read back (a spool file changed under the reader).
public struct BrandsBundleSpoolError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

extension BrandsBundleOrganization {
    /// One line of compact JSON (HReaderJSON), without its newline: what a file spool writes.
    public var encoded: [UInt8] {
        JSONValue.array([
            .text(fullURL), .string(id), .text(name), .strings(aliases),
            .array(places.map { .array([.text($0.city), .text($0.state)]) }),
            .text(partOf), .strings(endpointReferences), .text(portalName), .text(portalURL), .text(website), .bool(active),
        ]).serializedBytes()
    }

    public init<Bytes: Collection<UInt8>>(decoding bytes: Bytes) throws {
        guard let items = try? JSONParser.parse(bytes).array, items.count == 11, let id = items[1].string,
              let aliases = items[3].array, let places = items[4].array, let references = items[6].array, let active = items[10].bool else {
            throw BrandsBundleSpoolError(description: "a spooled organization does not read back")
        }
        self.init(fullURL: items[0].string, id: id, name: items[2].string, aliases: aliases.compactMap(\.string),
                  places: places.map { ProviderPlace(city: $0[0]?.string, state: $0[1]?.string) }, partOf: items[5].string,
                  endpointReferences: references.compactMap(\.string), portalName: items[7].string, portalURL: items[8].string,
                  website: items[9].string, active: active)
    }
}

extension BrandsBundleEndpoint {
    /// One line of compact JSON (HReaderJSON), without its newline: what a file spool writes.
    public var encoded: [UInt8] {
        JSONValue.array([
            .text(fullURL), .string(id), .string(endpoint.url), .text(endpoint.fhirVersion), .string(endpoint.status),
            .text(endpoint.name), .text(organizationName),
        ]).serializedBytes()
    }

    public init<Bytes: Collection<UInt8>>(decoding bytes: Bytes) throws {
        guard let items = try? JSONParser.parse(bytes).array, items.count == 7, let id = items[1].string, let url = items[2].string,
              let status = items[4].string else {
            throw BrandsBundleSpoolError(description: "a spooled endpoint does not read back")
        }
        self.init(fullURL: items[0].string, id: id,
                  endpoint: ProviderEndpoint(url: url, fhirVersion: items[3].string, status: status, name: items[5].string),
                  organizationName: items[6].string)
    }
}
