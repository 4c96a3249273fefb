import Foundation
import HReaderJSON
import HReaderModel

/// Walks a CDA document's header and body and writes the FHIR resources (`CCDADocument`), section
/// by section, counting what each section gave and what it skipped, with the reason.
struct CCDAMapping {
    let root: CDAElement
    let what: String
    private(set) var sections: [CCDADocument.Section] = []
    private(set) var resources: [JSONObject] = []
    private(set) var notes: [CCDADocument.Note] = []
    /// The narrative that `originalText/reference` and `text/reference` point into, read when asked.
    let narrative: CCDANarrative
    /// How often each entry key was seen: entries whose ids repeat are all kept, each with its own id.
    private var occurrences: [String: Int] = [:]
    private(set) var patientID = ""

    init(root: CDAElement, what: String) {
        self.root = root
        self.what = what
        narrative = CCDANarrative(tree: root.tree)
    }

    /// The Patient reference every resource carries (set with the patient).
    private(set) var subject: JSONValue = .null

    mutating func run() throws {
        try patient()
        if let body = root.at("component/structuredBody") {
            for component in body.all("component") {
                if let section = component.child("section") { walk(section) }
            }
        } else if let body = root.at("component/nonXMLBody") {
            nonXMLBody(body)
        } else {
            sections.append(CCDADocument.Section(kind: nil, title: "Document body", skipped: ["the document has no body": 1]))
        }
    }

    var lookup: (String) -> String? { { [narrative] in narrative.text(forID: $0) } }

    func concept(_ element: CDAElement?) -> JSONObject? { CCDAValues.concept(element, narrative: lookup) }

    // MARK: - Patient

    private mutating func patient() throws {
        guard let role = root.at("recordTarget/patientRole") else {
            throw RecordsError.malformed("\(what) has no recordTarget/patientRole: no patient to file it under")
        }
        let person = role.child("patient")
        let identifiers = role.all("id").compactMap(CCDAValues.identifier)
        var members: [JSONObject.Member] = [("resourceType", "Patient")]
        var names: [JSONValue] = []
        for name in person?.all("name") ?? [] where name.nullFlavor == nil {
            var parts: [JSONObject.Member] = []
            if let family = name.all("family").compactMap({ nonEmpty($0.plainText) }).first { parts.append(("family", .string(family))) }
            let given = name.all("given").compactMap { nonEmpty($0.plainText) }
            if !given.isEmpty { parts.append(("given", .array(given.map(JSONValue.string)))) }
            let prefix = name.all("prefix").compactMap { nonEmpty($0.plainText) }
            if !prefix.isEmpty { parts.append(("prefix", .array(prefix.map(JSONValue.string)))) }
            let suffix = name.all("suffix").compactMap { nonEmpty($0.plainText) }
            if !suffix.isEmpty { parts.append(("suffix", .array(suffix.map(JSONValue.string)))) }
            if parts.isEmpty, let text = nonEmpty(name.plainText) { parts.append(("text", .string(text))) }
            if !parts.isEmpty { names.append(.object(JSONObject(parts))) }
        }
        let gender: String? = switch person?.child("administrativeGenderCode")?[attribute: "code"]?.uppercased() {
        case "M"?: "male"
        case "F"?: "female"
        case "UN"?: "other"
        default: nil
        }
        let birthDate = person?.child("birthTime")?[attribute: "value"].flatMap { CCDAValues.fhirDateTime(String($0.prefix(8))) }

        let key = identifiers.first.map { "\($0["system"]?.string ?? "")|\($0["value"]?.string ?? "")" }
            ?? "name:\(JSONValue.array(names).serialized(sortingKeys: true))|\(birthDate ?? "")|\(gender ?? "")"
        patientID = "ccda-" + StableID.fnv1a64("Patient|" + key)
        subject = ["reference": .string("Patient/\(patientID)")]
        members.append(("id", .string(patientID)))
        if !identifiers.isEmpty { members.append(("identifier", .array(identifiers.map(JSONValue.object)))) }
        if !names.isEmpty { members.append(("name", .array(names))) }
        let telecoms = role.all("telecom").compactMap(telecom)
        if !telecoms.isEmpty { members.append(("telecom", .array(telecoms))) }
        if let gender { members.append(("gender", .string(gender))) }
        if let birthDate { members.append(("birthDate", .string(birthDate))) }
        let addresses = role.all("addr").compactMap(address)
        if !addresses.isEmpty { members.append(("address", .array(addresses))) }
        if let person {
            let extensions = [Self.category(person, element: "raceCode", url: FHIRPatientMapping.raceURL, omb: Self.ombRaces),
                              Self.category(person, element: "ethnicGroupCode", url: FHIRPatientMapping.ethnicityURL, omb: Self.ombEthnicities)]
                .compactMap { $0 }
            if !extensions.isEmpty { members.insert(("extension", .array(extensions)), at: 2) }
        }
        resources.append(JSONObject(members))
    }

