import Foundation
import HReaderJSON

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
    /// The members each level may hold: anything else would escape the checksum and vanish at the next
    /// write, so it makes the file damaged.
    // Arrays, not sets: a handful of names, and a process's first Set<String> costs every vault command
    // a runtime conformance lookup (docs/cli.md, "Start-up").
    private static let topMembers = ["format", "version", "vault_id", "created", "slots", "rekey", "checksum"]
    private static let slotMembers = ["id", "kind", "label", "questions", "kdf", "nonce", "wrapped_key", "created"]
    private static let kdfMembers = ["name", "n", "r", "p", "iterations", "salt"]

    /// The file's JSON tree, without its checksum.
    private func body() -> JSONObject {
        var top: JSONObject = ["format": .string(Self.format), "version": .int(Self.version), "vault_id": .string(vaultID),
                               "created": .string(created)]
        top["slots"] = .array(slots.map { slot in
            var kdf: JSONObject
            switch slot.kdf {
            case let .scrypt(n, r, p): kdf = ["name": "scrypt", "n": .int(n), "r": .int(r), "p": .int(p)]
            case let .pbkdf2SHA256(i): kdf = ["name": "pbkdf2-sha256", "iterations": .int(i)]
            }
            kdf["salt"] = .string(slot.salt.base64)
            var object: JSONObject = ["id": .string(slot.id), "kind": .string(slot.kind.rawValue), "label": .string(slot.label)]
            if let questions = slot.questions { object["questions"] = .array(questions.map(JSONValue.string)) }
            object["kdf"] = .object(kdf)
            object["nonce"] = .string(slot.nonce.base64)
            object["wrapped_key"] = .string(slot.wrappedKey.base64)
            object["created"] = .string(slot.created)
            return .object(object)
        })
        if let pendingRekey {
            top["rekey"] = ["nonce": .string(pendingRekey.nonce.base64), "previous_key": .string(pendingRekey.wrappedKey.base64)]
        }
        return top
    }

    /// "sha256:" and the hex SHA-256 of the canonical form of `body` (docs/formats.md, "The checksum").
    private static func checksum(of body: JSONObject) -> String {
        var canonical: [UInt8] = []
        KeyFileJSON.write(.object(body), pretty: false, into: &canonical)
        return "sha256:" + SHA256.hash(canonical).hex
    }

    public func encoded() throws -> [UInt8] {
        var top = body()
        top["checksum"] = .string(Self.checksum(of: top))
        var out: [UInt8] = []
        KeyFileJSON.write(.object(top), pretty: true, into: &out)
        return out + [0x0a]
    }

    /// `bytes` with the checksum recomputed over what they hold (nil if they do not parse as a key
    /// file's JSON). For the fuzzer and tests: random edits break the checksum, and this lets them
    /// reach the checks behind it.
    static func resealed(_ bytes: [UInt8]) -> [UInt8]? {
        guard case var .object(top)? = try? JSONParser.parse(bytes, duplicateNames: .refused) else { return nil }
        top["checksum"] = nil
        top["checksum"] = .string(checksum(of: top))
        var out: [UInt8] = []
        KeyFileJSON.write(.object(top), pretty: false, into: &out)
        return out
    }

    /// Parses and checks a key file; anything it does not know is refused as damage.
    public static func decode(_ bytes: [UInt8]) throws -> KeyFile {
        // At most 32 slots of a few hundred bytes each; a key file nests three levels.
        guard case var .object(top)? = try? JSONParser.parse(bytes, limits: .init(maxDepth: 8, maxBytes: 1 << 20),
                                                              duplicateNames: .refused)
        else { throw KeyFileError.damaged("it is not valid key file JSON") }
        func damaged() -> KeyFileError { .damaged("it is not valid key file JSON") }
        guard top.keys.allSatisfy(topMembers.contains) else { throw KeyFileError.damaged("it has members this version does not know") }
        guard let fileFormat = top["format"]?.string, let versionText = top["version"]?.numberText,
              let vaultID = top["vault_id"]?.string, let created = top["created"]?.string, let wireSlots = top["slots"]?.array
        else { throw damaged() }
        guard fileFormat == format else { throw KeyFileError.damaged("it is not an hreader key file") }
        guard let fileVersion = Int(versionText) else { throw damaged() }
        guard fileVersion == version else { throw KeyFileError.unsupportedVersion(fileVersion) }
        let sum = top.present("checksum")
        top["checksum"] = nil
        guard let sum, sum.string == checksum(of: top) else { throw KeyFileError.damaged("its checksum does not match its content") }
        guard UUID(uuidString: vaultID) != nil else { throw KeyFileError.damaged("its vault id is not a UUID") }
        guard wireSlots.count <= maximumSlots else { throw KeyFileError.damaged("it has more than \(maximumSlots) slots") }
        var seen: [String] = []
        var work: UInt64 = 0
        let slots: [KeySlot] = try wireSlots.map { value in
            guard let w = value.object, let k = w["kdf"]?.object else { throw damaged() }
            guard w.keys.allSatisfy(slotMembers.contains), k.keys.allSatisfy(kdfMembers.contains) else {
                throw KeyFileError.damaged("a slot has members this version does not know")
            }
            guard let id = w["id"]?.string, let kindText = w["kind"]?.string, let label = w["label"]?.string,
                  let nonceText = w["nonce"]?.string, let wrappedText = w["wrapped_key"]?.string, let slotCreated = w["created"]?.string,
                  let name = k["name"]?.string, let saltText = k["salt"]?.string
            else { throw damaged() }
            var questions: [String]?
            if let list = w.present("questions") {
                guard let items = list.array?.compactMap(\.string), items.count == list.array?.count else { throw damaged() }
                questions = items
            }
            guard UUID(uuidString: id) != nil, !seen.contains(id) else { throw KeyFileError.damaged("a slot id is invalid or repeated") }
            seen.append(id)
            guard let kind = SlotKind(rawValue: kindText) else { throw KeyFileError.damaged("slot \(id) has an unknown kind") }
            func number<N: FixedWidthInteger>(_ key: String, _: N.Type) throws -> N? {
                guard let value = k.present(key) else { return nil }
                guard let text = value.numberText, let n = N(text) else { throw damaged() }
                return n
            }
            let kdf: KDFParameters
            switch (name, try number("n", UInt64.self), try number("r", UInt64.self), try number("p", UInt64.self),
                    try number("iterations", UInt32.self)) {
            case let ("scrypt", n?, r?, p?, nil): kdf = .scrypt(n: n, r: r, p: p)
            case let ("pbkdf2-sha256", nil, nil, nil, i?): kdf = .pbkdf2SHA256(iterations: i)
            default: throw KeyFileError.damaged("slot \(id) names an unknown KDF")
            }
            do { try kdf.validate() } catch { throw KeyFileError.damaged("slot \(id) has KDF parameters out of range") }
            work += kdf.work
            guard work <= maximumTotalWorkOnRead else {
                throw KeyFileError.damaged("its slots together ask for more KDF work than an unlock may take")
            }
            guard let salt = [UInt8](base64: saltText), (16...maximumSaltSize).contains(salt.count),
                  let nonce = [UInt8](base64: nonceText), nonce.count == AESGCM.nonceSize,
                  let wrapped = [UInt8](base64: wrappedText), wrapped.count == dataKeySize + AESGCM.tagSize
            else { throw KeyFileError.damaged("slot \(id) has a malformed salt, nonce or wrapped key") }
            if kind == .questions {
                guard let q = questions, q.count >= 2 else { throw KeyFileError.damaged("questions slot \(id) lacks its questions") }
            } else if questions != nil {
                throw KeyFileError.damaged("slot \(id) has questions but is not a questions slot")
            }
            return KeySlot(id: id, kind: kind, label: label, questions: questions, kdf: kdf, salt: salt,
                           nonce: nonce, wrappedKey: wrapped, created: slotCreated)
        }
        guard slots.contains(where: { $0.kind == .password }) else { throw KeyFileError.damaged("it has no password slot") }
        var pending: PendingRekey?
        if let value = top.present("rekey") {
            guard let r = value.object, r.keys.sorted() == ["nonce", "previous_key"] else {
                throw KeyFileError.damaged("its pending rekey has members this version does not know")
            }
            guard let nonce = r["nonce"]?.string.flatMap({ [UInt8](base64: $0) }), nonce.count == AESGCM.nonceSize,
                  let wrapped = r["previous_key"]?.string.flatMap({ [UInt8](base64: $0) }), wrapped.count == dataKeySize + AESGCM.tagSize
            else { throw KeyFileError.damaged("its pending rekey has a malformed nonce or key") }
            pending = PendingRekey(nonce: nonce, wrappedKey: wrapped)
        }
        return KeyFile(vaultID: vaultID, created: created, slots: slots, pendingRekey: pending)
    }
}

