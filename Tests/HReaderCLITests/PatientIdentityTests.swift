import Foundation
import TestSupport
import XCTest

/// Invented FHIR R4 resources in the shapes public data has: Synthea's patients (identifiers of
/// several systems, `transaction` Bundles with `urn:uuid:` fullUrls), Bulk Data exports (one NDJSON
/// file per type, `Patient/<id>` references), IPS documents (a Composition first, sections that
/// reference the entries, contained resources).
enum InventedFHIR {
    struct Person {
        let id: String
        let given: String
        let family: String
        let birthDate: String
        let mrn: String
    }

    static let ada = Person(id: "6f1f3c2e-1111-4a1e-9d0e-000000000001", given: "Adaline", family: "Quill", birthDate: "1961-04-12", mrn: "MRN-0001")
    static let bo = Person(id: "6f1f3c2e-2222-4a1e-9d0e-000000000002", given: "Borislav", family: "Tern", birthDate: "1990-11-30", mrn: "MRN-0002")

    static func text(_ object: Any) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func patient(_ p: Person) -> [String: Any] {
        ["resourceType": "Patient", "id": p.id,
         "meta": ["profile": ["http://hl7.org/fhir/us/core/StructureDefinition/us-core-patient"]],
         "identifier": [
            ["system": "https://github.com/synthetichealth/synthea", "value": p.id],
            ["type": ["coding": [["system": "http://terminology.hl7.org/CodeSystem/v2-0203", "code": "MR"]]],
             "system": "http://hospital.example.org", "value": p.mrn],
         ],
         "name": [["use": "official", "family": p.family, "given": [p.given], "prefix": ["Mx."]]],
         "gender": "unknown", "birthDate": p.birthDate]
    }

