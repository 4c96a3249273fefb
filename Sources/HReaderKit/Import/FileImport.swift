import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// The formats `hreader import --file` reads, told apart by content.
public enum RecordFileFormat: String, Sendable {
    case fhirJSON = "FHIR JSON"
    case fhirNDJSON = "FHIR NDJSON"
    case fhirXML = "FHIR XML"
    case ccda = "C-CDA"
    case rhex = "RHEx c32 JSON"
    /// A `.smart-health-card` file, a `$health-cards-issue` answer, or text of `shc:/` QR contents.
    case healthCards = "SMART Health Cards"

    /// A CDA document (C-CDA, CCD, C32) when the XML's root is `ClinicalDocument` in the HL7 v3
    /// namespace; other XML is FHIR XML; NDJSON when several lines each hold a resource; a
    /// FHIR resource or Bundle when the document has a `resourceType`; an RHEx/hData c32 record
    /// when it has a record's members; nil for anything else (a Bulk Data manifest, …).
    static func detect(_ data: Data) -> RecordFileFormat? {
        let firstByte = data.first { ![0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf].contains($0) }
        if firstByte == UInt8(ascii: "<") { return CCDADocument.recognizes(data) ? .ccda : .fhirXML }
        // Read with the JSON core the real parse uses (never Foundation's, which took a fifth of an
        // import, and is not the parser the project fuzzes): NDJSON by its first line alone.
        if let (first, more) = Self.firstLine(of: data), more, (try? JSONParser.parse(first))?.object?["resourceType"] != nil {
            return .fhirNDJSON
        }
        guard let object = (try? JSONParser.parse(data))?.object else { return nil }
        if object["resourceType"] != nil { return .fhirJSON }
        let recordMembers = ["first", "last", "birthdate", "gender", "_id", "encounters", "conditions", "medications", "results",
                             "vital_signs", "allergies", "procedures", "immunizations"]
        return recordMembers.contains { object[$0] != nil } ? .rhex : nil
    }

    /// The first line that is not blank, and whether another non-blank line follows it.
    static func firstLine(of data: Data) -> (Data, Bool)? {
        func blank(_ line: Data) -> Bool { line.allSatisfy { $0 == 0x20 || $0 == 0x0d || $0 == 0x09 } }
        var start = data.startIndex
        var first: Data?
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: 0x0a) ?? data.endIndex
            let line = data[start..<end]
            if !blank(line) {
                if let first { return (first, true) }
                first = line
            }
            start = end < data.endIndex ? data.index(after: end) : end
        }
        return first.map { ($0, false) }
    }
}

/// One file of an import, read and told apart.
struct RecordFile {
    let name: String
    let format: RecordFileFormat
    private let content: Content

    private enum Content {
        case bytes(Data)
        /// A package's document, inflated when the import comes to it (and let go after).
        case member(DocumentPackage.XDM.Member, of: DocumentPackage.XDM)
    }

    init(name: String, data: Data, format: RecordFileFormat) {
        self.name = name; self.format = format; content = .bytes(data)
    }

    private init(_ member: DocumentPackage.XDM.Member, of package: DocumentPackage.XDM) {
        name = member.name; format = .ccda; content = .member(member, of: package)
    }

    /// The file's bytes; nil for a package's member that turns out to be no CDA document (then
    /// said in `passedOver`).
    func data(passedOver: inout [String]) throws -> Data? {
        switch content {
        case let .bytes(data):
            return data
        case let .member(member, package):
            let data = try package.read(member)
            guard CCDADocument.recognizes(data) else {
                passedOver.append("\(member.name): not a CDA document")
                return nil
            }
            return data
        }
    }

    static let extensions: Set<String> = ["json", "ndjson", "xml", "ccd", "cda"]

