import HReaderJSON

/// Invented FHIR R4 patients and their records, the same for the same seed.
struct SyntheticFHIR {
    /// Fixed, so two runs with one seed serve identical resources.
    static let lastUpdated = "2024-06-01T12:00:00Z"

    enum Kind {
        case bloodPressure, heartRate, weight, height, bmi, oxygen, respiratoryRate
        case cholesterol, hba1c, glucose, steps, smoking
        case condition, allergy, medicationRequest, medicationStatement, encounter, immunization, procedure
        case diagnosticReport, carePlan
    }

    /// The first 24 resources of a patient: one of every kind (the one CarePlan early, so small
    /// record sizes keep it), labs before the report that cites them.
    static let firstKinds: [Kind] = [
        .bloodPressure, .condition, .allergy, .medicationRequest, .encounter, .immunization, .procedure, .carePlan,
        .heartRate, .weight, .height, .bmi, .oxygen, .respiratoryRate, .cholesterol, .hba1c, .glucose, .steps,
        .smoking, .medicationStatement, .diagnosticReport, .condition, .encounter, .bloodPressure,
    ]
    /// Then, for benchmark sizes, mostly Observations.
    static let laterKinds: [Kind] = [
        .bloodPressure, .heartRate, .weight, .glucose, .steps, .oxygen, .bloodPressure, .respiratoryRate, .hba1c,
        .steps, .heartRate, .encounter, .bloodPressure, .cholesterol, .bmi, .medicationRequest, .weight, .condition,
        .glucose, .diagnosticReport,
    ]

    private var random: SeededRandom
    private var state = FHIRStoreState()
    /// The latest lab Observations of the current patient, for DiagnosticReport.result.
    private var recentLabs: [String] = []

    static func make(patients: Int, entriesPerPatient: Int, seed: UInt64) -> FHIRStoreState {
        var generator = SyntheticFHIR(random: SeededRandom(seed: seed))
        for index in 0..<patients {
            generator.addPatient(number: index + 1, entries: entriesPerPatient)
        }
        return generator.state
    }

    private init(random: SeededRandom) { self.random = random }

    private mutating func addPatient(number: Int, entries: Int) {
        let female = random.chance(50)
        let given = random.pick(female ? Catalog.femaleNames : Catalog.maleNames)
        var givenNames: [JSONValue] = [.string(given)]
        if random.chance(40) { givenNames.append(.string(random.pick(female ? Catalog.femaleNames : Catalog.maleNames))) }
        let birth = SampleDate(&random, years: 1938...2004)
        let id = "p\(number)"
        let patient: JSONValue = [
            "resourceType": "Patient",
            "identifier": [["system": "urn:hreader-sample:mrn", "value": .string("MRN-\(Clock.pad(number, 4))")]],
            "active": true,
            "name": [["use": "official", "family": .string(random.pick(Catalog.familyNames)), "given": .array(givenNames)]],
            "gender": female ? "female" : "male",
            "birthDate": .string(birth.date),
        ]
        state.put(type: "Patient", id: id, json: patient, lastUpdated: Self.lastUpdated)

        recentLabs = []
        let firstYear = max(2009, birth.year + 1)
        for index in 0..<entries {
            let kind = index < Self.firstKinds.count
                ? Self.firstKinds[index] : Self.laterKinds[(index - Self.firstKinds.count) % Self.laterKinds.count]
            let when = SampleDate(&random, years: firstYear...2024)
            add(kind, patient: id, when: when)
        }
    }

    // MARK: Resources

