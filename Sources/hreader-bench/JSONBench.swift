import Foundation
import HReaderJSON

/// Parse throughput of the JSON core against Foundation on the same FHIR NDJSON, one line at a time
/// (as `import --file` reads NDJSON): `JSONParser.parse` (lossless tree), `JSONSerialization.jsonObject`
/// (Foundation's tree: `120.0` becomes `120`, member order is lost), and `JSONDecoder` twice, into
/// `Codable` FHIR structs that name every member the file holds, and into a generic `Decodable` tree
/// (`AnyJSON`, the closest to what the other two build). MB/s of NDJSON text, median of 5.
func runJSONBenchmarks() throws {
    let megabytes = Double(ProcessInfo.processInfo.environment["HREADER_BENCH_JSON_MB"] ?? "") ?? 4
    let lines = BenchFHIR.ndjsonLines(bytes: Int(megabytes * 1_048_576))
    let bytes = lines.reduce(0) { $0 + $1.count + 1 }
    let data = lines.map { Data($0) }
    say("\n== JSON: parse \(lines.count) FHIR resources as NDJSON lines (\(String(format: "%.1f", Double(bytes) / 1_048_576)) MB), median of 5 ==")

    func throughput(_ name: String, _ parseAll: () throws -> Int) rethrows -> Double {
        var times: [Double] = [], parsed = 0
        _ = try parseAll()  // once to warm up, so that no parser pays for the heap's first growth
        for _ in 0..<5 { times.append(try seconds { parsed = try parseAll() }) }
        precondition(parsed == lines.count, "\(name) parsed \(parsed) of \(lines.count) lines")
        return Double(bytes) / 1_048_576 / median(times)
    }
    let core = try throughput("JSONParser") { try lines.reduce(0) { n, line in n + (try JSONParser.parse(line).object != nil ? 1 : 0) } }
    let serialization = try throughput("JSONSerialization") {
        try data.reduce(0) { n, line in n + ((try JSONSerialization.jsonObject(with: line)) is [String: Any] ? 1 : 0) }
    }
    let decoder = JSONDecoder()
    let typed = try throughput("JSONDecoder (FHIR structs)") {
        try data.reduce(0) { n, line in n + (try decoder.decode(BenchFHIR.Resource.self, from: line).id.isEmpty ? 0 : 1) }
    }
    let generic = try throughput("JSONDecoder (AnyJSON)") {
        try data.reduce(0) { n, line in n + (try decoder.decode(BenchFHIR.AnyJSON.self, from: line).isObject ? 1 : 0) }
    }
    func rate(_ value: Double) -> String { String(format: "%8.1f MB/s", value) }
    row("  JSONParser (hreader's core, lossless)", rate(core))
    row("  JSONSerialization.jsonObject", rate(serialization), String(format: "the core is %.2fx this", core / serialization))
    row("  JSONDecoder → Codable FHIR structs", rate(typed), String(format: "the core is %.2fx this", core / typed))
    row("  JSONDecoder → generic AnyJSON tree", rate(generic), String(format: "the core is %.2fx this", core / generic))

    var roundTrips: [Double] = []
    for _ in 0..<5 {
        roundTrips.append(try seconds {
            for line in lines where try JSONParser.parse(line).serializedBytes() != line { fatalError("the core did not write back what it read") }
        })
    }
    row("  JSONParser, then serializedBytes", rate(Double(bytes) / 1_048_576 / median(roundTrips)), "each line back byte for byte")
}