    /// A file (whatever its extension: a CDA document often comes as `.ccd`, `.cda` or `.txt`), or
    /// every `.json`, `.ndjson`, `.xml`, `.ccd` and `.cda` file directly inside a directory (a Bulk
    /// Data export's one file per type, a folder of clinical documents), in name order. In a directory, a file that is no record (its
    /// manifest) is passed over and said so; given alone, it is an error. A file may also be a
    /// package of clinical documents (`DocumentPackage`): an IHE XDM zip, whose documents are read
    /// one at a time as the import comes to them, or a Blue Button page.
    static func read(_ url: URL, limits: DocumentLimits, passedOver: inout [String], notes: inout [String]) throws -> [RecordFile] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw HReaderError.usage("cannot read \(url.path)")
        }
        guard isDirectory.boolValue else {
            let data = try contents(url)
            if DocumentPackage.isZip(data) {
                let package = try DocumentPackage.XDM(url, maxBytes: limits.perPackage)
                passedOver += package.passedOver
                return package.members.map { RecordFile($0, of: package) }
            }
            if BlueButtonPage.isHTML(data) {
                guard let document = DocumentPackage.page(url, data: data), CCDADocument.recognizes(document.data) else {
                    throw HReaderError.badInput("\(url.lastPathComponent) is an HTML page that carries no clinical document "
                                                + "(no <script> element holding a <ClinicalDocument>)")
                }
                notes.append("read the clinical document a Blue Button page carries (its scripts were not run)")
                return [RecordFile(name: document.name, data: document.data, format: .ccda)]
            }
            if HealthCardFile.recognizes(data) {
                return [RecordFile(name: url.lastPathComponent, data: data, format: .healthCards)]
            }
            guard let format = RecordFileFormat.detect(data) else { throw notARecord(url.lastPathComponent, data) }
            return [RecordFile(name: url.lastPathComponent, data: data, format: format)]
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        let candidates = names.filter { !$0.hasPrefix(".") && extensions.contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
        guard !candidates.isEmpty else {
            throw HReaderError.usage("\(url.path) holds no .json, .ndjson, .xml, .ccd or .cda file to import")
        }
        var files: [RecordFile] = []
        for name in candidates {
            let data = try contents(url.appendingPathComponent(name))
            guard let format = RecordFileFormat.detect(data) else {
                passedOver.append("\(name): not a FHIR resource, Bundle, NDJSON, RHEx record or CDA document")
                continue
            }
            files.append(RecordFile(name: name, data: data, format: format))
        }
        return files
    }

    /// Whether the files are an XDM package's documents.
    static func arePackaged(_ files: [RecordFile]) -> Bool {
        files.contains { if case .member = $0.content { true } else { false } }
    }

    /// The bytes of a picture or a PDF (told by its first bytes), which `import --file` reads for QR
    /// codes; nil for anything else (a directory too).
    static func pictureOrPDF(_ url: URL, limits: DocumentLimits) throws -> (bytes: [UInt8], kind: QRCodeScanner.Kind)? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
              let handle = FileHandle(forReadingAtPath: url.path) else { return nil }
        defer { try? handle.close() }
        guard let kind = QRCodeScanner.kind(of: (try? handle.read(upToCount: 8)) ?? Data()) else { return nil }
        let data = try contents(url)
        guard data.count <= limits.perDocument else {
            throw HReaderError.badInput("\(url.lastPathComponent) is larger than \(limits.perDocument >> 20) MiB; nothing was imported")
        }
        return ([UInt8](data), kind)
    }

    private static func contents(_ url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw HReaderError.usage("cannot read \(url.path)")
        }
    }

    /// Says where a file that is no record breaks, when it is broken JSON (the record parser gives
    /// line and column; Foundation's would not).
    private static func notARecord(_ name: String, _ data: Data) -> HReaderError {
        do { _ = try FHIRMapper().mapBundle(data) } catch let error as RecordsError {
            return HReaderError.badInput("\(name): \(error.description)")
        } catch {}
        return HReaderError.badInput("\(name): not a FHIR resource, Bundle, NDJSON, RHEx record or CDA document")
    }
}

