import Foundation
import HReaderModel
import HReaderNet
import HReaderRecords
import HReaderStore

/// A patient a server holds, as `hreader remote patients` lists it.
public struct RemotePatient: Sendable {
    public var id: String
    public var name: String
    public var birthDate: String?
    public var gender: String?
}

/// A source as `hreader sources list` shows it (no secrets).
public struct SourceInfo: Sendable {
    public var id: Int64
    public var kind: String
    public var url: String?
    public var name: String
    public var auth: String
    /// The patients holding records of it (imported from it, or its records filed under them).
    public var patients: Int
    public var lastSync: String?
    /// Logged in with SMART App Launch, and the patient chosen then.
    public var smart = false
    public var loginPatient: String?
}

/// The connection to one source: its client (through the host's serial queue) and its credential,
/// whose renewals are written to the vault at once (a rotated refresh token must not be lost).
struct SourceConnection: Sendable {
    let kind: ServerKind
    let server: ServerURL
    let authenticator: Authenticator
    /// The FHIR server's CapabilityStatement, read once for the run by whichever client asks first.
    let capabilities = FHIRCapabilityCache()
    /// An RHEx server's feed and the records read from it, to check each answer against.
    let rhexRecords = RHExRecordLedger()

    func fhir() throws -> FHIRClient { try FHIRClient(base: server.url, auth: authenticator, capabilities: capabilities) }
    func rhex() throws -> RHExClient { try RHExClient(base: server.url, auth: authenticator) }
}

extension OpenVault {
    static func nowText() -> String { RFC3339.utc(Int64(Date().timeIntervalSince1970)) }

    public func sourcesList() throws -> [SourceInfo] {
        try read {
            let repository = SourceRepository(db)
            return try repository.allStored().filter { $0.kind != .manual }.map {
                // A file source's key (`file:<name>`) and an export's (`apple-health:<uuid>`) are no address.
                let url = $0.kind == .fhir || $0.kind == .rhex ? $0.baseURL : nil
                var info = SourceInfo(id: $0.id, kind: $0.kind.rawValue, url: url, name: $0.displayName, auth: $0.authKind,
                                      patients: try repository.patientsWithRecords(sourceID: $0.id), lastSync: $0.lastSync)
                if case let .oauth2(tokens)? = try? StoredCredentials.decode(kind: $0.authKind, json: $0.credentials) {
                    info.smart = tokens.smart == true
                    info.loginPatient = tokens.patient
                }
                return info
            }
        }
    }

    /// The source a user names: its local id, or its base URL (with `kind` when both kinds share it).
    func findSource(_ reference: String, kind: ServerKind?) throws -> StoredSource {
        let repository = SourceRepository(db)
        if let id = Int64(reference), let source = try repository.stored(id: id), source.kind != .manual { return source }
        let url = try ServerURL(reference)
        let matches = try repository.stored(baseURL: url.description).filter { kind == nil || $0.kind == kind!.sourceKind }
        guard let first = matches.first else {
            throw HReaderError.usage("no source matches '\(reference)'; see 'hreader sources list'")
        }
        guard matches.count == 1 else { throw HReaderError.usage("both a FHIR and an RHEx source use \(url); add --kind") }
        return first
    }

    /// Stores credentials for a server (creating its source), checks them against the server unless
    /// told not to, and says what the server answered.
    public func login(server: ServerURL, kind: ServerKind, method: AuthMethod, check: Bool) async throws -> String {
        let sourceID = try storeCredential(method, server: server, kind: kind, how: "auth \(method.kindName)")
        guard check else { return "credentials stored for \(server) (not checked)" }
        let connection = try connection(sourceID: sourceID)
        do {
            switch kind {
            case .fhir:
                let capability = try await connection.fhir().capability()
                _ = try await connection.fhir().searchPatientsPage(count: 1)
                return "logged in to \(server): FHIR \(capability.fhirVersion)" + (capability.software.map { " (\($0))" } ?? "")
            case .rhex:
                let patients = try await connection.rhex().patients()
                return "logged in to \(server): RHEx feed with \(patients.count) patient(s)"
            }
        } catch let error as NetError {
            throw HReaderError.from(network: error)
        }
    }

