import Foundation
import XCTest
import HReaderCrypto

// Known-answer and negative tests for HReaderCrypto, run against the real OpenSSL (no mocks).
//
// Sources of the published vectors (each is repeated next to the test that uses it):
//  - scrypt: RFC 7914 "The scrypt Password-Based Key Derivation Function", §12 "Test Vectors for scrypt"
//    (https://www.rfc-editor.org/rfc/rfc7914#section-12); the same bytes appear in e.g. cryptonite's
//    tests/KAT_Scrypt.hs and libsodium's test/default/pwhash_scrypt_ll.c.
//  - PBKDF2-HMAC-SHA256: RFC 7914 §11 "Test Vectors for PBKDF2 with HMAC-SHA-256"
//    (https://www.rfc-editor.org/rfc/rfc7914#section-11), plus the RFC 6070-style SHA-256 vector
//    ("password", "salt", c=4096, dkLen=32) published by Andrey Zholos on Stack Overflow question 5130513
//    ("Test vectors for PBKDF2-HMAC-SHA256"), widely reused by other test suites.
//  - AES-256-GCM: D. McGrew & J. Viega, "The Galois/Counter Mode of Operation (GCM)", Appendix B,
//    test cases 13–16 (the 256-bit-key cases), as published by NIST
//    (http://csrc.nist.gov/groups/ST/toolkit/BCM/documents/proposedmodes/gcm/gcm-spec.pdf) and
//    reproduced in GNU Nettle's testsuite/gcm-test.c.

// MARK: - Helpers

/// Decodes hex, ignoring any whitespace (so vectors can be pasted as printed in the RFCs).
private func hex(_ string: String) -> [UInt8] {
    let digits = string.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) }
    precondition(digits.count % 2 == 0, "odd-length hex literal")
    var out: [UInt8] = []
    out.reserveCapacity(digits.count / 2)
    var iterator = digits.makeIterator()
    while let hi = iterator.next(), let lo = iterator.next() {
        guard let byte = UInt8(String(hi) + String(lo), radix: 16) else { preconditionFailure("bad hex digit") }
        out.append(byte)
    }
    return out
}

/// Lower-case hex of `bytes`.
private func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    bytes.map { String(format: "%02x", $0) }.joined()
}

private extension SecretBytes {
    /// A copy of the secret's bytes, for assertions only.
    var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

private func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }

/// Asserts that `body` throws exactly `expected`.
private func XCTAssertThrowsCryptoError<T>(
    _ expected: CryptoError, _ body: @autoclosure () throws -> T,
    _ message: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertThrowsError(try body(), message(), file: file, line: line) { error in
        XCTAssertEqual(error as? CryptoError, expected, message(), file: file, line: line)
    }
}

/// Asserts that `body` throws `CryptoError.invalidParameters` (any message).
private func XCTAssertThrowsInvalidParameters<T>(
    _ body: @autoclosure () throws -> T,
    _ message: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertThrowsError(try body(), message(), file: file, line: line) { error in
        guard case .invalidParameters = error as? CryptoError else {
            return XCTFail("expected .invalidParameters, got \(error) \(message())", file: file, line: line)
        }
    }
}

/// One GCM test case from McGrew & Viega's specification.
private struct GCMVector {
    let name: String
    let key: [UInt8]
    let plaintext: [UInt8]
    let aad: [UInt8]
    let nonce: [UInt8]
    let ciphertext: [UInt8]
    let tag: [UInt8]
}

// McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", Appendix B (NIST gcm-spec.pdf);
// identical bytes in GNU Nettle testsuite/gcm-test.c ("GCM-AES Test Vectors").
private let gcmTestCase13 = GCMVector(
    name: "Test Case 13",
    key: hex("00000000000000000000000000000000 00000000000000000000000000000000"),
    plaintext: [],
    aad: [],
    nonce: hex("000000000000000000000000"),
    ciphertext: [],
    tag: hex("530f8afbc74536b9a963b4f1c4cb738b"))

private let gcmTestCase14 = GCMVector(
    name: "Test Case 14",
    key: hex("00000000000000000000000000000000 00000000000000000000000000000000"),
    plaintext: hex("00000000000000000000000000000000"),
    aad: [],
    nonce: hex("000000000000000000000000"),
    ciphertext: hex("cea7403d4d606b6e074ec5d3baf39d18"),
    tag: hex("d0d1c8a799996bf0265b98b5d48ab919"))

