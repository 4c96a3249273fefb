import HReaderModel

/// A FHIR Patient resource as the patient's demographics.
enum FHIRPatientMapping {
    static let raceURL = "http://hl7.org/fhir/us/core/StructureDefinition/us-core-race"
    static let ethnicityURL = "http://hl7.org/fhir/us/core/StructureDefinition/us-core-ethnicity"

    static func content(_ patient: JSONReader, remoteID: String, raw: String) throws -> NewPatient {
        let (first, last) = try name(patient)
        let extensions = try patient.objects("extension")
        return NewPatient(
            firstName: first, lastName: last, gender: nonEmpty(try patient.string("gender")),
            birthDate: nonEmpty(try patient.string("birthDate")),
            race: try category(extensions.first { $0.object["url"]?.string == raceURL }),
            ethnicity: try category(extensions.first { $0.object["url"]?.string == ethnicityURL }),
            remoteID: remoteID, raw: raw)
    }

    /// The official name, else the usual one, else the first current one: given names joined, family.
    /// A name with only `text` is split at its last space.
    static func name(_ patient: JSONReader) throws -> (first: String, last: String) {
        let names = try patient.objects("name")
        func rank(_ name: JSONReader) -> Int {
            switch name.object["use"]?.string {
            case "official": 0
            case "usual": 1
            case nil: 2
            case "old", "maiden": 4
            default: 3
            }
        }
        guard let chosen = names.enumerated().min(by: { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) })?.element else {
            return ("", "")
        }
        let given = try chosen.strings("given").compactMap(nonEmpty).joined(separator: " ")
        let family = nonEmpty(try chosen.string("family")) ?? ""
        if given.isEmpty, family.isEmpty, let text = nonEmpty(try chosen.string("text")) {
            guard let space = text.lastIndex(of: " ") else { return (text, "") }
            return (String(text[..<space]), String(text[text.index(after: space)...]))
        }
        return (given, family)
    }

    /// A US Core race or ethnicity extension: its `text`, else its OMB categories' displays (or the
    /// names of their codes), else its detailed categories.
    static func category(_ ext: JSONReader?) throws -> String? {
        guard let ext else { return nil }
        let parts = try ext.objects("extension")
        if let text = try parts.first(where: { $0.object["url"]?.string == "text" })?.string("valueString"), let text = nonEmpty(text) {
            return text
        }
        for url in ["ombCategory", "detailed"] {
            var names: [String] = []
            for part in parts where part.object["url"]?.string == url {
                guard let coding = try part.object("valueCoding") else { continue }
                let code = nonEmpty(try coding.string("code"))
                if let name = nonEmpty(try coding.string("display")) ?? code.flatMap(RaceAndEthnicity.name(forCode:)) ?? code {
                    names.append(name)
                }
            }
            if !names.isEmpty { return names.joined(separator: ", ") }
        }
        return nil
    }
}
