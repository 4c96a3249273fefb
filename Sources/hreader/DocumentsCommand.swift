import ArgumentParser
import Foundation
import HReaderJSON
import HReaderKit
import HReaderStore

struct DocumentsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documents",
        abstract: "Clinical notes, reports, scans and PDFs kept in the vault.",
        discussion: """
            Documents come from imports (FHIR DocumentReference, DiagnosticReport and Media attachments, C-CDA
            non-XML bodies) or are added by you. Their bytes and readable text live inside the encrypted vault.
            Example: hreader documents add letter.pdf --patient 1 --title "Cardiology letter"
            """,
        subcommands: [List.self, Show.self, Get.self, Add.self, Remove.self, Reindex.self, Propose.self, Languages.self])

    static func size(_ bytes: Int64?) -> String {
        guard let bytes else { return "" }
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
        if bytes >= 1 << 10 { return String(format: "%.1f KiB", Double(bytes) / Double(1 << 10)) }
        return "\(bytes) B"
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List documents, newest first.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this patient (local id or uuid); all patients when omitted.") var patient: String?

        func run() throws {
            let open = try global.open()
            let only = try patient.map { try open.patient($0) }
            let documents = try open.documents(patient: only)
            if global.json { Output.json(.object([("documents", .array(documents.map(\.jsonObject.json)))])); return }
            if documents.isEmpty { global.note("No documents."); return }
            Output.table([["ID", "PATIENT", "DATE", "TYPE", "SIZE", "TEXT", "TITLE", "ORIGIN"]] + documents.map { d in
                let origin = d.state == .fetched ? (d.origin ?? "added by you")
                    : "\(d.state.rawValue): \(d.reason ?? "")"
                return [String(d.id), String(d.patientID), d.date?.text ?? "", d.contentType ?? "", DocumentsCommand.size(d.size),
                        d.textSummary, d.title, origin]
            })
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a document's details and its readable text.",
            discussion: """
                The readable text is shown: of plain text, HTML and RTF as written, of a PDF its text layer, of a scan or a photo what
                OCR read (see the 'text:' line for how it was obtained).
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The document's id or uuid.") var document: String

        func run() throws {
            let open = try global.open()
            let d = try open.document(document)
            let text = try open.documentText(d)
            if global.json {
                var object = d.jsonObject
                object.members.append(("text", text.map(JSONValue.string) ?? .null))
                Output.json(.object([("document", object.json)])); return
            }
            var rows = [["title:", d.title], ["date:", d.date?.text ?? ""], ["type:", d.contentType ?? ""],
                        ["size:", DocumentsCommand.size(d.size)], ["origin:", d.origin ?? "added by you"], ["state:", d.state.rawValue]]
            if let reason = d.reason { rows.append(["reason:", reason]) }
            if d.textMethod != nil { rows.append(["text:", d.textSummary + (d.textMethod != DocumentTextMethod.none ? d.textNote.map { " (\($0))" } ?? "" : "")]) }
            if let sha = d.sha256 { rows.append(["sha256:", sha]) }
            Output.table(rows)
            Output.line()
            Output.line(text ?? "(no readable text: use 'hreader documents get \(d.id) --out FILE' for the bytes)")
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "get", abstract: "Write a document's exact bytes to a file (or stdout with --out -).",
            discussion: """
                The file is created with mode 0600; an existing file is kept unless --force is given, and kept as it was when anything fails.
                With --out -, the bytes go to a pipe or a file as they are, but not to a terminal unless --force is given.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The document's id or uuid.") var document: String
        @Option(help: ArgumentHelp("Where to write the bytes; '-' for stdout.", valueName: "file")) var out: String
        @Flag(help: "Replace the file when it exists; with --out -, write to a terminal too.") var force = false

        func run() throws {
            // A document's bytes are the source's, escape sequences included (the clipboard, the screen,
            // the window's title): everything else printed goes through TerminalText, these cannot.
            if out == "-", Terminal.stdoutIsTerminal, !force {
                throw HReaderError.usage("a document's bytes are raw and would reach the terminal as they are; use --out FILE, a pipe, or --force")
            }
            let open = try global.open()
            let d = try open.document(document)
            if out == "-" {
                let stdout = FileHandle.standardOutput
                try open.readDocumentBytes(d) { chunk in stdout.write(Data(chunk)) }
                return
            }
            try open.saveDocument(d, to: URL(fileURLWithPath: out), replacing: force)
            global.note("Wrote \(DocumentsCommand.size(d.size)) to \(out).")
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a file (a scan, a PDF, a letter) to a patient's documents.",
            discussion: """
                The file is read and stored in chunks inside the encrypted vault, shown as "added by you". Allowed: text,
                HTML, RTF, XML, PDF and images, up to HREADER_DOCUMENT_MAX_BYTES (64M by default).
                Example: hreader documents add scan.pdf --patient 1 --date 2024-03-02
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The file to add.", valueName: "file"), completion: .file()) var file: String
        @Option(help: "The patient (local id or uuid).") var patient: String?
        @Option(help: "A title (default: the file's name).") var title: String?
        @Option(help: ArgumentHelp("When it was written (RFC 3339, or a date at local midnight; default now).", valueName: "time")) var date: TimeArgument?
        @Option(help: ArgumentHelp("Its media type, when the file's name and first bytes do not tell (text/plain, application/pdf).",
                                   valueName: "type")) var contentType: String?
        @Option(help: ArgumentHelp("OCR languages for a scan or a photo (Tesseract's names: eng, eng+deu); default: the vault's.",
                                   valueName: "languages")) var ocrLang: String?

        func run() throws {
            let limits = try DocumentLimits.fromEnvironment()
            // A PDF's text layer is read from now on: pdftotext parses while the vault opens.
            let textLayer = PDFTextLayerRun.start(adding: URL(fileURLWithPath: file), contentType: contentType, limits: limits)
            defer { textLayer?.cancel() }
            let open = try global.open()
            let p = try open.patient(patient)
            let extractor = try DocumentsCommand.extractor(open, languages: ocrLang, global: global)
            defer { DocumentsCommand.endProgress(extractor) }
            let d = try open.addDocument(file: URL(fileURLWithPath: file), patient: p, title: title, date: date?.time,
                                         contentType: contentType, limits: limits, extractor: extractor, textLayer: textLayer)
            DocumentsCommand.endProgress(extractor)
            if global.json { Output.json(.object([("document", d.jsonObject.json)])); return }
            let text = d.textSummary.isEmpty ? "" : "; text: \(d.textSummary)"
            global.note("Added document \(d.id) (\(DocumentsCommand.size(d.size)), \(d.contentType ?? "")\(text)) for \(p.displayName).")
        }
    }

    /// The vault's extractor, with a page count on stderr while a long scan is read on a terminal.
    static func extractor(_ open: OpenVault, languages: String?, global: GlobalOptions) throws -> DocumentTextExtractor {
        var extractor = try open.textExtractor(languages: languages)
        if isatty(STDERR_FILENO) == 1, !global.json, !global.quiet {
            // Cleared by `endProgress` once the document is read.
            extractor.progress = { page, pages in
                guard pages > 1 else { return }
                FileHandle.standardError.write(Data("\r\u{1B}[KOCR: page \(page) of \(pages)".utf8))
            }
        }
        return extractor
    }

    /// Clears the progress line `extractor` may have left on a terminal.
    static func endProgress(_ extractor: DocumentTextExtractor) {
        if extractor.progress != nil { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    struct Reindex: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reindex", abstract: "Read documents' text again: those waiting or without text, or with --ocr every PDF and image.",
            discussion: """
                Run it after installing poppler-utils or tesseract-ocr (documents stored without them have no text yet), or with --ocr
                after installing an OCR language. The text goes into search and 'documents show'.
                Example: hreader documents reindex --patient 1 --ocr --ocr-lang eng+deu
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this patient (local id or uuid); all patients when omitted.") var patient: String?
        @Flag(help: "Read every PDF and image again, those read before included.") var ocr = false
        @Option(help: ArgumentHelp("OCR languages (Tesseract's names: eng, eng+deu); default: the vault's.", valueName: "languages")) var ocrLang: String?

        func run() throws {
            let open = try global.open()
            let only = try patient.map { try open.patient($0) }
            let extractor = try DocumentsCommand.extractor(open, languages: ocrLang, global: global)
            var rows: [JSONValue] = []
            let summary = try open.reindexDocuments(patient: only, ocr: ocr, extractor: extractor) { d, result in
                DocumentsCommand.endProgress(extractor)
                var stored = d
                stored.textMethod = result.method; stored.textConfidence = result.confidence; stored.textNote = result.note
                if global.json { rows.append(.object([("id", .int(d.id)), ("text_method", .string(result.method.rawValue)),
                                                      ("text_confidence", result.confidence.map { .double(($0 * 10).rounded() / 10) } ?? .null),
                                                      ("text_note", result.note.map(JSONValue.string) ?? .null)]))
                } else { global.note("document \(d.id): \(stored.textSummary)") }
            }
            if global.json {
                Output.json(.object([("read", .int(summary.read)), ("with_text", .int(summary.withText)), ("documents", .array(rows))])); return
            }
            global.note("Read \(summary.read) documents: \(summary.withText) with text, \(summary.withoutText) without.")
        }
    }

    struct Propose: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "propose", abstract: "Propose lab results from a document's lines; store only those you accept.",
            discussion: """
                Lines that read as NAME VALUE UNIT (reference LOW - HIGH) are listed, numbered. Nothing is stored unless you give
                --accept with their numbers; each accepted one becomes a result entry of the document's patient, dated as the
                document, that names the document it came from.
                Example: hreader documents propose 4 --accept 1 3
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The document's id or uuid.") var document: String
        @Option(parsing: .upToNextOption, help: ArgumentHelp("The numbers of the proposals to store as results.", valueName: "n")) var accept: [Int] = []

        func run() throws {
            let open = try global.open()
            let d = try open.document(document)
            if !accept.isEmpty {
                let added = try open.acceptLabProposals(d, numbers: accept)
                if global.json { Output.json(.object([("added", .array(added.map { .int($0.id) }))])); return }
                global.note("Stored \(added.count) result\(added.count == 1 ? "" : "s") from document \(d.id).")
                return
            }
            let proposals = try open.labProposals(d)
            if global.json {
                Output.json(.object([("document", .int(d.id)), ("proposals", .array(proposals.enumerated().map { n, p in
                    .object([("n", .int(n + 1)), ("line", .int(p.line)), ("name", .string(p.name)), ("value", .double(p.value)),
                             ("value_text", .string(p.valueText)), ("unit", .string(p.unit)), ("low", p.low.map(JSONValue.double) ?? .null),
                             ("high", p.high.map(JSONValue.double) ?? .null), ("text", .string(p.text))])
                }))]))
                return
            }
            if proposals.isEmpty { global.note("No lines of document \(d.id) read as a lab result."); return }
            Output.table([["N", "NAME", "VALUE", "UNIT", "REFERENCE", "LINE"]] + proposals.enumerated().map { n, p in
                [String(n + 1), p.name, p.valueText, p.unit,
                 p.low.map { low in "\(DocumentsCommand.number(low)) - \(p.high.map(DocumentsCommand.number) ?? "")" } ?? "", String(p.line)]
            })
            global.note("Nothing is stored: 'hreader documents propose \(d.id) --accept N…' keeps the ones you choose.")
        }
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    struct Languages: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "languages", abstract: "Show or set the vault's OCR languages (and list those installed).",
            discussion: "Example: hreader documents languages --set eng+deu   (after apt-get install tesseract-ocr-deu)")
        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("Tesseract's language names joined by '+'.", valueName: "languages")) var set: String?
        @Flag(help: "Back to English.") var reset = false

        func run() throws {
            let open = try global.open()
            if reset { try open.setOCRLanguages(nil) } else if let set { try open.setOCRLanguages(set) }
            let installed = TextTools.find().languages()
            let current = try open.ocrLanguages()
            if global.json {
                Output.json(.object([("ocr_languages", .string(current)), ("installed", .array(installed.map(JSONValue.string)))])); return
            }
            Output.table([["ocr languages:", current],
                          ["installed:", installed.isEmpty ? "none (install tesseract-ocr)" : installed.joined(separator: ", ")]])
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a document, its bytes and its text.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The document's id or uuid.") var document: String

        func run() throws {
            let open = try global.open()
            let d = try open.document(document)
            try open.removeDocument(d)
            global.note("Removed document \(d.id).")
        }
    }
}
