import Foundation

/// What a key slot's secret is.
public enum SlotKind: String, Codable, Sendable, CaseIterable {
    case password, questions, recovery
}

/// One wrapping of the data key under a key-encryption key derived from one secret.
public struct KeySlot: Equatable, Sendable {
    public let id: String
    public let kind: SlotKind
    public var label: String
    /// The security questions (not secret), for `questions` slots only.
    public let questions: [String]?
    public let kdf: KDFParameters
    public let salt: [UInt8]
    public let nonce: [UInt8]
    public let wrappedKey: [UInt8]
    public let created: String
}

/// The previous data key, wrapped (AES-256-GCM) under the new data key, kept in the key file only
/// between the two writes of `hreader rekey` (see docs/security.md, "Rekey").
public struct PendingRekey: Equatable, Sendable {
    public let nonce: [UInt8]
    public let wrappedKey: [UInt8]
}

public enum KeyFileError: Error, Equatable, Sendable {
    /// The file does not parse, its checksum does not match, or a field is out of range.
    case damaged(String)
    case unsupportedVersion(Int)
    /// No slot of the kind tried opens with the secret given.
    case wrongSecret(SlotKind)
    case noSlot(SlotKind)
    case noSuchSlot(String)
    case lastPasswordSlot
}

/// The vault's key file, `vault.key` (format `hreader-key`, version 1; see docs/formats.md).
///
/// The data key is wrapped once per slot with AES-256-GCM; the associated data binds each wrapping
/// to the vault id, the slot id and kind, the KDF and its parameters, the salt and the questions,
/// so that editing any of them makes the slot fail to open. A SHA-256 checksum over the canonical
/// content detects accidental damage before any KDF is run.
///
///     var file = KeyFile.new()
///     _ = try file.addSlot(kind: .password, label: "password", secret: password, kdf: .scryptDefault, dataKey: key)
///     let (dataKey, _) = try file.unlock(kind: .password, secret: password)
public struct KeyFile: Equatable, Sendable {
    public static let format = "hreader-key"
    public static let version = 1
    static let dataKeySize = 32
    /// At most this many slots. With every slot's KDF work capped (`KDFParameters.maximumWork`) and
    /// the sum capped too (`maximumTotalWork`), a crafted key file (a backup's, say) cannot make an
    /// unlock, which tries every slot of a kind, run for more than about half a minute.
    public static let maximumSlots = 32
    /// The KDF work of all slots together: 2^26, four slots at the per-slot cap or 64 at the default
    /// scrypt (N=2^17, r=8, p=1); about 30 s on the reference machine (docs/formats.md, "Limits").
    public static let maximumTotalWork: UInt64 = 1 << 26
    /// What a key file read from disk may ask for in all: `maximumTotalWork` and room for one slot
    /// of a key file an earlier hreader wrote (`KDFParameters.legacyMaximumPBKDF2Iterations`), so no
    /// vault that opened before is refused; still about a minute at worst, not hours.
    public static let maximumTotalWorkOnRead: UInt64 = 1 << 27
    /// A salt longer than this (bytes) is damage; hreader writes 16.
    static let maximumSaltSize = 64

    /// The KDF work of every slot together (`KDFParameters.work`).
    public var totalWork: UInt64 { slots.reduce(0) { $0 + $1.kdf.work } }

    public let vaultID: String
    public let created: String
    public private(set) var slots: [KeySlot]
    /// Present only while `hreader rekey` is under way (see `PendingRekey`).
    public private(set) var pendingRekey: PendingRekey?

    init(vaultID: String, created: String, slots: [KeySlot], pendingRekey: PendingRekey? = nil) {
        self.vaultID = vaultID
        self.created = created
        self.slots = slots
        self.pendingRekey = pendingRekey
    }

    public static func new(vaultID: String = UUID().uuidString.lowercased(), now: Date = Date()) -> KeyFile {
        KeyFile(vaultID: vaultID, created: Timestamp.rfc3339(now), slots: [])
    }

