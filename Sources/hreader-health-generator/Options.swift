import Foundation

/// The command line, parsed by hand (this tool has no dependency but ZIPFoundation).
struct Options {
    enum Output { case zip, xml }
    enum Format: String { case appleHealth = "apple-health", fit, healthConnect = "health-connect", fitbit, fitbitCSV = "fitbit-csv" }

    var out: URL
    /// As given on the command line, for the closing message.
    var outPath = ""
    var output: Output
    var format = Format.appleHealth
    var records = 1000
    var days = 365
    var seed: UInt64 = 1
    var clinical = 5
    /// Percent of the iPhone's step and distance samples that also count the walk of the slot before.
    var phoneOverlap = 0
    var workouts: Int?
    var exportName = "export.xml"
    var counts: URL?

    static let usage = """
        usage: hreader-health-generator --out PATH (.zip or .xml)
                   [--records N]        top-level <Record> elements to write (default 1000)
                   [--days D]           spread over the last D days before the export date (default 365)
                   [--seed S]           default 1
                   [--clinical N]       number of ClinicalRecords (default 5)
                   [--workouts N]       default: about one per 3 days, at least 1
                   [--export-name NAME] the XML member's name inside the zip (default export.xml)
                   [--counts FILE]      also write a JSON summary of what was written
                   [--phone-overlap P]  percent of the iPhone's step and distance samples that also
                                        cover the slot before theirs (a walk the watch counted too;
                                        default 0: the two sources never overlap)
                   [--format F]         apple-health (default), or fit: a Garmin watch's daily FIT
                                        monitoring files, into a folder (--out DIR) or Garmin's export zip;
                                        or health-connect: an Android Health Connect export (--out F.zip or F.db);
                                        or fitbit: Fitbit's Google Takeout (--out DIR or F.zip);
                                        or fitbit-csv: the same with its newer CSV files (Physical
                                        Activity_GoogleData), whose JSON twins hreader passes over

        Writes a synthetic Apple Health export ("Export All Health Data") with invented data,
        deterministic for a seed. A .zip gets the real layout (apple_health_export/...); for a
        .xml the clinical-records and workout-routes folders are written beside it.
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    /// Returns nil for --help.
    static func parse(_ arguments: [String]) throws -> Options? {
        var values: [String: String] = [:]
        let known: Set<String> = ["--out", "--records", "--days", "--seed", "--clinical", "--workouts", "--export-name", "--counts", "--format", "--phone-overlap"]
        var index = 0
        while index < arguments.count {
            var name = arguments[index]
            var value: String?
            if name == "--help" || name == "-h" { return nil }
            if let equals = name.firstIndex(of: "="), name.hasPrefix("--") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard known.contains(name) else {
                throw UsageError(description: "unknown argument '\(arguments[index])'")
            }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw UsageError(description: "\(name) needs a value") }
                value = arguments[index]
            }
            guard values[name] == nil else { throw UsageError(description: "\(name) given twice") }
            values[name] = value
            index += 1
        }

        guard let outPath = values["--out"], !outPath.isEmpty else { throw UsageError(description: "--out PATH is required") }
        let lower = outPath.lowercased()
        let output: Output
        let format = try values["--format"].map {
            guard let format = Format(rawValue: $0) else { throw UsageError(description: "--format is apple-health, fit, health-connect, fitbit or fitbit-csv: '\($0)'") }
            return format
        } ?? .appleHealth
        if format == .healthConnect {
            guard lower.hasSuffix(".zip") || lower.hasSuffix(".db") else { throw UsageError(description: "with --format health-connect, --out ends in .zip or .db") }
            output = lower.hasSuffix(".zip") ? .zip : .xml   // .xml: the database alone
        } else if format == .fit || format == .fitbit || format == .fitbitCSV {
            output = lower.hasSuffix(".zip") ? .zip : .xml   // .xml: a folder of FIT files
        } else if lower.hasSuffix(".zip") {
            output = .zip
        } else if lower.hasSuffix(".xml") {
            output = .xml
        } else {
            throw UsageError(description: "--out must end in .zip or .xml: '\(outPath)'")
        }
        var options = Options(out: URL(fileURLWithPath: outPath), output: output)
        options.format = format
        options.outPath = outPath

        func integer(_ name: String, minimum: Int, maximum: Int = 1_000_000_000) throws -> Int? {
            guard let text = values[name] else { return nil }
            guard let number = Int(text), number >= minimum, number <= maximum else {
                throw UsageError(description: "\(name) must be an integer from \(minimum) to \(maximum): '\(text)'")
            }
            return number
        }
        if let number = try integer("--records", minimum: 0) { options.records = number }
        if let number = try integer("--days", minimum: 1, maximum: 36_500) { options.days = number }
        if let number = try integer("--clinical", minimum: 0, maximum: 10_000_000) { options.clinical = number }
        if let number = try integer("--phone-overlap", minimum: 0, maximum: 100) { options.phoneOverlap = number }
        // Workouts are spaced so that no two start in the same local minute (route file names).
        if let number = try integer("--workouts", minimum: 0, maximum: 100 * options.days) { options.workouts = number }
        if let text = values["--seed"] {
            if let number = UInt64(text) {
                options.seed = number
            } else if let number = Int64(text) {
                options.seed = UInt64(bitPattern: number)
            } else {
                throw UsageError(description: "--seed must be an integer: '\(text)'")
            }
        }
        if let name = values["--export-name"] {
            guard !name.isEmpty, !name.contains("/"), !name.contains("\\"), name != ".", name != ".." else {
                throw UsageError(description: "--export-name must be a plain file name: '\(name)'")
            }
            options.exportName = name
        }
        if let path = values["--counts"] {
            guard !path.isEmpty else { throw UsageError(description: "--counts needs a path") }
            options.counts = URL(fileURLWithPath: path)
        }
        return options
    }
}
