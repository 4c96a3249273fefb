import HReaderModel

extension FHIREntryMapping {
    /// An Observation: its category chooses the entry type, its value[x] (or its components, as in
    /// a blood-pressure panel: "120/80" mm[Hg]) the value; the components stay whole in `raw`.
    func observation(_ r: JSONReader) throws -> EntryContent {
        let code = try r.concept("code")
        var components = try r.objects("component").map { (concept: try $0.concept("code"), value: try value(of: $0)) }
        let isBloodPressure = code.map { !Set($0.loincCodes).isDisjoint(with: FHIRCodes.bloodPressurePanels) } ?? false
        // A blood-pressure component without a value (only a dataAbsentReason) is not part of the
        // reading: neither its code nor a place in "120/80" (see `halfBloodPressure`).
        if isBloodPressure { components.removeAll { $0.value == nil } }
        var content = EntryContent(
            type: try observationType(r),
            description: code?.text ?? (isBloodPressure ? "Blood pressure" : nil) ?? code?.description
                ?? EntryLabel.name(.observation),
            status: try r.status("status"),
            codes: Concept(codings: (code?.codings ?? []) + components.flatMap { $0.concept?.codings ?? [] }).codes)
        if let value = try value(of: r) {
            (content.valueNumber, content.valueText, content.unit) = (value.number, value.text, value.unit)
        } else if isBloodPressure, let half = halfBloodPressure(components) {
            (content.description, content.valueNumber, content.unit) = (half.name, half.value.number, half.value.unit)
        } else if !components.isEmpty {
            (content.valueText, content.unit) = summary(of: components)
        }
        try readEffective(r, into: &content)
        return content
    }

    /// vital-signs → vital_sign, laboratory → result, activity → activity, anything else → observation.
    private func observationType(_ r: JSONReader) throws -> EntryType {
        let categories = Set(try r.concepts("category").flatMap { $0.codings.compactMap(\.code) })
        if categories.contains("vital-signs") { return .vitalSign }
        if categories.contains("laboratory") { return .result }
        if categories.contains("activity") { return .activity }
        return .observation
    }

    struct ObservationValue {
        var number: Double?
        var text: String?
        var unit: String?
        /// The value as written ("120", "positive").
        var display: String
    }

    /// value[x] of an Observation or one of its components.
    func value(of r: JSONReader) throws -> ObservationValue? {
        if let quantity = try r.object("valueQuantity") {
            guard let q = try quantity.asQuantity() else { return nil }
            if let comparator = nonEmpty(try quantity.string("comparator")) {
                // "<= 5" is not the number 5: kept as text, so no chart or rule reads it as exact.
                return ObservationValue(text: comparator + q.literal, unit: q.unit, display: comparator + q.literal)
            }
            return ObservationValue(number: q.value, unit: q.unit, display: q.literal)
        }
        if let text = nonEmpty(try r.string("valueString")) {
            return ObservationValue(text: text, display: text)
        }
        if let concept = try r.concept("valueCodeableConcept"), let text = concept.description {
            return ObservationValue(text: text, display: text)
        }
        if let bool = try r.bool("valueBoolean") {
            return ObservationValue(text: bool ? "true" : "false", display: bool ? "true" : "false")
        }
        if let integer = try r.number("valueInteger") {
            return ObservationValue(number: integer.value, display: integer.literal)
        }
        for key in ["valueDateTime", "valueTime"] {
            if let text = nonEmpty(try r.string(key)) { return ObservationValue(text: text, display: text) }
        }
        return nil
    }

    /// A blood-pressure panel with only one of its two readings (the other absent, with a
    /// dataAbsentReason, or left out): the entry is that reading alone, named as the timeline names
    /// the halves of a full panel ("Systolic Blood Pressure"), so it joins that series and is never
    /// shown as a whole "120/80". Nil when both or neither are there.
    private func halfBloodPressure(_ components: [(concept: Concept?, value: ObservationValue?)]) -> (name: String, value: ObservationValue)? {
        func reading(_ loinc: String) -> ObservationValue? {
            components.first { $0.concept?.loincCodes.contains(loinc) == true }?.value
        }
        switch (reading(FHIRCodes.systolic), reading(FHIRCodes.diastolic)) {
        case (let systolic?, nil) where systolic.number != nil: return ("Systolic Blood Pressure", systolic)
        case (nil, let diastolic?) where diastolic.number != nil: return ("Diastolic Blood Pressure", diastolic)
        default: return nil
        }
    }

    /// Components as one value: "120/80" with their shared unit (systolic before diastolic), or
    /// "Name: value unit; …" when their units differ or a value is not a number.
    private func summary(of components: [(concept: Concept?, value: ObservationValue?)]) -> (text: String?, unit: String?) {
        func order(_ component: (concept: Concept?, value: ObservationValue?)) -> Int {
            let codes = component.concept?.loincCodes ?? []
            return codes.contains(FHIRCodes.systolic) ? 0 : codes.contains(FHIRCodes.diastolic) ? 1 : 2
        }
        let valued = components.enumerated()
            .sorted { (order($0.element), $0.offset) < (order($1.element), $1.offset) }
            .compactMap { item in item.element.value.map { (item.element.concept, $0) } }
        guard !valued.isEmpty else { return (nil, nil) }
        let units = Set(valued.map { $0.1.unit })
        if valued.allSatisfy({ $0.1.number != nil }), units.count == 1 {
            return (valued.map(\.1.display).joined(separator: "/"), units.first!)
        }
        let parts = valued.map { concept, value in
            let reading = [value.display, value.unit].compactMap { $0 }.joined(separator: " ")
            return concept?.description.map { "\($0): \(reading)" } ?? reading
        }
        return (parts.joined(separator: "; "), nil)
    }
}
