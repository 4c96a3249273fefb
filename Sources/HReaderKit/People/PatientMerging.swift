import Foundation
import HReaderModel
import HReaderStore

/// `hreader patients merge|unmerge|merges`: one person seen by several sources becomes one patient,
/// reversibly (PatientMergeRepository keeps what each merge changed).
public struct PatientMergeResult: Sendable {
    public var merge: PatientMergeRepository.Merge
    public var keep: Patient
    public var other: Patient
    /// Entries now shown under the person they were merged into or given back to.
    public var entriesMoved: Int
}

extension OpenVault {
    /// Merges `other` into `keep` in one transaction, and regroups the facts KEEP's record states.
    public func mergePatients(keep: Patient, other: Patient) throws -> PatientMergeResult {
        try write {
            let repository = PatientMergeRepository(db)
            let before = try entries.count(patientID: other.id)
            do {
                let merge = try repository.merge(keep: keep.id, other: other.id)
                try FactGrouping(db).regroup(patientID: keep.id)
                try audit.record("patient.merge", subject: keep.uuid, detail: "merge \(merge.id): patient \(other.id) into \(keep.id)")
                return PatientMergeResult(merge: merge, keep: keep, other: other, entriesMoved: before)
            } catch let failure as PatientMergeRepository.Failure {
                throw HReaderError.usage(failure.description)
            }
        }
    }

    /// Undoes merge `mergeID`, or the latest merge into `keep` not undone yet.
    public func unmergePatient(keep: Patient?, mergeID: Int64?) throws -> PatientMergeResult {
        try write {
            let repository = PatientMergeRepository(db)
            let id: Int64
            if let mergeID {
                guard let merge = try repository.get(mergeID), keep == nil || merge.keepID == keep!.id else {
                    throw HReaderError.usage("no merge \(mergeID)\(keep.map { " into patient \($0.id)" } ?? ""); see 'hreader patients merges'")
                }
                id = merge.id
            } else if let keep {
                guard let latest = try repository.merges(into: keep.id, includingUndone: false).first else {
                    throw HReaderError.usage("nothing was merged into patient \(keep.id); see 'hreader patients merges'")
                }
                id = latest.id
            } else {
                throw HReaderError.usage("name the patient merged into, or --merge ID")
            }
            do {
                let merge = try repository.unmerge(id)
                let moved = try entries.count(patientID: merge.otherID)
                try FactGrouping(db).regroup(patientID: merge.keepID)
                try FactGrouping(db).regroup(patientID: merge.otherID)
                try audit.record("patient.unmerge", subject: nil, detail: "merge \(merge.id): patient \(merge.otherID) out of \(merge.keepID)")
                return PatientMergeResult(merge: merge, keep: try patients.get(id: merge.keepID)!, other: try patients.get(id: merge.otherID)!,
                                          entriesMoved: moved)
            } catch let failure as PatientMergeRepository.Failure {
                throw HReaderError.usage(failure.description)
            }
        }
    }

    /// Every merge (the latest first), with the two patients' rows.
    public func patientMerges() throws -> [(merge: PatientMergeRepository.Merge, keep: Patient?, other: Patient?)] {
        try read {
            try PatientMergeRepository(db).merges().map { ($0, try patients.get(id: $0.keepID), try patients.get(id: $0.otherID)) }
        }
    }

    /// The source records merged into a person.
    public func mergedRecords(of person: Patient) throws -> [Patient] {
        try read { try patients.merged(into: person.id) }
    }
}
