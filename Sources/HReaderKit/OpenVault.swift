import Foundation
import HReaderCrypto
import HReaderModel
import HReaderStore

/// An unlocked vault: the database connection and the use cases over patients and entries.
///
/// It is the one door to its connection, as GRDB's `DatabaseQueue` is: the connection is its own,
/// and every use of it goes through `read`, `write`, `translatingErrors` or `exclusively` (the tests'
/// and the bench's through `inDatabase`), which run their body under the vault's one lock, so uses from several threads (the CLI's task, the
/// web's lanes, credential renewals arriving on a host's queue) take turns instead of meeting on
/// the connection. The lock is recursive, since use cases call one another inside those bodies, and
/// it is never held across an `await` (the bodies are synchronous).
///
///     let patients = try open.allPatients()         // takes the door, runs, leaves it
///
/// Sendable because of that lock (see `door`); several connections read at once through several
/// vaults (`reader()`), each its own door.
public final class OpenVault: @unchecked Sendable {
    // @unchecked Sendable: the stored values are immutable and Sendable, but for `connection` (a
    // SQLite connection, not Sendable) and `keptCompanion` (mutable), which are touched only inside
    // `door` (`read`, `write`, `translatingErrors`, `exclusively`, `inDatabase`, `companion()`), one
    // thread at a time, and by `interrupt()`, which SQLite allows from any thread while it is open.
    public let vault: Vault
    private let connection: Database
    private let door = Door()
    public let keyFile: KeyFile
    /// The slot whose secret opened the vault; nil when a session did.
    public let openedWith: KeySlot?
    /// The data key, for what must be encrypted or authenticated under it besides the database
    /// (a backup). SQLCipher holds it too while the connection is open.
    let dataKey: SecretBytes
    /// The key that the slots of `keyFile` wrap. The same as `dataKey`, except while a rekey stays
    /// pending (another process had the database open when this one opened it): then the slots wrap
    /// the new key and the database is still under the previous one, `dataKey`.
    let slotKey: SecretBytes

    init(vault: Vault, db: Database, keyFile: KeyFile, openedWith: KeySlot?, dataKey: SecretBytes, slotKey: SecretBytes? = nil) {
        self.vault = vault
        self.connection = db
        self.keyFile = keyFile
        self.openedWith = openedWith
        self.dataKey = dataKey
        self.slotKey = slotKey ?? dataKey
    }

    /// The connection, for code inside the door: a use case's `read` or `write` body, or an
    /// `inDatabase` of the tests and the bench. Not public: outside the package only the use cases
    /// reach it. A debug build stops at a use from outside the door, which no lock would serialise.
    package var db: Database {
        assert(door.isInside, "OpenVault.db used outside the vault's door (read, write, translatingErrors, exclusively, inDatabase)")
        return connection
    }

    /// Runs `body` inside the door with the connection (no error translated): for Kit's tests and
    /// the bench, which use the connection bare.
    ///
    ///     try open.inDatabase { db in try db.execute("VACUUM") }
    package func inDatabase<T>(_ body: (Database) throws -> T) rethrows -> T {
        try door.run { try body(connection) }
    }

    package var patients: PatientRepository { PatientRepository(db) }
    package var entries: EntryRepository { EntryRepository(db) }
    package var timelineItems: TimelineItemRepository { TimelineItemRepository(db) }
    var identities: PatientIdentityRepository { PatientIdentityRepository(db) }
    var pending: PendingResourceRepository { PendingResourceRepository(db) }
    var settings: SettingsRepository { SettingsRepository(db) }
    var audit: AuditLog { AuditLog(db) }

    /// Another connection to the same vault, that only reads (`PRAGMA query_only`): several such
    /// connections read at once (a WAL database has many readers and one writer), so a slow read
    /// never holds up another (`hreader serve`).
    public func reader() throws -> OpenVault {
        let opened = try translatingErrors { try vault.openDatabase(key: dataKey, migrator: .reconciling, besideOpenConnection: true) }
        try opened.execute("PRAGMA query_only = ON")   // not yet shared: no door needed
        return OpenVault(vault: vault, db: opened, keyFile: keyFile, openedWith: openedWith, dataKey: dataKey, slotKey: slotKey)
    }

    /// A reader kept beside this connection for the second half of a read that runs in two at once
    /// (`searchRecords`): opened the first time, then kept, so its page cache stays warm.
    func companion() throws -> OpenVault {
        try door.run {
            if let kept = keptCompanion { return kept }
            let opened = try reader()
            keptCompanion = opened
            return opened
        }
    }
    private var keptCompanion: OpenVault?

    /// A number that changes whenever another connection (the server's writer, a command run beside
    /// it) has committed a change to the vault since this one last asked: SQLite's `data_version`,
    /// read from the shared WAL index without reading a page. Comparable only with this connection's
    /// own earlier answers.
    public func changesSeen() throws -> Int64 {
        try translatingErrors { try db.scalarInt("PRAGMA data_version") ?? 0 }
    }

