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
        subcommands: [List.self, Show.self, Get.self, Add.self, Remove.self])

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
            Output.table([["ID", "PATIENT", "DATE", "TYPE", "SIZE", "TITLE", "ORIGIN"]] + documents.map { d in
                let origin = d.state == .fetched ? (d.origin ?? "added by you")
                    : "\(d.state.rawValue): \(d.reason ?? "")"
                return [String(d.id), String(d.patientID), d.date?.text ?? "", d.contentType ?? "", DocumentsCommand.size(d.size), d.title, origin]
            })
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show a document's details and its readable text.",
            discussion: "The text of plain text, HTML and RTF documents is shown; PDFs and images have none here (use 'documents get').")
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

        func run() throws {
            let limits = try DocumentLimits.fromEnvironment()
            let open = try global.open()
            let p = try open.patient(patient)
            let d = try open.addDocument(file: URL(fileURLWithPath: file), patient: p, title: title, date: date?.time,
                                         contentType: contentType, limits: limits)
            if global.json { Output.json(.object([("document", d.jsonObject.json)])); return }
            global.note("Added document \(d.id) (\(DocumentsCommand.size(d.size)), \(d.contentType ?? "")) for \(p.displayName).")
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
