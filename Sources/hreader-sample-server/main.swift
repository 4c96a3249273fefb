import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Start-up and shutdown: parse the command line, build the data, listen on 127.0.0.1, print the
/// one `listening` line, and exit 0 on SIGTERM or SIGINT.
enum Main {
    static func run() async -> Int32 {
        let options: Options
        let secrets: Secrets
        let rhexDirectory: RHExStore?
        do {
            switch try Options.parse(Array(CommandLine.arguments.dropFirst())) {
            case .help:
                FileHandle.standardOutput.write(Data((Options.usage + "\n").utf8))
                return 0
            case .run(let parsed):
                options = parsed
            }
            secrets = try Secrets.load(options)
            rhexDirectory = try options.rhexRecordsDirectory.map { (directory) throws(Options.UsageError) in try RHExStore.load(directory: directory, feedIDs: options.rhexFeedIDs) }
        } catch {
            writeStandardError("hreader-sample-server: \(error.message)" + (error.showUsage ? "\n" + Options.usage : ""))
            return 2
        }

        let (store, records) = await makeData(options, rhexDirectory: rhexDirectory)
        let router = Router(
            fhir: FHIRAPI(store: store, profile: options.profile),
            rhex: RHExAPI(store: records),
            oauth: OAuthServer(initialRefreshToken: secrets.initialRefreshToken, lifetime: options.tokenLifetime,
                               smart: options.smart ? SmartAuthorizationServer(settings: options.smartSettings) : nil),
            basic: secrets.basicCredentials.map(BasicAuth.init),
            probe: Probe(),
            faults: options.faults ? Faults(redirectTarget: options.redirectTarget) : nil,
            links: options.shl ? SmartHealthLinks(passcode: secrets.shlPasscode, locationOnly: options.shlLocationOnly) : nil,
            requireAuth: options.requireAuth,
            delayMilliseconds: options.delayMilliseconds,
            verbose: options.verbose)

        var tls: NIOSSLContext?
        if let certificate = options.tlsCertificate, let key = options.tlsKey {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(certificate).map { NIOSSLCertificateSource.certificate($0) }
                tls = try NIOSSLContext(configuration: .makeServerConfiguration(
                    certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))))
            } catch {
                writeStandardError("hreader-sample-server: cannot load the TLS certificate or key: \(error)")
                return 2
            }
        }

        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let channel: Channel
        do {
            channel = try await HTTPServer.start(group: group, port: options.port, responder: router, tls: tls)
        } catch {
            writeStandardError("hreader-sample-server: cannot listen on 127.0.0.1:\(options.port): \(error)")
            try? await group.shutdownGracefully()
            return 1
        }

        // SIGTERM and SIGINT end the process at once with status 0 (the kernel closes the
        // connections; nothing here needs flushing). A C handler is installed synchronously, so a
        // signal that arrives right after the `listening` line is never lost, as it could be with
        // a dispatch signal source, which registers asynchronously.
        signal(SIGTERM) { _ in _exit(0) }
        signal(SIGINT) { _ in _exit(0) }

        if options.documents {
            // Added once the port is known: one attachment's url is absolute on this server.
            let base = "\(tls == nil ? "http" : "https")://127.0.0.1:\(channel.localAddress?.port ?? options.port)/fhir"
            try? store.withState { SyntheticDocuments.add(to: &$0, base: base, otherHost: options.otherHost) }
        }
        if options.shl, let links = router.links {
            do {
                try links.makeLinks(store: store, base: "\(tls == nil ? "http" : "https")://127.0.0.1:\(channel.localAddress?.port ?? options.port)")
            } catch {
                writeStandardError("hreader-sample-server: cannot make the SMART Health Links: \(error)")
                return 1
            }
        }
        if options.bulkNotes > 0 {
            try? store.withState { SyntheticDocuments.addBulkNotes(options.bulkNotes, to: &$0) }
        }
        FileHandle.standardOutput.write(Data("listening \(tls == nil ? "http" : "https")://127.0.0.1:\(channel.localAddress?.port ?? options.port)\n".utf8))

        try? await channel.closeFuture.get()
        // Shutting the group down closes every open connection, stalled ones included.
        try? await group.shutdownGracefully()
        return 0
    }

    /// The two data sets are independent: build them on both cores (1000 × 100 must start quickly).
    private static func makeData(_ options: Options, rhexDirectory: RHExStore?) async -> (FHIRStore, RHExStore) {
        func fhir() -> FHIRStore {
            FHIRStore(SyntheticFHIR.make(patients: options.patients, entriesPerPatient: options.entriesPerPatient, seed: options.seed))
        }
        if let rhexDirectory { return (fhir(), rhexDirectory) }
        async let records = SyntheticRHEx.make(count: options.patients, seed: options.seed)
        let store = fhir()
        let rhex = RHExStore(records: await records)
        return (store, options.rhexFeedIDs == .file ? rhex.namedAsFiles() : rhex)
    }
}

exit(await Main.run())
