import ArgumentParser
import Foundation
import HReaderKit
import HReaderNet

extension ServerKind: ExpressibleByArgument {}

/// Limits and trust for commands that talk to servers.
struct NetworkOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Seconds to wait for a server to connect or to send more (default 30).", valueName: "seconds"))
    var timeout: Double?

    @Option(help: ArgumentHelp("Largest response accepted, e.g. 10M, 64M, 512K (default 10M).", valueName: "size"))
    var maxResponseSize: String?

    @Option(help: ArgumentHelp("A PEM file of extra CA certificates to trust (a private CA). Verification is always on.", valueName: "file"))
    var caFile: String?

    @Flag(help: "Send credentials over plain http to a server that is not this machine (they cross the network in the clear).")
    var insecureHttp = false

    /// Sets the process's network configuration; call before any request.
    func apply() throws {
        var configuration = NetworkConfiguration()
        if let timeout {
            guard timeout > 0, timeout <= 3600 else { throw HReaderError.usage("--timeout must be between 0 and 3600 seconds") }
            configuration.readTimeout = timeout
            configuration.connectTimeout = min(configuration.connectTimeout, timeout)
        }
        if let text = maxResponseSize {
            guard let bytes = Self.size(text) else { throw HReaderError.usage("--max-response-size takes a size such as 10M, 64M or 512K") }
            configuration.maxResponseBytes = bytes
        }
        if let caFile {
            guard FileManager.default.isReadableFile(atPath: caFile) else { throw HReaderError.usage("cannot read --ca-file \(caFile)") }
            configuration.caFile = caFile
        }
        configuration.allowInsecureHTTP = insecureHttp
        APIClients.shared.configuration = configuration
    }

    static func size(_ text: String) -> Int? {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.uppercased().last, let unit = units[last], let value = Int(text.dropLast()), value > 0 { return value * unit }
        if let value = Int(text), value > 0 { return value }
        return nil
    }
}

/// How to sign in to a server. Secrets come from files, never from argv.
struct AuthOptions: ParsableArguments {
    enum Kind: String, ExpressibleByArgument, CaseIterable { case none, bearer, basic, oauth2 }

    @Option(help: "none, bearer (--token-file), basic (--user, --secret-file) or oauth2 (--token-url, --refresh-token-file).")
    var auth: Kind?

    @Option(help: ArgumentHelp("A file holding a bearer token.", valueName: "file")) var tokenFile: String?
    @Option(help: ArgumentHelp("The user name for basic auth.", valueName: "name")) var user: String?
    @Option(help: ArgumentHelp("A file holding the basic-auth password.", valueName: "file")) var secretFile: String?
    @Option(help: ArgumentHelp("The OAuth2 token endpoint.", valueName: "url")) var tokenUrl: String?
    @Option(help: ArgumentHelp("The OAuth2 client id.", valueName: "id")) var clientId: String?
    @Option(help: ArgumentHelp("A file holding the OAuth2 client secret (confidential clients).", valueName: "file")) var clientSecretFile: String?
    @Option(help: ArgumentHelp("A file holding the OAuth2 refresh token.", valueName: "file")) var refreshTokenFile: String?

    /// The credential described, or nil when no auth option was given.
    func method() throws -> AuthMethod? {
        let kind = auth ?? (tokenFile != nil ? .bearer : refreshTokenFile != nil ? .oauth2 : user != nil ? .basic : nil)
        switch kind {
        case nil: return nil
        case .none?: return AuthMethod.none
        case .bearer?:
            guard let tokenFile else { throw HReaderError.usage("--auth bearer needs --token-file") }
            return .bearer(token: try Self.secret(tokenFile, "--token-file"))
        case .basic?:
            guard let user, let secretFile else { throw HReaderError.usage("--auth basic needs --user and --secret-file") }
            return .basic(user: user, password: try Self.secret(secretFile, "--secret-file"))
        case .oauth2?:
            guard let tokenUrl, let refreshTokenFile else { throw HReaderError.usage("--auth oauth2 needs --token-url and --refresh-token-file") }
            guard let url = URL(string: tokenUrl), Origin(url) != nil else { throw HReaderError.usage("--token-url must be an http(s) URL") }
            return .oauth2(OAuth2Tokens(tokenURL: tokenUrl, clientID: clientId,
                                        clientSecret: try clientSecretFile.map { try Self.secret($0, "--client-secret-file") },
                                        refreshToken: try Self.secret(refreshTokenFile, "--refresh-token-file")))
        }
    }

    /// The first line of a file, trimmed; never echoed anywhere.
    static func secret(_ path: String, _ option: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw HReaderError.usage("cannot read \(option) \(path)")
        }
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init)?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !line.isEmpty else { throw HReaderError.usage("\(option) \(path) is empty") }
        return line
    }
}