    static let ombRaces: Set<String> = ["1002-5", "2028-9", "2054-5", "2076-8", "2106-3"]
    static let ombEthnicities: Set<String> = ["2135-2", "2186-5"]
    static let sdtcNamespace = "urn:hl7-org:sdtc"

    /// `raceCode` (and `sdtc:raceCode`) or `ethnicGroupCode` as the US Core extension: OMB categories,
    /// detailed ones, and the text US Core asks for. Nil for a nullFlavor (asked, unknown).
    static func category(_ person: CDAElement, element name: String, url: String, omb: Set<String>) -> JSONValue? {
        let codes = person.children.filter { $0.name == name && ($0.isHL7 || $0.namespace == sdtcNamespace) }
        var parts: [JSONValue] = []
        var names: [String] = []
        for code in codes where code.nullFlavor == nil {
            guard let value = code[attribute: "code"].flatMap(nonEmpty) else { continue }
            var coding: [JSONObject.Member] = [("system", "urn:oid:2.16.840.1.113883.6.238"), ("code", .string(value))]
            if let display = code[attribute: "displayName"].flatMap(nonEmpty) { coding.append(("display", .string(display))); names.append(display) } else {
                names.append(RaceAndEthnicity.name(forCode: value) ?? value)
            }
            parts.append(["url": .string(omb.contains(value) ? "ombCategory" : "detailed"), "valueCoding": .object(JSONObject(coding))])
        }
        guard !parts.isEmpty else { return nil }
        parts.append(["url": "text", "valueString": .string(names.joined(separator: ", "))])
        return ["url": .string(url), "extension": .array(parts)]
    }

    private func telecom(_ element: CDAElement) -> JSONValue? {
        guard element.nullFlavor == nil, let value = element[attribute: "value"].flatMap(nonEmpty) else { return nil }
        var members: [JSONObject.Member]
        let lower = value.lowercased()
        if lower.hasPrefix("tel:") {
            members = [("system", "phone"), ("value", .string(String(value.dropFirst(4))))]
        } else if lower.hasPrefix("mailto:") {
            members = [("system", "email"), ("value", .string(String(value.dropFirst(7))))]
        } else if lower.hasPrefix("fax:") {
            members = [("system", "fax"), ("value", .string(String(value.dropFirst(4))))]
        } else {
            members = [("system", "other"), ("value", .string(value))]
        }
        let uses = (element[attribute: "use"] ?? "").split(separator: " ")
        if uses.contains("MC") { members.append(("use", "mobile")) } else if uses.contains("HP") || uses.contains("H") {
            members.append(("use", "home"))
        } else if uses.contains("WP") { members.append(("use", "work")) }
        return .object(JSONObject(members))
    }