extension OpenVault {
    /// `hreader import --file`: FHIR Bundles, resources and NDJSON (a file, or a directory of them
    /// read as one input), and RHEx c32 records. Each document is filed under the source of who wrote
    /// it, a file that names nobody under its own name (`FileSources`), whatever its path: the same
    /// download from another folder changes nothing.
    ///
    /// Who each record is about is never guessed: a Patient of the input is found in the vault by
    /// its identifiers or id (`PatientMatcher`) or created; a resource names its patient by its
    /// subject, resolved within the input, else against the vault; one whose patient is not in the
    /// vault yet waits (encrypted in the vault) until an import brings them; an ambiguous or broken
    /// reference is reported and skipped. With `patient`, the input must be about that patient
    /// (or name nobody): a resource about anyone else refuses the whole import, nothing written.
    /// Everything is mapped before anything is written: bad input writes nothing.
    ///
    /// SMART Health Cards (docs/sharing.md) are verified first, every card of the file, before
    /// anything is written: a card that does not verify or is revoked refuses the whole file (exit
    /// 7); an issuer whose keys cannot be had refuses it (exit 6) unless `unverifiedCards`. Each
    /// entry a card brings records how it was checked (`EntryVerification`).
    public func importFile(_ url: URL, into patient: Patient? = nil, relationship: Relationship? = nil, unverifiedCards: Bool = false,
                           progress: (String) -> Void = { _ in }) throws -> (format: String, summary: ImportSummary) {
        var passedOver: [String] = [], notes: [String] = []
        // A wearable's files (FIT: a file, a folder, Garmin's zip) go to the samples (docs/wearables.md).
        if let wearable = try WearableInput.detect(url) {
            return try importWearables(wearable, name: url.lastPathComponent, into: patient, relationship: relationship, progress: progress)
        }
        let limits = try DocumentLimits.fromEnvironment()
        if let picture = try RecordFile.pictureOrPDF(url, limits: limits) {
            return try importQRCodes(in: picture.bytes, kind: picture.kind, name: url.lastPathComponent, into: patient, relationship: relationship,
                                     unverifiedCards: unverifiedCards, limits: limits, progress: progress)
        }
        let files = try RecordFile.read(url, limits: limits, passedOver: &passedOver, notes: &notes)
        return try importRecordFiles(files, name: url.lastPathComponent, into: patient, relationship: relationship, unverifiedCards: unverifiedCards,
                                     limits: limits, passedOver: passedOver, notes: notes, progress: progress)
    }

    /// A picture or a PDF given to `import --file`: the SMART Health Cards or the Link in its QR codes
    /// (read in the sandboxed child, `QRCodeScanner`), imported as their text would be. Cards first; a
    /// link alone is fetched as `import --link` fetches it (one that needs a passcode: give it by --link).
    func importQRCodes(in bytes: [UInt8], kind: QRCodeScanner.Kind, name: String, into patient: Patient?, relationship: Relationship?,
                       unverifiedCards: Bool, limits: DocumentLimits, progress: (String) -> Void) throws -> (format: String, summary: ImportSummary) {
        progress("reading the QR codes in \(name)")
        let codes: [String]
        do { codes = try QRCodeScanner.find().codes(in: bytes, kind: kind) } catch let failure as QRCodeScanner.Failure {
            throw HReaderError.badInput("\(name): cannot read its QR codes: \(failure); nothing was imported")
        }
        let cards = codes.filter { $0.lowercased().hasPrefix("shc:/") }
        let links = codes.filter { $0.hasPrefix("shlink:/") || $0.contains("#shlink:/") }
        if !cards.isEmpty {
            var result = try importRecordFiles([RecordFile(name: name, data: Data(cards.joined(separator: "\n").utf8), format: .healthCards)],
                                               name: name, into: patient, relationship: relationship, unverifiedCards: unverifiedCards,
                                               limits: limits, passedOver: [], notes: [], progress: progress)
            result.summary.notes.insert("read \(cards.count) QR code\(cards.count == 1 ? "" : "s") of SMART Health Cards in \(name)"
                                        + (links.isEmpty ? "" : "; the link beside them was not followed (import it with --link)"), at: 0)
            return result
        }
        guard !links.isEmpty else {
            throw HReaderError.badInput("\(name) holds no SMART Health Card or Link QR code"
                                        + (codes.isEmpty ? " (no QR code was read in it)" : " (\(codes.count) other QR code\(codes.count == 1 ? "" : "s"))")
                                        + "; nothing was imported")
        }
        guard links.count == 1 else {
            throw HReaderError.usage("\(name) holds \(links.count) SMART Health Links: import each with --link; nothing was imported")
        }
        return try importLink(links[0], passcode: nil, into: patient, relationship: relationship, unverifiedCards: unverifiedCards, progress: progress)
    }

