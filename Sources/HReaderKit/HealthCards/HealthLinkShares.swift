import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// `hreader share …` and `hreader serve --shares` (docs/sharing.md, "Sharing"): a patient's IPS as a
/// SMART Health Link.
extension OpenVault {
    public typealias Share = ShareRepository.Share

    /// Wrong passcodes a served link takes before it locks.
    public static let sharePasscodeAttempts = 5

    /// Where a new link's file goes.
    public enum ShareDestination: Sendable {
        /// Written to this directory for any static web host at `baseURL` (flag U, no passcode).
        case directory(URL, baseURL: String)
        /// Handed out by `hreader serve --shares`, reachable at `baseURL` (manifest; flag P with a passcode).
        case served(baseURL: String)
    }

    public struct CreatedShare: Sendable {
        public let share: Share
        public let link: HealthLink
    }

    /// Builds the patient's IPS (as `summary --format ips`), encrypts it under a fresh 32-byte key
    /// (JWE dir + A256GCM, DEFLATEd, `cty` application/fhir+json) and keeps the share; for a
    /// directory, writes only the ciphertext there under the share's random id.
    public func createShare(of patient: Patient, destination: ShareDestination, passcode: String?, expires: Date?, label: String?,
                            now: Date = Date()) throws -> CreatedShare {
        try Self.checkShareLabel(label)
        if let expires, expires <= now { throw HReaderError.usage("--expires must be in the future") }
        let ips = try clinicalSummary(of: patient, now: now).ipsJSON()
        let key = try SecureRandom.bytes(32)
        let id = try Self.newShareID()
        let jwe = try HealthLinkFile.seal(Array(ips.utf8), contentType: HealthLinkFile.fhirJSON, key: key)
        let expiresSeconds = expires.map { Int64($0.timeIntervalSince1970.rounded(.down)) }
        let share: Share
        switch destination {
        case let .directory(directory, baseURL):
            guard passcode == nil else {
                throw HReaderError.usage("a passcode needs hreader's own server (leave out --out; run 'hreader serve --shares'); "
                                         + "a static host cannot count wrong tries")
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw HReaderError.usage("--out \(directory.path) is not a directory")
            }
            let file = directory.appendingPathComponent(id)
            do { try AtomicFile.write(Array(jwe.utf8), to: file, mode: 0o644) } catch { throw HReaderError.from(error) }
            share = Share(id: id, patientID: patient.id, label: label, created: RFC3339.utc(Int64(now.timeIntervalSince1970)),
                          expires: expiresSeconds.map(RFC3339.utc), flag: "U", mode: .static, url: Self.joined(try Self.shareBase(baseURL), id),
                          filePath: file.path, key: key, content: nil, passcodeHash: nil, attemptsLeft: nil)
        case let .served(baseURL):
            share = Share(id: id, patientID: patient.id, label: label, created: RFC3339.utc(Int64(now.timeIntervalSince1970)),
                          expires: expiresSeconds.map(RFC3339.utc), flag: passcode == nil ? "" : "P", mode: .served,
                          url: Self.joined(try Self.shareBase(baseURL), "shl/" + id), filePath: nil, key: key, content: jwe,
                          passcodeHash: try passcode.map(PasscodeHash.make), attemptsLeft: passcode == nil ? nil : Self.sharePasscodeAttempts)
        }
        try write {
            try ShareRepository(db).insert(share)
            try audit.record("share.create", subject: id, detail: "patient \(patient.uuid): \(share.mode.rawValue), flag '\(share.flag)'")
        }
        try recordSummary(format: .ips, of: patient, to: "share \(id)")
        return CreatedShare(share: share, link: HealthLink(url: share.url, key: key, expires: expiresSeconds, flags: share.flag, label: label))
    }

    /// Refuses a label a link cannot carry (over 80 characters), before anything is made.
    public static func checkShareLabel(_ label: String?) throws {
        if let label, label.count > HealthLink.maxLabelCharacters {
            throw HReaderError.usage("a link's label is at most \(HealthLink.maxLabelCharacters) characters")
        }
    }

    /// A share's id: 32 random bytes, base64url, drawn again while it starts with `-` (a command line
    /// would read `share revoke -x…` as an option, and a shell tool the file named so).
    static func newShareID() throws -> String {
        while true {
            let id = Base64URL.encode(try SecureRandom.bytes(32))
            if !id.hasPrefix("-") { return id }
        }
    }

    public func shares() throws -> [Share] { try read { try ShareRepository(db).all() } }

    /// A share's link again (its key is kept in the vault), as `createShare` printed it.
    public static func link(of share: Share) -> HealthLink {
        HealthLink(url: share.url, key: share.key, expires: share.expires.flatMap { ClinicalTime.parse($0)?.epoch }, flags: share.flag,
                   label: share.label)
    }

