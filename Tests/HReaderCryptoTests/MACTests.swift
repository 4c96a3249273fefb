import Foundation
import XCTest
import HReaderCrypto

// Known-answer tests for HMAC-SHA256 and HKDF-SHA256 (the backup file's authentication), against the
// real OpenSSL.
//  - HMAC-SHA256: RFC 4231 "Identifiers and Test Vectors for HMAC-SHA-224, -256, -384, and -512",
//    §4.2, §4.3 and §4.7 (test cases 1, 2 and 6) (https://www.rfc-editor.org/rfc/rfc4231#section-4).
//  - HKDF-SHA256: RFC 5869 "HMAC-based Extract-and-Expand Key Derivation Function", Appendix A.1 and
//    A.3 (test cases 1 and 3) (https://www.rfc-editor.org/rfc/rfc5869#appendix-A).

private func hex(_ string: String) -> [UInt8] {
    let digits = Array(string.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

final class MACTests: XCTestCase {
    func testHMACSHA256MatchesRFC4231Vectors() throws {
        let vectors: [(key: [UInt8], data: [UInt8], tag: String)] = [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ]
        for v in vectors {
            XCTAssertEqual(try HMACSHA256.authenticate(v.data, key: SecretBytes(v.key)), hex(v.tag))
        }
    }

    func testHMACSHA256InPiecesEqualsInOneGo() throws {
        let key = try SecretBytes.random(count: 32)
        let message = try SecureRandom.bytes(10_000)
        let whole = try HMACSHA256.authenticate(message, key: key)
        for cut in [0, 1, 4095, 4096, 9_999, 10_000] {
            let mac = try HMACSHA256(key: key)
            try mac.update(Array(message[..<cut]))
            try mac.update(Array(message[cut...]))
            XCTAssertEqual(try mac.finalize(), whole, "cut at \(cut)")
        }
        var flipped = message
        flipped[5_000] ^= 0x01
        XCTAssertFalse(HMACSHA256.equal(try HMACSHA256.authenticate(flipped, key: key), whole))
        XCTAssertTrue(HMACSHA256.equal(whole, whole))
        XCTAssertFalse(HMACSHA256.equal(whole, Array(whole.dropLast())))
    }

    func testHKDFSHA256MatchesRFC5869Vectors() throws {
        let ikm = SecretBytes([UInt8](repeating: 0x0b, count: 22))
        let one = try HKDF.sha256(key: ikm, salt: hex("000102030405060708090a0b0c"), info: hex("f0f1f2f3f4f5f6f7f8f9"), length: 42)
        XCTAssertTrue(one.isEqual(to: SecretBytes(hex("""
            3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865
            """))))
        let three = try HKDF.sha256(key: ikm, salt: [], info: [], length: 42)
        XCTAssertTrue(three.isEqual(to: SecretBytes(hex("""
            8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8
            """))))
    }

    func testHKDFSubkeysDependOnInfoAndSalt() throws {
        let key = try SecretBytes.random(count: 32)
        let a = try HKDF.sha256(key: key, salt: [1], info: Array("a".utf8))
        XCTAssertFalse(a.isEqual(to: try HKDF.sha256(key: key, salt: [1], info: Array("b".utf8))))
        XCTAssertFalse(a.isEqual(to: try HKDF.sha256(key: key, salt: [2], info: Array("a".utf8))))
        XCTAssertTrue(a.isEqual(to: try HKDF.sha256(key: key, salt: [1], info: Array("a".utf8))))
        XCTAssertThrowsError(try HKDF.sha256(key: key, salt: [], info: [], length: 0))
    }
}
