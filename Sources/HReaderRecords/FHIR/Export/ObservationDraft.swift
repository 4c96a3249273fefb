import Foundation

/// One Observation that `hreader export` will send, before it is written as FHIR JSON: made from one
/// entry, or from the samples of one hour or day (`--group`).
package struct ObservationDraft: Sendable, Equatable {
    package struct Identifier: Sendable, Hashable {
        package var system: String
        package var value: String

        package init(system: String, value: String) { self.system = system; self.value = value }

        /// `system|value`, the token a conditional create searches for.
        package var token: String { "\(system)|\(value)" }
    }

    package struct Quantity: Sendable, Equatable {
        package var value: Double
        /// `Quantity.unit`, for people.
        package var unit: String
        /// The UCUM code, when the unit has one; without it the quantity carries no `system` either.
        package var ucum: String?

        package init(value: Double, unit: String, ucum: String?) { self.value = value; self.unit = unit; self.ucum = ucum }
    }

    package enum Effective: Sendable, Equatable {
        case none
        case instant(String)
        case period(start: String, end: String)
    }

    package enum Value: Sendable, Equatable {
        case none
        case quantity(Quantity)
        case text(String)
        /// A blood-pressure panel: no value of its own, systolic and diastolic as components.
        case bloodPressure(systolic: Component, diastolic: Component)
    }

    /// One reading of a blood-pressure panel: its quantity, or, when the source did not have it,
    /// why (a component may carry a dataAbsentReason instead of a value).
    package enum Component: Sendable, Equatable {
        case quantity(Quantity)
        /// A code of FHIR's data-absent-reason system: "unknown", "not-performed", "error", …
        case absent(reason: String)
    }

    package var identifier: Identifier
    /// An `observation-category` code (vital-signs, activity, laboratory), nil for none.
    package var category: String?
    package var loinc: String
    package var display: String
    /// `code.text`: the entry's description.
    package var text: String
    /// The HealthKit type identifier (HKQuantityTypeIdentifierHeartRate), sent as a second coding.
    package var healthKitType: String?
    package var effective: Effective
    package var value: Value
    /// Orders the drafts (epoch seconds of the effective time; nil sorts first).
    package var time: Int64?
    /// How many vault entries this Observation stands for (1, or the samples of a group).
    package var entries: Int

    package init(identifier: Identifier, category: String?, loinc: String, display: String, text: String, healthKitType: String?,
                 effective: Effective, value: Value, time: Int64?, entries: Int) {
        self.identifier = identifier; self.category = category; self.loinc = loinc; self.display = display; self.text = text
        self.healthKitType = healthKitType; self.effective = effective; self.value = value; self.time = time; self.entries = entries
    }

    package static let patientSystem = "urn:hreader:patient"
    package static let entrySystem = "urn:hreader:entry"
    package static let groupSystem = "urn:hreader:group"
    package static let healthKitSystem = "com.apple.health"
    package static let dataAbsentReasonSystem = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
}
