import Foundation
import XCTest
import HReaderCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Tests of the key file (vault.key), unlock sessions, security-question answers, recovery keys and
// atomic file replacement, against the real OpenSSL and real temporary files (no mocks).
// KDF parameters are deliberately cheap here (scrypt N=1024, PBKDF2 1000 iterations) to keep the
// suite fast; the production defaults are exercised in PrimitivesTests.

// MARK: - Helpers

private let cheapScrypt = KDFParameters.scrypt(n: 1024, r: 8, p: 1)
private let cheapPBKDF2 = KDFParameters.pbkdf2SHA256(iterations: 1000)

private extension SecretBytes {
    /// A copy of the secret's bytes, for assertions only.
    var testBytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

private func secret(_ string: String) -> SecretBytes { SecretBytes(utf8: string) }

private func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    bytes.map { String(format: "%02x", $0) }.joined()
}

/// Asserts that `body` throws exactly the `KeyFileError` `expected`.
private func XCTAssertThrowsKeyFileError<T>(
    _ expected: KeyFileError, _ body: @autoclosure () throws -> T,
    _ message: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertThrowsError(try body(), message(), file: file, line: line) { error in
        XCTAssertEqual(error as? KeyFileError, expected, "got \(error) \(message())", file: file, line: line)
    }
}

/// Asserts that `body` throws `KeyFileError.damaged` (any message).
private func XCTAssertThrowsDamaged<T>(
    _ body: @autoclosure () throws -> T,
    _ message: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertThrowsError(try body(), message(), file: file, line: line) { error in
        guard case .damaged = error as? KeyFileError else {
            return XCTFail("expected KeyFileError.damaged, got \(error) \(message())", file: file, line: line)
        }
    }
}

/// Asserts that `body` throws exactly the `UnlockSession.Failure` `expected`.
private func XCTAssertThrowsSessionFailure<T>(
    _ expected: UnlockSession.Failure, _ body: @autoclosure () throws -> T,
    _ message: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertThrowsError(try body(), message(), file: file, line: line) { error in
        XCTAssertEqual(error as? UnlockSession.Failure, expected, "got \(error) \(message())", file: file, line: line)
    }
}

// A mirror of KeyFile's private wire structs (Sources/HReaderCrypto/KeyFile.swift, `Wire`, `WireSlot`,
// `WireKDF`): same JSON keys, same Swift types and optionality, so that encoding it with the same
// JSONEncoder options gives the same canonical bytes. Used to edit a key file *and* recompute its
// checksum exactly as the code does, to reach the associated-data check behind the checksum.
private struct WireMirror: Codable {
    var format: String
    var version: Int
    var vault_id: String
    var created: String
    var slots: [WireSlotMirror]
    var checksum: String?
}

private struct WireSlotMirror: Codable {
    var id: String
    var kind: String
    var label: String
    var questions: [String]?
    var kdf: WireKDFMirror
    var nonce: String
    var wrapped_key: String
    var created: String
}

private struct WireKDFMirror: Codable {
    var name: String
    var n: UInt64?
    var r: UInt64?
    var p: UInt64?
    var iterations: UInt32?
    var salt: String
}

private extension WireMirror {
    init(_ bytes: [UInt8]) throws { self = try JSONDecoder().decode(WireMirror.self, from: Data(bytes)) }

    /// SHA-256 over the JSON encoded with sortedKeys + withoutEscapingSlashes, the checksum key removed.
    func computedChecksum() throws -> String {
        var body = self
        body.checksum = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return "sha256:" + hexString(SHA256.hash(Array(try encoder.encode(body))))
    }

    /// The key file bytes with a freshly recomputed (valid) checksum.
    func encodedWithValidChecksum() throws -> [UInt8] {
        var out = self
        out.checksum = try computedChecksum()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(out)) + [0x0a]
    }
}

/// A key file with one slot of each kind, and the secrets that open them.
private struct Fixture {
    var file: KeyFile
    let dataKey: SecretBytes
    let password: SecretBytes
    let questions: [String]
    let answers: SecretBytes
    let recoveryDisplay: String
    let recovery: SecretBytes
    var secrets: [(SlotKind, SecretBytes)] { [(.password, password), (.questions, answers), (.recovery, recovery)] }

    init(kdf: (password: KDFParameters, questions: KDFParameters, recovery: KDFParameters)) throws {
        dataKey = try SecretBytes.random(count: 32)
        password = secret("Correct-Horse-7")
        questions = ["What was your first pet's name?", "Which street did you grow up on?"]
        answers = try SecretAnswers.normalize(["Fluffy", "Elm Street"])
        let generated = try RecoveryKey.generate()
        recoveryDisplay = generated.display
        recovery = generated.secret
        file = KeyFile.new()
        try file.addSlot(kind: .password, label: "main password", secret: password, kdf: kdf.password, dataKey: dataKey)
        try file.addSlot(kind: .questions, label: "security questions", questions: questions, secret: answers,
                         kdf: kdf.questions, dataKey: dataKey)
        try file.addSlot(kind: .recovery, label: "recovery key", secret: recovery, kdf: kdf.recovery, dataKey: dataKey)
    }
}

// MARK: - Key file

final class KeyFileTests: XCTestCase {

    func testKeyFileRoundTripsAndEverySlotUnlocksToTheSameDataKey() throws {
        let fx = try Fixture(kdf: (cheapScrypt, cheapPBKDF2, cheapScrypt))
        let encoded = try fx.file.encoded()
        let decoded = try KeyFile.decode(encoded)
        XCTAssertEqual(decoded, fx.file)
        XCTAssertEqual(decoded.vaultID, fx.file.vaultID)
        XCTAssertEqual(decoded.slots.map(\.kind), [.password, .questions, .recovery])
        XCTAssertEqual(decoded.slots[1].questions, fx.questions)
        XCTAssertEqual(decoded.slots[0].kdf, cheapScrypt)
        XCTAssertEqual(decoded.slots[1].kdf, cheapPBKDF2)
        // Encoding is stable: decode → encode gives the same bytes.
        XCTAssertEqual(try decoded.encoded(), encoded)

        for (kind, key) in fx.secrets {
            let (dataKey, slot) = try decoded.unlock(kind: kind, secret: key)
            XCTAssertEqual(dataKey.count, 32)
            XCTAssertTrue(dataKey.isEqual(to: fx.dataKey), "\(kind) slot gave a different data key")
            XCTAssertEqual(slot.kind, kind)
            XCTAssertTrue(try decoded.unwrap(slot, secret: key).isEqual(to: fx.dataKey))
        }

        // Answers and recovery keys as a person would type them again.
        let typedAnswers = try SecretAnswers.normalize(["  FLUFFY ", "elm   street"])
        XCTAssertTrue(try decoded.unlock(kind: .questions, secret: typedAnswers).dataKey.isEqual(to: fx.dataKey))
        let typedRecovery = try XCTUnwrap(RecoveryKey.parse(fx.recoveryDisplay.lowercased().replacingOccurrences(of: "-", with: " ")))
        XCTAssertTrue(try decoded.unlock(kind: .recovery, secret: typedRecovery).dataKey.isEqual(to: fx.dataKey))
    }

