import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel

struct TimelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Print a patient's timeline as JSON (hReader's timeline.json), or post an item to it.",
        discussion: """
            Pages end at --at (default now) and start 1 day, 7 days, 1 month, 1 year or 10 years earlier:
              hreader timeline --patient 1 --page month --at 2012-05-01T00:00:00+02:00 --pretty
              hreader timeline --patient 1 --from 2010-01-01 --to 2012-12-31 --types vitals,results
            """,
        subcommands: [Show.self, Add.self],
        defaultSubcommand: Show.self)

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the timeline JSON (the default).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Option(help: ArgumentHelp("One of \(TimelinePage.names).", valueName: "page")) var page: String?
        @Option(help: ArgumentHelp("Where the page ends (RFC 3339 or a date; default now).", valueName: "time")) var at: TimeArgument?
        @Option(help: ArgumentHelp("Start of an explicit range (with --to).", valueName: "time")) var from: TimeArgument?
        @Option(help: ArgumentHelp("End of an explicit range (with --from).", valueName: "time")) var to: TimeArgument?
        @Option(help: ArgumentHelp("Only these keys, comma-separated (\(TimelineQuery.allKeys.joined(separator: ", "))).", valueName: "keys"))
        var types: String?
        @Flag(help: "Add each item's local entry id, codes and source.") var detail = false
        @Flag(help: "Indent the JSON.") var pretty = false

        /// What was asked, in the form the quick path reads too (QuickCommandLine).
        var request: TimelineRequest {
            TimelineRequest(global: global.values, patient: patient, page: page, at: at?.time, from: from?.time, to: to?.time,
                            types: types, detail: detail, pretty: pretty)
        }

        func validate() throws {
            if let problem = request.problem { throw ValidationError(problem) }
        }

        func run() throws { try request.run() }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Post an item to the timeline: levels, a new medication, or a regimen.",
            discussion: """
                Fields as field=value, or one JSON object on stdin:
                  hreader timeline add --key Levels pain=5 mood=7
                  echo '{"name":"Ibuprofen","dose":"200 mg"}' | hreader timeline add --key NewMedication
                Keys: Levels, NewMedication, MedRegiment. Any other key is stored as levels, as hReader did.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
        @Option(help: "Levels, NewMedication or MedRegiment.") var key: String
        @Option(help: ArgumentHelp("When it happened (default now).", valueName: "time")) var at: TimeArgument?
        @Argument(help: ArgumentHelp("field=value pairs.", valueName: "field=value")) var fields: [String] = []

        func run() throws {
            var data = JSONObject()
            if fields.isEmpty {
                guard !Terminal.stdinIsTerminal else { throw HReaderError.usage("give field=value pairs or a JSON object on stdin") }
                let input = FileHandle.standardInput.readDataToEndOfFile()
                // A timeline item is small: a megabyte and 64 levels are plenty, and bound what stdin can cost.
                guard input.count <= 1 << 20, let object = (try? JSONParser.parse(input, limits: .init(maxDepth: 64, maxBytes: 1 << 20)))?.object else {
                    throw HReaderError.badInput("stdin is not a JSON object (of at most 1 MiB)")
                }
                data = object
            } else {
                for field in fields {
                    let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    guard parts.count == 2, !parts[0].isEmpty else { throw HReaderError.usage("'\(field)' is not field=value") }
                    data[String(parts[0])] = .string(String(parts[1]))
                }
            }
            let postKey = TimelinePostKey(key)
            if case let .other(name) = postKey { global.note("'\(name)' is not Levels, NewMedication or MedRegiment: stored as levels, as hReader did.") }
            let open = try global.open()
            let item = try open.postTimelineItem(patient: try open.patient(patient), key: postKey, data: .object(data), at: at?.time.date ?? Date())
            if global.json {
                print(JSONValue.object([("item", .object([("id", .string(item.uuid)), ("type", .string(item.type)),
                                                          ("time", .int(item.time))]))]).serialized(pretty: true))
            } else {
                global.note("Posted a \(item.type) item at \(RFC3339.utc(item.time)).")
            }
        }
    }
}

/// `timeline show`'s arguments, read by swift-argument-parser (TimelineCommand.Show) or by the quick path.
struct TimelineRequest: Equatable {
    var global: VaultOptions
    var patient: String?
    var page: String?
    var at: ClinicalTime?
    var from: ClinicalTime?
    var to: ClinicalTime?
    var types: String?
    var detail = false
    var pretty = false

    /// Why these arguments do not make a request, as the usage error says it; nil when they do.
    var problem: String? {
        if let page, TimelinePage(rawValue: page) == nil {
            return "unknown page '\(page)'; use one of \(TimelinePage.names)"
        }
        switch (page != nil, from != nil || to != nil) {
        case (true, true): return "give --page or --from/--to, not both"
        case (false, false): return "give --page \(TimelinePage.allCases.map(\.rawValue).joined(separator: "|")) or --from T --to T"
        case (false, true): if from == nil || to == nil { return "--from and --to go together" }
        default: if at != nil && page == nil { return "--at goes with --page" }
        }
        if let from, let to, from.epoch > to.epoch { return "--from is after --to" }
        if let types {
            do { _ = try TimelineQuery.keys(parsing: types) } catch let error as HReaderError { return error.message } catch { return "\(error)" }
        }
        return nil
    }

    func run() throws {
        let range: TimelineRange
        if let page, let p = TimelinePage(rawValue: page) {
            range = TimelineRange.page(p, at: at)
        } else {
            range = TimelineRange.between(from!, to!)
        }
        let open = try global.open()
        let who = try open.patient(patient)
        let query = TimelineQuery(range: range, keys: try types.map(TimelineQuery.keys(parsing:)), detail: detail)
        guard !pretty else {
            print(try open.timeline(patient: who, query: query).serialized(pretty: true))
            return
        }
        // Compact pages are written as they are made (a decade of samples is megabytes), through
        // the same control-character filter as everything printed.
        var out = JSONByteWriter(replacingControls: true) { bytes in FileHandle.standardOutput.write(Data(bytes)) }
        try open.writeTimeline(patient: who, query: query, to: &out)
        FileHandle.standardOutput.write(Data([0x0A]))
    }
}