    private func address(_ element: CDAElement) -> JSONValue? {
        guard element.nullFlavor == nil else { return nil }
        var members: [JSONObject.Member] = []
        let lines = element.all("streetAddressLine").compactMap { nonEmpty($0.plainText) }
        if !lines.isEmpty { members.append(("line", .array(lines.map(JSONValue.string)))) }
        for (cda, fhir) in [("city", "city"), ("state", "state"), ("postalCode", "postalCode"), ("country", "country")] {
            if let part = element.child(cda).flatMap({ $0.nullFlavor == nil ? nonEmpty($0.plainText) : nil }) {
                members.append((fhir, .string(part)))
            }
        }
        return members.isEmpty ? nil : .object(JSONObject(members))
    }

    // MARK: - Sections

    private mutating func walk(_ section: CDAElement) {
        let kind = CCDASectionKind.of(section)
        let code = section.child("code")
        let title = section.child("title").flatMap { nonEmpty($0.plainText) } ?? code?[attribute: "displayName"] ?? kind?.title ?? "Untitled section"
        var record = CCDADocument.Section(kind: kind?.rawValue, title: title)
        let entries = section.all("entry")
        if let kind, !entries.isEmpty {
            for entry in entries { map(entry, kind: kind, into: &record) }
        } else if !entries.isEmpty {
            record.skipped["entries of a section hreader does not read", default: 0] += entries.count
        }
        if record.imported == 0 {
            // Nothing coded came of the section (no entries, entries of a section not read, or only
            // placeholders): its narrative is what the document says, kept as a note.
            if let nullFlavor = section.nullFlavor, entries.isEmpty {
                record.skipped["the section says it has no information (nullFlavor \(nullFlavor))", default: 0] += 1
            } else if let narrative = section.child("text"), let text = nonEmpty(narrative.plainText) {
                let body = nonEmpty(narrative.plainTextWithoutHeaders)
                if body == nil {
                    if entries.isEmpty { record.skipped["the section's narrative is a table with headers and no rows", default: 0] += 1 }
                } else if let body, CCDAValues.isPlaceholderText(body) {
                    if entries.isEmpty { record.skipped["the section's narrative says only that there is nothing (\"\(body)\")", default: 0] += 1 }
                } else {
                    let sectionCode = code?[attribute: "code"]
                    let base = "Note|\(kind?.rawValue ?? "")|\(sectionCode ?? "")|\(title)|" + key(section, kind: "note")
                    let seen = occurrences[base, default: 0].postIncrement()
                    notes.append(CCDADocument.Note(id: "ccda-" + StableID.fnv1a64(base + "|\(seen)"), type: kind?.entryType ?? .observation,
                                                   title: title, sectionCode: sectionCode, text: text))
                    record.imported += 1
                    record.keptNarrative = true
                }
            }
        }
        sections.append(record)
        for component in section.all("component") {
            if let nested = component.child("section") { walk(nested) }
        }
    }

    /// The clinical statement of an entry (its act, observation, organizer, …).
    static let statementNames: Set<String> = ["act", "observation", "organizer", "substanceAdministration", "supply", "procedure",
                                              "encounter", "observationMedia", "regionOfInterest"]

    static func statement(of entry: CDAElement) -> CDAElement? {
        entry.children.first { $0.isHL7 && statementNames.contains($0.name) }
    }

