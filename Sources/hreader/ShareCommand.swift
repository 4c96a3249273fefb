import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel
import HReaderWeb
#if canImport(Glibc)
import Glibc
#endif

struct ShareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share a patient's summary as a SMART Health Link: encrypted, its key only in the link.",
        discussion: """
            The link carries where the encrypted International Patient Summary is and the key that opens it;
            anyone holding the link can read it until it expires or is revoked (docs/sharing.md).
              hreader share create --patient 1 --out /srv/www/shl --base-url https://me.example.org/shl
              hreader share create --patient 1 --passcode-file code.txt --base-url https://me.example.org --expires 7d
              hreader share create --patient 1 --serve --passcode-file code.txt   (serves it at once, until Ctrl-C)
              hreader serve --shares --port 8443      (hands out served links; put it behind your https proxy)
              hreader share list
              hreader share revoke ID
            """,
        subcommands: [Create.self, List.self, Revoke.self],
        defaultSubcommand: List.self)

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Make a link to a patient's IPS and print it (shlink:/…).",
            discussion: """
                With --out DIR, only the ciphertext is written to DIR under an unguessable name, for any static web
                host serving DIR at --base-url (flag U: no passcode). Without --out, the link is served by
                'hreader serve --shares' at --base-url (its manifest protocol; a passcode needs this mode).
                With --serve, hreader serves the new link itself at once, in the foreground, until Ctrl-C or
                SIGTERM (its manifest protocol only, on 127.0.0.1 --port; the link's address is --base-url, by
                default http://127.0.0.1:PORT): the link and its QR code are printed first.
                  hreader share create --patient 1 --serve --passcode-file code.txt --label "For Dr. Lee"
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "The patient (id or uuid).") var patient: String
        @Option(help: ArgumentHelp("A file holding a passcode the recipient must give (needs hreader's own server: --serve or 'hreader serve --shares').",
                                   valueName: "file"))
        var passcodeFile: String?
        @Option(help: ArgumentHelp("How long the link lasts (30d, 12h, …; 'never').", valueName: "duration")) var expires = "30d"
        @Option(help: ArgumentHelp("A label the recipient sees (at most 80 characters).", valueName: "text")) var label: String?
        @Option(help: ArgumentHelp("Write the ciphertext to this directory (a static web host's).", valueName: "dir")) var out: String?
        @Option(help: ArgumentHelp("Where the files (--out) or hreader's server are reached from outside (with --serve: default http://127.0.0.1:PORT).",
                                   valueName: "url"))
        var baseURL: String?
        @Flag(help: "Serve the link at once, in the foreground until Ctrl-C (the manifest protocol of 'hreader serve --shares', nothing else).")
        var serve = false
        @Option(help: ArgumentHelp("With --serve: the port on 127.0.0.1 (default: a free one).", valueName: "n")) var port: Int?
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
            if serve, out != nil { throw ValidationError("--serve serves the link itself; --out writes it for another host: give one of them") }
            if !serve, port != nil { throw ValidationError("--port goes with --serve") }
            if let port, !(0...65535).contains(port) { throw ValidationError("--port must be a number from 1 to 65535 (0: a free one)") }
            if !serve, baseURL == nil {
                throw ValidationError("give --base-url (where the link is reached), or --serve to serve it at once from this machine")
            }
            if out != nil, passcodeFile != nil {
                throw ValidationError("a passcode needs hreader's own server: leave out --out and use --serve or 'hreader serve --shares'")
            }
        }

        func run() async throws {
            let passcode = try passcodeFile.map { try AuthOptions.secret($0, "--passcode-file") }
            let until = DurationArgument(argument: expires).map { Date().addingTimeInterval($0.seconds) }
            if serve {
                try await runServing(passcode: passcode, until: until)
                return
            }
            let open = try global.open()
            let chosen = try open.patient(patient)
            let destination: OpenVault.ShareDestination = out.map { .directory(URL(fileURLWithPath: $0), baseURL: baseURL!) } ?? .served(baseURL: baseURL!)
            let created = try open.createShare(of: chosen, destination: destination, passcode: passcode, expires: until, label: label)
            try present(created, of: chosen, passcode: passcode != nil)
        }

        /// `--serve`: the server listens first (the port is the system's choice unless --port), then
        /// the link is made for its address through the server's own vault access, printed, and
        /// served until SIGINT or SIGTERM. What is wrong with the request is found before anything
        /// listens; a link that cannot be made stops the server with its error (nothing stored).
        func runServing(passcode: String?, until: Date?) async throws {
            try OpenVault.checkShareLabel(label)
            let (open, credential) = try global.openWithCredential()
            let chosen = try open.patient(patient)
            if let baseURL { _ = try OpenVault.shareBase(baseURL) }
            let server = try WebServer(open: open, registry: AppletRegistry.builtIn(), port: port ?? 0, shares: true, app: false)
            let failure = LockedFailure()
            let (label, base, quiet) = (label, baseURL, global.quiet)
            let command = self
            let stop = try await server.run(vaultStillUnlocked: global.service.stillUnlocked(by: credential)) { url in
                let address = base ?? "http://\(url.host ?? WebServer.host):\(url.port ?? 0)"
                Task {
                    do {
                        let created = try await server.withVault { vault in
                            try vault.createShare(of: chosen, destination: .served(baseURL: address), passcode: passcode, expires: until, label: label)
                        }
                        try command.present(created, of: chosen, passcode: passcode != nil, serving: url.port ?? 0)
                        if !quiet { Terminal.note("Serving it on \(WebServer.host):\(url.port ?? 0); Ctrl-C stops (every access is logged).") }
                    } catch {
                        failure.set(error)
                        kill(getpid(), SIGTERM)
                    }
                }
            }
            if let error = failure.error { throw error }
            switch stop {
            case .signal: global.note("Stopped serving; the link answers again wherever 'hreader serve --shares' runs at its address.")
            case .vaultLocked: global.note("The unlock session ended ('hreader lock', or it expired): stopped serving.")
            }
        }

        /// Prints the link (and the viewer's), writes and draws its QR code, and says what was made.
        func present(_ created: OpenVault.CreatedShare, of chosen: Patient, passcode: Bool, serving port: Int? = nil) throws {
            let viewerText = viewer.map { created.link.text(viewer: $0) }
            // The code holds what a phone opens: the viewer's link when there is one (a camera app opens
            // a web page), else the bare shlink:/ for a health app.
            let code = try QRCodeFile.code(viewerText ?? created.link.text)
            if let qr { try code.write(to: URL(fileURLWithPath: qr)) }
            defer { flushStandardOutput() }
            if global.json {
                var object: JSONObject = [("share", created.share.jsonValue), ("link", .string(created.link.text))]
                if let viewerText { object.members.append(("viewer_link", .string(viewerText))) }
                if let qr { object.members.append(("qr_file", .string(qr))) }
                if let port { object.members.append(("port", .int(port))) }
                Output.json(.object(object))
                return
            }
            print(created.link.text)
            if let viewerText { print(viewerText) }
            if Terminal.stdoutIsTerminal { for line in code.terminalLines() { print(line) } }
            let how = created.share.mode == .static
                ? "its ciphertext is \(created.share.filePath ?? "")"
                : (port != nil ? "served here" : "served by 'hreader serve --shares'") + (passcode ? ", passcode required" : "")
            global.note("Share \(created.share.id) of \(chosen.displayName): \(how); "
                        + (created.share.expires.map { "expires \($0)" } ?? "never expires") + ". Anyone holding the link can read it.")
        }
    }

    /// The first error of the link made while serving, kept for after the server stops.
    final class LockedFailure: @unchecked Sendable {
        // @unchecked: `lock` guards `stored`, its only state.
        private let lock = NSLock()
        private var stored: Error?
        func set(_ error: Error) { lock.lock(); if stored == nil { stored = error }; lock.unlock() }
        var error: Error? { lock.lock(); defer { lock.unlock() }; return stored }
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
