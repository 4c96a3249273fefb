import HReaderJSON

/// Invented records in the hData c32 JSON shape that hReader (2013) imported from RHEx servers:
/// epoch-second times (some null), `codes` keyed by hData's code-system names, string scalars.
struct SyntheticRHEx {
    private var random: SeededRandom

    static func make(count: Int, seed: UInt64) -> [RHExRecord] {
        // A different stream from the FHIR patients', so the two sets are not mirror images.
        var generator = SyntheticRHEx(random: SeededRandom(seed: seed ^ 0x5248_4578))
        return (0..<count).map { generator.record(number: $0 + 1) }
    }

    private init(random: SeededRandom) { self.random = random }

    private mutating func record(number: Int) -> RHExRecord {
        let id = random.hex(24)
        let female = random.chance(50)
        let birth = SampleDate(&random, years: 1938...2004)
        let effective = SampleDate(&random, years: 2013...2013)
        let years = max(2004, birth.year + 1)...2013

        func several(_ range: ClosedRange<Int>, _ make: (inout SyntheticRHEx) -> JSONValue) -> JSONValue {
            .array((0..<random.int(range)).map { _ in make(&self) })
        }
        var vitals: [JSONValue] = []
        for _ in 0..<random.int(2...4) { vitals += bloodPressure(years: years) }
        vitals.append(measured(Catalog.weight, years: years))
        vitals.append(measured(Catalog.height, years: years))
        vitals.append(measured(Catalog.bmi, years: years))
        vitals.append(measured(Catalog.heartRate, years: years))

        let json: JSONValue = [
            "_id": .string(id),
            "first": .string(random.pick(female ? Catalog.femaleNames : Catalog.maleNames)),
            "last": .string(random.pick(Catalog.familyNames)),
            "gender": female ? "F" : "M",
            // Noon UTC: the same calendar day in every time zone a client might read it in.
            "birthdate": .int(Clock.daysSinceEpoch(year: birth.year, month: birth.month, day: birth.day) * 86_400 + 43_200),
            "race": ["code": "2106-3", "code_set": "CDC-RE", "name": "White"],
            "ethnicity": ["code": "2186-5", "code_set": "CDC-RE", "name": "Not Hispanic or Latino"],
            "medical_record_number": .string("RHEX-\(Clock.pad(number, 4))"),
            "effective_time": .int(effective.epochSeconds),
            "encounters": several(2...5) { $0.encounter(years: years) },
            "conditions": several(2...4) { $0.condition(years: years) },
            "allergies": several(1...3) { $0.allergy(years: years) },
            "medications": several(2...4) { $0.medication(years: years) },
            "procedures": several(1...3) { $0.procedure(years: years) },
            "results": several(3...6) { $0.result(years: years) },
            "vital_signs": .array(vitals),
            "immunizations": several(2...4) { $0.immunization(years: years) },
            // Sections hReader did not import: a client should keep or skip them, never fail.
            "care_goals": several(1...2) { $0.careGoal(years: years) },
            "social_history": several(1...2) { $0.socialHistory(years: years) },
        ]
        return RHExRecord(id: id, json: json, bytes: json.serializedBytes())
    }

    // MARK: Entries

    private mutating func entry(_ type: String, _ description: String, codes: JSONValue, time: Int?) -> JSONValue {
        [
            "_id": .string(random.hex(24)),
            "_type": .string(type),
            "description": .string(description),
            "time": time.map { .int($0) } ?? .null,
            "codes": codes,
            "value": [:],
        ]
    }

    /// Mostly a time; now and then null, as real exports had.
    private mutating func time(_ years: ClosedRange<Int>) -> Int? {
        random.chance(12) ? nil : SampleDate(&random, years: years).epochSeconds
    }

    private static func value(_ scalar: String, _ units: String) -> JSONValue { ["scalar": .string(scalar), "units": .string(units)] }

    /// hData writes scalars as text: `118.0` (the values drawn here are always finite).
    private static func decimal(_ value: Double, places: Int) -> String { JSONNumber.decimal(value, places: places) ?? "" }

    private mutating func bloodPressure(years: ClosedRange<Int>) -> [JSONValue] {
        // Systolic and diastolic as two entries at the same time, as hData split them.
        let when = SampleDate(&random, years: years).epochSeconds
        return [Catalog.systolic, Catalog.diastolic].map { measure in
            var item = entry("Entry", measure.display, codes: ["LOINC": [.string(measure.loinc)]], time: when)
            item["value"] = Self.value(Self.decimal(random.double(measure.range), places: 1), measure.unit)
            return item
        }
    }

