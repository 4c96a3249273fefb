import HReaderJSON

/// The entries of each section as FHIR R4 resources, per "C-CDA on FHIR". Each builder returns the
/// resource (without its id, which `CCDAMapping` gives) or why it was skipped.
extension CCDAMapping {
    typealias Built = Result<JSONObject, Skipped>

    static let snomed = "http://snomed.info/sct"
    static let loinc = "http://loinc.org"

    private func skip(_ reason: String) -> Built { .failure(Skipped(reason)) }

    private func statusCode(_ element: CDAElement) -> String? { element.child("statusCode")?[attribute: "code"]?.lowercased() }

    private func moodCode(_ element: CDAElement) -> String { element[attribute: "moodCode"]?.uppercased() ?? "EVN" }

    /// The FHIR time members of an effectiveTime: `<prefix>DateTime` for a point (or a low alone),
    /// `<prefix>Period` for an interval.
    private func timeMembers(_ element: CDAElement, prefix: String, fallback: CDAElement? = nil) -> [JSONObject.Member] {
        var times = CCDAValues.interval(of: element)
        if times.point == nil, times.low == nil, times.high == nil, let fallback { times = CCDAValues.interval(of: fallback) }
        if let point = times.point { return [("\(prefix)DateTime", .string(point))] }
        if let low = times.low, times.high == nil { return [("\(prefix)DateTime", .string(low))] }
        var period: [JSONObject.Member] = []
        if let low = times.low { period.append(("start", .string(low))) }
        if let high = times.high { period.append(("end", .string(high))) }
        return period.isEmpty ? [] : [("\(prefix)Period", .object(JSONObject(period)))]
    }

    /// A statement whose own nullFlavor says it is unknown is no record.
    private func unknownStatement(_ statement: CDAElement) -> Built? {
        statement.nullFlavor.map { skip("a statement the document marks unknown (nullFlavor \($0)), not a record") }
    }

    // MARK: Problems

    /// A Problem Observation as a Condition: its value is the problem; a negated one is refuted;
    /// the clinical status comes from its Problem Status observation, else its concern's statusCode.
    func condition(_ observation: CDAElement, concern: CDAElement?) -> Built {
        if let unknown = unknownStatement(observation) { return unknown }
        var code = concept(observation.child("value"))
        if observation.child("value") == nil, let named = concept(observation.child("code")),
           !CCDAValues.codes(of: named).contains(where: { Self.problemTypeCodes.contains($0.code) }) {
            code = named  // a vendor that names the problem in `code` and gives no value
        }
        guard !CCDAValues.isPlaceholder(code), let code else {
            return skip("a problem whose value is a nullFlavor or a placeholder (no problem named)")
        }
        if observation.isNegated, CCDAValues.codes(of: code).contains(where: { Self.problemTypeCodes.contains($0.code) }) {
            return skip("a statement that there are no known problems (a negated \"Problem\"), not a record")
        }
        var members: [JSONObject.Member] = [("resourceType", "Condition")]
        members += identifiers(observation)
        let times = CCDAValues.interval(of: observation)
        if observation.isNegated {
            members.append(("verificationStatus", CCDAValues.concept("http://terminology.hl7.org/CodeSystem/condition-ver-status",
                                                                     "refuted", "Refuted")))
        } else if var status = clinicalStatus(observation, concern: concern) {
            if status == "active", times.high != nil { status = "resolved" }  // an abated condition is not active (con-4)
            members.append(("clinicalStatus", CCDAValues.concept("http://terminology.hl7.org/CodeSystem/condition-clinical",
                                                                 status, status.prefix(1).uppercased() + status.dropFirst())))
        }
        members.append(("category", [CCDAValues.concept("http://terminology.hl7.org/CodeSystem/condition-category",
                                                        "problem-list-item", "Problem List Item")]))
        members.append(("code", .object(code)))
        members.append(("subject", subject))
        if let onset = times.point ?? times.low { members.append(("onsetDateTime", .string(onset))) }
        if let abatement = times.high { members.append(("abatementDateTime", .string(abatement))) }
        return .success(JSONObject(members))
    }

    /// active, inactive or resolved: a status observation's value (SNOMED 55561003, 73425007,
    /// 413322009), else the concern act's statusCode.
    /// A problem's clinical status: its own Status Observation or its concern's, else the concern's
    /// statusCode.
    private func clinicalStatus(_ observation: CDAElement, concern: CDAElement?) -> String? {
        status(of: observation, alsoIn: concern, concern: concern)
    }

