import Foundation
import HReaderJSON

/// With `--documents`: clinical notes and reports for the first patient (`p1`), as portals serve them
/// (issue 26): a DocumentReference with an inline note, DocumentReferences whose attachment is a
/// `Binary` on this server (plain text by a relative url, HTML with a script in it by an absolute
/// url, a small PDF), a `Binary` whose first fetch fails (500, then served), a DiagnosticReport with
/// a `presentedForm`, an attachment of a type no PHR keeps, and, with `--other-host URL`, an
/// attachment on another host. The texts carry words the tests look for in search and must never
/// find in plaintext on disk.
enum SyntheticDocuments {
    static let inlineNote = "Progress note: Quillfeather reports mild dyspepsia since starting metformin; continue and review in six weeks."
    static let textNote = "Discharge summary: Brambleworth observed overnight, discharged home walking, follow up with cardiology."
    static let htmlNote = """
        <!DOCTYPE html><html><head><title>Visit</title><style>p { color: red }</style></head><body>
        <h1>Visit note</h1><p>Marigoldine clinic visit: blood pressure reviewed, <b>lisinopril</b> continued.</p>
        <script>document.title = "Scriptwhistle"; fetch("/steal")</script>
        <p>See <a href="https://example.org/leaflet">the leaflet</a>.</p></body></html>
        """
    static let reportText = "<div><p>Radiology report: Thistlewaite chest film shows no acute disease.</p></div>"
    static let flakyNote = "Telephone note: Ravenhollow asked for a repeat prescription."
    /// A one-page PDF (no text layer needed: PDFs are kept as bytes only).
    static let pdf: [UInt8] = Array("""
        %PDF-1.4
        1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
        2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
        3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >> endobj
        trailer << /Root 1 0 R >>
        %%EOF
        """.utf8)

    /// Binary ids whose first read answers 500 (the fault the tests retry on the next sync).
    static let failingOnce: Set<String> = ["bin-flaky"]

    static func add(to state: inout FHIRStoreState, base: String?, otherHost: String?) {
        let patient: JSONValue = ["reference": "Patient/p1"]
        let stamp = SyntheticFHIR.lastUpdated
        func binary(_ id: String, _ contentType: String, _ bytes: [UInt8]) {
            state.put(type: "Binary", id: id, json: ["resourceType": "Binary", "contentType": .string(contentType),
                                                      "data": .string(Data(bytes).base64EncodedString())], lastUpdated: stamp)
        }
        func document(_ id: String, title: String, date: String, attachment: JSONValue) {
            state.put(type: "DocumentReference", id: id, json: [
                "resourceType": "DocumentReference",
                "status": "current",
                "type": ["text": "Clinical note"],
                "subject": patient,
                "date": .string(date),
                "description": .string(title),
                "content": [["attachment": attachment]],
            ], lastUpdated: stamp)
        }
        binary("bin-text", "text/plain", Array(textNote.utf8))
        binary("bin-html", "text/html", Array(htmlNote.utf8))
        binary("bin-pdf", "application/pdf", pdf)
        binary("bin-flaky", "text/plain", Array(flakyNote.utf8))

        document("doc-inline", title: "Progress note", date: "2024-02-01T09:00:00Z", attachment: [
            "contentType": "text/plain; charset=utf-8", "data": .string(Data(inlineNote.utf8).base64EncodedString()),
            "size": .int(inlineNote.utf8.count), "title": "Progress note",
        ])
        document("doc-text", title: "Discharge summary", date: "2024-02-02T09:00:00Z",
                 attachment: ["contentType": "text/plain", "url": "Binary/bin-text"])
        document("doc-html", title: "Visit note", date: "2024-02-03T09:00:00Z",
                 attachment: ["contentType": "text/html", "url": .string((base.map { $0 + "/" } ?? "") + "Binary/bin-html")])
        document("doc-pdf", title: "Cardiology letter", date: "2024-02-04T09:00:00Z",
                 attachment: ["contentType": "application/pdf", "url": "Binary/bin-pdf", "size": .int(pdf.count)])
        document("doc-flaky", title: "Telephone note", date: "2024-02-05T09:00:00Z",
                 attachment: ["contentType": "text/plain", "url": "Binary/bin-flaky"])
        document("doc-exe", title: "Installer", date: "2024-02-06T09:00:00Z", attachment: [
            "contentType": "application/x-msdownload", "data": .string(Data("MZ not a program".utf8).base64EncodedString()),
        ])
        if let otherHost {
            document("doc-elsewhere", title: "Outside records", date: "2024-02-07T09:00:00Z",
                     attachment: ["contentType": "text/plain", "url": .string(otherHost + "/fhir/Binary/elsewhere")])
        }
        state.put(type: "DiagnosticReport", id: "dr-imaging", json: [
            "resourceType": "DiagnosticReport",
            "status": "final",
            "code": ["text": "Chest X-ray"],
            "subject": patient,
            "effectiveDateTime": "2024-02-08T10:00:00Z",
            "presentedForm": [["contentType": "text/html", "data": .string(Data(reportText.utf8).base64EncodedString()), "title": "Chest X-ray report"]],
        ], lastUpdated: stamp)
    }

    /// `--bulk-notes N`: N text notes of about 10 kB for p1, each a DocumentReference whose attachment is
    /// a `Binary` by relative url (what the document import benchmark fetches).
    static func addBulkNotes(_ count: Int, to state: inout FHIRStoreState) {
        let stamp = SyntheticFHIR.lastUpdated
        let words = ["reviewed", "stable", "blood", "pressure", "follow", "up", "in", "clinic", "metformin", "continued", "no", "change"]
        for n in 0..<count {
            var text = "Note \(n): "
            var i = n
            while text.utf8.count < 10_000 {
                text += words[i % words.count] + (i % 11 == 0 ? ". " : " ")
                i = (i &* 1_103_515_245 &+ 12_345) & 0x7fff_ffff
            }
            let bytes = Array(text.utf8)
            state.put(type: "Binary", id: "bulk-\(n)", json: ["resourceType": "Binary", "contentType": "text/plain",
                                                              "data": .string(Data(bytes).base64EncodedString())], lastUpdated: stamp)
            state.put(type: "DocumentReference", id: "bulk-note-\(n)", json: [
                "resourceType": "DocumentReference", "status": "current", "type": ["text": "Clinical note"],
                "subject": ["reference": "Patient/p1"], "date": .string(String(format: "2020-01-01T%02d:%02d:00Z", (n / 60) % 24, n % 60)),
                "description": .string("Note \(n)"),
                "content": [["attachment": ["contentType": "text/plain", "url": .string("Binary/bulk-\(n)"), "size": .int(bytes.count)]]],
            ], lastUpdated: stamp)
        }
    }
}