/// The key file's JSON exactly as Foundation's `JSONEncoder` writes it with `.sortedKeys` and
/// `.withoutEscapingSlashes` (and `.prettyPrinted` for the file): the checksum of every key file
/// written so far is defined over those bytes (docs/formats.md). That differs from `JSONText` in
/// two escapes only, `\b` and `\f`; keys are sorted by their UTF-8 bytes. Written here rather than
/// through Foundation's coders, which took a millisecond of every command's start.
enum KeyFileJSON {
    static func write(_ value: JSONValue, pretty: Bool, indent: Int = 0, into out: inout [UInt8]) {
        switch value {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .number(let n), .verbatim(let n): out += n.utf8
        case .string(let s): quote(s, into: &out)
        case .array(let items):
            open(UInt8(ascii: "["), items.isEmpty, pretty: pretty, into: &out)
            for (i, item) in items.enumerated() {
                separate(first: i == 0, pretty: pretty, indent: indent + 1, into: &out)
                write(item, pretty: pretty, indent: indent + 1, into: &out)
            }
            close(UInt8(ascii: "]"), items.isEmpty, pretty: pretty, indent: indent, into: &out)
        case .object(let object):
            open(UInt8(ascii: "{"), object.isEmpty, pretty: pretty, into: &out)
            for (i, member) in object.members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }).enumerated() {
                separate(first: i == 0, pretty: pretty, indent: indent + 1, into: &out)
                quote(member.key, into: &out)
                out += (pretty ? " : " : ":").utf8
                write(member.value, pretty: pretty, indent: indent + 1, into: &out)
            }
            close(UInt8(ascii: "}"), object.isEmpty, pretty: pretty, indent: indent, into: &out)
        }
    }

    private static func open(_ bracket: UInt8, _ empty: Bool, pretty: Bool, into out: inout [UInt8]) {
        out.append(bracket)
        if pretty && empty { out.append(0x0a) }
    }

    private static func separate(first: Bool, pretty: Bool, indent: Int, into out: inout [UInt8]) {
        if !first { out.append(UInt8(ascii: ",")) }
        if pretty {
            out.append(0x0a)
            out += repeatElement(UInt8(ascii: " "), count: 2 * indent)
        }
    }

    private static func close(_ bracket: UInt8, _ empty: Bool, pretty: Bool, indent: Int, into out: inout [UInt8]) {
        if pretty {
            out.append(0x0a)
            out += repeatElement(UInt8(ascii: " "), count: 2 * indent)
        }
        out.append(bracket)
    }

    static func quote(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), byte]
            case 0x08: out += "\\b".utf8
            case 0x0C: out += "\\f".utf8
            case 0x0A: out += "\\n".utf8
            case 0x0D: out += "\\r".utf8
            case 0x09: out += "\\t".utf8
            case ..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out += "\\u00".utf8
                out += [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

public enum Timestamp {
    public static func rfc3339(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }
}
