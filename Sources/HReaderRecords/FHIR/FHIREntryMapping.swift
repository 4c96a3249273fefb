import Foundation
import HReaderJSON
import HReaderModel

/// FHIR R4 clinical resources as entries: what each supported resource type says in the fields of
/// `EntryContent`. The caller sets `raw` and the remote id. A member of the wrong JSON type throws
/// `RecordsError.malformed` naming its path.
struct FHIREntryMapping {
    let zone: DayZone
    /// Medication resources of the input, by `Medication/<id>` and by fullUrl, for `medicationReference`.
    let medications: [String: JSONObject]

    static let supportedTypes: Set<String> = [
        "Observation", "Condition", "AllergyIntolerance", "MedicationRequest", "MedicationStatement",
        "Encounter", "Immunization", "Procedure", "DiagnosticReport",
    ]

    /// The entry for a resource of a supported type; nil for any other type.
    func content(_ resource: JSONReader, type: String) throws -> EntryContent? {
        switch type {
        case "Observation": try observation(resource)
        case "Condition": try condition(resource)
        case "AllergyIntolerance": try allergy(resource)
        case "MedicationRequest", "MedicationStatement": try medication(resource, type: type)
        case "Encounter": try encounter(resource)
        case "Immunization": try coded(resource, .immunization, code: "vaccineCode", status: "status")
        case "Procedure": try coded(resource, .procedure, code: "code", status: "status")
        case "DiagnosticReport": try diagnosticReport(resource)
        default: nil
        }
    }

    /// An entry named by a CodeableConcept member: description and codes, status, and for
    /// Immunization and Procedure their times.
    func coded(_ r: JSONReader, _ type: EntryType, code key: String, status: String?) throws -> EntryContent {
        let concept = try r.concept(key)
        var content = EntryContent(type: type, description: concept?.description ?? EntryLabel.name(type),
                                   status: try status.flatMap { try r.status($0) }, codes: concept?.codes ?? [:])
        switch type {
        case .immunization:
            content.date = try r.time("occurrenceDateTime", zone: zone) ?? r.time("recorded", zone: zone)
        case .procedure:
            content.date = try r.time("performedDateTime", zone: zone)
            if let period = try r.period("performedPeriod", zone: zone) { (content.start, content.end) = period }
        default:
            break
        }
        return content
    }

    /// effectiveDateTime / effectiveInstant → date, effectivePeriod → start and end, `issued` when
    /// none of them is there.
    func readEffective(_ r: JSONReader, into content: inout EntryContent) throws {
        content.date = try r.time("effectiveDateTime", zone: zone) ?? r.time("effectiveInstant", zone: zone)
        if let period = try r.period("effectivePeriod", zone: zone) { (content.start, content.end) = period }
        if content.effectiveTime == nil { content.date = try r.time("issued", zone: zone) }
    }

    func condition(_ r: JSONReader) throws -> EntryContent {
        var content = try coded(r, .condition, code: "code", status: "clinicalStatus")
        content.status = try Self.refutation(r) ?? content.status
        content.start = try r.time("onsetDateTime", zone: zone) ?? r.period("onsetPeriod", zone: zone)?.start
        content.end = try r.time("abatementDateTime", zone: zone) ?? r.period("abatementPeriod", zone: zone)?.end
        if content.start == nil { content.date = try r.time("recordedDate", zone: zone) }
        return content
    }

    func allergy(_ r: JSONReader) throws -> EntryContent {
        var content = try coded(r, .allergy, code: "code", status: "clinicalStatus")
        content.status = try Self.refutation(r) ?? content.status
        let reaction = try r.first("reaction")
        if let reaction {
            let manifestations = try reaction.concepts("manifestation").compactMap(\.description)
            content.reaction = manifestations.isEmpty ? nonEmpty(try reaction.string("description"))
                                                      : manifestations.joined(separator: ", ")
        }
        content.severity = try nonEmpty(reaction?.string("severity")) ?? nonEmpty(r.string("criticality"))
        content.start = try r.time("onsetDateTime", zone: zone) ?? r.period("onsetPeriod", zone: zone)?.start
        if content.start == nil { content.date = try r.time("recordedDate", zone: zone) }
        return content
    }

    /// `refuted` or `entered-in-error` when the verificationStatus says so: a statement that the
    /// condition or allergy is not there is never shown with the clinical status beside it.
    static func refutation(_ r: JSONReader) throws -> String? {
        guard let verification = try r.status("verificationStatus")?.lowercased(),
              verification == "refuted" || verification == "entered-in-error" else { return nil }
        return verification
    }

