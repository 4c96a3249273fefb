import ArgumentParser
import Foundation
import HReaderKit
import HReaderWeb

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a local web view of the vault: patients, summaries, the timeline, charts and forms.",
        discussion: """
            Listens on 127.0.0.1 only and prints one URL that carries a random access token: open it in a \
            browser on this machine. Anyone without the token gets 401. Ctrl-C stops the server; the token and \
            every browser session end with it. The vault stays unlocked in this process while it runs.
              hreader serve
              hreader serve --port 8765 --applets my-applets.plist
            The JSON API (GET /api/patients, …) is described in docs/web.md; scripts send the token as \
            'Authorization: Bearer TOKEN'.
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var lists: AppletListOptions
    @Option(help: ArgumentHelp("The port on 127.0.0.1 (default: a free one).", valueName: "n")) var port: Int = 0

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be a number from 1 to 65535") }
    }

    func run() async throws {
        let registry = try lists.registry()
        let server = try WebServer(open: try global.open(), registry: registry, port: port)
        let quiet = global.quiet
        try await server.run { url in
            // The URL alone on stdout (a script can read it); the advice on stderr.
            // Written at once: print() would hold the line in a pipe's buffer.
            FileHandle.standardOutput.write(Data((url.absoluteString + "\n").utf8))
            if !quiet { Terminal.note("Open the URL above in a browser on this machine; Ctrl-C stops the server.") }
        }
        global.note("Stopped; the web session has ended.")
    }
}
