import ArgumentParser
import Foundation
import HReaderKit
import HReaderModel

extension SummaryFormat: ExpressibleByArgument {}

struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "summary",
        abstract: "Show a patient's summary, or write one for a clinician (an IPS FHIR document or a printable page).",
        discussion: """
            --format text (the default) shows who the patient is, active conditions, allergies, and their applets' \
            tiles. Tiles follow hReader's rules (blood pressure 90-120/60-80, adult BMI 18.5-25, oxygen saturation \
            95-100 %, respiratory rate 12-20, total cholesterol by age); [attention] marks a value out of range. \
            A plugin that fails shows its error in its own tile; the summary still completes.

            --format ips writes an International Patient Summary: a FHIR R4 document Bundle with active problems, \
            allergies, current medications, immunizations, and the latest result and vital sign of each kind \
            since --since (default: two years ago). --format html writes the same as one printable page with no \
            external assets. See docs/summary.md.
              hreader summary --patient 1
              hreader summary --json --applets my-applets.plist
              hreader summary --format ips --out ada-ips.json
              hreader summary --format html --out ada.html --since 2020-01-01
            """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var lists: AppletListOptions
    @Option(help: "Local id or uuid (default: the selected patient).") var patient: String?
    @Option(help: "text (applet tiles), ips (an International Patient Summary, FHIR R4 JSON) or html (a printable page).")
    var format: SummaryFormat = .text
    @Option(help: ArgumentHelp("Write to this file (mode 0600, replaced atomically) instead of stdout.", valueName: "file"))
    var out: String?
    @Option(help: ArgumentHelp("ips and html: results and vital signs from this time on (RFC 3339 or a date; default two years ago).",
                               valueName: "time"))
    var since: TimeArgument?

    func validate() throws {
        if global.json && format != .text { throw ValidationError("--json goes with --format text (an IPS summary is JSON already)") }
        if since != nil && format == .text { throw ValidationError("--since goes with --format ips or html") }
    }

    func run() throws {
        let registry = try format == .text ? lists.registry() : nil
        let open = try global.open()
        let chosen = try open.patient(patient)
        let text: String
        switch format {
        case .text:
            let summary = try open.summary(of: chosen, registry: registry!)
            text = global.json ? summary.json.serialized(pretty: true) + "\n" : Self.lines(summary).map { $0 + "\n" }.joined()
            if let out {
                try open.deliverSummary(text, format: format, of: chosen, to: URL(fileURLWithPath: out))
            } else {
                print(text, terminator: "")
                return
            }
        case .ips, .html:
            let summary = try open.clinicalSummary(of: chosen, since: since?.time)
            text = format == .ips ? try summary.ipsJSON() : summary.html
            try open.deliverSummary(text, format: format, of: chosen, to: out.map { URL(fileURLWithPath: $0) })
            guard out != nil else {
                print(text, terminator: "")
                return
            }
        }
        if !global.quiet { print("Wrote the \(format.rawValue) summary of \(chosen.displayName) to \(out!)") }
    }

    /// The terminal summary: the patient, conditions, allergies, one headline per tile.
    static func lines(_ summary: PatientSummary) -> [String] {
        let p = summary.patient
        func badge(_ e: Entry) -> String { summary.verifications[e.id].map { " [\($0.badge)]" } ?? "" }
        var lines = [p.displayName.isEmpty ? "(no name)" : p.displayName]
        lines.append("  " + [summary.age.map { "age \($0)" }, p.birthDate.map { "born \($0)" }, summary.gender, summary.relationship]
            .compactMap { $0 }.joined(separator: " · "))
        /// The newest few, and how many more there are (`entries list` shows them all).
        func more(_ count: Int, _ type: String) -> String {
            count > 0 ? "; and \(count) more (hreader entries list --patient \(p.id) --type \(type))" : ""
        }
        lines.append("Conditions: " + (summary.conditions.isEmpty ? "none" : summary.conditions.map { e in
            e.content.description + ((e.content.start ?? e.content.date).map { " (since \($0.text.prefix(10)))" } ?? "") + badge(e)
        }.joined(separator: "; ") + more(summary.conditionsTotal - summary.conditions.count, "condition")))
        lines.append("Allergies: " + (summary.allergies.isEmpty ? "none" : summary.allergies.map { e in
            let detail = [e.content.reaction, e.content.severity].compactMap { $0 }.joined(separator: ", ")
            return e.content.description + (detail.isEmpty ? "" : " (\(detail))") + badge(e)
        }.joined(separator: "; ") + more(summary.allergiesTotal - summary.allergies.count, "allergy")))
        if !summary.cards.isEmpty {
            // What SMART Health Cards brought, by issuer: "Health cards: 2 entries verified: signed by State IIS".
            lines.append("Health cards: " + summary.cards.map { card in
                "\(card.count) entr\(card.count == 1 ? "y" : "ies") \(card.verification.badge)"
            }.joined(separator: "; "))
        }
        for tile in summary.tiles {
            lines.append("")
            lines.append(headline(tile))
            for line in tile.lines where line != tile.error { lines.append("    " + line) }
        }
        return lines
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
