import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// The sources of one `import --file` (docs/records.md, "Whose a file's records are"): each
/// document is filed under who wrote it, so that the same fact from a portal's CCD and a GP's
/// Bundle shows as stated by both, not as two copies of "Imported files". The writer is a C-CDA's
/// custodian (else its author's organization), a FHIR document's Composition custodian or author,
/// a Bundle's `meta.source`; a file that names nobody is named by what was imported (the file, or
/// the directory or package it came in). One name is one source, however often imported; names are
/// compared folded ("HARBOR VIEW CLINIC" is "Harbor View Clinic").
///
/// Vaults from before kept every file's records in one source, "Imported files" (`file:`). An
/// entry or document a named source brings again is taken over from it (same record, same remote
/// id or origin): re-importing an old file moves what it stated to its writer, adding nothing.
struct FileSources {
    /// Each input's name (`MappedEntry.input` indexes it).
    let names: [String]
    /// The one source of earlier versions, when the vault has it.
    let legacy: Int64?
    private var ids: [String: Int64] = [:]
    private var byInput: [Int: Int64] = [:]

    /// `inputs`: the files mapped (name, and writer when it says); `fallback`: what was imported
    /// (a file's name, a directory's, a package's).
    init(inputs: [(name: String, author: String?)], fallback: String, vault: OpenVault) throws {
        names = inputs.map { $0.author ?? fallback }
        legacy = try vault.read { try vault.db.scalarInt("SELECT id FROM sources WHERE kind = 'file' AND base_url = ?", [Self.legacyKey]) }
    }

    static let legacyKey = "file:"

    /// The key a name is known by among file sources (`sources.base_url`).
    static func key(_ name: String) -> String {
        let folded = FoldedText.of(name)
        return "file:" + (folded.isEmpty ? "unnamed" : folded)
    }

    /// The source of input `index`, created the first time it is named.
    mutating func sourceID(ofInput index: Int, in vault: OpenVault) throws -> Int64 {
        if let id = byInput[index] { return id }
        let name = self.name(ofInput: index)
        let key = Self.key(name)
        let id = try ids[key] ?? vault.write {
            try SourceRepository(vault.db).findOrCreate(kind: .file, baseURL: key, displayName: String(name.prefix(200)),
                                                         now: RFC3339.utc(Int64(Date().timeIntervalSince1970)))
        }
        ids[key] = id
        byInput[index] = id
        return id
    }

    /// The source of input `index` when the vault has it already (nothing is created).
    func existingSourceID(ofInput index: Int, in vault: OpenVault) throws -> Int64? {
        try vault.read { try vault.db.scalarInt("SELECT id FROM sources WHERE kind = 'file' AND base_url = ?", [Self.key(name(ofInput: index))]) }
    }

    func name(ofInput index: Int) -> String {
        names.indices.contains(index) ? names[index] : names.first ?? "Imported files"
    }
}
