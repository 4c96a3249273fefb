import Foundation

/// The command line, parsed by hand (the target depends on swift-nio and Foundation only).
struct Options: Sendable {
    var port = 0
    var patients = 3
    var entriesPerPatient = 24
    var seed: UInt64 = 1
    var rhexRecordsDirectory: String?
    /// What the RHEx feed calls each record (`--rhex-feed-ids`).
    var rhexFeedIDs = RHExFeedIDs.record
    var requireAuth = false
    var refreshTokenFile: String?
    var tokenLifetime = 3600
    var basicCredentialsFile: String?
    var delayMilliseconds = 0
    var faults = false
    var redirectTarget: String?
    var verbose = false
    /// Clinical documents for p1 (SyntheticDocuments), one of them on `otherHost` when given.
    var documents = false
    var otherHost: String?
    /// `--bulk-notes N`: N more text notes for p1, each a Binary of about 10 kB by url (benchmarks).
    var bulkNotes = 0
    var tlsCertificate: String?
    var tlsKey: String?
    var profile = ServerProfile.full
    /// `--smart`: SMART App Launch (authorize endpoint, code grant); /fhir then wants a bearer token.
    var smart = false
    var smartSettings = SmartAuthorizationServer.Settings()
    /// `--shl`: SMART Health Links (manifest protocol) over the invented patients.
    var shl = false
    var shlPasscodeFile: String?
    var shlLocationOnly = false

    static let usage = """
        usage: hreader-sample-server [--port N] [--patients N] [--entries-per-patient M] [--seed S]
                                     [--rhex-records DIR] [--rhex-feed-ids record|file]
                                     [--require-auth] [--refresh-token-file F]
                                     [--token-lifetime SECONDS] [--basic-credentials-file F]
                                     [--delay-ms N] [--faults] [--redirect-target URL] [--verbose] [--documents [--other-host URL]]
                                     [--bulk-notes N]
                                     [--tls-cert PEM --tls-key PEM] [--profile full|minimal|readonly]
                                     [--smart [--smart-patient ID] [--smart-client-id ID]
                                      [--smart-challenge-methods LIST] [--code-lifetime SECONDS]]
                                     [--shl [--shl-passcode-file F] [--shl-location-only]]
        A FHIR R4, RHEx/hData and OAuth2 server over invented patients, on 127.0.0.1 only.
        --profile (FHIR): full (default) does everything: $everything, conditional create, update,
          delete, transaction and batch Bundles, offset paging with totals. minimal is read, search
          and plain create only (If-None-Exist ignored, no Bundles, no $everything, undeclared search
          parameters refused), 20 entries a page, no total, cursor next links. readonly is read,
          search and $everything, and refuses every write with 405. The CapabilityStatement says which.
        --rhex-feed-ids (RHEx): record (default) names each record in the feed and its URLs by the record's
          own _id; file by a name of its own (the file's name with --rhex-records, else the person's
          initials), as a server that keeps its records as files does: the feed ids are then not the _ids.
        --smart: a SMART App Launch authorization server for the test patient --smart-patient (default
          p1) and the public client --smart-client-id (default hreader): /fhir/.well-known/smart-configuration,
          GET /oauth/authorize (approves at once and redirects with a code; sample_decision=deny in the
          query denies), the authorization_code grant at /oauth/token (PKCE S256, codes live
          --code-lifetime seconds, default 60, and work once). /fhir then wants a bearer token (but
          for its metadata); /secure/fhir declares the authorize endpoint in its CapabilityStatement only.
          --smart-challenge-methods (default S256; comma-separated, may be empty) is what the
          configuration declares.
        --shl: SMART Health Links over each invented patient's record (a FHIR collection Bundle, JWE
          dir + A256GCM under a key of each link's own): GET /shl/links lists this run's links (a demo's
          convenience), POST /shl/ID answers the manifest protocol (recipient, passcode,
          embeddedLengthMax; 401 {"remainingAttempts": n} for a wrong passcode, locked after 5), files
          embedded when they fit, else at a location /shl/ID/file/TICKET for 5 minutes.
          --shl-passcode-file makes every link need that passcode (flag P); --shl-location-only never embeds.
        """

    struct UsageError: Error {
        let message: String
        /// Worth showing the usage text: a wrong option rather than an unreadable file.
        var showUsage = true
    }

    enum Parsed {
        case run(Options)
        case help
    }

