import Foundation
import TestSupport
import XCTest

/// `application/x-www-form-urlencoded` values, as a browser's form sends them.
enum FormEncoding {
    static func encode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

/// A running `hreader serve`, started as a real process by a test.
struct ServedVault {
    let running: CLITestCase.Running
    /// The URL it printed, with the token.
    let url: URL
    var port: Int { url.port! }
    var token: String { URLComponents(url: url, resolvingAgainstBaseURL: false)!.queryItems!.first { $0.name == "token" }!.value! }
    /// What a browser sends as `Host`.
    var authority: String { "127.0.0.1:\(port)" }
    var base: String { "http://\(authority)" }
    /// `/s/<random>`: where the app lives (the printed URL's path).
    var prefix: String { String(url.path.dropLast(url.path.hasSuffix("/") ? 1 : 0)) }
    /// The app's address for a path the test writes from the app's root (`/api/patients`).
    func app(_ path: String) -> String { prefix + path }

    /// One request; a path the test writes from the app's root goes under the prefix, a path that
    /// starts with `//` is sent as it is from the server's root (`//outside` → `/outside`).
    func send(_ method: String, _ path: String, host: String? = nil, headers: [(String, String)] = [], body: Data? = nil) throws -> RawHTTP.Response {
        let target = path.hasPrefix("//") ? String(path.dropFirst()) : (path.hasPrefix(prefix + "/") ? path : app(path))
        return try RawHTTP.send(port: port, method: method, path: target, host: host ?? authority, headers: headers, body: body)
    }

    func send(_ path: String, host: String? = nil, headers: [(String, String)] = []) throws -> RawHTTP.Response {
        try send("GET", path, host: host, headers: headers)
    }

    /// With the token as `Authorization: Bearer`, as a script sends it.
    func bearer(_ method: String, _ path: String, headers: [(String, String)] = [], body: Data? = nil) throws -> RawHTTP.Response {
        try send(method, path, headers: [("Authorization", "Bearer \(token)")] + headers, body: body)
    }

    func bearer(_ path: String) throws -> RawHTTP.Response { try bearer("GET", path) }
}

extension CLITestCase {
    /// Starts `hreader serve` on the vault and waits for the URL line.
    /// With `env`'s `HREADER_SESSION` and `password: false`, it opens the vault with that unlock session.
    func serve(_ extra: [String] = [], env: [String: String] = [:], password: Bool = true,
               file: StaticString = #filePath, line: UInt = #line) throws -> ServedVault {
        let running = try start((password ? withPassword(["serve"]) : ["serve"]) + extra, env: env)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let out = (try? String(contentsOf: running.out, encoding: .utf8)) ?? ""
            if let first = out.split(separator: "\n").first, out.contains("\n"), let url = URL(string: String(first)) {
                return ServedVault(running: running, url: url)
            }
            if !running.process.isRunning {
                let result = running.finish()
                XCTFail("hreader serve stopped: \(result.stderr)", file: file, line: line)
                throw NSError(domain: "serve", code: Int(result.status))
            }
            usleep(20_000)
        }
        kill(running.process.processIdentifier, SIGKILL)
        XCTFail("hreader serve printed no URL within 60 s", file: file, line: line)
        throw NSError(domain: "serve", code: -1)
    }

    /// Ctrl-C, as a user stops it; SIGKILL (and a failure) if it has not stopped within 10 s.
    @discardableResult
    func stop(_ served: ServedVault, file: StaticString = #filePath, line: UInt = #line) -> CLIResult {
        let process = served.running.process
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            XCTFail("hreader serve did not stop on SIGINT within 10 s", file: file, line: line)
        }
        return served.running.finish()
    }

    /// Two patients (Ada, "me"; her son Charles) and, for Ada, blood pressure, heart rate, a condition and a
    /// medication in November 2026, so tests can ask for fixed ranges.
    func seedFamily() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace", "--birth-date", "1985-12-10", "--gender", "female", "--as", "me"]))
        try ok(withPassword(["patients", "add", "--first", "Charles", "--last", "Lovelace", "--birth-date", "2015-06-01", "--gender", "male", "--as", "child"]))
        for (day, systolic, diastolic, pulse) in [(3, 118, 76, 64), (6, 131, 86, 71), (9, 124, 79, 68)] {
            let date = "2026-11-0\(day)T08:30:00Z"
            try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Systolic blood pressure",
                                 "--value", "\(systolic)", "--unit", "mm[Hg]", "--date", date, "--code", "LOINC=8480-6"]))
            try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Diastolic blood pressure",
                                 "--value", "\(diastolic)", "--unit", "mm[Hg]", "--date", date, "--code", "LOINC=8462-4"]))
            try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Heart rate",
                                 "--value", "\(pulse)", "--unit", "/min", "--date", date, "--code", "LOINC=8867-4"]))
        }
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Essential hypertension",
                             "--status", "active", "--date", "2026-11-06"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--description", "Lisinopril 10 mg tablet",
                             "--dose", "10 mg daily", "--date", "2026-11-06"]))
    }

    /// The end of the seeded data's month page: 2026-11-10T00:00:00Z.
    static let seededAt = "1794268800"
}

