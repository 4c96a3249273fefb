import Foundation
import XCTest
import HReaderCrypto

/// The pending-rekey record of `vault.key`: the previous data key wrapped under the new one, kept
/// only between the two key-file writes of `hreader rekey`.
final class RekeyKeyFileTests: XCTestCase {
    private let kdf = KDFParameters.scrypt(n: 1024, r: 8, p: 1)

    private func bytes(_ s: SecretBytes) -> [UInt8] { s.withUnsafeBytes { Array($0) } }

    func testPendingRekeyRoundTripsAndUnwrapsOnlyWithTheNewKey() throws {
        let old = try SecretBytes.random(count: 32), new = try SecretBytes.random(count: 32)
        var file = KeyFile.new()
        try file.addSlot(kind: .password, label: "password", secret: SecretBytes(utf8: "Secret-Pass1"), kdf: kdf, dataKey: new)
        try file.setPendingRekey(previous: old, current: new)
        let decoded = try KeyFile.decode(try file.encoded())
        XCTAssertEqual(decoded, file)
        XCTAssertNotNil(decoded.pendingRekey)
        let (slotKey, _) = try decoded.unlock(kind: .password, secret: SecretBytes(utf8: "Secret-Pass1"))
        XCTAssertEqual(bytes(slotKey), bytes(new))
        XCTAssertEqual(bytes(try decoded.previousDataKey(current: slotKey)), bytes(old))
        // Any other key: damage, never another key.
        XCTAssertThrowsError(try decoded.previousDataKey(current: old)) { XCTAssertEqual($0 as? KeyFileError, .damaged("its pending rekey does not open with the key its slots hold")) }

        var finished = decoded
        finished.clearPendingRekey()
        let text = String(decoding: try finished.encoded(), as: UTF8.self)
        XCTAssertFalse(text.contains("\"rekey\""), "a finished rekey leaves no trace of the old key")
        XCTAssertNil(try KeyFile.decode(try finished.encoded()).pendingRekey)
    }

    func testEmptyCopyKeepsTheVaultIdentityOnly() throws {
        var file = KeyFile.new()
        try file.addSlot(kind: .password, label: "password", secret: SecretBytes(utf8: "Secret-Pass1"), kdf: kdf, dataKey: try SecretBytes.random(count: 32))
        let copy = file.emptyCopy()
        XCTAssertEqual(copy.vaultID, file.vaultID)
        XCTAssertEqual(copy.created, file.created)
        XCTAssertTrue(copy.slots.isEmpty)
        XCTAssertNil(copy.pendingRekey)
    }

    func testTamperedOrMalformedPendingRecordIsDamage() throws {
        let old = try SecretBytes.random(count: 32), new = try SecretBytes.random(count: 32)
        var file = KeyFile.new()
        try file.addSlot(kind: .password, label: "password", secret: SecretBytes(utf8: "Secret-Pass1"), kdf: kdf, dataKey: new)
        try file.setPendingRekey(previous: old, current: new)
        let text = String(decoding: try file.encoded(), as: UTF8.self)
        // An extra member inside the record.
        let extra = text.replacingOccurrences(of: "\"previous_key\"", with: "\"x\" : 1, \"previous_key\"")
        XCTAssertThrowsError(try KeyFile.decode(Array(extra.utf8))) { error in
            guard case .damaged = error as? KeyFileError else { return XCTFail("\(error)") }
        }
        // The record changed without the checksum: damage before any key is tried.
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        var edited = object
        var rekey = edited["rekey"] as! [String: Any]
        rekey["nonce"] = Data(repeating: 1, count: 12).base64EncodedString()
        edited["rekey"] = rekey
        let editedBytes = Array(try JSONSerialization.data(withJSONObject: edited))
        XCTAssertThrowsError(try KeyFile.decode(editedBytes)) { error in
            XCTAssertEqual(error as? KeyFileError, .damaged("its checksum does not match its content"))
        }
    }
}