    private mutating func add(_ kind: Kind, patient: String, when: SampleDate) {
        let type: String
        var resource: JSONValue
        switch kind {
        case .bloodPressure, .heartRate, .weight, .height, .bmi, .oxygen, .respiratoryRate, .cholesterol, .hba1c, .glucose, .steps, .smoking:
            type = "Observation"
            resource = observation(kind, patient: patient, when: when)
        case .condition: (type, resource) = ("Condition", condition(patient: patient, when: when))
        case .allergy: (type, resource) = ("AllergyIntolerance", allergy(patient: patient, when: when))
        case .medicationRequest: (type, resource) = ("MedicationRequest", medicationRequest(patient: patient, when: when))
        case .medicationStatement: (type, resource) = ("MedicationStatement", medicationStatement(patient: patient, when: when))
        case .encounter: (type, resource) = ("Encounter", encounter(patient: patient, when: when))
        case .immunization: (type, resource) = ("Immunization", immunization(patient: patient, when: when))
        case .procedure: (type, resource) = ("Procedure", procedure(patient: patient, when: when))
        case .diagnosticReport: (type, resource) = ("DiagnosticReport", diagnosticReport(patient: patient, when: when))
        case .carePlan: (type, resource) = ("CarePlan", carePlan(patient: patient, when: when))
        }
        let id = state.newID(type: type)
        // Every clinical resource carries an identifier, as records from real systems do.
        resource["identifier"] = [["system": .string("urn:hreader-sample:\(type.lowercased())"), "value": .string(id)]]
        state.put(type: type, id: id, json: resource, lastUpdated: Self.lastUpdated)
        if kind == .cholesterol || kind == .hba1c || kind == .glucose {
            recentLabs = Array((recentLabs + [id]).suffix(3))
        }
    }

    private static func reference(_ patient: String) -> JSONValue { ["reference": .string("Patient/\(patient)")] }

    private static func concept(_ system: String, _ code: String, _ display: String, text: String? = nil) -> JSONValue {
        ["coding": [["system": .string(system), "code": .string(code), "display": .string(display)]], "text": .string(text ?? display)]
    }

    private static func status(_ system: String, _ code: String) -> JSONValue {
        ["coding": [["system": .string("http://terminology.hl7.org/CodeSystem/\(system)"), "code": .string(code)]]]
    }

    private mutating func quantity(_ measure: Catalog.Measure) -> JSONValue {
        [
            "value": .decimal(random.double(measure.range), places: measure.places),
            "unit": .string(measure.unit), "system": .string(Catalog.ucum), "code": .string(measure.ucum),
        ]
    }

    private mutating func observation(_ kind: Kind, patient: String, when: SampleDate) -> JSONValue {
        let measure: Catalog.Measure?
        let category: (code: String, display: String)
        switch kind {
        case .heartRate: (measure, category) = (Catalog.heartRate, ("vital-signs", "Vital Signs"))
        case .weight: (measure, category) = (Catalog.weight, ("vital-signs", "Vital Signs"))
        case .height: (measure, category) = (Catalog.height, ("vital-signs", "Vital Signs"))
        case .bmi: (measure, category) = (Catalog.bmi, ("vital-signs", "Vital Signs"))
        case .oxygen: (measure, category) = (Catalog.oxygen, ("vital-signs", "Vital Signs"))
        case .respiratoryRate: (measure, category) = (Catalog.respiratoryRate, ("vital-signs", "Vital Signs"))
        case .cholesterol: (measure, category) = (Catalog.cholesterol, ("laboratory", "Laboratory"))
        case .hba1c: (measure, category) = (Catalog.hba1c, ("laboratory", "Laboratory"))
        case .glucose: (measure, category) = (Catalog.glucose, ("laboratory", "Laboratory"))
        case .steps: (measure, category) = (Catalog.steps, ("activity", "Activity"))
        case .bloodPressure: (measure, category) = (nil, ("vital-signs", "Vital Signs"))
        default: (measure, category) = (nil, ("social-history", "Social History"))
        }
        var resource: JSONValue = [
            "resourceType": "Observation",
            "status": "final",
            "category": [
                [
                    "coding": [
                        [
                            "system": "http://terminology.hl7.org/CodeSystem/observation-category",
                            "code": .string(category.code), "display": .string(category.display),
                        ]
                    ]
                ]
            ],
        ]
        switch kind {
        case .bloodPressure:
            // The panel (85354-9) carries its two readings as components, as the vital-signs profile wants.
            resource["code"] = Self.concept(Catalog.loinc, "85354-9", "Blood pressure panel with all children optional", text: "Blood pressure")
            resource["subject"] = Self.reference(patient)
            resource["effectiveDateTime"] = .string(when.dateTime)
            resource["component"] = [
                ["code": Self.concept(Catalog.loinc, Catalog.systolic.loinc, Catalog.systolic.display), "valueQuantity": quantity(Catalog.systolic)],
                ["code": Self.concept(Catalog.loinc, Catalog.diastolic.loinc, Catalog.diastolic.display), "valueQuantity": quantity(Catalog.diastolic)],
            ]
        case .smoking:
            resource["code"] = Self.concept(Catalog.loinc, "72166-2", "Tobacco smoking status")
            resource["subject"] = Self.reference(patient)
            resource["effectiveDateTime"] = .string(when.dateTime)
            resource["valueString"] = .string(random.pick(Catalog.smokingStatuses))
        default:
            guard let measure else { break }
            resource["code"] = Self.concept(Catalog.loinc, measure.loinc, measure.display)
            resource["subject"] = Self.reference(patient)
            resource["effectiveDateTime"] = .string(when.dateTime)
            if category.code == "laboratory" { resource["issued"] = .string(when.adding(minutes: 90).dateTime) }
            resource["valueQuantity"] = quantity(measure)
        }
        return resource
    }