    static func parse(_ arguments: [String]) throws(UsageError) -> Parsed {
        var options = Options()
        var rest = arguments[...]

        func value(_ name: String) throws(UsageError) -> String {
            guard let v = rest.popFirst() else { throw UsageError(message: "\(name) needs a value") }
            return v
        }
        func integer(_ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
            let text = try value(name)
            guard let n = Int(text), range.contains(n) else {
                throw UsageError(message: "\(name): expected an integer from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
            }
            return n
        }

        while let argument = rest.popFirst() {
            // Accept `--name=value` as well as `--name value`.
            if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
                rest.insert(String(argument[argument.index(after: eq)...]), at: rest.startIndex)
                rest.insert(String(argument[..<eq]), at: rest.startIndex)
                continue
            }
            switch argument {
            case "--port": options.port = try integer(argument, 0...65_535)
            case "--patients": options.patients = try integer(argument, 0...100_000)
            case "--entries-per-patient": options.entriesPerPatient = try integer(argument, 0...100_000)
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else { throw UsageError(message: "--seed: expected a non-negative integer, got '\(text)'") }
                options.seed = seed
            case "--rhex-records": options.rhexRecordsDirectory = try value(argument)
            case "--rhex-feed-ids":
                let text = try value(argument)
                guard let ids = RHExFeedIDs(rawValue: text) else {
                    throw UsageError(message: "--rhex-feed-ids: expected record or file, got '\(text)'")
                }
                options.rhexFeedIDs = ids
            case "--require-auth": options.requireAuth = true
            case "--refresh-token-file": options.refreshTokenFile = try value(argument)
            case "--token-lifetime": options.tokenLifetime = try integer(argument, 0...315_360_000)
            case "--basic-credentials-file": options.basicCredentialsFile = try value(argument)
            case "--delay-ms": options.delayMilliseconds = try integer(argument, 0...600_000)
            case "--faults": options.faults = true
            case "--redirect-target": options.redirectTarget = try value(argument)
            case "--verbose": options.verbose = true
            case "--documents": options.documents = true
            case "--other-host": options.otherHost = try value(argument)
            case "--bulk-notes": options.bulkNotes = try integer(argument, 0...100_000)
            case "--tls-cert": options.tlsCertificate = try value(argument)
            case "--tls-key": options.tlsKey = try value(argument)
            case "--profile":
                let text = try value(argument)
                guard let profile = ServerProfile(rawValue: text) else {
                    throw UsageError(message: "--profile: expected full, minimal or readonly, got '\(text)'")
                }
                options.profile = profile
            case "--smart": options.smart = true
            case "--smart-patient": options.smartSettings.patient = try value(argument)
            case "--smart-client-id": options.smartSettings.clientID = try value(argument)
            case "--smart-challenge-methods":
                options.smartSettings.challengeMethods = try value(argument).split(separator: ",").map(String.init)
            case "--code-lifetime": options.smartSettings.codeLifetime = try integer(argument, 0...86_400)
            case "--shl": options.shl = true
            case "--shl-passcode-file": options.shlPasscodeFile = try value(argument)
            case "--shl-location-only": options.shlLocationOnly = true
            case "--help", "-h": return .help
            default: throw UsageError(message: "unknown option '\(argument)'")
            }
        }
        guard options.shl || (options.shlPasscodeFile == nil && !options.shlLocationOnly) else {
            throw UsageError(message: "--shl-passcode-file and --shl-location-only go with --shl")
        }
        guard (options.tlsCertificate == nil) == (options.tlsKey == nil) else {
            throw UsageError(message: "--tls-cert and --tls-key go together")
        }
        return .run(options)
    }
}

/// What the option files hold, read once at start.
struct Secrets: Sendable {
    var initialRefreshToken: String?
    var basicCredentials: String?
    var shlPasscode: String?

    static func load(_ options: Options) throws(Options.UsageError) -> Secrets {
        func read(_ path: String, _ name: String) throws(Options.UsageError) -> String {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw Options.UsageError(message: "\(name): cannot read '\(path)'", showUsage: false)
            }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { throw Options.UsageError(message: "\(name): '\(path)' is empty", showUsage: false) }
            return text
        }
        var secrets = Secrets()
        if let path = options.refreshTokenFile { secrets.initialRefreshToken = try read(path, "--refresh-token-file") }
        if let path = options.basicCredentialsFile {
            let credentials = try read(path, "--basic-credentials-file")
            guard credentials.contains(":") else {
                throw Options.UsageError(message: "--basic-credentials-file: expected 'user:password'", showUsage: false)
            }
            secrets.basicCredentials = credentials
        }
        if let path = options.shlPasscodeFile { secrets.shlPasscode = try read(path, "--shl-passcode-file") }
        return secrets
    }
}