private let gcmTestCase15 = GCMVector(
    name: "Test Case 15",
    key: hex("feffe9928665731c6d6a8f9467308308 feffe9928665731c6d6a8f9467308308"),
    plaintext: hex("""
        d9313225f88406e5a55909c5aff5269a 86a7a9531534f7da2e4c303d8a318a72
        1c3c0c95956809532fcf0e2449a6b525 b16aedf5aa0de657ba637b391aafd255
        """),
    aad: [],
    nonce: hex("cafebabefacedbaddecaf888"),
    ciphertext: hex("""
        522dc1f099567d07f47f37a32a84427d 643a8cdcbfe5c0c97598a2bd2555d1aa
        8cb08e48590dbb3da7b08b1056828838 c5f61e6393ba7a0abcc9f662898015ad
        """),
    tag: hex("b094dac5d93471bdec1a502270e3cc6c"))

private let gcmTestCase16 = GCMVector(
    name: "Test Case 16",
    key: hex("feffe9928665731c6d6a8f9467308308 feffe9928665731c6d6a8f9467308308"),
    plaintext: hex("""
        d9313225f88406e5a55909c5aff5269a 86a7a9531534f7da2e4c303d8a318a72
        1c3c0c95956809532fcf0e2449a6b525 b16aedf5aa0de657ba637b39
        """),
    aad: hex("feedfacedeadbeeffeedfacedeadbeef abaddad2"),
    nonce: hex("cafebabefacedbaddecaf888"),
    ciphertext: hex("""
        522dc1f099567d07f47f37a32a84427d 643a8cdcbfe5c0c97598a2bd2555d1aa
        8cb08e48590dbb3da7b08b1056828838 c5f61e6393ba7a0abcc9f662
        """),
    tag: hex("76fc6ece0f4e1768cddf8853bb2d551b"))

final class PrimitivesTests: XCTestCase {

    // MARK: - Helper self-check

    /// Entry uuids come from OpenSSL (Foundation's UUID() opened /dev/urandom per call): RFC 9562
    /// version 4, variant 10, lower case, and not repeating.
    func testRandomUUIDsAreVersionFourAndDistinct() throws {
        let uuids = try (0..<2000).map { _ in try SecureRandom.uuidString() }
        let shape = try NSRegularExpression(pattern: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        for uuid in uuids {
            XCTAssertEqual(shape.numberOfMatches(in: uuid, range: NSRange(uuid.startIndex..., in: uuid)), 1, uuid)
            XCTAssertNotNil(UUID(uuidString: uuid), uuid)
        }
        XCTAssertEqual(Set(uuids).count, uuids.count)
        // They come from a shared pool of random bytes, refilled every 256: threads taking them at
        // once still get distinct ones.
        final class Collected: @unchecked Sendable {
            let lock = NSLock()
            var uuids: [String] = []
        }
        let parallel = Collected()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            let mine = (0..<500).compactMap { _ in try? SecureRandom.uuidString() }
            parallel.lock.lock(); parallel.uuids += mine; parallel.lock.unlock()
        }
        XCTAssertEqual(parallel.uuids.count, 4000)
        XCTAssertEqual(Set(parallel.uuids + uuids).count, 6000)
    }

    func testHexHelperRoundTrips() {
        XCTAssertEqual(hex("00 ff\n0a B1"), [0x00, 0xff, 0x0a, 0xb1])
        XCTAssertEqual(hexString([0x00, 0xff, 0x0a, 0xb1]), "00ff0ab1")
        XCTAssertEqual(hex(""), [])
    }

    // MARK: - scrypt

