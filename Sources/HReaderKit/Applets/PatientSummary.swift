import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// hReader's patient summary: who the patient is (name, age as hReader showed it, gender, relationship),
/// their active conditions and allergies, then one tile per applet in the patient's order.
public struct PatientSummary: Sendable {
    public let patient: Patient
    /// "5 weeks" under 6 months, "14 months" under 2 years, then "42 years" (hReader's `hr_ageString`).
    public let age: String?
    /// "Male", "Female" or "Unknown", as hReader wrote it.
    public let gender: String
    /// "Me", "Wife", "Son", "Family", … as hReader wrote it (spouse and child by gender).
    public let relationship: String
    /// The newest `listed` active conditions and allergies (conditions by onset), and how many
    /// there are in all: a record may hold thousands, and a summary is read at a glance.
    public let conditions: [Entry]
    public let conditionsTotal: Int
    public let allergies: [Entry]
    public let allergiesTotal: Int
    public let tiles: [Tile]
    /// How each condition or allergy a SMART Health Card brought was checked, by entry id.
    public internal(set) var verifications: [Int64: EntryVerification] = [:]
    /// How many of the patient's entries cards brought, by issuer and check (the "Health cards" line).
    public internal(set) var cards: [(verification: EntryVerification, count: Int)] = []

    /// How many conditions and allergies a summary lists.
    public static let listed = 50

    public var json: JSONValue {
        func text(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        let person: JSONValue = .object([
            ("id", .int(patient.id)), ("uuid", .string(patient.uuid)), ("name", .string(patient.displayName)),
            ("first_name", .string(patient.firstName)), ("last_name", .string(patient.lastName)),
            ("birth_date", text(patient.birthDate)), ("age", text(age)), ("gender", .string(gender)),
            ("relationship", .string(relationship)),
        ])
        func checked(_ e: Entry, _ members: JSONObject) -> JSONValue {
            var members = members
            if let verification = verifications[e.id] { members.append(("verification", verification.jsonValue)) }
            return .object(members)
        }
        let conditions = self.conditions.map { e -> JSONValue in
            checked(e, [("id", .string(e.uuid)), ("description", .string(e.content.description)),
                        ("since", text((e.content.start ?? e.content.date)?.text)), ("status", text(e.content.status))])
        }
        let allergies = self.allergies.map { e -> JSONValue in
            checked(e, [("id", .string(e.uuid)), ("description", .string(e.content.description)), ("reaction", text(e.content.reaction)),
                        ("severity", text(e.content.severity)), ("status", text(e.content.status))])
        }
        let cards = self.cards.map { card -> JSONValue in
            .object([("status", .string(card.verification.status.rawValue)), ("iss", .string(card.verification.iss)),
                     ("issuer", card.verification.issuer.map(JSONValue.string) ?? .null), ("entries", .int(card.count))])
        }
        return .object([("patient", person), ("conditions", .array(conditions)), ("conditions_total", .int(Int64(conditionsTotal))),
                        ("allergies", .array(allergies)), ("allergies_total", .int(Int64(allergiesTotal))),
                        ("health_cards", .array(cards)), ("tiles", .array(tiles.map(\.json)))])
    }

    // MARK: hReader's words

    /// hReader's age words: weeks under six months, months under two years, then years.
    public static func ageText(birthDate: String?, at now: Date = Date()) -> String? {
        guard let age = LocalAge(birthDate: birthDate, at: now) else { return nil }
        func plural(_ n: Int, _ unit: String) -> String { "\(n) \(unit)\(n == 1 ? "" : "s")" }
        if age.months < 6 { return plural(age.weeks, "week") }
        if age.months < 24 { return plural(age.months, "month") }
        return plural(age.years, "year")
    }

    public static func genderText(_ gender: String?) -> String {
        switch gender?.lowercased() {
        case "male"?, "m"?: return "Male"
        case "female"?, "f"?: return "Female"
        case nil, ""?, "unknown"?: return "Unknown"
        case let other?: return other.prefix(1).uppercased() + other.dropFirst()
        }
    }

    public static func relationshipText(_ relationship: Relationship, gender: String?) -> String {
        let g = genderText(gender)
        switch relationship {
        case .me: return "Me"
        case .spouse: return g == "Male" ? "Husband" : g == "Female" ? "Wife" : "Spouse"
        case .child: return g == "Male" ? "Son" : g == "Female" ? "Daughter" : "Child"
        case .family: return "Family"
        case .other: return "Other"
        }
    }

    /// Statuses that mean a condition or allergy is no longer current, or never was one: refuted, or
    /// a note that keeps a document section's narrative (`FHIRMapper.narrativeStatus`).
    static let inactiveStatuses: Set<String> = ["inactive", "resolved", "remission", "refuted", "entered-in-error", "completed", "historical",
                                                FHIRMapper.narrativeStatus]

    static func isActive(_ entry: Entry, now: Date) -> Bool {
        guard !entry.user.deleted else { return false }
        if let status = entry.content.status?.lowercased(), inactiveStatuses.contains(status) { return false }
        if let end = entry.content.end, end.date < now { return false }
        return true
    }
}

/// A plugin as `hreader applets add` shows it before the user approves it (`PluginTrust`).
public struct PluginApproval: Sendable {
    public let identifier: String
    public let displayName: String
    public let program: PluginTrust.Program
    public let entryTypes: [EntryType]
    /// The earlier approval, when this one replaces it.
    public let previous: PluginPin?

