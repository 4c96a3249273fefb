/// Applies the numbered migrations of `schema/` (embedded in the binary) in order, each in a
/// transaction, and records the version in `PRAGMA user_version`.
public struct Migrator: Sendable {
    public struct Migration: Sendable {
        public let version: Int
        public let name: String
        public let sql: String
    }

    public enum Failure: Error, Equatable, Sendable {
        /// The vault was written by a newer hreader: refuse rather than damage it.
        case vaultNewerThanBinary(vault: Int, supported: Int)
        /// Migration `version` regroups everyone's facts, and this migrator was given no way to.
        case regroupingNeeded(version: Int)
    }

    /// Regroups one person's copies of a fact. The rules are a policy over stored records, so they
    /// live in HReaderKit (`FactGrouping`, docs/reconciliation.md); the store only knows when a
    /// migration must apply them: `Migrator.reconciling` there hands them in.
    public typealias Regrouping = @Sendable (_ db: Database, _ patientID: Int64) throws -> Void

    public let migrations: [Migration]
    public let regroup: Regrouping?

    public init(migrations: [Migration] = Migrator.embedded, regroup: Regrouping? = nil) {
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.regroup = regroup
    }

    public static var embedded: [Migration] {
        EmbeddedSchema.migrations.map { Migration(version: $0.version, name: $0.name, sql: $0.sql) }
    }

    /// What a migration does beyond its SQL, in the same transaction.
    static let steps: [Int: @Sendable (Migrator, Database, Int) throws -> Void] = [
        3: { _, db, _ in try SampleMigration.moveRecordEntries(db) },
        // A vault from before is reconciled: the copies its sources state of one fact are grouped.
        5: { migrator, db, version in try migrator.regroupEveryone(db, version: version) },
        // The grouping rules changed with schema 8 (placeholder codes join nothing; a shared local code
        // needs the same words): every person is regrouped once.
        8: { migrator, db, version in try migrator.regroupEveryone(db, version: version) },
    ]

    /// A vault with no one in it has nothing to regroup: only a vault of people needs the rules.
    func regroupEveryone(_ db: Database, version: Int) throws {
        let people = try db.query("SELECT id FROM patients WHERE merged_into IS NULL ORDER BY id", [], { $0.int64(0)! })
        guard !people.isEmpty else { return }
        guard let regroup else { throw Failure.regroupingNeeded(version: version) }
        for id in people { try regroup(db, id) }
    }

    public var latestVersion: Int { migrations.last?.version ?? 0 }

    public func currentVersion(of db: Database) throws -> Int {
        Int(try db.scalarInt("PRAGMA user_version") ?? 0)
    }

    /// Runs what is pending; returns the versions applied.
    @discardableResult
    public func migrate(_ db: Database) throws -> [Int] {
        let current = try currentVersion(of: db)
        guard current <= latestVersion else {
            throw Failure.vaultNewerThanBinary(vault: current, supported: latestVersion)
        }
        var applied: [Int] = []
        for migration in migrations where migration.version > current {
            try db.transaction {
                // Re-check inside the write lock: another process may have migrated meanwhile.
                guard try currentVersion(of: db) < migration.version else { return }
                try db.execute(migration.sql)
                try Self.steps[migration.version]?(self, db, migration.version)
                try db.execute("PRAGMA user_version = \(migration.version)")
                applied.append(migration.version)
            }
        }
        return applied
    }
}
