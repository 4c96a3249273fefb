import Foundation
import HReaderJSON

/// What the source Observation of a blood-pressure entry said about its two readings, read from the
/// entry's raw FHIR resource: which components carried a value, and the dataAbsentReason of those
/// that did not. Export sends a half reading as it came (one value, one absent), never as one number.
package struct BloodPressureSource {
    package struct Component {
        package var hasValue: Bool
        /// The data-absent-reason code the source gave, if any.
        package var absentReason: String?

        package init(hasValue: Bool, absentReason: String?) { self.hasValue = hasValue; self.absentReason = absentReason }
    }

    /// By LOINC code; empty when the raw is not a FHIR Observation with components.
    package private(set) var components: [String: Component] = [:]

    package init(raw: String?) {
        guard let raw, let observation = (try? JSONParser.parse(raw))?.object,
              observation["resourceType"]?.string == "Observation" else { return }
        for component in observation["component"]?.array ?? [] {
            guard let component = component.object else { continue }
            let reasons = component["dataAbsentReason"]?["coding"]?.array ?? []
            let reason = reasons.first { $0["system"]?.string == ObservationDraft.dataAbsentReasonSystem }?["code"]?.string
            let read = Component(hasValue: component.keys.contains { $0.hasPrefix("value") }, absentReason: reason)
            for coding in component["code"]?["coding"]?.array ?? [] where coding["system"]?.string == ExportResources.loincSystem {
                if let code = coding["code"]?.string { components[code] = read }
            }
        }
    }
}