    private mutating func measured(_ measure: Catalog.Measure, years: ClosedRange<Int>) -> JSONValue {
        var item = entry("Entry", measure.display, codes: ["LOINC": [.string(measure.loinc)]], time: time(years))
        item["value"] = Self.value(Self.decimal(random.double(measure.range), places: max(1, measure.places)), measure.unit)
        return item
    }

    private mutating func encounter(years: ClosedRange<Int>) -> JSONValue {
        let visit = random.pick(Catalog.visits)
        let start = SampleDate(&random, years: years)
        var item = entry("Encounter", visit.display, codes: ["CPT": [.string(visit.cpt)], "SNOMED-CT": [.string(visit.snomed)]], time: start.epochSeconds)
        item["start_time"] = .int(start.epochSeconds)
        item["end_time"] = random.chance(20) ? .null : .int(start.adding(minutes: 40).epochSeconds)
        return item
    }

    private mutating func condition(years: ClosedRange<Int>) -> JSONValue {
        let problem = random.pick(Catalog.problems)
        let active = random.chance(70)
        let start = SampleDate(&random, years: years).epochSeconds
        var item = entry("Entry", problem.display, codes: ["SNOMED-CT": [.string(problem.snomed)], "ICD-10-CM": [.string(problem.icd10)]], time: nil)
        item["status"] = active ? "active" : "resolved"
        item["start_time"] = .int(start)
        item["end_time"] = active ? .null : .int(start + random.int(30...700) * 86_400)
        return item
    }

    private mutating func allergy(years: ClosedRange<Int>) -> JSONValue {
        let allergen = random.pick(Catalog.allergens)
        var item = entry("Allergy", allergen.display, codes: [allergen.shortSystem: [.string(allergen.code)]], time: time(years))
        item["status"] = "active"
        if random.chance(75) {
            let reaction = random.pick(Catalog.reactions)
            item["reaction"] = ["code": .string(reaction.code), "code_system": "SNOMED-CT", "name": .string(reaction.display)]
            let severity = random.pick(Catalog.severities)
            item["severity"] = ["code": .string(severity.1), "code_system": "SNOMED-CT", "name": .string(severity.0)]
        } else {
            item["reaction"] = .null
            item["severity"] = .null
        }
        return item
    }

    private mutating func medication(years: ClosedRange<Int>) -> JSONValue {
        let drug = random.pick(Catalog.drugs)
        let start = SampleDate(&random, years: years).epochSeconds
        var item = entry("Medication", drug.display, codes: ["RxNorm": [.string(drug.rxnorm)]], time: start)
        let active = random.chance(70)
        item["status"] = active ? "active" : "completed"
        item["start_time"] = .int(start)
        item["end_time"] = active ? .null : .int(start + random.int(30...365) * 86_400)
        item["dose"] = .string("\(Self.decimal(drug.dose, places: 0))\(drug.doseUnit)")
        return item
    }

    private mutating func procedure(years: ClosedRange<Int>) -> JSONValue {
        let procedure = random.pick(Catalog.procedures)
        var item = entry("Procedure", procedure.display, codes: ["SNOMED-CT": [.string(procedure.code)]], time: time(years))
        item["status"] = "completed"
        return item
    }

    private mutating func result(years: ClosedRange<Int>) -> JSONValue {
        let measure = random.pick([Catalog.cholesterol, Catalog.hba1c, Catalog.glucose])
        var item = entry("LabResult", measure.display, codes: ["LOINC": [.string(measure.loinc)]], time: time(years))
        item["status"] = "completed"
        item["value"] = Self.value(Self.decimal(random.double(measure.range), places: measure.places), measure.unit)
        return item
    }

    private mutating func immunization(years: ClosedRange<Int>) -> JSONValue {
        let vaccine = random.pick(Catalog.vaccines)
        return entry("Immunization", vaccine.display, codes: ["CVX": [.string(vaccine.code)]], time: time(years))
    }

    private mutating func careGoal(years: ClosedRange<Int>) -> JSONValue {
        entry("Entry", random.pick(Catalog.goals), codes: [:], time: time(years))
    }

    private mutating func socialHistory(years: ClosedRange<Int>) -> JSONValue {
        let status = random.pick(Catalog.smokingStatuses)
        return entry("Entry", status, codes: ["SNOMED-CT": [.string(Catalog.smokingCodes[status] ?? "")]], time: time(years))
    }
}
