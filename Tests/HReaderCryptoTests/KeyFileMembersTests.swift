import Foundation
import HReaderJSON
import XCTest
@testable import HReaderCrypto

/// A key file whose checksum matches but whose members are not this version's is damage, named.
final class KeyFileMembersTests: XCTestCase {
    private let kdf = KDFParameters.scrypt(n: 1024, r: 8, p: 1)

    /// A valid two-slot key file with a pending rekey, as a JSON object to edit.
    private func object() throws -> JSONObject {
        let key = try SecretBytes.random(count: 32)
        var file = KeyFile.new()
        try file.addSlot(kind: .password, label: "password", secret: SecretBytes(utf8: "Secret-Pass1"), kdf: kdf, dataKey: key)
        try file.addSlot(kind: .password, label: "second", secret: SecretBytes(utf8: "Secret-Pass2"), kdf: kdf, dataKey: key)
        try file.setPendingRekey(previous: try SecretBytes.random(count: 32), current: key)
        guard case let .object(top) = try JSONParser.parse(try file.encoded()) else { throw XCTSkip("not an object") }
        return top
    }

    private func assertDamaged(_ top: JSONObject, _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        var bytes: [UInt8] = []
        KeyFileJSON.write(.object(top), pretty: true, into: &bytes)
        let sealed = try XCTUnwrap(KeyFile.resealed(bytes), file: file, line: line)
        XCTAssertThrowsError(try KeyFile.decode(sealed), file: file, line: line) { error in
            XCTAssertEqual(error as? KeyFileError, .damaged(message), file: file, line: line)
        }
    }

    func testUnknownOrRepeatedMembersAreDamage() throws {
        let valid = try object()
        var bytes: [UInt8] = []
        KeyFileJSON.write(.object(valid), pretty: true, into: &bytes)
        XCTAssertNoThrow(try KeyFile.decode(try XCTUnwrap(KeyFile.resealed(bytes))), "the unedited file decodes")

        var top = valid
        top["extra"] = .int(1)
        try assertDamaged(top, "it has members this version does not know")

        func editingSlots(_ edit: (inout [JSONValue]) -> Void) -> JSONObject {
            var top = valid
            var slots = top["slots"]!.array!
            edit(&slots)
            top["slots"] = .array(slots)
            return top
        }
        try assertDamaged(editingSlots { slots in
            guard case var .object(slot) = slots[0] else { return }
            slot["colour"] = .string("red")
            slots[0] = .object(slot)
        }, "a slot has members this version does not know")
        try assertDamaged(editingSlots { slots in
            guard case var .object(slot) = slots[0], case var .object(kdf) = slot["kdf"]! else { return }
            kdf["pepper"] = .string("x")
            slot["kdf"] = .object(kdf)
            slots[0] = .object(slot)
        }, "a slot has members this version does not know")
        try assertDamaged(editingSlots { slots in
            guard case var .object(second) = slots[1], case let .object(first) = slots[0] else { return }
            second["id"] = first["id"]
            slots[1] = .object(second)
        }, "a slot id is invalid or repeated")

        for edit in ["extra", "missing"] {
            var top = valid
            guard case var .object(record) = top["rekey"]! else { return XCTFail("no rekey record") }
            if edit == "extra" { record["x"] = .int(1) } else { record["nonce"] = nil }
            top["rekey"] = .object(record)
            try assertDamaged(top, "its pending rekey has members this version does not know")
        }
    }
}