    /// Stores a credential as its server's source (created if new), audited as `source.login` with
    /// `how` (never a secret). Returns the source's id.
    func storeCredential(_ method: AuthMethod, server: ServerURL, kind: ServerKind, how: String) throws -> Int64 {
        try write {
            let repository = SourceRepository(db)
            let id = try repository.findOrCreate(kind: kind.sourceKind, baseURL: server.description, displayName: server.displayName,
                                                 now: Self.nowText())
            let (authKind, json) = StoredCredentials.encode(method)
            try repository.setCredentials(id: id, authKind: authKind, credentials: json, now: Self.nowText())
            try audit.record("source.login", subject: server.description, detail: how)
            return id
        }
    }

    /// Removes a source; with `withPatients` also the patients (and entries) imported from it.
    public func removeSource(_ reference: String, kind: ServerKind?, withPatients: Bool) throws -> (url: String, patients: Int) {
        try write {
            let source = try findSource(reference, kind: kind)
            if source.patientCount > 0 && !withPatients {
                throw HReaderError.usage("\(source.patientCount) patient(s) came from \(source.baseURL ?? source.displayName); "
                    + "add --with-patients to remove them too, or keep the source")
            }
            let ids = try db.query("SELECT id FROM patients WHERE source_id = ?", [source.id]) { $0.int64(0)! }
            // A person of this source with other sources' records merged into them would take those along.
            if let person = try db.scalarInt("""
                SELECT p.id FROM patients p WHERE p.source_id = ? AND EXISTS (
                    SELECT 1 FROM patients m WHERE m.merged_into = p.id AND m.source_id <> ?) LIMIT 1
                """, [source.id, source.id]) {
                throw HReaderError.usage("patient \(person) of this source has records of other sources merged into them; "
                    + "undo that first with 'hreader patients unmerge \(person)'")
            }
            for id in ids {
                try db.execute("DELETE FROM entries WHERE patient_id = ?", [id])
                try patients.remove(id: id)
            }
            try db.execute("DELETE FROM entries WHERE source_id = ?", [source.id])
            // Its documents too (those filed under patients first seen elsewhere): their bytes go with them.
            try db.execute("DELETE FROM documents WHERE source_id = ?", [source.id])
            try SourceRepository(db).remove(id: source.id)
            try audit.record("source.remove", subject: source.baseURL ?? source.displayName, detail: "\(ids.count) patient(s) removed")
            return (source.baseURL ?? source.displayName, ids.count)
        }
    }

    /// The connection for a stored source; renewed credentials are written back at once, through the
    /// vault's door from whichever host's queue renews them.
    func connection(sourceID: Int64) throws -> SourceConnection {
        let source = try read { try SourceRepository(db).stored(id: sourceID) }
        guard let source, let base = source.baseURL, let kind = ServerKind(rawValue: source.kind.rawValue) else {
            throw HReaderError(.failure, "source \(sourceID) is not a server")
        }
        let method = try StoredCredentials.decode(kind: source.authKind, json: source.credentials)
        var loginCommand = "hreader sources login --server \(base)"
        if case let .oauth2(tokens) = method, tokens.smart == true {
            loginCommand += " --smart" + (tokens.clientID.map { $0 == SmartLoginRequest.defaultClientID ? "" : " --client-id \($0)" } ?? "")
        }
        let authenticator = Authenticator(method, placement: kind == .rhex ? .query : .header, loginCommand: loginCommand, onChange: { [self] renewed in
            try? storeRenewal(renewed, sourceID: sourceID)
        })
        return SourceConnection(kind: kind, server: try ServerURL(base), authenticator: authenticator)
    }