    /// Revokes the share: a served one answers 404 from now on; a static one's file is deleted from
    /// its directory (a copy the web host already took is beyond reach: docs/sharing.md).
    @discardableResult
    public func revokeShare(_ id: String, now: Date = Date()) throws -> Share {
        guard let share = try read({ try ShareRepository(db).share(id: id) }) else {
            throw HReaderError.usage("no share has id \(id); see 'hreader share list'")
        }
        guard share.revoked == nil else { throw HReaderError.usage("share \(id) was already revoked at \(share.revoked!)") }
        try write {
            try ShareRepository(db).revoke(id: id, now: now)
            try audit.record("share.revoke", subject: id)
        }
        if let path = share.filePath, FileManager.default.fileExists(atPath: path) {
            do { try FileManager.default.removeItem(atPath: path) } catch {
                throw HReaderError(.failure, "share \(id) is revoked, but its file \(path) could not be deleted: delete it by hand")
            }
        }
        return share
    }

    /// An http(s) base URL, without its trailing slash.
    public static func shareBase(_ text: String) throws -> String {
        var base = text.trimmingCharacters(in: .whitespaces)
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil,
              url.query == nil, url.fragment == nil else {
            throw HReaderError.usage("\(text) is not an http(s) base URL")
        }
        return base
    }

    private static func joined(_ base: String, _ path: String) -> String { base + "/" + path }

    // MARK: Serving (hreader serve --shares)

    /// The answer to a manifest request.
    public enum ManifestAnswer: Sendable {
        /// The share's file (a compact JWE) may be handed out, embedded or by location.
        case granted(jwe: String, url: String, embeddedLengthMax: Int?)
        /// 401: wrong or missing passcode, `remaining` tries left (0: locked).
        case passcodeRefused(remaining: Int)
        /// 404: unknown, revoked or expired.
        case gone
        /// 400: the request is not a manifest request.
        case badRequest(String)
    }

    /// Answers `POST /shl/ID` (the manifest request), counting wrong passcodes and logging the access.
    public func answerManifest(id: String, body: [UInt8], now: Date = Date()) throws -> ManifestAnswer {
        let request: HealthLinkManifest.Request
        do { request = try HealthLinkManifest.Request(body) } catch { return .badRequest(error.description) }
        return try write {
            let repository = ShareRepository(db)
            guard let share = try repository.share(id: id), share.mode == .served, let jwe = share.content, Self.isLive(share, now: now) else {
                try audit.record("share.access", subject: String(id.prefix(64)), detail: "refused: unknown, revoked or expired")
                return .gone
            }
            let who = "recipient \(request.recipient.prefix(80))"
            if let hash = share.passcodeHash {
                let left = share.attemptsLeft ?? 0
                guard left > 0 else {
                    try audit.record("share.access", subject: id, detail: "\(who): refused, locked after wrong passcodes")
                    return .passcodeRefused(remaining: 0)
                }
                guard let passcode = request.passcode, PasscodeHash.matches(passcode, hash) else {
                    try repository.setAttemptsLeft(id: id, left - 1)
                    try audit.record("share.access", subject: id, detail: "\(who): wrong passcode, \(left - 1) attempts left")
                    return .passcodeRefused(remaining: left - 1)
                }
            }
            try repository.recordAccess(id: id, now: now)
            try audit.record("share.access", subject: id, detail: "\(who): manifest")
            return .granted(jwe: jwe, url: share.url, embeddedLengthMax: request.embeddedLengthMax)
        }
    }

    /// The file of a served share still live (`GET` of a location the manifest gave), logged; nil when gone.
    public func sharedFile(id: String, now: Date = Date()) throws -> String? {
        try write {
            guard let share = try ShareRepository(db).share(id: id), let jwe = share.content, Self.isLive(share, now: now),
                  share.passcodeHash == nil || (share.attemptsLeft ?? 0) > 0 else { return nil }
            try audit.record("share.access", subject: id, detail: "file")
            return jwe
        }
    }

    static func isLive(_ share: Share, now: Date) -> Bool {
        guard share.revoked == nil else { return false }
        guard let expires = share.expires else { return true }
        guard let seconds = ClinicalTime.rfc3339Instant(expires) else { return false }
        return Int64(now.timeIntervalSince1970) < seconds
    }
}

extension ShareRepository.Share {
    /// `share list --json`: never the key or the content.
    public var jsonValue: JSONValue {
        .object([("id", .string(id)), ("label", .text(label)), ("created", .string(created)), ("expires", .text(expires)),
                 ("flag", .string(flag)), ("mode", .string(mode.rawValue)), ("url", .string(url)), ("passcode", .bool(passcodeHash != nil)),
                 ("attempts_left", attemptsLeft.map { .int($0) } ?? .null), ("revoked", .text(revoked)), ("accesses", .int(accesses)),
                 ("last_access", .text(lastAccess)), ("file", .text(filePath))])
    }
}
