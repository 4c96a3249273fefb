import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// What a summary for a clinician holds (docs/summary.md): the patient; their active problems and
/// allergies; current medications; every immunization; and, from the recent window, the latest
/// result of each test and the latest vital sign of each kind. Struck-through entries are never in it.
/// `hreader summary --format ips|html` writes it as an IPS document Bundle or a printable page.
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
    let sourceKinds: [Int64: SourceKind]
    /// How each entry a SMART Health Card brought was checked, by entry id (the verified badge).
    public internal(set) var verifications: [Int64: EntryVerification] = [:]

    public struct Source: Sendable, Equatable {
        public let id: Int64
        public let kind: SourceKind
        public let name: String
        public let baseURL: String?
        /// RFC 3339, nil when it was never synced (typed in, or imported from a file once).
        public let lastSync: String?
    }

    /// The default recent window for results and vital signs: two years back from now, so a yearly
    /// lab test is still there with a margin, and readings from long ago are not shown as current.
    public static let defaultWindow: TimeInterval = 2 * 365.25 * 86_400

    /// Statuses that mean a medication is no longer taken (FHIR's MedicationRequest and
    /// MedicationStatement codes, and hData's words), or is a note that keeps a document section's
    /// narrative (`FHIRMapper.narrativeStatus`), not a medication.
    static let pastMedicationStatuses: Set<String> = [
        "completed", "stopped", "cancelled", "entered-in-error", "not-taken", "inactive", "ended", "discontinued", "draft",
        FHIRMapper.narrativeStatus,
    ]
    /// Statuses of an immunization that was not given (or a section's narrative kept as a note).
    static let notGivenStatuses: Set<String> = ["not-done", "entered-in-error", "cancelled", FHIRMapper.narrativeStatus]

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
    static func latestOfEachKind(_ entries: [Entry]) -> [Entry] {
        var latest: [String: Entry] = [:]
        for entry in entries {
            let key = kind(of: entry)
            if let seen = latest[key], (seen.content.effectiveTime?.epoch ?? .min) >= (entry.content.effectiveTime?.epoch ?? .min) { continue }
            latest[key] = entry
        }
        return newestFirst(Array(latest.values))
    }

    static func newestFirst(_ entries: [Entry]) -> [Entry] {
        entries.sorted { ($0.content.effectiveTime?.epoch ?? .min, $0.id) > ($1.content.effectiveTime?.epoch ?? .min, $1.id) }
    }
}

extension OpenVault {
    /// The summary of a patient's record for a clinician; results and vital signs from `since`
    /// (default: `ClinicalSummary.defaultWindow` before `now`). Each list is read by its own indexed
    /// query: the problems, allergies, medications and immunizations of their types, the newest
    /// result and vital sign of each kind since `since`, and Apple Health samples one per series (the
    /// latest), never all of them (issue 41: what the summary does not show is not read).
    public func clinicalSummary(of patient: Patient, since: ClinicalTime? = nil, now: Date = Date()) throws -> ClinicalSummary {
        let since = since ?? ClinicalTime(epoch: Int64(now.timeIntervalSince1970 - ClinicalSummary.defaultWindow))
        return try read {
            func of(_ type: EntryType) throws -> [Entry] {
                try entries.list(patientID: patient.id, type: type, samples: false).filter { !$0.user.deleted }
            }
            // The newest of each stored kind: the newest of a kind as the summary groups them (by code) is among them.
            func recent(_ type: EntryType) throws -> [Entry] { try entries.newestOfEachKind(patientID: patient.id, type: type, from: since.epoch) }

            let problems = try of(.condition).filter { PatientSummary.isActive($0, now: now) }
            let allergies = try of(.allergy).filter { PatientSummary.isActive($0, now: now) }
            let medications = try of(.medication).filter { entry in
                if let status = entry.content.status?.lowercased(), ClinicalSummary.pastMedicationStatuses.contains(status) { return false }
                if let end = entry.content.end, end.date < now { return false }
                return true
            }
            let immunizations = try of(.immunization).filter { entry in
                !(entry.content.status.map { ClinicalSummary.notGivenStatuses.contains($0.lowercased()) } ?? false)
            }
            let samples = try entries.latestSamples(patientID: patient.id, type: .vitalSign, from: since.epoch)

            let repository = SourceRepository(db)
            let used = try entries.sourceIDs(patientID: patient.id).union([patient.sourceID])
            let allSources = try repository.all()
            let sources = try allSources.filter { used.contains($0.id) }.map { source in
                ClinicalSummary.Source(id: source.id, kind: source.kind, name: source.displayName, baseURL: source.baseURL,
                                       lastSync: try repository.stored(id: source.id)?.lastSync)
            }
            var summary = ClinicalSummary(
                patient: patient, generated: now, since: since,
                problems: ClinicalSummary.newestFirst(problems), allergies: ClinicalSummary.newestFirst(allergies),
                medications: ClinicalSummary.newestFirst(medications), immunizations: ClinicalSummary.newestFirst(immunizations),
                results: ClinicalSummary.latestOfEachKind(try recent(.result)),
                vitalSigns: ClinicalSummary.latestOfEachKind(try recent(.vitalSign) + samples),
                sources: sources,
                sourceKinds: Dictionary(allSources.map { ($0.id, $0.kind) }, uniquingKeysWith: { first, _ in first }))
            summary.verifications = try cardChecks(of: SummarySection.allCases.flatMap { summary.entries(in: $0) })
            return summary
        }
    }
}
