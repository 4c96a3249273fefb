import HReaderModel

/// Words for entry types, for entries whose source gives no description.
public enum EntryLabel {
    public static func name(_ type: EntryType) -> String {
        switch type {
        case .condition: "Condition"
        case .allergy: "Allergy"
        case .encounter: "Encounter"
        case .medication: "Medication"
        case .procedure: "Procedure"
        case .result: "Result"
        case .vitalSign: "Vital sign"
        case .immunization: "Immunization"
        case .activity: "Activity"
        case .symptom: "Symptom"
        case .observation: "Observation"
        }
    }

    /// "Allergy (RxNorm 1191)": the type and its first code (a named system before `Unknown`), or
    /// the type alone.
    static func fallbackDescription(_ type: EntryType, codes: [String: [String]]) -> String {
        let systems = codes.keys.sorted { ($0 == "Unknown" ? 1 : 0, $0) < ($1 == "Unknown" ? 1 : 0, $1) }
        guard let system = systems.first(where: { codes[$0]?.isEmpty == false }), let code = codes[system]?.first else {
            return name(type)
        }
        return "\(name(type)) (\(system) \(code))"
    }
}
