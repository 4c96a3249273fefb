import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// Decides who in the vault a record is about: the worst error a health record can make is to file
/// a record under the wrong person, so a match is made only on an identity the record states (an
/// identifier, or the id its source gives the patient), and anything less than one clear answer is
/// `ambiguous` or `none`, never a guess.
struct PatientMatcher {
    typealias Identity = PatientIdentityRepository.Identity

    let db: Database
    let sourceID: Int64
    /// Where relative `Patient/<id>` references point: a server's base URL, or `file`.
    let scope: String
    /// Whether an id in this scope names one person for certain (a server's own ids) or only
    /// probably (files gathered from anywhere share the scope `file`, and `Patient/1` in two
    /// downloads may be two people: then demographics must not contradict each other).
    var idsAreAuthoritative: Bool { scope != Self.fileScope }

    static let fileScope = "file"

    enum Match {
        /// Already in the vault.
        case found(Patient)
        /// Nobody here yet: create the patient with this remote id.
        case new(remoteID: String)
        /// More than one patient fits, or the record contradicts the one its id names and another fits.
        case ambiguous(String)
    }

    var identities: PatientIdentityRepository { PatientIdentityRepository(db) }
    var patients: PatientRepository { PatientRepository(db) }

    /// The identities a described patient brings: its identifiers and the ids its source (and its
    /// Bundle entry's absolute fullUrl) give it.
    func identities(of patient: MappedPatient) -> [Identity] {
        var all = patient.identifiers.map { Identity(.identifier, $0) }
        if let id = patient.fhirID {
            all.append(.reference(scope: scope, id: id))
            if let base = patient.fullUrlBase, base != scope { all.append(.reference(scope: base, id: id)) }
        }
        return all
    }

    /// Who a patient described by a source is. For a server: the patient this server's id already
    /// names, else the one its identifiers name. For files: the one its identifiers name, else the
    /// one the same `Patient/<id>` names if nothing contradicts it (birth date, family name, an
    /// identifier of the same system), else a new patient.
    func match(_ patient: MappedPatient) throws -> Match {
        var notes: [String] = []
        return try match(patient, notes: &notes)
    }

    /// `match`, saying in `notes` which identifier matches were contradicted and so decided nothing.
    func match(_ patient: MappedPatient, notes: inout [String]) throws -> Match {
        var byReference: Set<Int64> = []
        for identity in identities(of: patient) where identity.kind == .reference {
            byReference.formUnion(try identities.patients(identity))
        }
        if let row = try patients.find(sourceID: sourceID, remoteID: patient.remoteID) { byReference.insert(row.id) }

        if idsAreAuthoritative, !byReference.isEmpty {
            return try one(byReference, preferring: patient.remoteID, else: "its id \(patient.remoteID) at \(scope) names")
        }
        var byIdentifier: Set<Int64> = []
        for token in patient.identifiers {
            for id in try identities.patients(Identity(.identifier, token)) where !byIdentifier.contains(id) {
                // Real documents reuse identifiers (a provider's NPI as the patient id, one test SSN on
                // two people): a match the rest of the record contradicts decides nothing.
                if let stored = try patients.get(id: id), let why = try contradiction(stored, patient) {
                    notes.append("Patient/\(patient.remoteID): its identifier \(token) names patient \(id) of the vault, but \(why); "
                                 + "the identifier was not taken as the same person")
                    continue
                }
                byIdentifier.insert(id)
            }
        }
        if !byIdentifier.isEmpty {
            return try one(byIdentifier, preferring: patient.remoteID, else: "its identifiers name")
        }
        var compatible: [Patient] = []
        for id in byReference.sorted() {
            if let stored = try patients.get(id: id), try self.compatible(stored, patient) { compatible.append(stored) }
        }
        if compatible.count > 1, Set(compatible.map(\.personID)).count == 1 {
            return try one(Set(compatible.map(\.id)), preferring: patient.remoteID, else: "")
        }
        if compatible.count == 1 { return .found(compatible[0]) }
        if compatible.count > 1 {
            return .ambiguous("Patient/\(patient.remoteID) fits patients \(compatible.map { String($0.id) }.joined(separator: " and ")) of the vault")
        }
        return .new(remoteID: try freeRemoteID(patient.remoteID))
    }

