import Foundation

public enum Relationship: String, CaseIterable, Codable, Sendable {
    case me, spouse, child, family, other
}

/// hReader's eight entry types, plus `activity`, `symptom` and `observation`.
public enum EntryType: String, CaseIterable, Codable, Sendable {
    case condition, allergy, encounter, medication, procedure, result
    case vitalSign = "vital_sign"
    case immunization, activity, symptom, observation
}

public enum SourceKind: String, CaseIterable, Codable, Sendable {
    case fhir, rhex
    case appleHealth = "apple-health"
    case file, manual
}

/// The id of the built-in source for everything typed in by the user (created by migration 1).
public let manualSourceUUID = "00000000-0000-4000-8000-000000000000"

public struct Patient: Equatable, Codable, Sendable {
    public var id: Int64
    public var uuid: String
    public var sourceID: Int64
    public var remoteID: String
    public var firstName: String
    public var lastName: String
    public var gender: String?
    public var birthDate: String?
    public var race: String?
    public var ethnicity: String?
    public var relationship: Relationship
    public var displayOrder: Int
    public var created: String
    public var updated: String
    /// The person this source record was merged into (`patients merge`); nil for a person.
    public var mergedInto: Int64? = nil

    /// A patient as the vault holds it (HReaderStore reads it from its row).
    package init(id: Int64, uuid: String, sourceID: Int64, remoteID: String, firstName: String, lastName: String, gender: String?,
                 birthDate: String?, race: String?, ethnicity: String?, relationship: Relationship, displayOrder: Int,
                 created: String, updated: String, mergedInto: Int64? = nil) {
        self.id = id; self.uuid = uuid; self.sourceID = sourceID; self.remoteID = remoteID; self.firstName = firstName
        self.lastName = lastName; self.gender = gender; self.birthDate = birthDate; self.race = race; self.ethnicity = ethnicity
        self.relationship = relationship; self.displayOrder = displayOrder; self.created = created; self.updated = updated
        self.mergedInto = mergedInto
    }

    public var displayName: String { [firstName, lastName].filter { !$0.isEmpty }.joined(separator: " ") }
    /// The patient people see: this one, or the one it was merged into.
    public var personID: Int64 { mergedInto ?? id }
}

/// A patient to add, before it has an id.
public struct NewPatient: Sendable {
    public var firstName: String
    public var lastName: String
    public var gender: String?
    public var birthDate: String?
    public var race: String?
    public var ethnicity: String?
    public var relationship: Relationship
    public var sourceID: Int64?
    public var remoteID: String?
    public var raw: String?

    public init(firstName: String, lastName: String, gender: String? = nil, birthDate: String? = nil, race: String? = nil,
                ethnicity: String? = nil, relationship: Relationship = .other, sourceID: Int64? = nil,
                remoteID: String? = nil, raw: String? = nil) {
        self.firstName = firstName; self.lastName = lastName; self.gender = gender; self.birthDate = birthDate
        self.race = race; self.ethnicity = ethnicity; self.relationship = relationship
        self.sourceID = sourceID; self.remoteID = remoteID; self.raw = raw
    }
}

/// The user's own annotations of an entry. A re-import or sync never touches them.
public struct UserFields: Equatable, Codable, Sendable {
    public var comments: String?
    public var patientQuantity: String?
    public var patientDose: String?
    public var patientDirections: String?
    public var patientPrescriber: String?
    public var deleted: Bool

    public init(comments: String? = nil, patientQuantity: String? = nil, patientDose: String? = nil,
                patientDirections: String? = nil, patientPrescriber: String? = nil, deleted: Bool = false) {
        self.comments = comments; self.patientQuantity = patientQuantity; self.patientDose = patientDose
        self.patientDirections = patientDirections; self.patientPrescriber = patientPrescriber; self.deleted = deleted
    }
}

/// What a source says about one entry: the part a re-import may replace.
public struct EntryContent: Equatable, Sendable {
    public var type: EntryType
    public var description: String
    public var status: String?
    public var date: ClinicalTime?
    public var start: ClinicalTime?
    public var end: ClinicalTime?
    public var codes: [String: [String]]
    public var valueNumber: Double?
    public var valueText: String?
    public var unit: String?
    public var dose: String?
    public var reaction: String?
    public var severity: String?
    public var raw: String?

    public init(type: EntryType, description: String, status: String? = nil, date: ClinicalTime? = nil,
                start: ClinicalTime? = nil, end: ClinicalTime? = nil, codes: [String: [String]] = [:],
                valueNumber: Double? = nil, valueText: String? = nil, unit: String? = nil, dose: String? = nil,
                reaction: String? = nil, severity: String? = nil, raw: String? = nil) {
        self.type = type; self.description = description; self.status = status; self.date = date
        self.start = start; self.end = end; self.codes = codes; self.valueNumber = valueNumber
        self.valueText = valueText; self.unit = unit; self.dose = dose; self.reaction = reaction
        self.severity = severity; self.raw = raw
    }

    /// date ?? start ?? end: where the entry sits on a timeline.
    public var effectiveTime: ClinicalTime? { date ?? start ?? end }
}

public struct Entry: Equatable, Sendable {
    public var id: Int64
    public var uuid: String
    public var patientID: Int64
    public var sourceID: Int64
    public var remoteID: String
    public var content: EntryContent
    public var user: UserFields
    public var missingAtSource: String?
    public var created: String
    public var updated: String

    /// An entry as the vault holds it (HReaderStore reads it from its row).
    package init(id: Int64, uuid: String, patientID: Int64, sourceID: Int64, remoteID: String, content: EntryContent, user: UserFields,
                 missingAtSource: String?, created: String, updated: String) {
        self.id = id; self.uuid = uuid; self.patientID = patientID; self.sourceID = sourceID; self.remoteID = remoteID
        self.content = content; self.user = user; self.missingAtSource = missingAtSource; self.created = created; self.updated = updated
    }
}

public struct TimelineItem: Equatable, Sendable {
    public var id: Int64
    public var uuid: String
    public var patientID: Int64
    public var type: String
    /// A JSON object, as posted.
    public var data: String
    public var time: Int64
    public var created: String

    /// An item as the vault holds it (HReaderStore reads it from its row).
    package init(id: Int64, uuid: String, patientID: Int64, type: String, data: String, time: Int64, created: String) {
        self.id = id; self.uuid = uuid; self.patientID = patientID; self.type = type; self.data = data; self.time = time; self.created = created
    }
}
