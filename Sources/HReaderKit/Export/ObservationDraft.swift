import Foundation

/// One Observation that `hreader export` will send, before it is written as FHIR JSON: made from one
/// entry, or from the samples of one hour or day (`--group`).
struct ObservationDraft: Sendable, Equatable {
    struct Identifier: Sendable, Hashable {
        var system: String
        var value: String

        /// `system|value`, the token a conditional create searches for.
        var token: String { "\(system)|\(value)" }
    }

    struct Quantity: Sendable, Equatable {
        var value: Double
        /// `Quantity.unit`, for people.
        var unit: String
        /// The UCUM code, when the unit has one; without it the quantity carries no `system` either.
        var ucum: String?
    }

    enum Effective: Sendable, Equatable {
        case none
        case instant(String)
        case period(start: String, end: String)
    }

    enum Value: Sendable, Equatable {
        case none
        case quantity(Quantity)
        case text(String)
        /// A blood-pressure panel: no value of its own, systolic and diastolic as components.
        case bloodPressure(systolic: Component, diastolic: Component)
    }

    /// One reading of a blood-pressure panel: its quantity, or, when the source did not have it,
    /// why (a component may carry a dataAbsentReason instead of a value).
    enum Component: Sendable, Equatable {
        case quantity(Quantity)
        /// A code of FHIR's data-absent-reason system: "unknown", "not-performed", "error", …
        case absent(reason: String)
    }

    var identifier: Identifier
    /// An `observation-category` code (vital-signs, activity, laboratory), nil for none.
    var category: String?
    var loinc: String
    var display: String
    /// `code.text`: the entry's description.
    var text: String
    /// The HealthKit type identifier (HKQuantityTypeIdentifierHeartRate), sent as a second coding.
    var healthKitType: String?
    var effective: Effective
    var value: Value
    /// Orders the drafts (epoch seconds of the effective time; nil sorts first).
    var time: Int64?
    /// How many vault entries this Observation stands for (1, or the samples of a group).
    var entries: Int

    static let patientSystem = "urn:hreader:patient"
    static let entrySystem = "urn:hreader:entry"
    static let groupSystem = "urn:hreader:group"
    static let healthKitSystem = "com.apple.health"
    static let dataAbsentReasonSystem = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
}