    /// RFC 7914 §12 "Test Vectors for scrypt" (the N = 2^20 vector is left out: 1 GiB, too slow for unit tests).
    func testScryptMatchesRFC7914Vectors() throws {
        let vectors: [(password: String, salt: String, n: UInt64, r: UInt64, p: UInt64, expected: String)] = [
            ("", "", 16, 1, 1, """
                77 d6 57 62 38 65 7b 20 3b 19 ca 42 c1 8a 04 97
                f1 6b 48 44 e3 07 4a e8 df df fa 3f ed e2 14 42
                fc d0 06 9d ed 09 48 f8 32 6a 75 3a 0f c8 1f 17
                e8 d3 e0 fb 2e 0d 36 28 cf 35 e2 0c 38 d1 89 06
                """),
            ("password", "NaCl", 1024, 8, 16, """
                fd ba be 1c 9d 34 72 00 78 56 e7 19 0d 01 e9 fe
                7c 6a d7 cb c8 23 78 30 e7 73 76 63 4b 37 31 62
                2e af 30 d9 2e 22 a3 88 6f f1 09 27 9d 98 30 da
                c7 27 af b9 4a 83 ee 6d 83 60 cb df a2 cc 06 40
                """),
            ("pleaseletmein", "SodiumChloride", 16384, 8, 1, """
                70 23 bd cb 3a fd 73 48 46 1c 06 cd 81 fd 38 eb
                fd a8 fb ba 90 4f 8e 3e a9 b5 43 f6 54 5d a1 f2
                d5 43 29 55 61 3f 0f cf 62 d4 97 05 24 2a 9a f9
                e6 1e 85 dc 0d 65 1e 40 df cf 01 7b 45 57 58 87
                """),
        ]
        for v in vectors {
            let derived = try KDF.derive(
                .scrypt(n: v.n, r: v.r, p: v.p), secret: SecretBytes(utf8: v.password), salt: bytes(v.salt), length: 64)
            XCTAssertEqual(derived.count, 64)
            XCTAssertEqual(hexString(derived.testBytes), hexString(hex(v.expected)),
                           "scrypt(P=\"\(v.password)\", S=\"\(v.salt)\", N=\(v.n), r=\(v.r), p=\(v.p), dkLen=64)")
        }
    }

    /// The shipped default (N = 2^17, r = 8, p = 1, 128 MiB) must get past OpenSSL's 32 MiB default `maxmem`,
    /// and must be a deterministic function of (secret, salt).
    func testScryptDefaultParametersSucceedAndAreDeterministic() throws {
        let salt = hex("000102030405060708090a0b0c0d0e0f")
        let secret = SecretBytes(utf8: "correct horse battery staple")
        let first = try KDF.derive(.scryptDefault, secret: secret, salt: salt, length: 32)
        let second = try KDF.derive(.scryptDefault, secret: secret, salt: salt, length: 32)
        XCTAssertEqual(first.count, 32)
        XCTAssertTrue(first.isEqual(to: second), "same secret and salt must give the same key")
        XCTAssertNotEqual(first.testBytes, [UInt8](repeating: 0, count: 32))
    }

    func testScryptDependsOnSaltAndSecret() throws {
        let params = KDFParameters.scrypt(n: 1024, r: 8, p: 1)
        let secret = SecretBytes(utf8: "pw")
        let a = try KDF.derive(params, secret: secret, salt: bytes("salt-a"), length: 32)
        let b = try KDF.derive(params, secret: secret, salt: bytes("salt-b"), length: 32)
        let c = try KDF.derive(params, secret: SecretBytes(utf8: "pX"), salt: bytes("salt-a"), length: 32)
        XCTAssertFalse(a.isEqual(to: b))
        XCTAssertFalse(a.isEqual(to: c))
    }

    // MARK: - PBKDF2-HMAC-SHA256

    /// RFC 7914 §11 "Test Vectors for PBKDF2 with HMAC-SHA-256".
    func testPBKDF2SHA256MatchesRFC7914Vectors() throws {
        let vectors: [(password: String, salt: String, iterations: UInt32, expected: String)] = [
            ("passwd", "salt", 1, """
                55 ac 04 6e 56 e3 08 9f ec 16 91 c2 25 44 b6 05
                f9 41 85 21 6d de 04 65 e6 8b 9d 57 c2 0d ac bc
                49 ca 9c cc f1 79 b6 45 99 16 64 b3 9d 77 ef 31
                7c 71 b8 45 b1 e3 0b d5 09 11 20 41 d3 a1 97 83
                """),
            ("Password", "NaCl", 80000, """
                4d dc d8 f6 0b 98 be 21 83 0c ee 5e f2 27 01 f9
                64 1a 44 18 d0 4c 04 14 ae ff 08 87 6b 34 ab 56
                a1 d4 25 a1 22 58 33 54 9a db 84 1b 51 c9 b3 17
                6a 27 2b de bb a1 d0 78 47 8f 62 b3 97 f3 3c 8d
                """),
        ]
        for v in vectors {
            let derived = try KDF.derive(
                .pbkdf2SHA256(iterations: v.iterations), secret: SecretBytes(utf8: v.password),
                salt: bytes(v.salt), length: 64)
            XCTAssertEqual(hexString(derived.testBytes), hexString(hex(v.expected)),
                           "PBKDF2-HMAC-SHA256(P=\"\(v.password)\", S=\"\(v.salt)\", c=\(v.iterations), dkLen=64)")
        }
    }

