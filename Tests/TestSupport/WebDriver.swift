import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A small W3C WebDriver client (https://www.w3.org/TR/webdriver2/) driving Debian's headless `chromium`
// through `chromedriver`, spoken to directly over HTTP: no Selenium. `.ci/browser.sh` installs both.
// Every call blocks until chromedriver answers, which is what an XCTest method wants:
//
//     let browser = try WebDriver.start(screenshotsDirectory: dir)
//     defer { browser.quit() }                  // deinit does it too, should the test throw first
//     try browser.navigate(to: url)
//     try browser.click(browser.waitForElement(css: "#load"))
//     try browser.waitUntil("status shown") { try browser.text(of: browser.findElement(css: "#status")) == "3 patients" }
//     XCTAssert(try browser.requestedURLs().allSatisfy { $0.hasPrefix(url.absoluteString) })
//
// Not Sendable: one test uses one browser from one thread.

/// A WebDriver failure: `code` is the W3C error code ("no such element", "timeout", "session not created", ...)
/// or "client" when chromedriver could not be reached; XCTest prints `description`.
public struct WebDriverError: Error, CustomStringConvertible, LocalizedError {
    public let code: String
    public let message: String
    /// The request that failed, e.g. "POST /element" (relative to the session).
    public let command: String
    public var description: String {   // chromedriver's messages often begin with the code already
        "WebDriver \(command): " + (message.hasPrefix(code) ? message : "\(code): \(message)")
    }
    public var errorDescription: String? { description }
}

/// A web element reference, valid until its page changes ("stale element reference" after that).
public struct ElementID: Hashable, Sendable { public let id: String }

/// A cookie as the browser holds it (HttpOnly ones included, unlike `document.cookie`).
public struct BrowserCookie: Equatable, Sendable {
    public let name, value, domain, path: String
    public let httpOnly, secure: Bool
    /// "Strict", "Lax" or "None".
    public let sameSite: String?
}

public final class WebDriver {
    public let screenshotsDirectory: URL
    public private(set) var sessionID = ""
    private let driver: Process
    private let port: Int                 // chromedriver's, on 127.0.0.1
    private let work: URL                 // profile, HOME and logs of this browser; removed by quit()
    private var stopped = false
    /// Every temp directory starts with this plus the owning process id: see `sweepOrphans`.
    private static let tag = "hreader-webdriver-"
    private static let elementKey = "element-6066-11e4-a52e-4f735466cecf"   // W3C's fixed key for element references

    /// The browser and driver: `$HREADER_CHROMIUM`/`$HREADER_CHROMEDRIVER`, else PATH, else /usr/bin.
    public static func locateChromium() -> (browser: String, driver: String)? {
        let env = ProcessInfo.processInfo.environment
        let directories = (env["PATH"] ?? "").split(separator: ":") + ["/usr/bin"]
        func find(_ names: [String], override: String) -> String? {
            let candidates = env[override].map { [$0] } ?? names.flatMap { name in directories.map { "\($0)/\(name)" } }
            return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        guard let browser = find(["chromium", "chromium-browser"], override: "HREADER_CHROMIUM"),
              let driver = find(["chromedriver"], override: "HREADER_CHROMEDRIVER") else { return nil }
        return (browser, driver)
    }

    /// Starts chromedriver on a free loopback port and opens a session in a fresh headless profile.
    public static func start(screenshotsDirectory: URL, extraArguments: [String] = []) throws -> WebDriver {
        guard let (browser, driverPath) = locateChromium() else {
            throw WebDriverError(code: "client", message: "chromium or chromedriver not found: run .ci/browser.sh", command: "start")
        }
        sweepOrphans()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("\(tag)\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("profile"), withIntermediateDirectories: true)
        let output = work.appendingPathComponent("chromedriver.out")
        func outputText() -> String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: driverPath)
        // --port=0: chromedriver binds a free port itself and prints it, so no other process can take it
        // between our choosing and its binding. --log-path also puts `work` in its command line (sweepOrphans).
        process.arguments = ["--port=0", "--log-path=\(work.path)/chromedriver.log", "--log-level=WARNING"]
        // The browser inherits this environment: Debian's chromium writes crash reports under
        // $HOME/.config/chromium even with --user-data-dir, and caches under XDG_CACHE_HOME.
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = work.path
        environment["XDG_CONFIG_HOME"] = work.appendingPathComponent(".config").path
        environment["XDG_CACHE_HOME"] = work.appendingPathComponent(".cache").path
        process.environment = environment
        let handle = try FileHandle(forWritingTo: output)
        (process.standardOutput, process.standardError) = (handle, handle)
        try process.run()
        try? handle.close()

        // "ChromeDriver was started successfully on port 41283." once it listens.
        var port: Int?
        let deadline = Date().addingTimeInterval(20)
        while port == nil, process.isRunning, Date() < deadline {
            let text = outputText()
            if let range = text.range(of: "started successfully on port ") {
                port = Int(text[range.upperBound...].prefix(while: \.isNumber))
            } else { usleep(20_000) }
        }
        // From here on, the object owns chromedriver: any throw below ends in deinit → quit().
        let webDriver = WebDriver(driver: process, port: port ?? 0, work: work, screenshots: screenshotsDirectory)
        guard port != nil else {
            throw WebDriverError(code: "client", message: "chromedriver did not start: \(outputText())", command: "start")
        }
        try webDriver.waitUntil(timeout: 10, "chromedriver ready") {
            let status = try? request("GET", port: webDriver.port, "/status") as? [String: Any]
            return status?["ready"] as? Bool == true
        }
        let arguments = ["--headless=new",
                         "--no-sandbox",                  // chromium's sandbox refuses to run as root, as CI does
                         "--disable-gpu", "--disable-dev-shm-usage",   // no GPU; small /dev/shm in containers
                         "--user-data-dir=\(work.appendingPathComponent("profile").path)",   // fresh: no cookies, no cache
                         "--no-first-run", "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--disable-default-apps", "--disable-extensions",
                         "--window-size=1280,1000"] + extraArguments
        let capabilities: [String: Any] = [
            "browserName": "chrome",
            "goog:chromeOptions": ["binary": browser, "args": arguments],
            // Chromedriver records the DevTools Network.* events of the page for requestedURLs().
            "goog:loggingPrefs": ["performance": "ALL"],
        ]
        let reply = try request("POST", port: webDriver.port, "/session", ["capabilities": ["alwaysMatch": capabilities]]) as? [String: Any]
        guard let id = reply?["sessionId"] as? String else {
            throw WebDriverError(code: "client", message: "no sessionId in \(String(describing: reply))", command: "POST /session")
        }
        webDriver.sessionID = id
        // Debian's chromium opens its new-tab page, which loads ~60 chrome:// resources: leave it, forget them.
        try webDriver.navigate(to: URL(string: "about:blank")!)
        _ = try webDriver.requestedURLs()
        return webDriver
    }

    private init(driver: Process, port: Int, work: URL, screenshots: URL) {
        (self.driver, self.port, self.work, screenshotsDirectory) = (driver, port, work, screenshots)
    }

    deinit { quit() }

    /// Ends the session, stops chromedriver and every browser process of this profile, removes the temp
    /// directory. Idempotent. If chromedriver dies first, the browser lives on, hence the process sweep.
    public func quit() {
        guard !stopped else { return }
        stopped = true
        if !sessionID.isEmpty { _ = try? command("DELETE", "", timeout: 15) }
        if driver.isRunning { driver.terminate() }
        Self.killProcesses { $0.contains(self.work.path) }
        driver.waitUntilExit()
        try? FileManager.default.removeItem(at: work)
    }

    // MARK: Pages

    public func navigate(to url: URL) throws { try command("POST", "/url", ["url": url.absoluteString]) }
    public var currentURL: String { get throws { try command("GET", "/url") as? String ?? "" } }
    public var title: String { get throws { try command("GET", "/title") as? String ?? "" } }
    public var pageSource: String { get throws { try command("GET", "/source") as? String ?? "" } }

    /// Runs `script` as a function body in the page (`return …` gives the result); `args` are its
    /// `arguments` and may contain `ElementID`s. Element results come back as `ElementID`.
    @discardableResult
    public func executeScript(_ script: String, args: [Any] = []) throws -> Any? {
        let encoded = args.map { ($0 as? ElementID).map { [Self.elementKey: $0.id] as Any } ?? $0 }
        let result = try command("POST", "/execute/sync", ["script": script, "args": encoded])
        if let id = (result as? [String: Any])?[Self.elementKey] as? String { return ElementID(id: id) }
        return result
    }

    /// Saves the viewport as `<screenshotsDirectory>/<name>.png` and returns its URL.
    @discardableResult
    public func screenshot(named name: String) throws -> URL {
        guard let base64 = try command("GET", "/screenshot") as? String, let png = Data(base64Encoded: base64) else {
            throw WebDriverError(code: "client", message: "no PNG in the reply", command: "GET /screenshot")
        }
        try FileManager.default.createDirectory(at: screenshotsDirectory, withIntermediateDirectories: true)
        let url = screenshotsDirectory.appendingPathComponent("\(name).png")
        try png.write(to: url)
        return url
    }

    /// Prints the page to PDF on paper of this size (centimetres, WebDriver's Print command, default
    /// margins) and saves it as `<screenshotsDirectory>/<name>.pdf`; returns its bytes.
    @discardableResult
    public func printPDF(named name: String, width: Double, height: Double) throws -> Data {
        let body: [String: Any] = ["page": ["width": width, "height": height], "background": false, "shrinkToFit": false]
        guard let base64 = try command("POST", "/print", body) as? String, let pdf = Data(base64Encoded: base64) else {
            throw WebDriverError(code: "client", message: "no PDF in the reply", command: "POST /print")
        }
        try FileManager.default.createDirectory(at: screenshotsDirectory, withIntermediateDirectories: true)
        try pdf.write(to: screenshotsDirectory.appendingPathComponent("\(name).pdf"))
        return pdf
    }

    public func cookies() throws -> [BrowserCookie] {
        (try command("GET", "/cookie") as? [[String: Any]] ?? []).map {
            BrowserCookie(name: $0["name"] as? String ?? "", value: $0["value"] as? String ?? "",
                          domain: $0["domain"] as? String ?? "", path: $0["path"] as? String ?? "",
                          httpOnly: $0["httpOnly"] as? Bool ?? false, secure: $0["secure"] as? Bool ?? false,
                          sameSite: $0["sameSite"] as? String)
        }
    }

    /// Every URL the page requested since the previous call, in order: documents, scripts, images, fetch/XHR,
    /// /favicon.ico, data: URLs, failed and blocked ones too. Wait for a request's visible effect before
    /// asking. Read from chromedriver's "performance" log (enabled by `goog:loggingPrefs` at start) through
    /// `POST /session/{id}/se/log {"type":"performance"}`, a chromedriver extension that works in W3C mode
    /// (chromedriver 156) and empties the log. Each entry's `message` is a JSON string:
    /// `{"message": {"method": "Network.requestWillBeSent", "params": {"request": {"url": …}, …}}, "webview": …}`.
    public func requestedURLs() throws -> [String] {
        try (command("POST", "/se/log", ["type": "performance"]) as? [[String: Any]] ?? []).compactMap { entry in
            guard let text = entry["message"] as? String,
                  let json = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                  let event = json["message"] as? [String: Any], event["method"] as? String == "Network.requestWillBeSent",
                  let request = (event["params"] as? [String: Any])?["request"] as? [String: Any] else { return nil }
            return request["url"] as? String
        }
    }

    // MARK: Elements

    public func findElement(css selector: String) throws -> ElementID {
        try Self.element(command("POST", "/element", ["using": "css selector", "value": selector]))
    }

    public func findElements(css selector: String) throws -> [ElementID] {
        try (command("POST", "/elements", ["using": "css selector", "value": selector]) as? [Any] ?? []).map(Self.element)
    }

    public func click(_ element: ElementID) throws { try command("POST", "/element/\(element.id)/click", [:]) }
    public func clear(_ element: ElementID) throws { try command("POST", "/element/\(element.id)/clear", [:]) }
    /// Types `text` into the element as key presses (so input/keydown handlers run).
    public func sendKeys(_ text: String, to element: ElementID) throws {
        try command("POST", "/element/\(element.id)/value", ["text": text])
    }
    /// The rendered text, as the user sees it (hidden parts left out).
    public func text(of element: ElementID) throws -> String {
        try command("GET", "/element/\(element.id)/text") as? String ?? ""
    }
    /// The HTML attribute as written in the markup, nil when absent.
    public func attribute(_ name: String, of element: ElementID) throws -> String? {
        try command("GET", "/element/\(element.id)/attribute/\(name)") as? String
    }
    /// The live DOM property (e.g. "value" of an input after typing, "checked").
    public func property(_ name: String, of element: ElementID) throws -> Any? {
        try command("GET", "/element/\(element.id)/property/\(name)")
    }

    // MARK: Waiting

    /// Polls `condition` every 100 ms until it holds, throwing a "timeout" WebDriverError after `timeout`
    /// seconds. "no such element" and "stale element reference" thrown by `condition` count as not yet.
    public func waitUntil(timeout: TimeInterval = 10, _ description: String = "condition", _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var lastError: WebDriverError?
        while true {
            do { if try condition() { return } }
            catch let error as WebDriverError where ["no such element", "stale element reference"].contains(error.code) { lastError = error }
            guard Date() < deadline else {
                throw WebDriverError(code: "timeout", message: "\(description) not met within \(timeout) s"
                                     + (lastError.map { " (last: \($0.message))" } ?? ""), command: "waitUntil")
            }
            usleep(100_000)
        }
    }

    public func waitForElement(css selector: String, timeout: TimeInterval = 10) throws -> ElementID {
        var found: ElementID?
        try waitUntil(timeout: timeout, "element \(selector)") { found = try findElement(css: selector); return true }
        return found!
    }

    // MARK: HTTP

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: Any? = nil, timeout: TimeInterval = 60) throws -> Any? {
        try Self.request(method, port: port, "/session/\(sessionID)\(path)", body, timeout: timeout, label: "\(method) \(path)")
    }

    /// One WebDriver request: the reply's `value`, nil for JSON null; a W3C error reply throws.
    ///
    /// Plain HTTP/1.1 over a loopback socket, not URLSession: FoundationNetworking on Linux (libcurl) fails
    /// every reply whose header lines have no space after the colon ("Failed writing header",
    /// swift-corelibs-foundation#4965), and chromedriver writes them all so ("Content-Length:249").
    /// chromedriver keeps the connection open whatever "Connection" says: the body ends at Content-Length.
    private static func request(_ method: String, port: Int, _ path: String, _ body: Any? = nil,
                                timeout: TimeInterval = 60, label: String? = nil) throws -> Any? {
        let name = label ?? "\(method) \(path)"
        func failure(_ what: String) -> WebDriverError {
            WebDriverError(code: "client", message: "\(what): \(String(cString: strerror(errno)))", command: name)
        }
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"   // chromedriver answers 403 to other hosts
            + "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(payload.count)\r\n\r\n"
        let fd: Int32
        do { fd = try RawHTTP.connectLoopback(port: port, timeout: Int(timeout)) } catch { throw failure("connect to chromedriver on port \(port)") }
        defer { close(fd) }
        do { try RawHTTP.write(Data(head.utf8) + payload, to: fd) } catch { throw failure("send") }
        var reply = Data(), chunk = [UInt8](repeating: 0, count: 1 << 16)
        var bodyStart = 0, end: Int?          // known once the header is in
        while end.map({ reply.count < $0 }) ?? true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw n == 0 ? WebDriverError(code: "client", message: "chromedriver closed the connection", command: name)
                    : errno == EAGAIN ? WebDriverError(code: "client", message: "no reply within \(Int(timeout)) s", command: name)
                    : failure("recv")
            }
            reply.append(contentsOf: chunk[0..<n])
            if end == nil, let blank = reply.range(of: Data("\r\n\r\n".utf8)) {
                let header = String(decoding: reply[..<blank.lowerBound], as: UTF8.self).lowercased()
                guard let line = header.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                      let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) else {
                    throw WebDriverError(code: "client", message: "no Content-Length in \(header)", command: name)
                }
                bodyStart = blank.upperBound
                end = bodyStart + length
            }
        }
        let json = (try? JSONSerialization.jsonObject(with: reply[bodyStart...])) as? [String: Any]
        if let failure = json?["value"] as? [String: Any], let code = failure["error"] as? String {
            // Left out: "stacktrace" (chromedriver's raw addresses) and the "(Session info: chrome=…)" line.
            let message = (failure["message"] as? String ?? "").components(separatedBy: "\n  (Session info:")[0]
            throw WebDriverError(code: code, message: message, command: name)
        }
        guard let json, reply.starts(with: Data("HTTP/1.1 200".utf8)) else {
            throw WebDriverError(code: "client", message: "unexpected reply: \(String(decoding: reply.prefix(500), as: UTF8.self))", command: name)
        }
        return json["value"] is NSNull ? nil : json["value"]
    }

    private static func element(_ value: Any?) throws -> ElementID {
        guard let id = (value as? [String: Any])?[elementKey] as? String else {
            throw WebDriverError(code: "client", message: "not an element reference: \(String(describing: value))", command: "element")
        }
        return ElementID(id: id)
    }

    // MARK: Processes (Linux /proc; elsewhere these find nothing)

    /// SIGTERM to every process whose command line matches, SIGKILL to those left after 5 s.
    private static func killProcesses(where matches: (String) -> Bool) {
        func matching() -> [pid_t] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { entry in
                guard let pid = pid_t(entry), pid != getpid(),
                      let raw = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"), !raw.isEmpty else { return nil }
                return matches(String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)) ? pid : nil
            }
        }
        var remaining = matching()
        remaining.forEach { kill($0, SIGTERM) }
        let deadline = Date().addingTimeInterval(5)
        while !remaining.isEmpty, Date() < deadline { usleep(50_000); remaining = matching() }
        remaining.forEach { kill($0, SIGKILL) }
    }

    /// A test process that crashed never ran quit(): kills the chromedriver and chromium it left behind
    /// and removes its temp directory. Owners are recognised by the pid in the directory name.
    private static func sweepOrphans() {
        func ownerIsGone(_ text: Substring) -> Bool {
            guard let owner = pid_t(text.prefix(while: \.isNumber)) else { return false }
            return kill(owner, 0) != 0 && errno == ESRCH
        }
        killProcesses { line in line.components(separatedBy: tag).dropFirst().contains { ownerIsGone($0[...]) } }
        let temp = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temp.path)) ?? []
        where name.hasPrefix(tag) && ownerIsGone(name.dropFirst(tag.count)) {
            try? FileManager.default.removeItem(at: temp.appendingPathComponent(name))
        }
    }
}