    private mutating func map(_ entry: CDAElement, kind: CCDASectionKind, into record: inout CCDADocument.Section) {
        guard let statement = Self.statement(of: entry) else {
            record.skipped["an entry without a clinical statement", default: 0] += 1
            return
        }
        var results: [Result<JSONObject, Skipped>] = []
        if let nullFlavor = statement.nullFlavor {
            // "Unknown if pregnant", "immunization status unknown": the statement itself is unknown.
            record.skipped["a statement the document marks unknown (nullFlavor \(nullFlavor)), not a record", default: 0] += 1
            return
        }
        switch kind {
        case .problems:
            let observations = Self.inner(statement, templates: ["2.16.840.1.113883.10.20.22.4.4", "2.16.840.1.113883.10.20.1.28",
                                                                 "1.3.6.1.4.1.19376.1.5.3.1.4.5"])
            if observations.isEmpty { results.append(.failure(.init("a problem concern without a problem observation"))) }
            let concern = statement.name == "observation" ? nil : statement
            results += observations.map { condition($0, concern: concern) }
        case .allergies:
            let observations = Self.inner(statement, templates: ["2.16.840.1.113883.10.20.22.4.7", "2.16.840.1.113883.10.20.1.18",
                                                                 "1.3.6.1.4.1.19376.1.5.3.1.4.6"])
            if observations.isEmpty { results.append(.failure(.init("an allergy concern without an allergy observation"))) }
            let concern = statement.name == "observation" ? nil : statement
            results += observations.map { allergy($0, concern: concern) }
        case .medications:
            let administrations = Self.administrations(in: statement)
            if administrations.isEmpty { results.append(.failure(.init("a medication entry that is not a substanceAdministration"))) }
            results += administrations.map(medication)
        case .immunizations:
            let administrations = Self.administrations(in: statement)
            if administrations.isEmpty { results.append(.failure(.init("an immunization entry that is not a substanceAdministration"))) }
            results += administrations.map(immunization)
        case .results, .vitalSigns, .socialHistory, .functionalStatus:
            let organizer = statement.name == "organizer" ? statement : nil
            let observations = Self.observations(in: statement)
            if observations.isEmpty { results.append(.failure(.init("an entry that is neither an observation nor an organizer of observations"))) }
            results += observations.map { observation($0, organizer: organizer, kind: kind) }
        case .procedures:
            results.append(procedure(statement))
        case .encounters:
            results.append(statement.name == "encounter" ? encounter(statement)
                           : .failure(.init("an encounter entry that is not an encounter")))
        case .planOfCare:
            results.append(planned(statement))
        }
        for result in results {
            switch result {
            case .success(var resource):
                let type = resource["resourceType"]?.string ?? "Resource"
                let id = resourceID(type: type, kind: kind, resource: resource)
                resource.members.insert(("id", .string(id)), at: 1)
                resources.append(resource)
                record.imported += 1
            case .failure(let skipped):
                record.skipped[skipped.reason, default: 0] += 1
            }
        }
    }

    struct Skipped: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The observations a concern act (or a C32 act) wraps, by template; when none has one of
    /// these templates, those of its entryRelationships that are not status observations. An entry
    /// that is itself an observation is its own.
    static func inner(_ statement: CDAElement, templates: Set<String>) -> [CDAElement] {
        if statement.name == "observation" { return [statement] }
        let wrapped = statement.all("entryRelationship").compactMap { $0.child("observation") }
        let templated = wrapped.filter { observation in observation.all("templateId").contains { templates.contains($0[attribute: "root"] ?? "") } }
        if !templated.isEmpty { return templated }
        return wrapped.filter { !isStatusObservation($0) }
    }

    static func isStatusObservation(_ observation: CDAElement) -> Bool {
        observation.child("code")?[attribute: "code"] == "33999-4"
    }

    /// The substanceAdministrations of an entry: itself, an organizer's components (a course of a
    /// medication in parts, each with its own dose), or those a Discharge Medication act wraps.
    static func administrations(in statement: CDAElement) -> [CDAElement] {
        switch statement.name {
        case "substanceAdministration": return [statement]
        case "organizer": return statement.all("component").compactMap { $0.child("substanceAdministration") }
        case "act": return statement.all("entryRelationship").compactMap { $0.child("substanceAdministration") }  // a Discharge Medication act
        default: return []
        }
    }

    /// The observations of an organizer (its components, nested organizers too) or the observation itself.
    static func observations(in statement: CDAElement) -> [CDAElement] {
        switch statement.name {
        case "observation": return [statement]
        case "organizer":
            return statement.all("component").flatMap { component -> [CDAElement] in
                if let observation = component.child("observation") { return [observation] }
                if let organizer = component.child("organizer") { return observations(in: organizer) }
                return []
            }
        default: return []
        }
    }