    /// The RFC 6070 inputs run with HMAC-SHA-256 (RFC 6070 itself only covers SHA-1): the widely published
    /// vector from Stack Overflow question 5130513 ("Test vectors for PBKDF2-HMAC-SHA256").
    func testPBKDF2SHA256MatchesRFC6070StyleSHA256Vectors() throws {
        let c1 = try KDF.derive(.pbkdf2SHA256(iterations: 1), secret: SecretBytes(utf8: "password"),
                                salt: bytes("salt"), length: 32)
        XCTAssertEqual(hexString(c1.testBytes), hexString(hex("""
            12 0f b6 cf fc f8 b3 2c 43 e7 22 52 56 c4 f8 37
            a8 65 48 c9 2c cc 35 48 08 05 98 7c b7 0b e1 7b
            """)))
        let c4096 = try KDF.derive(.pbkdf2SHA256(iterations: 4096), secret: SecretBytes(utf8: "password"),
                                   salt: bytes("salt"), length: 32)
        XCTAssertEqual(hexString(c4096.testBytes), hexString(hex("""
            c5 e4 78 d5 92 88 c8 41 aa 53 0d b6 84 5c 4c 8d
            96 28 93 a0 01 ce 4e 11 a4 96 38 73 aa 98 13 4a
            """)))
    }

    func testKDFRejectsNonPositiveLength() {
        XCTAssertThrowsInvalidParameters(
            try KDF.derive(.pbkdf2SHA256(iterations: 1), secret: SecretBytes(utf8: "pw"), salt: [1], length: 0))
        XCTAssertThrowsInvalidParameters(
            try KDF.derive(.scrypt(n: 16, r: 1, p: 1), secret: SecretBytes(utf8: "pw"), salt: [1], length: -1))
    }

    // MARK: - KDFParameters

