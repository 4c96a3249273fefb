import ArgumentParser
import Foundation
import HReaderKit
import HReaderCrypto
import HReaderStore

/// Options every vault command takes. Secrets are never accepted in argv: only paths and commands.
struct GlobalOptions: ParsableArguments, VaultOptionValues {
    @Option(name: .long, help: ArgumentHelp("The vault directory (default: $HREADER_VAULT, else $XDG_DATA_HOME/hreader).", valueName: "dir"))
    var vault: String?

    @Option(name: .long, help: ArgumentHelp("Read the password from the first line of this file.", valueName: "file"))
    var passwordFile: String?

    @Option(name: .long, help: ArgumentHelp("Run this shell command and read the password from its output.", valueName: "cmd"))
    var passwordCommand: String?

    @Flag(name: .long, help: "Print only what was asked for; no progress or notes.")
    var quiet = false

    @Flag(name: .long, help: "Print data as JSON on stdout.")
    var json = false

    /// The same values as a plain struct (the quick path's form, QuickCommandLine).
    var values: VaultOptions {
        VaultOptions(vault: vault, passwordFile: passwordFile, passwordCommand: passwordCommand, quiet: quiet, json: json)
    }
}

/// The global options' values, however they were read: swift-argument-parser fills GlobalOptions, the
/// quick path for the commands scripts call in a loop fills VaultOptions (QuickCommandLine).
struct VaultOptions: VaultOptionValues, Equatable {
    var vault: String?
    var passwordFile: String?
    var passwordCommand: String?
    var quiet = false
    var json = false
}

/// What a command does with the global options: find the vault, ask for the password, open it.
protocol VaultOptionValues {
    var vault: String? { get }
    var passwordFile: String? { get }
    var passwordCommand: String? { get }
    var quiet: Bool { get }
    var json: Bool { get }
}

extension VaultOptionValues {
    var environment: ProcessEnvironment { processEnvironment }

    var vaultPath: String { Vault.locationPath(flag: vault) { processEnvironment[$0] } }

    var service: VaultService { VaultService(vault: Vault(path: vaultPath)) }

    var passwordInput: PasswordInput {
        PasswordInput(file: passwordFile, command: passwordCommand, environment: environment)
    }

    /// How to open the vault: an explicit password source wins, then `HREADER_SESSION`, then
    /// `HREADER_PASSWORD`, then a prompt on the terminal.
    func credential() throws -> Credential {
        if let sessionToken { return .session(sessionToken) }
        return .password(try passwordInput.password(prompt: "Vault password: "))
    }

    /// `HREADER_SESSION`, unless an explicit password source was given.
    var sessionToken: String? {
        guard passwordFile == nil, passwordCommand == nil, let token = environment["HREADER_SESSION"], !token.isEmpty else { return nil }
        return token
    }

    /// Opens the vault with the credential the user provided.
    func open() throws -> OpenVault { try openWithCredential().vault }

    /// The open vault and the credential that opened it (`serve` asks whether it can end).
    func openWithCredential() throws -> (vault: OpenVault, credential: Credential) {
        // "No vault here" before asking for a password; a session asks nothing, and the open reads the key file.
        if sessionToken == nil { _ = try service.keyFile() }
        let credential = try credential()
        return (try service.open(credential), credential)
    }

    /// The current password (never a session): for commands that change the key file.
    func currentPassword() throws -> SecretBytes {
        _ = try service.keyFile()
        return try passwordInput.password(prompt: "Current vault password: ")
    }

    func note(_ message: String) {
        if !quiet { Terminal.note(message) }
    }

    /// Advice after a command that revoked a secret; not with --quiet or --json.
    func rekeyHint() {
        if !quiet && !json { Terminal.note(GlobalOptions.rekeyHintText) }
    }
}

extension GlobalOptions {
    static let rekeyHintText = "To make old copies of vault.key useless, run 'hreader rekey'."
}

/// The process's environment variables, each read when asked for (getenv). Foundation's whole
/// dictionary (ProcessInfo.environment) cost a short command 0.15 ms: reading every variable, and the
/// Swift runtime's first lookup of what a [String: String] needs.
struct ProcessEnvironment {
    subscript(name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Every variable, for what passes them on.
    var all: [String: String] { ProcessInfo.processInfo.environment }
}

let processEnvironment = ProcessEnvironment()
