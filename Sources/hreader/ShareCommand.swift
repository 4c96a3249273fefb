import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit

struct ShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share a patient's summary as a SMART Health Link: encrypted, its key only in the link.",
        discussion: """
            The link carries where the encrypted International Patient Summary is and the key that opens it;
            anyone holding the link can read it until it expires or is revoked (docs/sharing.md).
              hreader share create --patient 1 --out /srv/www/shl --base-url https://me.example.org/shl
              hreader share create --patient 1 --passcode-file code.txt --base-url https://me.example.org --expires 7d
              hreader serve --shares --port 8443      (hands out served links; put it behind your https proxy)
              hreader share list
              hreader share revoke ID
            """,
        subcommands: [Create.self, List.self, Revoke.self],
        defaultSubcommand: List.self)

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Make a link to a patient's IPS and print it (shlink:/…).",
            discussion: """
                With --out DIR, only the ciphertext is written to DIR under an unguessable name, for any static web
                host serving DIR at --base-url (flag U: no passcode). Without --out, the link is served by
                'hreader serve --shares' at --base-url (its manifest protocol; a passcode needs this mode).
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "The patient (id or uuid).") var patient: String
        @Option(help: ArgumentHelp("A file holding a passcode the recipient must give (needs 'hreader serve --shares').", valueName: "file"))
        var passcodeFile: String?
        @Option(help: ArgumentHelp("How long the link lasts (30d, 12h, …; 'never').", valueName: "duration")) var expires = "30d"
        @Option(help: ArgumentHelp("A label the recipient sees (at most 80 characters).", valueName: "text")) var label: String?
        @Option(help: ArgumentHelp("Write the ciphertext to this directory (a static web host's).", valueName: "dir")) var out: String?
        @Option(help: ArgumentHelp("Where the files (--out) or 'hreader serve --shares' are reached from outside.", valueName: "url"))
        var baseURL: String
        @Option(help: ArgumentHelp("Also print the link behind this viewer: URL#shlink:/….", valueName: "url")) var viewer: String?
        @Option(help: ArgumentHelp("Write the link's QR code to this file (.png or .svg); it holds the key, like the link.", valueName: "file"))
        var qr: String?

        func validate() throws {
            if expires != "never", DurationArgument(argument: expires) == nil {
                throw ValidationError("--expires takes a duration such as 30d, 12h or 90m, or 'never'")
            }
            if let qr, QRCode.FileFormat(path: qr) == nil {
                throw ValidationError("--qr writes a .png or an .svg file; got '\(qr)'")
            }
            if out != nil, passcodeFile != nil {
                throw ValidationError("a passcode needs hreader's own server: leave out --out and run 'hreader serve --shares'")
            }
        }

        func run() throws {
            let passcode = try passcodeFile.map { try AuthOptions.secret($0, "--passcode-file") }
            let open = try global.open()
            let chosen = try open.patient(patient)
            let until = DurationArgument(argument: expires).map { Date().addingTimeInterval($0.seconds) }
            let destination: OpenVault.ShareDestination = out.map { .directory(URL(fileURLWithPath: $0), baseURL: baseURL) } ?? .served(baseURL: baseURL)
            let created = try open.createShare(of: chosen, destination: destination, passcode: passcode, expires: until, label: label)
            let viewerText = viewer.map { created.link.text(viewer: $0) }
            // The code holds what a phone opens: the viewer's link when there is one (a camera app opens
            // a web page), else the bare shlink:/ for a health app.
            let code = try QRCodeFile.code(viewerText ?? created.link.text)
            if let qr { try code.write(to: URL(fileURLWithPath: qr)) }
            if global.json {
                var object: JSONObject = [("share", created.share.jsonValue), ("link", .string(created.link.text))]
                if let viewerText { object.members.append(("viewer_link", .string(viewerText))) }
                if let qr { object.members.append(("qr_file", .string(qr))) }
                Output.json(.object(object))
                return
            }
            print(created.link.text)
            if let viewerText { print(viewerText) }
            if Terminal.stdoutIsTerminal { for line in code.terminalLines() { print(line) } }
            let how = created.share.mode == .static
                ? "its ciphertext is \(created.share.filePath ?? "")"
                : "served by 'hreader serve --shares'" + (passcode != nil ? ", passcode required" : "")
            global.note("Share \(created.share.id) of \(chosen.displayName): \(how); "
                        + (created.share.expires.map { "expires \($0)" } ?? "never expires") + ". Anyone holding the link can read it.")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the links you have shared.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let shares = try global.open().shares()
            if global.json { Output.json(["shares": .array(shares.map(\.jsonValue))]); return }
            guard !shares.isEmpty else { global.note("No shares; make one with 'hreader share create'."); return }
            Output.table([["ID", "LABEL", "CREATED", "EXPIRES", "PASSCODE", "ACCESSES", "STATE"]] + shares.map { share in
                [share.id, share.label ?? "", share.created, share.expires ?? "never", share.passcodeHash == nil ? "no" : "yes",
                 String(share.accesses), share.revoked.map { "revoked \($0)" } ?? (share.attemptsLeft == 0 ? "locked" : share.mode.rawValue)]
            })
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke", abstract: "Revoke a link: served ones answer 404, static files are deleted.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The share's id (see 'hreader share list').") var id: String

        func run() throws {
            let share = try global.open().revokeShare(id)
            if global.json { Output.json(["revoked": .string(share.id)]); return }
            global.note("Revoked share \(share.id)" + (share.filePath.map { "; deleted \($0)" } ?? "") + ".")
        }
    }
}

/// `share create --qr`: the link's QR code.
enum QRCodeFile {
    static func code(_ text: String) throws -> QRCode {
        do { return try QRCode(text) } catch QRCode.Failure.tooLong(let bytes) {
            throw HReaderError.usage("the link (\(bytes) bytes) is too long for a QR code; use a shorter --base-url or --viewer")
        }
    }
}
