import HReaderModel

/// One patient's record as a source describes it, ready to be stored: the patient, the entries, and
/// what was left out and why.
///
/// ```swift
/// let record = try RHExMapper().map(c32JSON, remoteID: "4f4e…")
/// print(record.patient.content.lastName, record.entries.count, "skipped:", record.skipped.count)
/// ```
public struct MappedRecord: Sendable {
    public var patient: MappedPatient
    public var entries: [MappedEntry]
    /// Parts of the source that belong to this patient but were not mapped to entries.
    public var skipped: [Skip]

    public init(patient: MappedPatient, entries: [MappedEntry] = [], skipped: [Skip] = []) {
        self.patient = patient; self.entries = entries; self.skipped = skipped
    }
}

/// A patient as the source describes it. `content.raw` is the source document (RHEx: the whole c32
/// JSON; FHIR: the Patient resource) and `content.remoteID` equals `remoteID`.
public struct MappedPatient: Sendable {
    /// The patient's id at the source: the RHEx record id, or the FHIR Patient's logical id (without
    /// the `Patient/` prefix, so it fits `Patient/[id]` requests).
    public var remoteID: String
    public var content: NewPatient
    /// How other records may name this person: the FHIR Patient's identifiers (`system|value`,
    /// both parts present), its logical id, and its Bundle entry's fullUrl when that is an absolute
    /// `[base]/Patient/[id]`.
    public var identifiers: [String] = []
    public var fhirID: String?
    public var fullUrlBase: String?
    /// Which file of the input described the patient (`MappedBatch.inputs`).
    public var input = 0
    /// The ids the source document gives itself (an RHEx record's `_id`, `id` and medical record
    /// number), which a server's answer for one id must not share with another (`RHExRecordCheck`).
    public var statedIDs: [String] = []

    public init(remoteID: String, content: NewPatient) {
        self.remoteID = remoteID; self.content = content
    }
}

/// Who a resource says it is about, in a form the vault can look up.
public enum SubjectKey: Hashable, Sendable, CustomStringConvertible {
    /// `Patient/<id>`: relative (`base` nil: the input's own server or file), or absolute at `base`.
    case reference(base: String?, id: String)
    /// A logical reference (`subject.identifier`) or a contained Patient's identifier: `system|value`.
    case identifier(String)
    /// A reference that points nowhere the vault can follow (a `urn:uuid:` or `#contained` target
    /// missing from the input, a reference to something other than a Patient).
    case unresolvable(String)

    public var description: String {
        switch self {
        case let .reference(base, id): (base.map { $0 + "/" } ?? "") + "Patient/\(id)"
        case let .identifier(token): "the patient with identifier \(token)"
        case let .unresolvable(reference): reference
        }
    }
}

/// One entry as the source describes it. `content.raw` is the entry or resource JSON, lossless.
public struct MappedEntry: Equatable, Sendable {
    /// Stable across imports of the same source, so a re-import updates the entry in place:
    /// FHIR `ResourceType/id` (or the Bundle entry's fullUrl, or `ResourceType#<FNV-1a hex>` of the
    /// canonical JSON); RHEx the entry's `_id` (or `id`), else `<section>#<FNV-1a hex>`, made unique
    /// within the record when the source repeats an id (`<id>#<section>`, `<id>#<section>#2`).
    public var remoteID: String
    public var content: EntryContent
    /// Which file of the input it came from (`MappedBatch.inputs`), so that each document's entries
    /// can be filed under the source that wrote it.
    public var input = 0
    /// The resource type when it has no mapping and was kept as an `observation` entry with its raw
    /// resource, so the summary can say so.
    public var unmappedType: String?

    public init(remoteID: String, content: EntryContent, unmappedType: String? = nil) {
        self.remoteID = remoteID; self.content = content; self.unmappedType = unmappedType
    }
}

/// A part of the source that was not mapped, with the reason. Nothing is dropped silently.
public struct Skip: Equatable, Sendable, CustomStringConvertible {
    /// The FHIR resource type (`Practitioner`, `Bundle.entry`) or the RHEx section (`social_history`).
    public var kind: String
    /// The source's id for it, when it has one.
    public var remoteID: String?
    public var reason: String

    public init(kind: String, remoteID: String? = nil, reason: String) {
        self.kind = kind; self.remoteID = remoteID; self.reason = reason
    }

    public var description: String { "\(remoteID ?? kind): \(reason)" }
}

/// A mapped entry whose patient is not in the same input (a search page of Observations, an NDJSON
/// file per resource type): the caller decides which stored patient it belongs to.
public struct UnattachedEntry: Equatable, Sendable {
    /// The resource's `subject`/`patient` reference as written, nil when it has none.
    public var patientReference: String?
    /// Who the resource is about, as a key to look up; nil when it names no one.
    public var subject: SubjectKey?
    public var entry: MappedEntry

    public init(patientReference: String?, subject: SubjectKey? = nil, entry: MappedEntry) {
        self.patientReference = patientReference; self.subject = subject; self.entry = entry
    }
}

/// The result of mapping a FHIR input that may hold any number of patients.
public struct MappedBatch: Sendable {
    /// One record per Patient resource, in the order the Patients appear.
    public var records: [MappedRecord]
    /// Entries that reference a patient who is not in the input, or no patient at all.
    public var unattached: [UnattachedEntry]
    /// What belongs to no patient of the input and was not mapped (Practitioner, Organization, …).
    public var skipped: [Skip]
    /// The CDA documents of the input (file name and what it is, its producer and its sections'
    /// counts; their resources are in the records).
    public var documents: [(name: String, document: CCDADocument)] = []
    /// The files of the input, in the order they were added (`MappedEntry.input` counts in it), each
    /// with who wrote it when it says (`FHIRDocumentAuthor`, a CDA document's custodian).
    public var inputs: [(name: String, author: String?)] = []

    public init(records: [MappedRecord] = [], unattached: [UnattachedEntry] = [], skipped: [Skip] = []) {
        self.records = records; self.unattached = unattached; self.skipped = skipped
    }

    /// Every skip: the batch's own and each record's.
    public var allSkipped: [Skip] { skipped + records.flatMap(\.skipped) }

    /// Mapped entries, attached or not.
    public var entryCount: Int { records.reduce(unattached.count) { $0 + $1.entries.count } }
}
