import Foundation
import HReaderJSON

/// One `<ClinicalRecord>` and the FHIR R4 resource file it points to.
struct ClinicalSample {
    enum Kind: Int, CaseIterable {
        case labResult, condition, medication, allergy, immunization

        var healthKitType: String {
            switch self {
            case .labResult: return "HKClinicalTypeIdentifierLabResultRecord"
            case .condition: return "HKClinicalTypeIdentifierConditionRecord"
            case .medication: return "HKClinicalTypeIdentifierMedicationRecord"
            case .allergy: return "HKClinicalTypeIdentifierAllergyRecord"
            case .immunization: return "HKClinicalTypeIdentifierImmunizationRecord"
            }
        }

        var resourceType: String {
            switch self {
            case .labResult: return "Observation"
            case .condition: return "Condition"
            case .medication: return "MedicationStatement"
            case .allergy: return "AllergyIntolerance"
            case .immunization: return "Immunization"
            }
        }
    }

    let kind: Kind
    let id: String
    let received: Int64
    let resource: JSONValue

    /// `/clinical-records/Observation-gen-….json`, the export's resourceFilePath.
    var resourceFilePath: String { "/clinical-records/\(kind.resourceType)-\(id).json" }
}

extension Synth {
    static let clinicalSourceName = "Generator Clinic"
    static let clinicalSourceURL = "https://fhir.generator.invalid/api/FHIR/DSTU2/"
    static let patientReference = "Patient/generator-patient"

