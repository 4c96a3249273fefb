import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderStore

/// Where applet declarations come from, besides the list built into hreader.
struct AppletListOptions: ParsableArguments {
    @Option(name: .customLong("applets"),
            help: ArgumentHelp("Also read applets declared in this property list (after $XDG_CONFIG_HOME/hreader/applets.plist).", valueName: "file"))
    var file: String?

    func registry() throws -> AppletRegistry {
        try AppletRegistry.load(extraFile: file, environment: processEnvironment.all)
    }
}

struct AppletsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "applets",
        abstract: "List the declared applets, and choose which ones a patient's summary shows, in what order.",
        discussion: """
            Applets are declared in property lists, as hReader's HReaderApplets.plist: the list built into \
            hreader, then $XDG_CONFIG_HOME/hreader/applets.plist, then --applets FILE. A new patient shows \
            medications and blood pressure, as in hReader.
              hreader applets available --applets HReaderApplets.plist
              hreader applets add org.mitre.hreader.bmi --patient 1 --at 1
              hreader applets move org.mitre.hreader.bloodpressure --to 1
            See docs/applets.md for plugins: programs that answer one JSON tile.
            """,
        subcommands: [Available.self, List.self, Add.self, Remove.self, Move.self],
        defaultSubcommand: List.self)

    struct Available: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "available", abstract: "List every declared applet and whether it can show a tile here.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var lists: AppletListOptions

        func run() throws {
            let registry = try lists.registry()
            if global.json {
                print(JSONValue.object([("applets", .array(registry.declarations.map(Self.json))),
                                        ("sources", .array(registry.sources.map(JSONValue.string))),
                                        ("plugins_directory", registry.pluginsDirectory.map { .string($0.path) } ?? .null)]).serialized(pretty: true))
                return
            }
            Output.table([["IDENTIFIER", "NAME", "KIND", "AVAILABLE"]] + registry.declarations.map { d in
                [d.identifier, d.displayName, d.kind, d.unavailableReason.map { "no: \($0)" } ?? "yes"]
            })
            let available = registry.declarations.filter(\.isAvailable).count
            global.note("\(available) of \(registry.declarations.count) available; lists read: \(registry.sources.joined(separator: ", ")).")
            if let directory = registry.pluginsDirectory, registry.declarations.contains(where: { if case .plugin = $0.implementation { true } else { false } }) {
                global.note("Plugins run only from \(directory.path), once approved with 'hreader applets add'.")
            }
        }

        static func json(_ d: AppletDeclaration) -> JSONValue {
            var members: JSONObject = [
                ("identifier", .string(d.identifier)), ("display_name", .string(d.displayName)), ("kind", .string(d.kind)),
                ("available", .bool(d.isAvailable)),
            ]
            if let reason = d.unavailableReason { members.append(("reason", .string(reason))) }
            if let className = d.className { members.append(("class_name", .string(className))) }
            if case let .plugin(plugin) = d.implementation {
                members.append(("executable", .string(plugin.executable)))
                members.append(("entry_types", .array(plugin.entryTypes.map { .string($0.rawValue) })))
            }
            members.append(("source", .string(d.origin)))
            return .object(members)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List a patient's applets in summary order.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var lists: AppletListOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?

        func run() throws {
            let registry = try lists.registry()
            let open = try global.open()
            let p = try open.patient(patient)
            let items = try open.appletList(of: p, registry: registry)
            let own = try open.hasOwnAppletList(p)
            if global.json {
                print(JSONValue.object([
                    ("applets", .array(items.map { item in
                        var members: JSONObject = [("position", .int(item.position)), ("identifier", .string(item.identifier))]
                        if let d = item.declaration {
                            members.append(("display_name", .string(d.displayName)))
                            members.append(("available", .bool(d.isAvailable)))
                            if let reason = d.unavailableReason { members.append(("reason", .string(reason))) }
                        } else {
                            members.append(("available", .bool(false)))
                            members.append(("reason", .string("not declared")))
                        }
                        return .object(members)
                    })),
                    ("default", .bool(!own)),
                ]).serialized(pretty: true))
                return
            }
            if items.isEmpty { global.note("No applets. Add one with 'hreader applets add IDENTIFIER'."); return }
            Output.table([["POS", "IDENTIFIER", "NAME", "STATE"]] + items.map { item in
                [String(item.position), item.identifier, item.declaration?.displayName ?? "",
                 item.declaration.map { $0.unavailableReason.map { "not available: \($0)" } ?? "available" } ?? "not declared"]
            })
            if !own { global.note("This is the default list; 'hreader applets add|remove|move' makes it the patient's own.") }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a declared applet to a patient's summary (a plugin: approve its program for this vault).",
            discussion: """
                A plugin runs only from the plugins directory ($XDG_CONFIG_HOME/hreader/plugins, else \
                ~/.config/hreader/plugins), and only once approved here: 'add' shows its program and SHA-256 \
                and asks on a terminal (give --trust-plugin otherwise). A program that changed since is \
                refused until it is added again. See docs/applets.md.
                """)
        @OptionGroup var global: GlobalOptions
        @OptionGroup var lists: AppletListOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Option(name: .customLong("at"), help: "Position (1 = first; default: last).") var position: Int?
        @Flag(help: "Approve a plugin's program without asking (for scripts: no terminal to ask on).") var trustPlugin = false
        @Flag(help: "Allow a plugin whose program is a shell or an interpreter (sh, python3, env, …): it runs what it is sent as code.")
        var allowInterpreter = false
        @Argument(help: "The applet's identifier (see 'hreader applets available').") var identifier: String

        func run() throws {
            let registry = try lists.registry()
            let open = try global.open()
            let p = try open.patient(patient)
            var approval = try open.pluginApproval(identifier, registry: registry, allowInterpreter: allowInterpreter)
            if let pending = approval {
                if pending.isCurrent && !allowInterpreter {
                    approval = nil
                } else if !trustPlugin {
                    try Self.ask(pending)
                }
            }
            let added = try open.addApplet(identifier, to: p, at: position, registry: registry, approving: approval)
            let approved = approval.map { " Approved \($0.program.path) (SHA-256 \($0.program.sha256.prefix(16))…) to run in this vault." } ?? ""
            if added {
                if let reason = registry.declaration(identifier)?.unavailableReason {
                    global.note("Added \(identifier), but it is not available here (\(reason)): its tile will say so.")
                } else {
                    global.note("Added \(identifier).\(approved)")
                }
            } else if approval != nil {
                global.note("\(identifier) is already in the list.\(approved)")
            } else {
                global.note("\(identifier) is already in the list; use 'hreader applets move' to reorder it.")
            }
        }

        /// Shows what would run and asks; without a terminal, --trust-plugin must say it.
        static func ask(_ approval: PluginApproval) throws {
            let types = approval.entryTypes.isEmpty ? "no entries" : approval.entryTypes.map(\.rawValue).joined(separator: ", ")
            var lines = ["\(approval.identifier) (\(approval.displayName)) is a plugin: it runs as you, for every summary that shows it.",
                         "  program  \(approval.program.path)", "  SHA-256  \(approval.program.sha256)", "  reads    \(types)"]
            if let interpreter = approval.program.interpreter { lines.append("  warning  it is a shell or interpreter (\(interpreter)): it runs what it is sent as code") }
            if let previous = approval.previous {
                lines.append("  replaces the approval of \(previous.approved): \(previous.path) (SHA-256 \(previous.sha256.prefix(16))…)")
            }
            guard Terminal.stdinIsTerminal else {
                throw HReaderError.usage("\(approval.identifier) is a plugin that runs \(approval.program.path) (SHA-256 \(approval.program.sha256)); "
                                         + "approve it with --trust-plugin, or run this on a terminal to be asked")
            }
            for line in lines { Terminal.note(line) }
            let answer = try Terminal.readVisibleLine(prompt: "Approve it to run in this vault? [y/N] ", allowEmpty: true)
            guard ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) else {
                throw HReaderError(.failure, "\(approval.identifier) was not approved; nothing was changed")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove an applet from a patient's summary.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Argument var identifier: String

        func run() throws {
            let open = try global.open()
            try open.removeApplet(identifier, from: try open.patient(patient))
            global.note("Removed \(identifier).")
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "move", abstract: "Move an applet to a position in a patient's summary (1 = first).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Argument var identifier: String
        @Option(name: .customLong("to")) var position: Int

        func run() throws {
            let open = try global.open()
            try open.moveApplet(identifier, of: try open.patient(patient), to: position)
        }
    }
}
