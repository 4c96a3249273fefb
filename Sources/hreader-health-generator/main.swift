// hreader-health-generator: writes a synthetic Apple Health export ("Export All Health Data" in the
// iPhone Health app) in the real format: export.xml with its internal DTD, Records grouped by type,
// blood-pressure Correlations, Workouts with routes, ActivitySummaries, ClinicalRecords with their
// FHIR R4 files. Invented data only, deterministic for a seed, any size, streamed (never held whole).
import Foundation
import HReaderJSON

func fail(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("hreader-health-generator: \(message)\n".utf8))
    exit(code)
}

let options: Options
do {
    guard let parsed = try Options.parse(Array(CommandLine.arguments.dropFirst())) else {
        print(Options.usage)
        exit(0)
    }
    options = parsed
} catch {
    fail("\(error) (see --help)", code: 2)
}

for url in [options.out, options.counts].compactMap({ $0 }) {
    var isDirectory: ObjCBool = false
    let folder = url.deletingLastPathComponent()
    guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
        fail("no such directory: \(folder.path)", code: 2)
    }
}

if options.format == .healthConnect {
    do {
        let samples = try HealthConnectOutput.write(to: options.out, zip: options.output == .zip, records: options.records, days: options.days,
                                                    seed: options.seed)
        if let counts = options.counts {
            let summary = JSONValue.object([("format", .string("health-connect")), ("days", .int(options.days)), ("samples", .int(samples))])
            try Data((summary.serialized(pretty: true) + "\n").utf8).write(to: counts)
        }
        print("wrote \(options.outPath): a Health Connect export of \(options.days) days, \(samples) samples")
    } catch {
        fail("\(error)", code: 2)
    }
    exit(0)
}

if options.format == .fitbit || options.format == .fitbitCSV {
    do {
        let samples = try FitbitOutput.write(to: options.out, zip: options.output == .zip, records: options.records, days: options.days, seed: options.seed,
                                             csv: options.format == .fitbitCSV)
        if let counts = options.counts {
            let summary = JSONValue.object([("format", .string(options.format.rawValue)), ("days", .int(options.days)), ("samples", .int(samples))])
            try Data((summary.serialized(pretty: true) + "\n").utf8).write(to: counts)
        }
        print("wrote \(options.outPath): Fitbit's Takeout of \(options.days) days, \(samples) samples")
    } catch {
        fail("\(error)", code: 2)
    }
    exit(0)
}

if options.format == .fit {
    do {
        let samples = try FITOutput.write(to: options.out, zip: options.output == .zip, records: options.records, days: options.days,
                                          workouts: options.workouts ?? 0, seed: options.seed)
        if let counts = options.counts {
            let summary = JSONValue.object([("format", .string("fit")), ("days", .int(options.days)), ("samples", .int(samples))])
            try Data((summary.serialized(pretty: true) + "\n").utf8).write(to: counts)
        }
        print("wrote \(options.outPath): \(options.days) FIT monitoring files, \(options.workouts ?? 0) activities, \(samples) samples")
    } catch {
        fail("\(error)", code: 2)
    }
    exit(0)
}

var plan = Plan(records: options.records, days: options.days, workouts: options.workouts, clinical: options.clinical)
plan.phoneOverlap = options.phoneOverlap
let writer = ExportWriter(synth: Synth(seed: options.seed, plan: plan), exportName: options.exportName)

do {
    switch options.output {
    case .xml: try writer.writeXML(to: options.out)
    case .zip: try writer.writeZIP(to: options.out)
    }
    if let counts = options.counts {
        try writer.countsJSON().write(to: counts)
    }
} catch {
    let reason = (error as? GeneratorError)?.description ?? "\(error.localizedDescription) (\(error))"
    fail(reason, code: 2)
}

print("wrote \(options.outPath): \(plan.records) records, \(plan.correlations) correlations, "
    + "\(plan.workouts) workouts, \(plan.days) activity summaries, \(plan.clinical) clinical records")
