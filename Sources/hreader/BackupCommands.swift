import ArgumentParser
import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderKit
import HReaderStore

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write the vault to one encrypted backup file, or check a backup.",
        discussion: """
            The backup holds a consistent snapshot of the database (other hreader processes may keep working \
            meanwhile) and the key file, encrypted and authenticated under the vault's key: it opens with the \
            same password, recovery key or security answers. It is written atomically; an existing file is \
            replaced only if it is an older backup. See docs/backup.md.
              hreader backup --out /media/usb/health.hrbackup
              hreader backup --verify /media/usb/health.hrbackup
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Write a backup of the vault to this file.", valueName: "file"))
    var out: String?

    @Option(help: ArgumentHelp("Check this backup (every byte and every database page) without restoring it.", valueName: "file"))
    var verify: String?

    @Option(help: ArgumentHelp("With --verify: open the backup with the recovery key in this file instead of the password.", valueName: "file"))
    var recoveryKeyFile: String?

    func validate() throws {
        guard (out == nil) != (verify == nil) else { throw ValidationError("choose one: --out FILE or --verify FILE") }
        if recoveryKeyFile != nil && verify == nil { throw ValidationError("--recovery-key-file goes with --verify") }
    }

    func run() throws {
        let progress = ProgressLine(global: global)
        defer { progress.finish() }
        if let verify {
            let archive = try BackupArchive(url: URL(fileURLWithPath: verify))
            let credential = try global.backupCredential(recoveryKeyFile: recoveryKeyFile)
            let summary = try archive.verify(credential: credential) { progress.update("verifying \(verify): \(percent($0))") }
            progress.finish()
            if global.json {
                var object = summary.json
                object["sound"] = true
                Output.json(.object(object))
            } else {
                global.note("The backup is sound: every byte authenticates and every database page checks (vault \(summary.vaultID), taken \(summary.created), \(CheckCommand.size(Int64(summary.bytes)))).")
            }
            return
        }
        let open = try global.open()
        let summary = try open.backup(to: URL(fileURLWithPath: out!)) { progress.update("backing up: \(percent($0))") }
        progress.finish()
        if global.json {
            Output.json(.object(summary.json))
        } else {
            global.note("Wrote a backup of vault \(summary.vaultID) to \(summary.path) (\(CheckCommand.size(Int64(summary.bytes)))). "
                        + "It opens with this vault's password or recovery key; check it with 'hreader backup --verify'.")
        }
    }
}

struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Restore a vault from a backup file into a new or empty directory.",
        discussion: """
            Every byte of the backup is authenticated and every database page checked before the vault \
            directory (--vault, else $HREADER_VAULT) is touched; a damaged backup restores nothing (exit 7). \
            An existing vault is replaced only with --replace, and is then kept aside as \
            <dir>.replaced-<time>-<id>, never deleted. The restored vault opens with the backup's password, \
            recovery key or security answers. See docs/backup.md.
              hreader restore /media/usb/health.hrbackup --vault ~/.local/share/hreader
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The backup file.", valueName: "file"))
    var file: String

    @Flag(help: "Replace the vault at the target directory (it is moved aside, not deleted).")
    var replace = false

    @Option(help: ArgumentHelp("Open the backup with the recovery key in this file instead of the password.", valueName: "file"))
    var recoveryKeyFile: String?

    func run() throws {
        let vault = Vault(path: global.vaultPath)
        // Refuse the target, then a damaged file, before asking for anything.
        try BackupArchive.checkRestoreTarget(vault, replace: replace)
        let archive = try BackupArchive(url: URL(fileURLWithPath: file))
        let credential = try global.backupCredential(recoveryKeyFile: recoveryKeyFile)
        let progress = ProgressLine(global: global)
        defer { progress.finish() }
        let restored = try archive.restore(into: vault, credential: credential, replace: replace) { progress.update("restoring: \(percent($0))") }
        progress.finish()
        if global.json {
            Output.json(["vault": .string(restored.vault), "vault_id": .string(restored.backup.vaultID), "backup": .string(restored.backup.path),
                         "backup_created": .string(restored.backup.created), "schema_version": .int(restored.backup.schemaVersion),
                         "replaced_vault_kept_at": .text(restored.replacedVaultKeptAt)])
            return
        }
        global.note("Restored vault \(restored.backup.vaultID) (backup taken \(restored.backup.created)) to \(restored.vault).")
        if let kept = restored.replacedVaultKeptAt {
            global.note("The vault that was there is kept at \(kept); delete it once you are sure you do not need it.")
        }
    }
}

private func percent(_ fraction: Double) -> String { "\(Int((fraction * 100).rounded(.down)))%" }

extension BackupSummary {
    var json: JSONObject {
        ["backup": .string(path), "vault_id": .string(vaultID), "created": .string(created), "bytes": .int(bytes),
         "database_bytes": .int(databaseBytes), "schema_version": .int(schemaVersion)]
    }
}

extension GlobalOptions {
    /// What opens a backup: the recovery key from a file, else the password (`--password-file`,
    /// `--password-command`, `$HREADER_PASSWORD`, a prompt). Never an unlock session: a session
    /// belongs to a vault directory, and a backup carries none.
    func backupCredential(recoveryKeyFile: String?) throws -> Credential {
        if let recoveryKeyFile {
            let typed = try PasswordInput.readFirstLine(ofFile: recoveryKeyFile, what: "recovery key file")
            guard let secret = RecoveryKey.parse(typed.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }) else {
                throw HReaderError(.authentication, "that is not a recovery key (32 characters in groups of four)")
            }
            return .recoveryKey(secret)
        }
        return .password(try passwordInput.password(prompt: "Backup password: "))
    }
}
