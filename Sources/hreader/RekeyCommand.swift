import ArgumentParser
import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit

struct RekeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rekey",
        abstract: "Re-encrypt the vault under a fresh data key, so old copies of vault.key open nothing.",
        discussion: """
            After a password leaked or a copy of vault.key was stolen: makes a new random data key, \
            re-encrypts vault.db under it and writes a new key file. Your password slot (changed with \
            --new-password-file) and a NEW recovery key (printed once) wrap the new key; the old recovery \
            key stops working. Security questions are dropped unless --questions-file answers them again; \
            other password slots are dropped (listed). Every unlock session ends. Refused while another \
            hreader process (serve, an import) has the vault open.
            Example: hreader rekey --password-file old-pw --new-password-file new-pw
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Also change the password: read the new one from the first line of this file.", valueName: "file"))
    var newPasswordFile: String?

    @Option(help: ArgumentHelp("Keep security questions: 'question<TAB>answer' lines, as for init.", valueName: "file"))
    var questionsFile: String?

    func run() throws {
        let service = global.service
        let password = try global.currentPassword()
        let newPassword = try newPasswordFile.map { try PasswordInput.newPassword(file: $0) }
        let questions = try questionsFile.map { try QuestionsInput.read(file: $0) }
        // Printed as soon as the new key file is written: from then on only the new recovery key works.
        let done = try service.rekey(password: password, newPassword: newPassword, questions: questions) { done in
            if global.json {
                Output.json(["vault_id": .string(done.vaultID), "recovery_key": .string(done.recoveryKey),
                             "key_slots": .array(done.slots.map(KeyCommand.json)), "dropped_slots": .array(done.dropped.map(KeyCommand.json)),
                             "sessions_ended": .int(done.sessionsEnded)])
                fflush(nil)   // all streams: the key must reach a pipe before the long part
                return
            }
            Output.line("New recovery key (shown only this once; write it down and keep it offline; the old one no longer works):")
            Output.line("    \(done.recoveryKey)")
            Output.line("")
            fflush(nil)   // all streams: the key must reach a pipe before the long part
        }
        if global.json { return }
        Output.line("The vault is now encrypted under a new data key; old copies of vault.key no longer open it.")
        for slot in done.dropped where slot.kind != .recovery {
            global.note("Dropped \(slot.kind.rawValue) slot \(slot.id.prefix(8)) \"\(slot.label)\"; add it again with 'hreader key add --kind \(slot.kind.rawValue)'.")
        }
        if newPassword != nil { global.note("The password was changed.") }
        if done.sessionsEnded > 0 { global.note("Ended \(done.sessionsEnded) unlock session(s).") }
    }
}
