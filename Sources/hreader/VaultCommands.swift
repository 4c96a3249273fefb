import ArgumentParser
import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderStore

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create an encrypted vault.",
        discussion: """
            Creates the vault directory with a random data key, wrapped under your password (and, with \
            --questions, under your answers to security questions). A recovery key is printed once: keep it offline.
            Example: hreader init --new-password-file ~/.hreader-pass
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var kdfOptions: KDFOptions

    @Option(help: ArgumentHelp("Read the new password from the first line of this file.", valueName: "file"))
    var newPasswordFile: String?

    @Flag(help: "Also set two or more security questions as a second way in.")
    var questions = false

    @Option(help: ArgumentHelp("Security questions and answers, one 'question<TAB>answer' per line (implies --questions).", valueName: "file"))
    var questionsFile: String?

    func run() throws {
        let service = global.service
        if service.vault.exists { throw HReaderError.from(Vault.Failure.alreadyExists(service.vault.root.path)) }
        let kdf = try kdfOptions.parameters()
        kdfOptions.warnIfWeak(kdf)
        let password = try PasswordInput.newPassword(file: newPasswordFile ?? global.passwordFile)
        try PasswordPolicy.check(password)
        let answers = (questions || questionsFile != nil) ? try QuestionsInput.read(file: questionsFile) : nil
        let created = try service.create(password: password, questions: answers, kdf: kdf)
        if global.json {
            Output.json(["vault": .string(service.vault.root.path), "vault_id": .string(created.vaultID), "recovery_key": .string(created.recoveryKey)])
            return
        }
        Output.line("Created the vault at \(service.vault.root.path)")
        Output.line("")
        Output.line("Recovery key (shown only this once; write it down and keep it offline):")
        Output.line("    \(created.recoveryKey)")
        Output.line("")
        Output.line("It opens the vault with 'hreader recover --recovery-key-file FILE' if you lose your password.")
    }
}

struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the vault for a while, so later commands skip the password.",
        discussion: """
            Prints a line to evaluate in your shell:  eval "$(hreader unlock --for 30m)"
            Commands run with HREADER_SESSION set open the vault without the password until the session \
            expires or 'hreader lock' ends it.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("for"), help: ArgumentHelp("How long the session lasts (e.g. 15m, 2h; at most 7d).", valueName: "duration"))
    var duration: DurationArgument = DurationArgument(argument: "15m")!

    func run() throws {
        let service = global.service
        _ = try service.keyFile()
        let password = try global.passwordInput.password(prompt: "Vault password: ")
        let session = try service.startSession(.password(password), for: duration.seconds)
        if global.json {
            Output.json(["session": .string(session.token), "expires": .string(Timestamp.rfc3339(session.expires))])
        } else {
            Output.line("export HREADER_SESSION=\(session.token)")
            global.note("Unlocked until \(Timestamp.rfc3339(session.expires)). Run 'hreader lock' to end it sooner.")
        }
    }
}

struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "End every unlock session of the vault.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let count = try global.service.lock()
        global.note(count == 0 ? "No session was open." : "Ended \(count) session(s).")
    }
}

struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the vault's state: location, encryption, key slots, sessions, counts. Never secrets.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let service = global.service
        let keyFile = try service.keyFile()
        // Counts need the vault open; use a session or an explicit password source, but never prompt.
        let env = global.environment
        let canOpen = global.passwordFile != nil || global.passwordCommand != nil
            || !(env["HREADER_SESSION"] ?? "").isEmpty || !(env["HREADER_PASSWORD"] ?? "").isEmpty
        let open = canOpen ? try global.open() : nil
        let counts = try open?.counts()
        let cipher = try open?.cipherVersion() ?? Database.libraryCipherVersion() ?? "unknown"
        let sessions = service.sessions().filter { ($0.expires ?? .distantPast) > Date() }
        if global.json {
            let slots = keyFile.slots.map { slot -> JSONValue in
                var s: JSONObject = ["id": .string(slot.id), "kind": .string(slot.kind.rawValue), "label": .string(slot.label),
                                     "kdf": .string(slot.kdf.summary), "meets_minimum": .bool(slot.kdf.meetsRecommendedMinimum)]
                if let q = slot.questions { s["questions"] = .int(q.count) }
                return .object(s)
            }
            var object: JSONObject = [
                "vault": .string(service.vault.root.path), "vault_id": .string(keyFile.vaultID), "state": .string(open == nil ? "locked" : "unlocked"),
                "sqlcipher": .string(cipher), "sqlite": .string(Database.libraryVersion), "key_slots": .array(slots), "sessions": .int(sessions.count),
            ]
            if let counts, let open {
                object["schema_version"] = .int(try open.schemaVersion())
                object["counts"] = ["patients": .int(counts.patients), "entries": .int(counts.entries),
                                    "timeline_items": .int(counts.timelineItems), "audit_events": .int(counts.auditEvents),
                                    "waiting_for_their_patient": .int(counts.waiting), "documents": .int(counts.documents)]
                object["search"] = ["engine": "fts5", "indexed_entries": .int(counts.searchIndexed), "indexed_documents": .int(counts.documentsIndexed)]
            }
            object["document_text"] = .object(JSONObject(TextTools.find().summary().json.map { (key: $0.0, value: $0.1.map(JSONValue.string) ?? .null) }))
            Output.json(.object(object))
            return
        }
        var rows: [[String]] = [
            ["vault:", service.vault.root.path],
            ["vault id:", keyFile.vaultID],
            ["state:", open == nil ? "locked (give a password source or HREADER_SESSION to see counts)" : "unlocked"],
            ["encryption:", "SQLCipher \(cipher), SQLite \(Database.libraryVersion), AES-256 pages, data key wrapped with AES-256-GCM"],
        ]
        for slot in keyFile.slots {
            let advice = slot.kind == .password ? "run 'hreader key upgrade'" : "add a new one with 'hreader key add' and remove this one"
            let weak = slot.kdf.meetsRecommendedMinimum ? "" : " (below the OWASP minimum: \(advice))"
            rows.append(["key slot:", "\(slot.kind.rawValue) \(slot.id.prefix(8)) \"\(slot.label)\" \(slot.kdf.summary)\(weak)"])
        }
        rows.append(["sessions:", "\(sessions.count) active"])
        if let counts, let open {
            rows.append(["schema:", "version \(try open.schemaVersion())"])
            rows.append(["patients:", "\(counts.patients)"])
            rows.append(["entries:", "\(counts.entries)"])
            rows.append(["timeline items:", "\(counts.timelineItems)"])
            rows.append(["documents:", "\(counts.documents)"])
            rows.append(["search:", "FTS5 index of \(counts.searchIndexed) entries and \(counts.documentsIndexed) documents, inside the encrypted database"])
            if counts.waiting > 0 {
                rows.append(["waiting:", "\(counts.waiting) imported resource(s) wait for their patient (import the file that holds that Patient)"])
            }
        }
        rows.append(["papers:", TextTools.find().summary().line])
        Output.table(rows)
    }
}

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Verify every database page's HMAC, the b-trees and the foreign keys (exit 7 on damage); show the space per table.")

    @OptionGroup var global: GlobalOptions

    func run() throws {
        let open = try global.open()
        try open.verifyIntegrity()
        let space = try open.spaceByTable()
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: open.vault.databaseURL.path)[.size] as? Int64) ?? nil
        if global.json {
            Output.json(["sound": true, "exact": .bool(space.exact), "database_bytes": .int(fileBytes ?? 0),
                         "tables": .object(JSONObject(sortingKeysOf: Dictionary(uniqueKeysWithValues: space.tables.map { ($0.table, $0) })) {
                             ["rows": .int($0.rows), "bytes": .int($0.bytes)]
                         })])
            return
        }
        global.note("The vault is sound: every page authenticates and the database is consistent.")
        guard !global.quiet else { return }
        print(space.exact ? "Space by table (indexes included):" : "Data by table (the values' bytes; indexes and page overhead not counted):")
        Output.table(space.tables.map { ["  \($0.table)", "\($0.rows) rows", Self.size($0.bytes)] })
        if let fileBytes { print("  vault.db is \(Self.size(fileBytes)) on disk") }
    }

    static func size(_ bytes: Int64) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) : "\((bytes + 1023) / 1024) KiB"
    }
}

struct PasswdCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Change the vault password.",
        discussion: "Rewraps the data key under the new password; the database itself is not rewritten.")

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Read the new password from the first line of this file.", valueName: "file"))
    var newPasswordFile: String?

    func run() throws {
        let current = try global.currentPassword()
        let new = try PasswordInput.newPassword(file: newPasswordFile)
        try global.service.changePassword(current: current, new: new)
        global.note("Password changed.")
        global.rekeyHint()
    }
}

struct RecoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Set a new password using the security questions or the recovery key.",
        discussion: "Replaces every password slot with the new password and ends all sessions.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Answer the security questions.")
    var questions = false

    @Option(help: ArgumentHelp("The answers, one per line in the order of the questions (implies --questions).", valueName: "file"))
    var answersFile: String?

    @Option(help: ArgumentHelp("Read the recovery key from this file.", valueName: "file"))
    var recoveryKeyFile: String?

    @Option(help: ArgumentHelp("Read the new password from the first line of this file.", valueName: "file"))
    var newPasswordFile: String?

    func validate() throws {
        let useQuestions = questions || answersFile != nil
        guard useQuestions != (recoveryKeyFile != nil) else {
            throw ValidationError("choose one: --questions (or --answers-file) or --recovery-key-file")
        }
    }

    func run() throws {
        let service = global.service
        let keyFile = try service.keyFile()
        let credential: Credential
        if let recoveryKeyFile {
            let typed = try PasswordInput.readFirstLine(ofFile: recoveryKeyFile, what: "recovery key file")
            guard let secret = RecoveryKey.parse(typed.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) else {
                throw HReaderError(.authentication, "that is not a recovery key (32 characters in groups of four)")
            }
            credential = .recoveryKey(secret)
        } else {
            guard let slot = keyFile.slots.first(where: { $0.kind == .questions }), let qs = slot.questions else {
                throw HReaderError(.authentication, "this vault has no security questions; use --recovery-key-file")
            }
            credential = .answers(try QuestionsInput.answers(for: qs, file: answersFile))
        }
        let new = try PasswordInput.newPassword(file: newPasswordFile)
        try service.recover(with: credential, newPassword: new)
        global.note("The vault has a new password. All unlock sessions were ended.")
        global.rekeyHint()
    }
}
