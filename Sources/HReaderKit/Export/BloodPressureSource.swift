import Foundation

/// What the source Observation of a blood-pressure entry said about its two readings, read from the
/// entry's raw FHIR resource: which components carried a value, and the dataAbsentReason of those
/// that did not. Export sends a half reading as it came (one value, one absent), never as one number.
struct BloodPressureSource {
    struct Component {
        var hasValue: Bool
        /// The data-absent-reason code the source gave, if any.
        var absentReason: String?
    }

    /// By LOINC code; empty when the raw is not a FHIR Observation with components.
    private(set) var components: [String: Component] = [:]

    init(raw: String?) {
        guard let data = raw?.data(using: .utf8),
              let observation = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              observation["resourceType"] as? String == "Observation" else { return }
        for component in observation["component"] as? [[String: Any]] ?? [] {
            let reasons = (component["dataAbsentReason"] as? [String: Any])?["coding"] as? [[String: Any]] ?? []
            let reason = reasons.first { $0["system"] as? String == ObservationDraft.dataAbsentReasonSystem }?["code"] as? String
            let read = Component(hasValue: component.keys.contains { $0.hasPrefix("value") }, absentReason: reason)
            for coding in (component["code"] as? [String: Any])?["coding"] as? [[String: Any]] ?? []
            where coding["system"] as? String == ExportResources.loincSystem {
                if let code = coding["code"] as? String { components[code] = read }
            }
        }
    }
}
