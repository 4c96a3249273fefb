import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The built executables (`hreader`, `hreader-sample-server`) beside the test bundle.
public enum BuiltProducts {
    public static func url(of name: String, environmentOverride: String? = nil) -> URL {
        if let key = environmentOverride, let path = ProcessInfo.processInfo.environment[key] { return URL(fileURLWithPath: path) }
        var candidates = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        fatalError("the \(name) binary was not found; run 'swift build' first")
    }
}

/// `hreader-sample-server` as a real process on 127.0.0.1, stopped with SIGTERM.
public final class SampleServer {
    public let process: Process
    public let base: URL
    private let stderrFile: URL

    public var fhir: String { base.absoluteString + "/fhir" }
    public var rhex: String { base.absoluteString + "/rhex" }
    public var port: Int { base.port ?? 0 }

    public init(_ arguments: [String] = [], workDir: URL) throws {
        let binary = BuiltProducts.url(of: "hreader-sample-server", environmentOverride: "HREADER_SAMPLE_SERVER")
        let pipe = Pipe()
        stderrFile = workDir.appendingPathComponent("server-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process = Process()
        process.executableURL = binary
        process.arguments = ["--port", "0"] + arguments
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        // The first line says where it listens.
        var buffer = Data()
        let deadline = Date().addingTimeInterval(30)
        let handle = pipe.fileHandleForReading
        while !buffer.contains(0x0a) {
            guard Date() < deadline, process.isRunning else {
                process.terminate()
                let err = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
                throw NSError(domain: "SampleServer", code: 1, userInfo: [NSLocalizedDescriptionKey: "the sample server did not start: \(err)"])
            }
            let chunk = handle.availableData
            if chunk.isEmpty { usleep(10_000) }
            buffer.append(chunk)
        }
        let line = String(decoding: buffer.prefix(while: { $0 != 0x0a }), as: UTF8.self)
        guard line.hasPrefix("listening "), let url = URL(string: String(line.dropFirst("listening ".count))) else {
            process.terminate()
            throw NSError(domain: "SampleServer", code: 2, userInfo: [NSLocalizedDescriptionKey: "unexpected first line: \(line)"])
        }
        base = url
    }

    /// SIGTERM, and SIGKILL if it has not gone within 5 s: a test never hangs on a server.
    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    // MARK: Talking to it directly (plain Foundation, not hreader's client)

    public func request(_ path: String, method: String = "GET", body: Data? = nil, headers: [String: String] = [:]) throws -> (status: Int, body: Data) {
        let url = URL(string: base.absoluteString + path)!
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let config = URLSessionConfiguration.ephemeral
        config.urlCache = nil
        let session = URLSession(configuration: config)
        defer { session.finishTasksAndInvalidate() }
        let semaphore = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: (Int, Data)?
        nonisolated(unsafe) var failure: Error?
        session.dataTask(with: request) { data, response, error in
            if let error { failure = error } else { result = ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()) }
            semaphore.signal()
        }.resume()
        semaphore.wait()
        if let failure { throw failure }
        return result!
    }

    /// The body of a GET, as text (an Atom feed, a page).
    public func text(_ path: String) throws -> String {
        String(decoding: try request(path).1, as: UTF8.self)
    }

    public func json(_ path: String, method: String = "GET", body: Data? = nil, headers: [String: String] = [:]) throws -> [String: Any] {
        let (_, data) = try request(path, method: method, body: body, headers: headers)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