    /// The status a Status Observation (Problem Status, Allergy Status) gives, found among the
    /// entry relationships of `observation` and of `alsoIn`; else what the concern act's statusCode
    /// means (active, completed → resolved, suspended or aborted → inactive).
    private func status(of observation: CDAElement, alsoIn other: CDAElement?, concern: CDAElement?) -> String? {
        let statuses = (observation.all("entryRelationship") + (other?.all("entryRelationship") ?? []))
            .compactMap { $0.child("observation") }.filter(Self.isStatusObservation)
        for status in statuses {
            switch status.child("value")?[attribute: "code"] {
            case "55561003"?: return "active"
            case "73425007"?: return "inactive"
            case "413322009"?: return "resolved"
            default: continue
            }
        }
        switch concern.flatMap(statusCode) {
        case "active"?: return "active"
        case "completed"?: return "resolved"
        case "suspended"?, "aborted"?: return "inactive"
        default: return nil
        }
    }

    /// Codes that say what kind of statement a Problem Observation is (problem, condition, finding,
    /// symptom, diagnosis, complaint, functional limitation), not which problem.
    static let problemTypeCodes: Set<String> = ["55607006", "64572001", "404684003", "418799008", "282291009", "409586006",
                                                "248536006", "75326-9", "75325-1", "75322-8", "75315-2", "75318-6", "75319-4",
                                                "75321-0", "75323-6", "75324-4", "29308-4", "11450-4", "ASSERTION"]

    // MARK: Allergies

    static let noKnownAllergy = [("419199007", "716186003", "No known allergy"), ("416098002", "409137002", "No known drug allergy"),
                                 ("414285001", "429625007", "No known food allergy"), ("426232007", "428607008", "No known environmental allergy")]
    static let noKnownAllergyCodes: Set<String> = Set(noKnownAllergy.map(\.1))

    /// An Allergy Intolerance Observation: the substance is its participant's playingEntity, by
    /// its code, else by its name. A negated one with no substance is "no known (drug, food)
    /// allergy"; with a substance, refuted.
    func allergy(_ observation: CDAElement, concern: CDAElement?) -> Built {
        if let unknown = unknownStatement(observation) { return unknown }
        let entity = observation.all("participant").first { $0[attribute: "typeCode"] == "CSM" || $0.at("participantRole/playingEntity") != nil }?
            .at("participantRole/playingEntity")
        var substance = concept(entity?.child("code"))
        if CCDAValues.isPlaceholder(substance), let name = entity?.child("name").flatMap({ nonEmpty($0.plainText) }),
           !CCDAValues.isPlaceholderText(name) {
            // The product's own name where the code names nothing: the VA's C32 codes "UNK" and says
            // "Coded Allergy Name Not Available" beside <name>LATEX STRAP</name>.
            substance = JSONObject((substance?.members.filter { $0.key != "text" } ?? []) + [("text", .string(name))])
        }
        if CCDAValues.isPlaceholder(substance) { substance = nil }
        let type = concept(observation.child("value"))
        let typeCodes = Set(CCDAValues.codes(of: type).filter { $0.system == Self.snomed }.map(\.code))
        var members: [JSONObject.Member] = [("resourceType", "AllergyIntolerance")]
        members += identifiers(observation)
        let clinical = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical"
        let verification = "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification"

        let noKnown = Self.noKnownAllergy.first { typeCodes.contains($0.1) }
            ?? (observation.isNegated && substance == nil ? (Self.noKnownAllergy.first { typeCodes.contains($0.0) } ?? Self.noKnownAllergy[0]) : nil)
        if let noKnown {
            // "No known allergies" is information, kept with its SNOMED code (never as an allergy to something).
            members.append(("clinicalStatus", CCDAValues.concept(clinical, "active", "Active")))
            members.append(("verificationStatus", CCDAValues.concept(verification, "confirmed", "Confirmed")))
            members.append(("code", CCDAValues.concept(Self.snomed, noKnown.1, noKnown.2)))
            members.append(("patient", subject))
            return .success(JSONObject(members))
        }
        guard let substance else { return skip("an allergy whose substance is a nullFlavor or a placeholder (no substance named)") }
        if observation.isNegated {
            // Refuted; R4 asks for a clinical status beside it (ait-1): inactive.
            members.append(("clinicalStatus", CCDAValues.concept(clinical, "inactive", "Inactive")))
            members.append(("verificationStatus", CCDAValues.concept(verification, "refuted", "Refuted")))
        } else {
            let times = CCDAValues.interval(of: observation)
            var status = allergyStatus(observation, concern: concern) ?? (times.high == nil ? "active" : "resolved")
            if status == "active", times.high != nil { status = "resolved" }
            members.append(("clinicalStatus", CCDAValues.concept(clinical, status, status.prefix(1).uppercased() + status.dropFirst())))
        }
        if !typeCodes.isDisjoint(with: ["235719002", "59037007", "420134006", "418471000", "418038007"]) {
            members.append(("type", "intolerance"))
        } else if !typeCodes.isDisjoint(with: ["419199007", "416098002", "414285001", "426232007", "419511003"]) {
            members.append(("type", "allergy"))
        }
        if !typeCodes.isDisjoint(with: ["416098002", "419511003", "59037007"]) {
            members.append(("category", ["medication"]))
        } else if !typeCodes.isDisjoint(with: ["414285001", "235719002", "414285001"]) {
            members.append(("category", ["food"]))
        } else if typeCodes.contains("426232007") {
            members.append(("category", ["environment"]))
        }
        members.append(("code", .object(substance)))
        members.append(("patient", subject))
        let times = CCDAValues.interval(of: observation)
        if let onset = times.point ?? times.low { members.append(("onsetDateTime", .string(onset))) }
        if !observation.isNegated, let reaction = reaction(observation) { members.append(("reaction", [.object(reaction)])) }
        return .success(JSONObject(members))
    }