    /// Stops what this vault's connection is running, from any thread (the use case fails, its
    /// transaction rolled back): for a web request whose client has gone or whose time is up. The one
    /// use that does not wait at the door (it must reach a use that holds it), as SQLite allows.
    public func interrupt() { connection.interrupt() }

    /// Runs `body` inside the door, in one transaction, translating errors for the user.
    func write<T>(_ body: () throws -> T) throws -> T {
        try translatingErrors { try db.transaction(body) }
    }

    /// Runs `body` inside the door, translating errors for the user.
    func read<T>(_ body: () throws -> T) throws -> T { try translatingErrors(body) }

    /// Runs `body` inside the door, turning what it throws into an `HReaderError` (a damaged
    /// database diagnosed first). A use case that reacts to an error of its own inside a transaction
    /// runs `db.transaction` within this, catching that error in between.
    func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        try door.run {
            do { return try body() } catch { throw HReaderError.from(connection.diagnose(error)) }
        }
    }

    /// Runs `body` inside the door, errors as they are: for a use that spans several `read`s and
    /// `write`s and must not be split by another thread's (a batch stored with a larger page cache).
    func exclusively<T>(_ body: () throws -> T) rethrows -> T { try door.run(body) }

    // MARK: Patients

    public func addPatient(_ new: NewPatient) throws -> Patient {
        try write {
            let patient = try patients.add(new)
            try audit.record("patient.add", subject: patient.uuid)
            return patient
        }
    }

    public func allPatients() throws -> [Patient] { try read { try patients.all() } }

    /// The patient named by `reference` (local id, uuid or uuid prefix), else the selected patient.
    public func patient(_ reference: String?) throws -> Patient {
        try read {
            if let reference {
                guard let patient = try patients.find(reference) else {
                    throw HReaderError.usage("no patient matches '\(reference)'; see 'hreader patients list'")
                }
                return patient
            }
            guard let selected = try settings.value("selected_patient"), let id = Int64(selected),
                  let patient = try patients.person(of: id) else {
                throw HReaderError.usage("no patient given and none selected; pass --patient or run 'hreader patients select P'")
            }
            return patient
        }
    }

    public func selectedPatientID() throws -> Int64? {
        try read { try settings.value("selected_patient").flatMap { Int64($0) } }
    }

    public func selectPatient(_ patient: Patient) throws {
        try write { try settings.set("selected_patient", String(patient.id)) }
    }

    public func removePatient(_ patient: Patient) throws {
        try write {
            try patients.remove(id: patient.id)
            if try settings.value("selected_patient") == String(patient.id) { try settings.set("selected_patient", nil) }
            try audit.record("patient.remove", subject: patient.uuid)
        }
    }

    public func movePatient(_ patient: Patient, to position: Int) throws {
        guard position >= 1 else { throw HReaderError.usage("positions start at 1") }
        try write { try patients.move(id: patient.id, to: position) }
    }

    // MARK: Entries

    public func addEntry(patient: Patient, content: EntryContent, user: UserFields = UserFields()) throws -> Entry {
        try write {
            let entry = try entries.add(patientID: patient.id, content: content, user: user)
            try FactGrouping(db).regroup(patientID: patient.id)
            try audit.record("entry.add", subject: entry.uuid)
            return entry
        }
    }

    /// The patient's entries in timeline order; `limit` and `offset` take one page of them.
    /// A fact several sources state is one entry (the copy shown); `copies` lists every stored copy.
    public func entries(of patient: Patient, type: EntryType? = nil, from: Date? = nil, to: Date? = nil,
                        limit: Int? = nil, offset: Int = 0, copies: Bool = false) throws -> [Entry] {
        try read {
            try entries.list(patientID: patient.id, type: type, from: from.map { Int64($0.timeIntervalSince1970) },
                             to: to.map { Int64($0.timeIntervalSince1970) }, limit: limit, offset: offset, copies: copies)
        }
    }

    /// A batch of `forEachEntryBatch`: the entries, where each one's fact comes from, where its
    /// copies disagree, and its SMART Health Card check (the shown copy's, else the first copy's a
    /// card brought), by entry id.
    public struct EntryBatch {
        public var entries: [Entry]
        public var sources: [Int64: [EntryRepository.Copy]]
        public var differences: [Int64: [String]]
        public var verifications: [Int64: EntryVerification]
    }

    /// `entries(of:…)` a batch at a time (at most `batchSize`), in the same order, without holding them all.
    public func forEachEntryBatch(of patient: Patient, type: EntryType? = nil, from: Date? = nil, to: Date? = nil, copies: Bool = false,
                                  batchSize: Int = 1000, _ body: (EntryBatch) throws -> Void) throws {
        try read {
            var batch: [Entry] = []
            func flush() throws {
                guard !batch.isEmpty else { return }
                let sources = try factSources(of: batch)
                let checks = try HealthCardRepository(db).verifications(of: batch.map(\.id) + sources.values.flatMap { $0.map(\.entryID) })
                var verifications: [Int64: EntryVerification] = [:]
                for entry in batch {
                    verifications[entry.id] = checks[entry.id] ?? (sources[entry.id] ?? []).lazy.compactMap { checks[$0.entryID] }.first
                }
                try body(EntryBatch(entries: batch, sources: sources,
                                    differences: copies ? [:] : try factDifferences(of: batch, sources: sources), verifications: verifications))
                batch.removeAll(keepingCapacity: true)
            }
            try entries.forEachListed(patientID: patient.id, type: type, from: from.map { Int64($0.timeIntervalSince1970) },
                                      to: to.map { Int64($0.timeIntervalSince1970) }, copies: copies) { entry in
                batch.append(entry)
                if batch.count >= batchSize { try flush() }
            }
            try flush()
        }
    }

    public func entry(_ reference: String) throws -> Entry {
        try read {
            guard let entry = try entries.find(reference) else {
                throw HReaderError.usage("no entry matches '\(reference)'; see 'hreader entries list'")
            }
            return entry
        }
    }

    /// Changes the user's own fields of an entry (comments, patient comments, strike-through).
    public func updateUserFields(of entry: Entry, _ change: (inout UserFields) -> Void) throws -> Entry {
        guard !EntryRepository.isSample(entry) else {
            throw HReaderError.usage("entry \(entry.id) is an Apple Health sample, kept as the export recorded it; samples take no comments or strike-throughs")
        }
        return try write {
            var user = entry.user
            change(&user)
            try entries.setUserFields(id: entry.id, user)
            // A struck entry leaves its fact's group (and comes back when restored).
            if user.deleted != entry.user.deleted { try FactGrouping(db).regroup(patientID: entry.patientID, touched: [entry.id]) }
            try audit.record("entry.annotate", subject: entry.uuid)
            return try entries.get(id: entry.id)!
        }
    }

    // MARK: Status and checks

    public struct Counts: Codable, Sendable {
        public let patients: Int
        public let entries: Int
        public let timelineItems: Int
        public let auditEvents: Int
        /// Resources kept until their patient is imported.
        public let waiting: Int
        /// Entries in the full-text search index.
        public let searchIndexed: Int
        /// Documents, and those in their full-text index (schema/006_documents.sql).
        public var documents = 0
        public var documentsIndexed = 0
    }

    public func counts() throws -> Counts {
        try read {
            Counts(patients: try patients.count(), entries: try entries.count(),
                   timelineItems: Int(try db.scalarInt("SELECT count(*) FROM timeline_items") ?? 0),
                   auditEvents: try audit.count(),
                   waiting: Int(try db.scalarInt("SELECT count(*) FROM pending_resources") ?? 0),
                   searchIndexed: try SearchRepository(db).indexedCount(),
                   documents: try documentStore.count(), documentsIndexed: try SearchRepository(db).indexedDocumentCount())
        }
    }

    public func cipherVersion() throws -> String { try read { try db.cipherVersion() ?? "unknown" } }
    public func schemaVersion() throws -> Int { try read { try Migrator().currentVersion(of: db) } }

    /// Bytes per table, largest first, and whether they are exact pages (`Database.spaceByTable`).
    public func spaceByTable() throws -> (tables: [Database.TableSpace], exact: Bool) { try read { try db.spaceByTable() } }

    /// Every page's HMAC, the b-trees and the foreign keys; throws an integrity error on any problem.
    public func verifyIntegrity() throws {
        let problems = try read { try db.integrityProblems() }
        if !problems.isEmpty {
            throw HReaderError(.integrity, "the vault database failed its integrity check (\(problems.count) problem(s), first: \(problems[0])); restore it from a backup")
        }
        // Every document's bytes against the SHA-256 recorded when they were stored.
        let damaged = try damagedDocuments()
        if !damaged.isEmpty {
            throw HReaderError(.integrity, "\(damaged.count) document(s) failed their SHA-256 check (first: \(damaged[0])); restore the vault from a backup")
        }
    }
}

/// The lock of an `OpenVault`'s door: one thread inside at a time, and recursive, since a use case
/// calls others inside its body. It knows whether the calling thread is inside (`OpenVault.db`
/// checks it in debug builds).
final class Door: @unchecked Sendable {
    // @unchecked: `depth` is read and written only while `lock` is held.
    private let lock = NSRecursiveLock()
    private var depth = 0

    func run<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        depth += 1
        defer {
            depth -= 1
            lock.unlock()
        }
        return try body()
    }

    /// Whether the calling thread is inside: it holds the lock already and takes it again at once,
    /// or it waits for the thread inside to leave and finds nobody inside.
    var isInside: Bool {
        lock.lock()
        defer { lock.unlock() }
        return depth > 0
    }
}
