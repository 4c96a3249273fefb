import ArgumentParser

struct HReaderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hreader",
        abstract: "An encrypted personal health record manager.",
        discussion: """
            Your health record lives in one SQLCipher-encrypted vault ($HREADER_VAULT, or \
            ~/.local/share/hreader). Start with 'hreader init', then 'hreader patients add'.
            Exit codes: 0 ok, 1 failure, 2 usage, 3 wrong password/locked, 4 no vault/vault exists,
            5 bad input data, 6 server or network, 7 integrity (damaged or tampered files).
            Global options (--vault, --password-file, --password-command, --quiet, --json) go before or
            after the subcommand. Shell completion: hreader --generate-completion-script bash|zsh|fish.
            The SQLCipher, SQLite and OpenSSL it runs with: hreader version.
            """,
        version: CommandLineConventions.version,
        subcommands: [
            InitCommand.self, UnlockCommand.self, LockCommand.self, StatusCommand.self, CheckCommand.self,
            PasswdCommand.self, RecoverCommand.self, RekeyCommand.self, KeyCommand.self,
            PatientsCommand.self, EntriesCommand.self, DocumentsCommand.self, SearchCommand.self, ImportCommand.self, IssuersCommand.self, ShareCommand.self, ProvidersCommand.self, RemoteCommand.self, SyncCommand.self, SourcesCommand.self, ExportCommand.self, TimelineCommand.self, AppletsCommand.self, SummaryCommand.self, ServeCommand.self,
            BackupCommand.self, RestoreCommand.self,
        ]
    )
}