    func testWrongSecretThrowsWrongSecretOfThatKind() throws {
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        let file = try KeyFile.decode(try fx.file.encoded())
        XCTAssertThrowsKeyFileError(.wrongSecret(.password), try file.unlock(kind: .password, secret: secret("Correct-Horse-8")))
        XCTAssertThrowsKeyFileError(.wrongSecret(.questions),
                                    try file.unlock(kind: .questions, secret: try SecretAnswers.normalize(["Fluffy", "Oak Street"])))
        let otherRecovery = try RecoveryKey.generate().secret
        XCTAssertThrowsKeyFileError(.wrongSecret(.recovery), try file.unlock(kind: .recovery, secret: otherRecovery))
        // One slot's secret does not open another kind's slot.
        XCTAssertThrowsKeyFileError(.wrongSecret(.recovery), try file.unlock(kind: .recovery, secret: fx.password))
        // unwrap of a single slot reports the same way.
        XCTAssertThrowsKeyFileError(.wrongSecret(.password), try file.unwrap(file.slots[0], secret: secret("nope")))
    }

    func testUnlockWithNoSlotOfThatKindThrowsNoSlot() throws {
        var file = KeyFile.new()
        let dataKey = try SecretBytes.random(count: 32)
        try file.addSlot(kind: .password, label: "pw", secret: secret("Passw0rdX"), kdf: cheapPBKDF2, dataKey: dataKey)
        XCTAssertThrowsKeyFileError(.noSlot(.recovery), try file.unlock(kind: .recovery, secret: secret("x")))
        XCTAssertThrowsKeyFileError(.noSlot(.questions), try file.unlock(kind: .questions, secret: secret("x")))
    }

    func testAddSlotRejectsBadDataKeyAndMisplacedQuestions() throws {
        var file = KeyFile.new()
        let dataKey = try SecretBytes.random(count: 32)
        XCTAssertThrowsError(try file.addSlot(kind: .password, label: "pw", secret: secret("a"), kdf: cheapPBKDF2,
                                              dataKey: try SecretBytes.random(count: 16)))
        XCTAssertThrowsError(try file.addSlot(kind: .questions, label: "q", questions: ["only one?"], secret: secret("a"),
                                              kdf: cheapPBKDF2, dataKey: dataKey))
        XCTAssertThrowsError(try file.addSlot(kind: .questions, label: "q", questions: nil, secret: secret("a"),
                                              kdf: cheapPBKDF2, dataKey: dataKey))
        XCTAssertThrowsError(try file.addSlot(kind: .password, label: "pw", questions: ["a?", "b?"], secret: secret("a"),
                                              kdf: cheapPBKDF2, dataKey: dataKey))
        XCTAssertTrue(file.slots.isEmpty, "a refused slot must not be added")
    }