    /// Keeps a source's renewed credential: what its `Authenticator` calls on the host's queue, at
    /// any time during an import, through the vault's door like every other use.
    func storeRenewal(_ renewed: AuthMethod, sourceID: Int64) throws {
        let (authKind, json) = StoredCredentials.encode(renewed)
        try write { try SourceRepository(db).setCredentials(id: sourceID, authKind: authKind, credentials: json, now: Self.nowText()) }
    }

    /// The patients a server holds. A stored source's credentials are used when there is one.
    public func remotePatients(server: ServerURL, kind: ServerKind?, family: String?) async throws -> (kind: ServerKind, patients: [RemotePatient]) {
        let connection = try await resolveConnection(server: server, kind: kind, create: false)
        do {
            switch connection.kind {
            case .fhir:
                var query: [(String, String)] = [("_count", "100")]
                if let family { query.append(("family", family)) }
                let batch = try await connection.fhir().searchPatients(query)
                return (.fhir, batch.records.map {
                    let p = $0.patient.content
                    return RemotePatient(id: $0.patient.remoteID, name: [p.firstName, p.lastName].filter { !$0.isEmpty }.joined(separator: " "),
                                         birthDate: p.birthDate, gender: p.gender)
                })
            case .rhex:
                var entries = try await connection.rhex().patients()
                if let family {
                    entries = entries.filter { $0.name.last.lowercased().hasPrefix(family.lowercased()) }
                }
                return (.rhex, entries.map { RemotePatient(id: $0.id, name: [$0.name.first, $0.name.last].filter { !$0.isEmpty }.joined(separator: " "),
                                                           birthDate: nil, gender: nil) })
            }
        } catch let error as NetError {
            throw HReaderError.from(network: error)
        }
    }

    /// The connection to a server named on the command line: its stored source when there is one
    /// (credentials included), else an anonymous one. The kind, when not given, is the stored
    /// source's, else found by asking for a FHIR CapabilityStatement.
    func resolveConnection(server: ServerURL, kind: ServerKind?, create: Bool,
                           override: AuthMethod? = nil) async throws -> SourceConnection {
        let stored = try read { try SourceRepository(db).stored(baseURL: server.description) }
            .filter { kind == nil || $0.kind == kind!.sourceKind }
        var resolvedKind = kind ?? stored.first.flatMap { ServerKind(rawValue: $0.kind.rawValue) }
        if resolvedKind == nil {
            resolvedKind = await Self.probeKind(server)
        }
        let finalKind = resolvedKind!
        var sourceID = stored.first(where: { $0.kind == finalKind.sourceKind })?.id
        if sourceID == nil && (create || override != nil) {
            sourceID = try write {
                try SourceRepository(db).findOrCreate(kind: finalKind.sourceKind, baseURL: server.description,
                                                      displayName: server.displayName, now: Self.nowText())
            }
        }
        if let override, let id = sourceID {
            let (authKind, json) = StoredCredentials.encode(override)
            try write { try SourceRepository(db).setCredentials(id: id, authKind: authKind, credentials: json, now: Self.nowText()) }
        }
        if let id = sourceID { return try connection(sourceID: id) }
        return SourceConnection(kind: finalKind, server: server, authenticator: Authenticator(.none, placement: finalKind == .rhex ? .query : .header))
    }

    /// FHIR when `[base]/metadata` answers with a CapabilityStatement, else RHEx.
    static func probeKind(_ server: ServerURL) async -> ServerKind {
        guard let client = try? FHIRClient(base: server.url) else { return .fhir }
        return (try? await client.capability()) != nil ? .fhir : .rhex
    }
}

extension OpenVault {
    /// The kind of a server: its stored source's, else found by asking for a CapabilityStatement.
    public func serverKind(_ server: ServerURL) async throws -> ServerKind {
        let stored = try read { try SourceRepository(db).stored(baseURL: server.description) }
        if let first = stored.first, let kind = ServerKind(rawValue: first.kind.rawValue) { return kind }
        return await Self.probeKind(server)
    }
}