    /// The import of files already read and told apart (`importFile`, and `importLink` with what a
    /// SMART Health Link decrypted to), under the input's `name`.
    func importRecordFiles(_ files: [RecordFile], name: String, into patient: Patient?, relationship: Relationship?, unverifiedCards: Bool,
                           limits: DocumentLimits, passedOver: [String], notes: [String],
                           progress: (String) -> Void) throws -> (format: String, summary: ImportSummary) {
        var summary = ImportSummary()
        var passedOver = passedOver, notes = notes

        var records: [MappedRecord] = []
        var loose: [UnattachedEntry] = []
        var documentNames: [String] = []
        var inputs: [(name: String, author: String?)] = []
        // A card's verification, by the FHIR input its Bundle became.
        var verifications: [Int: EntryVerification] = [:]
        var verifier: HealthCardVerifier?
        do {
            // One file at a time: a package's document is inflated, parsed and mapped, then let go.
            var fhir = FHIRMapper.FileInput()
            var rhex: [(name: String, data: Data)] = []
            for file in files {
                guard let data = try file.data(passedOver: &passedOver) else { continue }
                documentNames.append(file.name)
                switch file.format {
                case .fhirJSON: try fhir.add(data, name: file.name, format: .json)
                case .fhirNDJSON: try fhir.add(data, name: file.name, format: .ndjson)
                case .fhirXML: try fhir.add(data, name: file.name, format: .xml)
                case .ccda: try fhir.add(data, name: file.name, format: .ccda)
                case .rhex: rhex.append((file.name, data))
                case .healthCards:
                    let cards = try HealthCardImport.cards(in: data, name: file.name)
                    progress("verifying \(cards.count) card(s)")
                    let checker = HealthCardVerifier(vault: self, allowUnverified: unverifiedCards)
                    let checked = try checker.check(cards)
                    verifier = checker
                    notes += checker.notes
                    notes.append(HealthCardImport.describe(checked))
                    for (i, (card, verification)) in zip(cards, checked).enumerated() {
                        verifications[fhir.files.count] = verification
                        let bundle = HealthCardBundle.prepared(card.fhirBundle, issuer: card.issuer)
                        try fhir.add(bundle: bundle, name: cards.count == 1 ? file.name : "\(file.name) card \(i + 1)",
                                     author: verification.issuer ?? card.issuer)
                    }
                }
            }
            if !fhir.files.isEmpty {
                let batch = FHIRMapper().map(fhir)
                records = batch.records
                loose = batch.unattached
                inputs = batch.inputs
                for skip in batch.skipped { summary.skipped[skip.reason, default: 0] += 1 }
                for (fileName, document) in batch.documents { Self.describe(document, name: fileName, files: files.count, into: &summary) }
            }
            for file in rhex {
                var record = try RHExMapper().map(file.data)
                record.patient.input = inputs.count
                for i in record.entries.indices { record.entries[i].input = inputs.count }
                inputs.append((file.name, nil))
                records.append(record)
            }
        } catch let error as RecordsError {
            throw HReaderError.badInput(error.description.hasPrefix(name) ? error.description : "\(name): \(error.description)")
        }
        if RecordFile.arePackaged(files) {
            guard !documentNames.isEmpty else {
                throw HReaderError.badInput("\(name) is an XDM package without a clinical document to import")
            }
            notes.append("an IHE XDM package: read " + documentNames.joined(separator: ", "))
        }
        summary.notes = notes + passedOver.map { "passed over \($0)" } + summary.notes

        // What the cards' checks fetched (issuers' keys, revocation lists) is kept now that all passed.
        if let verifier { try write { try verifier.commit() } }

        // A file that names no writer is named by what was imported: itself, or its directory or package.
        var sources = try FileSources(inputs: inputs, fallback: name, vault: self)
        var made: [Int64: (records: RecordImporter, documents: DocumentImporter)] = [:]
        func importers(ofInput input: Int) throws -> (records: RecordImporter, documents: DocumentImporter) {
            let sourceID = try sources.sourceID(ofInput: input, in: self)
            if let found = made[sourceID] { return found }
            // Inline attachments (a DocumentReference's data, a C-CDA's nonXMLBody) become documents; urls stay references.
            var recordImporter = RecordImporter(vault: self, sourceID: sourceID, scope: PatientMatcher.fileScope, isSnapshot: false,
                                                takingOverFrom: sources.legacy)
            recordImporter.verifications = verifications
            let pair = (recordImporter,
                        DocumentImporter(vault: self, sourceID: sourceID, limits: limits, server: nil,
                                         extractor: try textExtractor(), takingOverFrom: sources.legacy))
            made[sourceID] = pair
            return pair
        }
        var budget = limits.perImport
        // A batch's entries under each one's source, the patient's own file first (its source keeps the patient's row).
        func store(_ batch: RecordImporter.Batch, relationship: Relationship?, ownInput: Int? = nil) throws {
            var parts: [(input: Int, entries: [MappedEntry])] = []
            if let ownInput { parts.append((ownInput, [])) }
            for entry in batch.entries {
                let key = try sources.sourceID(ofInput: entry.input, in: self)
                if let i = try parts.firstIndex(where: { try sources.sourceID(ofInput: $0.input, in: self) == key }) {
                    parts[i].entries.append(entry)
                } else {
                    parts.append((entry.input, [entry]))
                }
            }
            if parts.isEmpty { parts.append((ownInput ?? 0, [])) }
            var owner = batch.owner
            for (n, part) in parts.enumerated() {
                let (recordImporter, documentImporter) = try importers(ofInput: part.input)
                let piece = RecordImporter.Batch(owner: owner, entries: part.entries, skipped: n == 0 ? batch.skipped : [])
                guard let filed = try recordImporter.store(piece, relationship: relationship, summary: &summary) else { return }
                try documentImporter.runLocal(entries: part.entries, filed: filed, counts: &summary.documents, budget: &budget)
                if n == 0, let record = try read({ try patients.get(id: filed.record) }) { owner = .existing(record, aliases: []) }
            }
        }
        // Who the input is about is decided before anything is written (a source is created when it stores).
        // (It is used inside `read`s only.)
        let matchingSource = try sources.existingSourceID(ofInput: records.first?.patient.input ?? 0, in: self) ?? -1
        let matcher = exclusively { PatientMatcher(db: db, sourceID: matchingSource, scope: PatientMatcher.fileScope) }
        if let patient {
            let batch = try read { try Self.batch(for: patient, records: records, loose: loose, matcher: matcher, name: name) }
            progress("\(batch.entries.count) entries")
            try store(batch, relationship: relationship, ownInput: records.first?.patient.input)
            try readWaitingDocuments(&summary.documents, limits: limits)
            return (Self.describe(files), summary)
        }

        // Resources that name no one belong to the input's only patient; with several or none, to nobody.
        var batches = records.map { (batch: RecordImporter.Batch($0), input: $0.patient.input) }
        let unnamed = loose.filter { $0.subject == nil }.map(\.entry)
        if !unnamed.isEmpty {
            if batches.count == 1 {
                batches[0].batch.entries += unnamed
            } else {
                summary.skipped["a resource that names no patient, in an input about \(batches.count) patients (use --patient)", default: 0]
                    += unnamed.count
            }
        }
        for (index, item) in batches.enumerated() {
            progress("patient \(index + 1) of \(batches.count): \(item.batch.entries.count) entries")
            try store(item.batch, relationship: relationship, ownInput: item.input)
        }
        // Resources about patients the input does not describe: the vault's patients, now including
        // those just stored, or else they wait.
        let groups = Dictionary(grouping: loose.filter { $0.subject != nil }, by: { $0.subject! })
        for key in groups.keys.sorted(by: { $0.description < $1.description }) {
            let entries = groups[key]!.map(\.entry)
            switch try read({ try matcher.resolve(key) }) {
            case let .patient(owner):
                progress("\(entries.count) entries about \(key)")
                try store(RecordImporter.Batch(owner: .existing(owner, aliases: []), entries: entries), relationship: nil)
            case let .waiting(identity):
                for (input, waiting) in Dictionary(grouping: entries, by: \.input).sorted(by: { $0.key < $1.key }) {
                    try importers(ofInput: input).records.park(waiting, waitingFor: identity, summary: &summary)
                }
            case let .ambiguous(ids):
                summary.skipped["a resource about \(key), who could be any of patients \(ids.map(String.init).joined(separator: ", ")) "
                                + "of the vault (not filed)", default: 0] += entries.count
            case .unresolvable:
                summary.skipped["a resource whose patient reference points nowhere in the input (not filed)", default: 0] += entries.count
            }
        }
        try readWaitingDocuments(&summary.documents, limits: limits)
        return (Self.describe(files), summary)
    }

