import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

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