    private mutating func condition(patient: String, when: SampleDate) -> JSONValue {
        let problem = random.pick(Catalog.problems)
        let resolved = random.chance(25)
        // Onsets are often vague: a year, a month, or a day.
        let onset = random.pick([when.year.description, when.yearMonth, when.date, when.dateTime])
        var resource: JSONValue = [
            "resourceType": "Condition",
            "clinicalStatus": Self.status("condition-clinical", resolved ? "resolved" : "active"),
            "verificationStatus": Self.status("condition-ver-status", "confirmed"),
            "category": [Self.concept("http://terminology.hl7.org/CodeSystem/condition-category", "problem-list-item", "Problem List Item")],
            "code": [
                "coding": [
                    ["system": .string(Catalog.snomed), "code": .string(problem.snomed), "display": .string(problem.display)],
                    ["system": .string(Catalog.icd10), "code": .string(problem.icd10), "display": .string(problem.icd10Display)],
                ],
                "text": .string(problem.display),
            ],
            "subject": Self.reference(patient),
            "onsetDateTime": .string(onset),
        ]
        if resolved { resource["abatementDateTime"] = .string("\(min(when.year + 1, 2024))") }
        resource["recordedDate"] = .string(when.date)
        return resource
    }

    private mutating func allergy(patient: String, when: SampleDate) -> JSONValue {
        let allergen = random.pick(Catalog.allergens)
        let reaction = random.pick(Catalog.reactions)
        let severity = random.pick(Catalog.severities).0
        return [
            "resourceType": "AllergyIntolerance",
            "clinicalStatus": Self.status("allergyintolerance-clinical", "active"),
            "verificationStatus": Self.status("allergyintolerance-verification", "confirmed"),
            "type": "allergy",
            "category": [.string(allergen.category)],
            "criticality": severity == "severe" ? "high" : "low",
            "code": Self.concept(allergen.system, allergen.code, allergen.display),
            "patient": Self.reference(patient),
            "onsetDateTime": .string(random.chance(50) ? when.year.description : when.date),
            "reaction": [
                [
                    "manifestation": [Self.concept(Catalog.snomed, reaction.code, reaction.display)],
                    "severity": .string(severity),
                ]
            ],
        ]
    }

    private static func dosage(_ drug: Catalog.Drug) -> JSONValue {
        [
            "text": .string(drug.instructions),
            "doseAndRate": [
                [
                    "doseQuantity": [
                        "value": .decimal(drug.dose, places: 0), "unit": .string(drug.doseUnit),
                        "system": .string(Catalog.ucum), "code": .string(drug.doseUnit),
                    ]
                ]
            ],
        ]
    }

    private mutating func medicationRequest(patient: String, when: SampleDate) -> JSONValue {
        let drug = random.pick(Catalog.drugs)
        return [
            "resourceType": "MedicationRequest",
            "status": .string(random.pick(["active", "active", "stopped", "completed"])),
            "intent": "order",
            "medicationCodeableConcept": Self.concept(Catalog.rxnorm, drug.rxnorm, drug.display),
            "subject": Self.reference(patient),
            "authoredOn": .string(when.dateTime),
            "dosageInstruction": [Self.dosage(drug)],
        ]
    }