    func testEncodedKeyFileHasTheDocumentedShapeAndNoSecrets() throws {
        let fx = try Fixture(kdf: (cheapScrypt, cheapPBKDF2, cheapScrypt))
        let encoded = try fx.file.encoded()
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(encoded)) as? [String: Any])
        XCTAssertEqual(json["format"] as? String, "hreader-key")
        XCTAssertEqual(json["version"] as? Int, 1)
        XCTAssertEqual(json["vault_id"] as? String, fx.file.vaultID)
        XCTAssertNotNil(json["created"] as? String)
        XCTAssertTrue((json["checksum"] as? String)?.hasPrefix("sha256:") == true)
        let slots = try XCTUnwrap(json["slots"] as? [[String: Any]])
        XCTAssertEqual(slots.map { $0["kind"] as? String }, ["password", "questions", "recovery"])
        let kdf = try XCTUnwrap(slots[0]["kdf"] as? [String: Any])
        XCTAssertEqual(kdf["name"] as? String, "scrypt")
        XCTAssertEqual(kdf["n"] as? Int, 1024)
        XCTAssertEqual(Data(base64Encoded: try XCTUnwrap(kdf["salt"] as? String))?.count, 16)
        XCTAssertEqual(Data(base64Encoded: try XCTUnwrap(slots[0]["nonce"] as? String))?.count, 12)
        XCTAssertEqual(Data(base64Encoded: try XCTUnwrap(slots[0]["wrapped_key"] as? String))?.count, 48)

        let text = String(decoding: encoded, as: UTF8.self)
        XCTAssertFalse(text.contains("Correct-Horse-7"))
        XCTAssertFalse(text.localizedCaseInsensitiveContains("fluffy"))
        XCTAssertFalse(text.contains(fx.recoveryDisplay))
        XCTAssertFalse(text.contains(fx.recoveryDisplay.replacingOccurrences(of: "-", with: "")))
        XCTAssertFalse(text.contains(hexString(fx.dataKey.testBytes)))
        XCTAssertFalse(text.contains(Data(fx.dataKey.testBytes).base64EncodedString()))
    }

    func testFlippingAnySingleByteIsCaughtAndNeverUnlocksToAnotherKey() throws {
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        let encoded = try fx.file.encoded()
        var notCaughtByDecode: [Int] = []
        for offset in encoded.indices {
            var bytes = encoded
            bytes[offset] ^= 0x01
            let file: KeyFile
            do {
                file = try KeyFile.decode(bytes)
            } catch let error as KeyFileError {
                switch error {
                case .damaged, .unsupportedVersion: continue
                default: XCTFail("offset \(offset): decode threw \(error), expected .damaged or .unsupportedVersion"); continue
                }
            } catch {
                XCTFail("offset \(offset): decode threw a non-KeyFileError \(error)"); continue
            }
            notCaughtByDecode.append(offset)
            for (kind, key) in fx.secrets {
                guard let (dataKey, _) = try? file.unlock(kind: kind, secret: key) else { continue }
                XCTAssertTrue(dataKey.isEqual(to: fx.dataKey),
                              "offset \(offset): the \(kind) slot unlocked to a DIFFERENT data key")
            }
        }
        // Every single-byte change is caught by decode itself (JSON syntax, version, or checksum).
        XCTAssertEqual(notCaughtByDecode, [], "flips decode accepted: " + notCaughtByDecode.map { offset in
            "\(offset) (\(String(decoding: encoded[max(0, offset - 12)..<min(encoded.count, offset + 12)], as: UTF8.self)))"
        }.joined(separator: ", "))
    }

    func testEditingAFieldWithoutRecomputingTheChecksumIsDamage() throws {
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        let text = String(decoding: try fx.file.encoded(), as: UTF8.self)
        let edits: [(String, String)] = [
            ("\"main password\"", "\"main passwore\""),                  // a label (not bound into the AEAD)
            ("\"security questions\"", "\"Security questions\""),
            ("\"Which street did you grow up on?\"", "\"Which street did you grow up in?\""),
            ("\"iterations\" : 1000", "\"iterations\" : 1001"),
            ("\"kind\" : \"recovery\"", "\"kind\" : \"password\""),
            ("\"vault_id\" : \"\(fx.file.vaultID)\"", "\"vault_id\" : \"\(UUID().uuidString.lowercased())\""),
            ("\"created\" : \"\(fx.file.created)\"", "\"created\" : \"1999-01-01T00:00:00Z\""),
        ]
        for (from, to) in edits {
            XCTAssertTrue(text.contains(from), "fixture text lacks \(from)")
            let edited = text.replacingOccurrences(of: from, with: to)
            XCTAssertNotEqual(edited, text)
            XCTAssertThrowsDamaged(try KeyFile.decode(Array(edited.utf8)), "edit \(from) → \(to)")
        }

        // Removing the checksum is damage too, and so is a file with no password slot.
        var wire = try WireMirror(try fx.file.encoded())
        wire.checksum = nil
        let encoder = JSONEncoder()
        XCTAssertThrowsDamaged(try KeyFile.decode(Array(try encoder.encode(wire))), "no checksum")
        wire = try WireMirror(try fx.file.encoded())
        wire.slots.removeFirst()
        XCTAssertThrowsDamaged(try KeyFile.decode(try wire.encodedWithValidChecksum()), "no password slot")
        // Not JSON at all, another format, a newer version.
        XCTAssertThrowsDamaged(try KeyFile.decode(Array("not json".utf8)))
        XCTAssertThrowsDamaged(try KeyFile.decode([]))
        wire = try WireMirror(try fx.file.encoded())
        wire.format = "other-key"
        XCTAssertThrowsDamaged(try KeyFile.decode(try wire.encodedWithValidChecksum()))
        wire = try WireMirror(try fx.file.encoded())
        wire.version = 2
        XCTAssertThrowsKeyFileError(.unsupportedVersion(2), try KeyFile.decode(try wire.encodedWithValidChecksum()))
    }

    func testAMemberNamedTwiceIsDamageNotTheLastOneWinning() throws {
        // A parser that kept the last of two `label`s would read a file other readers read otherwise.
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        let text = String(decoding: try fx.file.encoded(), as: UTF8.self)
        let doubled = text.replacingOccurrences(of: "\"label\" : \"main password\"",
                                                with: "\"label\" : \"main password\",\n      \"label\" : \"main password\"")
        XCTAssertNotEqual(doubled, text)
        XCTAssertThrowsKeyFileError(.damaged("it is not valid key file JSON"), try KeyFile.decode(Array(doubled.utf8)))
    }

    func testMirrorChecksumMatchesTheCodeSoEditsBelowReachTheAEAD() throws {
        // Control for the associated-data tests: re-encoding the unmodified file with the recomputed
        // checksum decodes and unlocks, so a later failure is the edit's doing, not the checksum's.
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        let wire = try WireMirror(try fx.file.encoded())
        XCTAssertEqual(try wire.computedChecksum(), wire.checksum)
        let file = try KeyFile.decode(try wire.encodedWithValidChecksum())
        XCTAssertEqual(file, fx.file)
        for (kind, key) in fx.secrets {
            XCTAssertTrue(try file.unlock(kind: kind, secret: key).dataKey.isEqual(to: fx.dataKey))
        }
    }

    func testKeyFilesAreWrittenAndCheckedByteForByteAsJSONEncoderDid() throws {
        // The checksum of every key file written so far is over JSONEncoder's canonical bytes; the
        // key file's own writer must give the same bytes for any label or question, or older vaults
        // would read as damaged. Every C0 control, both quotes' escapes, `/`, DEL, non-ASCII, an
        // astral character and the separators JavaScript cares about.
        let tricky = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined()
            + "\"\\/\u{7F} é e\u{301} 😀 \u{2028}\u{2029} \u{FEFF}"
        let dataKey = try SecretBytes.random(count: 32)
        var file = KeyFile.new()
        try file.addSlot(kind: .password, label: "pass " + tricky, secret: secret("Correct-Horse-7"), kdf: cheapPBKDF2, dataKey: dataKey)
        try file.addSlot(kind: .questions, label: tricky, questions: [tricky, "Which street? /\\"],
                         secret: try SecretAnswers.normalize(["a", "b"]), kdf: cheapScrypt, dataKey: dataKey)
        for slot in stride(from: 0, to: 0x20, by: 2) {   // each control alone in a label, two a slot (32 slots at most)
            let label = String(UnicodeScalar(UInt8(slot))) + "x" + String(UnicodeScalar(UInt8(slot + 1)))
            try file.addSlot(kind: .recovery, label: label, secret: secret("r\(slot)"), kdf: cheapPBKDF2, dataKey: dataKey)
        }
        let written = try file.encoded()
        let mirror = try WireMirror(written)
        XCTAssertEqual(try mirror.computedChecksum(), mirror.checksum, "the checksum is JSONEncoder's")
        XCTAssertEqual(String(decoding: written, as: UTF8.self), String(decoding: try mirror.encodedWithValidChecksum(), as: UTF8.self),
                       "the file is JSONEncoder's pretty form, byte for byte")
        XCTAssertEqual(try KeyFile.decode(try mirror.encodedWithValidChecksum()), file)
        XCTAssertEqual(try KeyFile.decode(written).slots.map(\.label), file.slots.map(\.label))
    }

    func testAssociatedDataBindsEachSlotToVaultIdKindKdfSaltAndQuestions() throws {
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        // A second password slot, so that one can change kind and the file still has a password slot.
        var base = fx.file
        let secondPassword = secret("Second-Passw0rd")
        try base.addSlot(kind: .password, label: "second", secret: secondPassword, kdf: cheapPBKDF2, dataKey: fx.dataKey)
        let original = try WireMirror(try base.encoded())

        /// Applies `edit`, recomputes the checksum, checks decode accepts it, and that unlocking
        /// `kind` with `key` now throws wrongSecret(kind) instead of succeeding.
        func assertEditBreaksUnwrap(_ what: String, kind: SlotKind, key: SecretBytes, line: UInt = #line,
                                    _ edit: (inout WireMirror) -> Void) throws {
            var wire = original
            edit(&wire)
            let file: KeyFile
            do {
                file = try KeyFile.decode(try wire.encodedWithValidChecksum())
            } catch {
                return XCTFail("\(what): the edited file with a valid checksum should decode, got \(error)", line: line)
            }
            XCTAssertThrowsKeyFileError(.wrongSecret(kind), try file.unlock(kind: kind, secret: key), what, line: line)
        }

        try assertEditBreaksUnwrap("vault id", kind: .password, key: fx.password) {
            $0.vault_id = UUID().uuidString.lowercased()
        }
        try assertEditBreaksUnwrap("vault id (questions)", kind: .questions, key: fx.answers) {
            $0.vault_id = UUID().uuidString.lowercased()
        }
        try assertEditBreaksUnwrap("slot id", kind: .password, key: fx.password) {
            $0.slots[0].id = UUID().uuidString.lowercased()
        }
        try assertEditBreaksUnwrap("kind password → recovery", kind: .recovery, key: secondPassword) {
            $0.slots[3].kind = "recovery"
        }
        try assertEditBreaksUnwrap("kind recovery → password", kind: .password, key: fx.recovery) {
            $0.slots[2].kind = "password"
        }
        try assertEditBreaksUnwrap("a question's text", kind: .questions, key: fx.answers) {
            $0.slots[1].questions?[0] = "What was your first car's name?"
        }
        try assertEditBreaksUnwrap("question order", kind: .questions, key: fx.answers) {
            $0.slots[1].questions?.reverse()
        }
        try assertEditBreaksUnwrap("an added question", kind: .questions, key: fx.answers) {
            $0.slots[1].questions?.append("What is your favourite colour?")
        }
        try assertEditBreaksUnwrap("KDF iterations", kind: .password, key: fx.password) {
            $0.slots[0].kdf.iterations = 1001
        }
        try assertEditBreaksUnwrap("KDF salt", kind: .password, key: fx.password) {
            var salt = Array(Data(base64Encoded: $0.slots[0].kdf.salt)!)
            salt[0] ^= 0x01
            $0.slots[0].kdf.salt = Data(salt).base64EncodedString()
        }
        try assertEditBreaksUnwrap("nonce", kind: .password, key: fx.password) {
            var nonce = Array(Data(base64Encoded: $0.slots[0].nonce)!)
            nonce[11] ^= 0x80
            $0.slots[0].nonce = Data(nonce).base64EncodedString()
        }
        try assertEditBreaksUnwrap("wrapped key", kind: .password, key: fx.password) {
            var wrapped = Array(Data(base64Encoded: $0.slots[0].wrapped_key)!)
            wrapped[0] ^= 0x01
            $0.slots[0].wrapped_key = Data(wrapped).base64EncodedString()
        }
        // Swapping the wrapped keys of the two password slots (same KDF) does not open either.
        try assertEditBreaksUnwrap("wrapped keys swapped between slots", kind: .password, key: fx.password) {
            let a = $0.slots[0], b = $0.slots[3]
            $0.slots[0].nonce = b.nonce; $0.slots[0].wrapped_key = b.wrapped_key
            $0.slots[3].nonce = a.nonce; $0.slots[3].wrapped_key = a.wrapped_key
        }

        // A slot transplanted from another vault's key file, with the same password, does not open.
        var other = KeyFile.new()
        try other.addSlot(kind: .password, label: "other vault", secret: fx.password, kdf: cheapPBKDF2,
                          dataKey: try SecretBytes.random(count: 32))
        let foreignSlot = try WireMirror(try other.encoded()).slots[0]
        try assertEditBreaksUnwrap("slot from another vault", kind: .password, key: fx.password) {
            $0.slots[0] = foreignSlot
            $0.slots.remove(at: 3)
        }

        // Labels and creation times are not bound (they are only covered by the checksum).
        var relabelled = original
        relabelled.slots[0].label = "renamed"
        let file = try KeyFile.decode(try relabelled.encodedWithValidChecksum())
        XCTAssertTrue(try file.unlock(kind: .password, secret: fx.password).dataKey.isEqual(to: fx.dataKey))
    }

    func testRemovingTheLastPasswordSlotIsRefused() throws {
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        var file = fx.file
        let passwordID = file.slots[0].id
        XCTAssertThrowsKeyFileError(.lastPasswordSlot, try file.removeSlot(id: passwordID))
        XCTAssertEqual(file.slots.count, 3, "a refused removal must not change the file")

        // Other kinds can go, by an 8-character prefix.
        try file.removeSlot(id: String(file.slots[2].id.prefix(8)))
        XCTAssertEqual(file.slots.map(\.kind), [.password, .questions])

        // With a second password slot, the first may go; then the second is the last and may not.
        let second = try file.addSlot(kind: .password, label: "second", secret: secret("Second-Passw0rd"),
                                      kdf: cheapPBKDF2, dataKey: fx.dataKey)
        try file.removeSlot(id: passwordID)
        XCTAssertEqual(file.slots.map(\.id), [fx.file.slots[1].id, second.id])
        XCTAssertThrowsKeyFileError(.lastPasswordSlot, try file.removeSlot(id: second.id.uppercased()))
        XCTAssertThrowsKeyFileError(.noSuchSlot("0000000000"), try file.removeSlot(id: "0000000000"))
        // The remaining file still round-trips and opens.
        let decoded = try KeyFile.decode(try file.encoded())
        XCTAssertTrue(try decoded.unlock(kind: .password, secret: secret("Second-Passw0rd")).dataKey.isEqual(to: fx.dataKey))
    }

    func testSlotLookupByIdOrPrefixOfAtLeastEightCharacters() throws {
        let fx = try Fixture(kdf: (cheapPBKDF2, cheapPBKDF2, cheapPBKDF2))
        for slot in fx.file.slots {
            XCTAssertEqual(try fx.file.slot(matching: slot.id), slot)
            XCTAssertEqual(try fx.file.slot(matching: slot.id.uppercased()), slot)
            XCTAssertEqual(try fx.file.slot(matching: String(slot.id.prefix(8))), slot)
            XCTAssertEqual(try fx.file.slot(matching: String(slot.id.prefix(8)).uppercased()), slot)
            XCTAssertEqual(try fx.file.slot(matching: String(slot.id.prefix(13))), slot)
            let seven = String(slot.id.prefix(7))
            XCTAssertThrowsKeyFileError(.noSuchSlot(seven), try fx.file.slot(matching: seven))
        }
        XCTAssertThrowsKeyFileError(.noSuchSlot(""), try fx.file.slot(matching: ""))
        XCTAssertThrowsKeyFileError(.noSuchSlot("zzzzzzzz"), try fx.file.slot(matching: "zzzzzzzz"))
    }

    // MARK: - Security-question answers and recovery keys

    private func normalized(_ answers: [String]) throws -> [UInt8] { try SecretAnswers.normalize(answers).testBytes }

    func testAnswersIgnoreCaseAndSurroundingOrRepeatedSpaces() throws {
        XCTAssertEqual(try normalized(["  Fluffy  the Cat "]), try normalized(["fluffy the cat"]))
        XCTAssertEqual(try normalized(["\tFLUFFY\nthe   CAT"]), try normalized(["fluffy the cat"]))
        XCTAssertNotEqual(try normalized(["fluffy the cat"]), try normalized(["fluffythe cat"]))
        XCTAssertNotEqual(try normalized(["fluffy"]), try normalized(["fluffy2"]))
    }

    func testComposedAndDecomposedAccentsAreEqual() throws {
        let nfc = "Jos\u{E9}"          // é as one code point
        let nfd = "Jose\u{301}"        // e + combining acute accent
        XCTAssertNotEqual(Array(nfc.utf8), Array(nfd.utf8))
        XCTAssertEqual(try normalized([nfc]), try normalized([nfd]))
        XCTAssertEqual(try normalized(["JOS\u{C9}"]), try normalized([nfd]))
        XCTAssertNotEqual(try normalized([nfc]), try normalized(["Jose"]))
    }

    func testAnswerBoundariesAndOrderMatter() throws {
        XCTAssertNotEqual(try normalized(["ab", "c"]), try normalized(["a", "bc"]))
        XCTAssertNotEqual(try normalized(["ab", "c"]), try normalized(["abc"]))
        XCTAssertNotEqual(try normalized(["a", "b"]), try normalized(["b", "a"]))
        XCTAssertNotEqual(try normalized(["a b"]), try normalized(["a", "b"]))
    }

    func testEmptyAnswerIsRejected() {
        for answers in [[""], ["   "], ["fine", ""], ["\n\t"]] {
            XCTAssertThrowsError(try SecretAnswers.normalize(answers), "\(answers)") { error in
                guard case .invalidParameters = error as? CryptoError else {
                    return XCTFail("expected CryptoError.invalidParameters, got \(error)")
                }
            }
        }
    }

    private static let crockford = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    func testRecoveryKeyDisplayIsEightGroupsOfFourCrockfordCharacters() throws {
        var seen = Set<String>()
        for _ in 0..<50 {
            let (display, secret) = try RecoveryKey.generate()
            let groups = display.split(separator: "-", omittingEmptySubsequences: false)
            XCTAssertEqual(groups.count, 8, display)
            for group in groups {
                XCTAssertEqual(group.count, 4, display)
                XCTAssertTrue(group.allSatisfy { Self.crockford.contains($0) }, display)
            }
            // The secret is the canonical form: the characters without the dashes.
            XCTAssertEqual(secret.testBytes, Array(display.replacingOccurrences(of: "-", with: "").utf8))
            seen.insert(display)
        }
        XCTAssertEqual(seen.count, 50, "recovery keys must be random")
    }

    func testRecoveryKeyParseForgivesCaseSpacesDashesAndLookAlikes() throws {
        // Find a key showing both a 0 and a 1, so the look-alike substitutions are exercised.
        var generated = try RecoveryKey.generate()
        var attempts = 1
        while !(generated.display.contains("0") && generated.display.contains("1")) && attempts < 500 {
            generated = try RecoveryKey.generate(); attempts += 1
        }
        let display = generated.display
        XCTAssertTrue(display.contains("0") && display.contains("1"), "no key with 0 and 1 in 500 tries")
        let bare = display.replacingOccurrences(of: "-", with: "")
        let typings = [
            display,
            display.lowercased(),
            bare,
            bare.lowercased(),
            display.replacingOccurrences(of: "-", with: " "),
            "  " + display.replacingOccurrences(of: "-", with: "  ") + "\n",
            display.replacingOccurrences(of: "0", with: "O"),
            display.replacingOccurrences(of: "0", with: "o"),
            display.replacingOccurrences(of: "1", with: "I"),
            display.replacingOccurrences(of: "1", with: "l"),
            display.replacingOccurrences(of: "1", with: "L").replacingOccurrences(of: "0", with: "O").lowercased(),
            String(bare.prefix(5)) + "-" + String(bare.dropFirst(5)),
        ]
        for typed in typings {
            let parsed = try XCTUnwrap(RecoveryKey.parse(typed), "refused \(typed)")
            XCTAssertTrue(parsed.isEqual(to: generated.secret), "\(typed) parsed to a different secret")
        }
    }

    func testRecoveryKeyParseRejectsWrongLengthsAndInvalidCharacters() throws {
        let bare = try RecoveryKey.generate().display.replacingOccurrences(of: "-", with: "")
        XCTAssertNil(RecoveryKey.parse(""))
        XCTAssertNil(RecoveryKey.parse(String(bare.dropLast())), "31 characters")
        XCTAssertNil(RecoveryKey.parse(bare + "A"), "33 characters")
        XCTAssertNil(RecoveryKey.parse(bare + bare), "64 characters")
        for bad in ["U", "u", "*", "_", "é", "+", "/", "="] {
            let typed = String(bare.dropLast()) + bad
            XCTAssertNil(RecoveryKey.parse(typed), "accepted invalid character \(bad)")
        }
        XCTAssertNil(RecoveryKey.parse(String(bare.prefix(16)) + "." + String(bare.dropFirst(16))))
    }

    // MARK: - Unlock sessions

    private let vaultID = UUID().uuidString.lowercased()
    private let now = Date(timeIntervalSince1970: 1_700_000_000)

    func testSessionRoundTripsTheDataKey() throws {
        let dataKey = try SecretBytes.random(count: 32)
        let created = try UnlockSession.create(dataKey: dataKey, vaultID: vaultID, expires: now.addingTimeInterval(900))
        let parts = created.token.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        XCTAssertEqual(parts.first, "hrs1")
        XCTAssertEqual(parts[1].count, 32)
        XCTAssertEqual(parts[2].count, 64)
        XCTAssertEqual(try UnlockSession.sessionID(in: created.token), created.id)
        let opened = try UnlockSession.open(token: created.token, file: created.file, vaultID: vaultID, now: now)
        XCTAssertTrue(opened.isEqual(to: dataKey))
        XCTAssertEqual(UnlockSession.expiry(of: created.file), now.addingTimeInterval(900))

        // Neither half alone holds the key: the file does not contain it, nor the session key.
        let fileText = String(decoding: created.file, as: UTF8.self)
        XCTAssertFalse(fileText.contains(hexString(dataKey.testBytes)))
        XCTAssertFalse(fileText.contains(Data(dataKey.testBytes).base64EncodedString()))
        XCTAssertFalse(fileText.contains(String(parts[2])))
        XCTAssertFalse(created.token.contains(hexString(dataKey.testBytes)))

        // Two sessions of the same key differ in id, token and file.
        let again = try UnlockSession.create(dataKey: dataKey, vaultID: vaultID, expires: now.addingTimeInterval(900))
        XCTAssertNotEqual(again.id, created.id)
        XCTAssertNotEqual(again.token, created.token)
        XCTAssertNotEqual(again.file, created.file)
    }

    func testASessionFileAsEarlierVersionsWroteItStillOpens() throws {
        // Until 0.5.0 the file was JSONEncoder's: its own member order and `/` escaped as `\/` (base64
        // has slashes). A session started by the old binary must open with the new one.
        let dataKey = try SecretBytes.random(count: 32)
        var slashed: UnlockSession.Created
        repeat {   // until the base64 holds a slash, so the escape is really there
            slashed = try UnlockSession.create(dataKey: dataKey, vaultID: vaultID, expires: now.addingTimeInterval(900))
        } while !String(decoding: slashed.file, as: UTF8.self).contains("/")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(slashed.file)) as? [String: Any])
        let encoder = JSONEncoder()
        struct Old: Encodable {
            let wrapped_key: String, nonce: String, expires: Int64, id: String, vault_id: String, version: Int, format: String
        }
        let old = Old(wrapped_key: object["wrapped_key"] as! String, nonce: object["nonce"] as! String,
                      expires: (object["expires"] as! NSNumber).int64Value, id: object["id"] as! String,
                      vault_id: object["vault_id"] as! String, version: 1, format: "hreader-session")
        let oldFile = Array(try encoder.encode(old))
        XCTAssertTrue(String(decoding: oldFile, as: UTF8.self).contains("\\/"), "the old form escapes slashes")
        XCTAssertNotEqual(oldFile, slashed.file)
        XCTAssertTrue(try UnlockSession.open(token: slashed.token, file: oldFile, vaultID: vaultID, now: now).isEqual(to: dataKey))
        XCTAssertEqual(UnlockSession.expiry(of: oldFile), now.addingTimeInterval(900))
    }

    func testExpiredSessionThrowsExpired() throws {
        let dataKey = try SecretBytes.random(count: 32)
        let expires = now.addingTimeInterval(60)
        let created = try UnlockSession.create(dataKey: dataKey, vaultID: vaultID, expires: expires)
        XCTAssertNoThrow(try UnlockSession.open(token: created.token, file: created.file, vaultID: vaultID,
                                                now: expires.addingTimeInterval(-1)))
        XCTAssertThrowsSessionFailure(.expired, try UnlockSession.open(token: created.token, file: created.file,
                                                                       vaultID: vaultID, now: expires))
        XCTAssertThrowsSessionFailure(.expired, try UnlockSession.open(token: created.token, file: created.file,
                                                                       vaultID: vaultID, now: expires.addingTimeInterval(3600)))
        // Created already expired.
        let stale = try UnlockSession.create(dataKey: dataKey, vaultID: vaultID, expires: now.addingTimeInterval(-1))
        XCTAssertThrowsSessionFailure(.expired, try UnlockSession.open(token: stale.token, file: stale.file, vaultID: vaultID, now: now))
    }

    func testSessionOfAnotherVaultIsInvalid() throws {
        let created = try UnlockSession.create(dataKey: try SecretBytes.random(count: 32), vaultID: vaultID,
                                               expires: now.addingTimeInterval(900))
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: created.file,
                                                                       vaultID: UUID().uuidString.lowercased(), now: now))
    }

    func testTokenOfAnotherSessionIsInvalid() throws {
        let dataKey = try SecretBytes.random(count: 32)
        let a = try UnlockSession.create(dataKey: dataKey, vaultID: vaultID, expires: now.addingTimeInterval(900))
        let b = try UnlockSession.create(dataKey: dataKey, vaultID: vaultID, expires: now.addingTimeInterval(900))
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: a.token, file: b.file, vaultID: vaultID, now: now))
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: b.token, file: a.file, vaultID: vaultID, now: now))
        // A's session key under B's id (a spliced token) does not open B's file.
        let aKey = a.token.split(separator: ".")[2]
        let spliced = "hrs1.\(b.id).\(aKey)"
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: spliced, file: b.file, vaultID: vaultID, now: now))
        // One changed hex digit of the session key.
        var chars = Array(a.token)
        chars[chars.count - 1] = chars[chars.count - 1] == "0" ? "1" : "0"
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: String(chars), file: a.file, vaultID: vaultID, now: now))
    }

    func testTamperedSessionFileIsInvalid() throws {
        let created = try UnlockSession.create(dataKey: try SecretBytes.random(count: 32), vaultID: vaultID,
                                               expires: now.addingTimeInterval(60))
        func edited(_ change: (inout [String: Any]) -> Void) throws -> [UInt8] {
            var object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(created.file)) as? [String: Any])
            change(&object)
            return Array(try JSONSerialization.data(withJSONObject: object))
        }
        // Extending the expiry by editing the file is detected, not honoured.
        let expires = (try JSONSerialization.jsonObject(with: Data(created.file)) as? [String: Any])?["expires"]
        let expiresValue = try XCTUnwrap((expires as? Int) ?? (expires as? NSNumber)?.intValue)
        XCTAssertEqual(expiresValue, Int(now.timeIntervalSince1970) + 60)
        let extended = try edited { $0["expires"] = expiresValue + 86_400 }
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: extended,
                                                                       vaultID: vaultID, now: now))
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: extended, vaultID: vaultID,
                                                                       now: now.addingTimeInterval(3600)))
        // Moving the file to another vault id (file and check agree) still fails the AEAD.
        let otherVault = UUID().uuidString.lowercased()
        let moved = try edited { $0["vault_id"] = otherVault }
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: moved, vaultID: otherVault, now: now))
        // Wrapped key or nonce altered.
        for field in ["wrapped_key", "nonce"] {
            let altered = try edited { object in
                var bytes = Array(Data(base64Encoded: object[field] as! String)!)
                bytes[0] ^= 0x01
                object[field] = Data(bytes).base64EncodedString()
            }
            XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: altered,
                                                                           vaultID: vaultID, now: now), field)
        }
        // Garbage, empty, and another format.
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: [], vaultID: vaultID, now: now))
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: Array("{}".utf8),
                                                                       vaultID: vaultID, now: now))
        let otherFormat = try edited { $0["format"] = "hreader-key" }
        XCTAssertThrowsSessionFailure(.invalid, try UnlockSession.open(token: created.token, file: otherFormat,
                                                                       vaultID: vaultID, now: now))
    }

    func testMalformedTokensThrowMalformedToken() throws {
        let created = try UnlockSession.create(dataKey: try SecretBytes.random(count: 32), vaultID: vaultID,
                                               expires: now.addingTimeInterval(900))
        let id = created.id
        let key = String(created.token.split(separator: ".")[2])
        let malformed = [
            "",
            "hrs1",
            "hrs1..",
            "hrs1.\(id)",
            "hrs1.\(id).",
            "hrs2.\(id).\(key)",
            "HRS1.\(id).\(key)",
            "hrs1.\(id.dropLast()).\(key)",
            "hrs1.\(id)0.\(key)",
            "hrs1.\(id).\(key.dropLast())",
            "hrs1.\(id).\(key)0",
            "hrs1.\(id).\(key).extra",
            "hrs1.\(id.dropLast())g.\(key)",
            "hrs1.\(id).\(key.dropLast())z",
            " \(created.token)",
            "\(created.token)\n",
            // Full-width hex digits are "hex digits" to Character.isHexDigit, but not to a token.
            "hrs1.\(id).\(key.dropLast())\u{FF21}",
            "hrs1.\(id.dropLast())\u{FF10}.\(key)",
        ]
        for token in malformed {
            XCTAssertThrowsSessionFailure(.malformedToken, try UnlockSession.sessionID(in: token), "sessionID(in: \(token.debugDescription))")
            XCTAssertThrowsSessionFailure(.malformedToken, try UnlockSession.open(token: token, file: created.file,
                                                                                  vaultID: vaultID, now: now),
                                          "open(token: \(token.debugDescription))")
        }
        // Upper-case hex is still a well-formed token for the same session.
        XCTAssertEqual(try UnlockSession.sessionID(in: "hrs1.\(id).\(key.uppercased())"), id)
    }

    // MARK: - Atomic file replacement

    /// A fresh temporary directory for this test, removed when it ends.
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-keyfile-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    private func mode(_ url: URL) throws -> mode_t {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw NSError(domain: "stat", code: Int(errno)) }
        return info.st_mode & 0o7777
    }

    private func inode(_ url: URL) throws -> UInt64 {
        var info = stat()
        guard stat(url.path, &info) == 0 else { throw NSError(domain: "stat", code: Int(errno)) }
        return UInt64(info.st_ino)
    }

    private func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    func testWriteCreatesAFileWithMode0600EvenUnderAPermissiveUmask() throws {
        let target = directory.appendingPathComponent("vault.key")
        let previous = umask(0)
        defer { umask(previous) }
        try AtomicFile.write(Array("first".utf8), to: target)
        XCTAssertEqual(try mode(target), 0o600)
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data("first".utf8))
        XCTAssertEqual(try names(), ["vault.key"], "no temporary file may remain")
    }

    func testWriteReplacesAnExistingFileByRenameAndResetsItsMode() throws {
        let target = directory.appendingPathComponent("vault.key")
        XCTAssertTrue(FileManager.default.createFile(atPath: target.path, contents: Data(repeating: 0x41, count: 10_000),
                                                     attributes: [.posixPermissions: 0o644]))
        XCTAssertEqual(try mode(target), 0o644)
        let before = try inode(target)
        // A reader holding the old file keeps seeing the old content whole (rename, not rewrite in place).
        let reader = try FileHandle(forReadingFrom: target)
        defer { try? reader.close() }

        let replacement = Array("{\"new\": true}\n".utf8)
        try AtomicFile.write(replacement, to: target)
        XCTAssertEqual(FileManager.default.contents(atPath: target.path).map(Array.init), replacement)
        XCTAssertEqual(try mode(target), 0o600)
        XCTAssertNotEqual(try inode(target), before, "the file must be replaced by a rename, not rewritten in place")
        XCTAssertEqual(reader.readDataToEndOfFile(), Data(repeating: 0x41, count: 10_000))
        XCTAssertEqual(try names(), ["vault.key"])

        // Writing an empty file and a large one both work.
        try AtomicFile.write([], to: target)
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data())
        let large = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try AtomicFile.write(large, to: target)
        XCTAssertEqual(FileManager.default.contents(atPath: target.path).map(Array.init), large)
        XCTAssertEqual(try names(), ["vault.key"])
    }

    func testWriteIntoAMissingDirectoryThrowsAndLeavesNothing() throws {
        let target = directory.appendingPathComponent("missing/vault.key")
        XCTAssertThrowsError(try AtomicFile.write(Array("x".utf8), to: target)) { error in
            XCTAssertTrue(error is AtomicFile.Error, "got \(error)")
        }
        XCTAssertEqual(try names(), [])
    }

    func testRemoveLeftoversRemovesOnlyThisFilesTemporaries() throws {
        let target = directory.appendingPathComponent("vault.key")
        try AtomicFile.write(Array("keep".utf8), to: target)
        let leftovers = [".vault.key.tmp-0a1b2c3d4e5f", ".vault.key.tmp-ffffffffffff", ".vault.key.tmp-"]
        let others = [".other.tmp-0a1b2c3d4e5f", "vault.key.tmp-notdotted", ".vault.keyX.tmp-1", "vault.db"]
        for name in leftovers + others {
            XCTAssertTrue(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data("x".utf8)))
        }
        AtomicFile.removeLeftovers(for: target)
        XCTAssertEqual(try names(), (others + ["vault.key"]).sorted())
        XCTAssertEqual(FileManager.default.contents(atPath: target.path), Data("keep".utf8))
        // Nothing to remove, or no directory at all: no error, no change.
        AtomicFile.removeLeftovers(for: target)
        AtomicFile.removeLeftovers(for: directory.appendingPathComponent("nowhere/vault.key"))
        XCTAssertEqual(try names(), (others + ["vault.key"]).sorted())
    }
}

