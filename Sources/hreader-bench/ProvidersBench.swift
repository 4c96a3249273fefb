import Foundation
import HReaderJSON

/// The provider directory (issue 38, docs/providers.md): a generated User-access Brands bundle of
/// 40,000 brands and 60,000 endpoints (HREADER_BENCH_BRANDS changes the count) read by
/// `hreader providers update --from FILE`, its wall time and peak memory (goal ≤ 64 MiB); then
/// `hreader providers search` end to end, a process per search and no password (goal ≤ 10 ms),
/// against `grep -i -c` over the same bundle file in the same run.
func runProvidersBenchmarks(scratch: URL) throws {
    let brandCount = Int(ProcessInfo.processInfo.environment["HREADER_BENCH_BRANDS"] ?? "") ?? 40_000
    say("\n== Provider directory: \(brandCount) brands, \(brandCount * 3 / 2) endpoints ==")
    let hreader = ProcessInfo.processInfo.environment["HREADER_BENCH_HREADER"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hreader")
    guard FileManager.default.isExecutableFile(atPath: hreader.path) else { say("  (hreader not built beside hreader-bench; skipped)"); return }
    let directory = scratch.appendingPathComponent("providers")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let bundle = directory.appendingPathComponent("brands.json")
    let generated = try seconds { try writeBrandsBundle(to: bundle, brands: brandCount) }
    let bundleBytes = (try FileManager.default.attributesOfItem(atPath: bundle.path)[.size] as? Int) ?? 0
    row("  generated bundle", String(format: "%8.1f MB", Double(bundleBytes) / 1e6), String(format: "in %.1f s", generated))

    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CACHE_HOME"] = directory.appendingPathComponent("cache").path
    environment["HREADER_VAULT"] = directory.appendingPathComponent("no-vault").path
    environment["HREADER_PASSWORD"] = nil
    environment["HREADER_SESSION"] = nil

    var updates: [(seconds: Double, peakKB: Int)] = []
    for _ in 0..<3 {
        let run = try spawnMeasured(hreader, ["providers", "update", "--from", bundle.path, "--vendor", "bench", "--quiet"], environment: environment)
        updates.append((run.seconds, run.peakKB))
    }
    let update = median(updates.map(\.seconds))
    let peak = updates.map(\.peakKB).max() ?? 0
    let directoryBytes = (try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("cache/hreader/providers.directory").path)[.size] as? Int) ?? 0
    row("  providers update --from FILE (med. 3)", ms(update), String(format: "%.1f MB/s of bundle", Double(bundleBytes) / 1e6 / update))
    row("    peak memory (goal <= 64 MiB)", String(format: "%8.1f MiB", Double(peak) / 1024), peak <= 64 * 1024 ? "within the goal" : "OVER the goal")
    row("    directory file", String(format: "%8.1f MB", Double(directoryBytes) / 1e6), String(format: "%.0f%% of the bundle", 100 * Double(directoryBytes) / Double(max(bundleBytes, 1))))

    // grep -i over the same bundle: the baseline a person has without a directory.
    let grep = URL(fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/grep") ? "/usr/bin/grep" : "/bin/grep")
    var grepTimes: [Double] = []
    for _ in 0..<5 { grepTimes.append(try spawnMeasured(grep, ["-i", "-c", "saint mary", bundle.path], environment: environment, memory: false).seconds) }
    let grepTime = median(grepTimes)
    row("  baseline: grep -i -c 'saint mary' (med. 5)", ms(grepTime), "over the bundle file")
    // What any command of this binary costs to start and end (the search's floor).
    var floorTimes: [Double] = []
    for _ in 0..<11 { floorTimes.append(try spawnMeasured(hreader, ["--version"], environment: environment, memory: false).seconds) }
    let floor = median(floorTimes)
    row("  start-up floor: hreader --version (med. 11)", ms(floor))

    for (label, words) in [("words", ["saint", "marys", "madison"]), ("order, St.", ["madison", "st", "mary's"]),
                           ("a typo", ["providnce", "hospital"]), ("--state", ["medical", "--state", "WI"]),
                           ("no hit", ["zzyzx"])] {
        var times: [Double] = []
        for _ in 0..<11 {
            times.append(try spawnMeasured(hreader, ["providers", "search", "--quiet"] + words, environment: environment, memory: false).seconds)
        }
        let time = median(times)
        row("  providers search, \(label) (median of 11)", ms(time),
            String(format: "%.2fx grep, %.1f ms over --version%@", time / grepTime, (time - floor) * 1000,
                   time <= 0.010 ? ", within 10 ms" : ", OVER 10 ms"))
    }
}

/// Writes an IG-shaped brands bundle: `brands` Organizations (the portal extension, aliases for a
/// third, an address, `partOf` for a tenth) and half again as many Endpoints (every brand one,
/// every second brand a DSTU2 one too; one in fifty is off). Deterministic.
func writeBrandsBundle(to url: URL, brands: Int) throws {
    let names = ["Saint Mary's", "Mercy", "Good Samaritan", "Providence", "Baptist", "Methodist", "Presbyterian", "Lakeside", "Riverbend",
                 "Valley", "Northwest", "Sacred Heart", "St. Luke's", "St. Joseph's", "Memorial", "Community", "University", "Children's",
                 "Regional", "County", "Hillcrest", "Cedar", "Summit", "Harbor", "Prairie", "Pine Ridge", "Mountain View", "Bayview"]
    let kinds = ["Hospital", "Medical Center", "Clinic", "Health", "Family Practice", "Health System", "Physicians", "Pediatrics",
                 "Cardiology", "Orthopedics", "Women's Health", "Urgent Care"]
    let cities = ["Madison", "Springfield", "Franklin", "Greenville", "Bristol", "Clinton", "Fairview", "Salem", "Georgetown", "Arlington",
                  "Ashland", "Dover", "Oxford", "Jackson", "Burlington", "Manchester", "Milton", "Newport", "Auburn", "Dayton", "Lexington",
                  "Milford", "Riverside", "Cleveland", "Hudson", "Kingston", "Marion", "Mount Vernon", "Winchester", "Chester"]
    let states = ["AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA",
                  "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD",
                  "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY"]
    guard FileManager.default.createFile(atPath: url.path, contents: nil), let handle = FileHandle(forWritingAtPath: url.path) else {
        throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot write \(url.path)"])
    }
    defer { try? handle.close() }
    var buffer = Array(#"{"resourceType":"Bundle","id":"bench-brands","type":"collection","timestamp":"2026-11-01T00:00:00Z","entry":["#.utf8)
    var first = true
    func entry(_ value: JSONValue) throws {
        if !first { buffer.append(0x2c) }
        first = false
        buffer += Array(value.serialized().utf8)
        buffer.append(0x0a)
        if buffer.count > 1 << 20 {
            try handle.write(contentsOf: buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }
    var seed: UInt64 = 0x9e37_79b9_7f4a_7c15
    func next(_ n: Int) -> Int {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((seed >> 33) % UInt64(n))
    }
    let base = "https://fhir.bench.example.org"
    for i in 0..<brands {
        let city = cities[next(cities.count)]
        let name = "\(names[next(names.count)]) \(kinds[next(kinds.count)])" + (i % 3 == 0 ? " of \(city)" : "")
        var endpoints = ["e\(i)-r4"]
        if i % 2 == 0 { endpoints.append("e\(i)-r2") }
        var resource: JSONObject = [("resourceType", "Organization"), ("id", .string("o\(i)")), ("active", true), ("name", .string(name))]
        if i % 3 == 1 { resource["alias"] = [.string("\(names[next(names.count)]) \(city)")] }
        resource["address"] = [["city": .string(city), "state": .string(states[next(states.count)]), "country": "US"]]
        resource["telecom"] = [["system": "url", "value": .string("https://www.brand\(i).example.org")]]
        var portal: [JSONValue] = [["url": "portalName", "valueString": .string("MyChart \(city)")],
                                   ["url": "portalUrl", "valueUrl": .string("https://mychart.brand\(i).example.org")]]
        portal += endpoints.map { ["url": "portalEndpoint", "valueReference": ["reference": .string("Endpoint/\($0)")]] }
        resource["extension"] = [
            ["url": "http://hl7.org/fhir/StructureDefinition/organization-brand",
             "extension": [["url": "brandLogo", "valueUrl": .string("https://www.brand\(i).example.org/logo.png")]]],
            ["url": "http://hl7.org/fhir/StructureDefinition/organization-portal", "extension": .array(portal)],
        ]
        resource["endpoint"] = .array(endpoints.map { ["reference": .string("Endpoint/\($0)")] })
        if i % 10 == 9 { resource["partOf"] = ["reference": .string("Organization/o\(i - 1)")] }
        try entry(["fullUrl": .string("\(base)/Organization/o\(i)"), "resource": .object(resource)])
        for id in endpoints {
            let r4 = id.hasSuffix("r4")
            try entry(["fullUrl": .string("\(base)/Endpoint/\(id)"), "resource": [
                "resourceType": "Endpoint", "id": .string(id),
                "extension": [["url": "http://hl7.org/fhir/StructureDefinition/endpoint-fhir-version", "valueCode": .string(r4 ? "4.0.1" : "1.0.2")]],
                "status": .string(i % 50 == 7 ? "off" : "active"),
                "connectionType": ["system": "http://terminology.hl7.org/CodeSystem/endpoint-connection-type", "code": "hl7-fhir-rest"],
                "name": .string("\(name) FHIR \(r4 ? "R4" : "DSTU2")"),
                "address": .string("\(base)/\(i)/api/FHIR/\(r4 ? "R4" : "DSTU2")/"),
                "payloadType": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/endpoint-payload-type", "code": "none"]]]],
            ]])
        }
    }
    buffer += Array("]}\n".utf8)
    try handle.write(contentsOf: buffer)
}
