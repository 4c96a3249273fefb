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
        try AppletRegistry.load(extraFile: file, environment: ProcessInfo.processInfo.environment)
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
                                        ("sources", .array(registry.sources.map(JSONValue.string)))]).serialized(pretty: true))
                return
            }
            Output.table([["IDENTIFIER", "NAME", "KIND", "AVAILABLE"]] + registry.declarations.map { d in
                [d.identifier, d.displayName, d.kind, d.unavailableReason.map { "no: \($0)" } ?? "yes"]
            })
            let available = registry.declarations.filter(\.isAvailable).count
            global.note("\(available) of \(registry.declarations.count) available; lists read: \(registry.sources.joined(separator: ", ")).")
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
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a declared applet to a patient's summary.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var lists: AppletListOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Option(name: .customLong("at"), help: "Position (1 = first; default: last).") var position: Int?
        @Argument(help: "The applet's identifier (see 'hreader applets available').") var identifier: String

        func run() throws {
            let registry = try lists.registry()
            let open = try global.open()
            let p = try open.patient(patient)
            if try open.addApplet(identifier, to: p, at: position, registry: registry) {
                if let reason = registry.declaration(identifier)?.unavailableReason {
                    global.note("Added \(identifier), but it is not available here (\(reason)): its tile will say so.")
                } else {
                    global.note("Added \(identifier).")
                }
            } else {
                global.note("\(identifier) is already in the list; use 'hreader applets move' to reorder it.")
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