    /// An allergy's status: its own Allergy Status Observation only (not the concern's), else the
    /// concern's statusCode.
    private func allergyStatus(_ observation: CDAElement, concern: CDAElement?) -> String? {
        status(of: observation, alsoIn: nil, concern: concern)
    }

    /// The manifestations (reaction observations, MFST) and the severity (SEV) of an allergy.
    private func reaction(_ observation: CDAElement) -> JSONObject? {
        let related = observation.all("entryRelationship").compactMap { relationship -> (String?, CDAElement)? in
            relationship.child("observation").map { (relationship[attribute: "typeCode"], $0) }
        }
        var manifestations: [JSONValue] = []
        var severity: String?
        func severityOf(_ element: CDAElement) -> String? {
            switch element.child("value")?[attribute: "code"] {
            case "255604002"?: "mild"
            case "6736007"?, "371923003"?: "moderate"
            case "24484000"?, "371924009"?, "399166001"?: "severe"
            default: nil
            }
        }
        for (typeCode, inner) in related {
            let isSeverity = inner.child("code")?[attribute: "code"] == "SEV" || inner.hasTemplate("2.16.840.1.113883.10.20.22.4.8")
            if isSeverity {
                severity = severity ?? severityOf(inner)
            } else if typeCode == "MFST" || inner.hasTemplate("2.16.840.1.113883.10.20.22.4.9") || inner.hasTemplate("2.16.840.1.113883.10.20.1.54") {
                guard !inner.isNegated, let manifestation = concept(inner.child("value")), !CCDAValues.isPlaceholder(manifestation) else { continue }
                manifestations.append(.object(manifestation))
                for nested in inner.all("entryRelationship").compactMap({ $0.child("observation") }) where
                    nested.child("code")?[attribute: "code"] == "SEV" || nested.hasTemplate("2.16.840.1.113883.10.20.22.4.8") {
                    severity = severity ?? severityOf(nested)
                }
            }
        }
        guard !manifestations.isEmpty else { return nil }
        var members: [JSONObject.Member] = [("manifestation", .array(manifestations))]
        if let severity { members.append(("severity", .string(severity))) }
        return JSONObject(members)
    }

    // MARK: Medications and immunizations

    /// The drug or vaccine of a substanceAdministration: its manufacturedMaterial's code (RxNorm,
    /// CVX), with the material's name as the text when the code has none or a placeholder.
    private func material(_ administration: CDAElement) -> (concept: JSONObject?, material: CDAElement?) {
        // CCD 1.0 allowed a manufacturedLabeledDrug in place of the manufacturedMaterial.
        let material = administration.at("consumable/manufacturedProduct/manufacturedMaterial")
            ?? administration.at("consumable/manufacturedProduct/manufacturedLabeledDrug")
        var code = concept(material?.child("code"))
        if let name = material?.child("name").flatMap({ nonEmpty($0.plainText) }), !CCDAValues.isPlaceholderText(name) {
            if code == nil {
                code = ["text": .string(name)]
            } else if code?["text"]?.string.map(CCDAValues.isPlaceholderText) ?? true {
                code?.members.removeAll { $0.key == "text" }
                code?.members.append(("text", .string(name)))
            }
        }
        return (CCDAValues.isPlaceholder(code) ? nil : code, material)
    }

