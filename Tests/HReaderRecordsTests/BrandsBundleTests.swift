import Foundation
import HReaderJSON
@testable import HReaderRecords
import XCTest

/// The User-access Brands reader (SMART App Launch 2.2) over bundles written here in the IG's
/// shape, and the folding and typo rules of the directory's search.
final class BrandsBundleTests: XCTestCase {
    private func organization(_ id: String, _ name: String, extra: [(String, JSONValue)] = []) -> JSONValue {
        ["fullUrl": .string("https://ehr.example.org/Organization/\(id)"),
         "resource": .object(JSONObject([("resourceType", "Organization"), ("id", .string(id)), ("name", .string(name))] + extra))]
    }

    private func endpoint(_ id: String, _ address: String, version: String? = "4.0.1", status: String = "active") -> JSONValue {
        var resource: JSONObject = [("resourceType", "Endpoint"), ("id", .string(id)), ("status", .string(status)), ("address", .string(address)),
                                    ("connectionType", ["system": "http://terminology.hl7.org/CodeSystem/endpoint-connection-type", "code": "hl7-fhir-rest"])]
        if let version {
            resource["extension"] = [["url": "http://hl7.org/fhir/StructureDefinition/endpoint-fhir-version", "valueCode": .string(version)]]
        }
        return ["fullUrl": .string("https://ehr.example.org/Endpoint/\(id)"), "resource": .object(resource)]
    }

    private func bundle(_ entries: [JSONValue]) -> [UInt8] {
        Array(JSONValue.object(["resourceType": "Bundle", "type": "collection", "entry": .array(entries)]).serialized(pretty: true).utf8)
    }

    private var health: [UInt8] {
        bundle([
            organization("parent", "Lakeside Health", extra: [
                ("alias", ["Lakeside", "LH System"]),
                ("address", [["city": "Madison", "state": "WI"], ["city": "Dubuque", "state": "IA"], ["city": "Madison", "state": "WI"]]),
                ("extension", [["url": "http://hl7.org/fhir/StructureDefinition/organization-portal", "extension": [
                    ["url": "portalName", "valueString": "MyLakeside"], ["url": "portalUrl", "valueUrl": "https://my.lakeside.example.org"],
                    ["url": "portalEndpoint", "valueReference": ["reference": "Endpoint/r4"]],
                ]]]),
                ("endpoint", [["reference": "Endpoint/r2"], ["reference": "https://ehr.example.org/Endpoint/r4"]]),
            ]),
            organization("clinic", "Lakeside Family Clinic", extra: [("partOf", ["reference": "Organization/parent"])]),
            organization("old", "Old Town Medical", extra: [("endpoint", [["reference": "Endpoint/old-r2"]])]),
            endpoint("r4", "https://ehr.example.org/api/FHIR/R4/"),
            endpoint("r2", "https://ehr.example.org/api/FHIR/DSTU2/", version: "1.0.2"),
            endpoint("old-r2", "https://old.example.org/fhir", version: "1.0.2"),
            endpoint("lonely", "https://lonely.example.org/r4/tenant", version: nil, status: "off"),
            endpoint("ftp", "ftp://nowhere.example.org/"),
        ])
    }

    /// A spool that keeps each record only as the bytes a file spool writes (`providers update`
    /// keeps them in files of the cache): what comes back is what went in.
    private final class BytesSpool: BrandsBundleSpool {
        var organizations: [[UInt8]] = []
        var endpoints: [[UInt8]] = []
        var finished = false
        func append(_ organization: BrandsBundleOrganization) throws {
            XCTAssertEqual(try BrandsBundleOrganization(decoding: organization.encoded), organization)
            organizations.append(organization.encoded)
        }
        func append(_ endpoint: BrandsBundleEndpoint) throws {
            XCTAssertEqual(try BrandsBundleEndpoint(decoding: endpoint.encoded), endpoint)
            endpoints.append(endpoint.encoded)
        }
        func finishWriting() { finished = true }
        func organization(_ number: Int) throws -> BrandsBundleOrganization {
            XCTAssertTrue(finished, "read only once the writing is over")
            return try BrandsBundleOrganization(decoding: organizations[number])
        }
        func endpoint(_ number: Int) throws -> BrandsBundleEndpoint {
            XCTAssertTrue(finished, "read only once the writing is over")
            return try BrandsBundleEndpoint(decoding: endpoints[number])
        }
    }