    /// Wraps `dataKey` under a key derived from `secret` and adds the slot. The slots whose ids are in
    /// `replacing` are about to be removed (a new password, stronger KDF parameters, a recovery): they
    /// do not count against the limits on slots and KDF work, and the caller removes them next.
    @discardableResult
    public mutating func addSlot(kind: SlotKind, label: String, questions: [String]? = nil, secret: SecretBytes,
                                 kdf: KDFParameters, dataKey: SecretBytes, replacing: [String] = [], now: Date = Date()) throws -> KeySlot {
        guard dataKey.count == Self.dataKeySize else { throw CryptoError.invalidParameters("the data key must be 32 bytes") }
        if kind == .questions {
            guard let questions, questions.count >= 2 else {
                throw CryptoError.invalidParameters("a questions slot needs two or more questions")
            }
        } else if questions != nil {
            throw CryptoError.invalidParameters("only a questions slot has questions")
        }
        try kdf.validateForNewSlot()
        let staying = slots.filter { !replacing.contains($0.id) }
        guard staying.count < Self.maximumSlots else {
            throw CryptoError.invalidParameters("a key file holds at most \(Self.maximumSlots) slots; remove one first")
        }
        guard staying.reduce(0, { $0 + $1.kdf.work }) + kdf.work <= Self.maximumTotalWork else {
            throw CryptoError.invalidParameters("the key slots together would ask for more KDF work than an unlock may take; use lower KDF parameters or remove a slot")
        }
        let id = UUID().uuidString.lowercased()
        let salt = try SecureRandom.bytes(16)
        let nonce = try SecureRandom.bytes(AESGCM.nonceSize)
        let kek = try KDF.derive(kdf, secret: secret, salt: salt)
        let aad = Self.associatedData(vaultID: vaultID, slotID: id, kind: kind, kdf: kdf, salt: salt, questions: questions)
        let wrapped = try AESGCM.seal(dataKey, key: kek, nonce: nonce, associatedData: aad)
        let slot = KeySlot(id: id, kind: kind, label: label, questions: questions, kdf: kdf, salt: salt,
                           nonce: nonce, wrappedKey: wrapped, created: Timestamp.rfc3339(now))
        slots.append(slot)
        return slot
    }

    /// Unwraps the data key from one slot.
    public func unwrap(_ slot: KeySlot, secret: SecretBytes) throws -> SecretBytes {
        let kek = try KDF.derive(slot.kdf, secret: secret, salt: slot.salt)
        let aad = Self.associatedData(vaultID: vaultID, slotID: slot.id, kind: slot.kind, kdf: slot.kdf,
                                      salt: slot.salt, questions: slot.questions)
        do {
            let key = try AESGCM.open(slot.wrappedKey, key: kek, nonce: slot.nonce, associatedData: aad)
            guard key.count == Self.dataKeySize else { throw KeyFileError.damaged("slot \(slot.id) holds a key of the wrong size") }
            return key
        } catch CryptoError.authenticationFailed {
            throw KeyFileError.wrongSecret(slot.kind)
        }
    }

    /// Tries every slot of `kind` (in file order) and returns the data key and the slot that opened.
    public func unlock(kind: SlotKind, secret: SecretBytes) throws -> (dataKey: SecretBytes, slot: KeySlot) {
        let candidates = slots.filter { $0.kind == kind }
        guard !candidates.isEmpty else { throw KeyFileError.noSlot(kind) }
        for slot in candidates {
            if let key = try? unwrap(slot, secret: secret) { return (key, slot) }
        }
        throw KeyFileError.wrongSecret(kind)
    }

    /// Removes a slot; the last password slot cannot go.
    public mutating func removeSlot(id: String) throws {
        let match = try slot(matching: id)
        guard let index = slots.firstIndex(where: { $0.id == match.id }) else { throw KeyFileError.noSuchSlot(id) }
        if slots[index].kind == .password && slots.filter({ $0.kind == .password }).count == 1 {
            throw KeyFileError.lastPasswordSlot
        }
        slots.remove(at: index)
    }

    /// Looks a slot up by its id or a unique prefix of at least 8 characters.
    public func slot(matching id: String) throws -> KeySlot {
        let matches = slots.filter { $0.id == id.lowercased() || (id.count >= 8 && $0.id.hasPrefix(id.lowercased())) }
        guard matches.count == 1 else { throw KeyFileError.noSuchSlot(id) }
        return matches[0]
    }

    // MARK: Rekey

    /// The same vault (id and creation time) with no slots and no pending rekey: the start of the
    /// key file that `hreader rekey` writes for a fresh data key.
    public func emptyCopy() -> KeyFile {
        KeyFile(vaultID: vaultID, created: created, slots: [])
    }

    /// Records, for the time a rekey takes, the previous data key wrapped under the new one (which
    /// every slot of this file wraps). Whoever opens a slot can then also open a database that is
    /// still under the previous key, and finish the rekey.
    public mutating func setPendingRekey(previous: SecretBytes, current: SecretBytes) throws {
        guard previous.count == Self.dataKeySize, current.count == Self.dataKeySize else {
            throw CryptoError.invalidParameters("the data key must be 32 bytes")
        }
        let nonce = try SecureRandom.bytes(AESGCM.nonceSize)
        let wrapped = try AESGCM.seal(previous, key: current, nonce: nonce, associatedData: Self.rekeyAssociatedData(vaultID: vaultID))
        pendingRekey = PendingRekey(nonce: nonce, wrappedKey: wrapped)
    }

