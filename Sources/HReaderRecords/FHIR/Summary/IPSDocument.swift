import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel

/// A clinician summary as an International Patient Summary: a FHIR R4 `document` Bundle whose first
/// entry is the Composition (LOINC 60591-5), then the Patient, then the resources its sections list
/// (docs/summary.md). Self-contained: every entry has a `urn:uuid:` fullUrl and every reference
/// points inside the Bundle, or keeps only its display.
///
/// An entry that came from FHIR is its raw resource as the source sent it (members, order and number
/// literals kept), with its references rewritten; any other entry is mapped: measurements by the
/// export's mapping (`ExportPlanner`, `ExportResources`), problems, allergies, medications and
/// immunizations by the small mappings below. The narratives quote the summary's lines as a person
/// reads them (`ClinicalSummary.rows`, as the printable page shows them).
package struct IPSDocument {
    let summary: ClinicalSummary
    /// Each section's lines.
    let rows: [SummarySection: [SummaryRow]]
    /// The Bundle's identifier and the Composition's id: new for every document.
    let documentID: String
    let compositionID: String

    static let loincSystem = "http://loinc.org"
    static let absentUnknownSystem = "http://hl7.org/fhir/uv/ips/CodeSystem/absent-unknown-uv-ips"
    static let conditionClinicalSystem = "http://terminology.hl7.org/CodeSystem/condition-clinical"
    static let conditionCategorySystem = "http://terminology.hl7.org/CodeSystem/condition-category"
    static let allergyClinicalSystem = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"
    static let medicationStatementStatuses: Set<String> = [
        "active", "completed", "entered-in-error", "intended", "stopped", "on-hold", "unknown", "not-taken",
    ]

    package init(summary: ClinicalSummary) throws {
        self.summary = summary
        rows = Dictionary(uniqueKeysWithValues: SummarySection.allCases.map { ($0, summary.rows($0)) })
        documentID = try Self.randomUUID()
        compositionID = try Self.randomUUID()
    }

    var patientURL: String { "urn:uuid:" + summary.patient.uuid }

    private struct Item {
        let entry: Entry
        let section: SummarySection
        let fullURL: String
        /// The source's FHIR resource, when the entry came from FHIR as a type this section shows.
        let raw: FHIRResourceText?
    }

    package func bundle() -> JSONValue {
        let planner = summary.planner
        var items: [Item] = []
        for section in SummarySection.allCases {
            for entry in summary.entries(in: section) {
                let raw = entry.content.raw.flatMap(FHIRResourceText.init(raw:)).flatMap { section.rawTypes.contains($0.resourceType) ? $0 : nil }
                items.append(Item(entry: entry, section: section, fullURL: "urn:uuid:" + entry.uuid, raw: raw))
            }
        }

        // Where a reference of the sources lands in this Bundle: an entry's remote id (`Type/id` or
        // the fullUrl it came with) and its resource's `Type/id`.
        var targets: [String: String] = [:]
        for item in items {
            targets[item.entry.remoteID] = item.fullURL
            if let raw = item.raw, let id = raw.id { targets["\(raw.resourceType)/\(id)"] = item.fullURL }
        }
        let patientURL = self.patientURL
        func resolve(_ reference: String, member: String) -> String? {
            if member == "subject" || member == "patient" { return patientURL }
            if let target = targets[reference] { return target }
            let key = Self.relativeReference(reference)
            if key.hasPrefix("Patient/") { return patientURL }
            return targets[key]
        }

        // A source's narrative stays only as FHIR allows it (FHIRNarrative); one that fails gives way
        // to the entry's line of its section, as the section's own narrative has it.
        var lines: [String: String] = [:]
        for section in SummarySection.allCases {
            for row in rows[section] ?? [] { lines[row.entry.uuid] = Self.narrativeLine(row) }
        }

        var resources: [(fullURL: String, resource: JSONValue)] = []
        var sectionEntries: [SummarySection: [String]] = [:]
        var usedIDs: Set<String> = []
        for item in items {
            let resource: JSONValue
            if var raw = item.raw {
                if let medication = raw.reference("medicationReference"), resolve(medication, member: "medicationReference") == nil {
                    // The Medication itself is not kept in the vault: the entry's name and codes stand for it.
                    try? raw.replace("medicationReference", with: "medicationCodeableConcept",
                                     json: Self.concept(item.entry.content).serialized())
                }
                raw.rewriteReferences { resolve($0, member: $1) }
                let line = lines[item.entry.uuid] ?? Self.escape(item.entry.content.description)
                raw.sanitizeNarratives(replacingWith: Self.narrativeDiv("<p>" + line + "</p>"))
                if let verification = summary.verifications[item.entry.id] {
                    let labels = Self.labels(verification)
                    raw.addMeta(security: labels.security, tags: labels.tags)
                }
                if let id = raw.id, Self.isFHIRID(id), usedIDs.insert("\(raw.resourceType)/\(id)").inserted {
                    // kept: a later import of this document finds the same resource by it
                } else {
                    raw.setID(item.entry.uuid)
                    usedIDs.insert("\(raw.resourceType)/\(item.entry.uuid)")
                }
                resource = .verbatim(raw.serialized())
            } else {
                var made = mapped(item.entry, section: item.section, planner: planner)
                if let verification = summary.verifications[item.entry.id], case .object(let members) = made {
                    let labels = Self.labels(verification)
                    made = .object(FHIRResourceText.addingMeta(to: members, security: labels.security, tags: labels.tags))
                }
                resource = made
                if case .object(let object) = resource, case .string(let type)? = object.members.first?.value { usedIDs.insert("\(type)/\(item.entry.uuid)") }
            }
            resources.append((item.fullURL, resource))
            sectionEntries[item.section, default: []].append(item.fullURL)
        }

        var sections: [JSONValue] = []
        for section in SummarySection.allCases {
            var references = sectionEntries[section] ?? []
            var rows = (self.rows[section] ?? []).map { Self.narrativeLine($0) }
            if references.isEmpty {
                guard let absent = section.noInformation else { continue }  // recommended sections are left out when empty
                let (fullURL, resource) = noInformation(section, absent)
                resources.append((fullURL, resource))
                references = [fullURL]
                rows = [Self.escape(absent.display)]
            }
            sections.append(.object([
                ("title", .string(section.title)),
                ("code", Self.concept(system: Self.loincSystem, code: section.loinc.code, display: section.loinc.display)),
                ("text", Self.narrative("<ul>" + rows.map { "<li>\($0)</li>" }.joined() + "</ul>")),
                ("entry", .array(references.map { Self.reference($0) })),
            ]))
        }

        let patient = summary.patient
        let timestamp = Self.instant(summary.generated)
        let composition: JSONValue = .object([
            ("resourceType", .string("Composition")),
            ("id", .string(compositionID)),
            ("status", .string("final")),
            ("type", Self.concept(system: Self.loincSystem, code: "60591-5", display: "Patient summary Document")),
            ("subject", Self.reference(patientURL, display: patient.displayName)),
            ("date", .string(timestamp)),
            // The person hands over their own record: they are who answers for it.
            ("author", .array([Self.reference(patientURL, display: patient.displayName)])),
            ("title", .string("Patient summary" + (patient.displayName.isEmpty ? "" : ": " + patient.displayName))),
            ("section", .array(sections)),
        ])
        var patientResource = ExportResources.patient(patient)
        if case .object(var members) = patientResource {
            members.insert(("id", .string(patient.uuid)), at: 1)
            patientResource = .object(members)
        }

        let entries = [("urn:uuid:" + compositionID, composition), (patientURL, patientResource)] + resources.map { ($0.fullURL, $0.resource) }
        return .object([
            ("resourceType", .string("Bundle")),
            ("identifier", .object([("system", .string("urn:ietf:rfc:3986")), ("value", .string("urn:uuid:" + documentID))])),
            ("type", .string("document")),
            ("timestamp", .string(timestamp)),
            ("entry", .array(entries.map { entry -> JSONValue in .object([("fullUrl", .string(entry.0)), ("resource", entry.1)]) })),
        ])
    }

    // MARK: Entries that did not come from FHIR

    func mapped(_ entry: Entry, section: SummarySection, planner: ExportPlanner) -> JSONValue {
        let c = entry.content
        let subject = Self.reference(patientURL)
        var members: JSONObject = []
        func time(_ key: String, _ value: ClinicalTime?) {
            if let value { members.append((key, .string(planner.fhirDateTime(value)))) }
        }
        switch section {
        case .problems:
            members = [("resourceType", .string("Condition")), ("id", .string(entry.uuid)),
                       ("clinicalStatus", Self.concept(system: Self.conditionClinicalSystem, code: "active", display: "Active")),
                       ("category", .array([Self.concept(system: Self.conditionCategorySystem, code: "problem-list-item", display: "Problem List Item")])),
                       ("code", Self.concept(c)), ("subject", subject)]
            time("onsetDateTime", c.start)
            time("recordedDate", c.date)
        case .allergies:
            members = [("resourceType", .string("AllergyIntolerance")), ("id", .string(entry.uuid)),
                       ("clinicalStatus", Self.concept(system: Self.allergyClinicalSystem, code: "active", display: "Active"))]
            let severity = c.severity?.trimmingCharacters(in: .whitespaces).lowercased()
            if let severity, ["low", "high", "unable-to-assess"].contains(severity) { members.append(("criticality", .string(severity))) }
            members += [("code", Self.concept(c)), ("patient", subject)]
            time("onsetDateTime", c.start)
            time("recordedDate", c.date)
            if let reaction = c.reaction?.trimmingCharacters(in: .whitespacesAndNewlines), !reaction.isEmpty {
                var detail: JSONObject = [("manifestation", .array([.object([("text", .string(reaction))])]))]
                if let severity, ["mild", "moderate", "severe"].contains(severity) { detail.append(("severity", .string(severity))) }
                members.append(("reaction", .array([.object(detail)])))
            }
            if let text = c.severity?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
               !["low", "high", "unable-to-assess", "mild", "moderate", "severe"].contains(text.lowercased()) {
                members.append(("note", .array([.object([("text", .string("Severity: " + text))])])))
            }
        case .medications:
            let status = c.status?.lowercased()
            members = [("resourceType", .string("MedicationStatement")), ("id", .string(entry.uuid)),
                       ("status", .string(status.flatMap { Self.medicationStatementStatuses.contains($0) ? $0 : nil } ?? "active")),
                       ("medicationCodeableConcept", Self.concept(c)), ("subject", subject)]
            if let start = c.start, let end = c.end {
                members.append(("effectivePeriod", .object([("start", .string(planner.fhirDateTime(start))), ("end", .string(planner.fhirDateTime(end)))])))
            } else if let start = c.start {
                members.append(("effectivePeriod", .object([("start", .string(planner.fhirDateTime(start)))])))
            } else {
                time("effectiveDateTime", c.date ?? c.end)
            }
            var dosage: JSONObject = []
            if let dose = (c.dose ?? entry.user.patientDose)?.trimmingCharacters(in: .whitespacesAndNewlines), !dose.isEmpty {
                dosage.append(("text", .string(dose)))
            }
            if let directions = entry.user.patientDirections?.trimmingCharacters(in: .whitespacesAndNewlines), !directions.isEmpty {
                dosage.append(("patientInstruction", .string(directions)))
            }
            if !dosage.isEmpty { members.append(("dosage", .array([.object(dosage)]))) }
        case .immunizations:
            members = [("resourceType", .string("Immunization")), ("id", .string(entry.uuid)), ("status", .string("completed")),
                       ("vaccineCode", Self.concept(c)), ("patient", subject)]
            if let when = c.effectiveTime {
                members.append(("occurrenceDateTime", .string(planner.fhirDateTime(when))))
            } else {
                members.append(("occurrenceString", .string("date not recorded")))
            }
        case .results, .vitalSigns:
            guard let draft = planner.draft(for: entry, withoutLOINC: true),
                  case .object(let observation) = ExportResources.observation(draft, subject: patientURL) else {
                return .null  // not reached: a draft without LOINC is always made
            }
            members = observation
            members.insert(("id", .string(entry.uuid)), at: 1)
            if draft.loinc.isEmpty, let index = members.firstIndex(where: { $0.0 == "code" }) {
                members[index].1 = Self.concept(c)
            }
        }
        return .object(members)
    }

    /// The one entry of an empty required section: IPS's "no information about …" statement.
    func noInformation(_ section: SummarySection, _ absent: (code: String, display: String)) -> (String, JSONValue) {
        let fullURL = ExportResources.fullURL(for: "summary \(absent.code) \(summary.patient.uuid)")
        let id = String(fullURL.dropFirst("urn:uuid:".count))
        let code = Self.concept(system: Self.absentUnknownSystem, code: absent.code, display: absent.display)
        let subject = Self.reference(patientURL)
        let resource: JSONValue
        switch section {
        case .allergies:
            resource = .object([("resourceType", .string("AllergyIntolerance")), ("id", .string(id)),
                                ("clinicalStatus", Self.concept(system: Self.allergyClinicalSystem, code: "active", display: "Active")),
                                ("code", code), ("patient", subject)])
        case .medications:
            resource = .object([("resourceType", .string("MedicationStatement")), ("id", .string(id)), ("status", .string("unknown")),
                                ("medicationCodeableConcept", code), ("subject", subject)])
        default:
            resource = .object([("resourceType", .string("Condition")), ("id", .string(id)),
                                ("clinicalStatus", Self.concept(system: Self.conditionClinicalSystem, code: "active", display: "Active")),
                                ("code", code), ("subject", subject)])
        }
        return (fullURL, resource)
    }

    // MARK: Pieces

    /// The entry's codes (system URIs for hReader's short names) and its description as the text.
    static func concept(_ content: EntryContent) -> JSONValue {
        var codings: [JSONValue] = []
        let order = ["LOINC", "SNOMED-CT", "RxNorm", "CVX", "ICD-10-CM", "ICD-10", "ICD-9-CM", "CPT", "NDC"]
        let keys = content.codes.keys.sorted { a, b in
            let (ia, ib) = (order.firstIndex(of: a) ?? order.count, order.firstIndex(of: b) ?? order.count)
            return ia != ib ? ia < ib : a < b
        }
        for key in keys {
            for code in content.codes[key] ?? [] where !code.trimmingCharacters(in: .whitespaces).isEmpty {
                var coding: JSONObject = []
                if let system = FHIRResourceText.systemURI(forKey: key) { coding.append(("system", .string(system))) }
                coding.append(("code", .string(code.trimmingCharacters(in: .whitespaces))))
                codings.append(.object(coding))
            }
        }
        var members: JSONObject = []
        if !codings.isEmpty { members.append(("coding", .array(codings))) }
        let text = content.description.trimmingCharacters(in: .whitespacesAndNewlines)
        members.append(("text", .string(text.isEmpty ? EntryLabel.name(content.type) : text)))
        return .object(members)
    }

    static func concept(system: String, code: String, display: String) -> JSONValue {
        .object([("coding", .array([.object([("system", .string(system)), ("code", .string(code)), ("display", .string(display))])]))])
    }

    static func reference(_ url: String, display: String? = nil) -> JSONValue {
        var members: JSONObject = [("reference", .string(url))]
        if let display, !display.isEmpty { members.append(("display", .string(display))) }
        return .object(members)
    }

    static func narrative(_ xhtml: String) -> JSONValue {
        .object([("status", .string("generated")), ("div", .string(narrativeDiv(xhtml)))])
    }

    /// XHTML made here, every value in it escaped, as a narrative's div.
    static func narrativeDiv(_ xhtml: String) -> String { "<div xmlns=\"http://www.w3.org/1999/xhtml\">\(xhtml)</div>" }

    /// "Essential hypertension (2026-11-06)", "Heart rate: 72 /min (2026-11-09)", escaped for XHTML.
    static func narrativeLine(_ row: SummaryRow) -> String {
        var line = row.text
        if let detail = row.detail { line += (row.entry.content.type == .result || row.entry.content.type == .vitalSign ? ": " : " — ") + detail }
        if let date = row.date { line += " (\(date))" }
        if let verification = row.verification { line += " [SMART Health Card, \(verification.badge)]" }
        return escape(line)
    }

    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    // MARK: The verified badge

    /// HL7's security labels for data integrity (v3 ObservationValue): `DIGSIG`, a digital signature
    /// was checked; `UNCERTREL`, its reliability is uncertain.
    static let observationValueSystem = "http://terminology.hl7.org/CodeSystem/v3-ObservationValue"
    /// hreader's own tag saying how the card was checked (docs/sharing.md, "The verified badge").
    static let cardVerificationSystem = "urn:hreader:smart-health-card-verification"

    /// An entry a SMART Health Card brought, said the FHIR way: `meta.security` says whether a
    /// signature was checked (`DIGSIG`) and, unless the issuer is trusted, that the reliability is
    /// uncertain (`UNCERTREL`); `meta.tag` says how (verified, untrusted-issuer, unverified) and,
    /// in its display, by whom.
    static func labels(_ verification: EntryVerification) -> (security: [JSONValue], tags: [JSONValue]) {
        func coding(_ system: String, _ code: String, _ display: String) -> JSONValue {
            .object([("system", .string(system)), ("code", .string(code)), ("display", .string(display))])
        }
        let signature = coding(observationValueSystem, "DIGSIG", "digital signature")
        let uncertain = coding(observationValueSystem, "UNCERTREL", "uncertain reliability")
        let security: [JSONValue]
        switch verification.status {
        case .verified: security = [signature]
        case .untrustedIssuer: security = [signature, uncertain]
        case .unverified: security = [uncertain]
        }
        let tag = coding(cardVerificationSystem, verification.status.rawValue, "SMART Health Card, " + verification.badge
                         + (verification.status == .verified && verification.issuer != nil ? " (\(verification.iss))" : ""))
        return (security, [tag])
    }

    /// `Type/id` of a reference that may be absolute or versioned (`http://x/fhir/Observation/1/_history/2`).
    static func relativeReference(_ reference: String) -> String {
        var parts = reference.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if let history = parts.lastIndex(of: "_history") { parts = Array(parts[..<history]) }
        guard parts.count >= 2 else { return reference }
        return parts[parts.count - 2] + "/" + parts[parts.count - 1]
    }

    /// FHIR's id: 1 to 64 of A-Z, a-z, 0-9, `-` and `.`.
    static func isFHIRID(_ id: String) -> Bool {
        (1...64).contains(id.count) && id.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == ".") }
    }

    /// An instant in UTC with seconds (FHIR `instant`).
    static func instant(_ date: Date) -> String { RFC3339.utc(Int64(date.timeIntervalSince1970)) }

    static func randomUUID() throws -> String {
        var bytes = try SecureRandom.bytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        return [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4), hex.dropFirst(20)]
            .joined(separator: "-")
    }
}
