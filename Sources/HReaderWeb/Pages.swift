import Foundation
import HReaderKit
import HReaderModel
import HReaderStore
import HTTPTypes

/// The server-rendered pages. Every value from the vault goes through `escape`; the pages load only
/// `<base>/static/…` from our own origin (no CDN, no web fonts), and their script builds the timeline with DOM
/// calls and `textContent`, never from HTML strings.
/// What a page needs of the visit: the session's CSRF token and the path every link starts with.
struct Visit {
    var csrf: String?
    /// `/s/<random>`: the app lives under an unguessable prefix, so the session cookie (whose `Path` it
    /// is) is not sent to other servers on 127.0.0.1 (cookies ignore ports).
    var base: String
}

enum Pages {
    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// `assets: false` for error pages: a 401 must not make the browser ask for more (and be refused again).
    /// `patient`: the page is one patient's, and its search box searches that patient's records.
    static func layout(title: String, visit: Visit, body: String, assets: Bool = true, patient: Patient? = nil) -> String {
        let base = escape(visit.base)
        // A plain GET form, so it works without the script; not on error pages (which know no base).
        let search = assets && !visit.base.isEmpty ? """
            <form class="search-box" role="search" method="get" action="\(base)/search">\
            <input type="search" name="q" maxlength="200" placeholder="\(patient.map { "Search \(escape($0.firstName.isEmpty ? name($0) : $0.firstName))’s records" } ?? "Search the records")" \
            aria-label="Search the records">\
            \(patient.map { "<input type=\"hidden\" name=\"patient\" value=\"\(escape($0.uuid))\">" } ?? "")\
            <button type="submit">Search</button></form>
            """ : ""
        let head = assets ? """
            <link rel="icon" href="\(base)/static/icon.svg" type="image/svg+xml">
            <link rel="stylesheet" href="\(base)/static/app.css">
            <script src="\(base)/static/app.js" defer></script>
            """ : "<link rel=\"icon\" href=\"data:,\">"
        return """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="csrf-token" content="\(escape(visit.csrf ?? ""))">
        <meta name="app-base" content="\(base)">
        <title>\(escape(title)) · hreader</title>
        \(head)
        </head>
        <body>
        <header class="bar"><a class="brand" href="\(base)/">hreader</a><nav><a href="\(base)/">Patients</a> <a href="\(base)/providers">Add a provider</a></nav>\
        \(search)<span class="local">Local view: nothing leaves this machine</span></header>
        <main>
        \(body)
        </main>
        </body>
        </html>
        """
    }

    // MARK: Patients

    static func patients(_ patients: [Patient], visit: Visit) -> String {
        let base = escape(visit.base)
        guard !patients.isEmpty else {
            return layout(title: "Patients", visit: visit, body: """
                <h1>Patients</h1>
                <p class="empty">No patients yet. Add one with <code>hreader patients add</code> or import a record \
                with <code>hreader import</code>.</p>
                """)
        }
        let items = patients.map { p -> String in
            let meta = [PatientSummary.ageText(birthDate: p.birthDate), PatientSummary.genderText(p.gender),
                        p.birthDate.map { "born \($0)" }].compactMap { $0 }.joined(separator: " · ")
            let relationship = PatientSummary.relationshipText(p.relationship, gender: p.gender)
            return """
                <li class="patient" data-uuid="\(escape(p.uuid))">\
                <a class="patient-link" href="\(base)/patients/\(escape(p.uuid))"><span class="name">\(escape(name(p)))</span></a> \
                <span class="relationship">\(escape(relationship))</span>\
                <span class="meta">\(escape(meta))</span>\
                <a class="timeline-link" href="\(base)/patients/\(escape(p.uuid))/timeline">Timeline</a></li>
                """
        }
        return layout(title: "Patients", visit: visit, body: """
            <h1>Patients</h1>
            <ol class="patients">
            \(items.joined(separator: "\n"))
            </ol>
            """)
    }

    static func name(_ p: Patient) -> String { p.displayName.isEmpty ? "(no name)" : p.displayName }

    // MARK: Summary

