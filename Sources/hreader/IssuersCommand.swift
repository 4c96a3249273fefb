import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit

struct IssuersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "issuers",
        abstract: "The SMART Health Card issuers you trust: cards they sign are imported as verified.",
        discussion: """
            A card signed by an issuer not in this list is still checked and imported, marked
            "untrusted-issuer". Keys are fetched from ISS/.well-known/jwks.json when a card is imported,
            unless pinned with --jwks (docs/sharing.md).
              hreader issuers add https://myvaccinerecord.example.gov/creds --name "State IIS"
              hreader issuers add https://lab.example.org --jwks lab-jwks.json
              hreader issuers add https://registry.example.gov --ca registry-root.pem   (validates its keys' x5c chains)
              hreader issuers import-directory vci-issuers.json
            """,
        subcommands: [List.self, Add.self, Remove.self, ImportDirectory.self],
        defaultSubcommand: List.self)

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Trust an issuer (its iss URL, as cards name it).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The issuer's URL (https; its keys are at ISS/.well-known/jwks.json).") var iss: String
        @Option(help: "A name to show for it.") var name: String?
        @Option(help: ArgumentHelp("Pin its keys from this JWK Set file: they alone check its cards, nothing is fetched.", valueName: "file"))
        var jwks: String?
        @Option(help: ArgumentHelp("Trust anchors for its keys' x5c certificate chains: a PEM file, or a directory of .pem/.crt files.",
                                   valueName: "file"))
        var ca: String?

        func run() throws {
            let open = try global.open()
            let (issuer, pinned) = try open.addIssuer(iss, name: name, jwks: jwks.map { URL(fileURLWithPath: $0) },
                                                      ca: ca.map { URL(fileURLWithPath: $0) })
            let anchors = try open.cardIssuerAnchorCount(issuer.iss)
            if global.json {
                var object = IssuersCommand.json(issuer).object ?? JSONObject()
                object["trust_anchors"] = .int(anchors)
                Output.json(["issuer": .object(object)])
                return
            }
            var with: [String] = []
            if jwks != nil { with.append("\(pinned) pinned key\(pinned == 1 ? "" : "s")") }
            if ca != nil { with.append("\(anchors) trust anchor\(anchors == 1 ? "" : "s") for its x5c chains") }
            global.note("Trusting \(issuer.name.map { "\($0) (\(issuer.iss))" } ?? issuer.iss)"
                        + (with.isEmpty ? "." : " with " + with.joined(separator: " and ") + "."))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the trusted issuers.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let open = try global.open()
            let issuers = try open.cardIssuers()
            if global.json {
                Output.json(["issuers": .array(try issuers.map { issuer in
                    var object = IssuersCommand.json(issuer).object ?? JSONObject()
                    object["trust_anchors"] = .int(try open.cardIssuerAnchorCount(issuer.iss))
                    object["keys"] = .array(try open.cardIssuerKeys(issuer.iss).map { key in
                        .object([("kid", .string(key.kid)), ("pinned", .bool(key.pinned)), ("fetched", .string(key.fetched))])
                    })
                    return .object(object)
                })])
                return
            }
            if issuers.isEmpty { global.note("No trusted issuers; add one with 'hreader issuers add ISS'."); return }
            Output.table([["ISS", "NAME", "KEYS", "FROM", "ADDED"]] + issuers.map { issuer in
                [issuer.iss, issuer.name ?? "", issuer.pinned ? "pinned" : "fetched", issuer.origin, issuer.added]
            })
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Stop trusting an issuer (entries already imported keep how they were verified).")
        @OptionGroup var global: GlobalOptions
        @Argument var iss: String

        func run() throws {
            try global.open().removeIssuer(iss)
            global.note("No longer trusting \(iss).")
        }
    }

    struct ImportDirectory: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-directory",
            abstract: "Trust every issuer of a trust framework's directory ({\"participating_issuers\": [{\"iss\", \"name\"}]}).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The directory file.", valueName: "file")) var file: String

        func run() throws {
            let (added, updated) = try global.open().importIssuerDirectory(URL(fileURLWithPath: file))
            if global.json { Output.json(["directory": .object([("added", .int(added)), ("updated", .int(updated))])]); return }
            global.note("Trusting \(added) new issuer\(added == 1 ? "" : "s") from \((file as NSString).lastPathComponent) (\(updated) already known).")
        }
    }

    static func json(_ issuer: OpenVault.CardIssuer) -> JSONValue {
        .object([("iss", .string(issuer.iss)), ("name", issuer.name.map(JSONValue.string) ?? .null), ("pinned", .bool(issuer.pinned)),
                 ("origin", .string(issuer.origin)), ("added", .string(issuer.added))])
    }
}
