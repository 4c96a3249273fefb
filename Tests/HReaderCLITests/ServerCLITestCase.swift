import Foundation
import TestSupport
import XCTest

/// For tests of imports and exports against sample servers: a vault made at set-up, hreader run
/// with the password in UTC on any vault, and each vault's records compared as content.
class ServerCLITestCase: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    /// hreader with the password, in UTC, on `vault` (default: the test's vault).
    func cli(_ arguments: [String], vault: URL? = nil) throws -> CLIResult {
        try hreader(withPassword(arguments + (vault.map { ["--vault", $0.path] } ?? [])), env: ["TZ": "UTC"])
    }

    func makeVault(_ name: String) throws -> URL {
        let url = workDir.appendingPathComponent(name)
        try ok(["init", "--vault", url.path, "--new-password-file", passwordFile] + CLITestCase.cheapKDF)
        return url
    }

    /// Every patient's entries, by name, as content (type, description, dates, value, unit,
    /// codes, status, remote id): local ids and uuids differ between vaults.
    func records(in vault: URL?) throws -> [String: [String]] {
        let patients = try json(try cli(["patients", "list", "--json"], vault: vault))["patients"] as? [[String: Any]] ?? []
        var result: [String: [String]] = [:]
        for patient in patients {
            let entries = try json(try cli(["entries", "list", "--patient", "\(patient["id"]!)", "--json"], vault: vault))["entries"]
                as? [[String: Any]] ?? []
            let content = entries.map { entry -> String in
                let kept = entry.filter { ["type", "description", "date", "start", "end", "value", "unit", "codes", "status", "remote_id"].contains($0.key) }
                let data = (try? JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys])) ?? Data()
                return String(decoding: data, as: UTF8.self)
            }
            result["\(patient["first_name"] ?? "") \(patient["last_name"] ?? "") \(patient["birth_date"] ?? "")", default: []] += content
        }
        return result.mapValues { $0.sorted() }
    }

    /// Resources matching `query` on the server, counted page by page (a minimal server gives no total).
    func count(_ server: SampleServer, _ query: String) throws -> Int {
        var path: String? = "/fhir/" + query
        var total = 0
        var pages = 0
        while let next = path, pages < 1000 {
            let bundle = try server.json(next)
            total += (bundle["entry"] as? [[String: Any]] ?? []).filter { ($0["search"] as? [String: Any])?["mode"] as? String != "outcome" }.count
            let link = (bundle["link"] as? [[String: Any]])?.first { $0["relation"] as? String == "next" }?["url"] as? String
            path = link.map { String($0.dropFirst(server.base.absoluteString.count)) }
            pages += 1
        }
        return total
    }
}
