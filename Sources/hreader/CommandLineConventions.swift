import Foundation
import HReaderCrypto
import HReaderStore

/// What the command line accepts beyond ArgumentParser's rules, as people type it from git, restic or
/// docker: global options before the subcommand, and `version` with the libraries that matter.
enum CommandLineConventions {
    static let version = "0.5.0"

    /// The global options (DESIGN.md §8) that take a value, and the flags. Arrays: sets would cost
    /// every command a runtime conformance lookup at start.
    static let valuedOptions = ["--vault", "--password-file", "--password-command"]
    static let flagOptions = ["--quiet", "--json"]

    /// `--vault DIR patients list` → `patients list --vault DIR`: ArgumentParser reads an option only on
    /// the command that declares it, and every command declares the global ones, so leading global
    /// options move behind the subcommand (before a `--`, if there is one). Nothing else changes.
    static func movingLeadingGlobalOptions(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if flagOptions.contains(argument) {
                leading.append(argument)
                index += 1
            } else if valuedOptions.contains(name) {
                if argument.contains("=") {
                    leading.append(argument)
                    index += 1
                } else {
                    guard index + 1 < arguments.count else { return arguments }   // let the parser say what is missing
                    leading += [argument, arguments[index + 1]]
                    index += 2
                }
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        var rest = Array(arguments[index...])
        rest.insert(contentsOf: leading, at: rest.firstIndex(of: "--") ?? rest.count)
        return rest
    }

    /// "hreader 0.5.0 (SQLCipher 4.6.1 community, SQLite 3.46.1, OpenSSL 3.0.19 …)", for `hreader version`:
    /// loading the libraries to ask them is most of the time `hreader --version` would otherwise take.
    static var versionLine: String {
        "hreader \(version) (SQLCipher \(Database.libraryCipherVersion() ?? "unknown"), SQLite \(Database.libraryVersion), "
            + "\(OpenSSLLibrary.version))"
    }
}