    /// A Medication Activity: a MedicationRequest (intent plan) for an intended one (moodCode INT,
    /// RQO, PRP), a MedicationStatement for one taken (EVN); a negated one is a MedicationStatement
    /// `not-taken`.
    func medication(_ administration: CDAElement) -> Built {
        if let unknown = unknownStatement(administration) { return unknown }
        var (drug, _) = material(administration)
        let text = administration.child("text"), row = referencedRow(text)
        if drug == nil, !administration.isNegated {
            // A free-text medication: the document's own words name it (of a row, its drug's cell if a header says which).
            let named = if let row { narrative.cell(of: row, under: Self.drugHeaders) ?? narrative.text(of: row.element) }
                        else { CCDAValues.text(text, narrative: lookup) }
            if let named, !CCDAValues.isPlaceholderText(named) { drug = ["text": .string(named)] }
        }
        if administration.isNegated, CCDAValues.codes(of: drug).contains(where: { Self.genericDrugCodes.contains($0.code) }) {
            return skip("a statement that no medication is taken (negationInd), not a record")
        }
        guard let drug else {
            return skip(administration.isNegated ? "a statement that no medication is taken (negationInd), not a record"
                                                  : "a medication whose drug is a nullFlavor or a placeholder (no drug named)")
        }
        let status = statusCode(administration)
        let intended = ["INT", "RQO", "PRP", "PRMS", "ARQ"].contains(moodCode(administration))
        var members: [JSONObject.Member]
        let dosage = self.dosage(administration)
        if intended, !administration.isNegated {
            members = [("resourceType", "MedicationRequest")]
            members += identifiers(administration)
            let requestStatus = switch status {
            case "active"?: "active"
            case "completed"?: "completed"
            case "aborted"?: "stopped"
            case "suspended"?, "held"?: "on-hold"
            case "cancelled"?: "cancelled"
            case "nullified"?: "entered-in-error"
            case "new"?: "draft"
            default: "unknown"
            }
            members += [("status", .string(requestStatus)), ("intent", "plan"), ("medicationCodeableConcept", .object(drug)), ("subject", subject)]
            if let authored = administration.all("author").lazy.compactMap({ CCDAValues.fhirDateTime($0.child("time")?[attribute: "value"]) }).first {
                members.append(("authoredOn", .string(authored)))
            }
            var instruction = dosage
            let times = CCDAValues.interval(of: administration)
            var bounds: [JSONObject.Member] = []
            if let low = times.low ?? times.point { bounds.append(("start", .string(low))) }
            if let high = times.high { bounds.append(("end", .string(high))) }
            if !bounds.isEmpty {
                var timing = instruction["timing"]?.object ?? JSONObject()
                var repeating = timing["repeat"]?.object ?? JSONObject()
                repeating.members.insert(("boundsPeriod", .object(JSONObject(bounds))), at: 0)
                timing.members.removeAll { $0.key == "repeat" }
                timing.members.append(("repeat", .object(repeating)))
                instruction.members.removeAll { $0.key == "timing" }
                instruction.members.append(("timing", .object(timing)))
            }
            if !instruction.members.isEmpty { members.append(("dosageInstruction", [.object(instruction)])) }
        } else {
            members = [("resourceType", "MedicationStatement")]
            members += identifiers(administration)
            let takenStatus = switch status {
            case "active"?: "active"
            case "completed"?: "completed"
            case "aborted"?, "cancelled"?: "stopped"
            case "suspended"?, "held"?: "on-hold"
            case "nullified"?: "entered-in-error"
            case "new"?: "intended"
            default: "unknown"
            }
            let statementStatus = administration.isNegated ? "not-taken" : takenStatus
            members += [("status", .string(statementStatus)), ("medicationCodeableConcept", .object(drug)), ("subject", subject)]
            members += timeMembers(administration, prefix: "effective")
            if !dosage.members.isEmpty { members.append(("dosage", [.object(dosage)])) }
        }
        if let row, let text = narrative.text(of: row.element) {
            members.append(("note", [["text": .string(text)]]))  // the row, which is no sig, kept as the document's words
        }
        return .success(JSONObject(members))
    }

    /// The row of the section's table a statement's `text` points to, when it points to a whole
    /// row: one vendor's medications point there (`<tr ID="Med1">`: "Lisinopril oral tablet |
    /// RxNorm: 314076 | lisinopril | 10 mg | Not Indicated"), which is neither the drug's name
    /// nor, as "C-CDA on FHIR" reads `text`, a sig.
    private func referencedRow(_ text: CDAElement?) -> CCDANarrative.Target? {
        guard let value = text?.child("reference")?[attribute: "value"], value.hasPrefix("#"),
              let target = narrative.target(forID: String(value.dropFirst())),
              CDAElement(tree: root.tree, index: target.element).name == "tr" else { return nil }
        return target
    }