extension CLITestCase {
    /// A FHIR Bundle for one patient (Grace Hopper) with lab results: total cholesterol three times
    /// (180, then 232 flagged H, then 150; normal range 100–199 mg/dL), HbA1c 6.1 % over its 5.6 %
    /// upper bound with no flag, and a result with a text value (which no chart shows).
    func seedLabResults() throws {
        try initVault()
        func observation(_ id: String, _ loinc: String, _ text: String, _ date: String, _ value: String, extra: String = "") -> String {
            """
            {"resource": {"resourceType": "Observation", "id": "\(id)", "status": "final",
              "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "laboratory"}]}],
              "code": {"coding": [{"system": "http://loinc.org", "code": "\(loinc)"}], "text": "\(text)"},
              "subject": {"reference": "Patient/grace"}, "effectiveDateTime": "\(date)", \(value)\(extra)}}
            """
        }
        func quantity(_ v: Double, _ unit: String) -> String { #""valueQuantity": {"value": \#(v), "unit": "\#(unit)"}"# }
        let cholesterolRange = #", "referenceRange": [{"low": {"value": 100, "unit": "mg/dL"}, "high": {"value": 199, "unit": "mg/dL"}}]"#
        let high = #", "interpretation": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation", "code": "H"}]}]"#
        let bundle = """
            {"resourceType": "Bundle", "type": "collection", "entry": [
              {"resource": {"resourceType": "Patient", "id": "grace", "name": [{"family": "Hopper", "given": ["Grace"]}],
                            "gender": "female", "birthDate": "1966-12-09"}},
              \(observation("chol-1", "2093-3", "Total cholesterol", "2024-01-10T08:00:00Z", quantity(180, "mg/dL"), extra: cholesterolRange)),
              \(observation("chol-2", "2093-3", "Total cholesterol", "2025-01-10T08:00:00Z", quantity(232, "mg/dL"), extra: cholesterolRange + high)),
              \(observation("chol-3", "2093-3", "Total cholesterol", "2026-01-10T08:00:00Z", quantity(150, "mg/dL"), extra: cholesterolRange)),
              \(observation("a1c", "4548-4", "Hemoglobin A1c", "2025-06-01T08:00:00Z", quantity(6.1, "%"),
                            extra: #", "referenceRange": [{"high": {"value": 5.6, "unit": "%"}}]"#)),
              \(observation("culture", "630-4", "Urine culture", "2025-06-01T08:00:00Z", #""valueString": "No growth""#))
            ]}
            """
        try ok(withPassword(["import", "--file", try file("labs.json", bundle)]))
    }

    /// An Apple Health export for patient 1 (created as "me"): oxygen saturation 0.97 then 0.99 (fractions
    /// with unit %), BMI 22.4 as `count`, respiratory rate 15 `count/min`, body fat 0.25 % (a result),
    /// on 2026-03-01 and -02.
    func seedAppleHealthReadings() throws {
        try initVault()
        let records = [
            AppleHealthTests.record("HKQuantityTypeIdentifierOxygenSaturation", "0.97", "%", "2026-03-01 09:20:00 +0000"),
            AppleHealthTests.record("HKQuantityTypeIdentifierOxygenSaturation", "0.99", "%", "2026-03-02 09:20:00 +0000"),
            AppleHealthTests.record("HKQuantityTypeIdentifierBodyMassIndex", "22.4", "count", "2026-03-02 07:00:00 +0000"),
            AppleHealthTests.record("HKQuantityTypeIdentifierRespiratoryRate", "15", "count/min", "2026-03-02 09:30:00 +0000"),
            AppleHealthTests.record("HKQuantityTypeIdentifierBodyFatPercentage", "0.25", "%", "2026-03-02 07:00:00 +0000"),
        ]
        let path = try file("export.xml", AppleHealthTests.export(extraRecords: records))
        try ok(withPassword(["import", "--apple-health", path, "--as", "me"]))
    }
}