    /// A CDA document's kind, producer and date, and each section's counts, as notes; what its
    /// sections skipped joins the summary's skipped reasons.
    private static func describe(_ document: CCDADocument, name: String, files: Int, into summary: inout ImportSummary) {
        var line = document.kind
        if let producer = document.producer { line += " from \(producer)" }
        if let date = document.date { line += ", dated \(date)" }
        summary.notes.append(files > 1 ? "\(name): \(line)" : line)
        for section in document.sections {
            summary.notes.append("  " + section.summary)
            for (reason, count) in section.skipped { summary.skipped["\(section.title): \(reason)", default: 0] += count }
        }
    }

    /// "FHIR NDJSON", or for a directory "9 files: FHIR NDJSON".
    private static func describe(_ files: [RecordFile]) -> String {
        let formats = Set(files.map(\.format.rawValue)).sorted().joined(separator: ", ")
        return files.count == 1 ? formats : "\(files.count) files: \(formats)"
    }

    /// `import --file F --patient P`: everything in F goes to P, provided F is about P. The input's
    /// Patient (one at most) and every subject its resources name must be P or nobody the vault
    /// knows; then they become P's identities, so later files naming them find P. Anything else
    /// refuses the import, before a byte is written.
    static func batch(for target: Patient, records: [MappedRecord], loose: [UnattachedEntry], matcher: PatientMatcher,
                      name: String) throws -> RecordImporter.Batch {
        let nothing = "nothing was imported"
        guard records.count <= 1 else {
            throw HReaderError.badInput("\(name) holds \(records.count) patients; --patient takes a file about one person; \(nothing)")
        }
        var aliases: [PatientIdentityRepository.Identity] = []
        var entries: [MappedEntry] = []
        var skipped: [Skip] = []
        if let record = records.first {
            switch try matcher.match(record.patient) {
            case let .found(other) where other.id != target.id:
                throw HReaderError.badInput("\(name) is about Patient/\(record.patient.remoteID), who is patient \(other.id) in the vault, "
                                            + "not patient \(target.id); \(nothing)")
            case let .ambiguous(reason):
                throw HReaderError.badInput("\(name): its Patient cannot be told apart: \(reason); \(nothing)")
            case .found, .new:
                break
            }
            aliases = matcher.identities(of: record.patient)
            entries = record.entries
            skipped = record.skipped
        }
        var others: Set<SubjectKey> = []
        for item in loose {
            guard let key = item.subject else { entries.append(item.entry); continue }
            let refusal = "\(name): a \(item.entry.remoteID.split(separator: "/").first ?? "resource") is about \(key)"
            switch try matcher.resolve(key) {
            case let .patient(owner) where owner.id == target.id:
                entries.append(item.entry)
            case let .patient(owner):
                throw HReaderError.badInput("\(refusal), who is patient \(owner.id) in the vault, not patient \(target.id); \(nothing)")
            case let .ambiguous(ids):
                throw HReaderError.badInput("\(refusal), who could be any of patients \(ids.map(String.init).joined(separator: ", ")); \(nothing)")
            case .unresolvable:
                throw HReaderError.badInput("\(refusal), which points nowhere in the file; \(nothing)")
            case let .waiting(identity):
                if aliases.contains(identity) { entries.append(item.entry); continue }
                guard records.isEmpty else {
                    throw HReaderError.badInput("\(refusal), not the file's Patient/\(records[0].patient.remoteID); \(nothing)")
                }
                others.insert(key)
                aliases.append(identity)
                entries.append(item.entry)
            }
        }
        guard others.count <= 1 else {
            let names = others.map(\.description).sorted().joined(separator: ", ")
            throw HReaderError.badInput("\(name) is about \(others.count) patients (\(names)); --patient takes a file about one person; \(nothing)")
        }
        return RecordImporter.Batch(owner: .existing(target, aliases: aliases), entries: entries, skipped: skipped)
    }
}
