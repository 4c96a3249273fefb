import Foundation
import HReaderCrypto
import HReaderKit
import HReaderStore
import XCTest

/// Each imported document is filed under who wrote it (issue 35, "Sources named by what they
/// are"): a C-CDA under its custodian, a FHIR document under its Composition's custodian, a file
/// that names nobody under its own name; the same fact from two of them is stated by both, not
/// "Imported files (2 copies)". Through the real binary.
final class FileSourcesTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    /// The CCD's patient (Wren Halvorsen, XDM-1001 at 2.16.840.1.113883.19.5.99999.2) as a GP's FHIR
    /// document states her: the same hypertension (SNOMED 59621000, since 2018-03-01).
    static func gpDocument(custodian: String = "Northside Family Practice") -> String {
        #"""
        {"resourceType":"Bundle","type":"document","identifier":{"system":"urn:ietf:rfc:3986","value":"urn:uuid:4d6b2f3e-0c1a-4e55-9b7e-1f2a3b4c5d6e"},
         "timestamp":"2024-06-01T10:00:00Z","entry":[
          {"fullUrl":"urn:uuid:c0000000-0000-4000-8000-000000000001","resource":{"resourceType":"Composition","status":"final",
            "type":{"coding":[{"system":"http://loinc.org","code":"60591-5"}]},"subject":{"reference":"urn:uuid:c0000000-0000-4000-8000-000000000002"},
            "date":"2024-06-01T10:00:00Z","title":"Patient summary","author":[{"reference":"urn:uuid:c0000000-0000-4000-8000-000000000004"}],
            "custodian":{"reference":"urn:uuid:c0000000-0000-4000-8000-000000000003"}}},
          {"fullUrl":"urn:uuid:c0000000-0000-4000-8000-000000000002","resource":{"resourceType":"Patient","id":"wren",
            "identifier":[{"system":"urn:oid:2.16.840.1.113883.19.5.99999.2","value":"XDM-1001"}],
            "name":[{"family":"Halvorsen","given":["Wren"]}],"gender":"female","birthDate":"1979-06-11"}},
          {"fullUrl":"urn:uuid:c0000000-0000-4000-8000-000000000003","resource":{"resourceType":"Organization","name":"\#(custodian)"}},
          {"fullUrl":"urn:uuid:c0000000-0000-4000-8000-000000000004","resource":{"resourceType":"Practitioner","name":[{"family":"Grey","given":["Mara"]}]}},
          {"fullUrl":"urn:uuid:c0000000-0000-4000-8000-000000000005","resource":{"resourceType":"Condition","id":"htn",
            "clinicalStatus":{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/condition-clinical","code":"active"}]},
            "code":{"coding":[{"system":"http://snomed.info/sct","code":"59621000","display":"Essential hypertension"}]},
            "subject":{"reference":"urn:uuid:c0000000-0000-4000-8000-000000000002"},"onsetDateTime":"2018-03-01"}}]}
        """#
    }

    func conditions() throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "1", "--type", "condition", "--json"])))["entries"] as? [[String: Any]] ?? []
    }

    func sources() throws -> [[String: Any]] {
        try json(try ok(withPassword(["sources", "list", "--json"])))["sources"] as? [[String: Any]] ?? []
    }

    func testTheSameFactFromTwoDocumentsIsStatedByBothWriters() throws {
        let ccd = try file("ccd.xml", CCDAPackageTests.document())
        let gp = try file("summary.json", Self.gpDocument())
        try ok(withPassword(["import", "--file", ccd]))
        try ok(withPassword(["import", "--file", gp]))
        let rows = try conditions()
        XCTAssertEqual(rows.count, 1, "one fact: \(rows)")
        let names = (rows.first?["sources"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        XCTAssertEqual(Set(names), ["Harbor View Clinic", "Northside Family Practice"])
        let table = try ok(withPassword(["entries", "list", "--patient", "1", "--type", "condition"])).stdout
        XCTAssertTrue(table.contains("Harbor View Clinic, Northside Family Practice") || table.contains("Northside Family Practice, Harbor View Clinic"), table)
        XCTAssertFalse(table.contains("copies"), table)
        let files = try sources().filter { $0["kind"] as? String == "file" }
        XCTAssertEqual(Set(files.compactMap { $0["name"] as? String }), ["Harbor View Clinic", "Northside Family Practice"])
        XCTAssertTrue(files.allSatisfy { $0["url"] is NSNull }, "\(files)")

        // Again, from anywhere and in any case: nothing new.
        let moved = workDir.appendingPathComponent("elsewhere.json")
        try Data(Self.gpDocument(custodian: "NORTHSIDE FAMILY PRACTICE").utf8).write(to: moved)
        for path in [ccd, moved.path] {
            let again = try json(try ok(withPassword(["import", "--file", path, "--json"])))["summary"] as? [String: Any]
            XCTAssertEqual((again?["entries"] as? [String: Any])?["inserted"] as? Int, 0, path)
        }
        XCTAssertEqual(try sources().filter { $0["kind"] as? String == "file" }.count, 2)
    }

    /// A file that names nobody (a plain Bundle) is its own source, by its name; a directory's
    /// files that name nobody are the directory's.
    func testAFileThatNamesNobodyIsNamedByItsName() throws {
        let bundle = #"""
            {"resourceType":"Bundle","type":"collection","entry":[
              {"resource":{"resourceType":"Patient","id":"p","identifier":[{"system":"urn:oid:1.2.3","value":"7"}],"name":[{"family":"Oduya","given":["Kemi"]}]}},
              {"resource":{"resourceType":"Observation","id":"o1","status":"final","subject":{"reference":"Patient/p"},
                "code":{"coding":[{"system":"http://loinc.org","code":"2345-7"}],"text":"Glucose"},"effectiveDateTime":"2024-01-02T08:00:00Z",
                "valueQuantity":{"value":5.4,"unit":"mmol/L"}}}]}
            """#
        try ok(withPassword(["import", "--file", try file("labs-2024.json", bundle)]))
        XCTAssertEqual(try sources().filter { $0["kind"] as? String == "file" }.compactMap { $0["name"] as? String }, ["labs-2024.json"])
    }

    /// A vault from before kept every file's entries in one source, "Imported files": importing a
    /// file again moves what it states to its writer, adding nothing and keeping the user's notes.
    func testAFileImportedBeforeSourcesWereNamedMovesToItsWriter() throws {
        let ccd = try file("ccd.xml", CCDAPackageTests.document())
        try ok(withPassword(["import", "--file", ccd]))
        let condition = try XCTUnwrap(try conditions().first?["id"] as? Int)
        try ok(withPassword(["entries", "comment", "\(condition)", "--text", "since the move"]))
        // As the earlier version kept it.
        do {
            let open = try VaultService(vault: Vault(root: vaultDir)).open(.password(SecretBytes(utf8: Self.password)))
            try open.inDatabase { db in
                try db.execute("""
                    INSERT INTO sources (uuid, kind, base_url, display_name, created, updated)
                    VALUES ('00000000-0000-4000-8000-0000000000aa', 'file', 'file:', 'Imported files', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z')
                    """)
                let legacy = db.lastInsertRowID
                for table in ["patients", "entries", "documents"] {
                    try db.execute("UPDATE \(table) SET source_id = ? WHERE source_id IN (SELECT id FROM sources WHERE kind = 'file' AND base_url <> 'file:')", [legacy])
                }
                try db.execute("DELETE FROM sources WHERE kind = 'file' AND base_url <> 'file:'")
            }
        }
        XCTAssertEqual(try conditions().first.flatMap { ($0["sources"] as? [[String: Any]])?.first?["name"] as? String }, "Imported files")
        let again = try json(try ok(withPassword(["import", "--file", ccd, "--json"])))["summary"] as? [String: Any]
        XCTAssertEqual((again?["entries"] as? [String: Any])?["inserted"] as? Int, 0)
        let rows = try conditions()
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual((rows.first?["sources"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, ["Harbor View Clinic"])
        XCTAssertEqual(rows.first?["id"] as? Int, condition)
        XCTAssertEqual(rows.first?["comments"] as? String, "since the move")
    }
}