    /// The previous data key of a pending rekey, unwrapped with the current (new) data key.
    public func previousDataKey(current: SecretBytes) throws -> SecretBytes {
        guard let pendingRekey else { throw KeyFileError.damaged("it has no pending rekey") }
        do {
            let key = try AESGCM.open(pendingRekey.wrappedKey, key: current, nonce: pendingRekey.nonce,
                                      associatedData: Self.rekeyAssociatedData(vaultID: vaultID))
            guard key.count == Self.dataKeySize else { throw KeyFileError.damaged("its pending rekey holds a key of the wrong size") }
            return key
        } catch CryptoError.authenticationFailed {
            throw KeyFileError.damaged("its pending rekey does not open with the key its slots hold")
        }
    }

    /// The rekey is finished: the previous data key is forgotten.
    public mutating func clearPendingRekey() { pendingRekey = nil }

    static func rekeyAssociatedData(vaultID: String) -> [UInt8] {
        var out: [UInt8] = []
        for field in [format, String(version), vaultID, "rekey-previous-data-key"] {
            let bytes = Array(field.utf8)
            out += Array("\(bytes.count):".utf8) + bytes
        }
        return out
    }

    static func associatedData(vaultID: String, slotID: String, kind: SlotKind, kdf: KDFParameters,
                               salt: [UInt8], questions: [String]?) -> [UInt8] {
        var fields = [format, String(version), vaultID, slotID, kind.rawValue, kdf.descriptor, salt.base64]
        fields.append(contentsOf: questions ?? [])
        // Length-prefixed fields: no choice of values can make two different lists encode the same.
        var out: [UInt8] = []
        for field in fields {
            let bytes = Array(field.utf8)
            out += Array("\(bytes.count):".utf8) + bytes
        }
        return out
    }
}

extension KDFParameters {
    /// A canonical one-line form, bound into each slot's associated data.
    var descriptor: String {
        switch self {
        case let .scrypt(n, r, p): return "scrypt:n=\(n),r=\(r),p=\(p)"
        case let .pbkdf2SHA256(iterations): return "pbkdf2-sha256:i=\(iterations)"
        }
    }
}

// MARK: - JSON form

extension KeyFile {
    private struct Wire: Codable {
        var format: String
        var version: Int
        var vault_id: String
        var created: String
        var slots: [WireSlot]
        var rekey: WireRekey?
        var checksum: String?
    }

    private struct WireRekey: Codable {
        var nonce: String
        var previous_key: String
    }

    private struct WireSlot: Codable {
        var id: String
        var kind: String
        var label: String
        var questions: [String]?
        var kdf: WireKDF
        var nonce: String
        var wrapped_key: String
        var created: String
    }

    private struct WireKDF: Codable {
        var name: String
        var n: UInt64?
        var r: UInt64?
        var p: UInt64?
        var iterations: UInt32?
        var salt: String
    }

