import Foundation
import HReaderRecords
import XCTest

/// Which answers of an RHEx server are the patient asked for (`RHExRecordCheck`): a record whose
/// `_id` is another kind of key is; one that names another patient of the feed, or that the server
/// gave for another id already, or that the feed lists as someone else, is not.
final class RHExRecordCheckTests: XCTestCase {
    let feed = [RHExFeedEntry(id: "hs", title: "Smith, Harold", alternate: nil),
                RHExFeedEntry(id: "js", title: "Smith, Jane", alternate: nil),
                RHExFeedEntry(id: "4f4e", title: "Ødegård, Åse Marie", alternate: nil)]

    func record(_ json: String) throws -> MappedRecord { try RHExMapper().map(Data(json.utf8), remoteID: "unused") }

    func testARecordKeyedOtherwiseThanTheFeedIsAdmitted() throws {
        var check = RHExRecordCheck(feed: feed)
        // A database key, a numeric id and a record number: other kinds of key, not other patients.
        XCTAssertNil(check.admit(try record(#"{"_id": {"$oid": "4f4e9fcbb615219f0a000001"}, "first": "Harold", "last": "Smith", "medical_record_number": "MRN-1"}"#).patient, askedFor: "hs"))
        XCTAssertNil(check.admit(try record(#"{"id": 77, "first": "JANE", "last": "smith"}"#).patient, askedFor: "js"))
        // Names compared folded: accents, case, and the second given name.
        XCTAssertNil(check.admit(try record(#"{"_id": "4f4e", "first": "ase", "last": "ØDEGARD"}"#).patient, askedFor: "4f4e"))
        // The same record again under its own id (a re-import) is the same patient.
        XCTAssertNil(check.admit(try record(#"{"_id": {"$oid": "4f4e9fcbb615219f0a000001"}, "first": "Harold", "last": "Smith"}"#).patient, askedFor: "hs"))
    }

    func testARecordNamingAnotherPatientOfTheFeedIsRefused() throws {
        var check = RHExRecordCheck(feed: feed)
        let refusal = check.admit(try record(#"{"_id": "js", "first": "Harold", "last": "Smith"}"#).patient, askedFor: "hs")
        XCTAssertEqual(refusal, "the record names itself js, another patient of the server's feed")
        // By its medical record number too.
        XCTAssertNotNil(check.admit(try record(#"{"medical_record_number": "4f4e", "first": "Harold", "last": "Smith"}"#).patient, askedFor: "hs"))
    }

    func testOneRecordGivenForTwoIdsIsRefusedTheSecondTime() throws {
        // Without a feed (one that could not be read), the records are still compared with each other.
        var check = RHExRecordCheck(feed: nil)
        XCTAssertNil(check.admit(try record(#"{"_id": "a1", "first": "Harold", "last": "Smith"}"#).patient, askedFor: "hs"))
        XCTAssertEqual(check.admit(try record(#"{"_id": "a1", "first": "Jane", "last": "Smith"}"#).patient, askedFor: "js"),
                       "it is the record the server gave for hs (a1)")
        // Remembered from an earlier import: the vault's record of ms.
        check.remember(["b2"], readUnder: "ms")
        XCTAssertNotNil(check.admit(try record(#"{"_id": "b2"}"#).patient, askedFor: "ts"))
    }

    func testARecordTheFeedListsAsSomeoneElseIsRefused() throws {
        var check = RHExRecordCheck(feed: feed)
        // Same family, another given name: a relative's record is not this patient's.
        XCTAssertEqual(check.admit(try record(#"{"_id": "x9", "first": "Jane", "last": "Smith"}"#).patient, askedFor: "hs"),
                       #"the feed lists hs as "Smith, Harold", the record is of "Smith, Jane""#)
        XCTAssertNotNil(check.admit(try record(#"{"_id": "x8", "first": "Harold", "last": "Jones"}"#).patient, askedFor: "hs"))
        // A record that names nobody, or a feed entry without a name, contradicts nothing.
        XCTAssertNil(check.admit(try record(#"{"_id": "x7"}"#).patient, askedFor: "hs"))
        var untitled = RHExRecordCheck(feed: [RHExFeedEntry(id: "r1", title: "r1", alternate: nil)])
        XCTAssertNil(untitled.admit(try record(#"{"_id": "x6", "first": "Any", "last": "One"}"#).patient, askedFor: "r1"))
    }
}