    func clinical(_ index: Int) -> ClinicalSample {
        var random = SampleRandom(seed: seed, stream: Stream.clinical, index: index)
        let kind = ClinicalSample.Kind(rawValue: index % ClinicalSample.Kind.allCases.count)!
        let slot = slot(index: index, count: plan.clinical, window: (9 * 3600, 17 * 3600))
        let recorded = slot.start + Int64(random.below(slot.length))
        // Results reach the phone a little after they are recorded.
        let received = min(recorded + Int64(random.int(600...3 * 86400)), clock.exportEpoch - 60)
        let id = "gen-" + kind.resourceType.prefix(3).lowercased() + "-" + String(format: "%012llx", random.next() & 0xFFFF_FFFF_FFFF)
        let patient = JSONValue.object([("reference", .string(Synth.patientReference)), ("display", .string("Zoë Generator"))])

        func coding(_ system: String, _ code: String, _ display: String) -> JSONValue {
            .object([("system", .string(system)), ("code", .string(code)), ("display", .string(display))])
        }
        func concept(_ system: String, _ code: String, _ display: String) -> JSONValue {
            .object([("coding", .array([coding(system, code, display)])), ("text", .string(display))])
        }
        let snomed = "http://snomed.info/sct"

        let resource: JSONValue
        switch kind {
        case .labResult:
            let tests: [(code: String, name: String, unit: String, low: Double, high: Double, places: Int)] = [
                ("2345-7", "Glucose [Mass/volume] in Serum or Plasma", "mg/dL", 70, 140, 0),
                ("718-7", "Hemoglobin [Mass/volume] in Blood", "g/dL", 11.5, 16.5, 1),
                ("2093-3", "Cholesterol [Mass/volume] in Serum or Plasma", "mg/dL", 150, 240, 0),
                ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", "%", 4.8, 6.5, 1),
                ("2160-0", "Creatinine [Mass/volume] in Serum or Plasma", "mg/dL", 0.6, 1.2, 2),
            ]
            let test = tests[random.below(tests.count)]
            let value = test.low + random.unit() * (test.high - test.low)
            resource = .object([
                ("resourceType", .string("Observation")),
                ("id", .string(id)),
                ("status", .string("final")),
                ("category", .array([.object([("coding", .array([coding(
                    "http://terminology.hl7.org/CodeSystem/observation-category", "laboratory", "Laboratory")]))])])),
                ("code", concept("http://loinc.org", test.code, test.name)),
                ("subject", patient),
                ("effectiveDateTime", .string(clock.fhirDateTime(recorded))),
                ("issued", .string(clock.utcISO(received))),
                ("valueQuantity", .object([
                    ("value", .number(String(format: "%.\(test.places)f", value))),
                    ("unit", .string(test.unit)),
                    ("system", .string("http://unitsofmeasure.org")),
                    ("code", .string(test.unit)),
                ])),
            ])
        case .condition:
            let conditions = [
                ("38341003", "Hypertensive disorder, systemic arterial (disorder)"),
                ("195967001", "Asthma (disorder)"),
                ("44054006", "Diabetes mellitus type 2 (disorder)"),
                ("40055000", "Chronic sinusitis (disorder)"),
            ]
            let condition = conditions[random.below(conditions.count)]
            resource = .object([
                ("resourceType", .string("Condition")),
                ("id", .string(id)),
                ("clinicalStatus", concept("http://terminology.hl7.org/CodeSystem/condition-clinical", "active", "Active")),
                ("verificationStatus", concept("http://terminology.hl7.org/CodeSystem/condition-ver-status", "confirmed", "Confirmed")),
                ("category", .array([concept("http://terminology.hl7.org/CodeSystem/condition-category", "problem-list-item", "Problem List Item")])),
                ("code", concept(snomed, condition.0, condition.1)),
                ("subject", patient),
                ("onsetDateTime", .string(clock.fhirDate(recorded))),
                ("recordedDate", .string(clock.fhirDateTime(recorded))),
            ])
        case .medication:
            let medications = [
                ("314076", "lisinopril 10 MG Oral Tablet", "1 tablet by mouth once daily"),
                ("197361", "amlodipine 5 MG Oral Tablet", "1 tablet by mouth once daily"),
                ("861007", "metformin hydrochloride 500 MG Oral Tablet", "1 tablet by mouth twice daily with meals"),
            ]
            let medication = medications[random.below(medications.count)]
            resource = .object([
                ("resourceType", .string("MedicationStatement")),
                ("id", .string(id)),
                ("status", .string("active")),
                ("medicationCodeableConcept", concept("http://www.nlm.nih.gov/research/umls/rxnorm", medication.0, medication.1)),
                ("subject", patient),
                ("effectivePeriod", .object([("start", .string(clock.fhirDate(recorded)))])),
                ("dateAsserted", .string(clock.fhirDateTime(recorded))),
                ("dosage", .array([.object([("text", .string(medication.2))])])),
            ])
        case .allergy:
            let allergies = [
                ("764146007", "Penicillin (substance)", "medication"),
                ("256349002", "Peanut - dietary (substance)", "food"),
                ("227493005", "Cashew nut (substance)", "food"),
            ]
            let allergy = allergies[random.below(allergies.count)]
            resource = .object([
                ("resourceType", .string("AllergyIntolerance")),
                ("id", .string(id)),
                ("clinicalStatus", concept("http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "active", "Active")),
                ("verificationStatus", concept("http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", "confirmed", "Confirmed")),
                ("type", .string("allergy")),
                ("category", .array([.string(allergy.2)])),
                ("criticality", .string(random.percent(70) ? "low" : "high")),
                ("code", concept(snomed, allergy.0, allergy.1)),
                ("patient", patient),
                ("recordedDate", .string(clock.fhirDateTime(recorded))),
                ("reaction", .array([.object([
                    ("manifestation", .array([concept(snomed, "271807003", "Eruption of skin (disorder)")])),
                    ("severity", .string(random.percent(70) ? "mild" : "moderate")),
                ])])),
            ])
        case .immunization:
            let vaccines = [
                ("140", "Influenza, seasonal, injectable, preservative free"),
                ("115", "Tdap"),
                ("208", "COVID-19, mRNA, LNP-S, PF, 30 mcg/0.3 mL dose"),
            ]
            let vaccine = vaccines[random.below(vaccines.count)]
            resource = .object([
                ("resourceType", .string("Immunization")),
                ("id", .string(id)),
                ("status", .string("completed")),
                ("vaccineCode", concept("http://hl7.org/fhir/sid/cvx", vaccine.0, vaccine.1)),
                ("patient", patient),
                ("occurrenceDateTime", .string(clock.fhirDateTime(recorded))),
                ("primarySource", .bool(true)),
                ("lotNumber", .string(String(format: "GEN%05d", random.below(100_000)))),
            ])
        }
        return ClinicalSample(kind: kind, id: id, received: received, resource: resource)
    }

    func writeClinicalRecord(_ sample: ClinicalSample, into out: inout ByteSink) {
        out.raw(" <ClinicalRecord type=\"")
        out.escaped(sample.kind.healthKitType)
        out.raw("\" identifier=\"")
        out.escaped(sample.id)
        out.raw("\" sourceName=\"")
        out.escaped(Synth.clinicalSourceName)
        out.raw("\" sourceURL=\"")
        out.escaped(Synth.clinicalSourceURL)
        out.raw("\" fhirVersion=\"4.0.1\" receivedDate=\"")
        out.healthDate(sample.received, clock)
        out.raw("\" resourceFilePath=\"")
        out.escaped(sample.resourceFilePath)
        out.raw("\"/>\n")
    }

    func clinicalJSON(_ sample: ClinicalSample) -> Data {
        Data((sample.resource.serialized(pretty: true) + "\n").utf8)
    }
}