    /// Already approved as it is now: nothing to ask.
    public var isCurrent: Bool { previous?.path == program.path && previous?.sha256 == program.sha256 }
}

/// One applet in a patient's list, with its declaration when it is declared.
public struct PatientApplet {
    public let position: Int
    public let identifier: String
    public let declaration: AppletDeclaration?
}

extension OpenVault {
    var applets: AppletRepository { AppletRepository(db) }

    // MARK: The patient's applets

    /// The patient's applets in order: their own list, or the default (`defaultApplets`).
    public func appletList(of patient: Patient, registry: AppletRegistry, now: Date = Date()) throws -> [PatientApplet] {
        let identifiers = try read { try applets.identifiers(patientID: patient.id) } ?? defaultApplets(of: patient, now: now)
        return identifiers.enumerated().map { PatientApplet(position: $0.offset + 1, identifier: $0.element, declaration: registry.declaration($0.element)) }
    }

    /// A patient's default list: hReader's (medications, then blood pressure), then each other built-in
    /// tile that would show a reading of theirs (`BuiltInApplet.showsRecords`), in the built-in list's
    /// order. A person whose record is a watch's or a phone's sees their steps, saturation and breathing
    /// rate without building a list; a record of neither keeps hReader's two. A few indexed lookups.
    func defaultApplets(of patient: Patient, now: Date) throws -> [String] {
        var identifiers = AppletRegistry.defaultPatientApplets
        for declaration in AppletRegistry.builtIn().declarations where !identifiers.contains(declaration.identifier) {
            guard case let .builtIn(applet) = declaration.implementation, BuiltInApplet.shownWhenRecorded.contains(applet) else { continue }
            if try read({ try applet.showsRecords(in: AppletContext(patient: patient, db: db, declaration: declaration, now: now)) }) {
                identifiers.append(declaration.identifier)
            }
        }
        return identifiers
    }

    /// Whether computing the patient's summary may write to the vault: only a plugin applet does (its
    /// data, and the secret its pseudonyms come from). Built-in tiles only read.
    public func summaryMayWrite(of patient: Patient, registry: AppletRegistry) throws -> Bool {
        // The default list is built-in tiles only.
        guard try hasOwnAppletList(patient) else { return false }
        return try appletList(of: patient, registry: registry).contains { item in
            guard let declaration = item.declaration, declaration.isAvailable, case .plugin = declaration.implementation else { return false }
            return true
        }
    }

