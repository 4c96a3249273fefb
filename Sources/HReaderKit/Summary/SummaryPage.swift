import Foundation
import HReaderCrypto
import HReaderModel
import HReaderRecords

/// A clinician summary as one printable HTML page: no script, no external asset (its style is
/// inside it), every value from the vault HTML-escaped. It prints on A4 and Letter alike (the page
/// size is the printer's; margins and widths fit both). `hreader serve` serves the same page.
public enum SummaryPage {
    public static func html(_ summary: ClinicalSummary) -> String {
        let p = summary.patient
        let name = p.displayName.isEmpty ? "(no name)" : p.displayName
        let born = p.birthDate.map { "born \($0)" }
        let age = PatientSummary.ageText(birthDate: p.birthDate, at: summary.generated).map { "age \($0)" }
        let meta = [born, age, PatientSummary.genderText(p.gender)].compactMap { $0 }.joined(separator: " · ")
        let generated = RFC3339.utc(Int64(summary.generated.timeIntervalSince1970))
        let sections = SummarySection.allCases.map { section(summary, $0) }.joined(separator: "\n")
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>Patient summary: \(escape(name))</title>
            <style>\(style)</style>
            </head>
            <body>
            <header>
            <p class="kind">Patient summary</p>
            <h1 class="patient-name">\(escape(name))</h1>
            <p class="meta">\(escape(meta))</p>
            <p class="generated">Made by hreader on <time datetime="\(escape(generated))">\(escape(String(generated.prefix(10))))</time> \
            from the patient's own record. Results and vital signs: the latest of each since \(escape(String(summary.since.text.prefix(10)))).</p>
            </header>
            <main>
            \(sections)
            \(sources(summary))
            </main>
            <footer><p>Compiled by the patient with hreader from the sources listed above; not reviewed by a clinician. \
            Check anything that matters with its source.</p></footer>
            </body>
            </html>

            """
    }

    static func section(_ summary: ClinicalSummary, _ section: SummarySection) -> String {
        let rows = summary.rows(section)
        let detail: String
        switch section {
        case .problems: detail = ""
        case .allergies: detail = "Reaction, severity"
        case .medications: detail = "Dose, directions"
        case .immunizations: detail = ""
        case .results, .vitalSigns: detail = "Value"
        }
        let head = "<tr><th scope=\"col\">\(section == .problems ? "Problem" : "What")</th>"
            + (detail.isEmpty ? "" : "<th scope=\"col\">\(detail)</th>") + "<th scope=\"col\" class=\"date\">\(section == .problems ? "Since" : "Date")</th></tr>"
        let body: String
        if rows.isEmpty {
            let none = section.noInformation?.display ?? "None recorded"
            body = "<p class=\"none\">\(escape(none)) in this record.</p>"
        } else {
            let lines = rows.map { row in
                "<tr class=\"row\" data-entry=\"\(escape(row.entry.uuid))\"><td class=\"what\">\(escape(row.text))"
                    + (row.verification.map { " " + $0.badgeHTML } ?? "") + "</td>"
                    + (detail.isEmpty ? "" : "<td class=\"detail\">\(escape(row.detail ?? ""))</td>")
                    + "<td class=\"date\">\(escape(row.date ?? "—"))</td></tr>"
            }
            body = "<table><thead>\(head)</thead><tbody>\(lines.joined())</tbody></table>"
        }
        return "<section class=\"\(section.rawValue)\"><h2>\(escape(section.title))</h2>\(body)</section>"
    }

    static func sources(_ summary: ClinicalSummary) -> String {
        let rows = summary.sources.map { source -> String in
            let kind: String
            switch source.kind {
            case .fhir: kind = "FHIR server"
            case .rhex: kind = "RHEx server"
            case .appleHealth: kind = "Apple Health export"
            case .file: kind = "Files"
            case .manual: kind = "Typed in"
            }
            // Only servers have an address; a file source's key and an export's are not one.
            let place = source.kind == .fhir || source.kind == .rhex ? source.baseURL.flatMap { $0.isEmpty ? nil : $0 } : nil
            return "<tr class=\"source\"><td class=\"what\">\(escape(source.name.isEmpty ? kind : source.name))</td>"
                + "<td class=\"detail\">\(escape(kind))\(place.map { ": <span class=\"address\">\(escape($0))</span>" } ?? "")</td>"
                + "<td class=\"date\">\(escape(source.lastSync.map { String($0.prefix(16)).replacingOccurrences(of: "T", with: " ") } ?? "never synced"))</td></tr>"
        }
        return """
            <section class="sources"><h2>Sources</h2><table><thead><tr><th scope="col">Source</th><th scope="col">Kind</th>\
            <th scope="col" class="date">Last synced (UTC)</th></tr></thead><tbody>\(rows.joined())</tbody></table></section>
            """
    }

    /// Text for HTML (and XHTML): `&`, `<`, `>`, `"` and `'` as entities.
    public static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// The page's only style, inline. A4 is 210 × 297 mm, Letter 216 × 279 mm: the margins below
    /// leave a text block that fits either, and the page size is left to the printer.
    static let style = """
        :root{color-scheme:light}\
        body{font:11pt/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#111;background:#fff;\
        max-width:50rem;margin:1.5rem auto;padding:0 1rem}\
        header{border-bottom:2px solid #111;margin-bottom:1rem}\
        .kind{margin:0;font-size:9pt;letter-spacing:.08em;text-transform:uppercase;color:#444}\
        h1{margin:.1rem 0;font-size:20pt}\
        h2{font-size:12.5pt;margin:1.1rem 0 .3rem;border-bottom:1px solid #999;break-after:avoid;page-break-after:avoid}\
        .meta{margin:.1rem 0;font-size:11pt}\
        .generated,footer{font-size:8.5pt;color:#444}\
        table{width:100%;border-collapse:collapse;font-size:10pt}\
        thead{display:table-header-group}\
        th{text-align:left;font-weight:600;border-bottom:1px solid #666;padding:.15rem .4rem .15rem 0}\
        td{vertical-align:top;border-bottom:1px solid #ddd;padding:.15rem .4rem .15rem 0;overflow-wrap:anywhere}\
        tr{break-inside:avoid;page-break-inside:avoid}\
        .date{white-space:nowrap;width:7.5rem}\
        .none{margin:.2rem 0;font-style:italic;color:#333}\
        .address{font-family:ui-monospace,monospace;font-size:9pt}\
        .badge{display:inline-block;font-size:8.5pt;padding:0 .3rem;border:1px solid #666;border-radius:.2rem;white-space:normal}\
        .badge-verified{border-color:#1a6b2f;color:#1a6b2f;font-weight:600}\
        .badge-untrusted-issuer{border-color:#8a5a00;color:#6b4500}\
        .badge-unverified{border-style:dashed;color:#444}\
        footer{margin-top:1.5rem;border-top:1px solid #999}\
        @page{margin:16mm 14mm}\
        @media print{body{max-width:none;margin:0;padding:0;font-size:10pt}h1{font-size:17pt}section{break-inside:auto}\
        .generated,footer,.kind{color:#000}}
        """

    /// For a Content-Security-Policy that allows this page's style and nothing else: `'sha256-…'`.
    public static var styleHash: String {
        "'sha256-" + Data(SHA256.hash(Array(style.utf8))).base64EncodedString() + "'"
    }
}
