import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderWeb

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a local web view of the vault: patients, summaries, the timeline, charts and forms.",
        discussion: """
            Listens on 127.0.0.1 only and prints one URL that carries a random access token: open it in a \
            browser on this machine. Anyone without the token gets 401. Ctrl-C stops the server; the token and \
            every browser session end with it. The vault stays unlocked in this process while it runs; when it \
            was opened with an unlock session (HREADER_SESSION), 'hreader lock' or the session's expiry stops it.
              hreader serve
              hreader serve --port 8765 --applets my-applets.plist
              hreader serve --shares --port 8443   (also answers the links of 'hreader share create' made without --out)
            The JSON API (GET /api/patients, …) is described in docs/web.md; scripts send the token as \
            'Authorization: Bearer TOKEN'.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var lists: AppletListOptions
    @Option(help: ArgumentHelp("The port on 127.0.0.1 (default: a free one).", valueName: "n")) var port: Int?
    @Flag(help: "Also hand out the SMART Health Links made by 'share create' without --out, at /shl/ (no token needed: the link is the key).")
    var shares = false

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be a number from 1 to 65535 (0: a free one)") }
    }

    func run() async throws {
        let registry = try lists.registry()
        let (open, credential) = try global.openWithCredential()
        let server = try WebServer(open: open, registry: registry, port: port ?? 0, shares: shares, providers: ProvidersCommand.directory)
        // Opened with an unlock session, it serves only while the session lasts: 'hreader lock' locks it too.
        let stillUnlocked = global.service.stillUnlocked(by: credential)
        let quiet = global.quiet
        let json = global.json
        let stop = try await server.run(vaultStillUnlocked: stillUnlocked) { url in
            // The URL alone on stdout (a script can read it), written at once: print() would hold it in a
            // pipe's buffer. The advice goes to stderr. --json: one line, {"url": "…"}.
            let line = json ? JSONValue.object([("url", .string(url.absoluteString))]).serialized() : url.absoluteString
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
            if !quiet { Terminal.note("Open the URL above in a browser on this machine; Ctrl-C stops the server.") }
            if shares, !quiet {
                Terminal.note("Shared links are answered at http://\(url.host ?? "127.0.0.1"):\(url.port ?? 0)/shl/ (every access is logged).")
            }
        }
        switch stop {
        case .signal: global.note("Stopped; the web session has ended.")
        case .vaultLocked: global.note("The unlock session ended ('hreader lock', or it expired): stopped; the web session has ended.")
        }
    }
}