    /// Whether the patient's list is their own (false: they have the default list).
    public func hasOwnAppletList(_ patient: Patient) throws -> Bool {
        try read { try applets.identifiers(patientID: patient.id) != nil }
    }

    /// Adds a declared applet to the patient's list (at `position`, else last). Returns false when it was
    /// already there. A plugin's `approval` (`pluginApproval`, shown to the user and accepted) is pinned
    /// in the same transaction, also when the applet was already in the list (approving it again).
    @discardableResult
    public func addApplet(_ identifier: String, to patient: Patient, at position: Int? = nil, registry: AppletRegistry,
                          approving approval: PluginApproval? = nil, now: Date = Date()) throws -> Bool {
        guard registry.declaration(identifier) != nil else {
            throw HReaderError.usage("no applet '\(identifier)' is declared; see 'hreader applets available'")
        }
        if let position, position < 1 { throw HReaderError.usage("positions start at 1") }
        let defaults = try defaultApplets(of: patient, now: now)
        return try write {
            if let approval {
                let pin = PluginPin(path: approval.program.path, sha256: approval.program.sha256,
                                    allowInterpreter: approval.program.interpreter != nil, approved: RFC3339.utc(Int64(now.timeIntervalSince1970)))
                try settings.set(PluginPin.settingsKey(identifier), pin.json.serialized(sortingKeys: true))
                try audit.record("applet.approve", subject: identifier, detail: "\(approval.program.path) sha256 \(approval.program.sha256)")
            }
            let added = try applets.add(identifier, at: position, patientID: patient.id, startingFrom: defaults)
            if added { try audit.record("applet.add", subject: patient.uuid, detail: identifier) }
            return added
        }
    }

    /// What the user must approve before `identifier` runs as a plugin in this vault: its program
    /// (real path, SHA-256, and the interpreter it is), the entry types it is granted, and the pin of
    /// an earlier approval. nil for a built-in, or a plugin that cannot run here (not in the plugins
    /// directory, missing: it may be added, and its tile says why). A shell or an interpreter is refused
    /// unless `allowInterpreter`.
    public func pluginApproval(_ identifier: String, registry: AppletRegistry, allowInterpreter: Bool) throws -> PluginApproval? {
        guard let declaration = registry.declaration(identifier), case let .plugin(specification) = declaration.implementation,
              declaration.isAvailable else { return nil }
        let program: PluginTrust.Program
        do {
            program = try PluginTrust.inspect(specification.executable, pluginsDirectory: registry.pluginsDirectory)
        } catch {
            throw HReaderError.usage("\(identifier) cannot be approved: \(error.reason)")
        }
        if let interpreter = program.interpreter, !allowInterpreter {
            throw HReaderError.usage("\(identifier) would run \(program.path), a shell or interpreter (\(interpreter)), which runs what it is sent "
                                     + "as code; refused (a plugin should be a program or a script with its own #! line; "
                                     + "give --allow-interpreter only if you mean it)")
        }
        return PluginApproval(identifier: identifier, displayName: declaration.displayName, program: program,
                              entryTypes: specification.entryTypes, previous: try pluginPin(identifier))
    }

    /// The approval pinned for `identifier` in this vault, if any.
    public func pluginPin(_ identifier: String) throws -> PluginPin? {
        guard let text = try read({ try settings.value(PluginPin.settingsKey(identifier)) }) else { return nil }
        return (try? JSONParser.parse(text)).flatMap(PluginPin.init(json:))
    }

    public func removeApplet(_ identifier: String, from patient: Patient) throws {
        let defaults = try defaultApplets(of: patient, now: Date())
        try write {
            guard try applets.remove(identifier, patientID: patient.id, startingFrom: defaults) else {
                throw HReaderError.usage("'\(identifier)' is not in this patient's applets; see 'hreader applets list'")
            }
            try audit.record("applet.remove", subject: patient.uuid, detail: identifier)
        }
    }