/// Invented FHIR R4 resources of the kinds a patient's record holds (the same kinds and sizes every
/// run, not the same values), written as NDJSON lines with the core's own writer: Patients,
/// vital-sign and laboratory Observations (blood pressure with its components), Conditions,
/// MedicationRequests and Encounters, each with meta and narrative.
enum BenchFHIR {
    static func ndjsonLines(bytes: Int) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var total = 0, patient = 0, index = 0
        while total < bytes {
            if index % 60 == 0 { patient += 1 }
            let resource = make(index: index, patient: "bench-\(patient)")
            let line = resource.serializedBytes()
            total += line.count + 1
            lines.append(line)
            index += 1
        }
        return lines
    }

    static let families = ["Müller", "O'Brien", "Nguyễn", "García", "Smith", "Kowalczyk", "Zoë-Ann"]
    static let vitals: [(code: String, display: String, unit: String, range: ClosedRange<Double>, places: Int)] = [
        ("8867-4", "Heart rate", "/min", 48...120, 0), ("29463-7", "Body weight", "kg", 45...130, 1),
        ("8310-5", "Body temperature", "Cel", 35.8...39.4, 1), ("2339-0", "Glucose [Mass/volume] in Blood", "mg/dL", 65...210, 0),
        ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", "%", 4.6...9.8, 1),
    ]
    static let problems = [("44054006", "Type 2 diabetes mellitus"), ("38341003", "Hypertensive disorder"),
                            ("195967001", "Asthma"), ("37796009", "Migraine \"without aura\"")]

    static func coding(_ system: String, _ code: String, _ display: String) -> JSONValue {
        ["coding": [["system": .string(system), "code": .string(code), "display": .string(display)]], "text": .string(display)]
    }

    static func make(index: Int, patient: String) -> JSONValue {
        let day = String(format: "20%02d-%02d-%02d", Int.random(in: 10...23), Int.random(in: 1...12), Int.random(in: 1...28))
        let time = day + String(format: "T%02d:%02d:00+01:00", Int.random(in: 0...23), Int.random(in: 0...59))
        let subject: JSONValue = ["reference": .string("Patient/\(patient)"), "display": .string(families.randomElement()!)]
        let kinds = ["Observation", "Observation", "Observation", "Observation", "Condition", "MedicationRequest", "Encounter"]
        let type = index % 60 == 0 ? "Patient" : kinds.randomElement()!
        var resource: JSONValue = [
            "resourceType": .string(type), "id": .string("\(type.lowercased())-\(index)"),
            "meta": ["versionId": .int(Int.random(in: 1...3)), "lastUpdated": .string(time)],
            "text": ["status": "generated", "div": .string("<div xmlns=\"http://www.w3.org/1999/xhtml\">\(type) \(index) &amp; notes\n</div>")],
        ]
        switch type {
        case "Patient":
            resource["identifier"] = [["system": "urn:oid:2.16.840.1.113883.4.1", "value": .string("999-\(index)")]]
            resource["name"] = [["use": "official", "family": .string(families.randomElement()!), "given": ["Jo", "Ann"]]]
            resource["gender"] = index % 2 == 0 ? "female" : "male"
            resource["birthDate"] = .string(String(format: "19%02d-%02d-%02d", Int.random(in: 40...99), Int.random(in: 1...12), Int.random(in: 1...28)))
            resource["address"] = [["line": ["1 Rue de l'Église"], "city": "Zürich", "postalCode": "8001", "country": "CH"]]
        case "Observation" where Int.random(in: 0...3) == 0:  // a quarter of them blood pressure
            resource["status"] = "final"
            resource["category"] = [coding("http://terminology.hl7.org/CodeSystem/observation-category", "vital-signs", "Vital Signs")]
            resource["code"] = coding("http://loinc.org", "85354-9", "Blood pressure panel")
            resource["subject"] = subject
            resource["effectiveDateTime"] = .string(time)
            resource["component"] = .array([("8480-6", "Systolic blood pressure", 100.0...160.0), ("8462-4", "Diastolic blood pressure", 60.0...100.0)].map { code, display, range in
                ["code": coding("http://loinc.org", code, display),
                 "valueQuantity": ["value": .decimal(Double.random(in: range), places: 0), "unit": "mm[Hg]", "system": "http://unitsofmeasure.org", "code": "mm[Hg]"]]
            })
        case "Observation":
            let vital = vitals.randomElement()!
            resource["status"] = "final"
            resource["category"] = [coding("http://terminology.hl7.org/CodeSystem/observation-category", vital.places == 0 ? "laboratory" : "vital-signs", "Category")]
            resource["code"] = coding("http://loinc.org", vital.code, vital.display)
            resource["subject"] = subject
            resource["effectiveDateTime"] = .string(time)
            resource["valueQuantity"] = ["value": .decimal(Double.random(in: vital.range), places: vital.places), "unit": .string(vital.unit),
                                         "system": "http://unitsofmeasure.org", "code": .string(vital.unit)]
        case "Condition":
            let (code, display) = problems.randomElement()!
            resource["clinicalStatus"] = coding("http://terminology.hl7.org/CodeSystem/condition-clinical", "active", "Active")
            resource["code"] = coding("http://snomed.info/sct", code, display)
            resource["subject"] = subject
            resource["onsetDateTime"] = .string(day)
            resource["recordedDate"] = .string(time)
        case "MedicationRequest":
            resource["status"] = "active"
            resource["intent"] = "order"
            resource["medicationCodeableConcept"] = coding("http://www.nlm.nih.gov/research/umls/rxnorm", "860975", "Metformin 500 MG Oral Tablet")
            resource["subject"] = subject
            resource["authoredOn"] = .string(day)
            resource["dosageInstruction"] = [["text": "1 tablet twice a day with meals", "timing": ["repeat": ["frequency": 2, "period": 1, "periodUnit": "d"]],
                                              "doseAndRate": [["doseQuantity": ["value": .decimal(500, places: 1), "unit": "mg"]]]]]
        default:
            resource["status"] = "finished"
            resource["class"] = ["system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "AMB", "display": "ambulatory"]
            resource["type"] = [coding("http://snomed.info/sct", "185349003", "Encounter for check up")]
            resource["subject"] = subject
            resource["period"] = ["start": .string(time), "end": .string(time)]
        }
        return resource
    }

    // MARK: What JSONDecoder decodes into

    struct Coding: Decodable { let system: String?, code: String?, display: String? }
    struct Concept: Decodable { let coding: [Coding]?, text: String? }
    struct Reference: Decodable { let reference: String?, display: String? }
    struct Quantity: Decodable { let value: Decimal?, unit: String?, system: String?, code: String? }
    struct Meta: Decodable { let versionId: Int?, lastUpdated: String? }
    struct Narrative: Decodable { let status: String, div: String }
    struct Identifier: Decodable { let system: String?, value: String? }
    struct HumanName: Decodable { let use: String?, family: String?, given: [String]? }
    struct Address: Decodable { let line: [String]?, city: String?, postalCode: String?, country: String? }
    struct Component: Decodable { let code: Concept, valueQuantity: Quantity? }
    struct Period: Decodable { let start: String?, end: String? }
    struct Repeat: Decodable { let frequency: Int?, period: Decimal?, periodUnit: String? }
    struct Timing: Decodable { let `repeat`: Repeat? }
    struct DoseAndRate: Decodable { let doseQuantity: Quantity? }
    struct Dosage: Decodable { let text: String?, timing: Timing?, doseAndRate: [DoseAndRate]? }

    /// Every member the generated resources hold, of every type, as optionals.
    struct Resource: Decodable {
        let resourceType: String, id: String
        let meta: Meta?, text: Narrative?
        let identifier: [Identifier]?, name: [HumanName]?, gender: String?, birthDate: String?, address: [Address]?
        let status: String?, intent: String?, category: [Concept]?, code: Concept?, subject: Reference?
        let effectiveDateTime: String?, valueQuantity: Quantity?, component: [Component]?
        let clinicalStatus: Concept?, onsetDateTime: String?, recordedDate: String?
        let medicationCodeableConcept: Concept?, authoredOn: String?, dosageInstruction: [Dosage]?
        let `class`: Coding?, type: [Concept]?, period: Period?
    }

    /// Any JSON, decoded generically (what a program that does not know the schema would use).
    enum AnyJSON: Decodable {
        case null, bool(Bool), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            // The commonest kinds first: every kind tried and refused costs a thrown DecodingError.
            if let s = try? container.decode(String.self) { self = .string(s) }
            else if let o = try? container.decode([String: AnyJSON].self) { self = .object(o) }
            else if let n = try? container.decode(Double.self) { self = .number(n) }
            else if let a = try? container.decode([AnyJSON].self) { self = .array(a) }
            else if let b = try? container.decode(Bool.self) { self = .bool(b) }
            else if container.decodeNil() { self = .null }
            else { throw DecodingError.dataCorruptedError(in: container, debugDescription: "not JSON") }
        }

        var isObject: Bool { if case .object = self { true } else { false } }
    }
}
