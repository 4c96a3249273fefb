import HReaderModel

/// The commands scripts and shell prompts call in a loop, read without swift-argument-parser.
///
/// swift-argument-parser reflects over the command tree on every run: the Swift runtime's first
/// protocol-conformance lookups, each a scan of the binary's conformance records, and two trial parses
/// for `--generate-completion-script`. That is about 2.5 ms of a 12 ms `timeline` page (docs/cli.md,
/// "Start-up"). This path reads `timeline` (`show`), `search` and `providers search`, and only their plain forms:
/// `--name value`, `--name=value` and `--flag`, each name at most once, and `search`'s words. Anything
/// else (help, a repeated or unknown option, `--`, a value that looks like an option or that its type
/// refuses, arguments that fail validation) returns nil, and swift-argument-parser reads the line as
/// before, so its messages stay the only ones.
/// QuickCommandLineTests holds both parsers to the same result.
enum QuickCommand: Equatable {
    case timeline(TimelineRequest)
    case search(SearchRequest)
    case providerSearch(ProviderSearchRequest)

    func run() throws {
        switch self {
        case let .timeline(request): try request.run()
        case let .search(request): try request.run()
        case let .providerSearch(request): try request.run()
        }
    }
}

enum QuickCommandLine {
    /// The command, when the arguments (global options already moved behind the subcommand) are in the
    /// plain forms; nil to let swift-argument-parser read them.
    static func command(_ arguments: [String]) -> QuickCommand? {
        guard let name = arguments.first else { return nil }
        switch name {
        case "timeline":
            // `timeline` runs `show` by default; `add` and anything else positional goes the long way.
            var rest = arguments.dropFirst()
            if rest.first == "show" { rest = rest.dropFirst() }
            return timeline(rest).map(QuickCommand.timeline)
        case "search":
            return search(arguments.dropFirst()).map(QuickCommand.search)
        case "providers" where arguments.dropFirst().first == "search":
            return providerSearch(arguments.dropFirst(2)).map(QuickCommand.providerSearch)
        default:
            return nil
        }
    }

    static func timeline(_ arguments: ArraySlice<String>) -> TimelineRequest? {
        guard let options = PlainOptions(arguments, valued: vaultValued + ["--patient", "--page", "--at", "--from", "--to", "--types"],
                                         flags: vaultFlags + ["--detail", "--pretty"]),
              let at = options.time("--at"), let from = options.time("--from"), let to = options.time("--to")
        else { return nil }
        let request = TimelineRequest(global: vaultOptions(options), patient: options.value("--patient"), page: options.value("--page"),
                                      at: at, from: from, to: to, types: options.value("--types"),
                                      detail: options.flag("--detail"), pretty: options.flag("--pretty"))
        return request.problem == nil ? request : nil
    }

    static func search(_ arguments: ArraySlice<String>) -> SearchRequest? {
        guard let options = PlainOptions(arguments, valued: vaultValued + ["--patient", "--type", "--limit"], flags: vaultFlags,
                                         positionals: true),
              !options.positionals.isEmpty
        else { return nil }
        var request = SearchRequest(global: vaultOptions(options), words: options.positionals, patient: options.value("--patient"))
        if let text = options.value("--type") {
            guard let type = EntryType(rawValue: text) else { return nil }
            request.type = type
        }
        if let text = options.value("--limit") {
            guard let limit = Int(text) else { return nil }
            request.limit = limit
        }
        return request
    }

    static func providerSearch(_ arguments: ArraySlice<String>) -> ProviderSearchRequest? {
        guard let options = PlainOptions(arguments, valued: vaultValued + ["--state", "--city", "--limit"], flags: vaultFlags,
                                         positionals: true),
              !options.positionals.isEmpty
        else { return nil }
        var request = ProviderSearchRequest(global: vaultOptions(options), words: options.positionals, state: options.value("--state"),
                                            city: options.value("--city"))
        if let text = options.value("--limit") {
            guard let limit = Int(text), (1...1000).contains(limit) else { return nil }
            request.limit = limit
        }
        return request
    }

    // GlobalOptions' names.
    private static let vaultValued = CommandLineConventions.valuedOptions
    private static let vaultFlags = CommandLineConventions.flagOptions

    private static func vaultOptions(_ options: PlainOptions) -> VaultOptions {
        VaultOptions(vault: options.value("--vault"), passwordFile: options.value("--password-file"),
                     passwordCommand: options.value("--password-command"), quiet: options.flag("--quiet"), json: options.flag("--json"))
    }
}

/// `--name value`, `--name=value` and `--flag` for a fixed set of long names, each at most once, and
/// with `positionals` the arguments that are not options (none may start with '-'); nil for anything
/// else. Arrays, not sets or dictionaries: a handful of names, and nothing here should make the
/// runtime look up a conformance.
struct PlainOptions {
    private var values: [(name: String, value: String)] = []
    private var flags: [String] = []
    private(set) var positionals: [String] = []

    init?(_ arguments: ArraySlice<String>, valued: [String], flags flagNames: [String], positionals allowsPositionals: Bool = false) {
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if allowsPositionals, !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            guard argument.hasPrefix("--"), argument.utf8.count > 2 else { return nil }
            let name: String, inline: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
                inline = nil
            }
            guard !values.contains(where: { $0.name == name }), !flags.contains(name) else { return nil }
            if valued.contains(name) {
                if let inline {
                    guard !inline.isEmpty else { return nil }   // `--name=`: swift-argument-parser says a value is missing
                    values.append((name, inline))
                } else {
                    // A value that starts with '-' could be an option, or a negative number: the long way decides.
                    guard index < arguments.endIndex, !arguments[index].hasPrefix("-") else { return nil }
                    values.append((name, arguments[index]))
                    index += 1
                }
            } else if flagNames.contains(name), inline == nil {
                flags.append(name)
            } else {
                return nil
            }
        }
    }

    func value(_ name: String) -> String? { values.first { $0.name == name }?.value }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// A time option: `.some(nil)` when absent, nil when given but not a time (the long way says so).
    func time(_ name: String) -> ClinicalTime?? {
        guard let text = value(name) else { return .some(nil) }
        return ClinicalTime.parse(text).map { .some($0) }
    }
}
