import Foundation
import HReaderModel

/// What a summary for a clinician holds (docs/summary.md): the patient; their active problems and
/// allergies; current medications; every immunization; and, from the recent window, the latest
/// result of each test and the latest vital sign of each kind. Struck-through entries are never in it.
/// `hreader summary --format ips|html` writes it as an IPS document Bundle (`IPSDocument`) or a
/// printable page (Kit's `SummaryPage`); Kit's `OpenVault.clinicalSummary` reads it from the vault.
public struct ClinicalSummary: Sendable {
    public let patient: Patient
    public let generated: Date
    /// Results and vital signs are taken from this time on.
    public let since: ClinicalTime
    public let problems: [Entry]
    public let allergies: [Entry]
    public let medications: [Entry]
    public let immunizations: [Entry]
    public let results: [Entry]
    public let vitalSigns: [Entry]
    /// Where the patient's records came from, with when each was last synced.
    public let sources: [Source]
    /// Each source's kind, by id (Apple Health samples are exported with their own identifiers).
    package let sourceKinds: [Int64: SourceKind]
    /// How each entry a SMART Health Card brought was checked, by entry id (the verified badge).
    public package(set) var verifications: [Int64: EntryVerification] = [:]

    package init(patient: Patient, generated: Date, since: ClinicalTime, problems: [Entry], allergies: [Entry], medications: [Entry],
                 immunizations: [Entry], results: [Entry], vitalSigns: [Entry], sources: [Source], sourceKinds: [Int64: SourceKind]) {
        self.patient = patient; self.generated = generated; self.since = since
        self.problems = problems; self.allergies = allergies; self.medications = medications; self.immunizations = immunizations
        self.results = results; self.vitalSigns = vitalSigns; self.sources = sources; self.sourceKinds = sourceKinds
    }

    public struct Source: Sendable, Equatable {
        public let id: Int64
        public let kind: SourceKind
        public let name: String
        public let baseURL: String?
        /// RFC 3339, nil when it was never synced (typed in, or imported from a file once).
        public let lastSync: String?

        package init(id: Int64, kind: SourceKind, name: String, baseURL: String?, lastSync: String?) {
            self.id = id; self.kind = kind; self.name = name; self.baseURL = baseURL; self.lastSync = lastSync
        }
    }

    /// The default recent window for results and vital signs: two years back from now, so a yearly
    /// lab test is still there with a margin, and readings from long ago are not shown as current.
    public static let defaultWindow: TimeInterval = 2 * 365.25 * 86_400

    /// Statuses that mean a medication is no longer taken (FHIR's MedicationRequest and
    /// MedicationStatement codes, and hData's words), or is a note that keeps a document section's
    /// narrative (`FHIRMapper.narrativeStatus`), not a medication.
    package static let pastMedicationStatuses: Set<String> = [
        "completed", "stopped", "cancelled", "entered-in-error", "not-taken", "inactive", "ended", "discontinued", "draft",
        FHIRMapper.narrativeStatus,
    ]
    /// Statuses of an immunization that was not given (or a section's narrative kept as a note).
    package static let notGivenStatuses: Set<String> = ["not-done", "entered-in-error", "cancelled", FHIRMapper.narrativeStatus]

    /// Groups the latest reading of a kind: the first LOINC code, else the first code, else the description.
    static func kind(of entry: Entry) -> String {
        let codes = entry.content.codes
        for key in ["LOINC", "http://loinc.org", "urn:oid:2.16.840.1.113883.6.1"] {
            if let code = codes[key]?.first { return "LOINC|" + code }
        }
        if let key = codes.keys.sorted().first, let code = codes[key]?.first { return key + "|" + code }
        return "text|" + entry.content.description.lowercased()
    }

    /// The latest entry of each kind, newest first.
    package static func latestOfEachKind(_ entries: [Entry]) -> [Entry] {
        var latest: [String: Entry] = [:]
        for entry in entries {
            let key = kind(of: entry)
            if let seen = latest[key], (seen.content.effectiveTime?.epoch ?? .min) >= (entry.content.effectiveTime?.epoch ?? .min) { continue }
            latest[key] = entry
        }
        return newestFirst(Array(latest.values))
    }

    package static func newestFirst(_ entries: [Entry]) -> [Entry] {
        entries.sorted { ($0.content.effectiveTime?.epoch ?? .min, $0.id) > ($1.content.effectiveTime?.epoch ?? .min, $1.id) }
    }
}