    static func summary(_ s: PatientSummary, visit: Visit) -> String {
        let p = s.patient
        let base = escape(visit.base)
        let meta = [s.age.map { "age \($0)" }, p.birthDate.map { "born \($0)" }, s.gender, s.relationship]
            .compactMap { $0 }.joined(separator: " · ")
        func badge(_ e: Entry) -> String { s.verifications[e.id].map { " " + $0.badgeHTML } ?? "" }
        let conditions = s.conditions.map { e in
            "<li>\(escape(e.content.description))\((e.content.start ?? e.content.date).map { " <span class=\"since\">since \(escape(String($0.text.prefix(10))))</span>" } ?? "")\(badge(e))</li>"
        }
        let allergies = s.allergies.map { e in
            let detail = [e.content.reaction, e.content.severity].compactMap { $0 }.joined(separator: ", ")
            return "<li>\(escape(e.content.description))\(detail.isEmpty ? "" : " <span class=\"detail\">(\(escape(detail)))</span>")\(badge(e))</li>"
        }
        // What SMART Health Cards brought, by issuer and check (their immunizations and results are on the timeline).
        let cards = s.cards.isEmpty ? "" : "<section class=\"health-cards\"><h2>From SMART Health Cards</h2><ul>" + s.cards.map { card in
            "<li>\(card.count) entr\(card.count == 1 ? "y" : "ies") \(card.verification.badgeHTML)</li>"
        }.joined() + "</ul></section>"
        return layout(title: name(p), visit: visit, body: """
            <section class="person" data-uuid="\(escape(p.uuid))">
            <h1>\(escape(name(p)))</h1>
            <p class="meta">\(escape(meta))</p>
            <p><a class="button timeline-link" href="\(base)/patients/\(escape(p.uuid))/timeline">Open the timeline</a> \
            <a class="button trends-link" href="\(base)/patients/\(escape(p.uuid))/trends">Lab trends</a> \
            <a class="button documents-link" href="\(base)/patients/\(escape(p.uuid))/documents">Documents</a> \
            <a class="button summary-link" href="\(base)/patients/\(escape(p.uuid))/summary.html">Printable summary for a clinician</a> \
            <a class="button share-link" href="\(base)/patients/\(escape(p.uuid))/share">Share</a></p>
            </section>
            <div class="columns">
            <section class="conditions"><h2>Active conditions</h2>\(list(conditions))\(more(s.conditionsTotal - s.conditions.count, "condition", p))</section>
            <section class="allergies"><h2>Allergies</h2>\(list(allergies))\(more(s.allergiesTotal - s.allergies.count, "allergy", p))</section>
            </div>
            \(cards)
            <h2>Applets</h2>
            <section class="tiles">
            \(s.tiles.map(tile).joined(separator: "\n"))
            </section>
            """, patient: p)
    }

    /// "and 1,380 more": the summary lists the newest few; the rest are in the command line's list.
    static func more(_ count: Int, _ type: String, _ p: Patient) -> String {
        guard count > 0 else { return "" }
        return "<p class=\"more\">and \(count) more (<code>hreader entries list --patient \(p.id) --type \(type)</code>)</p>"
    }

    static func list(_ items: [String]) -> String {
        items.isEmpty ? "<p class=\"empty\">None recorded.</p>" : "<ul>\(items.joined())</ul>"
    }

    static func tile(_ t: Tile) -> String {
        let status = t.error == nil ? t.status.rawValue : "error"
        let value = t.value.map { "<p class=\"value\">\(escape($0))\(t.unit.map { " <span class=\"unit\">\(escape($0))</span>" } ?? "")</p>" } ?? ""
        let lines = t.lines.map { "<li>\(escape($0))</li>" }.joined()
        return """
            <article class="tile status-\(status)" data-identifier="\(escape(t.identifier))">\
            <h3>\(escape(t.title))</h3>\(value)\
            <p class="status">\(escape(status))</p>\
            \(lines.isEmpty ? "" : "<ul class=\"lines\">\(lines)</ul>")\
            \(t.updated.map { "<p class=\"updated\">\(escape(String($0.prefix(10))))</p>" } ?? "")</article>
            """
    }

    // MARK: Timeline

    /// The page's frame; `app.js` fills it from `GET /timeline.json` and `GET /api/patients/…/vitals`.
    static func timeline(_ p: Patient, page: TimelinePage, at: String?, latest: Int64?, visit: Visit) -> String {
        let uuid = escape(p.uuid)
        let base = escape(visit.base)
        let scopes = TimelinePage.allCases.map { scope in
            "<a class=\"scope\(scope == page ? " active" : "")\" data-scope=\"\(scope.rawValue)\" href=\"?page=\(scope.rawValue)\">\(scope.rawValue.capitalized)</a>"
        }.joined()
        let returnTo = escape("\(visit.base)/patients/\(p.uuid)/timeline?page=\(page.rawValue)")
        func hidden() -> String {
            "<input type=\"hidden\" name=\"csrf_token\" value=\"\(escape(visit.csrf ?? ""))\"><input type=\"hidden\" name=\"return_to\" value=\"\(returnTo)\">"
        }
        func level(_ name: String, _ label: String) -> String {
            "<label>\(label) <input type=\"range\" name=\"\(name)\" min=\"0\" max=\"10\" step=\"1\" value=\"5\"> <output>5</output></label>"
        }
        return layout(title: "\(name(p)): timeline", visit: visit, body: """
            <section id="timeline" data-patient="\(uuid)" data-page="\(page.rawValue)" data-at="\(escape(at ?? ""))" \
            data-latest="\(latest.map(String.init) ?? "")">
            <h1><a href="\(base)/patients/\(uuid)">\(escape(name(p)))</a>: timeline</h1>
            <p><a class="trends-link" href="\(base)/patients/\(uuid)/trends">Lab trends</a></p>
            <nav class="scopes">\(scopes)</nav>
            <div class="range"><button type="button" id="earlier">&#9664; Earlier</button>\
            <span id="range-label"></span><button type="button" id="later">Later &#9654;</button>\
            <button type="button" id="latest" hidden>Go to the latest record</button></div>
            <p id="status" role="status">Loading the timeline…</p>
            <noscript><p>The timeline is drawn by this page's script; the same data is at \
            <a href="\(base)/timeline.json?patient=\(uuid)&amp;page=\(page.rawValue)">timeline.json</a>.</p></noscript>
            <section id="charts" aria-label="Vital signs"></section>
            <section id="posted" aria-label="What you posted"></section>
            <section id="entries" aria-label="Records"></section>
            </section>
            <section class="forms">
            <form class="post-form" id="levels-form" method="post" action="\(base)/timeline.json?key=Levels&amp;patient=\(uuid)">
            <h2>How are you today?</h2>\(hidden())
            \(level("pain", "Pain")) \(level("mood", "Mood")) \(level("energy", "Energy"))
            <button type="submit">Save levels</button></form>
            <form class="post-form" id="medication-form" method="post" action="\(base)/timeline.json?key=NewMedication&amp;patient=\(uuid)">
            <h2>New medication</h2>\(hidden())
            <label>Name <input name="name" required maxlength="200"></label>
            <label>Dose <input name="dose" maxlength="100" placeholder="200 mg"></label>
            <label>Directions <input name="directions" maxlength="200" placeholder="twice a day with food"></label>
            <button type="submit">Add medication</button></form>
            <form class="post-form" id="regimen-form" method="post" action="\(base)/timeline.json?key=MedRegiment&amp;patient=\(uuid)">
            <h2>Regimen</h2>\(hidden())
            <label>Medication <input name="medication" required maxlength="200"></label>
            <label>Dose <input name="dose" maxlength="100"></label>
            <label>When <input name="schedule" maxlength="200" placeholder="08:00, 20:00"></label>
            <button type="submit">Save regimen</button></form>
            </section>
            """, patient: p)
    }

    // MARK: Lab trends

    /// The page's frame; `app.js` draws one chart per result code from `GET /api/patients/P/trends`.
    /// `code`: one code's trend (with a table of its readings); nil: every code's. `form`: the range as asked.
    static func trends(_ p: Patient, code: String?, range: TimelineRange?, form: [String: String], visit: Visit) -> String {
        let uuid = escape(p.uuid)
        let base = escape(visit.base)
        var api = "\(visit.base)/api/patients/\(p.uuid)/trends"
        var parameters: [String] = []
        if let code { parameters.append("code=" + FormBody.encode(code)) }
        if let range { parameters += ["from=\(range.start)", "to=\(range.end)"] }
        if !parameters.isEmpty { api += "?" + parameters.joined(separator: "&") }
        func scope(_ label: String, _ page: String?) -> String {
            var query = code.map { ["code=" + FormBody.encode($0)] } ?? []
            if let page { query.append("page=\(page)") }
            let active = page == form["page"] && (page != nil || range == nil)
            return "<a class=\"scope\(active ? " active" : "")\" href=\"?\(escape(query.joined(separator: "&")))\">\(label)</a>"
        }
        let dates = ["from", "to"].map { name in
            let value = form[name].flatMap { ClinicalTime.parse($0) }.map { String($0.text.prefix(10)) } ?? ""
            return "<label>\(name == "from" ? "From" : "To") <input type=\"date\" name=\"\(name)\" value=\"\(escape(value))\"></label>"
        }.joined(separator: " ")
        let title = code == nil ? "lab trends" : "lab trend"
        return layout(title: "\(name(p)): \(title)", visit: visit, body: """
            <section id="trends" data-patient="\(uuid)" data-code="\(escape(code ?? ""))" data-api="\(escape(api))" \
            data-timeline="\(base)/patients/\(uuid)/timeline">
            <h1><a href="\(base)/patients/\(uuid)">\(escape(name(p)))</a>: \(title)</h1>
            \(code == nil ? "" : "<p><a class=\"all-trends\" href=\"\(base)/patients/\(uuid)/trends\">Every result’s trend</a></p>")
            <nav class="scopes">\(scope("All", nil))\(scope("Decade", "decade"))\(scope("Year", "year"))\(scope("Month", "month"))</nav>
            <form class="range-form" method="get" action="\(base)/patients/\(uuid)/trends">\
            \(code.map { "<input type=\"hidden\" name=\"code\" value=\"\(escape($0))\">" } ?? "")\(dates) \
            <button type="submit">Show</button></form>
            <p id="status" role="status">Loading the results…</p>
            <noscript><p>The charts are drawn by this page's script; the same data is at \
            <a href="\(escape(api))">the trends API</a>.</p></noscript>
            <section id="trend-charts" aria-label="Lab trends"></section>
            </section>
            """, patient: p)
    }

    // MARK: Search

    /// The search form (the family or one patient, any type or one) and the hits, best first. A
    /// snippet is the record's own text: escaped, with only its match markers turned into `<mark>`.
    static func search(_ text: String, patient: Patient?, type: EntryType?, patients: [Patient], hits: [RecordSearchHit],
                       problem: String?, visit: Visit) -> String {
        let base = escape(visit.base)
        let people = "<option value=\"\">Everyone</option>" + patients.map { p in
            "<option value=\"\(escape(p.uuid))\"\(p.id == patient?.id ? " selected" : "")>\(escape(name(p)))</option>"
        }.joined()
        let types = "<option value=\"\">Any kind</option>" + EntryType.allCases.map { t in
            "<option value=\"\(t.rawValue)\"\(t == type ? " selected" : "")>\(escape(typeName(t)))</option>"
        }.joined()
        let byID = Dictionary(patients.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let items = hits.map { found -> String in
            if case let .series(hit) = found {
                let owner = byID[hit.patientID]
                let uuid = escape(owner?.uuid ?? String(hit.patientID))
                // A lab's series has its trend; a vital sign's chart is the timeline's, the year up to its latest reading.
                let link = hit.type == .result
                    ? "\(base)/patients/\(uuid)/trends?code=\(escape(ResultTrend.key(codes: hit.codes, description: hit.description).key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))"
                    : "\(base)/patients/\(uuid)/timeline?page=year" + (hit.last.map { "&amp;at=\($0.epoch + 86_400)" } ?? "")
                return """
                    <li class="hit series-hit"><a class="hit-title" href="\(link)">\(escape(hit.description))</a> \
                    <span class="hit-meta">\(escape([owner.map(name), "Measurements", typeName(hit.type)].compactMap { $0 }.joined(separator: " · ")))</span>\
                    <p class="snippet">\(escape(hit.snippet))</p></li>
                    """
            }
            guard case let .entry(hit) = found else {
                guard case let .document(hit) = found else { return "" }
                let owner = byID[hit.patientID]
                return """
                    <li class="hit document-hit" data-document="\(hit.documentID)"><a class="hit-title" href="\(base)/documents/\(hit.documentID)">\(escape(hit.title))</a> \
                    <span class="hit-meta">\(escape([owner.map(name), "Document", hit.date.map { String($0.prefix(10)) }].compactMap { $0 }.joined(separator: " · ")))</span>\
                    <p class="snippet">\(highlighted(hit.snippet))</p></li>
                    """
            }
            let owner = byID[hit.patientID]
            let uuid = escape(owner?.uuid ?? String(hit.patientID))
            let time = hit.date.flatMap { ClinicalTime.parse($0) }
            // The timeline's month ending the day after the entry, so the entry is in it.
            let timeline = "\(base)/patients/\(uuid)/timeline?page=month" + (time.map { "&amp;at=\($0.epoch + 86_400)" } ?? "")
            let trend = hit.type == .result
                ? " <a class=\"trend-link\" href=\"\(base)/patients/\(uuid)/trends?entry=\(hit.entryID)\">trend</a>" : ""
            return """
                <li class="hit" data-entry="\(hit.entryID)"><a class="hit-title" href="\(timeline)">\(escape(hit.description))</a>\(trend) \
                <span class="hit-meta">\(escape([owner.map(name), typeName(hit.type), hit.date.map { String($0.prefix(10)) }].compactMap { $0 }.joined(separator: " · ")))</span>\
                <p class="snippet">\(highlighted(hit.snippet))</p></li>
                """
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let outcome: String
        if let problem { outcome = "<p class=\"error\">\(escape(problem))</p>" }
        else if trimmed.isEmpty { outcome = "<p class=\"empty\">Type a word to look for: a medication, a test, a word from your notes.</p>" }
        else if hits.isEmpty { outcome = "<p class=\"empty\" id=\"no-hits\">Nothing matches “\(escape(trimmed))”.</p>" }
        else { outcome = "<p class=\"meta\">\(hits.count) match\(hits.count == 1 ? "" : "es"), best first</p><ol class=\"hits\">\(items.joined(separator: "\n"))</ol>" }
        return layout(title: trimmed.isEmpty ? "Search" : "Search: \(trimmed)", visit: visit, body: """
            <h1>Search</h1>
            <form class="search-form" method="get" action="\(base)/search">
            <label>Words <input type="search" name="q" value="\(escape(text))" maxlength="200" autofocus></label>
            <label>Whose <select name="patient">\(people)</select></label>
            <label>Kind <select name="type">\(types)</select></label>
            <button type="submit">Search</button></form>
            <section id="search-results">\(outcome)</section>
            """, patient: patient)
    }

    // MARK: Documents

    static func documents(_ p: Patient, documents: [StoredDocument], visit: Visit) -> String {
        let base = escape(visit.base)
        let rows = documents.map { d -> String in
            let state = d.state == .fetched ? escape(d.origin == nil ? "added by you" : "from \(d.origin!)")
                : "<span class=\"detail\">\(escape(d.state == .failed ? "not fetched yet" : "kept as a reference")): \(escape(d.reason ?? ""))</span>"
            return """
                <tr data-document="\(d.id)"><td>\(escape(d.date.map { String($0.text.prefix(10)) } ?? ""))</td>\
                <td><a href="\(base)/documents/\(d.id)">\(escape(d.title.isEmpty ? "(untitled)" : d.title))</a></td>\
                <td>\(escape(d.contentType ?? ""))</td><td>\(escape(d.size.map(size) ?? ""))</td><td>\(state)</td></tr>
                """
        }
        let table = documents.isEmpty ? "<p class=\"empty\">No documents yet: imports keep notes and reports, and <code>hreader documents add</code> keeps your own.</p>"
            : "<table class=\"documents\"><thead><tr><th>Date</th><th>Title</th><th>Type</th><th>Size</th><th>From</th></tr></thead><tbody>\(rows.joined(separator: "\n"))</tbody></table>"
        return layout(title: "Documents · \(name(p))", visit: visit, body: """
            <h1>Documents of \(escape(name(p)))</h1>
            <p><a href="\(base)/patients/\(escape(p.uuid))">Back to \(escape(name(p)))</a></p>
            \(table)
            """, patient: p)
    }

    /// One document: what it is, and its readable text as text (escaped; never the document's own
    /// HTML). The bytes open from a link, served under a CSP sandbox.
    static func document(_ d: StoredDocument, text: String?, patient p: Patient, visit: Visit, pageNumber: Int = 1) -> String {
        let base = escape(visit.base)
        let facts = [("Date", d.date?.text), ("Type", d.contentType), ("Size", d.size.map(size)), ("From", d.origin ?? "added by you"),
                     ("State", d.state == .fetched ? nil : "\(d.state.rawValue): \(d.reason ?? "")"), ("SHA-256", d.sha256),
                     ("Text", d.textSummary.isEmpty ? nil : d.textSummary)]
            .compactMap { label, value in value.map { "<dt>\(escape(label))</dt><dd>\(escape($0))</dd>" } }.joined()
        let file = d.state == .fetched ? "<p><a class=\"button file-link\" href=\"\(base)/documents/\(d.id)/file\">Open the file</a></p>" : ""
        // A photo or a scanned page beside what OCR read of it (the image is the vault's bytes, served
        // by the file route under its sandbox; an <img> runs nothing).
        let isImage = d.state == .fetched && DocumentDelivery(d).contentType.hasPrefix("image/")
        var page = isImage ? "<img class=\"document-page\" src=\"\(base)/documents/\(d.id)/file\" alt=\"The document\">" : ""
        // A PDF's page drawn as an image (by the sandboxed pdftoppm, route /documents/ID/pages/N), with
        // the next and the one before.
        if d.state == .fetched, DocumentDelivery(d).contentType == "application/pdf" {
            let n = max(1, pageNumber)
            let before = n > 1 ? "<a href=\"\(base)/documents/\(d.id)?page=\(n - 1)\">Page \(n - 1)</a> · " : ""
            page = """
                <figure class="document-preview"><img class="document-page" src="\(base)/documents/\(d.id)/pages/\(n)" alt="Page \(n) of the PDF \
                (if it does not show, the PDF has no page \(n), or it could not be drawn)">
                <figcaption>Page \(n) · \(before)<a href="\(base)/documents/\(d.id)?page=\(n + 1)">Page \(n + 1)</a></figcaption></figure>
                """
        }
        let body = page + (text.map { "<pre class=\"document-text\">\(escape($0))</pre>" }
            ?? "<p class=\"empty\">No readable text\(d.textMethod == DocumentTextMethod.none ? ": " + escape(d.textSummary) : " (a PDF or an image shows in its file)").</p>")
        return layout(title: d.title.isEmpty ? "Document" : d.title, visit: visit, body: """
            <h1>\(escape(d.title.isEmpty ? "(untitled)" : d.title))</h1>
            <p><a href="\(base)/patients/\(escape(p.uuid))/documents">Documents of \(escape(name(p)))</a></p>
            <dl class="document-facts">\(facts)</dl>
            \(file)
            \(body)
            """, patient: p)
    }

    static func size(_ bytes: Int64) -> String {
        bytes >= 1 << 20 ? String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
            : bytes >= 1 << 10 ? String(format: "%.1f KiB", Double(bytes) / Double(1 << 10)) : "\(bytes) B"
    }

    /// A snippet from the index, its matches between `SearchQuery.markStart` and `markEnd`, as HTML:
    /// the text escaped piece by piece, the markers (and nothing else) turned into `<mark>`, always closed.
    static func highlighted(_ snippet: String) -> String {
        var out = "", piece = "", open = false
        for character in snippet {
            let marker = String(character)
            if marker == SearchQuery.markStart && !open {
                out += escape(piece) + "<mark>"; piece = ""; open = true
            } else if marker == SearchQuery.markEnd && open {
                out += escape(piece) + "</mark>"; piece = ""; open = false
            } else {
                piece.append(character)
            }
        }
        return out + escape(piece) + (open ? "</mark>" : "")
    }

    static func typeName(_ type: EntryType) -> String {
        switch type {
        case .vitalSign: "Vital sign"
        default: type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst()
        }
    }

    // MARK: Errors

    static func errorPage(status: HTTPResponse.Status, message: String) -> String {
        // No CSRF token, no script: an error page needs neither, and a 401 must not hint at anything.
        layout(title: "\(status.code) \(status.reasonPhrase)", visit: Visit(csrf: nil, base: ""), body: """
            <h1>\(status.code) \(escape(status.reasonPhrase))</h1>
            <p class="error">\(escape(message))</p>
            """, assets: false)
    }
}