// MARK: - Limits (issue 23, L2)

final class KeyFileLimitsTests: XCTestCase {
    /// `slots` copies of `template`'s first slot (fresh ids, the KDF `kdf`), checksum recomputed.
    private func keyFile(_ template: KeyFile, slots count: Int, kdf: WireKDFMirror) throws -> [UInt8] {
        var wire = try WireMirror(try template.encoded())
        let slot = wire.slots[0]
        wire.slots = (0..<count).map { _ in
            var copy = slot
            copy.id = UUID().uuidString.lowercased()
            copy.kdf = WireKDFMirror(name: kdf.name, n: kdf.n, r: kdf.r, p: kdf.p, iterations: kdf.iterations, salt: slot.kdf.salt)
            return copy
        }
        return try wire.encodedWithValidChecksum()
    }

    private let cheap = WireKDFMirror(name: "scrypt", n: 1024, r: 8, p: 1, iterations: nil, salt: "")

    func testDecodeRefusesMoreSlotsOrMoreKDFWorkThanAnUnlockMayTake() throws {
        var template = KeyFile.new()
        try template.addSlot(kind: .password, label: "pw", secret: secret("Passw0rdX"), kdf: cheapScrypt, dataKey: try SecretBytes.random(count: 32))
        XCTAssertEqual(KeyFile.maximumSlots, 32)
        XCTAssertEqual(KeyFile.maximumTotalWork, 1 << 26)
        XCTAssertEqual(KeyFile.maximumTotalWorkOnRead, 1 << 27)
        XCTAssertNoThrow(try KeyFile.decode(try keyFile(template, slots: 32, kdf: cheap)), "32 slots")
        XCTAssertThrowsDamaged(try KeyFile.decode(try keyFile(template, slots: 33, kdf: cheap)), "33 slots")
        XCTAssertThrowsDamaged(try KeyFile.decode(try keyFile(template, slots: 2000, kdf: cheap)), "2000 slots")
        let atCap = WireKDFMirror(name: "pbkdf2-sha256", n: nil, r: nil, p: nil, iterations: 1 << 24, salt: "")
        XCTAssertNoThrow(try KeyFile.decode(try keyFile(template, slots: 8, kdf: atCap)), "eight slots at the per-slot cap: the total on read exactly")
        XCTAssertThrowsDamaged(try KeyFile.decode(try keyFile(template, slots: 9, kdf: atCap)), "nine slots at the per-slot cap")
        let legacy = WireKDFMirror(name: "pbkdf2-sha256", n: nil, r: nil, p: nil, iterations: 100_000_000, salt: "")
        XCTAssertNoThrow(try KeyFile.decode(try keyFile(template, slots: 1, kdf: legacy)), "a slot an earlier version could write still reads")
        XCTAssertThrowsDamaged(try KeyFile.decode(try keyFile(template, slots: 2, kdf: legacy)), "two of them are over the total")
        let overCap = WireKDFMirror(name: "pbkdf2-sha256", n: nil, r: nil, p: nil, iterations: 100_000_001, salt: "")
        XCTAssertThrowsDamaged(try KeyFile.decode(try keyFile(template, slots: 1, kdf: overCap)), "a slot over what any version wrote")
        let scryptOver = WireKDFMirror(name: "scrypt", n: 1 << 22, r: 8, p: 1, iterations: nil, salt: "")
        XCTAssertThrowsDamaged(try KeyFile.decode(try keyFile(template, slots: 1, kdf: scryptOver)), "scrypt N·r·p over the cap")
        // A salt longer than 64 bytes.
        var wire = try WireMirror(try template.encoded())
        wire.slots[0].kdf.salt = Data(repeating: 7, count: 65).base64EncodedString()
        XCTAssertThrowsDamaged(try KeyFile.decode(try wire.encodedWithValidChecksum()), "a 65-byte salt")
    }