    private mutating func medicationStatement(patient: String, when: SampleDate) -> JSONValue {
        let drug = random.pick(Catalog.drugs)
        var resource: JSONValue = [
            "resourceType": "MedicationStatement",
            "status": .string(random.pick(["active", "completed"])),
            "medicationCodeableConcept": Self.concept(Catalog.rxnorm, drug.rxnorm, drug.display),
            "subject": Self.reference(patient),
        ]
        if random.chance(50) {
            resource["effectiveDateTime"] = .string(when.yearMonth)
        } else {
            resource["effectivePeriod"] = ["start": .string(when.date)]
        }
        resource["dateAsserted"] = .string(when.dateTime)
        resource["dosage"] = [Self.dosage(drug)]
        return resource
    }

    private mutating func encounter(patient: String, when: SampleDate) -> JSONValue {
        let visit = random.pick(Catalog.visits)
        return [
            "resourceType": "Encounter",
            "status": "finished",
            "class": ["system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": .string(visit.classCode), "display": .string(visit.classDisplay)],
            "type": [Self.concept(Catalog.snomed, visit.snomed, visit.display)],
            "subject": Self.reference(patient),
            "period": ["start": .string(when.dateTime), "end": .string(when.adding(minutes: random.int(15...120)).dateTime)],
        ]
    }

    private mutating func immunization(patient: String, when: SampleDate) -> JSONValue {
        let vaccine = random.pick(Catalog.vaccines)
        return [
            "resourceType": "Immunization",
            "status": "completed",
            "vaccineCode": Self.concept(Catalog.cvx, vaccine.code, vaccine.display),
            "patient": Self.reference(patient),
            "occurrenceDateTime": .string(random.chance(30) ? when.yearMonth : when.date),
            "primarySource": true,
        ]
    }

    private mutating func procedure(patient: String, when: SampleDate) -> JSONValue {
        let procedure = random.pick(Catalog.procedures)
        var resource: JSONValue = [
            "resourceType": "Procedure",
            "status": "completed",
            "code": Self.concept(Catalog.snomed, procedure.code, procedure.display),
            "subject": Self.reference(patient),
        ]
        if random.chance(50) {
            resource["performedDateTime"] = .string(random.chance(30) ? when.year.description : when.dateTime)
        } else {
            resource["performedPeriod"] = ["start": .string(when.dateTime), "end": .string(when.adding(minutes: 45).dateTime)]
        }
        return resource
    }

    private mutating func diagnosticReport(patient: String, when: SampleDate) -> JSONValue {
        [
            "resourceType": "DiagnosticReport",
            "status": "final",
            "category": [Self.concept("http://terminology.hl7.org/CodeSystem/v2-0074", "LAB", "Laboratory")],
            "code": Self.concept(Catalog.loinc, "24331-1", "Lipid 1996 panel - Serum or Plasma", text: "Lipid panel"),
            "subject": Self.reference(patient),
            "effectiveDateTime": .string(when.dateTime),
            "issued": .string(when.adding(minutes: 120).dateTime),
            "result": .array(recentLabs.map { ["reference": .string("Observation/\($0)")] }),
            "conclusion": "Within expected limits for the patient.",
        ]
    }

    /// One per patient: a type a PHR importer may not map, to test that unknown types are kept.
    private mutating func carePlan(patient: String, when: SampleDate) -> JSONValue {
        [
            "resourceType": "CarePlan",
            "status": "active",
            "intent": "plan",
            "title": "Heart health plan",
            "description": "Lifestyle changes agreed at the visit.",
            "subject": Self.reference(patient),
            "period": ["start": .string(when.date)],
            "activity": .array(
                [random.pick(Catalog.goals), random.pick(Catalog.goals)].map { goal in
                    ["detail": ["status": "in-progress", "description": .string(goal)]]
                }),
        ]
    }
}