    /// A stable FHIR id, unique in the document: a hash of the resource type, the section kind, the
    /// entry's own id (root and extension) or else its content, and how often that key was seen.
    private mutating func resourceID(type: String, kind: CCDASectionKind, resource: JSONObject) -> String {
        let identity = resource["identifier"]?.array?.first.map { $0.serialized(sortingKeys: true) }
            ?? "content:" + JSONValue.object(resource).serialized(sortingKeys: true)
        var base = type
        base.reserveCapacity(type.utf8.count + identity.utf8.count + 32)
        base += "|"
        base += kind.rawValue
        base += "|"
        base += identity
        let seen = occurrences[base, default: 0].postIncrement()
        base += "|"
        base += String(seen)
        return "ccda-" + StableID.fnv1a64(base)
    }

    /// The identity of an element without ids: its canonical content.
    private func key(_ element: CDAElement, kind: String) -> String {
        element.all("id").compactMap(CCDAValues.identifier).first.map { JSONValue.object($0).serialized(sortingKeys: true) } ?? kind
    }

    func identifiers(_ element: CDAElement) -> [JSONObject.Member] {
        let ids = element.all("id").compactMap(CCDAValues.identifier)
        return ids.isEmpty ? [] : [("identifier", .array(ids.map(JSONValue.object)))]
    }

    // MARK: - nonXMLBody

    private mutating func nonXMLBody(_ body: CDAElement) {
        var record = CCDADocument.Section(kind: nil, title: "Document body (nonXMLBody)")
        guard let text = body.child("text") else {
            record.skipped["a nonXMLBody without text", default: 0] += 1
            sections.append(record)
            return
        }
        let mediaType = text[attribute: "mediaType"].flatMap(nonEmpty) ?? "text/plain"
        record.title = "Document body (nonXMLBody, \(mediaType))"
        var attachment: [JSONObject.Member] = [("contentType", .string(mediaType))]
        if let reference = text.child("reference")?[attribute: "value"].flatMap(nonEmpty) {
            attachment.append(("url", .string(reference)))
        } else if text[attribute: "representation"]?.uppercased() == "B64" {
            let data = String((text.text + text.children.map(\.tail).joined()).filter { !$0.isWhitespace })
            guard !data.isEmpty, data.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/" || $0 == "=") }),
                  Data(base64Encoded: data) != nil else {
                record.skipped["a nonXMLBody whose base64 content does not decode", default: 0] += 1
                sections.append(record)
                return
            }
            attachment.append(("data", .string(data)))
        } else {
            let plain = text.plainText
            guard !plain.isEmpty else {
                record.skipped["an empty nonXMLBody", default: 0] += 1
                sections.append(record)
                return
            }
            attachment.append(("data", .string(Data(plain.utf8).base64EncodedString())))
        }
        let title = root.child("title").flatMap { nonEmpty($0.plainText) }
        if let title { attachment.append(("title", .string(title))) }
        var members: [JSONObject.Member] = [("resourceType", "DocumentReference")]
        members += identifiers(root)
        members.append(("status", "current"))
        if let type = concept(root.child("code")) { members.append(("type", .object(type))) }
        members.append(("subject", subject))
        if let date = CCDAValues.fhirDateTime(root.child("effectiveTime")?[attribute: "value"]), date.contains("T") {
            members.append(("date", .string(date)))
        }
        members.append(("description", .string(title ?? "Clinical document (nonXMLBody)")))
        members.append(("content", [["attachment": .object(JSONObject(attachment))]]))
        var resource = JSONObject(members)
        let id = "ccda-" + StableID.fnv1a64("DocumentReference|" + (resource["identifier"].map { $0.serialized(sortingKeys: true) } ?? "body"))
        resource.members.insert(("id", .string(id)), at: 1)
        resources.append(resource)
        record.imported = 1
        sections.append(record)
    }
}

private extension Int {
    /// The value before adding one (a count looked up once, not read then written).
    mutating func postIncrement() -> Int {
        defer { self += 1 }
        return self
    }
}