    static func condition(_ id: String, _ text: String, subject: String, onset: String) -> [String: Any] {
        ["resourceType": "Condition", "id": id,
         "clinicalStatus": ["coding": [["system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "active"]]],
         "code": ["coding": [["system": "http://snomed.info/sct", "code": "38341003", "display": text]], "text": text],
         "subject": ["reference": subject], "onsetDateTime": onset]
    }

    static func allergy(_ id: String, _ text: String, patient: String) -> [String: Any] {
        ["resourceType": "AllergyIntolerance", "id": id, "code": ["text": text], "patient": ["reference": patient],
         "recordedDate": "2019-03-01"]
    }

    static func heartRate(_ id: String, subject: String, value: Int, at time: String) -> [String: Any] {
        ["resourceType": "Observation", "id": id, "status": "final",
         "category": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"]]]],
         "code": ["coding": [["system": "http://loinc.org", "code": "8867-4", "display": "Heart rate"]], "text": "Heart rate"],
         "subject": ["reference": subject], "effectiveDateTime": time,
         "valueQuantity": ["value": value, "unit": "/min", "system": "http://unitsofmeasure.org", "code": "/min"]]
    }

    static func encounter(_ id: String, subject: String, start: String) -> [String: Any] {
        ["resourceType": "Encounter", "id": id, "status": "finished",
         "class": ["system": "http://terminology.hl7.org/CodeSystem/v3-ActCode", "code": "AMB"],
         "type": [["text": "General examination"]], "subject": ["reference": subject], "period": ["start": start, "end": start]]
    }

    /// A Bulk Data export of two patients: one NDJSON file per resource type.
    static func bulkExport() -> [(name: String, lines: [[String: Any]])] {
        var files: [(String, [[String: Any]])] = [("Patient.000.ndjson", [patient(ada), patient(bo)])]
        var conditions: [[String: Any]] = [], observations: [[String: Any]] = [], allergies: [[String: Any]] = [],
            encounters: [[String: Any]] = []
        for (n, person) in [ada, bo].enumerated() {
            let ref = "Patient/\(person.id)"
            conditions.append(condition("cond-\(n)-a", "Hypertension", subject: ref, onset: "201\(n)-02-03"))
            conditions.append(condition("cond-\(n)-b", "Asthma", subject: ref, onset: "200\(n)"))
            allergies.append(allergy("alg-\(n)", "Peanut", patient: ref))
            encounters.append(encounter("enc-\(n)", subject: ref, start: "2020-0\(n + 1)-05T09:00:00Z"))
            for k in 0..<5 { observations.append(heartRate("hr-\(n)-\(k)", subject: ref, value: 60 + k + n, at: "2021-05-0\(k + 1)T08:00:00Z")) }
        }
        files += [("Condition.000.ndjson", conditions), ("Observation.000.ndjson", observations),
                  ("AllergyIntolerance.000.ndjson", allergies), ("Encounter.000.ndjson", encounters)]
        return files
    }
}

/// Who a record is about, across imports: `import --file` of a Bulk Data directory or its files one
/// by one in any order, `--patient` refusing files about someone else, the same download from two
/// paths, two people who share an id, and documents with contained and `urn:uuid:` references.
final class PatientIdentityTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    func writeBulk(_ directory: String) throws -> URL {
        let url = workDir.appendingPathComponent(directory)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, lines) in InventedFHIR.bulkExport() {
            try Data((lines.map(InventedFHIR.text).joined(separator: "\n") + "\n").utf8).write(to: url.appendingPathComponent(name))
        }
        return url
    }

    /// Each patient by name with their entries' content (not their local ids), sorted.
    func contents(vault: String? = nil) throws -> [String: [String]] {
        let extra = vault.map { ["--vault", $0] } ?? []
        let patients = try json(try ok(withPassword(["patients", "list", "--json"] + extra)))["patients"] as! [[String: Any]]
        var result: [String: [String]] = [:]
        for patient in patients {
            let id = String(patient["id"] as! Int)
            let entries = try json(try ok(withPassword(["entries", "list", "--patient", id, "--json"] + extra)))["entries"] as! [[String: Any]]
            let name = "\(patient["first_name"] as! String) \(patient["last_name"] as! String)"
            XCTAssertNil(result[name], "one patient per person: \(name) twice")
            result[name] = entries.map { entry in
                ["type", "description", "date", "start", "end", "value", "unit", "status"].map { "\(entry[$0] ?? "-")" }.joined(separator: "|")
            }.sorted()
        }
        return result
    }

    func testBulkDataFilesImportedOneByOneInAnyOrderGiveTheSameVaultAsTheWholeDirectory() throws {
        let directory = try writeBulk("bulk")
        // A Bulk Data manifest beside the data is passed over, not taken for a record.
        try Data(#"{"transactionTime": "2024-01-01T00:00:00Z", "request": "x", "output": []}"#.utf8)
            .write(to: directory.appendingPathComponent("manifest.json"))
        let whole = try ok(withPassword(["import", "--file", directory.path]))
        XCTAssertTrue(whole.stdout.contains("passed over manifest.json"), whole.stdout)
        let expected = try contents()
        XCTAssertEqual(expected.keys.sorted(), ["Adaline Quill", "Borislav Tern"])
        XCTAssertEqual(expected["Adaline Quill"]?.count, 9, "2 conditions, 1 allergy, 1 encounter, 5 heart rates… and nothing of Bo's")
        XCTAssertEqual(expected["Borislav Tern"]?.count, 9)

        // Another vault, the files one at a time, the Patients last.
        let other = workDir.appendingPathComponent("vault-2").path
        try ok(["init", "--vault", other, "--new-password-file", passwordFile] + CLITestCase.cheapKDF)
        let order = ["Observation.000.ndjson", "Condition.000.ndjson", "Patient.000.ndjson", "AllergyIntolerance.000.ndjson",
                     "Encounter.000.ndjson"]
        let first = try ok(withPassword(["import", "--file", directory.appendingPathComponent(order[0]).path, "--vault", other, "--json"]))
        let waiting = (try json(first)["summary"] as! [String: Any])["waiting"] as! [String: Int]
        XCTAssertEqual(waiting, ["Patient/\(InventedFHIR.ada.id)": 5, "Patient/\(InventedFHIR.bo.id)": 5],
                       "resources whose patient is unknown wait; none is filed under anyone")
        let status = try json(try ok(withPassword(["status", "--json", "--vault", other])))["counts"] as! [String: Int]
        XCTAssertEqual(status["patients"], 0)
        XCTAssertEqual(status["entries"], 0)
        for name in order.dropFirst() {
            let result = try ok(withPassword(["import", "--file", directory.appendingPathComponent(name).path, "--vault", other]))
            if name.hasPrefix("Patient") { XCTAssertTrue(result.stdout.contains("filed 14 resource(s) that were waiting"), result.stdout) }
        }
        XCTAssertEqual(try contents(vault: other), expected)

        // Imported again, whole or in part, nothing changes.
        let again = try json(try ok(withPassword(["import", "--file", directory.path, "--json"])))["summary"] as! [String: Any]
        XCTAssertEqual((again["entries"] as! [String: Any])["inserted"] as? Int, 0)
        XCTAssertEqual((again["patients"] as! [String: Any])["created"] as? Int, 0)
        XCTAssertEqual(try contents(), expected)

        // `check` says where the space goes.
        let check = try json(try ok(withPassword(["check", "--json"])))
        let tables = try XCTUnwrap(check["tables"] as? [String: [String: Int]])
        XCTAssertEqual(tables["entries"]?["rows"], 18)
        XCTAssertGreaterThan(tables["entries"]?["bytes"] ?? 0, tables["patients"]?["bytes"] ?? .max)
        XCTAssertEqual(tables["patient_identities"]?["rows"], 6, "two identifiers and the file's id, for each of two patients")
        XCTAssertNil(tables["sqlite_autoindex_entries_1"], "indexes count with their table")
    }

    func testPatientOptionRefusesResourcesAboutSomeoneElseAndWritesNothing() throws {
        try ok(withPassword(["patients", "add", "--first", "Local", "--last", "Person"]))
        // Allergies of two other people, with --patient 1: refused whole.
        let twoPeople = [InventedFHIR.allergy("a1", "Peanut", patient: "Patient/other-a"),
                         InventedFHIR.allergy("a2", "Latex", patient: "Patient/other-b")].map(InventedFHIR.text).joined(separator: "\n")
        let refused = try hreader(withPassword(["import", "--file", try file("allergies.ndjson", twoPeople), "--patient", "1"]))
        XCTAssertEqual(refused.status, 5, refused.stderr)
        XCTAssertEqual(refused.stderr.split(separator: "\n").count, 1, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("2 patients"), refused.stderr)
        let counts = try json(try ok(withPassword(["status", "--json"])))["counts"] as! [String: Int]
        XCTAssertEqual(counts["patients"], 1, "nothing written")
        XCTAssertEqual(counts["entries"], 0, "nothing written")

        // A file holding another person's Patient, given as patient 1: refused.
        let bundle = InventedFHIR.text(["resourceType": "Bundle", "type": "collection", "entry": [
            ["resource": InventedFHIR.patient(InventedFHIR.ada)],
            ["resource": InventedFHIR.condition("c1", "Gout", subject: "Patient/\(InventedFHIR.ada.id)", onset: "2020")],
        ]])
        try ok(withPassword(["import", "--file", try file("ada.json", bundle)]))   // Ada becomes patient 2
        let adaAllergy = InventedFHIR.text(InventedFHIR.allergy("a3", "Shellfish", patient: "Patient/\(InventedFHIR.ada.id)"))
        let wrong = try hreader(withPassword(["import", "--file", try file("ada-allergy.json", adaAllergy), "--patient", "1"]))
        XCTAssertEqual(wrong.status, 5, wrong.stderr)
        XCTAssertTrue(wrong.stderr.contains("patient 2"), "says who it is about: \(wrong.stderr)")
        let again = try hreader(withPassword(["import", "--file", try file("ada-again.json", bundle), "--patient", "1"]))
        XCTAssertEqual(again.status, 5, again.stderr)
        let local = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertEqual(local.count, 0, "nothing of Ada's was filed under patient 1")

        // A file about one person the vault does not know, given as patient 1: that person is patient 1
        // from now on, and a later file about them (without --patient) finds patient 1.
        let carePlan: [String: Any] = ["resourceType": "CarePlan", "id": "cp9", "status": "active", "intent": "plan",
                                       "title": "Headache diary", "subject": ["reference": "Patient/local-1"]]
        let unknown = [InventedFHIR.condition("c9", "Migraine", subject: "Patient/local-1", onset: "2018"), carePlan]
            .map(InventedFHIR.text).joined(separator: "\n")
        let mineSummary = try json(try ok(withPassword(["import", "--file", try file("mine.ndjson", unknown), "--patient", "1", "--json"])))
        XCTAssertEqual((mineSummary["summary"] as! [String: Any])["kept_unmapped"] as? [String: Int], ["CarePlan": 1], "counted once")
        let later = InventedFHIR.text(InventedFHIR.heartRate("hr9", subject: "Patient/local-1", value: 71, at: "2022-01-01T08:00:00Z"))
        try ok(withPassword(["import", "--file", try file("later.json", later)]))
        let mine = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertEqual(mine.compactMap { $0["type"] as? String }.sorted(), ["condition", "observation", "vital_sign"])
    }

    func testResourcesOfAnotherSubjectAreNotFiledUnderTheFilesOnlyPatient() throws {
        let bundle = InventedFHIR.text(["resourceType": "Bundle", "type": "collection", "entry": [
            ["resource": InventedFHIR.patient(InventedFHIR.ada)],
            ["resource": InventedFHIR.condition("c1", "Gout", subject: "Patient/\(InventedFHIR.ada.id)", onset: "2020")],
            ["resource": InventedFHIR.condition("c2", "Eczema", subject: "Patient/someone-else", onset: "2021")],
            ["resource": InventedFHIR.condition("c3", "Anemia", subject: "urn:uuid:not-in-this-file", onset: "2021")],
        ]])
        let result = try json(try ok(withPassword(["import", "--file", try file("mixed.json", bundle), "--json"])))["summary"] as! [String: Any]
        XCTAssertEqual(result["waiting"] as? [String: Int], ["Patient/someone-else": 1])
        XCTAssertEqual((result["skipped"] as? [String: Int])?.values.reduce(0, +), 1, "the broken reference is reported: \(result)")
        let entries = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertEqual(entries.compactMap { $0["description"] as? String }, ["Gout"])
    }

    func testTheSameDownloadFromTwoPathsIsOnePatient() throws {
        // A Synthea-shaped transaction Bundle: urn:uuid fullUrls and references, POST requests.
        let patientURL = "urn:uuid:\(InventedFHIR.ada.id)"
        let synthea = InventedFHIR.text(["resourceType": "Bundle", "type": "transaction", "entry": [
            ["fullUrl": patientURL, "resource": InventedFHIR.patient(InventedFHIR.ada), "request": ["method": "POST", "url": "Patient"]],
            ["fullUrl": "urn:uuid:0a000000-0000-4000-8000-000000000001",
             "resource": InventedFHIR.encounter("e1", subject: patientURL, start: "2015-06-01T10:00:00Z"),
             "request": ["method": "POST", "url": "Encounter"]],
            ["fullUrl": "urn:uuid:0a000000-0000-4000-8000-000000000002",
             "resource": InventedFHIR.condition("c1", "Hypertension", subject: patientURL, onset: "2015-06-01"),
             "request": ["method": "POST", "url": "Condition"]],
        ]])
        for folder in ["Downloads", "Desktop/copy"] {
            let directory = workDir.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(synthea.utf8).write(to: directory.appendingPathComponent("Adaline_Quill.json"))
            try ok(withPassword(["import", "--file", directory.appendingPathComponent("Adaline_Quill.json").path]))
        }
        let content = try contents()
        XCTAssertEqual(content.keys.sorted(), ["Adaline Quill"])
        XCTAssertEqual(content["Adaline Quill"]?.count, 2)
    }

    func testTwoPeopleWhoShareAnIdStayApartAndTheirSharedReferenceIsNotGuessed() throws {
        // Two downloads from unrelated places both call their patient Patient/example.
        var amy = InventedFHIR.patient(InventedFHIR.Person(id: "example", given: "Amy", family: "Shore", birthDate: "1987-02-20", mrn: "A-1"))
        amy["identifier"] = [["system": "http://clinic-a.example.org/mrn", "value": "A-1"]]
        var eve = InventedFHIR.patient(InventedFHIR.Person(id: "example", given: "Eve", family: "Sands", birthDate: "1950-07-01", mrn: "B-9"))
        eve["identifier"] = [["system": "http://clinic-b.example.org/mrn", "value": "B-9"]]
        try ok(withPassword(["import", "--file", try file("amy.json", InventedFHIR.text(amy))]))
        try ok(withPassword(["import", "--file", try file("eve.json", InventedFHIR.text(eve))]))
        XCTAssertEqual(try contents().keys.sorted(), ["Amy Shore", "Eve Sands"])
        // Amy's file again is Amy (by her identifier), not a third person.
        try ok(withPassword(["import", "--file", try file("amy-again.json", InventedFHIR.text(amy))]))
        XCTAssertEqual(try contents().count, 2)
        // A bare "Patient/example" now could be either: reported, filed under no one.
        let loose = InventedFHIR.text(InventedFHIR.condition("c1", "Fracture", subject: "Patient/example", onset: "2020"))
        let summary = try json(try ok(withPassword(["import", "--file", try file("loose.json", loose), "--json"])))["summary"] as! [String: Any]
        let skipped = summary["skipped"] as! [String: Int]
        XCTAssertEqual(skipped.count, 1)
        XCTAssertTrue(skipped.keys.first!.contains("could be any of patients 1, 2"), "\(skipped)")
        XCTAssertEqual(try contents().values.map(\.count), [0, 0])
    }

    /// Real documents reuse identifiers: a provider's NPI given as the patient id of two women with
    /// the same family name and birth date but different SSNs, and one test SSN on two people of
    /// different names and birth dates. Such a match is reported and decides nothing.
    func testAnIdentifierMatchThatTheRestOfTheRecordContradictsDecidesNothing() throws {
        func person(_ id: String, _ given: String, _ family: String, _ born: String, _ identifiers: [(String, String)]) -> String {
            var patient = InventedFHIR.patient(InventedFHIR.Person(id: id, given: given, family: family, birthDate: born, mrn: "-"))
            patient["identifier"] = identifiers.map { ["system": $0.0, "value": $0.1] }
            return InventedFHIR.text(patient)
        }
        let npi = "http://hl7.org/fhir/sid/us-npi", ssn = "http://hl7.org/fhir/sid/us-ssn"
        try ok(withPassword(["import", "--file", try file("mary.json", person("m1", "Mary", "Okafor", "1970-03-02",
                                                                               [(npi, "1234567893"), (ssn, "123-45-6789")]))]))
        let second = try ok(withPassword(["import", "--file", try file("maria.json", person("m2", "Maria", "Okafor", "1970-03-02",
                                                                                             [(npi, "1234567893"), (ssn, "987-65-4321")]))]))
        XCTAssertTrue(second.stdout.contains("its identifier \(npi)|1234567893 names patient 1 of the vault, but their identifiers of \(ssn) differ"),
                      second.stdout)
        XCTAssertEqual(try contents().keys.sorted(), ["Maria Okafor", "Mary Okafor"], "two women, not one")

        let third = try ok(withPassword(["import", "--file", try file("test-ssn.json", person("t1", "John", "Quist", "1951-09-09",
                                                                                              [(ssn, "123-45-6789")]))]))
        XCTAssertTrue(third.stdout.contains("but the birth date and the name differ"), third.stdout)
        XCTAssertEqual(try contents().keys.sorted(), ["John Quist", "Maria Okafor", "Mary Okafor"])

        // Mary's own file again is still Mary (her identifiers agree): no fourth person.
        try ok(withPassword(["import", "--file", try file("mary-again.json", person("m1", "Mary", "Okafor", "1970-03-02",
                                                                                     [(npi, "1234567893"), (ssn, "123-45-6789")]))]))
        XCTAssertEqual(try contents().count, 3)

        // `patients suggest` lists the pairs with the evidence for and against, and joins nobody.
        let suggested = try json(try ok(withPassword(["patients", "suggest", "--json"])))["suggestions"] as? [[String: Any]] ?? []
        let pairs = suggested.map { ($0["patients"] as? [Int] ?? []) }
        XCTAssertEqual(pairs.first, [1, 2], "\(suggested)")
        XCTAssertTrue(pairs.contains([1, 3]), "the shared test SSN: \(suggested)")
        let women = try XCTUnwrap(suggested.first)
        XCTAssertTrue((women["evidence"] as? [String] ?? []).contains("same family name and birth date (Okafor, 1970-03-02)"), "\(women)")
        XCTAssertTrue((women["evidence"] as? [String] ?? []).contains("both carry the identifier \(npi)|1234567893"), "\(women)")
        XCTAssertTrue((women["against"] as? [String] ?? []).contains("their identifiers of \(ssn) differ"), "\(women)")
        let text = try ok(withPassword(["patients", "suggest"]))
        XCTAssertTrue(text.stdout.contains("1 Mary Okafor and 2 Maria Okafor:"), text.stdout)
        XCTAssertEqual(try contents().count, 3, "suggesting joins nobody")
    }

    func testAServersPatientIsFoundByIdentifierAndFilesNamingItByAbsoluteReferenceFindIt() throws {
        let server = try SampleServer([], workDir: workDir)
        defer { server.stop() }
        // A portal download first: the sample server's patient p1 (its name and birth date), by the
        // MRN the server also sends.
        let p1 = try server.json("/fhir/Patient/p1")
        let p1Name = try XCTUnwrap((p1["name"] as? [[String: Any]])?.first)
        var mine = InventedFHIR.patient(InventedFHIR.Person(id: "portal-77", given: (p1Name["given"] as? [String])?.first ?? "",
                                                            family: p1Name["family"] as? String ?? "",
                                                            birthDate: p1["birthDate"] as? String ?? "", mrn: "MRN-0001"))
        mine["identifier"] = [["system": "urn:hreader-sample:mrn", "value": "MRN-0001"]]
        let download = InventedFHIR.text(["resourceType": "Bundle", "type": "collection", "entry": [
            ["resource": mine], ["resource": InventedFHIR.condition("c1", "Gout", subject: "Patient/portal-77", onset: "2020")]]])
        try ok(withPassword(["import", "--file", try file("portal.json", download)]))

        let imported = try json(try ok(withPassword(["import", "--server", server.fhir, "--patient", "p1", "--json"])))["summary"] as! [String: Any]
        XCTAssertEqual((imported["patients"] as! [String: Any])["matched"] as? Int, 1, "the server's p1 is the download's patient")
        XCTAssertEqual((imported["patients"] as! [String: Any])["created"] as? Int, 0)
        let patients = try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
        XCTAssertEqual(patients.count, 1)
        let afterImport = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertGreaterThan(afterImport.count, 10)
        let sync = try ok(withPassword(["sync"]))
        XCTAssertTrue(sync.stdout.contains("Synced 1 patient(s)"), "sync finds the patient by the server's id: \(sync.stdout)")

        // A file that names the server's p2 by absolute reference waits until p2 is imported, then joins them.
        let lab = InventedFHIR.text(InventedFHIR.heartRate("hr-x", subject: "\(server.fhir)/Patient/p2", value: 77, at: "2023-01-01T08:00:00Z"))
        let waiting = try json(try ok(withPassword(["import", "--file", try file("lab.json", lab), "--json"])))["summary"] as! [String: Any]
        XCTAssertEqual(waiting["waiting"] as? [String: Int], ["\(server.fhir)/Patient/p2": 1])
        let second = try json(try ok(withPassword(["import", "--server", server.fhir, "--patient", "p2", "--json"])))["summary"] as! [String: Any]
        XCTAssertEqual(second["filed_from_waiting"] as? Int, 1)
        let p2 = try XCTUnwrap((second["patients"] as! [String: Any])["ids"] as? [Int]).first!
        let p2Entries = try json(try ok(withPassword(["entries", "list", "--patient", "\(p2)", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertTrue(p2Entries.contains { $0["remote_id"] as? String == "Observation/hr-x" })
    }

    func testDocumentBundleWithContainedAndURNReferencesKeepsEachResourceOnce() throws {
        let patientURL = "urn:uuid:5e000000-0000-4000-8000-00000000000a"
        let medicationStatement: [String: Any] = [
            "resourceType": "MedicationStatement", "id": "ms1", "status": "active",
            "contained": [["resourceType": "Medication", "id": "med",
                           "code": ["coding": [["system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "197361",
                                                "display": "Amlodipine 5 MG Oral Tablet"]]]]],
            "medicationReference": ["reference": "#med"], "subject": ["reference": patientURL],
            "effectivePeriod": ["start": "2020-01-01"]]
        let document = InventedFHIR.text(["resourceType": "Bundle", "type": "document",
            "identifier": ["system": "urn:ietf:rfc:3986", "value": "urn:uuid:5e000000-0000-4000-8000-0000000000ff"],
            "timestamp": "2024-02-01T10:00:00Z", "entry": [
            ["fullUrl": "urn:uuid:5e000000-0000-4000-8000-000000000001", "resource": [
                "resourceType": "Composition", "id": "ips", "status": "final", "title": "Patient Summary",
                "type": ["coding": [["system": "http://loinc.org", "code": "60591-5"]]], "subject": ["reference": patientURL],
                "date": "2024-02-01T10:00:00Z", "author": [["display": "Dr. Invented"]],
                "section": [
                    ["title": "Problems", "code": ["coding": [["system": "http://loinc.org", "code": "11450-4"]]],
                     "entry": [["reference": "urn:uuid:5e000000-0000-4000-8000-000000000003"]]],
                    ["title": "Medications", "code": ["coding": [["system": "http://loinc.org", "code": "10160-0"]]],
                     "entry": [["reference": "urn:uuid:5e000000-0000-4000-8000-000000000004"]]],
                    ["title": "Allergies", "code": ["coding": [["system": "http://loinc.org", "code": "48765-2"]]],
                     "entry": [["reference": "urn:uuid:5e000000-0000-4000-8000-000000000005"]]],
                ]]],
            ["fullUrl": patientURL, "resource": InventedFHIR.patient(InventedFHIR.bo)],
            ["fullUrl": "urn:uuid:5e000000-0000-4000-8000-000000000003",
             "resource": InventedFHIR.condition("c1", "Hypertension", subject: patientURL, onset: "2019-05-01")],
            ["fullUrl": "urn:uuid:5e000000-0000-4000-8000-000000000004", "resource": medicationStatement],
            ["fullUrl": "urn:uuid:5e000000-0000-4000-8000-000000000005",
             "resource": InventedFHIR.allergy("al1", "Penicillin", patient: patientURL)],
        ]])
        try ok(withPassword(["import", "--file", try file("ips.json", document)]))
        let entries = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
        let byType = Dictionary(grouping: entries, by: { $0["type"] as! String }).mapValues { $0.map { $0["description"] as! String } }
        XCTAssertEqual(byType["condition"], ["Hypertension"])
        XCTAssertEqual(byType["medication"], ["Amlodipine 5 MG Oral Tablet"], "the contained Medication names it")
        XCTAssertEqual(byType["allergy"], ["Penicillin"])
        XCTAssertEqual(byType["observation"]?.count, 1, "the Composition is kept once, its sections add nothing")
        XCTAssertEqual(entries.count, 4)
    }
}
