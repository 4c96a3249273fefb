// The invariants the libFuzzer harness `fuzz-web` checks on HReaderWeb's own parsing (the pure
// functions, reachable without starting a server), replayed by HReaderCLITests over
// Tests/HReaderCLITests/Fuzz/<harness>/. Needs a testable build (debug, or `make fuzz`).
#if DEBUG || FUZZING
import Foundation
import FuzzDriver
import Hummingbird
import HummingbirdCore
import HReaderJSON
import HReaderKit
@testable import HReaderWeb

public enum WebFuzzChecks {
    public static let all: [FuzzHarness] = [
        ("web-query", query), ("web-form", form), ("web-return-to", returnTo),
    ]

    // MARK: Query strings: timeline ranges, times, paging integers, the token dropped from the address

    /// A query string as `GET /timeline.json?…` sees it: a range with start <= end inside the supported
    /// years, or a WebError; integers within bounds; the token-less redirect keeps every other parameter.
    public static func query(_ data: Data) throws {
        let text = String(decoding: data, as: UTF8.self)
        let uri = URI("/p/1/timeline.json?" + text)
        let parameters = uri.queryParameters
        do {
            let range = try Routes.range(parameters)
            guard range.start <= range.end else { throw FuzzViolation("range \(range.start)...\(range.end) ends before it starts") }
            if parameters.get("from") != nil {
                guard TimelineRange.supportedEpochs.contains(range.start), TimelineRange.supportedEpochs.contains(range.end) else {
                    throw FuzzViolation("range \(range.start)...\(range.end) outside the supported years")
                }
            }
        } catch is WebError {}
        for (_, value) in parameters {
            do {
                let time = try Routes.time(String(value), name: "at")
                _ = time.epoch
            } catch is WebError {}
        }
        do {
            let limit = try Routes.integer(parameters.get("limit"), name: "limit", default: 500, in: 1...5000)
            guard (1...5000).contains(limit) else { throw FuzzViolation("limit \(limit) out of bounds") }
        } catch is WebError {}
        let redirect = WebGuard.withoutToken(uri)
        let kept = URI(redirect).queryParameters
        guard kept.get("token") == nil else { throw FuzzViolation("the token survived in \(redirect)") }
        let before = parameters.filter { $0.key != "token" }.map { "\($0.key)=\($0.value)" }
        let after = kept.map { "\($0.key)=\($0.value)" }
        guard before.count == after.count else {
            throw FuzzViolation("withoutToken kept \(after.count) of \(before.count) parameters: \(redirect.debugDescription)")
        }
    }

    // MARK: A form body (POST timeline.json as a plain HTML form)

    /// Fields have non-empty names; the levels check accepts pain/mood/energy only as whole numbers
    /// 0–10; a return_to that passes isLocalPath stays on the server (see returnTo).
    public static func form(_ data: Data) throws {
        let fields = FormBody.parse(String(decoding: data, as: UTF8.self))
        var object = JSONObject()
        for (name, value) in fields {
            guard !name.isEmpty else { throw FuzzViolation("a form field with an empty name") }
            if !value.isEmpty { object[name] = .string(value) }
            if name == "return_to" { try checkLocal(value) }
        }
        do {
            try Routes.checkLevels(object)
            for name in ["pain", "mood", "energy"] {
                guard let value = object[name]?.string else { continue }
                guard let n = Int(value), (0...10).contains(n) else { throw FuzzViolation("checkLevels let \(name)=\(value.debugDescription) pass") }
            }
        } catch is WebError {}
        guard (try? JSONParser.parse(JSONValue.object(object).serialized()))?.object != nil else {
            throw FuzzViolation("form fields did not become a JSON object")
        }
    }

    // MARK: return_to: the redirect after a form post

    public static func returnTo(_ data: Data) throws {
        try checkLocal(String(decoding: data, as: UTF8.self))
    }

    /// When isLocalPath accepts a path, a browser resolving it against our origin stays there, also
    /// after reading `\` as `/` and dropping tabs and newlines (as browsers do).
    static func checkLocal(_ path: String) throws {
        guard Routes.isLocalPath(path) else { return }
        let base = URL(string: "http://127.0.0.1:8080/p/1/timeline")!
        let browserish = path.replacingOccurrences(of: "\\", with: "/").filter { $0 != "\t" && $0 != "\n" && $0 != "\r" }
        for candidate in [path, browserish] {
            guard let resolved = URL(string: candidate, relativeTo: base)?.absoluteURL else { continue }
            guard resolved.host == "127.0.0.1", resolved.scheme == "http", resolved.port == 8080 else {
                throw FuzzViolation("isLocalPath accepted \(path.debugDescription), which leaves the server: \(resolved)")
            }
        }
    }
}
#endif
