import Foundation
import XCTest

/// `hreader import --file` with C-CDA / C32 documents, through the real binary: what the summary
/// line says, what `entries list --json` shows (nothing negated as a fact), re-imports that change
/// nothing, and the round trip to an IPS document that validates. The documents are hreader's own
/// fixtures (Tests/HReaderRecordsTests/Fixtures/ccda), invented patients in the shapes of HL7's examples.
final class CCDAImportTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("HReaderRecordsTests/Fixtures/ccda")

    func fixture(_ name: String, as copy: String? = nil, in folder: String? = nil) throws -> String {
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent(name), encoding: .utf8)
        var target = copy ?? name
        if let folder {
            let directory = workDir.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            target = folder + "/" + target
        }
        return try file(target, text)
    }

    func entries(_ patient: String = "1") throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", patient, "--json"])))["entries"] as! [[String: Any]]
    }

    func testImportingACCDSaysWhatItIsAndPerSectionCountsAndAgainChangesNothing() throws {
        let path = try fixture("ccd-r21.xml")
        let first = try ok(withPassword(["import", "--file", path, "--as", "me"]))
        XCTAssertTrue(first.stdout.contains("C-CDA R2.1 CCD from Riverbend Health Network, dated 2012-05-15T10:30:00-05:00"), first.stdout)
        XCTAssertTrue(first.stdout.contains("Problems: 3 imported, 1 skipped"), first.stdout)
        XCTAssertTrue(first.stdout.contains("Functional Status: narrative only, kept as a note"), first.stdout)
        XCTAssertTrue(first.stdout.contains("skipped 1: Medications: a medication whose drug is a nullFlavor or a placeholder"), first.stdout)
        XCTAssertTrue(first.stdout.contains("18 new entries"), first.stdout)
        let patients = try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
        XCTAssertEqual(patients.count, 1)
        XCTAssertEqual(patients[0]["last_name"] as? String, "Quarrington")
        XCTAssertEqual(patients[0]["birth_date"] as? String, "1975-05-01")

        let again = try ok(withPassword(["import", "--file", path]))
        XCTAssertTrue(again.stdout.contains("0 new entries, 0 updated, 18 unchanged"), again.stdout)
        // The same document from another folder, under another name and extension, is the same record.
        let copy = try fixture("ccd-r21.xml", as: "summary.ccd", in: "downloads")
        let moved = try ok(withPassword(["import", "--file", copy]))
        XCTAssertTrue(moved.stdout.contains("0 new entries, 0 updated, 18 unchanged"), moved.stdout)
        XCTAssertEqual(try entries().count, 18)
    }

    func testNegatedAndPlannedStatementsAreNeverListedAsFacts() throws {
        try ok(withPassword(["import", "--file", try fixture("ccd-r21.xml"), "--as", "me"]))
        let all = try entries()
        func status(_ description: String) -> String? { all.first { $0["description"] as? String == description }?["status"] as? String }
        // Where an entry is shown by its name alone (the entry list, the timeline), the name says it.
        XCTAssertEqual(status("Diabetes mellitus ruled out (refuted)"), "refuted")
        XCTAssertEqual(status("Latex (refuted)"), "refuted")
        XCTAssertEqual(status("pneumococcal polysaccharide vaccine, 23 valent (not done)"), "not-done")
        XCTAssertEqual(status("Essential hypertension"), "active")
        XCTAssertEqual(status("Asthma"), "resolved")
        let note = try XCTUnwrap(all.first { ($0["description"] as? String)?.hasPrefix("Functional Status") == true })
        XCTAssertEqual(note["status"] as? String, "narrative")
        XCTAssertEqual(note["value"] as? String, "Independent in all activities of daily living.")
        let timeline = try ok(withPassword(["timeline", "--patient", "1", "--from", "2000-01-01", "--to", "2020-01-01"])).stdout
        XCTAssertTrue(timeline.contains("pneumococcal polysaccharide vaccine, 23 valent (not done)"), timeline)
        let summary = try ok(withPassword(["summary", "--patient", "1"])).stdout
        XCTAssertTrue(summary.contains("Essential hypertension"), summary)
        for absent in ["Diabetes", "Latex", "Asthma"] { XCTAssertFalse(summary.contains(absent), "\(absent) in\n\(summary)") }
    }

    func testAC32AndADirectoryOfDocumentsAreRead() throws {
        _ = try fixture("c32.xml", as: "a.cda", in: "docs")
        _ = try fixture("ccd-r21.xml", as: "b.xml", in: "docs")
        _ = try file("docs/notes.txt", "not a document")
        let result = try ok(withPassword(["import", "--file", workDir.appendingPathComponent("docs").path]))
        XCTAssertTrue(result.stdout.contains("a.cda: HITSP C32 from Northfield Community Clinic"), result.stdout)
        XCTAssertTrue(result.stdout.contains("b.xml: C-CDA R2.1 CCD"), result.stdout)
        XCTAssertTrue(result.stdout.contains("2 patient(s) (2 new"), result.stdout)
        // A .txt given alone is read by its content.
        let text = try fixture("c32.xml", as: "download.txt")
        let again = try ok(withPassword(["import", "--file", text]))
        XCTAssertTrue(again.stdout.contains("0 new entries"), again.stdout)
    }

    func testABrokenDocumentIsBadInputOnOneLineAndWritesNothing() throws {
        let path = try file("broken.xml", """
            <?xml version="1.0"?><ClinicalDocument xmlns="urn:hl7-org:v3"><title>no patient</title></ClinicalDocument>
            """)
        let result = try hreader(withPassword(["import", "--file", path]))
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("recordTarget"), result.stderr)
        let entity = try file("entity.xml", """
            <?xml version="1.0"?><!DOCTYPE ClinicalDocument [<!ENTITY a "x">]><ClinicalDocument xmlns="urn:hl7-org:v3"><title>&a;</title></ClinicalDocument>
            """)
        XCTAssertEqual(try hreader(withPassword(["import", "--file", entity])).status, 5)
        let patients = try json(try ok(withPassword(["patients", "list", "--json"])))["patients"] as! [[String: Any]]
        XCTAssertEqual(patients.count, 0)
    }

    /// A CCD imported, then `summary --format ips`: a valid document naming the same problems,
    /// allergies, medications and immunizations, and none of what the CCD negates or plans.
    func testACCDRoundTripsToAValidIPSWithTheSameProblemsAllergiesMedicationsAndImmunizations() throws {
        try ok(withPassword(["import", "--file", try fixture("ccd-r21.xml"), "--as", "me"]))
        let url = workDir.appendingPathComponent("ips.json")
        try ok(withPassword(["summary", "--patient", "1", "--format", "ips", "--out", url.path, "--since", "2000-01-01"]))
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let resources = (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        try validateFHIR([bundle] + resources)
        func names(_ type: String, _ key: String) -> Set<String> {
            Set(resources.filter { $0["resourceType"] as? String == type }.compactMap { resource -> String? in
                let concept = resource[key] as? [String: Any]
                return concept?["text"] as? String ?? ((concept?["coding"] as? [[String: Any]])?.first?["display"] as? String)
            })
        }
        XCTAssertEqual(names("Condition", "code"), ["Essential hypertension"])
        XCTAssertEqual(names("AllergyIntolerance", "code"), ["Penicillin G"])
        let medications = names("MedicationStatement", "medicationCodeableConcept").union(names("MedicationRequest", "medicationCodeableConcept"))
        XCTAssertEqual(medications, ["lisinopril 10 MG Oral Tablet", "amlodipine 5 MG Oral Tablet"])
        XCTAssertEqual(names("Immunization", "vaccineCode"), ["Influenza, seasonal, injectable, preservative free"])
    }
}
