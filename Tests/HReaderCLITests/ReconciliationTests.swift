import Foundation
import TestSupport
import XCTest

/// One person from three sources (a FHIR server, a GP's bundle and a lab's bundle) with different
/// identifiers, resource ids and time-zone notations, sharing some facts and not others; through
/// the real binary, real HTTP and real files (docs/reconciliation.md).
final class ReconciliationTests: ServerCLITestCase {
    var server: SampleServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        server = try SampleServer(["--patients", "1", "--entries-per-patient", "24", "--seed", "5"], workDir: workDir)
    }

    override func tearDown() {
        server?.stop()
        super.tearDown()
    }

    /// The resource types whose copies the rules group (CarePlans and panels of components are not copied).
    static let copiedTypes: Set<String> = ["Condition", "AllergyIntolerance", "MedicationRequest", "Encounter", "Immunization", "Procedure", "Observation"]

    /// A time written in another offset: the same instant, other text.
    static func rewritten(_ text: String, offsetMinutes: Int) -> String {
        guard text.count > 10, text.contains("T") else { return text }
        let parser = ISO8601DateFormatter()
        guard let date = parser.date(from: text) else { return text }
        let writer = ISO8601DateFormatter()
        writer.timeZone = TimeZone(secondsFromGMT: offsetMinutes * 60)!
        return writer.string(from: date)
    }

    /// The server's resources of p1, as one other source states them: its own patient id, identifier
    /// and resource ids, its times in another offset, body weights in pounds; plus `own`, facts only it has.
    func copy(_ resources: [[String: Any]], patient: String, identifier: (String, String), offsetMinutes: Int,
              own: [[String: Any]], alsoKnownAs: [(String, String)] = []) throws -> URL {
        // The same person's name, birth date and gender as the server has them.
        var person = try server.json("/fhir/Patient/p1")
        person["id"] = patient
        person["identifier"] = ([identifier] + alsoKnownAs).map { ["system": $0.0, "value": $0.1] }
        person["meta"] = nil
        var entries: [[String: Any]] = [["fullUrl": "urn:uuid:\(patient)", "resource": person]]
        for var resource in resources + own {
            let id = resource["id"] as? String ?? UUID().uuidString
            resource["id"] = "\(patient)-\(id)"
            resource["identifier"] = nil
            for key in ["subject", "patient"] where resource[key] != nil { resource[key] = ["reference": "Patient/\(patient)"] }
            for key in ["effectiveDateTime", "onsetDateTime", "occurrenceDateTime", "authoredOn"] {
                if let text = resource[key] as? String { resource[key] = Self.rewritten(text, offsetMinutes: offsetMinutes) }
            }
            if var period = resource["period"] as? [String: Any] {
                for key in ["start", "end"] { if let text = period[key] as? String { period[key] = Self.rewritten(text, offsetMinutes: offsetMinutes) } }
                resource["period"] = period
            }
            if var quantity = resource["valueQuantity"] as? [String: Any], quantity["code"] as? String == "kg", let kg = quantity["value"] as? Double {
                quantity["value"] = (kg / 0.45359237 * 100).rounded() / 100
                quantity["unit"] = "lb"
                quantity["code"] = "[lb_av]"
                resource["valueQuantity"] = quantity
            }
            entries.append(["resource": resource])
        }
        let url = workDir.appendingPathComponent("\(patient).json")
        try JSONSerialization.data(withJSONObject: ["resourceType": "Bundle", "type": "collection", "entry": entries]).write(to: url)
        return url
    }

    /// p1's resources on the server that one other source states again.
    func sharedResources() throws -> (gp: [[String: Any]], lab: [[String: Any]]) {
        let everything = try server.json("/fhir/Patient/p1/$everything")
        let resources = (everything["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            .filter { Self.copiedTypes.contains($0["resourceType"] as? String ?? "") && $0["component"] == nil }
        let clinical = resources.filter { $0["resourceType"] as? String != "Observation" }
        let observations = resources.filter { $0["resourceType"] as? String == "Observation" && $0["valueQuantity"] != nil }
        // The GP states every other clinical fact; the lab every other measurement.
        return (clinical.enumerated().filter { $0.offset % 2 == 0 }.map(\.element),
                observations.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
    }

    static var gpOwn: [[String: Any]] { [[
        "resourceType": "Condition", "id": "gp-only", "subject": ["reference": "Patient/x"],
        "code": ["coding": [["system": "http://snomed.info/sct", "code": "195967001", "display": "Asthma"]]],
        "onsetDateTime": "2001-06-01",
    ]] }
    static var labOwn: [[String: Any]] { [[
        "resourceType": "Observation", "id": "lab-only", "status": "final", "subject": ["reference": "Patient/x"],
        "category": [["coding": [["system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "laboratory"]]]],
        "code": ["coding": [["system": "http://loinc.org", "code": "4548-4", "display": "Hemoglobin A1c"]]],
        "effectiveDateTime": "2022-02-02T08:00:00+01:00", "valueQuantity": ["value": 6.1, "unit": "%", "system": "http://unitsofmeasure.org", "code": "%"],
    ]] }

    func patientIDs() throws -> [Int] {
        (try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
    }

    func entries(_ patient: Int, copies: Bool = false) throws -> [[String: Any]] {
        try json(try cli(["entries", "list", "--patient", "\(patient)", "--json"] + (copies ? ["--copies"] : [])))["entries"] as? [[String: Any]] ?? []
    }

    /// Everything a person's record is, to compare states exactly: ids, who each entry is under, sources.
    func state() throws -> String {
        var out = try cli(["patients", "list", "--json"]).stdout
        for id in try patientIDs() {
            out += try cli(["entries", "list", "--patient", "\(id)", "--json", "--copies"]).stdout
            out += try cli(["entries", "list", "--patient", "\(id)", "--json"]).stdout
            out += try cli(["timeline", "--patient", "\(id)", "--from", "1990-01-01", "--to", "2030-01-01", "--detail"]).stdout
        }
        return out
    }

    func testOnePersonFromThreeSourcesMergesShowsEachFactOnceAndUnmergesExactly() throws {
        let shared = try sharedResources()
        XCTAssertGreaterThan(shared.gp.count, 3)
        XCTAssertGreaterThan(shared.lab.count, 2)
        let gp = try copy(shared.gp, patient: "gp7", identifier: ("urn:oid:1.2.250.1.999.gp", "GP-7"), offsetMinutes: 0, own: Self.gpOwn)
        let lab = try copy(shared.lab, patient: "lab3", identifier: ("urn:oid:1.2.250.1.999.lab", "L-3"), offsetMinutes: 330, own: Self.labOwn)

        let first = try json(try cli(["import", "--server", server.fhir, "--patient", "p1", "--json"]))
        let hospital = try XCTUnwrap(((first["summary"] as? [String: Any])?["patients"] as? [String: Any])?["ids"] as? [Int]).first!
        for file in [gp, lab] { XCTAssertEqual(try cli(["import", "--file", file.path]).status, 0) }
        let ids = try patientIDs()
        XCTAssertEqual(ids.count, 3, "three records, three patients: nothing joins people by itself")
        let serverCount = try entries(hospital).count
        let before = try state()

        // The suggestion names the pairs; the merge is the user's.
        let suggestions = try json(try cli(["patients", "suggest", "--json"]))["suggestions"] as? [[String: Any]] ?? []
        XCTAssertEqual(suggestions.count, 3, "\(suggestions)")
        for other in ids where other != hospital {
            let result = try cli(["patients", "merge", "\(hospital)", "\(other)"])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        XCTAssertEqual(try patientIDs(), [hospital])
        let merged = try entries(hospital)
        XCTAssertEqual(merged.count, serverCount + 2, "each shared fact once, plus the GP's and the lab's own")
        let all = try entries(hospital, copies: true)
        XCTAssertEqual(all.count, serverCount + shared.gp.count + shared.lab.count + 2, "every copy is kept")
        let multi = merged.filter { ($0["sources"] as? [[String: Any]])?.count ?? 0 > 1 }
        XCTAssertEqual(multi.count, shared.gp.count + shared.lab.count, "each copied fact names both sources")
        for row in multi {
            let sources = row["sources"] as? [[String: Any]] ?? []
            XCTAssertEqual(sources.first?["entry_id"] as? Int, row["id"] as? Int, "the shown copy comes first")
            XCTAssertEqual(Set(sources.compactMap { $0["name"] as? String }).count, 2, "\(sources)")
        }
        // Copies that agree say nothing more; the weight in pounds at 05:30 east is the same value as the
        // server's in kilograms, so it does not differ either.
        XCTAssertTrue(multi.allSatisfy { $0["differences"] == nil }, "\(multi.filter { $0["differences"] != nil })")
        // The weight in pounds at 05:30 east is the same fact as the server's in kilograms.
        let weights = merged.filter { ($0["codes"] as? [String: [String]])?["LOINC"]?.contains("29463-7") == true }
        XCTAssertFalse(weights.isEmpty)
        // The timeline lists each fact once and names its sources.
        let timeline = try json(try cli(["timeline", "--patient", "\(hospital)", "--from", "1990-01-01", "--to", "2030-01-01", "--detail"]))
        let items = timeline.values.compactMap { $0 as? [[String: Any]] }.flatMap { $0 }
        let stated = items.filter { ($0["copies"] as? Int ?? 1) > 1 }
        XCTAssertFalse(stated.isEmpty)
        for item in stated { XCTAssertEqual((item["sources"] as? [String])?.count, 2, "\(item)") }
        let timelineIDs = items.compactMap { $0["entry_id"] as? Int }
        XCTAssertEqual(timelineIDs.count, Set(timelineIDs).count, "one item per fact")
        XCTAssertTrue(Set(timelineIDs).isSubset(of: Set(merged.compactMap { $0["id"] as? Int })), "only shown copies")
        let hospitalState = try state()

        // Re-importing each source changes nothing.
        XCTAssertEqual(try cli(["import", "--server", server.fhir, "--patient", "p1"]).status, 0)
        for file in [gp, lab] {
            let again = try json(try cli(["import", "--file", file.path, "--json"]))
            let summary = try XCTUnwrap(again["summary"] as? [String: Any])
            XCTAssertEqual((summary["patients"] as? [String: Any])?["ids"] as? [Int], [hospital], "found under the person merged into")
            XCTAssertEqual((summary["entries"] as? [String: Any])?["inserted"] as? Int, 0)
        }
        XCTAssertEqual(try state(), hospitalState)

        // Unmerging both gives back exactly the three patients as they were.
        XCTAssertEqual(try cli(["patients", "unmerge", "\(hospital)"]).status, 0)
        XCTAssertEqual(try cli(["patients", "unmerge", "\(hospital)"]).status, 0)
        XCTAssertEqual(try cli(["patients", "unmerge", "\(hospital)"]).status, 2, "nothing left to undo")
        XCTAssertEqual(try state(), before)
    }

    /// The user's own grouping choices survive a sync of the server and re-imports of the files.
    func testHandSplitsAndJoinsSurviveSyncAndReimport() throws {
        let shared = try sharedResources()
        let gp = try copy(shared.gp, patient: "gp7", identifier: ("urn:oid:1.2.250.1.999.gp", "GP-7"), offsetMinutes: 0, own: Self.gpOwn)
        XCTAssertEqual(try cli(["import", "--server", server.fhir, "--patient", "p1"]).status, 0)
        XCTAssertEqual(try cli(["import", "--file", gp.path]).status, 0)
        let ids = try patientIDs().sorted()
        let merged = try XCTUnwrap(try json(try cli(["patients", "merge", "\(ids[0])", "\(ids[1])", "--json"]))["merge"] as? [String: Any])
        XCTAssertEqual(merged["keep"] as? Int, ids[0])
        XCTAssertEqual(merged["other"] as? Int, ids[1])
        XCTAssertEqual(merged["entries_moved"] as? Int, shared.gp.count + 1)
        let grouped = try XCTUnwrap(try entries(ids[0]).first { ($0["sources"] as? [[String: Any]])?.count == 2 })
        let copyID = try XCTUnwrap((grouped["sources"] as? [[String: Any]])?.last?["entry_id"] as? Int)
        let asthma = try XCTUnwrap(try entries(ids[0]).first { $0["description"] as? String == "Asthma" }?["id"] as? Int)
        let target = try XCTUnwrap(try entries(ids[0]).first { $0["type"] as? String == "condition" && $0["id"] as? Int != asthma }?["id"] as? Int)
        XCTAssertEqual(try cli(["entries", "split", "\(copyID)"]).status, 0)
        XCTAssertEqual(try cli(["entries", "join", "\(asthma)", "\(target)"]).status, 0)
        let chosen = try state()
        XCTAssertTrue(try entries(ids[0]).contains { $0["id"] as? Int == copyID }, "the split copy is a fact of its own")
        XCTAssertFalse(try entries(ids[0]).contains { $0["id"] as? Int == max(asthma, target) }, "the joined entries are one fact")

        XCTAssertEqual(try cli(["sync"]).status, 0)
        XCTAssertEqual(try cli(["import", "--file", gp.path]).status, 0)
        XCTAssertEqual(try state(), chosen)

        // A later download from the GP (another file, another Patient id, the same GP identifier) finds
        // the person the GP's record was merged into, and suggests no one.
        // It also carries the hospital's MRN: two records of one person answer, and they are one answer.
        let mrn = try XCTUnwrap(((try server.json("/fhir/Patient/p1"))["identifier"] as? [[String: Any]])?.first)
        let later = try copy([], patient: "gp7-2026", identifier: ("urn:oid:1.2.250.1.999.gp", "GP-7"), offsetMinutes: 0, own: Self.labOwn,
                             alsoKnownAs: [(mrn["system"] as! String, mrn["value"] as! String)])
        let again = try json(try cli(["import", "--file", later.path, "--json"]))
        XCTAssertEqual(((again["summary"] as? [String: Any])?["patients"] as? [String: Any])?["ids"] as? [Int], [ids[0]])
        XCTAssertEqual(try patientIDs(), [ids[0]])
        XCTAssertTrue(try entries(ids[0]).contains { $0["description"] as? String == "Hemoglobin A1c" })
        XCTAssertEqual((try json(try cli(["patients", "suggest", "--json"]))["suggestions"] as? [Any])?.count, 0)

        // Removing the server's source with its patients would take the GP's merged record along: refused.
        let beforeRemoval = try state()
        let removal = try cli(["sources", "remove", server.fhir, "--with-patients"])
        XCTAssertEqual(removal.status, 2, removal.stderr)
        XCTAssertTrue(removal.stderr.contains("records of other sources merged into them"), removal.stderr)
        XCTAssertEqual(try state(), beforeRemoval, "nothing removed")

        // Joining across kinds or people is refused with one clear line.
        let refused = try cli(["entries", "join", "\(asthma)", "\(try XCTUnwrap(try entries(ids[0]).first { $0["type"] as? String == "encounter" }?["id"] as? Int))"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.hasPrefix("hreader: entry "), refused.stderr)
    }

    /// Copies that disagree (a condition active at the hospital, resolved at the GP) are one row that
    /// says so, and `entries show` lists each source's version.
    func testCopiesThatDisagreeAreOneRowThatSaysSo() throws {
        let shared = try sharedResources()
        func status(_ resource: [String: Any]) -> String? {
            ((resource["clinicalStatus"] as? [String: Any])?["coding"] as? [[String: Any]])?.first?["code"] as? String
        }
        let condition = try XCTUnwrap(shared.gp.first { $0["resourceType"] as? String == "Condition" && status($0) == "active" })
        var resolved = condition
        resolved["clinicalStatus"] = ["coding": [["system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "resolved"]]]
        let gp = try copy([resolved], patient: "gp7", identifier: ("urn:oid:1.2.250.1.999.gp", "GP-7"), offsetMinutes: 0, own: [])
        XCTAssertEqual(try cli(["import", "--server", server.fhir, "--patient", "p1"]).status, 0)
        XCTAssertEqual(try cli(["import", "--file", gp.path]).status, 0)
        let ids = try patientIDs().sorted()
        XCTAssertEqual(try cli(["patients", "merge", "\(ids[0])", "\(ids[1])"]).status, 0)
        let row = try XCTUnwrap(try entries(ids[0]).first { ($0["sources"] as? [[String: Any]])?.count == 2 })
        let differences = try XCTUnwrap(row["differences"] as? [String], "\(row)")
        XCTAssertEqual(differences.count, 1)
        XCTAssertTrue(differences[0].hasPrefix("status: "), differences[0])
        XCTAssertTrue(differences[0].contains("resolved (gp7.json)"), differences[0])
        let table = try cli(["entries", "list", "--patient", "\(ids[0])", "--type", "condition"]).stdout
        XCTAssertTrue(table.contains("they differ: status"), table)
        let shown = try json(try cli(["entries", "show", "\(row["id"]!)", "--json"]))
        XCTAssertEqual((shown["copies"] as? [[String: Any]])?.compactMap { $0["status"] as? String }.sorted(), ["active", "resolved"])
    }

    /// Two people with one name and birth date who are not one person: their identifiers of one
    /// system differ. They stay two, their identical facts are never grouped, and only a merge joins them.
    func testSameNameAndBirthDateTwoPeopleNeverGrouped() throws {
        let shared = try sharedResources()
        let first = try copy(shared.gp, patient: "a1", identifier: ("urn:oid:2.16.840.1.113883.4.1", "111-11-1111"), offsetMinutes: 0, own: [])
        let second = try copy(shared.gp, patient: "b2", identifier: ("urn:oid:2.16.840.1.113883.4.1", "222-22-2222"), offsetMinutes: 60, own: [])
        for file in [first, second] { XCTAssertEqual(try cli(["import", "--file", file.path]).status, 0) }
        let ids = try patientIDs()
        XCTAssertEqual(ids.count, 2)
        for id in ids {
            let listed = try entries(id)
            XCTAssertEqual(listed.count, shared.gp.count)
            XCTAssertTrue(listed.allSatisfy { ($0["sources"] as? [[String: Any]])?.count == 1 }, "never grouped across people")
        }
        let suggestion = try XCTUnwrap((try json(try cli(["patients", "suggest", "--json"]))["suggestions"] as? [[String: Any]])?.first)
        XCTAssertEqual(suggestion["against"] as? [String], ["their identifiers of urn:oid:2.16.840.1.113883.4.1 differ"])
    }
}