    /// Headers of a medication table's columns: the drug's name, then the sig (each list in order
    /// of preference; a pharmacy's "Fill Instructions" are no sig).
    static let drugHeaders: [Set<String>] = [["medication", "medications", "drug", "drugs", "medicine", "material"], ["product", "name"]]
    static let sigHeaders: [Set<String>] = [["sig"], ["directions", "direction"], ["instructions", "instruction"]]
    static let notSigHeaders: Set<String> = ["fill", "pharmacy", "dispense", "dispensing"]

    /// "Drug or medicament", "medicinal product": negated, they say no medication at all is taken.
    static let genericDrugCodes: Set<String> = ["410942007", "763158003", "373873005"]

    /// text (the sig; of a row, its sig's cell), route, dose and frequency of a substanceAdministration.
    private func dosage(_ administration: CDAElement) -> JSONObject {
        var members: [JSONObject.Member] = []
        let text = administration.child("text")
        let sig = if let row = referencedRow(text) { narrative.cell(of: row, under: Self.sigHeaders, excluding: Self.notSigHeaders) }
                  else { CCDAValues.text(text, narrative: lookup) }
        if let sig, !CCDAValues.isPlaceholderText(sig) { members.append(("text", .string(sig))) }
        if let frequency = administration.all("effectiveTime").first(where: { $0.instanceType == "PIVL_TS" })?.child("period"),
           let value = CCDAValues.decimal(frequency[attribute: "value"]), let unit = frequency[attribute: "unit"],
           let periodUnit = ["s": "s", "min": "min", "h": "h", "d": "d", "wk": "wk", "mo": "mo", "a": "a"][unit] {
            members.append(("timing", ["repeat": ["frequency": 1, "period": .number(value), "periodUnit": .string(periodUnit)]]))
        }
        if let route = concept(administration.child("routeCode")), !CCDAValues.isPlaceholder(route) { members.append(("route", .object(route))) }
        if let dose = administration.child("doseQuantity") {
            let quantity = CCDAValues.quantity(dose) ?? dose.child("low").flatMap(CCDAValues.quantity)
            if let quantity { members.append(("doseAndRate", [["doseQuantity": .object(quantity)]])) }
        }
        return JSONObject(members)
    }

    /// An Immunization Activity: given (completed), or refused (negationInd: `not-done` with the
    /// refusal reason). A planned one (moodCode INT) was not given and is skipped.
    func immunization(_ administration: CDAElement) -> Built {
        if let unknown = unknownStatement(administration) { return unknown }
        let (vaccine, material) = material(administration)
        guard let vaccine else { return skip("an immunization whose vaccine is a nullFlavor or a placeholder (no vaccine named)") }
        let status = statusCode(administration)
        if !administration.isNegated, moodCode(administration) != "EVN" {
            return skip("a planned immunization (moodCode \(moodCode(administration))), not one given")
        }
        var members: [JSONObject.Member] = [("resourceType", "Immunization")]
        members += identifiers(administration)
        if administration.isNegated || ["aborted", "cancelled", "held", "suspended", "new"].contains(status ?? "") {
            members.append(("status", "not-done"))
            let reason = administration.all("entryRelationship").compactMap { $0.child("observation") }
                .first { $0.hasTemplate("2.16.840.1.113883.10.20.22.4.53") || $0.child("code") != nil }
            if let reason = concept(reason?.child("code")) ?? concept(reason?.child("value")) {
                members.append(("statusReason", .object(reason)))
            }
        } else {
            members.append(("status", status == "nullified" ? "entered-in-error" : "completed"))
        }
        members.append(("vaccineCode", .object(vaccine)))
        members.append(("patient", subject))
        let times = CCDAValues.interval(of: administration)
        if let when = times.point ?? times.low ?? times.high {
            members.append(("occurrenceDateTime", .string(when)))
        } else {
            members.append(("occurrenceString", "not stated in the document"))
        }
        if let lot = material?.child("lotNumberText").flatMap({ nonEmpty($0.plainText) }) { members.append(("lotNumber", .string(lot))) }
        if let route = concept(administration.child("routeCode")), !CCDAValues.isPlaceholder(route) { members.append(("route", .object(route))) }
        if let dose = administration.child("doseQuantity").flatMap(CCDAValues.quantity) { members.append(("doseQuantity", .object(dose))) }
        return .success(JSONObject(members))
    }

    // MARK: Observations (results, vital signs, social history, functional status)

