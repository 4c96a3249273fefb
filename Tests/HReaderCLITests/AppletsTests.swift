import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader applets` and `hreader summary`: declarations from property lists, each patient's ordered
/// applets, hReader's tile rules, and external plugins kept on a short leash, through the real binary.
final class AppletsTests: CLITestCase {
    // MARK: Fixtures written by the tests

    /// A plist dictionary entry.
    func entry(_ pairs: [(String, String)], extra: String = "") -> String {
        "<dict>" + pairs.map { "<key>\($0.0)</key><string>\($0.1)</string>" }.joined() + extra + "</dict>"
    }

    func plist(_ entries: [String]) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><array>\(entries.joined(separator: "\n"))</array></plist>
        """
    }

    /// Declarations in hReader's own format and class names: three built-ins, two it showed as pictures
    /// or web pages, and one plugin whose program is missing.
    var hReaderStyleList: String {
        plist([
            entry([("identifier", "org.mitre.hreader.bloodpressure"), ("class_name", "HRBloodPressureAppletTile"), ("display_name", "Blood Pressure")]),
            entry([("class_name", "HRBMIVitalAppletTile"), ("display_name", "BMI"), ("identifier", "org.mitre.hreader.bmi")]),
            entry([("identifier", "org.mitre.hreader.vital-sign.total-cholesterol"), ("class_name", "HRTotalCholesterolAppletTile"), ("display_name", "Total Cholesterol")]),
            entry([("identifier", "org.mitre.hreader.placeholder.test"), ("class_name", "HRImageAppletTile"), ("display_name", "Pictures"),
                   ("tile_image", "test-summary"), ("fullscreen_image", "test-overview")]),
            entry([("identifier", "org.mitre.hreader.pophealth"), ("class_name", "HRPopHealthAppletTile"), ("display_name", "popHealth"),
                   ("tile_url", "pophealth/tile")]),
            entry([("identifier", "org.example.missing"), ("display_name", "Missing"), ("executable", "no-such-program")]),
        ])
    }

    /// The plugins directory of the tests' $HOME: plugins run only from there.
    var pluginsDirectory: URL { workDir.appendingPathComponent(".config/hreader/plugins") }

    /// Writes an executable shell script in the plugins directory (made, mode 0700, when missing).
    @discardableResult
    func script(_ name: String, _ body: String) throws -> String {
        for directory in [workDir.appendingPathComponent(".config"), workDir.appendingPathComponent(".config/hreader"), pluginsDirectory] {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            chmod(directory.path, 0o700)
        }
        let path = pluginsDirectory.appendingPathComponent(name).path
        try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o700)
        return path
    }

    /// Adds a plugin to a patient, approving its program (no terminal here to ask on).
    func addPlugin(_ identifier: String, patient: String, list: String, _ extra: [String] = []) throws {
        try ok(withPassword(["applets", "add", identifier, "--patient", patient, "--applets", list, "--trust-plugin"] + extra))
    }

    func available(_ arguments: [String], env: [String: String] = [:]) throws -> [[String: Any]] {
        let result = try ok(["applets", "available", "--json"] + arguments, env: env)
        return try XCTUnwrap(try json(result)["applets"] as? [[String: Any]])
    }

    func summary(_ patient: String, _ arguments: [String] = []) throws -> [String: Any] {
        try json(try ok(withPassword(["summary", "--json", "--patient", patient] + arguments)))
    }

    func tiles(_ summary: [String: Any]) -> [String: [String: Any]] {
        Dictionary(uniqueKeysWithValues: ((summary["tiles"] as? [[String: Any]]) ?? []).map { ($0["identifier"] as! String, $0) })
    }

    func appletList(_ patient: String) throws -> (identifiers: [String], isDefault: Bool) {
        let object = try json(try ok(withPassword(["applets", "list", "--json", "--patient", patient])))
        let identifiers = ((object["applets"] as? [[String: Any]]) ?? []).map { $0["identifier"] as! String }
        return (identifiers, object["default"] as? Bool ?? false)
    }

    // MARK: Declarations

    func testAvailableListsHReaderFormatDeclarationsFromXMLAndBinaryPlistsWithTheirAvailability() throws {
        let xml = try file("hreader-style.plist", hReaderStyleList)
        let declared = try available(["--applets", xml])
        let byID = Dictionary(uniqueKeysWithValues: declared.map { ($0["identifier"] as! String, $0) })
        // The built-in list, with hReader's identifiers: redeclaring them replaces, never duplicates.
        XCTAssertEqual(declared.filter { ($0["identifier"] as! String) == "org.mitre.hreader.bloodpressure" }.count, 1)
        XCTAssertEqual(byID["org.mitre.hreader.bloodpressure"]?["source"] as? String, xml)
        XCTAssertEqual(byID["org.mitre.hreader.medications"]?["source"] as? String, "built-in")
        for id in ["org.mitre.hreader.bloodpressure", "org.mitre.hreader.bmi", "org.mitre.hreader.vital-sign.total-cholesterol",
                   "org.mitre.hreader.medications", "org.hreader.activity"] {
            XCTAssertEqual(byID[id]?["available"] as? Bool, true, id)
        }
        XCTAssertEqual(byID["org.mitre.hreader.placeholder.test"]?["available"] as? Bool, false)
        XCTAssertTrue((byID["org.mitre.hreader.placeholder.test"]?["reason"] as? String ?? "").contains("image"))
        XCTAssertTrue((byID["org.mitre.hreader.pophealth"]?["reason"] as? String ?? "").contains("HTML"))
        XCTAssertTrue((byID["org.example.missing"]?["reason"] as? String ?? "").contains("does not exist"))
        XCTAssertEqual(byID["org.example.missing"]?["kind"] as? String, "plugin")

        // The same declarations as a binary plist load the same way.
        let parsed = try PropertyListSerialization.propertyList(from: Data(hReaderStyleList.utf8), options: [], format: nil)
        let binary = try PropertyListSerialization.data(fromPropertyList: parsed, format: .binary, options: 0)
        XCTAssertEqual(Array(binary.prefix(6)), Array("bplist".utf8))
        let binaryURL = workDir.appendingPathComponent("hreader-style.bplist")
        try binary.write(to: binaryURL)
        let fromBinary = try available(["--applets", binaryURL.path])
        XCTAssertEqual(fromBinary.map { $0["identifier"] as! String }, declared.map { $0["identifier"] as! String })
        XCTAssertEqual(fromBinary.map { $0["available"] as! Bool }, declared.map { $0["available"] as! Bool })

        // $XDG_CONFIG_HOME/hreader/applets.plist is read too, before --applets.
        let config = workDir.appendingPathComponent("config/hreader")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(plist([entry([("identifier", "org.example.from-config"), ("display_name", "Configured"),
                               ("class_name", "HRMedicationsAppletTile")])]).utf8).write(to: config.appendingPathComponent("applets.plist"))
        let withConfig = try available([], env: ["XDG_CONFIG_HOME": workDir.appendingPathComponent("config").path])
        XCTAssertEqual(withConfig.last?["identifier"] as? String, "org.example.from-config")
        XCTAssertEqual(withConfig.last?["available"] as? Bool, true)
    }

    func testBadDeclarationsAreBadInputNamingTheFileAndTheEntry() throws {
        let cases: [(String, String, [String])] = [
            ("duplicate.plist", plist([entry([("identifier", "org.example.a"), ("display_name", "A"), ("class_name", "HRBMIVitalAppletTile")]),
                                       entry([("identifier", "org.example.a"), ("display_name", "A again"), ("class_name", "HRBMIVitalAppletTile")])]),
             ["entries 1 and 2", "org.example.a", "unique"]),
            ("no-identifier.plist", plist([entry([("display_name", "Nameless"), ("class_name", "HRBMIVitalAppletTile")])]),
             ["entry 1", "no 'identifier'"]),
            ("unknown-class.plist", plist([entry([("identifier", "org.example.ok"), ("display_name", "OK"), ("class_name", "HRBMIVitalAppletTile")]),
                                           entry([("identifier", "org.example.b"), ("display_name", "B"), ("class_name", "HRFancyAppletTile")])]),
             ["entry 2", "org.example.b", "unknown class_name 'HRFancyAppletTile'"]),
            ("bad-type.plist", plist([entry([("identifier", "org.example.c"), ("display_name", "C"), ("executable", "/bin/true")],
                                            extra: "<key>entry_types</key><array><string>gossip</string></array>")]),
             ["entry 1", "org.example.c", "unknown entry type 'gossip'"]),
            ("malformed.plist", "<plist><array><dict><key>identifier</key>", ["not a readable property list"]),
            // The OpenStep text format is not read (Foundation leaks every failed attempt at it on Linux).
            ("openstep.plist", "( { identifier = org.example.d; display_name = D; class_name = HRBMIVitalAppletTile; } )",
             ["not an XML or binary property list"]),
        ]
        for (name, contents, expected) in cases {
            let path = try file(name, contents)
            let result = try hreader(["applets", "available", "--applets", path])
            XCTAssertEqual(result.status, 5, "\(name): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(path), "\(name) names the file: \(result.stderr)")
            for text in expected { XCTAssertTrue(result.stderr.contains(text), "\(name): expected '\(text)' in \(result.stderr)") }
            XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "one line: \(result.stderr)")
        }
    }

    /// A 141 KB binary plist that refers to one 40 KB string 100,000 times took 3.9 GB: it is bad
    /// input (exit 5, one line) in bounded memory.
    func testAPlistThatRefersToOneLongStringCountlessTimesIsBadInput() throws {
        func be(_ value: Int, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        var bytes = Array("bplist00".utf8)
        let string = [0x5F, 0x12] + be(40 << 10, 4) + [UInt8](repeating: UInt8(ascii: "x"), count: 40 << 10)
        let array = [0xAF, 0x12] + be(100_000, 4) + [UInt8](repeating: 0, count: 100_000)
        bytes += string + array
        let table = bytes.count
        bytes += be(8, 4) + be(8 + string.count, 4) + [0, 0, 0, 0, 0, 0, 4, 1] + be(2, 8) + be(1, 8) + be(table, 8)
        let path = workDir.appendingPathComponent("references.plist").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let (result, peakMB) = try hreaderMeasuringMemory(["applets", "available", "--applets", path])
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertLessThan(peakMB, 150)
        XCTAssertTrue(result.stderr.contains(path) && result.stderr.contains("more than 16 MiB of strings and data"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
    }

    // MARK: The patient's list

    func testEachPatientStartsWithMedicationsAndBloodPressureAndKeepsTheOrderTheyChoose() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Order"]))
        try ok(withPassword(["patients", "add", "--first", "Ben", "--last", "Other"]))
        var list = try appletList("1")
        XCTAssertEqual(list.identifiers, ["org.mitre.hreader.medications", "org.mitre.hreader.bloodpressure"])
        XCTAssertTrue(list.isDefault)

        try ok(withPassword(["applets", "add", "org.mitre.hreader.bmi", "--patient", "1", "--at", "1"]))
        try ok(withPassword(["applets", "add", "org.mitre.hreader.vital-sign.oxygen-saturation", "--patient", "1"]))
        try ok(withPassword(["applets", "move", "org.mitre.hreader.bloodpressure", "--to", "1", "--patient", "1"]))
        try ok(withPassword(["applets", "remove", "org.mitre.hreader.medications", "--patient", "1"]))
        list = try appletList("1")
        XCTAssertEqual(list.identifiers, ["org.mitre.hreader.bloodpressure", "org.mitre.hreader.bmi", "org.mitre.hreader.vital-sign.oxygen-saturation"])
        XCTAssertFalse(list.isDefault)
        XCTAssertEqual((try summary("1")["tiles"] as? [[String: Any]])?.map { $0["identifier"] as! String }, list.identifiers,
                       "the summary shows the tiles in the patient's order")
        XCTAssertEqual(try appletList("2").identifiers, ["org.mitre.hreader.medications", "org.mitre.hreader.bloodpressure"],
                       "the other patient keeps the default")

        // Adding twice changes nothing; unknown identifiers and positions are usage errors.
        try ok(withPassword(["applets", "add", "org.mitre.hreader.bmi", "--patient", "1"]))
        XCTAssertEqual(try appletList("1").identifiers.count, 3)
        XCTAssertEqual(try hreader(withPassword(["applets", "add", "org.example.nowhere", "--patient", "1"])).status, 2)
        XCTAssertEqual(try hreader(withPassword(["applets", "remove", "org.mitre.hreader.encounters", "--patient", "1"])).status, 2)
        XCTAssertEqual(try hreader(withPassword(["applets", "move", "org.mitre.hreader.bmi", "--to", "0", "--patient", "1"])).status, 2)

        // An emptied list stays empty rather than falling back to the default.
        for id in list.identifiers { try ok(withPassword(["applets", "remove", id, "--patient", "1"])) }
        list = try appletList("1")
        XCTAssertEqual(list.identifiers, [])
        XCTAssertFalse(list.isDefault)
    }

    /// A person whose record is a watch's and a phone's: their default list adds the built-in tiles
    /// that show a reading of theirs (saturation, steps) after hReader's two, and nothing for what
    /// they have none of; a change starts from that list. Until 2026-12-03 such a person's summary
    /// showed blood pressure and an empty medications tile only.
    func testADefaultListAddsTheTilesOfWhatTheRecordHolds() throws {
        try initVault()
        let steps = "HKQuantityTypeIdentifierStepCount", saturation = "HKQuantityTypeIdentifierOxygenSaturation"
        let export = AppleHealthTests.export(extraRecords: [
            AppleHealthTests.record(saturation, "0.97", "%", "2026-03-02 07:00:00 +0100"),
            AppleHealthTests.record(steps, "4200", "count", "2026-03-02 12:00:00 +0100", end: "2026-03-02 13:00:00 +0100"),
        ])
        try ok(withPassword(["import", "--apple-health", try file("export.xml", export), "--as", "me"]))
        try ok(withPassword(["patients", "add", "--first", "Ben", "--last", "Other"]))
        let watch = try appletList("1")
        XCTAssertTrue(watch.isDefault)
        XCTAssertEqual(watch.identifiers, ["org.mitre.hreader.medications", "org.mitre.hreader.bloodpressure",
                                           "org.mitre.hreader.vital-sign.oxygen-saturation", "org.hreader.activity"])
        let shown = tiles(try summary("1"))
        XCTAssertEqual(shown["org.mitre.hreader.vital-sign.oxygen-saturation"]?["value"] as? String, "97")
        XCTAssertNotNil(shown["org.hreader.activity"])
        XCTAssertEqual(try appletList("2").identifiers, ["org.mitre.hreader.medications", "org.mitre.hreader.bloodpressure"],
                       "a record of neither keeps hReader's default")

        try ok(withPassword(["applets", "remove", "org.mitre.hreader.medications", "--patient", "1"]))
        XCTAssertEqual(try appletList("1").identifiers, ["org.mitre.hreader.bloodpressure", "org.mitre.hreader.vital-sign.oxygen-saturation",
                                                         "org.hreader.activity"], "the change starts from the list shown")
    }

    // MARK: hReader's rules
    // MARK: hReader's rules

    /// An RHEx c32 record as hReader imported it: blood pressure as two entries.
    func rhexRecord(birthdate: Int, at time: Int) -> String {
        func vital(_ id: String, _ description: String, _ value: String, _ unit: String, codes: String = "{}", at time: Int) -> String {
            #"{"_id": "\#(id)", "description": "\#(description)", "time": \#(time), "codes": \#(codes), "value": {"scalar": "\#(value)", "units": "\#(unit)"}}"#
        }
        return """
            {"_id": "rhex-ruth", "first": "Ruth", "last": "Rules", "gender": "F", "birthdate": \(birthdate),
             "vital_signs": [
               \(vital("s1", "Systolic Blood Pressure", "118.0", "mm[Hg]", at: time - 86_400)),
               \(vital("d1", "Diastolic Blood Pressure", "76.0", "mm[Hg]", at: time - 86_400)),
               \(vital("s2", "Systolic Blood Pressure", "134.0", "mm[Hg]", codes: #"{"SNOMED-CT": ["271649006"]}"#, at: time)),
               \(vital("d2", "Diastolic Blood Pressure", "86.0", "mm[Hg]", codes: #"{"SNOMED-CT": ["271650006"]}"#, at: time)),
               \(vital("b1", "BMI", "31.2", "kg/m2", at: time)),
               \(vital("o1", "Oxygen Saturation", "97", "%", codes: #"{"SNOMED-CT": ["271649006"]}"#, at: time)),
               \(vital("r1", "Respiration", "22", "breaths/min", codes: #"{"SNOMED-CT": ["271649006"]}"#, at: time))
             ],
             "results": [
               \(vital("c1", "Total Cholesterol", "180.0", "mg/dL", at: time)),
               \(vital("t1", "Triglycerides", "400.0", "mg/dL", at: time + 60))
             ]}
            """
    }

    /// A FHIR Bundle: blood pressure as one panel Observation with two components.
    func fhirBundle(birthDate: String, at date: String) -> String {
        func observation(_ id: String, _ category: String, _ loinc: String, _ text: String, value: String) -> String {
            """
            {"resource": {"resourceType": "Observation", "id": "\(id)", "status": "final",
              "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "\(category)"}]}],
              "code": {"coding": [{"system": "http://loinc.org", "code": "\(loinc)"}], "text": "\(text)"},
              "subject": {"reference": "Patient/fhir-finn"}, "effectiveDateTime": "\(date)", \(value)}}
            """
        }
        func quantity(_ v: Double, _ unit: String) -> String { #""valueQuantity": {"value": \#(v), "unit": "\#(unit)"}"# }
        let panel = """
            "component": [
              {"code": {"coding": [{"system": "http://loinc.org", "code": "8480-6"}]}, \(quantity(118, "mm[Hg]"))},
              {"code": {"coding": [{"system": "http://loinc.org", "code": "8462-4"}]}, \(quantity(76, "mm[Hg]"))}]
            """
        return """
            {"resourceType": "Bundle", "type": "collection", "entry": [
              {"resource": {"resourceType": "Patient", "id": "fhir-finn", "name": [{"family": "Rules", "given": ["Finn"]}],
                            "gender": "male", "birthDate": "\(birthDate)"}},
              \(observation("bp", "vital-signs", "85354-9", "Blood pressure panel", value: panel)),
              \(observation("bmi", "vital-signs", "39156-5", "Body mass index", value: quantity(22.4, "kg/m2"))),
              \(observation("spo2", "vital-signs", "2708-6", "Oxygen saturation", value: quantity(0.93, "%"))),
              \(observation("rr", "vital-signs", "9279-1", "Respiratory rate", value: quantity(16, "/min"))),
              \(observation("chol", "laboratory", "2093-3", "Cholesterol [Mass/volume] in Serum or Plasma", value: quantity(180, "mg/dL")))
            ]}
            """
    }

    func addVitalApplets(_ patient: String) throws {
        for id in ["org.mitre.hreader.bmi", "org.mitre.hreader.vital-sign.oxygen-saturation",
                   "org.mitre.hreader.vital-sign.respiratory-rate", "org.mitre.hreader.vital-sign.total-cholesterol"] {
            try ok(withPassword(["applets", "add", id, "--patient", patient]))
        }
    }

    func testSummaryTilesFollowHReadersRulesForBothBloodPressureShapes() throws {
        try initVault()
        // Ruth, 50: RHEx record, two-entry blood pressure 134/86 (high), BMI 31.2 (high), SpO2 97,
        // respiration 22 (high), cholesterol 180 (normal for an adult). Her codes are wrong, as in
        // hReader's samples: descriptions decide.
        let now = Int(Date().timeIntervalSince1970)
        let calendar = Calendar(identifier: .gregorian)
        let ruthBorn = Int(calendar.date(byAdding: .day, value: -10, to: calendar.date(byAdding: .year, value: -50, to: Date())!)!.timeIntervalSince1970)
        try ok(withPassword(["import", "--file", try file("ruth.json", rhexRecord(birthdate: ruthBorn, at: now - 3600))]))
        // Finn, 10: FHIR panel 118/76, BMI 22.4 (a child: not judged by the adult range), SpO2 0.93
        // (a fraction: 93 %, low), respiratory rate 16, cholesterol 180 (high under 21).
        let finnBorn = calendar.date(byAdding: .year, value: -10, to: Date())!
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        try ok(withPassword(["import", "--file", try file("finn.json", fhirBundle(birthDate: formatter.string(from: finnBorn),
                                                                                    at: "2024-05-01T09:00:00Z"))]))
        try addVitalApplets("1")
        try addVitalApplets("2")

        let ruth = try summary("1")
        let ruthTiles = tiles(ruth)
        let bp = try XCTUnwrap(ruthTiles["org.mitre.hreader.bloodpressure"])
        XCTAssertEqual(bp["value"] as? String, "134/86")
        XCTAssertEqual(bp["status"] as? String, "attention")
        XCTAssertEqual(bp["unit"] as? String, "mmHg")
        XCTAssertEqual((bp["lines"] as? [String])?.first, "normal 90-120/60-80")
        XCTAssertTrue((bp["lines"] as? [String] ?? []).contains { $0.hasSuffix("118/76") }, "the earlier reading: \(bp)")
        XCTAssertEqual(ruthTiles["org.mitre.hreader.bmi"]?["value"] as? String, "31.2")
        XCTAssertEqual(ruthTiles["org.mitre.hreader.bmi"]?["status"] as? String, "attention")
        XCTAssertEqual(ruthTiles["org.mitre.hreader.vital-sign.oxygen-saturation"]?["value"] as? String, "97")
        XCTAssertEqual(ruthTiles["org.mitre.hreader.vital-sign.oxygen-saturation"]?["status"] as? String, "normal")
        XCTAssertEqual(ruthTiles["org.mitre.hreader.vital-sign.respiratory-rate"]?["value"] as? String, "22")
        XCTAssertEqual(ruthTiles["org.mitre.hreader.vital-sign.respiratory-rate"]?["status"] as? String, "attention")
        let ruthCholesterol = try XCTUnwrap(ruthTiles["org.mitre.hreader.vital-sign.total-cholesterol"])
        XCTAssertEqual(ruthCholesterol["value"] as? String, "180", "triglycerides are not cholesterol")
        XCTAssertEqual(ruthCholesterol["status"] as? String, "normal")
        let person = try XCTUnwrap(ruth["patient"] as? [String: Any])
        XCTAssertEqual(person["age"] as? String, "50 years")
        XCTAssertEqual(person["gender"] as? String, "Female")
        XCTAssertEqual(person["relationship"] as? String, "Other")

        let finnTiles = tiles(try summary("2"))
        let panel = try XCTUnwrap(finnTiles["org.mitre.hreader.bloodpressure"])
        XCTAssertEqual(panel["value"] as? String, "118/76", "one FHIR panel entry is one reading")
        XCTAssertEqual(panel["status"] as? String, "normal")
        XCTAssertEqual(panel["updated"] as? String, "2024-05-01T09:00:00Z")
        XCTAssertEqual(finnTiles["org.mitre.hreader.bmi"]?["value"] as? String, "22.4")
        XCTAssertEqual(finnTiles["org.mitre.hreader.bmi"]?["status"] as? String, "unknown", "the adult range does not apply to children")
        XCTAssertEqual(finnTiles["org.mitre.hreader.vital-sign.oxygen-saturation"]?["value"] as? String, "93")
        XCTAssertEqual(finnTiles["org.mitre.hreader.vital-sign.oxygen-saturation"]?["status"] as? String, "attention")
        XCTAssertEqual(finnTiles["org.mitre.hreader.vital-sign.respiratory-rate"]?["status"] as? String, "normal")
        let finnCholesterol = try XCTUnwrap(finnTiles["org.mitre.hreader.vital-sign.total-cholesterol"])
        XCTAssertEqual(finnCholesterol["status"] as? String, "attention", "180 is above the under-21 range (hReader's age bug applied the adult one)")
        XCTAssertTrue(((finnCholesterol["lines"] as? [String])?.first ?? "").hasPrefix("normal 75-169"))

        // The text form says the same.
        let text = try ok(withPassword(["summary", "--patient", "1"])).stdout
        XCTAssertTrue(text.contains("Blood Pressure: 134/86 mmHg  [attention]"), text)
        XCTAssertTrue(text.contains("age 50 years"), text)
    }

    func testMedicationsListDosesAndMarkStruckOnesAndConditionsAndAllergiesHeadTheSummary() throws {
        try initVault()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        let born = formatter.string(from: Date().addingTimeInterval(-100 * 86_400))
        try ok(withPassword(["patients", "add", "--first", "Mia", "--last", "Meds", "--birth-date", born]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--description", "Lisinopril", "--dose", "20mg", "--date", "2024-02-01"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--description", "Aspirin", "--dose", "81mg", "--date", "2024-03-01"]))
        try ok(withPassword(["entries", "strike", "2"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Hypertension", "--status", "active", "--date", "2024-01-15"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Old fracture", "--status", "resolved", "--date", "2024-01-10"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "allergy", "--description", "Penicillin", "--date", "2024-01-02"]))
        let result = try summary("1")
        XCTAssertEqual((result["conditions"] as? [[String: Any]])?.map { $0["description"] as! String }, ["Hypertension"])
        XCTAssertEqual((result["allergies"] as? [[String: Any]])?.map { $0["description"] as! String }, ["Penicillin"])
        let medications = try XCTUnwrap(tiles(result)["org.mitre.hreader.medications"])
        XCTAssertEqual(medications["value"] as? String, "1")
        XCTAssertEqual(medications["lines"] as? [String], ["Aspirin 81mg (struck)", "Lisinopril 20mg"])
        let age = try XCTUnwrap((result["patient"] as? [String: Any])?["age"] as? String)
        XCTAssertTrue(age.hasSuffix("weeks"), "under 6 months, hReader gave the age in weeks: \(age)")
        XCTAssertEqual(tiles(result)["org.mitre.hreader.bloodpressure"]?["status"] as? String, "unknown")
    }

    /// Ages are counted on local dates by the timeline's clock; Foundation's Calendar in the same zone
    /// (an independent count) agrees on birth dates around today's, partial ones, leap days and infants.
    func testAgesAreCountedOnLocalDatesAsFoundationCountsThem() throws {
        try initVault()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let today = calendar.startOfDay(for: Date())
        func text(_ date: Date) -> String {
            let c = calendar.dateComponents([.year, .month, .day], from: date)
            return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
        }
        var births: [String] = ["1980", "1980-04", "2000-02-29", "1975-12-31"]
        for (years, days) in [(40, 0), (40, 1), (40, -1), (1, 0), (0, -20), (0, -100), (0, -200), (3, 5)] {
            births.append(text(calendar.date(byAdding: .day, value: days, to: calendar.date(byAdding: .year, value: -years, to: today)!)!))
        }
        for (index, birth) in births.enumerated() {
            try ok(withPassword(["patients", "add", "--first", "Age", "--last", "Case\(index)", "--birth-date", birth]), env: ["TZ": "UTC"])
            let result = try json(try ok(withPassword(["summary", "--json", "--patient", String(index + 1)]), env: ["TZ": "UTC"]))
            let shown = (result["patient"] as? [String: Any])?["age"] as? String
            let parts = birth.split(separator: "-").compactMap { Int($0) }
            let born = calendar.date(from: DateComponents(year: parts[0], month: parts.count > 1 ? parts[1] : 1, day: parts.count > 2 ? parts[2] : 1))!
            let lived = calendar.dateComponents([.year, .month], from: born, to: today)
            let months = lived.year! * 12 + lived.month!
            let weeks = calendar.dateComponents([.weekOfYear], from: born, to: today).weekOfYear!
            let expected = months < 6 ? "\(weeks) week"
                : months < 24 ? "\(months) month" : "\(lived.year!) year"
            XCTAssertEqual(shown.map { $0.hasSuffix("s") ? String($0.dropLast()) : $0 }, expected, "born \(birth)")
        }
    }

    func testActivityEncountersAndImmunizationsTiles() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Abe", "--last", "Active"]))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        func day(_ offset: Int) -> String { formatter.string(from: Date().addingTimeInterval(Double(offset) * 86_400)) }
        for (offset, steps) in [(0, "4000"), (0, "6000"), (-1, "4000"), (-10, "99999")] {
            try ok(withPassword(["entries", "add", "--patient", "1", "--type", "activity", "--description", "Steps",
                                 "--value", steps, "--unit", "count", "--date", day(offset)]))
        }
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "encounter", "--description", "Office visit",
                             "--date", "2023-01-05", "--code", "CPT=99213"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "encounter", "--description", "Annual check-up",
                             "--date", "2024-02-05", "--code", "CPT=99396", "--code", "ICD-10-CM=Z00.00"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "immunization", "--description", "Influenza vaccine", "--date", "2023-10-01"]))
        for id in ["org.hreader.activity", "org.mitre.hreader.encounters", "org.mitre.hreader.immunizations"] {
            try ok(withPassword(["applets", "add", id, "--patient", "1"]))
        }
        var byID = tiles(try summary("1"))
        let activity = try XCTUnwrap(byID["org.hreader.activity"])
        XCTAssertEqual(activity["value"] as? String, "2000", "14000 steps over the last 7 days: 2000 a day")
        XCTAssertEqual(activity["unit"] as? String, "steps/day")
        XCTAssertEqual((activity["lines"] as? [String])?.count, 7)
        XCTAssertTrue((activity["lines"] as? [String])?.last?.hasSuffix("\(day(0))  10000") ?? false, "\(activity)")
        XCTAssertEqual(activity["status"] as? String, "normal")
        let encounter = try XCTUnwrap(byID["org.mitre.hreader.encounters"])
        XCTAssertEqual(encounter["value"] as? String, "Annual check-up")
        XCTAssertEqual(encounter["lines"] as? [String], ["2024-02-05", "CPT 99396; ICD-10-CM Z00.00", "2 encounters in the record"])
        XCTAssertEqual(byID["org.mitre.hreader.immunizations"]?["lines"] as? [String], ["2023-10-01  Influenza vaccine"])

        // A configured goal the average misses needs attention; the plist reconfigures the built-in.
        let goal = try file("goal.plist", plist([entry([("identifier", "org.hreader.activity"), ("display_name", "Steps"),
                                                         ("class_name", "HRActivityAppletTile")],
                                                        extra: "<key>daily_goal</key><integer>8000</integer>")]))
        byID = tiles(try summary("1", ["--applets", goal]))
        XCTAssertEqual(byID["org.hreader.activity"]?["title"] as? String, "Steps")
        XCTAssertEqual(byID["org.hreader.activity"]?["status"] as? String, "attention")
    }

    // MARK: Plugins

    func pluginEntry(_ id: String, _ executable: String, types: [String] = [], timeout: Double? = nil, maxOutput: Int? = nil) -> String {
        var extra = "<key>entry_types</key><array>" + types.map { "<string>\($0)</string>" }.joined() + "</array>"
        if let timeout { extra += "<key>timeout</key><real>\(timeout)</real>" }
        if let maxOutput { extra += "<key>max_output_bytes</key><integer>\(maxOutput)</integer>" }
        extra += "<key>greeting</key><string>hello</string>"
        return entry([("identifier", id), ("display_name", id), ("executable", executable)], extra: extra)
    }

    func testPluginsThatHangCrashPrintGarbageOrFloodGiveErrorTilesAndTheSummaryCompletes() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Pat", "--last", "Plugins"]))
        let pids = workDir.appendingPathComponent("hang.pid").path
        try script("hang.sh", "sleep 30 &\necho $! > '\(pids)'\nwait")
        try script("crash.sh", "cat > /dev/null\nkill -SEGV $$")
        try script("garbage.sh", "echo 'this is not { json'")
        try script("flood.sh", "yes '{\"value\": \"flood\"}'")
        try script("fails.sh", "echo 'cannot reach the step counter' >&2\nexit 3")
        try script("reports.sh", "echo '{\"error\": \"no data for this patient\"}'")
        let list = try file("plugins.plist", plist([
            pluginEntry("org.example.hang", "hang.sh", timeout: 1),
            pluginEntry("org.example.crash", "crash.sh"),
            pluginEntry("org.example.garbage", "garbage.sh"),
            pluginEntry("org.example.flood", "flood.sh", maxOutput: 65_536),
            pluginEntry("org.example.fails", "fails.sh"),
            pluginEntry("org.example.reports", "reports.sh"),
        ]))
        for id in ["hang", "crash", "garbage", "flood", "fails", "reports"] {
            try addPlugin("org.example.\(id)", patient: "1", list: list)
        }
        let started = Date()
        let result = try hreader(withPassword(["summary", "--json", "--patient", "1", "--applets", list]), timeout: 30)
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15)
        let all = try json(result)
        let byID = tiles(all)
        func error(_ id: String) -> String { byID["org.example.\(id)"]?["error"] as? String ?? "(no error)" }
        XCTAssertTrue(error("hang").contains("did not answer within 1 s"), error("hang"))
        XCTAssertTrue(error("crash").contains("crashed (signal 11)"), error("crash"))
        XCTAssertTrue(error("garbage").contains("not JSON"), error("garbage"))
        XCTAssertTrue(error("flood").contains("more than 65536 bytes"), error("flood"))
        XCTAssertTrue(error("fails").contains("exit status 3: cannot reach the step counter"), error("fails"))
        XCTAssertTrue(error("reports").contains("no data for this patient"), error("reports"))
        for id in ["hang", "crash", "garbage", "flood", "fails", "reports"] {
            XCTAssertEqual(byID["org.example.\(id)"]?["status"] as? String, "unknown")
        }
        // The built-in tiles after them are still there.
        XCTAssertEqual((all["tiles"] as? [[String: Any]])?.count, 8)
        XCTAssertNotNil(byID["org.mitre.hreader.bloodpressure"])
        #if os(Linux)
        // What the hanging plugin started was stopped with it.
        let pid = try String(contentsOfFile: pids, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        XCTAssertTrue(stat.isEmpty || stat.contains(") Z "), "the plugin's child is still running: \(stat)")
        #endif
    }

    func testPluginReceivesOnlyGrantedEntryTypesAndNoHReaderVariablesOrSecrets() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Gwen", "--last", "Granted"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Heart rate",
                             "--value", "72", "--unit", "/min", "--date", "2024-05-01T08:00:00Z"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Secret diagnosis", "--date", "2024-01-01"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--description", "Hidden medicine", "--date", "2024-01-01"]))
        let request = workDir.appendingPathComponent("request.json").path
        let environment = workDir.appendingPathComponent("environment.txt").path
        try script("spy.sh", """
            cat > '\(request)'
            env > '\(environment)'
            pwd >> '\(environment)'
            echo '{"title": "Spy", "status": "normal", "value": 1, "unit": "request", "lines": ["got it"]}'
            """)
        let list = try file("spy.plist", plist([pluginEntry("org.example.spy", "spy.sh", types: ["vital_sign"])]))
        try addPlugin("org.example.spy", patient: "1", list: list, ["--at", "1"])
        let result = try hreader(withPassword(["summary", "--json", "--patient", "1", "--applets", list]),
                                 env: ["HREADER_PASSWORD": "Leaked-Pass9", "HREADER_SESSION": "leaked-session",
                                       "HREADER_CANARY": "x", "AWS_SECRET_ACCESS_KEY": "leaked-key"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let tile = try XCTUnwrap(tiles(try json(result))["org.example.spy"])
        XCTAssertEqual(tile["value"] as? String, "1")
        XCTAssertEqual(tile["title"] as? String, "Spy")
        XCTAssertNil(tile["error"])

        let sent = try String(contentsOfFile: request, encoding: .utf8)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(sent.utf8)) as? [String: Any])
        let entries = try XCTUnwrap(object["entries"] as? [String: [[String: Any]]])
        XCTAssertEqual(Array(entries.keys), ["vital_sign"])
        XCTAssertEqual(entries["vital_sign"]?.map { $0["description"] as! String }, ["Heart rate"])
        XCTAssertEqual(object["entry_types"] as? [String], ["vital_sign"])
        XCTAssertEqual((object["configuration"] as? [String: Any])?["greeting"] as? String, "hello")
        for secret in ["Secret diagnosis", "Hidden medicine", "Gwen", "Granted", "condition", "medication", CLITestCase.password] {
            XCTAssertFalse(sent.contains(secret), "the request carries '\(secret)': \(sent)")
        }
        let token = try XCTUnwrap(object["patient"] as? String)
        XCTAssertEqual(token.count, 32)
        XCTAssertFalse(sent.contains(vaultDir.path), "the request does not say where the vault is")

        let env = try String(contentsOfFile: environment, encoding: .utf8)
        XCTAssertFalse(env.contains("HREADER_"), env)
        XCTAssertFalse(env.contains("leaked"), env)
        XCTAssertFalse(env.contains("Leaked-Pass9"), env)
        let directory = env.split(separator: "\n").last.map(String.init) ?? ""
        XCTAssertTrue(directory.hasPrefix(childTemp.path) && directory.contains("hreader-applet-"),
                      "it runs in a private directory of its own: \(directory)")
        XCTAssertTrue(env.contains("HOME=\(directory)\n"), env)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "the private directory is removed afterwards")
    }

    func testTwoPluginsCannotJoinTheirPatientsOrEntriesUp() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Joan", "--last", "Join"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Heart rate",
                             "--value", "70", "--unit", "/min", "--date", "2024-05-01T08:00:00Z"]))
        let uuid = try XCTUnwrap((try json(try ok(withPassword(["entries", "list", "--patient", "1", "--json"])))["entries"]
            as? [[String: Any]])?.first?["uuid"] as? String)
        for name in ["a", "b"] {
            try script("\(name).sh", "cat > '\(workDir.appendingPathComponent("\(name).json").path)'\necho '{\"status\": \"normal\", \"value\": 1}'")
        }
        let list = try file("two.plist", plist([pluginEntry("org.example.a", "a.sh", types: ["vital_sign"]),
                                                pluginEntry("org.example.b", "b.sh", types: ["vital_sign"])]))
        for applet in ["org.example.a", "org.example.b"] {
            try addPlugin(applet, patient: "1", list: list)
        }
        func sent(_ name: String) throws -> (patient: String, entry: String) {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: workDir.appendingPathComponent("\(name).json"))) as? [String: Any])
            let entry = try XCTUnwrap(((object["entries"] as? [String: [[String: Any]]])?["vital_sign"])?.first?["id"] as? String)
            return (try XCTUnwrap(object["patient"] as? String), entry)
        }
        _ = try summary("1", ["--applets", list])
        let (a, b) = (try sent("a"), try sent("b"))
        XCTAssertNotEqual(a.patient, b.patient)
        XCTAssertNotEqual(a.entry, b.entry, "each applet has its own id for the same entry")
        XCTAssertFalse([a.entry, b.entry].contains(uuid), "the vault's own entry uuid is never handed out")
        _ = try summary("1", ["--applets", list])
        XCTAssertEqual(try sent("a").entry, a.entry, "stable for one applet")
    }

    func testAppletDataRoundTripsThroughThePluginPerPatient() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Dora", "--last", "Data"]))
        try ok(withPassword(["patients", "add", "--first", "Dan", "--last", "Data"]))
        let request = workDir.appendingPathComponent("request.json").path
        let answer = workDir.appendingPathComponent("answer.json").path
        try script("memory.sh", "cat > '\(request)'\ncat '\(answer)'")
        let list = try file("memory.plist", plist([pluginEntry("org.example.memory", "memory.sh")]))
        for patient in ["1", "2"] { try addPlugin("org.example.memory", patient: patient, list: list) }

        func run(_ patient: String, answering: String) throws -> [String: Any] {
            try Data(answering.utf8).write(to: URL(fileURLWithPath: answer))
            _ = try summary(patient, ["--applets", list])
            return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: request))) as? [String: Any])
        }
        var sent = try run("1", answering: #"{"status": "normal", "value": "1", "data": {"visits": "1", "note": "hello"}}"#)
        XCTAssertEqual(sent["data"] as? [String: String], [:])
        let token = sent["patient"] as? String
        sent = try run("1", answering: #"{"status": "normal", "value": "2", "data": {"visits": null}}"#)
        XCTAssertEqual(sent["data"] as? [String: String], ["visits": "1", "note": "hello"])
        XCTAssertEqual(sent["patient"] as? String, token, "the token is stable for a patient")
        sent = try run("1", answering: #"{"status": "normal", "value": "3"}"#)
        XCTAssertEqual(sent["data"] as? [String: String], ["note": "hello"], "null removed the key")
        sent = try run("2", answering: #"{"status": "normal", "value": "1"}"#)
        XCTAssertEqual(sent["data"] as? [String: String], [:], "each patient has their own storage")
        XCTAssertNotEqual(sent["patient"] as? String, token, "and their own token")

        // Data in a bad shape is refused whole, and shown as the tile's error.
        try Data(#"{"status": "normal", "data": {"visits": 5}}"#.utf8).write(to: URL(fileURLWithPath: answer))
        let failed = tiles(try summary("1", ["--applets", list]))["org.example.memory"]
        XCTAssertTrue((failed?["error"] as? String ?? "").contains("'data' values must be strings"), "\(failed ?? [:])")
        sent = try run("1", answering: #"{"status": "normal"}"#)
        XCTAssertEqual(sent["data"] as? [String: String], ["note": "hello"])
    }

    // MARK: An applets list is code

    /// A list redeclared the blood-pressure tile (in every patient's default list) as a plugin run by
    /// /bin/sh, which read the JSON request as a script and ran the `$(…)` of a setting. A built-in's
    /// identifier never becomes a plugin: the list is refused, from --applets or from the config
    /// directory that summary and serve read unasked, and nothing runs.
    func testAListCannotTurnABuiltInIntoAPluginAndNothingRuns() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Vic", "--last", "Victim"]))
        let marker = workDir.appendingPathComponent("pwned").path
        let hostile = plist([entry([("identifier", "org.mitre.hreader.bloodpressure"), ("display_name", "Blood Pressure"),
                                    ("executable", "/bin/sh"), ("note", "$(touch \(marker))")])])
        let list = try file("hostile.plist", hostile)
        let given = try hreader(withPassword(["summary", "--patient", "1", "--applets", list]))
        XCTAssertEqual(given.status, 5, given.stderr)
        XCTAssertTrue(given.stderr.contains("entry 1 ('org.mitre.hreader.bloodpressure'): is a built-in applet"), given.stderr)
        XCTAssertTrue(given.stderr.contains("never make it a plugin"), given.stderr)
        XCTAssertEqual(given.stderr.split(separator: "\n").count, 1, given.stderr)

        let config = workDir.appendingPathComponent("config/hreader")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(hostile.utf8).write(to: config.appendingPathComponent("applets.plist"))
        let unasked = try hreader(withPassword(["summary", "--patient", "1"]), env: ["XDG_CONFIG_HOME": workDir.appendingPathComponent("config").path])
        XCTAssertEqual(unasked.status, 5, unasked.stderr)
        XCTAssertTrue(unasked.stderr.contains("is a built-in applet"), unasked.stderr)
        let served = try hreader(withPassword(["serve"]), env: ["XDG_CONFIG_HOME": workDir.appendingPathComponent("config").path], timeout: 20)
        XCTAssertEqual(served.status, 5, "serve refuses the list before it serves anything: \(served.stderr)")
        XCTAssertTrue(served.stderr.contains("is a built-in applet"), served.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the setting's $(…) was run")

        // Reconfiguring a built-in with its class stays allowed (hReader's own list does it).
        let reconfigured = try file("reconfigured.plist", plist([entry([("identifier", "org.mitre.hreader.bloodpressure"),
                                                                         ("display_name", "BP"), ("class_name", "HRBloodPressureAppletTile")])]))
        XCTAssertEqual(tiles(try summary("1", ["--applets", reconfigured]))["org.mitre.hreader.bloodpressure"]?["title"] as? String, "BP")
    }

    /// A plugin runs only from the plugins directory, which only the user may write.
    func testPluginsRunOnlyFromAPluginsDirectoryOnlyTheUserCanWrite() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Olga", "--last", "Outside"]))
        let marker = workDir.appendingPathComponent("ran").path
        try script("inside.sh", "touch '\(marker)'\necho '{\"status\": \"normal\", \"value\": 1}'")
        let outside = workDir.appendingPathComponent("outside.sh").path
        try Data("#!/bin/sh\ntouch '\(marker)'\necho '{\"status\": \"normal\", \"value\": 1}'\n".utf8).write(to: URL(fileURLWithPath: outside))
        chmod(outside, 0o700)
        let list = try file("where.plist", plist([pluginEntry("org.example.outside", outside), pluginEntry("org.example.inside", "inside.sh")]))
        let declared = Dictionary(uniqueKeysWithValues: try available(["--applets", list]).map { ($0["identifier"] as! String, $0) })
        XCTAssertEqual(declared["org.example.outside"]?["available"] as? Bool, false)
        XCTAssertTrue((declared["org.example.outside"]?["reason"] as? String ?? "").contains("is not in the plugins directory"), "\(declared)")
        XCTAssertEqual(declared["org.example.inside"]?["available"] as? Bool, true, "\(declared)")

        try addPlugin("org.example.outside", patient: "1", list: list)
        var tile = tiles(try summary("1", ["--applets", list]))["org.example.outside"]
        XCTAssertTrue((tile?["error"] as? String ?? "").contains("is not in the plugins directory"), "\(tile ?? [:])")
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "a program outside the plugins directory ran")

        // Approved, then the directory becomes writable by others: refused.
        try addPlugin("org.example.inside", patient: "1", list: list)
        XCTAssertEqual(tiles(try summary("1", ["--applets", list]))["org.example.inside"]?["value"] as? String, "1")
        try FileManager.default.removeItem(atPath: marker)
        chmod(pluginsDirectory.path, 0o777)
        defer { chmod(pluginsDirectory.path, 0o700) }
        tile = tiles(try summary("1", ["--applets", list]))["org.example.inside"]
        XCTAssertTrue((tile?["error"] as? String ?? "").contains("can be written by other users"), "\(tile ?? [:])")
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "a plugin in a world-writable directory ran")
    }

    /// `applets add` pins the program's path and SHA-256 (asking on a terminal, --trust-plugin
    /// otherwise); a summary runs nothing unapproved, nor a program that changed since.
    func testAPluginRunsOnlyOnceApprovedAndNotAfterItChanged() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Pia", "--last", "Pinned"]))
        let marker = workDir.appendingPathComponent("ran").path
        let plugin = try script("pinned.sh", "touch '\(marker)'\necho '{\"status\": \"normal\", \"value\": 1}'")
        let list = try file("pinned.plist", plist([pluginEntry("org.example.pinned", "pinned.sh")]))

        let unapproved = try hreader(withPassword(["applets", "add", "org.example.pinned", "--patient", "1", "--applets", list]))
        XCTAssertEqual(unapproved.status, 2, unapproved.stderr)
        XCTAssertTrue(unapproved.stderr.contains("approve it with --trust-plugin"), unapproved.stderr)
        XCTAssertTrue(unapproved.stderr.contains(plugin), "it names the program: \(unapproved.stderr)")
        XCTAssertEqual(try appletList("1").identifiers, ["org.mitre.hreader.medications", "org.mitre.hreader.bloodpressure"], "nothing added")

        try addPlugin("org.example.pinned", patient: "1", list: list)
        XCTAssertEqual(tiles(try summary("1", ["--applets", list]))["org.example.pinned"]?["value"] as? String, "1")
        XCTAssertTrue(FileManager.default.fileExists(atPath: marker))
        try FileManager.default.removeItem(atPath: marker)

        // Someone changes the program: it no longer runs, and the tile says how to approve it again.
        try script("pinned.sh", "touch '\(marker)'\necho '{\"status\": \"attention\", \"value\": 666}'")
        let tile = tiles(try summary("1", ["--applets", list]))["org.example.pinned"]
        let error = tile?["error"] as? String ?? ""
        XCTAssertTrue(error.contains("changed since it was approved"), error)
        XCTAssertTrue(error.contains("hreader applets add org.example.pinned"), error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "the changed program ran")

        try addPlugin("org.example.pinned", patient: "1", list: list)
        XCTAssertEqual(tiles(try summary("1", ["--applets", list]))["org.example.pinned"]?["value"] as? String, "666", "approved again, it runs")

        // Another identifier naming the same program is not approved by the first one's pin.
        let other = try file("other.plist", plist([pluginEntry("org.example.other", "pinned.sh")]))
        let again = try hreader(withPassword(["applets", "add", "org.example.other", "--patient", "1", "--applets", other]))
        XCTAssertEqual(again.status, 2, "an approval is for one identifier: \(again.stderr)")
    }

    /// On a terminal `applets add` shows the program, its SHA-256 and what it reads, and asks.
    func testOnATerminalAddShowsTheProgramAndItsHashAndAsks() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Tess", "--last", "Terminal"]))
        let plugin = try script("asked.sh", "echo '{\"status\": \"normal\", \"value\": 1}'")
        let digest = try XCTUnwrap(SHA256Hex.of(file: plugin))
        let list = try file("asked.plist", plist([pluginEntry("org.example.asked", "asked.sh", types: ["vital_sign"])]))
        func add(answering answer: String) throws -> (status: Int32, output: String) {
            let terminal = try OnTerminal(Self.binary, withPassword(["applets", "add", "org.example.asked", "--patient", "1", "--applets", list]),
                                          workDir: workDir, environment: environment())
            defer { terminal.stop() }
            XCTAssertTrue(terminal.wait { $0.contains("Approve it to run in this vault? [y/N]") }, terminal.outputText)
            terminal.type(answer + "\n")
            let status = terminal.finish()
            return (status, terminal.outputText)
        }
        let declined = try add(answering: "n")
        XCTAssertEqual(declined.status, 1, declined.output)
        XCTAssertTrue(declined.output.contains("program  \(plugin)"), declined.output)
        XCTAssertTrue(declined.output.contains("SHA-256  \(digest)"), declined.output)
        XCTAssertTrue(declined.output.contains("reads    vital_sign"), declined.output)
        XCTAssertEqual(try appletList("1").identifiers.count, 2, "nothing added")

        let accepted = try add(answering: "y")
        XCTAssertEqual(accepted.status, 0, accepted.output)
        XCTAssertEqual(try appletList("1").identifiers.last, "org.example.asked")
        XCTAssertEqual(tiles(try summary("1", ["--applets", list]))["org.example.asked"]?["value"] as? String, "1")
    }

    /// A shell or an interpreter as the program would run the request as code: refused unless allowed.
    func testShellsAndInterpretersAreRefusedUnlessExplicitlyAllowed() throws {
        try initVault()
        try ok(withPassword(["patients", "add", "--first", "Ian", "--last", "Interpreter"]))
        try script("placeholder", "true")
        let shell = pluginsDirectory.appendingPathComponent("sh").path
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: "/bin/sh").resolvingSymlinksInPath().path, toPath: shell)
        chmod(shell, 0o700)
        let list = try file("shell.plist", plist([pluginEntry("org.example.shell", "sh")]))
        let refused = try hreader(withPassword(["applets", "add", "org.example.shell", "--patient", "1", "--applets", list, "--trust-plugin"]))
        XCTAssertEqual(refused.status, 2, refused.stderr)
        XCTAssertTrue(refused.stderr.contains("a shell or interpreter (sh)"), refused.stderr)
        XCTAssertTrue(refused.stderr.contains("--allow-interpreter"), refused.stderr)
        XCTAssertEqual(try appletList("1").identifiers.count, 2, "nothing added")

        try addPlugin("org.example.shell", patient: "1", list: list, ["--allow-interpreter"])
        let tile = tiles(try summary("1", ["--applets", list]))["org.example.shell"]
        XCTAssertFalse((tile?["error"] as? String ?? "").contains("refused"), "allowed explicitly, it runs: \(tile ?? [:])")
    }
}

/// The SHA-256 of a file as `sha256sum` prints it (coreutils, a separate implementation).
enum SHA256Hex {
    static func of(file path: String) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: " ").first.map(String.init)
    }
}