    func testAddSlotRefusesTheSlotBeyondEitherCap() throws {
        let dataKey = try SecretBytes.random(count: 32)
        var file = KeyFile.new()
        for i in 0..<KeyFile.maximumSlots {
            try file.addSlot(kind: .password, label: "pw \(i)", secret: secret("Passw0rdX"), kdf: .scrypt(n: 2, r: 1, p: 1), dataKey: dataKey)
        }
        XCTAssertThrowsError(try file.addSlot(kind: .password, label: "one more", secret: secret("Passw0rdX"), kdf: .scrypt(n: 2, r: 1, p: 1), dataKey: dataKey))
        XCTAssertEqual(file.slots.count, 32)
        XCTAssertNoThrow(try KeyFile.decode(try file.encoded()))
        // Replacing slots (passwd, key upgrade, recover) is allowed at the cap: the replaced ones do not count.
        let replaced = file.slots[0].id
        try file.addSlot(kind: .password, label: "new", secret: secret("Passw0rdY"), kdf: .scrypt(n: 4, r: 1, p: 1),
                         dataKey: dataKey, replacing: [replaced])
        try file.removeSlot(id: replaced)
        XCTAssertEqual(file.slots.count, 32)

        // Four slots at the per-slot cap make the total; a fifth, however cheap, is refused before deriving.
        let atCap = WireKDFMirror(name: "pbkdf2-sha256", n: nil, r: nil, p: nil, iterations: 1 << 24, salt: "")
        var heavy = try KeyFile.decode(try keyFile(file, slots: 4, kdf: atCap))
        XCTAssertEqual(heavy.totalWork, 1 << 26)
        let started = Date()
        XCTAssertThrowsError(try heavy.addSlot(kind: .password, label: "over", secret: secret("Passw0rdX"), kdf: .scrypt(n: 2, r: 1, p: 1), dataKey: dataKey))
        XCTAssertLessThan(Date().timeIntervalSince(started), 1, "refused without deriving")
    }
}