    func observation(_ observation: CDAElement, organizer: CDAElement?, kind: CCDASectionKind) -> Built {
        if let unknown = unknownStatement(observation) { return unknown }
        if observation.isNegated { return skip("an observation the document negates (negationInd), not a record") }
        if moodCode(observation) != "EVN" { return skip("an observation not made (moodCode \(moodCode(observation)))") }
        var code = concept(observation.child("code"))
        let isAssertion = CCDAValues.codes(of: code).contains { $0.code == "ASSERTION" }
        if isAssertion, observation.hasTemplate("2.16.840.1.113883.10.20.22.4.78") || isSmokingValue(observation) {
            // C-CDA R1.1 codes smoking status as ASSERTION; C-CDA on FHIR names it with LOINC.
            code = ["coding": [CCDAValues.coding(Self.loinc, "72166-2", "Tobacco smoking status")]]
        }
        guard let code, !CCDAValues.isPlaceholder(code) else {
            return skip("an observation whose code is a nullFlavor or a placeholder (nothing named)")
        }
        let category = switch kind {
        case .vitalSigns: Self.vitalSignsCategory
        case .socialHistory: Self.socialHistoryCategory
        case .functionalStatus: Self.functionalStatusCategory
        default: Self.laboratoryCategory
        }
        var members: [JSONObject.Member] = [("resourceType", "Observation")]
        members += identifiers(observation)
        let status = switch statusCode(observation) ?? organizer.flatMap(statusCode) {
        case "completed"?: "final"
        case "active"?: "preliminary"
        case "aborted"?, "cancelled"?: "cancelled"
        case "nullified"?: "entered-in-error"
        default: "unknown"
        }
        members += [("status", .string(status)), ("category", category), ("code", .object(code)), ("subject", subject)]
        members += timeMembers(observation, prefix: "effective", fallback: organizer)
        members += value(observation.child("value"))
        let interpretations = observation.all("interpretationCode").compactMap(concept).map(JSONValue.object)
        if !interpretations.isEmpty { members.append(("interpretation", .array(interpretations))) }
        let ranges = observation.all("referenceRange").compactMap { $0.child("observationRange") }.compactMap(referenceRange)
        if !ranges.isEmpty { members.append(("referenceRange", .array(ranges))) }
        return .success(JSONObject(members))
    }

    /// An Observation's `category` (one array each, shared by every resource of the kind).
    static let vitalSignsCategory: JSONValue =
        [CCDAValues.concept("http://terminology.hl7.org/CodeSystem/observation-category", "vital-signs", "Vital Signs")]
    static let socialHistoryCategory: JSONValue =
        [CCDAValues.concept("http://terminology.hl7.org/CodeSystem/observation-category", "social-history", "Social History")]
    static let functionalStatusCategory: JSONValue =
        [CCDAValues.concept("http://hl7.org/fhir/us/core/CodeSystem/us-core-category", "functional-status", "Functional Status")]
    static let laboratoryCategory: JSONValue =
        [CCDAValues.concept("http://terminology.hl7.org/CodeSystem/observation-category", "laboratory", "Laboratory")]

    private func isSmokingValue(_ observation: CDAElement) -> Bool {
        let smoking: Set<String> = ["449868002", "428041000124106", "8517006", "266919005", "77176002", "266927001", "428071000124103",
                                    "428061000124105"]
        return CCDAValues.codes(of: concept(observation.child("value"))).contains { smoking.contains($0.code) }
    }

