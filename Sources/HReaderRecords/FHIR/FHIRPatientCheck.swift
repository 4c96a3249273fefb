import HReaderJSON

/// Whether the resources a server returned for one patient are about that patient. A server is
/// never trusted to have filtered: one that honours only `_id` answers `Observation?patient=A`
/// with everyone's Observations, and a `$everything` may bring linked or unrelated people. A
/// resource is kept only when what it says about its patient names the patient asked for.
///
/// ```swift
/// let check = FHIRPatientCheck(patientID: "A", base: "https://fhir.example.org/r4")
/// switch check.verdict(on: observation, patient: patientResourceOfA) { case .patient: keep … }
/// ```
public struct FHIRPatientCheck: Sendable {
    /// What a resource says about the patient asked for.
    public enum Verdict: Equatable, Sendable {
        /// Names the patient asked for (by id at this server, by one of their identifiers, or by the
        /// fullUrl of their Patient entry).
        case patient
        /// Names another patient of this server.
        case otherPatient
        /// A clinical resource whose patient cannot be checked (it names no patient, a Group, a
        /// contained Patient without an identifier, another server's Patient, an identifier that is
        /// not the patient's): not filed under anyone.
        case unchecked(String)
        /// Not about a patient at all (Practitioner, Organization, Medication, Location): kept, since
        /// the patient's records use it (a MedicationRequest's `medicationReference`).
        case notPatientSpecific
    }

    /// The patient's logical id at the server.
    public let patientID: String
    /// The server's base URL (no trailing slash): absolute references under it are its own.
    public let base: String

    public init(patientID: String, base: String) {
        self.patientID = patientID
        self.base = Self.trimmed(base)
    }

    /// How the answer names the patient: their identifiers (`system|value`), the fullUrls of their
    /// Patient entries, and the base those fullUrls declare (a server behind a proxy may write its
    /// absolute references with the base it knows itself by).
    struct Identity {
        var identifiers: Set<String> = []
        var systems: Set<String> = []
        var fullUrls: Set<String> = []
        var bases: Set<String> = []
    }

    /// The patient as the answer's own Patient resources (those with the asked id) describe them.
    func identity(in resources: [FHIRInput.Resource]) -> Identity {
        var identity = Identity(bases: [base])
        for resource in resources where resource.type == "Patient" && resource.object["id"]?.string == patientID {
            for token in FHIRMapper.identifiers(of: resource.object) {
                identity.identifiers.insert(token)
                identity.systems.insert(String(token.prefix { $0 != "|" }))
            }
            if let fullUrl = resource.fullUrl {
                identity.fullUrls.insert(fullUrl)
                if case let .reference(fullBase?, id)? = FHIRMapper.patientKey(fullUrl), id == patientID {
                    identity.bases.insert(Self.trimmed(fullBase))
                }
            }
        }
        return identity
    }

    /// The verdict on one non-Patient resource of the answer.
    func verdict(on resource: FHIRInput.Resource, identity: Identity) -> Verdict {
        let (reference, key) = FHIRMapper.subject(of: resource.object)
        if let reference, identity.fullUrls.contains(reference) { return .patient }
        switch key {
        case nil:
            // Only the types that become entries must name their patient; the others (Medication,
            // Practitioner, …) are read through them or skipped by the mapper as not about anyone.
            return FHIREntryMapping.supportedTypes.contains(resource.type) ? .unchecked("it names no patient") : .notPatientSpecific
        case let .reference(refBase, id)?:
            if let refBase, !identity.bases.contains(Self.trimmed(refBase)) {
                return .unchecked("it names a Patient at another server")
            }
            return id == patientID ? .patient : .otherPatient
        case let .identifier(token)?:
            if identity.identifiers.contains(token) { return .patient }
            // The same identifier system with another value is someone else; another system proves nothing.
            return identity.systems.contains(String(token.prefix { $0 != "|" })) ? .otherPatient
                : .unchecked("it names the patient by an identifier the Patient does not carry")
        case let .unresolvable(what)?:
            return .unchecked("its patient reference \(Self.short(what)) cannot be followed")
        }
    }

    private static func trimmed(_ base: String) -> String {
        var text = base
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    private static func short(_ text: String) -> String { text.count > 60 ? String(text.prefix(60)) + "…" : text }
}

/// Resources of one request that were not about the patient asked for, and were left out.
public struct FHIRRejectedResources: Sendable, Equatable {
    /// The request as a person reads it: `Observation?patient=A`, `Patient/A/$everything`.
    public var request: String
    /// Resources about other patients of the server.
    public var aboutOthers = 0
    /// Clinical resources whose patient could not be checked, by reason.
    public var unchecked: [String: Int] = [:]

    public init(request: String) { self.request = request }

    public var uncheckedCount: Int { unchecked.values.reduce(0, +) }
    public var isEmpty: Bool { aboutOthers == 0 && unchecked.isEmpty }

    /// The server's faults in `all` (one import's requests), each named once: one line for
    /// resources about other patients, one per reason a patient could not be checked, each naming
    /// the first request that showed it and how many more did.
    public static func warnings(_ all: [FHIRRejectedResources]) -> [String] {
        var lines: [String] = []
        let withOthers = all.filter { $0.aboutOthers > 0 }
        if let first = withOthers.first {
            let total = withOthers.reduce(0) { $0 + $1.aboutOthers }
            lines.append("the server returned \(total) resource\(total == 1 ? "" : "s") about other patients for \(first.request)"
                         + more(withOthers.count - 1) + "; \(total == 1 ? "it was" : "they were") not imported")
        }
        for reason in Set(all.flatMap(\.unchecked.keys)).sorted() {
            let requests = all.filter { $0.unchecked[reason] != nil }
            let total = requests.reduce(0) { $0 + $1.unchecked[reason]! }
            lines.append("the server returned \(total) resource\(total == 1 ? "" : "s") for \(requests[0].request)" + more(requests.count - 1)
                         + " whose patient cannot be checked (\(reason)); \(total == 1 ? "it was" : "they were") not imported")
        }
        return lines
    }

    private static func more(_ n: Int) -> String { n == 0 ? "" : " and \(n) more request\(n == 1 ? "" : "s")" }
}

extension FHIRResponseSet {
    /// Leaves out of the set every resource of `requests` (ranges of resource indices, each read by
    /// one request) that is not about `check`'s patient, and says per request what was left out.
    /// Patient resources stay (the mapper files only the patient asked for); so do resources that are
    /// not about a patient.
    public mutating func keepOnly(aboutPatient check: FHIRPatientCheck, requests: [(request: String, resources: Range<Int>)])
        -> [FHIRRejectedResources] {
        let identity = check.identity(in: input.resources)
        var rejected: [FHIRRejectedResources] = []
        var drop: Set<Int> = []
        for (request, range) in requests {
            var tally = FHIRRejectedResources(request: request)
            for index in range where index < input.resources.count && input.resources[index].type != "Patient" {
                switch check.verdict(on: input.resources[index], identity: identity) {
                case .patient, .notPatientSpecific: continue
                case .otherPatient: tally.aboutOthers += 1
                case let .unchecked(reason): tally.unchecked[reason, default: 0] += 1
                }
                drop.insert(index)
            }
            if !tally.isEmpty { rejected.append(tally) }
        }
        if !drop.isEmpty { removeResources(at: drop) }
        return rejected
    }
}
