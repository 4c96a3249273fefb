import Foundation
import XCTest

/// Patients and entries as a user manages them from the command line.
final class RecordsCLITests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    func names(_ result: CLIResult) throws -> [String] {
        (try json(result)["patients"] as! [[String: Any]]).map { "\($0["first_name"]!) \($0["last_name"]!)" }
    }

    func testPatientsListInPickerOrderAndMoveReorders() throws {
        for (first, last) in [("Zed", "adams"), ("Amy", "Young"), ("Bob", "Adams"), ("Al", "Young")] {
            try ok(withPassword(["patients", "add", "--first", first, "--last", last]))
        }
        XCTAssertEqual(try names(try ok(withPassword(["patients", "list", "--json"]))),
                       ["Bob Adams", "Zed adams", "Al Young", "Amy Young"], "last name, then first, ignoring case")
        try ok(withPassword(["patients", "move", "2", "--to", "1"]))   // Amy Young first
        try ok(withPassword(["patients", "add", "--first", "New", "--last", "Aaron"]))
        XCTAssertEqual(try names(try ok(withPassword(["patients", "list", "--json"]))),
                       ["Amy Young", "Bob Adams", "Zed adams", "Al Young", "New Aaron"], "after a move, new patients go last")
    }

    func testSelectedPatientIsUsedWhenPatientIsOmitted() throws {
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "One"]))
        try ok(withPassword(["patients", "add", "--first", "B", "--last", "Two"]))
        let none = try hreader(withPassword(["entries", "list"]))
        XCTAssertEqual(none.status, 2)
        XCTAssertTrue(none.stderr.contains("patients select"), none.stderr)
        try ok(withPassword(["patients", "select", "2"]))
        try ok(withPassword(["entries", "add", "--type", "allergy", "--description", "Peanuts", "--date", "2019-04-01"]))
        let entries = try json(try ok(withPassword(["entries", "list", "--patient", "2", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertEqual(entries.map { $0["description"] as? String }, ["Peanuts"])
        let show = try json(try ok(withPassword(["patients", "show", "--json"])))["patient"] as! [String: Any]
        XCTAssertEqual(show["last_name"] as? String, "Two")
    }

    func testEntriesFilterByTypeAndRangeInDateOrder() throws {
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B", "--birth-date", "1980-01-02"]))
        let add = { (type: String, description: String, date: String) in
            _ = try self.ok(self.withPassword(["entries", "add", "--patient", "1", "--type", type, "--description", description, "--date", date]))
        }
        try add("vital_sign", "Pulse", "2021-06-01T10:00:00Z")
        try add("condition", "Asthma", "2010-03")
        try add("vital_sign", "Weight", "2021-01-15")
        try add("result", "HbA1c", "2022-02-02T00:00:00+05:00")
        let all = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertEqual(all.map { $0["description"] as! String }, ["Asthma", "Weight", "Pulse", "HbA1c"])
        XCTAssertEqual(all[0]["date"] as? String, "2010-03", "partial dates keep their precision")
        let vitals = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--type", "vital_sign", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertEqual(vitals.map { $0["description"] as! String }, ["Weight", "Pulse"])
        let ranged = try json(try ok(withPassword(["entries", "list", "--patient", "1", "--from", "2021-01-01", "--to", "2021-12-31", "--json"])))["entries"] as! [[String: Any]]
        XCTAssertEqual(ranged.map { $0["description"] as! String }, ["Weight", "Pulse"])
        let badType = try hreader(withPassword(["entries", "list", "--patient", "1", "--type", "gossip"]))
        XCTAssertEqual(badType.status, 2)
    }

    func testCommentsPatientCommentsAndStrikeAreKept() throws {
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--description", "Aspirin 81 mg",
                             "--dose", "81 mg", "--date", "2020-01-01", "--value", "81", "--unit", "mg"]))
        try ok(withPassword(["entries", "comment", "1", "--text", "with food", "--quantity", "30", "--prescriber", "Dr. Who"]))
        try ok(withPassword(["entries", "strike", "1"]))
        var entry = (try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]])[0]
        XCTAssertEqual(entry["comments"] as? String, "with food")
        XCTAssertEqual(entry["struck"] as? Bool, true)
        XCTAssertEqual(entry["dose"] as? String, "81 mg")
        XCTAssertEqual(entry["value"] as? Double, 81)
        XCTAssertEqual((entry["patient_comments"] as? [String: String])?["prescriber"], "Dr. Who")
        try ok(withPassword(["entries", "strike", "1", "--undo"]))
        try ok(withPassword(["entries", "comment", "1", "--text", ""]))
        entry = (try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"] as! [[String: Any]])[0]
        XCTAssertEqual(entry["struck"] as? Bool, false)
        XCTAssertNil(entry["comments"])
        XCTAssertEqual((entry["patient_comments"] as? [String: String])?["quantity"], "30")
    }

    func testRemovingAPatientRemovesTheirEntries() throws {
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Gout"]))
        try ok(withPassword(["patients", "remove", "1"]))
        let status = try json(try ok(withPassword(["status", "--json"])))["counts"] as! [String: Int]
        XCTAssertEqual(status["patients"], 0)
        XCTAssertEqual(status["entries"], 0)
        XCTAssertEqual(try hreader(withPassword(["patients", "show", "1"])).status, 2)
    }

    func testBadDatesAndBirthDatesAreUsageErrors() throws {
        try ok(withPassword(["patients", "add", "--first", "A", "--last", "B"]))
        XCTAssertEqual(try hreader(withPassword(["patients", "add", "--first", "A", "--last", "B", "--birth-date", "1980-13-01"])).status, 2)
        XCTAssertEqual(try hreader(withPassword(["entries", "add", "--patient", "1", "--type", "result", "--description", "x", "--date", "yesterday"])).status, 2)
    }
}