    /// value[x] by the value's xsi:type; a nullFlavor value is a dataAbsentReason.
    private func value(_ element: CDAElement?) -> [JSONObject.Member] {
        guard let element else { return [] }
        switch element.instanceType?.uppercased() {
        case "PQ"?:
            if let quantity = CCDAValues.quantity(element) { return [("valueQuantity", .object(quantity))] }
            if let translated = element.all("translation").lazy.compactMap(translatedQuantity).first {
                return [("valueQuantity", .object(translated))]
            }
            if element.nullFlavor == nil, let written = element[attribute: "value"].flatMap(nonEmpty) {
                // Not a number ("120/80", "<5"): kept as written, with its unit, never dropped.
                let unit = element[attribute: "unit"].flatMap(nonEmpty).map { " \($0)" } ?? ""
                return [("valueString", .string(written + unit))]
            }
        case "CD"?, "CE"?, "CV"?, "CO"?, "CS"?:
            if let concept = concept(element), !CCDAValues.isPlaceholder(concept) { return [("valueCodeableConcept", .object(concept))] }
        case "ST"?, "ED"?:
            if let text = CCDAValues.text(element, narrative: lookup) { return [("valueString", .string(text))] }
        case "INT"?:
            if let number = CCDAValues.decimal(element[attribute: "value"]), !number.contains("."), number.count < 10 {
                return [("valueInteger", .number(number))]
            }
        case "REAL"?:
            if let number = CCDAValues.decimal(element[attribute: "value"]) { return [("valueQuantity", ["value": .number(number)])] }
        case "BL"?:
            if let flag = element[attribute: "value"], flag == "true" || flag == "false" { return [("valueBoolean", .bool(flag == "true"))] }
        case "TS"?:
            if let time = CCDAValues.fhirDateTime(element[attribute: "value"]) { return [("valueDateTime", .string(time))] }
        case "IVL_PQ"?:
            let low = element.child("low").flatMap(CCDAValues.quantity), high = element.child("high").flatMap(CCDAValues.quantity)
            // "≤ 5" is written as 0–5 (or no low), "> 400" as a low alone: a Quantity with its comparator.
            let lowIsZero = low.map { $0["value"]?.numberText.flatMap(Double.init) == 0 } ?? true
            if let high, lowIsZero {
                var quantity = high
                quantity.members.insert(("comparator", element.child("high")?[attribute: "inclusive"] == "false" ? "<" : "<="), at: 1)
                return [("valueQuantity", .object(quantity))]
            }
            if let low, high == nil {
                var quantity = low
                quantity.members.insert(("comparator", element.child("low")?[attribute: "inclusive"] == "false" ? ">" : ">="), at: 1)
                return [("valueQuantity", .object(quantity))]
            }
            var range: [JSONObject.Member] = []
            if let low { range.append(("low", .object(low))) }
            if let high { range.append(("high", .object(high))) }
            if !range.isEmpty { return [("valueRange", .object(JSONObject(range)))] }
        default:
            if let quantity = CCDAValues.quantity(element) { return [("valueQuantity", .object(quantity))] }
            if let concept = concept(element), !CCDAValues.isPlaceholder(concept) { return [("valueCodeableConcept", .object(concept))] }
            if let text = CCDAValues.text(element, narrative: lookup) { return [("valueString", .string(text))] }
        }
        return [("dataAbsentReason", CCDAValues.absentReason(element.nullFlavor))]
    }

    /// A PQ's translation that carries the value in a unit outside UCUM (`nullFlavor="OTH"`, the
    /// unit as its originalText): a Quantity with that unit as written, no UCUM code.
    private func translatedQuantity(_ translation: CDAElement) -> JSONObject? {
        guard let value = CCDAValues.decimal(translation[attribute: "value"]) else { return nil }
        var members: [JSONObject.Member] = [("value", .number(value))]
        if let unit = CCDAValues.originalText(translation, narrative: lookup) { members.append(("unit", .string(unit))) }
        return JSONObject(members)
    }

    private func referenceRange(_ range: CDAElement) -> JSONValue? {
        var members: [JSONObject.Member] = []
        if let value = range.child("value") {
            if let low = value.child("low").flatMap(CCDAValues.quantity) { members.append(("low", .object(low))) }
            if let high = value.child("high").flatMap(CCDAValues.quantity) { members.append(("high", .object(high))) }
        }
        if let text = CCDAValues.text(range.child("text"), narrative: lookup) { members.append(("text", .string(text))) }
        return members.isEmpty ? nil : .object(JSONObject(members))
    }

    // MARK: Procedures and encounters

    /// A Procedure Activity (procedure, observation or act) as a Procedure; a negated one is `not-done`.
    func procedure(_ statement: CDAElement) -> Built {
        if let unknown = unknownStatement(statement) { return unknown }
        guard let code = concept(statement.child("code")), !CCDAValues.isPlaceholder(code) else {
            return skip("a procedure whose code is a nullFlavor or a placeholder (nothing named)")
        }
        if !statement.isNegated, moodCode(statement) != "EVN" { return skip("a planned procedure (moodCode \(moodCode(statement))), not one done") }
        var members: [JSONObject.Member] = [("resourceType", "Procedure")]
        members += identifiers(statement)
        let recorded = switch statusCode(statement) {
        case "completed"?: "completed"
        case "active"?: "in-progress"
        case "aborted"?: "stopped"
        case "cancelled"?: "not-done"
        case "held"?, "suspended"?: "on-hold"
        case "new"?: "preparation"
        case "nullified"?: "entered-in-error"
        default: "unknown"
        }
        let status = statement.isNegated ? "not-done" : recorded
        members += [("status", .string(status)), ("code", .object(code)), ("subject", subject)]
        members += timeMembers(statement, prefix: "performed")
        return .success(JSONObject(members))
    }