    /// Statuses that say the thing named did not happen or is not so, and how a description says it.
    static let negatingStatuses = ["refuted": "refuted", "not-done": "not done", "not-taken": "not taken",
                                   "entered-in-error": "entered in error"]

    /// The description, with "(refuted)", "(not done)", "(not taken)" or "(entered in error)" after
    /// it when the status says so: wherever the entry is shown by its name alone (the entry list,
    /// the timeline), a refused vaccine never reads as one given, a refuted condition never as one had.
    static func describingNegation(_ content: EntryContent) -> String {
        guard let status = content.status?.lowercased(), let words = negatingStatuses[status] else { return content.description }
        return "\(content.description) (\(words))"
    }

    /// MedicationRequest and MedicationStatement: the medication (a CodeableConcept, or a reference
    /// to a contained or included Medication, or the reference's display), the first dosage, times.
    func medication(_ r: JSONReader, type: String) throws -> EntryContent {
        let concept = try r.concept("medicationCodeableConcept") ?? medicationConcept(r)
        let referenceDisplay = nonEmpty(try r.object("medicationReference")?.string("display"))
        var content = EntryContent(
            type: .medication,
            description: concept?.description ?? referenceDisplay ?? EntryLabel.name(.medication),
            status: try r.status("status"), codes: concept?.codes ?? [:])
        if type == "MedicationRequest" {
            content.dose = try r.first("dosageInstruction").flatMap(dose)
            content.date = try r.time("authoredOn", zone: zone)
        } else {
            content.dose = try r.first("dosage").flatMap(dose)
            try readEffective(r, into: &content)
            if content.effectiveTime == nil { content.date = try r.time("dateAsserted", zone: zone) }
        }
        return content
    }

    /// The `code` of the Medication that `medicationReference` points to, when the input has it.
    private func medicationConcept(_ r: JSONReader) throws -> Concept? {
        guard let reference = try r.reference("medicationReference") else { return nil }
        let medication: JSONObject?
        if reference.hasPrefix("#") {
            let id = String(reference.dropFirst())
            medication = r.object["contained"]?.array?.lazy.compactMap(\.object).first { $0["id"]?.string == id }
        } else {
            medication = medications[reference]
        }
        guard let medication else { return nil }
        return try JSONReader(medication, path: "\(r.path).medicationReference(\(reference))").concept("code")
    }

    /// A Dosage: its text, else its first dose quantity ("10 mg") or dose range ("1–2 tablet").
    func dose(_ dosage: JSONReader) throws -> String? {
        if let text = nonEmpty(try dosage.string("text")) { return text }
        guard let doseAndRate = try dosage.first("doseAndRate") else { return nil }
        if let quantity = try doseAndRate.object("doseQuantity")?.asQuantity() {
            return [quantity.literal, quantity.unit].compactMap { $0 }.joined(separator: " ")
        }
        if let range = try doseAndRate.object("doseRange") {
            let low = try range.object("low")?.asQuantity(), high = try range.object("high")?.asQuantity()
            let values = [low?.literal, high?.literal].compactMap { $0 }.joined(separator: "–")
            guard !values.isEmpty else { return nil }
            return [values, high?.unit ?? low?.unit].compactMap { $0 }.joined(separator: " ")
        }
        return nil
    }

    /// An Encounter named by its type (or service type, or class), with its period.
    func encounter(_ r: JSONReader) throws -> EntryContent {
        let types = try r.concepts("type")
        let serviceType = try r.concept("serviceType")
        var classConcept: Concept?
        switch r.object.present("class") {  // R4: a Coding; R5: a list of CodeableConcepts
        case .array?: classConcept = try r.concepts("class").first
        case .some: classConcept = try r.concept("class")
        case nil: break
        }
        let description = types.lazy.compactMap(\.description).first ?? serviceType?.description
            ?? classConcept?.codings.first?.display ?? classConcept?.description
        let codes = Concept(codings: types.flatMap(\.codings)).codes
        var content = EntryContent(type: .encounter, description: description ?? EntryLabel.name(.encounter),
                                   status: try r.status("status"), codes: codes)
        if let period = try r.period("period", zone: zone) { (content.start, content.end) = period }
        return content
    }

    func diagnosticReport(_ r: JSONReader) throws -> EntryContent {
        var content = try coded(r, .result, code: "code", status: "status")
        try readEffective(r, into: &content)
        content.valueText = nonEmpty(try r.string("conclusion"))
        return content
    }
}
