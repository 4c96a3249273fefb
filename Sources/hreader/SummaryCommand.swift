import ArgumentParser
import Foundation
import HReaderKit
import HReaderStore

struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Show a patient's summary: who they are, active conditions, allergies, and their applets' tiles.",
        discussion: """
            Tiles follow hReader's rules (blood pressure 90-120/60-80, adult BMI 18.5-25, oxygen saturation \
            95-100 %, respiratory rate 12-20, total cholesterol by age); [attention] marks a value out of range. \
            A plugin that fails shows its error in its own tile; the summary still completes.
              hreader summary --patient 1
              hreader summary --json --applets my-applets.plist
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var lists: AppletListOptions
    @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?

    func run() throws {
        let registry = try lists.registry()
        let open = try global.open()
        let summary = try open.summary(of: try open.patient(patient), registry: registry)
        if global.json {
            print(summary.json.serialized(pretty: true))
            return
        }
        let p = summary.patient
        Output.line(p.displayName.isEmpty ? "(no name)" : p.displayName)
        Output.line("  " + [summary.age.map { "age \($0)" }, p.birthDate.map { "born \($0)" }, summary.gender, summary.relationship]
            .compactMap { $0 }.joined(separator: " · "))
        Output.line("Conditions: " + (summary.conditions.isEmpty ? "none" : summary.conditions.map { e in
            e.content.description + ((e.content.start ?? e.content.date).map { " (since \($0.text.prefix(10)))" } ?? "")
        }.joined(separator: "; ")))
        Output.line("Allergies: " + (summary.allergies.isEmpty ? "none" : summary.allergies.map { e in
            let detail = [e.content.reaction, e.content.severity].compactMap { $0 }.joined(separator: ", ")
            return e.content.description + (detail.isEmpty ? "" : " (\(detail))")
        }.joined(separator: "; ")))
        for tile in summary.tiles {
            Output.line()
            Output.line(Self.headline(tile))
            for line in tile.lines where line != tile.error { Output.line("    " + line) }
        }
    }

    /// "Blood Pressure: 132/85 mm[Hg]  [attention]  2024-05-01", or "Plugin: error: …".
    static func headline(_ tile: Tile) -> String {
        if let error = tile.error { return "\(tile.title): [error] \(error)" }
        var text = tile.title + ":"
        if let value = tile.value { text += " " + value + (tile.unit.map { " \($0)" } ?? "") + " " }
        text += " [\(tile.status.rawValue)]"
        if let updated = tile.updated { text += "  " + String(updated.prefix(10)) }
        return text
    }
}