    func testValidateRejectsOutOfRangeParameters() {
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1000, r: 8, p: 1).validate(), "N not a power of two")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: (1 << 17) + 1, r: 8, p: 1).validate(), "N not a power of two")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1, r: 8, p: 1).validate(), "N = 1")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 0, r: 8, p: 1).validate(), "N = 0")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1 << 25, r: 8, p: 1).validate(), "N > 2^24")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1024, r: 0, p: 1).validate(), "r = 0")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1024, r: 8, p: 0).validate(), "p = 0")
        XCTAssertThrowsInvalidParameters(try KDFParameters.pbkdf2SHA256(iterations: 0).validate(), "iterations = 0")
    }

    func testValidateAcceptsDefaultsAndBoundaryValues() {
        XCTAssertNoThrow(try KDFParameters.scryptDefault.validate())
        XCTAssertNoThrow(try KDFParameters.pbkdf2Default.validate())
        XCTAssertNoThrow(try KDFParameters.scrypt(n: 2, r: 1, p: 1).validate())
        XCTAssertNoThrow(try KDFParameters.pbkdf2SHA256(iterations: 1).validate())
    }

    /// Issue 23, L2: a new slot asks for at most 2^24 units of work (scrypt N·r·p, PBKDF2
    /// iterations): about 8 s (scrypt) or 5 s (PBKDF2) on the reference machine, not half a minute.
    /// Reading still accepts the 10^8 PBKDF2 iterations earlier versions allowed (no vault is locked out).
    func testKDFWorkPerSlotIsCappedAt2To24() {
        XCTAssertEqual(KDFParameters.maximumWork, 1 << 24)
        XCTAssertEqual(KDFParameters.scryptDefault.work, 1 << 20)
        XCTAssertEqual(KDFParameters.pbkdf2Default.work, 600_000)
        XCTAssertNoThrow(try KDFParameters.pbkdf2SHA256(iterations: 1 << 24).validateForNewSlot())
        XCTAssertThrowsInvalidParameters(try KDFParameters.pbkdf2SHA256(iterations: (1 << 24) + 1).validateForNewSlot(), "2^24 + 1 iterations")
        XCTAssertThrowsInvalidParameters(try KDFParameters.pbkdf2SHA256(iterations: 100_000_000).validateForNewSlot(), "100,000,000 iterations")
        XCTAssertNoThrow(try KDFParameters.pbkdf2SHA256(iterations: 100_000_000).validate(), "what earlier versions wrote still reads")
        XCTAssertThrowsInvalidParameters(try KDFParameters.pbkdf2SHA256(iterations: 100_000_001).validate(), "beyond what any version wrote")
        XCTAssertThrowsInvalidParameters(try KDFParameters.pbkdf2SHA256(iterations: .max).validate(), "UInt32.max iterations")
        XCTAssertNoThrow(try KDFParameters.scrypt(n: 1 << 21, r: 8, p: 1).validate())
        XCTAssertNoThrow(try KDFParameters.scrypt(n: 1 << 20, r: 16, p: 1).validate())
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1 << 22, r: 8, p: 1).validate(), "N·r·p = 2^25")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1 << 20, r: 16, p: 2).validate(), "N·r·p = 2^25")
        XCTAssertThrowsInvalidParameters(try KDFParameters.scrypt(n: 1 << 24, r: 32, p: 16).validate(), "everything at its own maximum")
        XCTAssertThrowsInvalidParameters(
            try KDF.derive(.pbkdf2SHA256(iterations: 100_000_001), secret: SecretBytes(utf8: "pw"), salt: [1], length: 32),
            "refused before deriving")
    }

    func testDeriveRefusesInvalidParametersBeforeRunningTheKDF() {
        XCTAssertThrowsInvalidParameters(
            try KDF.derive(.scrypt(n: 1000, r: 8, p: 1), secret: SecretBytes(utf8: "pw"), salt: [1], length: 32))
        XCTAssertThrowsInvalidParameters(
            try KDF.derive(.pbkdf2SHA256(iterations: 0), secret: SecretBytes(utf8: "pw"), salt: [1], length: 32))
    }

    func testDefaultsMeetRecommendedMinimumAndWeakParametersDoNot() {
        XCTAssertEqual(KDFParameters.scryptDefault, .scrypt(n: 1 << 17, r: 8, p: 1))
        XCTAssertEqual(KDFParameters.pbkdf2Default, .pbkdf2SHA256(iterations: 600_000))
        XCTAssertTrue(KDFParameters.scryptDefault.meetsRecommendedMinimum)
        XCTAssertTrue(KDFParameters.pbkdf2Default.meetsRecommendedMinimum)
        XCTAssertFalse(KDFParameters.scrypt(n: 1024, r: 8, p: 1).meetsRecommendedMinimum)
        XCTAssertFalse(KDFParameters.pbkdf2SHA256(iterations: 599_999).meetsRecommendedMinimum)
        XCTAssertEqual(KDFParameters.scryptDefault.name, "scrypt")
        XCTAssertEqual(KDFParameters.pbkdf2Default.name, "pbkdf2-sha256")
    }

    // MARK: - AES-256-GCM known answers

    private func assertGCMVector(_ v: GCMVector, file: StaticString = #filePath, line: UInt = #line) throws {
        let key = SecretBytes(v.key)
        let sealed = try AESGCM.seal(SecretBytes(v.plaintext), key: key, nonce: v.nonce, associatedData: v.aad)
        XCTAssertEqual(hexString(sealed), hexString(v.ciphertext + v.tag),
                       "\(v.name): seal must produce ciphertext ‖ tag", file: file, line: line)
        let opened = try AESGCM.open(v.ciphertext + v.tag, key: key, nonce: v.nonce, associatedData: v.aad)
        XCTAssertEqual(opened.count, v.plaintext.count, "\(v.name): opened count", file: file, line: line)
        XCTAssertEqual(hexString(opened.testBytes), hexString(v.plaintext),
                       "\(v.name): open must return the plaintext", file: file, line: line)
    }

    /// McGrew & Viega GCM spec test case 14: 256-bit zero key, one zero block, no AAD.
    func testAESGCMMatchesGCMSpecTestCase14() throws { try assertGCMVector(gcmTestCase14) }

    /// McGrew & Viega GCM spec test case 15: 256-bit key, four blocks, no AAD.
    func testAESGCMMatchesGCMSpecTestCase15() throws { try assertGCMVector(gcmTestCase15) }

    /// McGrew & Viega GCM spec test case 16: 256-bit key, 60-byte plaintext, 20-byte AAD.
    func testAESGCMMatchesGCMSpecTestCase16WithAssociatedData() throws { try assertGCMVector(gcmTestCase16) }

    /// McGrew & Viega GCM spec test case 13: empty plaintext and AAD, so the output is the tag alone.
    func testAESGCMEmptyPlaintextMatchesGCMSpecTestCase13() throws {
        try assertGCMVector(gcmTestCase13)
    }

    func testAESGCMRoundTripsRandomMessagesOfManyLengths() throws {
        let key = try SecretBytes.random(count: AESGCM.keySize)
        for length in [1, 15, 16, 17, 31, 32, 33, 255, 4096] {
            let message = try SecureRandom.bytes(length)
            let nonce = try SecureRandom.bytes(AESGCM.nonceSize)
            let aad = bytes("slot:\(length)")
            let sealed = try AESGCM.seal(SecretBytes(message), key: key, nonce: nonce, associatedData: aad)
            XCTAssertEqual(sealed.count, length + AESGCM.tagSize)
            let opened = try AESGCM.open(sealed, key: key, nonce: nonce, associatedData: aad)
            XCTAssertEqual(opened.testBytes, message, "length \(length)")
        }
    }

    // MARK: - AES-256-GCM negative tests

    func testFlippingAnyByteOfCiphertextOrTagFailsAuthentication() throws {
        let v = gcmTestCase16
        let key = SecretBytes(v.key)
        let sealed = v.ciphertext + v.tag
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 0x01
            XCTAssertThrowsCryptoError(.authenticationFailed,
                try AESGCM.open(tampered, key: key, nonce: v.nonce, associatedData: v.aad),
                "flipped byte \(index) of ciphertext‖tag")
        }
    }

    func testFlippingAnyByteOfNonceFailsAuthentication() throws {
        let v = gcmTestCase16
        let key = SecretBytes(v.key)
        for index in v.nonce.indices {
            var nonce = v.nonce
            nonce[index] ^= 0x80
            XCTAssertThrowsCryptoError(.authenticationFailed,
                try AESGCM.open(v.ciphertext + v.tag, key: key, nonce: nonce, associatedData: v.aad),
                "flipped nonce byte \(index)")
        }
    }

    func testFlippingAnyByteOfAssociatedDataFailsAuthentication() throws {
        let v = gcmTestCase16
        let key = SecretBytes(v.key)
        for index in v.aad.indices {
            var aad = v.aad
            aad[index] ^= 0x01
            XCTAssertThrowsCryptoError(.authenticationFailed,
                try AESGCM.open(v.ciphertext + v.tag, key: key, nonce: v.nonce, associatedData: aad),
                "flipped AAD byte \(index)")
        }
        // Dropping or adding associated data must fail too.
        XCTAssertThrowsCryptoError(.authenticationFailed,
            try AESGCM.open(v.ciphertext + v.tag, key: key, nonce: v.nonce, associatedData: []))
        XCTAssertThrowsCryptoError(.authenticationFailed,
            try AESGCM.open(v.ciphertext + v.tag, key: key, nonce: v.nonce, associatedData: v.aad + [0]))
        let v15 = gcmTestCase15
        XCTAssertThrowsCryptoError(.authenticationFailed,
            try AESGCM.open(v15.ciphertext + v15.tag, key: SecretBytes(v15.key), nonce: v15.nonce, associatedData: [0]))
    }

    func testWrongKeyFailsAuthentication() throws {
        let v = gcmTestCase16
        for index in [0, 15, 31] {
            var key = v.key
            key[index] ^= 0x01
            XCTAssertThrowsCryptoError(.authenticationFailed,
                try AESGCM.open(v.ciphertext + v.tag, key: SecretBytes(key), nonce: v.nonce, associatedData: v.aad),
                "key byte \(index) flipped")
        }
        XCTAssertThrowsCryptoError(.authenticationFailed,
            try AESGCM.open(v.ciphertext + v.tag, key: try SecretBytes.random(count: 32), nonce: v.nonce,
                            associatedData: v.aad))
    }

    func testTruncatedOrExtendedSealedDataFailsAuthentication() throws {
        let v = gcmTestCase16
        let key = SecretBytes(v.key)
        let sealed = v.ciphertext + v.tag
        XCTAssertThrowsCryptoError(.authenticationFailed,
            try AESGCM.open(Array(sealed.dropLast()), key: key, nonce: v.nonce, associatedData: v.aad))
        XCTAssertThrowsCryptoError(.authenticationFailed,
            try AESGCM.open(Array(sealed.dropFirst()), key: key, nonce: v.nonce, associatedData: v.aad))
        XCTAssertThrowsCryptoError(.authenticationFailed,
            try AESGCM.open(sealed + [0], key: key, nonce: v.nonce, associatedData: v.aad))
    }

    /// Rejected before any decryption is attempted, so this does not go through BUG 1.
    func testSealedShorterThanATagFailsAuthentication() throws {
        let v = gcmTestCase16
        let key = SecretBytes(v.key)
        let sealed = v.ciphertext + v.tag
        for length in 0..<AESGCM.tagSize {
            XCTAssertThrowsCryptoError(.authenticationFailed,
                try AESGCM.open(Array(sealed.prefix(length)), key: key, nonce: v.nonce, associatedData: v.aad),
                "sealed of \(length) bytes (shorter than a tag)")
        }
    }

    func testWrongKeyOrNonceSizeIsRejectedAsInvalidParameters() throws {
        let message = SecretBytes(utf8: "hello")
        let goodKey = try SecretBytes.random(count: 32)
        let goodNonce = try SecureRandom.bytes(12)
        let sealed = try AESGCM.seal(message, key: goodKey, nonce: goodNonce, associatedData: [])

        for keyLength in [0, 16, 24, 31, 33, 64] {
            let key = try SecretBytes.random(count: keyLength)
            XCTAssertThrowsInvalidParameters(
                try AESGCM.seal(message, key: key, nonce: goodNonce, associatedData: []), "seal, key \(keyLength) bytes")
            XCTAssertThrowsInvalidParameters(
                try AESGCM.open(sealed, key: key, nonce: goodNonce, associatedData: []), "open, key \(keyLength) bytes")
        }
        for nonceLength in [0, 8, 11, 13, 16] {
            let nonce = [UInt8](repeating: 7, count: nonceLength)
            XCTAssertThrowsInvalidParameters(
                try AESGCM.seal(message, key: goodKey, nonce: nonce, associatedData: []), "seal, nonce \(nonceLength) bytes")
            XCTAssertThrowsInvalidParameters(
                try AESGCM.open(sealed, key: goodKey, nonce: nonce, associatedData: []), "open, nonce \(nonceLength) bytes")
        }
    }

    // MARK: - SecretBytes

    func testSecretBytesNeverAppearsInDescriptionsOrDump() throws {
        let printable = "correct horse battery staple"
        let binary: [UInt8] = hex("deadbeefcafebabe0123456789abcdeffedcba9876543210a5a5a5a55a5a5a5a")
        for (secret, raw) in [(SecretBytes(utf8: printable), Array(printable.utf8)), (SecretBytes(binary), binary)] {
            var dumped = ""
            dump(secret, to: &dumped)
            let renderings = [
                "\(secret)",
                String(describing: secret),
                String(reflecting: secret),
                dumped,
                "\([secret])",
                String(reflecting: Optional(secret)),
            ]
            let forbidden = [
                hexString(raw),                                  // lower-case hex
                hexString(raw).uppercased(),                     // upper-case hex
                String(decoding: raw, as: UTF8.self),            // the raw bytes as text
                raw.map(String.init).joined(separator: ", "),    // the bytes as an array literal
                String(describing: raw),
            ]
            for rendering in renderings {
                XCTAssertTrue(rendering.contains("redacted") || rendering.contains("SecretBytes"), rendering)
                for needle in forbidden {
                    XCTAssertFalse(rendering.contains(needle), "secret leaked into: \(rendering)")
                }
                // Not even a 4-byte run of the secret in hex.
                XCTAssertFalse(rendering.lowercased().contains(hexString(raw.prefix(4))), "hex prefix leaked: \(rendering)")
            }
            XCTAssertEqual("\(secret)", "SecretBytes(\(raw.count) bytes, redacted)")
        }
    }

    func testHexEncodedProducesSQLCipherRawKeyLiteral() {
        let secret = SecretBytes([0x00, 0x01, 0x0f, 0x10, 0x7f, 0x80, 0xab, 0xff])
        let literal = secret.hexEncoded(prefix: Array("x'".utf8), suffix: Array("'".utf8))
        XCTAssertEqual(String(decoding: literal.testBytes, as: UTF8.self), "x'00010f107f80abff'")
        XCTAssertEqual(literal.count, 2 + 16 + 1)
        XCTAssertEqual(String(decoding: secret.hexEncoded().testBytes, as: UTF8.self), "00010f107f80abff")

        let key = SecretBytes(gcmTestCase15.key)
        let keyLiteral = key.hexEncoded(prefix: Array("x'".utf8), suffix: Array("'".utf8))
        XCTAssertEqual(String(decoding: keyLiteral.testBytes, as: UTF8.self),
                       "x'feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308'")
        XCTAssertEqual(keyLiteral.count, 67)
    }

    func testIsEqualComparesContentsAndLength() {
        let a = SecretBytes([1, 2, 3, 4])
        XCTAssertTrue(a.isEqual(to: a))
        XCTAssertTrue(a.isEqual(to: SecretBytes([1, 2, 3, 4])))
        XCTAssertFalse(a.isEqual(to: SecretBytes([1, 2, 3, 5])))
        XCTAssertFalse(a.isEqual(to: SecretBytes([0, 2, 3, 4])))
        XCTAssertFalse(a.isEqual(to: SecretBytes([1, 2, 3])))
        XCTAssertFalse(a.isEqual(to: SecretBytes([1, 2, 3, 4, 0])))
        XCTAssertTrue(SecretBytes(utf8: "pw").isEqual(to: SecretBytes(Array("pw".utf8))))
    }

    func testSecretBytesInitialisersKeepExactBytesAndCount() {
        let s = SecretBytes([9, 8, 7])
        XCTAssertEqual(s.count, 3)
        XCTAssertEqual(s.testBytes, [9, 8, 7])
        let filled = SecretBytes(count: 5) { buffer in
            for i in buffer.indices { buffer[i] = UInt8(i * 2) }
        }
        XCTAssertEqual(filled.count, 5)
        XCTAssertEqual(filled.testBytes, [0, 2, 4, 6, 8])
        XCTAssertEqual(SecretBytes(utf8: "é").testBytes, [0xc3, 0xa9])
    }

    /// An empty secret (empty password, empty plaintext) must behave as zero bytes everywhere.
    func testEmptySecretBytesHasZeroCountAndEqualsOnlyEmpty() throws {
        let empty = SecretBytes([])
        XCTAssertEqual(empty.count, 0, "SecretBytes([]).count")
        XCTAssertEqual(empty.testBytes, [])
        XCTAssertEqual(SecretBytes(utf8: "").count, 0, "SecretBytes(utf8: \"\").count")
        XCTAssertEqual(SecretBytes(count: 0) { _ in }.count, 0, "SecretBytes(count: 0).count")
        XCTAssertTrue(empty.isEqual(to: SecretBytes([])))
        XCTAssertFalse(empty.isEqual(to: SecretBytes([0])), "an empty secret must not equal the single byte 0x00")
        XCTAssertEqual(String(decoding: empty.hexEncoded(prefix: Array("x'".utf8), suffix: Array("'".utf8)).testBytes,
                              as: UTF8.self), "x''")
        XCTAssertEqual("\(empty)", "SecretBytes(0 bytes, redacted)")
    }

    func testRandomSecretsHaveRequestedLengthAndDiffer() throws {
        let a = try SecretBytes.random(count: 32)
        let b = try SecretBytes.random(count: 32)
        XCTAssertEqual(a.count, 32)
        XCTAssertEqual(b.count, 32)
        XCTAssertFalse(a.isEqual(to: b), "two 256-bit random secrets must differ")
        XCTAssertNotEqual(a.testBytes, [UInt8](repeating: 0, count: 32))
    }

    // MARK: - SecureRandom

    func testSecureRandomBytesHaveRequestedLengthAndDiffer() throws {
        XCTAssertEqual(try SecureRandom.bytes(0), [])
        let a = try SecureRandom.bytes(32)
        let b = try SecureRandom.bytes(32)
        XCTAssertEqual(a.count, 32)
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(try SecureRandom.bytes(1000).count, 1000)
    }
}
