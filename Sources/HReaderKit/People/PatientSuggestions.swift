import Foundation
import HReaderModel
import HReaderStore

/// Pairs of patients of the vault who may be one person seen by two sources: the same family name
/// and birth date, or an identifier both carry (which the importer did not act on, because something
/// else contradicted it or because each came from a source that names them its own way). Only a
/// suggestion with its evidence for and against: hreader never joins people by itself.
public struct PatientSuggestion: Sendable {
    public var first: Patient
    public var second: Patient
    /// Why they may be one person.
    public var evidence: [String]
    /// What says they may not be (another identifier of the same system, another birth date).
    public var against: [String]
}

extension OpenVault {
    /// `hreader patients suggest`: likely pairs, the most evidence first.
    public func patientSuggestions() throws -> [PatientSuggestion] {
        try read {
            let everyone = try patients.all().sorted { $0.id < $1.id }
            let identityRepository = PatientIdentityRepository(db)
            var identifiers: [Int64: [String]] = [:]
            for patient in everyone {
                // A person's identifiers are those of their own record and of the records merged into them.
                let records = [patient.id] + (try patients.merged(into: patient.id).map(\.id))
                identifiers[patient.id] = try records.flatMap { try identityRepository.identities(of: $0) }
                    .filter { $0.kind == .identifier }.map(\.value)
            }
            func system(_ token: String) -> String { token.firstIndex(of: "|").map { String(token[..<$0]) } ?? token }
            func normalized(_ text: String) -> String {
                text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).trimmingCharacters(in: .whitespaces)
            }
            var suggestions: [PatientSuggestion] = []
            for (i, a) in everyone.enumerated() {
                for b in everyone[(i + 1)...] {
                    var evidence: [String] = [], against: [String] = []
                    let familyA = normalized(a.lastName), familyB = normalized(b.lastName)
                    let sameFamily = !familyA.isEmpty && familyA == familyB
                    let bornA = a.birthDate ?? "", bornB = b.birthDate ?? ""
                    let sameBirth = !bornA.isEmpty && bornA == bornB
                    if sameFamily && sameBirth { evidence.append("same family name and birth date (\(a.lastName), \(bornA))") }
                    let shared = Set(identifiers[a.id] ?? []).intersection(identifiers[b.id] ?? [])
                    for token in shared.sorted() { evidence.append("both carry the identifier \(token)") }
                    guard !evidence.isEmpty else { continue }
                    let systemsB = Dictionary(grouping: identifiers[b.id] ?? [], by: system)
                    for (sys, values) in Dictionary(grouping: identifiers[a.id] ?? [], by: system).sorted(by: { $0.key < $1.key }) {
                        if let other = systemsB[sys], Set(values).isDisjoint(with: other) { against.append("their identifiers of \(sys) differ") }
                    }
                    if !bornA.isEmpty, !bornB.isEmpty, !bornA.hasPrefix(bornB), !bornB.hasPrefix(bornA) {
                        against.append("their birth dates differ (\(bornA), \(bornB))")
                    }
                    if !normalized(a.firstName).isEmpty, !normalized(b.firstName).isEmpty, normalized(a.firstName) != normalized(b.firstName) {
                        against.append("their given names differ (\(a.firstName), \(b.firstName))")
                    }
                    suggestions.append(PatientSuggestion(first: a, second: b, evidence: evidence, against: against))
                }
            }
            return suggestions.sorted { ($0.evidence.count - $0.against.count, $1.first.id) > ($1.evidence.count - $1.against.count, $0.first.id) }
        }
    }
}