    /// An Encounter Activity. R4 requires a class: the ActCode translation when the document gives
    /// one, else the NullFlavor code UNK (the class is not guessed).
    func encounter(_ encounter: CDAElement) -> Built {
        if let unknown = unknownStatement(encounter) { return unknown }
        if encounter.isNegated { return skip("an encounter the document negates (negationInd), not a record") }
        if moodCode(encounter) != "EVN" { return skip("a planned encounter (moodCode \(moodCode(encounter))), not one that took place") }
        let type = concept(encounter.child("code")).flatMap { CCDAValues.isPlaceholder($0) ? nil : $0 }
        let time = timeMembers(encounter, prefix: "period")
        guard type != nil || !time.isEmpty else { return skip("an encounter with neither a type nor a time") }
        var members: [JSONObject.Member] = [("resourceType", "Encounter")]
        members += identifiers(encounter)
        let status = switch statusCode(encounter) {
        case "completed"?: "finished"
        case "active"?: "in-progress"
        case "aborted"?, "cancelled"?: "cancelled"
        case "nullified"?: "entered-in-error"
        default: "unknown"
        }
        members.append(("status", .string(status)))
        let actCode = encounter.child("code").map { [$0] + $0.all("translation") }?.first { $0[attribute: "codeSystem"] == "2.16.840.1.113883.5.4" }
        if let actCode, let code = actCode[attribute: "code"] {
            var coding: [JSONObject.Member] = [("system", "http://terminology.hl7.org/CodeSystem/v3-ActCode"), ("code", .string(code))]
            if let display = actCode[attribute: "displayName"] { coding.append(("display", .string(display))) }
            members.append(("class", .object(JSONObject(coding))))
        } else {
            members.append(("class", CCDAValues.coding("http://terminology.hl7.org/CodeSystem/v3-NullFlavor", "UNK", "unknown")))
        }
        if let type { members.append(("type", [.object(type)])) }
        members.append(("subject", subject))
        if let period = time.first {
            if period.key == "periodDateTime" {
                members.append(("period", ["start": period.value]))
            } else {
                members.append(("period", period.value))
            }
        }
        return .success(JSONObject(members))
    }

    // MARK: Plan of care

    /// A planned act, encounter, procedure, observation, medication or supply as a ServiceRequest
    /// (intent plan, order or proposal), a goal (moodCode GOL) as a Goal. Planned medications are
    /// ServiceRequests too, so nothing planned is ever listed as a medication taken.
    func planned(_ statement: CDAElement) -> Built {
        if let unknown = unknownStatement(statement) { return unknown }
        if statement.isNegated { return skip("a planned item the document negates (negationInd), not a record") }
        let mood = moodCode(statement)
        var code = concept(statement.child("code")).flatMap { CCDAValues.isPlaceholder($0) ? nil : $0 }
        if statement.name == "substanceAdministration" || statement.name == "supply" { code = material(statement).concept ?? code }
        let text = CCDAValues.text(statement.child("text"), narrative: lookup).flatMap { CCDAValues.isPlaceholderText($0) ? nil : $0 }
        if mood == "GOL" {
            let description = concept(statement.child("value")).flatMap { CCDAValues.isPlaceholder($0) ? nil : $0 }
                ?? code ?? text.map { ["text": .string($0)] }
            guard let description else { return skip("a goal that names nothing") }
            var members: [JSONObject.Member] = [("resourceType", "Goal")]
            members += identifiers(statement)
            let status = switch statusCode(statement) {
            case "completed"?: "completed"
            case "cancelled"?, "aborted"?: "cancelled"
            default: "active"
            }
            members += [("lifecycleStatus", .string(status)), ("description", .object(description)), ("subject", subject)]
            let times = CCDAValues.interval(of: statement)
            if let start = times.low ?? times.point { members.append(("startDate", .string(String(start.prefix(10))))) }
            return .success(JSONObject(members))
        }
        if mood == "EVN" { return skip("an entry of the plan of care that is not planned (moodCode EVN)") }
        guard let concept = code ?? text.map({ ["text": .string($0)] }) else {
            return skip("a planned item whose code is a nullFlavor or a placeholder (nothing named)")
        }
        var members: [JSONObject.Member] = [("resourceType", "ServiceRequest")]
        members += identifiers(statement)
        let status = switch statusCode(statement) {
        case "completed"?: "completed"
        case "cancelled"?, "aborted"?: "revoked"
        case "held"?, "suspended"?: "on-hold"
        case "nullified"?: "entered-in-error"
        default: "active"
        }
        let intent = switch mood {
        case "RQO": "order"
        case "PRP", "PRMS": "proposal"
        default: "plan"
        }
        members += [("status", .string(status)), ("intent", .string(intent)), ("code", .object(concept)), ("subject", subject)]
        members += timeMembers(statement, prefix: "occurrence")
        if let text, concept["text"]?.string != text { members.append(("note", [["text": .string(text)]])) }
        return .success(JSONObject(members))
    }
}