    func testASpoolOfBytesGivesTheSameBrandsAsMemoryWhateverTheOrder() throws {
        // Brands before and after the endpoints they name, a parent after its affiliate, a urn:uuid fullUrl.
        let entries: [JSONValue] = [
            organization("clinic", "Lakeside Family Clinic", extra: [("partOf", ["reference": "Organization/parent"]),
                                                                     ("address", [["city": "Madison", "state": "WI"]])]),
            endpoint("r4", "https://ehr.example.org/api/FHIR/R4/"),
            organization("parent", "Lakeside Health", extra: [("alias", ["LH"]), ("endpoint", [["reference": "Endpoint/r4"], ["reference": "urn:uuid:7"]])]),
            ["fullUrl": "urn:uuid:7", "resource": ["resourceType": "Endpoint", "status": "active", "address": "https://ehr.example.org/r4/b",
                                                    "connectionType": ["code": "hl7-fhir-rest"]]],
            endpoint("lonely", "https://lonely.example.org/r4/tenant", version: nil, status: "off"),
        ]
        for bytes in [bundle(entries), health] {
            let memory = try BrandsBundleReader.brands(in: bytes)
            var reader = BrandsBundleReader(spool: BytesSpool())
            try reader.feed(bytes)
            var spooled: [ProviderBrand] = []
            try reader.finish { spooled.append($0) }
            XCTAssertEqual(spooled, memory)
            XCTAssertFalse(memory.isEmpty)
        }
        let brands = try BrandsBundleReader.brands(in: bundle(entries))
        XCTAssertEqual(brands.map(\.name), ["Lakeside Family Clinic", "Lakeside Health", "lonely.example.org"])
        XCTAssertEqual(brands[0].endpoints.map(\.url), ["https://ehr.example.org/api/FHIR/R4/", "https://ehr.example.org/r4/b"],
                       "the affiliate logs in through its parent, named after it in the bundle")
        XCTAssertEqual(brands[0].affiliatedWith, "Lakeside Health")
    }

    func testBrandsHaveTheirEndpointsAliasesPlacesAndPortal() throws {
        let brands = try BrandsBundleReader.brands(in: health)
        XCTAssertEqual(brands.map(\.name), ["Lakeside Health", "Lakeside Family Clinic", "Old Town Medical", "lonely.example.org"])
        let parent = brands[0]
        XCTAssertEqual(parent.aliases, ["Lakeside", "LH System"])
        XCTAssertEqual(parent.places, [ProviderPlace(city: "Madison", state: "WI"), ProviderPlace(city: "Dubuque", state: "IA")], "a repeated place is kept once")
        XCTAssertEqual(parent.portalName, "MyLakeside")
        XCTAssertEqual(parent.portalURL, "https://my.lakeside.example.org")
        XCTAssertEqual(parent.endpoints.map(\.url), ["https://ehr.example.org/api/FHIR/DSTU2/", "https://ehr.example.org/api/FHIR/R4/"],
                       "a reference by fullUrl and one by Type/id find the same endpoint once")
        XCTAssertEqual(parent.endpoints.map(\.fhirVersion), ["1.0.2", "4.0.1"])
        XCTAssertTrue(parent.endpoints[1].isPatientAccessR4)
    }

    func testAnAffiliatedBrandUsesItsParentsPortalAndEndpoints() throws {
        let clinic = try XCTUnwrap(try BrandsBundleReader.brands(in: health).first { $0.name == "Lakeside Family Clinic" })
        XCTAssertEqual(clinic.affiliatedWith, "Lakeside Health")
        XCTAssertEqual(clinic.portalName, "MyLakeside")
        XCTAssertEqual(clinic.endpoints.filter(\.isPatientAccessR4).map(\.url), ["https://ehr.example.org/api/FHIR/R4/"])
    }

    func testAnEndpointNoBrandNamesIsABrandOfItsOwnAndNonWebAddressesAreDropped() throws {
        let brands = try BrandsBundleReader.brands(in: health)
        XCTAssertEqual(brands.count, 4)
        let lonely = try XCTUnwrap(brands.last)
        XCTAssertEqual(lonely.endpoints.map(\.url), ["https://lonely.example.org/r4/tenant"])
        XCTAssertEqual(lonely.endpoints.first?.fhirVersion, "4.0.1", "the version read from the address")
        XCTAssertFalse(lonely.endpoints[0].isPatientAccessR4, "an endpoint that is off is no way in")
        XCTAssertFalse(brands.contains { $0.endpoints.contains { $0.url.hasPrefix("ftp:") } })
    }

    func testEpicsEndpointListNamesEachBrandByItsContainedOrganization() throws {
        let entry: JSONValue = ["resource": [
            "resourceType": "Endpoint", "id": "e1", "status": "active", "address": "https://haiku.example.org/FHIR/api/FHIR/R4/",
            "name": "Endpoint name", "managingOrganization": ["reference": "#org1"],
            "contained": [["resourceType": "Organization", "id": "org1", "name": "Waco Family Medicine"]],
        ]]
        let brands = try BrandsBundleReader.brands(in: bundle([entry]))
        XCTAssertEqual(brands.map(\.name), ["Waco Family Medicine"])
        XCTAssertEqual(brands.first?.endpoints.first?.fhirVersion, "4.0.1")
    }