    public func moveApplet(_ identifier: String, of patient: Patient, to position: Int) throws {
        guard position >= 1 else { throw HReaderError.usage("positions start at 1") }
        let defaults = try defaultApplets(of: patient, now: Date())
        try write {
            guard try applets.move(identifier, to: position, patientID: patient.id, startingFrom: defaults) else {
                throw HReaderError.usage("'\(identifier)' is not in this patient's applets; see 'hreader applets list'")
            }
            try audit.record("applet.move", subject: patient.uuid, detail: identifier)
        }
    }

    // MARK: The summary

    /// The patient's summary; every applet yields a tile, a failing one an error tile. Each part reads
    /// what it shows (the active conditions and allergies, a tile's few readings), never the whole
    /// record: a person's Apple Health samples are millions.
    public func summary(of patient: Patient, registry: AppletRegistry, now: Date = Date()) throws -> PatientSummary {
        let (conditions, allergies) = try read {
            // Ended before now: an end at or after its next whole second is current.
            let epoch = Int64(now.timeIntervalSince1970.rounded(.up))
            return (try entries.current(patientID: patient.id, type: .condition, order: .start, inactiveStatuses: PatientSummary.inactiveStatuses,
                                        now: epoch, limit: PatientSummary.listed),
                    try entries.current(patientID: patient.id, type: .allergy, order: .effective, inactiveStatuses: PatientSummary.inactiveStatuses,
                                        now: epoch, limit: PatientSummary.listed))
        }
        let verifications = try cardChecks(of: conditions.entries + allergies.entries)
        let cards = try read { try HealthCardRepository(db).verificationCounts(patientID: patient.id) }
        var tiles: [Tile] = []
        for item in try appletList(of: patient, registry: registry, now: now) {
            tiles.append(try tile(for: item, patient: patient, now: now, registry: registry))
        }
        return PatientSummary(patient: patient, age: PatientSummary.ageText(birthDate: patient.birthDate, at: now),
                              gender: PatientSummary.genderText(patient.gender),
                              relationship: PatientSummary.relationshipText(patient.relationship, gender: patient.gender),
                              conditions: conditions.entries, conditionsTotal: conditions.total,
                              allergies: allergies.entries, allergiesTotal: allergies.total, tiles: tiles,
                              verifications: verifications, cards: cards)
    }

    func tile(for item: PatientApplet, patient: Patient, now: Date, registry: AppletRegistry) throws -> Tile {
        guard let declaration = item.declaration else {
            return Tile.failure(identifier: item.identifier, title: item.identifier,
                                "not declared in any applets list; see 'hreader applets available'")
        }
        if let reason = declaration.unavailableReason {
            return Tile.failure(identifier: declaration.identifier, title: declaration.displayName, "not available: \(reason)")
        }
        switch declaration.implementation {
        case let .builtIn(applet):
            return try read { try applet.tile(in: AppletContext(patient: patient, db: db, declaration: declaration, now: now)) }
        case let .plugin(specification):
            let plugin = PluginApplet(declaration: declaration, specification: specification)
            let program: String
            switch try trustedProgram(declaration, specification, registry: registry) {
            case let .success(path): program = path
            case let .failure(refusal): return plugin.failure(refusal.reason)
            }
            let pseudonyms = try appletPseudonyms(applet: declaration.identifier)
            let stored = try read { try applets.data(applet: declaration.identifier, patientID: patient.id) }
            let granted = try read { try PluginApplet.grantedEntries(specification.entryTypes, of: patient, in: entries) }
            let answer = plugin.run(program: program, patientToken: pseudonyms.patientToken(patient), entryID: pseudonyms.entryID, entries: granted,
                                    data: stored, now: now)
            guard !answer.dataChanges.isEmpty else { return answer.tile }
            var after = stored
            for (key, value) in answer.dataChanges { after[key] = value }
            if after.count > PluginApplet.maximumDataKeys {
                return plugin.failure("the plugin would store more than \(PluginApplet.maximumDataKeys) keys; nothing was stored")
            }
            try write {
                for (key, value) in answer.dataChanges {
                    try applets.setData(applet: declaration.identifier, patientID: patient.id, key: key, value: value)
                }
                try audit.record("applet.data", subject: patient.uuid, detail: declaration.identifier)
            }
            return answer.tile
        case .none:
            return Tile.failure(identifier: declaration.identifier, title: declaration.displayName, "not available on a terminal")
        }
    }