    /// The one record `ids` name. Records merged into one person (`patients merge`) are one
    /// answer: this source's own record of them when it is among them, else the person's row.
    private func one(_ ids: Set<Int64>, preferring remoteID: String, else phrase: String) throws -> Match {
        let rows = try ids.sorted().compactMap { try patients.get(id: $0) }
        guard rows.count == ids.count, let first = rows.first, rows.allSatisfy({ $0.personID == first.personID }) else {
            return .ambiguous("\(phrase) \(ids.count) patients of the vault (\(ids.sorted().map(String.init).joined(separator: ", ")))")
        }
        let own = rows.first { $0.sourceID == sourceID && $0.remoteID == remoteID }
        return .found(own ?? rows.first { $0.mergedInto == nil } ?? first)
    }

    /// Whether nothing the two say about the person contradicts the other: partial birth dates may
    /// refine each other, family names compare without case, and identifiers of one system must agree.
    func compatible(_ stored: Patient, _ incoming: MappedPatient) throws -> Bool {
        if let a = stored.birthDate, let b = incoming.content.birthDate, !a.isEmpty, !b.isEmpty, !a.hasPrefix(b), !b.hasPrefix(a) {
            return false
        }
        let family = (stored.lastName.trimmingCharacters(in: .whitespaces), incoming.content.lastName.trimmingCharacters(in: .whitespaces))
        if !family.0.isEmpty, !family.1.isEmpty, family.0.caseInsensitiveCompare(family.1) != .orderedSame { return false }
        let storedSystems = Dictionary(grouping: try identities.identities(of: stored.id).filter { $0.kind == .identifier }.map(\.value),
                                       by: Self.system)
        for token in incoming.identifiers {
            if let values = storedSystems[Self.system(token)], !values.contains(token) { return false }
        }
        return true
    }

    /// Why a stored patient, found by a shared identifier, is not the person a record describes: an
    /// identifier of the same system with another value (two different SSNs), or both another
    /// birth date and another name. Nil when nothing contradicts.
    func contradiction(_ stored: Patient, _ incoming: MappedPatient) throws -> String? {
        let storedSystems = Dictionary(grouping: try identities.identities(of: stored.id).filter { $0.kind == .identifier }.map(\.value),
                                       by: Self.system)
        let incomingSystems = Dictionary(grouping: incoming.identifiers, by: Self.system)
        for (system, values) in incomingSystems {
            if let known = storedSystems[system], Set(known).isDisjoint(with: values) {
                return "their identifiers of \(system) differ"
            }
        }
        func differ(_ a: String?, _ b: String?) -> Bool {
            let a = (a ?? "").trimmingCharacters(in: .whitespaces), b = (b ?? "").trimmingCharacters(in: .whitespaces)
            return !a.isEmpty && !b.isEmpty && a.caseInsensitiveCompare(b) != .orderedSame
        }
        let birthDatesDiffer: Bool = {
            guard let a = stored.birthDate, let b = incoming.content.birthDate, !a.isEmpty, !b.isEmpty else { return false }
            return !a.hasPrefix(b) && !b.hasPrefix(a)
        }()
        let namesDiffer = differ(stored.lastName, incoming.content.lastName) || differ(stored.firstName, incoming.content.firstName)
        return birthDatesDiffer && namesDiffer ? "the birth date and the name differ" : nil
    }

    /// `remoteID`, or `remoteID#2`, `#3`… when another person from this source already has it.
    private func freeRemoteID(_ remoteID: String) throws -> String {
        var candidate = remoteID
        var n = 1
        while try patients.find(sourceID: sourceID, remoteID: candidate) != nil {
            n += 1
            candidate = "\(remoteID)#\(n)"
        }
        return candidate
    }

    /// Who a resource's subject names among the patients of the vault.
    enum Subject {
        case patient(Patient)
        /// Nobody yet: the identity to wait for.
        case waiting(Identity)
        case ambiguous([Int64])
        /// A reference the vault cannot follow at all.
        case unresolvable(String)
    }

    func identity(of key: SubjectKey) -> Identity? {
        switch key {
        case let .reference(base, id): .reference(scope: base ?? scope, id: id)
        case let .identifier(token): Identity(.identifier, token)
        case .unresolvable: nil
        }
    }

    func resolve(_ key: SubjectKey) throws -> Subject {
        guard let identity = identity(of: key) else { return .unresolvable(key.description) }
        let rows = try identities.patients(identity).compactMap { try patients.get(id: $0) }
        // Several records of one person (merged) are that person: the person's own row files it.
        if Set(rows.map(\.personID)).count > 1 { return .ambiguous(rows.map(\.id)) }
        if let first = rows.first { return .patient(rows.first { $0.mergedInto == nil } ?? first) }
        return .waiting(identity)
    }

    private static func system(_ token: String) -> String {
        token.firstIndex(of: "|").map { String(token[..<$0]) } ?? token
    }
}