    func testChunksOfAnySizeReadTheSame() throws {
        let bytes = health
        let whole = try BrandsBundleReader.brands(in: bytes)
        for size in [1, 2, 7, 64, 1000] {
            var reader = BrandsBundleReader()
            var start = 0
            while start < bytes.count {
                try reader.feed(bytes[start..<min(bytes.count, start + size)])
                start += size
            }
            var brands: [ProviderBrand] = []
            try reader.finish { brands.append($0) }
            XCTAssertEqual(brands, whole, "chunks of \(size) bytes")
        }
    }

    func testMalformedBundlesAreRefused() {
        let good = health
        let cases: [(String, [UInt8])] = [
            ("cut short", Array(good.prefix(good.count / 2))),
            ("not JSON", Array("hello".utf8)),
            ("an array", Array("[1, 2]".utf8)),
            ("not a Bundle", Array(#"{"resourceType": "Patient", "entry": []}"#.utf8)),
            ("no resources", Array(#"{"resourceType": "Bundle", "entry": []}"#.utf8)),
            ("a bad entry", Array(#"{"resourceType": "Bundle", "entry": [{"resource": {"resourceType": "Endpoint",}}]}"#.utf8)),
            ("an entry that is no object", Array(#"{"resourceType": "Bundle", "entry": [1]}"#.utf8)),
            ("text after the end", good + Array("}".utf8)),
            ("two values in a row", Array(#"{"resourceType": "Bundle" "entry": []}"#.utf8)),
            ("empty", []),
        ]
        for (what, bytes) in cases {
            XCTAssertThrowsError(try BrandsBundleReader.brands(in: bytes), what) { error in
                XCTAssertTrue(error is BrandsBundleError, "\(what): \(error)")
            }
        }
    }

    func testAnEntryLargerThanTheLimitIsRefused() {
        let name = String(repeating: "x", count: BrandsBundleReader.maxEntryBytes)
        let bytes = bundle([organization("big", name)])
        XCTAssertThrowsError(try BrandsBundleReader.brands(in: bytes)) { error in
            guard case BrandsBundleError.badEntry(0, _)? = error as? BrandsBundleError else { return XCTFail("\(error)") }
        }
    }

    func testControlCharactersAndLongTextAreCleaned() throws {
        let bytes = bundle([organization("o", "Evil\u{1b}[31m\nName\u{202e}" + String(repeating: "y", count: 2000), extra: [("endpoint", [["reference": "Endpoint/e"]])]),
                            endpoint("e", "https://e.example.org/r4")])
        let brand = try XCTUnwrap(try BrandsBundleReader.brands(in: bytes).first)
        XCTAssertFalse(brand.name.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{202e}" })
        XCTAssertLessThanOrEqual(brand.name.count, BrandsBundleReader.maxText)
    }

    // MARK: - The words of a name

    func testWordsFoldCaseAccentsApostrophesAndAbbreviations() {
        XCTAssertEqual(DirectoryText.words("St. Mary's Hôpital"), ["saint", "marys", "hopital"])
        XCTAssertEqual(DirectoryText.words("SAINT MARY’S"), ["saint", "marys"])
        XCTAssertEqual(DirectoryText.words("Mt. Sinai—Univ. Hosp"), ["mount", "sinai", "university", "hospital"])
        XCTAssertEqual(DirectoryText.words("Clínica Santa Rosa"), ["clinica", "santa", "rosa"])
    }

    func testOneTypoAWordOfFourLettersOrMore() {
        XCTAssertEqual(DirectoryText.similarity("hospital", "hospital"), .exact)
        XCTAssertEqual(DirectoryText.similarity("hosp", "hospital"), .prefix)
        XCTAssertEqual(DirectoryText.similarity("hosptial", "hospital"), .oneEdit, "two letters swapped")
        XCTAssertEqual(DirectoryText.similarity("hospitl", "hospital"), .oneEdit, "a letter dropped")
        XCTAssertEqual(DirectoryText.similarity("hospitaal", "hospital"), .oneEdit, "a letter added")
        XCTAssertEqual(DirectoryText.similarity("hispital", "hospital"), .oneEdit, "a letter changed")
        XCTAssertEqual(DirectoryText.similarity("hsoptial", "hospital"), .none, "two typos")
        XCTAssertEqual(DirectoryText.similarity("mry", "may"), .none, "short words must match exactly")
        XCTAssertEqual(DirectoryText.similarity("m", "mary"), .none, "one letter is no prefix")
    }
}