    /// The program a plugin may run as: where it lives is allowed, the user approved it in this
    /// vault, and it has not changed since (path and SHA-256 as pinned); else why not.
    func trustedProgram(_ declaration: AppletDeclaration, _ specification: PluginSpecification,
                        registry: AppletRegistry) throws -> Result<String, PluginTrust.Refusal> {
        let identifier = declaration.identifier
        let program: PluginTrust.Program
        do {
            program = try PluginTrust.inspect(specification.executable, pluginsDirectory: registry.pluginsDirectory)
        } catch {
            return .failure(PluginTrust.Refusal(reason: "refused: \(error.reason)"))
        }
        guard let pin = try pluginPin(identifier) else {
            return .failure(PluginTrust.Refusal(reason: "not approved to run in this vault: approve it with 'hreader applets add \(identifier)' "
                                                + "(it shows the program and its SHA-256)"))
        }
        guard pin.path == program.path else {
            return .failure(PluginTrust.Refusal(reason: "refused: it now runs \(program.path), but \(pin.path) was approved; if you mean it, "
                                                + "approve it again with 'hreader applets add \(identifier)'"))
        }
        guard pin.sha256 == program.sha256 else {
            return .failure(PluginTrust.Refusal(reason: "refused: \(program.path) changed since it was approved on \(pin.approved) (SHA-256 now "
                                                + "\(program.sha256.prefix(16))…, approved \(pin.sha256.prefix(16))…); if you changed it, "
                                                + "approve it again with 'hreader applets add \(identifier)'"))
        }
        if let interpreter = program.interpreter, !pin.allowInterpreter {
            return .failure(PluginTrust.Refusal(reason: "refused: \(program.path) is a shell or interpreter (\(interpreter)); "
                                                + "approve it with 'hreader applets add \(identifier) --allow-interpreter' if you mean it"))
        }
        return .success(program.path)
    }

    /// An opaque token for one patient as one applet sees it: stable across runs, different for every
    /// applet (so two plugins cannot match their patients up), and meaningless outside this vault. It is a
    /// SHA-256 of a random secret kept inside the vault, the applet's identifier and the patient's uuid.
    func appletPseudonyms(applet: String) throws -> AppletPseudonyms {
        let key = "applet_token_secret"
        let secret: String = try write {
            if let existing = try settings.value(key) { return existing }
            let fresh = try SecureRandom.bytes(32).map { String(format: "%02x", $0) }.joined()
            try settings.set(key, fresh)
            return fresh
        }
        return AppletPseudonyms(secret: secret, applet: applet)
    }
}

/// The ids a plugin applet sees in place of the vault's own: stable for this vault, this applet and
/// the patient or entry, and different for every applet, so two plugins cannot match their patients or
/// entries up, and none learns a uuid that means something elsewhere. A SHA-256 of a random secret kept
/// inside the vault, the applet's identifier and the uuid.
struct AppletPseudonyms {
    let secret: String
    let applet: String

    /// The same token earlier versions gave (`hreader-applet-token…`), so a plugin's view is unchanged.
    func patientToken(_ patient: Patient) -> String { id(kind: "token", patient.uuid) }

    func entryID(_ entry: Entry) -> String { id(kind: "entry", entry.uuid) }

    private func id(kind: String, _ uuid: String) -> String {
        let digest = SHA256.hash(Array("hreader-applet-\(kind)\u{0}\(secret)\u{0}\(applet)\u{0}\(uuid)".utf8))
        return digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