    private static func canonicalBytes(_ wire: Wire) throws -> [UInt8] {
        var body = wire
        body.checksum = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(body))
    }

    private static func checksum(_ wire: Wire) throws -> String {
        "sha256:" + SHA256.hash(try canonicalBytes(wire)).map { String(format: "%02x", $0) }.joined()
    }

    /// Codable ignores members it does not know; a key file must not carry any (they would escape
    /// the checksum and vanish at the next write).
    private static func checkNoUnknownMembers(_ bytes: [UInt8]) throws {
        let top: Set<String> = ["format", "version", "vault_id", "created", "slots", "rekey", "checksum"]
        let slot: Set<String> = ["id", "kind", "label", "questions", "kdf", "nonce", "wrapped_key", "created"]
        let kdf: Set<String> = ["name", "n", "r", "p", "iterations", "salt"]
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              Set(object.keys).isSubset(of: top), let slots = object["slots"] as? [[String: Any]]
        else { throw KeyFileError.damaged("it has members this version does not know") }
        if let rekey = object["rekey"] {
            guard let r = rekey as? [String: Any], Set(r.keys) == ["nonce", "previous_key"] else {
                throw KeyFileError.damaged("its pending rekey has members this version does not know")
            }
        }
        for s in slots {
            guard Set(s.keys).isSubset(of: slot), let k = s["kdf"] as? [String: Any], Set(k.keys).isSubset(of: kdf) else {
                throw KeyFileError.damaged("a slot has members this version does not know")
            }
        }
    }

    public func encoded() throws -> [UInt8] {
        var wire = Wire(format: Self.format, version: Self.version, vault_id: vaultID, created: created, slots: slots.map { slot in
            let kdf: WireKDF
            switch slot.kdf {
            case let .scrypt(n, r, p): kdf = WireKDF(name: "scrypt", n: n, r: r, p: p, iterations: nil, salt: slot.salt.base64)
            case let .pbkdf2SHA256(i): kdf = WireKDF(name: "pbkdf2-sha256", n: nil, r: nil, p: nil, iterations: i, salt: slot.salt.base64)
            }
            return WireSlot(id: slot.id, kind: slot.kind.rawValue, label: slot.label, questions: slot.questions, kdf: kdf,
                            nonce: slot.nonce.base64, wrapped_key: slot.wrappedKey.base64, created: slot.created)
        }, rekey: pendingRekey.map { WireRekey(nonce: $0.nonce.base64, previous_key: $0.wrappedKey.base64) }, checksum: nil)
        wire.checksum = try Self.checksum(wire)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(wire)) + [0x0a]
    }

    /// `bytes` with the checksum recomputed over what they hold (nil if they do not parse as a key
    /// file's JSON). For the fuzzer and tests: random edits break the checksum, and this lets them
    /// reach the checks behind it.
    static func resealed(_ bytes: [UInt8]) -> [UInt8]? {
        guard var wire = try? JSONDecoder().decode(Wire.self, from: Data(bytes)), let sum = try? checksum(wire) else { return nil }
        wire.checksum = sum
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(wire)).map(Array.init)
    }

    /// Parses and checks a key file; anything it does not know is refused as damage.
    public static func decode(_ bytes: [UInt8]) throws -> KeyFile {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(bytes))
        } catch {
            throw KeyFileError.damaged("it is not valid key file JSON")
        }
        try checkNoUnknownMembers(bytes)
        guard wire.format == format else { throw KeyFileError.damaged("it is not an hreader key file") }
        guard wire.version == version else { throw KeyFileError.unsupportedVersion(wire.version) }
        guard let sum = wire.checksum, sum == (try checksum(wire)) else {
            throw KeyFileError.damaged("its checksum does not match its content")
        }
        guard UUID(uuidString: wire.vault_id) != nil else { throw KeyFileError.damaged("its vault id is not a UUID") }
        guard wire.slots.count <= maximumSlots else { throw KeyFileError.damaged("it has more than \(maximumSlots) slots") }
        var seen = Set<String>()
        var work: UInt64 = 0
        let slots: [KeySlot] = try wire.slots.map { w in
            guard UUID(uuidString: w.id) != nil, seen.insert(w.id).inserted else { throw KeyFileError.damaged("a slot id is invalid or repeated") }
            guard let kind = SlotKind(rawValue: w.kind) else { throw KeyFileError.damaged("slot \(w.id) has an unknown kind") }
            let kdf: KDFParameters
            switch (w.kdf.name, w.kdf.n, w.kdf.r, w.kdf.p, w.kdf.iterations) {
            case let ("scrypt", n?, r?, p?, nil): kdf = .scrypt(n: n, r: r, p: p)
            case let ("pbkdf2-sha256", nil, nil, nil, i?): kdf = .pbkdf2SHA256(iterations: i)
            default: throw KeyFileError.damaged("slot \(w.id) names an unknown KDF")
            }
            do { try kdf.validate() } catch { throw KeyFileError.damaged("slot \(w.id) has KDF parameters out of range") }
            work += kdf.work
            guard work <= maximumTotalWorkOnRead else {
                throw KeyFileError.damaged("its slots together ask for more KDF work than an unlock may take")
            }
            guard let salt = [UInt8](base64: w.kdf.salt), (16...maximumSaltSize).contains(salt.count),
                  let nonce = [UInt8](base64: w.nonce), nonce.count == AESGCM.nonceSize,
                  let wrapped = [UInt8](base64: w.wrapped_key), wrapped.count == dataKeySize + AESGCM.tagSize
            else { throw KeyFileError.damaged("slot \(w.id) has a malformed salt, nonce or wrapped key") }
            if kind == .questions {
                guard let q = w.questions, q.count >= 2 else { throw KeyFileError.damaged("questions slot \(w.id) lacks its questions") }
            } else if w.questions != nil {
                throw KeyFileError.damaged("slot \(w.id) has questions but is not a questions slot")
            }
            return KeySlot(id: w.id, kind: kind, label: w.label, questions: w.questions, kdf: kdf, salt: salt,
                           nonce: nonce, wrappedKey: wrapped, created: w.created)
        }
        guard slots.contains(where: { $0.kind == .password }) else { throw KeyFileError.damaged("it has no password slot") }
        var pending: PendingRekey?
        if let r = wire.rekey {
            guard let nonce = [UInt8](base64: r.nonce), nonce.count == AESGCM.nonceSize,
                  let wrapped = [UInt8](base64: r.previous_key), wrapped.count == dataKeySize + AESGCM.tagSize
            else { throw KeyFileError.damaged("its pending rekey has a malformed nonce or key") }
            pending = PendingRekey(nonce: nonce, wrappedKey: wrapped)
        }
        return KeyFile(vaultID: wire.vault_id, created: wire.created, slots: slots, pendingRekey: pending)
    }
}

public enum Timestamp {
    public static func rfc3339(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }
}
