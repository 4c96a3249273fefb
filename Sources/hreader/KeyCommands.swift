import ArgumentParser
import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Manage the key slots that unlock the vault.",
        discussion: "Changing slots always asks for the current password; an unlock session is not enough.",
        subcommands: [List.self, Add.self, Remove.self, Upgrade.self])

    /// A slot as `--json` shows it (no secret is in a slot's public fields).
    static func json(_ slot: KeySlot) -> JSONValue {
        var s: JSONObject = ["id": .string(slot.id), "kind": .string(slot.kind.rawValue), "label": .string(slot.label),
                             "kdf": .string(slot.kdf.summary), "meets_minimum": .bool(slot.kdf.meetsRecommendedMinimum),
                             "created": .string(slot.created)]
        if let q = slot.questions { s["questions"] = .strings(q) }
        return .object(s)
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the key slots (no secret needed).")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let keyFile = try global.service.keyFile()
            if global.json {
                Output.json(["key_slots": .array(keyFile.slots.map(KeyCommand.json))])
                return
            }
            Output.table([["ID", "KIND", "LABEL", "KDF", "CREATED"]] + keyFile.slots.map {
                [String($0.id.prefix(8)), $0.kind.rawValue, $0.label, $0.kdf.summary, $0.created]
            })
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add a key slot: another password, security questions, or a new recovery key.")
        @OptionGroup var global: GlobalOptions

        enum Kind: String, ExpressibleByArgument, CaseIterable { case password, questions, recovery }

        @Option(help: "What the new slot opens with.")
        var kind: Kind = .password
        @Option(help: "A label for the slot.")
        var label: String?
        @Option(help: ArgumentHelp("For --kind password: read the new password from this file.", valueName: "file"))
        var newPasswordFile: String?
        @Option(help: ArgumentHelp("For --kind questions: 'question<TAB>answer' lines.", valueName: "file"))
        var questionsFile: String?

        func run() throws {
            let password = try global.currentPassword()
            let new: VaultService.NewSlot
            switch kind {
            case .password: new = .password(try PasswordInput.newPassword(file: newPasswordFile))
            case .questions: new = .questions(try QuestionsInput.read(file: questionsFile))
            case .recovery: new = .recovery
            }
            let added = try global.service.addSlot(new, label: label, authorizedBy: password)
            if global.json {
                var object: JSONObject = ["key_slot": KeyCommand.json(added.slot)]
                if let key = added.recoveryKey { object["recovery_key"] = .string(key) }
                Output.json(.object(object))
                return
            }
            if let key = added.recoveryKey {
                Output.line("New recovery key (shown only this once):")
                Output.line("    \(key)")
            }
            global.note("Added \(added.slot.kind.rawValue) slot \(added.slot.id.prefix(8)).")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a key slot (never the last password slot).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The slot id, or its first 8 or more characters.")
        var id: String

        func run() throws {
            let password = try global.currentPassword()
            try global.service.removeSlot(id: id, authorizedBy: password)
            global.note("Removed slot \(id).")
            global.rekeyHint()
        }
    }

    struct Upgrade: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "upgrade",
            abstract: "Rewrap your password slot under stronger KDF parameters (default: today's).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var kdfOptions: KDFOptions

        func run() throws {
            let kdf = try kdfOptions.parameters()
            kdfOptions.warnIfWeak(kdf)
            let password = try global.currentPassword()
            let slot = try global.service.upgradeSlot(password: password, to: kdf)
            global.note("Password slot now uses \(slot.kdf.summary).")
        }
    }
}
