import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderModel

struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find entries and documents by the words in them: descriptions, values, doses, codes, your own comments, and documents' text.",
        discussion: """
            Every word must appear (a word of three letters or more also matches longer words it starts, so
            that 'metf' finds metformin); accents and case do not matter. Best matches first, across the whole
            family unless --patient is given; struck entries are left out. Documents (notes, reports, letters)
            are searched by their title and readable text, unless --type asks for entries of one type.
            Matches are marked ‹so›.
            Example: hreader search metformin --type medication
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The words to look for.") var words: [String]
    @Option(help: "Only this patient (local id or uuid).") var patient: String?
    @Option(help: ArgumentHelp("Only this type: \(EntryType.allCases.map(\.rawValue).joined(separator: ", ")).")) var type: EntryType?
    @Option(help: "At most this many hits (1–1000).") var limit: Int = 50

    /// What was asked, in the form the quick path reads too (QuickCommandLine).
    var request: SearchRequest { SearchRequest(global: global.values, words: words, patient: patient, type: type, limit: limit) }

    func run() throws { try request.run() }
}

/// `search`'s arguments, read by swift-argument-parser (SearchCommand) or by the quick path.
struct SearchRequest: Equatable {
    var global: VaultOptions
    var words: [String]
    var patient: String?
    var type: EntryType?
    var limit = 50

    func run() throws {
        guard (1...1000).contains(limit) else { throw HReaderError.usage("--limit must be between 1 and 1000") }
        let open = try global.open()
        let only = try patient.map { try open.patient($0) }
        let hits = try open.searchRecords(words.joined(separator: " "), patient: only, type: type, limit: limit)
        if global.json {
            Output.json(.object([("hits", .array(hits.map(\.jsonValue)))]))
            return
        }
        if hits.isEmpty { global.note(type == nil ? "No entries or documents match." : "No entries match."); return }
        let names = Dictionary(uniqueKeysWithValues: try open.allPatients().map { ($0.id, "\($0.firstName) \($0.lastName)") })
        Output.table([["ID", "PATIENT", "DATE", "TYPE", "DESCRIPTION", "MATCH"]] + hits.map { found in
            switch found {
            case let .entry(hit):
                return [String(hit.entryID), names[hit.patientID] ?? String(hit.patientID), hit.date ?? "", hit.type.rawValue, hit.description, hit.snippet]
            case let .document(hit):
                return ["doc \(hit.documentID)", names[hit.patientID] ?? String(hit.patientID), hit.date ?? "", "document", hit.title, hit.snippet]
            case let .series(hit):
                return ["series", names[hit.patientID] ?? String(hit.patientID), hit.last?.text ?? "", hit.type.rawValue, hit.description, hit.snippet]
            }
        })
    }
}
