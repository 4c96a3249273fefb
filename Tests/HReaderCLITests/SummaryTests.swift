import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `hreader summary --format ips|html` through the real binary: the IPS document Bundle checked by
/// fhir.resources (ExportTests' independent validator) and by hand for what a document must be, its
/// round trip through `import --file`, the "no information" entries of empty sections, and the
/// printable page's content, escaping and self-containment. Data comes from the sample server's
/// synthetic FHIR and RHEx, generated Apple Health exports, and entries typed in.
final class SummaryTests: CLITestCase {
    var server: SampleServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
        server = try SampleServer([], workDir: workDir)
    }

    override func tearDownWithError() throws {
        server?.stop()
        try super.tearDownWithError()
    }

    static let ipsSections: [String: String] = [
        "11450-4": "problems", "48765-2": "allergies", "10160-0": "medications", "11369-6": "immunizations",
        "30954-2": "results", "8716-3": "vital signs",
    ]

    // MARK: IPS

    func testIPSFromFHIRAndTypedEntriesIsASelfContainedValidDocument() throws {
        try ok(withPassword(["import", "--server", server.fhir, "--patient", "p1", "--as", "me"]))
        try ok(withPassword(["patients", "select", "1"]))
        try addTypedRecord()
        // A reading whose number is written with its precision (36.80), as a device sends it.
        let temperature = try file("temperature.json", """
            {"resourceType": "Observation", "id": "temp-1", "status": "final",
             "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}]}],
             "code": {"coding": [{"system": "http://loinc.org", "code": "8310-5"}], "text": "Body temperature"},
             "subject": {"reference": "https://devices.example/fhir/Patient/abc"},
             "effectiveDateTime": "2026-11-20T07:00:00Z", "valueQuantity": {"value": 36.80, "unit": "Cel", "system": "http://unitsofmeasure.org", "code": "Cel"}}
            """)
        try ok(withPassword(["import", "--file", temperature, "--patient", "1"]))
        let (bundle, text) = try ips(["--since", "2000-01-01"])
        try checkDocument(bundle)

        // Every section IPS requires, and each recommended one that has something.
        let composition = try XCTUnwrap(resources(bundle).first)
        let sections = try XCTUnwrap(composition["section"] as? [[String: Any]])
        let codes = sections.compactMap { loinc($0["code"]) }
        XCTAssertTrue(Set(codes).isSuperset(of: ["11450-4", "48765-2", "10160-0"]), "\(codes)")
        XCTAssertTrue(Set(codes).isSuperset(of: ["11369-6", "30954-2", "8716-3"]), "the record has immunizations, results and vitals: \(codes)")
        for section in sections {
            let div = try XCTUnwrap((section["text"] as? [String: Any])?["div"] as? String)
            XCTAssertTrue(div.hasPrefix("<div xmlns=\"http://www.w3.org/1999/xhtml\">"), div)
            XCTAssertFalse((section["entry"] as? [Any] ?? []).isEmpty)
        }

        // An entry that came from FHIR is its raw resource (the server's verificationStatus is kept),
        // about the Bundle's Patient.
        let byType = Dictionary(grouping: resources(bundle)) { $0["resourceType"] as? String ?? "" }
        let patientURL = try XCTUnwrap(fullURLs(bundle).first { $0.resource["resourceType"] as? String == "Patient" }?.url)
        let fromServer = try XCTUnwrap(byType["AllergyIntolerance"]?.first { $0["verificationStatus"] != nil }, "a raw allergy from the server")
        XCTAssertEqual((fromServer["patient"] as? [String: Any])?["reference"] as? String, patientURL)
        XCTAssertNotNil(fromServer["meta"], "as the server sent it")
        // One typed in is mapped: a problem-list Condition with its codes.
        let typed = try XCTUnwrap(byType["Condition"]?.first { (($0["code"] as? [String: Any])?["text"] as? String) == "Seasonal asthma" })
        XCTAssertEqual(codings(typed["code"]).first?.system, "http://snomed.info/sct")
        XCTAssertEqual(codings(typed["code"]).first?.code, "195967001")
        let medication = try XCTUnwrap(byType["MedicationStatement"]?.first {
            (($0["medicationCodeableConcept"] as? [String: Any])?["text"] as? String) == "Salbutamol inhaler"
        })
        XCTAssertEqual(((medication["dosage"] as? [[String: Any]])?.first?["text"]) as? String, "2 puffs as needed")
        // Number literals of the source survive (a decimal's precision means something in FHIR).
        XCTAssertTrue(text.contains("\"value\": 36.80"), "36.80 is kept as written")
        XCTAssertFalse(text.contains("Patient/p1"), "every reference to the server's patient was rewritten")
        XCTAssertFalse(text.contains("Patient/abc"))

        // Vital signs: the latest of each kind only.
        let vitalsSection = try XCTUnwrap(sections.first { loinc($0["code"]) == "8716-3" })
        let vitalURLs = Set((vitalsSection["entry"] as? [[String: Any]] ?? []).compactMap { $0["reference"] as? String })
        let vitals = fullURLs(bundle).filter { vitalURLs.contains($0.url) }.map(\.resource)
        let kinds = vitals.map { loinc($0["code"]) ?? "?" }
        XCTAssertEqual(kinds.count, Set(kinds).count, "one vital sign of each kind: \(kinds)")

        try validateFHIR([bundle] + resources(bundle))
    }

    func testIPSFromRHExRecordsMapsEveryEntryAndValidates() throws {
        try ok(withPassword(["import", "--server", server.rhex, "--kind", "rhex", "--all"]))
        let (bundle, _) = try ips(["--patient", "1", "--since", "2000-01-01"])
        try checkDocument(bundle)
        let types = Set(resources(bundle).compactMap { $0["resourceType"] as? String })
        XCTAssertTrue(types.isSuperset(of: ["Composition", "Patient", "Condition", "AllergyIntolerance", "MedicationStatement"]), "\(types)")
        try validateFHIR([bundle] + resources(bundle))
    }

    func testEmptyRequiredSectionsCarryTheNoInformationEntriesAndOthersAreLeftOut() throws {
        try ok(withPassword(["patients", "add", "--first", "Empty", "--last", "Record", "--birth-date", "1970-01-01", "--gender", "male"]))
        let (bundle, _) = try ips(["--patient", "1"])
        try checkDocument(bundle)
        let composition = try XCTUnwrap(resources(bundle).first)
        let sections = try XCTUnwrap(composition["section"] as? [[String: Any]])
        XCTAssertEqual(sections.compactMap { loinc($0["code"]) }, ["11450-4", "48765-2", "10160-0"], "recommended sections are left out when empty")
        let expected = ["11450-4": ("Condition", "code", "no-problem-info"), "48765-2": ("AllergyIntolerance", "code", "no-allergy-info"),
                        "10160-0": ("MedicationStatement", "medicationCodeableConcept", "no-medication-info")]
        let byURL = Dictionary(uniqueKeysWithValues: fullURLs(bundle).map { ($0.url, $0.resource) })
        for section in sections {
            let (type, member, code) = try XCTUnwrap(expected[loinc(section["code"]) ?? ""])
            let references = (section["entry"] as? [[String: Any]] ?? []).compactMap { $0["reference"] as? String }
            XCTAssertEqual(references.count, 1)
            let resource = try XCTUnwrap(byURL[references[0]])
            XCTAssertEqual(resource["resourceType"] as? String, type)
            XCTAssertEqual(codings(resource[member]).map(\.system), ["http://hl7.org/fhir/uv/ips/CodeSystem/absent-unknown-uv-ips"])
            XCTAssertEqual(codings(resource[member]).map(\.code), [code])
            let div = ((section["text"] as? [String: Any])?["div"] as? String) ?? ""
            XCTAssertTrue(div.contains("No information about"), div)
        }
        try validateFHIR([bundle] + resources(bundle))

        // Imported back, the statements add nothing: they stand for empty sections, not records.
        let other = workDir.appendingPathComponent("other-vault").path
        XCTAssertEqual(try hreader(["init", "--vault", other, "--new-password-file", passwordFile] + Self.cheapKDF).status, 0)
        try ok(withPassword(["import", "--vault", other, "--file", workDir.appendingPathComponent("ips.json").path]))
        let imported = try json(try ok(withPassword(["entries", "list", "--vault", other, "--patient", "1", "--json"])))
        let types = (imported["entries"] as? [[String: Any]] ?? []).compactMap { $0["type"] as? String }
        XCTAssertFalse(types.contains { ["condition", "allergy", "medication"].contains($0) }, "\(types)")

        let html = try ok(withPassword(["summary", "--patient", "1", "--format", "html"])).stdout
        XCTAssertTrue(html.contains("No information about problems in this record."), html)
        XCTAssertTrue(html.contains("No information about allergies in this record."))
        XCTAssertTrue(html.contains("No information about medications in this record."))
    }

    func testIPSImportedIntoANewVaultYieldsTheSameProblemsAllergiesMedicationsAndImmunizations() throws {
        try ok(withPassword(["import", "--server", server.fhir, "--patient", "p2", "--as", "me"]))
        try ok(withPassword(["patients", "select", "1"]))
        try addTypedRecord()
        let (first, _) = try ips(["--since", "2000-01-01"])
        let path = workDir.appendingPathComponent("ips.json").path

        let other = workDir.appendingPathComponent("other-vault").path
        XCTAssertEqual(try hreader(["init", "--vault", other, "--new-password-file", passwordFile] + Self.cheapKDF).status, 0)
        try ok(withPassword(["import", "--vault", other, "--file", path]))
        let output = workDir.appendingPathComponent("ips-again.json")
        try ok(withPassword(["summary", "--vault", other, "--patient", "1", "--format", "ips", "--since", "2000-01-01", "--out", output.path]))
        let second = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])

        let before = try sectionContents(first), after = try sectionContents(second)
        for code in ["11450-4", "48765-2", "10160-0", "11369-6"] {
            XCTAssertFalse(before[code]?.lines.isEmpty ?? true, "the first vault has \(Self.ipsSections[code]!)")
            XCTAssertEqual(after[code]?.lines, before[code]?.lines, "the same \(Self.ipsSections[code]!), named, detailed and dated the same")
            XCTAssertEqual(after[code]?.codes, before[code]?.codes, "the same codes of \(Self.ipsSections[code]!)")
        }
        let patient = try XCTUnwrap(resources(second).first { $0["resourceType"] as? String == "Patient" })
        let original = try XCTUnwrap(resources(first).first { $0["resourceType"] as? String == "Patient" })
        XCTAssertEqual(patient["birthDate"] as? String, original["birthDate"] as? String)
        XCTAssertEqual((patient["name"] as? [[String: Any]])?.first?["family"] as? String,
                       (original["name"] as? [[String: Any]])?.first?["family"] as? String)
    }

    // MARK: The printable page

    func testHTMLPageListsTheRecordEscapesItAndLoadsNothing() throws {
        try ok(withPassword(["import", "--server", server.fhir, "--patient", "p3", "--as", "me"]))
        try ok(withPassword(["patients", "select", "1"]))
        try addTypedRecord()
        let hostile = #"<script>alert("x")</script> & <img src=x onerror=alert(1)>"#
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", hostile, "--status", "active",
                             "--date", "2025-01-02"]))
        let samples = (0..<3).map { i in
            AppleHealthTests.record("HKQuantityTypeIdentifierHeartRate", "\(60 + 10 * i)", "count/min", "2026-04-0\(i + 1) 09:00:00 +0000")
        }
        let export = try file("export.xml", AppleHealthTests.export(extraRecords: samples))
        try ok(withPassword(["import", "--apple-health", export, "--patient", "1"]))

        let out = workDir.appendingPathComponent("summary.html")
        let wrote = try ok(withPassword(["summary", "--format", "html", "--out", out.path]))
        XCTAssertTrue(wrote.stdout.hasPrefix("Wrote the html summary of "), wrote.stdout)
        var info = stat()
        XCTAssertEqual(stat(out.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600, "the summary file is the patient's only")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workDir.path).filter { $0.contains(".tmp-") }, [],
                       "no temporary file is left beside it")
        let html = try String(contentsOf: out, encoding: .utf8)

        // The record, section by section, with dates.
        for expected in ["Seasonal asthma", "Peanut allergy", "Salbutamol inhaler", "2 puffs as needed",
                         "Influenza vaccine", "Body weight", "70 kg", "2026-11-02"] {
            XCTAssertTrue(html.contains(expected), "no \(expected) in the page")
        }
        XCTAssertTrue(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt;"),
                      "the hostile condition is shown as text")
        XCTAssertFalse(html.lowercased().contains("<script"), "no script at all")
        XCTAssertFalse(html.contains("<img"))
        // Nothing loaded from anywhere: no element with src, href or the like (escaped text has no tags),
        // no url() or @import in the style, no link, frame or object element.
        let tags = try NSRegularExpression(pattern: "<[A-Za-z][^>]*>").matches(in: html, range: NSRange(html.startIndex..., in: html))
            .map { String(html[Range($0.range, in: html)!]) }
        XCTAssertGreaterThan(tags.count, 20)
        for tag in tags {
            XCTAssertNil(tag.range(of: #"(?i)\s(src|href|srcset|action|data|poster|background)\s*="#, options: .regularExpression), tag)
            XCTAssertNil(tag.range(of: #"(?i)^<(link|iframe|object|embed|base|img|script|frame|svg)\b"#, options: .regularExpression), tag)
        }
        for pattern in [#"(?i)url\s*\("#, #"(?i)@import"#, #"(?i)https?://(?!127\.0\.0\.1)"#] {
            let style = html.components(separatedBy: "<style>").last?.components(separatedBy: "</style>").first ?? ""
            XCTAssertNil(style.range(of: pattern, options: .regularExpression), "the style matches \(pattern)")
        }
        XCTAssertTrue(html.contains("@media print"))
        XCTAssertTrue(html.contains("@page"))

        // Apple Health: one row per kind, the latest of each (the heart rate of 04-03, not the earlier ones).
        let heartRows = rows(html).filter { $0.contains(">Heart rate<") }
        XCTAssertEqual(heartRows.count, 1, "\(heartRows)")
        XCTAssertTrue(heartRows.first?.contains("80 /min") == true, "\(heartRows)")
        let systolic = rows(html).filter { $0.lowercased().contains("systolic") }
        XCTAssertEqual(systolic.count, 1, "\(systolic)")

        // The sources and when each was last synced.
        let sources = try XCTUnwrap(html.range(of: "<section class=\"sources\">").map { String(html[$0.lowerBound...]) })
        XCTAssertTrue(sources.contains(server.fhir), sources)
        XCTAssertTrue(sources.contains("Apple Health export"), sources)
        XCTAssertTrue(sources.contains("Typed in"), sources)
        let year = String(Calendar(identifier: .gregorian).component(.year, from: Date()))
        XCTAssertTrue(sources.contains("<td class=\"date\">\(year)-"), "the server's last sync is shown: \(sources)")

        // The IPS narrative escapes it too, and the resource keeps the name as text.
        let (bundle, _) = try ips([])
        let problems = try XCTUnwrap((resources(bundle).first?["section"] as? [[String: Any]])?.first { loinc($0["code"]) == "11450-4" })
        let div = ((problems["text"] as? [String: Any])?["div"] as? String) ?? ""
        XCTAssertTrue(div.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img"), div)
        let divs = (resources(bundle).first?["section"] as? [[String: Any]] ?? []).compactMap { ($0["text"] as? [String: Any])?["div"] as? String }
        XCTAssertFalse(divs.contains { $0.contains("<script") || $0.contains("<img") }, "no tag from the data in any narrative")
        XCTAssertTrue(resources(bundle).contains { (($0["code"] as? [String: Any])?["text"] as? String) == hostile })

        // Without --out: the same page on stdout (but for the time it was made).
        let printed = try ok(withPassword(["summary", "--format", "html"])).stdout
        XCTAssertEqual(rows(printed), rows(html))
    }

    /// A source's narrative reaches the IPS only as FHIR's rules for narrative XHTML allow it (the
    /// summary copied `text.div` as it came: a script, an `onerror`, a `javascript:` link reached the
    /// document a clinician opens). Checked by an allow-list over libxml2's parse and written again;
    /// a narrative that fails is replaced by a generated one from the entry, a contained resource's
    /// removed. The printable page never shows a source's narrative at all.
    /// Results and vital signs: the newest of each test in the window (two years before now), whatever
    /// its wording (a code groups them), never an older reading, a struck one, or one from before it.
    func testTheSummaryShowsTheNewestResultOfEachTestInItsWindowOnly() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Quill", "--birth-date", "1961-04-12"]))
        let now = Date()
        func day(_ daysAgo: Double) -> String { ISO8601DateFormatter().string(from: now.addingTimeInterval(-daysAgo * 86_400)) }
        func result(_ description: String, _ value: String, _ daysAgo: Double, code: String = "LOINC=2345-7") throws -> Int {
            let added = try ok(withPassword(["entries", "add", "--patient", "1", "--type", "result", "--description", description,
                                             "--value", value, "--unit", "mg/dL", "--date", day(daysAgo), "--code", code, "--json"]))
            return try XCTUnwrap((try json(added)["entry"] as? [String: Any])?["id"] as? Int)
        }
        _ = try result("Glucose", "91", 300)
        _ = try result("Glucose [Mass/volume] in Serum", "97", 100)
        let struck = try result("Glucose", "250", 10)
        try ok(withPassword(["entries", "strike", String(struck)]))
        _ = try result("Cholesterol", "180", 1_000, code: "LOINC=2093-3")
        _ = try result("Hemoglobin A1c", "5.9", 500, code: "LOINC=4548-4")

        let out = workDir.appendingPathComponent("summary.html")
        try ok(withPassword(["summary", "--patient", "1", "--format", "html", "--out", out.path]))
        let html = try String(contentsOf: out, encoding: .utf8)
        XCTAssertTrue(html.contains(">97 mg/dL<"), "the newest glucose, under another wording")
        XCTAssertTrue(html.contains(">5.9 mg/dL<"), "the newest (and only) A1c in the window")
        for absent in [">91 mg/dL<", ">250 mg/dL<", ">180 mg/dL<", "Cholesterol"] {
            XCTAssertFalse(html.contains(absent), "\(absent): an older, struck or out-of-window result")
        }
    }

    func testIPSKeepsASourcesNarrativeOnlyAsFHIRAllowsIt() throws {
        let xhtml = "http://www.w3.org/1999/xhtml"
        func condition(_ id: String, _ name: String, div: String) -> String {
            let text = String(data: try! JSONSerialization.data(withJSONObject: ["status": "additional", "div": div]), encoding: .utf8)!
            return """
                {"resource": {"resourceType": "Condition", "id": "\(id)", "text": \(text),
                 "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "active"}]},
                 "code": {"text": "\(name)"}, "subject": {"reference": "Patient/p1"}, "onsetDateTime": "2025-01-02"}}
                """
        }
        let benign = #"<div xmlns="\#(xhtml)" xml:lang="en"><p>Eczema, <b>both hands</b> &amp; wrists<!-- seen 2025 --></p>"#
            + #"<table class="grid"><tr><th scope="col">Site</th><td style="color: rgb(0, 0, 0); font-weight: bold">Hands</td></tr></table>"#
            + ##"<p><a href="https://example.org/eczema">Leaflet</a> <a href="#note">note</a></p></div>"##
        let hostile: [(String, String, String)] = [
            ("c1", "Hostile asthma", #"<div xmlns="\#(xhtml)"><p>Asthma</p><script>alert(1)</script></div>"#),
            ("c2", "Hostile gout", ##"<div xmlns="\##(xhtml)"><p>Gout</p><img src="#x" onerror="alert(2)"/></div>"##),
            ("c3", "Hostile migraine", #"<div xmlns="\#(xhtml)"><a href=" JaVa&#x09;ScRiPt:alert(3)">Migraine</a></div>"#),
            ("c4", "Hostile rash", #"<div xmlns="\#(xhtml)"><iframe src="https://evil.example/x"></iframe><p>Rash</p></div>"#),
            ("c5", "Hostile cough", #"<div xmlns="\#(xhtml)"><form action="https://evil.example/"><input name="x"/></form>Cough</div>"#),
            ("c6", "Hostile fever", #"<div xmlns="\#(xhtml)"><p style="background: url(https://evil.example/beacon)">Fever</p></div>"#),
            ("c7", "Hostile sprain", #"<p onclick="alert(4)">Sprain</p><div xmlns="\#(xhtml)">x</div>"#),
            ("c8", "Hostile acne", #"<div><p>Acne</p><svg xmlns="http://www.w3.org/2000/svg" onload="alert(5)"/></div>"#),
        ]
        let contained = #"<div xmlns="\#(xhtml)"><object data="https://evil.example/x.swf">Pills</object></div>"#
        let allergy = """
            {"resource": {"resourceType": "AllergyIntolerance", "id": "a1",
             "contained": [{"resourceType": "Medication", "id": "m1", "text": {"status": "generated", "div": \(String(data: try JSONSerialization.data(withJSONObject: [contained]), encoding: .utf8)!.dropFirst().dropLast())},
                            "code": {"text": "Penicillin V"}}],
             "clinicalStatus": {"coding": [{"system": "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "code": "active"}]},
             "code": {"text": "Penicillin"}, "patient": {"reference": "Patient/p1"}}}
            """
        let bundle = """
            {"resourceType": "Bundle", "type": "collection", "entry": [
             {"resource": {"resourceType": "Patient", "id": "p1", "name": [{"family": "Narrative", "given": ["Nora"]}]}},
             \(condition("c-benign", "Plain eczema", div: benign)),
             \(hostile.map { condition($0.0, $0.1, div: $0.2) }.joined(separator: ",\n")),
             \(allergy)]}
            """
        try ok(withPassword(["import", "--file", try file("narratives.json", bundle), "--as", "me"]))
        try ok(withPassword(["patients", "select", "1"]))

        let (document, text) = try ips([])
        try checkDocument(document)
        for forbidden in ["<script", "onerror", "onclick", "onload", "javascript", "<iframe", "<form", "<object", "<svg", "evil.example"] {
            XCTAssertFalse(text.lowercased().contains(forbidden), "the IPS holds \(forbidden)")
        }
        let conditions = resources(document).filter { $0["resourceType"] as? String == "Condition" }
        func narrative(_ name: String) throws -> [String: Any] {
            let resource = try XCTUnwrap(conditions.first { (($0["code"] as? [String: Any])?["text"] as? String) == name }, name)
            return try XCTUnwrap(resource["text"] as? [String: Any], name)
        }
        for (_, name, _) in hostile {
            let replaced = try narrative(name)
            XCTAssertEqual(replaced["status"] as? String, "generated", name)
            let div = replaced["div"] as? String ?? ""
            XCTAssertTrue(div.hasPrefix(#"<div xmlns="\#(xhtml)"><p>\#(name) (2025-01-02)</p>"#), div)
        }
        // A narrative within the rules is kept, written again from its parse (the comment left out).
        let kept = try narrative("Plain eczema")
        XCTAssertEqual(kept["status"] as? String, "additional")
        XCTAssertEqual(kept["div"] as? String, benign.replacingOccurrences(of: "<!-- seen 2025 -->", with: ""))
        // A contained resource's narrative that fails is removed; the resource stays.
        let allergyResource = try XCTUnwrap(resources(document).first { $0["resourceType"] as? String == "AllergyIntolerance" && $0["contained"] != nil })
        let medication = try XCTUnwrap((allergyResource["contained"] as? [[String: Any]])?.first)
        XCTAssertNil(medication["text"])
        XCTAssertEqual((medication["code"] as? [String: Any])?["text"] as? String, "Penicillin V")

        // The printable page shows the names as text and none of the narratives.
        let html = try ok(withPassword(["summary", "--format", "html"])).stdout
        XCTAssertTrue(html.contains("Hostile asthma") && html.contains("Plain eczema"))
        for forbidden in ["<script", "onerror", "onclick", "onload", "javascript", "<iframe", "<form", "<object", "<svg", "evil.example", "both hands"] {
            XCTAssertFalse(html.lowercased().contains(forbidden), "the page holds \(forbidden)")
        }
    }

    func testUsageAndPlaceErrorsAreOneLineWithTheirExitCodes() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace"]))
        let json = try hreader(withPassword(["summary", "--patient", "1", "--format", "ips", "--json"]))
        XCTAssertEqual(json.status, 2, json.stderr)
        let since = try hreader(withPassword(["summary", "--patient", "1", "--since", "2020-01-01"]))
        XCTAssertEqual(since.status, 2, since.stderr)
        let nowhere = try hreader(withPassword(["summary", "--patient", "1", "--format", "html", "--out", workDir.appendingPathComponent("no/such/dir/x.html").path]))
        XCTAssertEqual(nowhere.status, 2, nowhere.stderr)
        XCTAssertEqual(nowhere.stderr.split(separator: "\n").count, 1, nowhere.stderr)
        XCTAssertEqual(nowhere.stdout, "")
        let nobody = try hreader(withPassword(["summary", "--patient", "99", "--format", "ips"]))
        XCTAssertEqual(nobody.status, 2, nobody.stderr)
        let locked = try hreader(["summary", "--patient", "1", "--format", "ips"])
        XCTAssertEqual(locked.status, 3, locked.stderr)
        // The text summary is unchanged by default.
        let text = try ok(withPassword(["summary", "--patient", "1"])).stdout
        XCTAssertTrue(text.hasPrefix("Ada Lovelace\n"), text)
        XCTAssertTrue(text.contains("Conditions: none"), text)
    }

    func testServeAnswersThePrintablePageOnlyWithTheSessionAndWithItsOwnStrictPolicy() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Lovelace", "--birth-date", "1985-12-10"]))
        try addTypedRecord()
        let served = try serve()
        defer { stop(served) }
        let uuid = try XCTUnwrap(((try served.bearer("/api/patients").json["patients"] as? [[String: Any]])?.first)?["uuid"] as? String)
        let path = "/patients/\(uuid)/summary.html"
        XCTAssertEqual(try served.send(path).status, 401, "no token, no page")
        let page = try served.bearer(path)
        XCTAssertEqual(page.status, 200)
        let body = page.body
        XCTAssertTrue(body.contains("Seasonal asthma"))
        let cli = try ok(withPassword(["summary", "--patient", "1", "--format", "html"])).stdout
        XCTAssertEqual(rows(body), rows(cli), "the same page as the command line")
        let policy = try XCTUnwrap(page.header("Content-Security-Policy"))
        XCTAssertTrue(policy.contains("default-src 'none'"), policy)
        XCTAssertTrue(policy.contains("style-src 'sha256-"), policy)
        XCTAssertFalse(policy.contains("script-src"), "the page runs no script: \(policy)")
        XCTAssertEqual(page.header("Cache-Control"), "no-store")
        let summary = try served.bearer("/patients/\(uuid)").body
        XCTAssertTrue(summary.contains("/patients/\(uuid)/summary.html\""), "the summary page links the printable one")
    }

    // MARK: Helpers

    /// A problem, an allergy, a medication, an immunization and a vital sign typed in (no raw FHIR:
    /// the summary maps them).
    func addTypedRecord() throws {
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "condition", "--description", "Seasonal asthma",
                             "--status", "active", "--date", "2019-04-01", "--code", "SNOMED-CT=195967001"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "allergy", "--description", "Peanut allergy",
                             "--status", "active", "--date", "2010-06-01", "--code", "SNOMED-CT=91935009"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "medication", "--description", "Salbutamol inhaler",
                             "--dose", "2 puffs as needed", "--date", "2019-04-02", "--code", "RxNorm=245314"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "immunization", "--description", "Influenza vaccine",
                             "--date", "2025-10-01", "--code", "CVX=140"]))
        try ok(withPassword(["entries", "add", "--patient", "1", "--type", "vital_sign", "--description", "Body weight",
                             "--value", "70", "--unit", "kg", "--date", "2026-11-02T07:00:00Z", "--code", "LOINC=29463-7"]))
    }

    /// `summary --format ips` to a file, read back: the Bundle and its text.
    func ips(_ options: [String]) throws -> (bundle: [String: Any], text: String) {
        let url = workDir.appendingPathComponent("ips.json")
        try ok(withPassword(["summary", "--format", "ips", "--out", url.path] + options))
        let text = try String(contentsOf: url, encoding: .utf8)
        return (try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]), text)
    }

    func fullURLs(_ bundle: [String: Any]) -> [(url: String, resource: [String: Any])] {
        (bundle["entry"] as? [[String: Any]] ?? []).compactMap { entry in
            guard let url = entry["fullUrl"] as? String, let resource = entry["resource"] as? [String: Any] else { return nil }
            return (url, resource)
        }
    }

    func resources(_ bundle: [String: Any]) -> [[String: Any]] { fullURLs(bundle).map(\.resource) }

    /// What a FHIR document must be: type, identifier, timestamp; the Composition first (IPS type,
    /// subject, date, author, title); urn:uuid fullUrls, all different; every reference inside the Bundle.
    func checkDocument(_ bundle: [String: Any], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(bundle["type"] as? String, "document", file: file, line: line)
        XCTAssertEqual((bundle["identifier"] as? [String: Any])?["system"] as? String, "urn:ietf:rfc:3986", file: file, line: line)
        XCTAssertNotNil(bundle["timestamp"] as? String, file: file, line: line)
        let entries = fullURLs(bundle)
        XCTAssertEqual(entries.count, (bundle["entry"] as? [Any])?.count, "every entry has a fullUrl and a resource", file: file, line: line)
        XCTAssertTrue(entries.allSatisfy { $0.url.hasPrefix("urn:uuid:") && $0.url.count == 45 }, file: file, line: line)
        XCTAssertEqual(Set(entries.map(\.url)).count, entries.count, "fullUrls differ", file: file, line: line)
        let composition = try XCTUnwrap(entries.first?.resource, file: file, line: line)
        XCTAssertEqual(composition["resourceType"] as? String, "Composition", file: file, line: line)
        XCTAssertEqual(loinc(composition["type"]), "60591-5", file: file, line: line)
        XCTAssertEqual(composition["status"] as? String, "final", file: file, line: line)
        XCTAssertNotNil(composition["date"] as? String, file: file, line: line)
        XCTAssertNotNil(composition["title"] as? String, file: file, line: line)
        XCTAssertFalse((composition["author"] as? [Any] ?? []).isEmpty, file: file, line: line)
        let patientURL = entries.first { $0.resource["resourceType"] as? String == "Patient" }?.url
        XCTAssertNotNil(patientURL, file: file, line: line)
        XCTAssertEqual((composition["subject"] as? [String: Any])?["reference"] as? String, patientURL, file: file, line: line)
        let inside = Set(entries.map(\.url))
        var references: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                if let reference = object["reference"] as? String { references.append(reference) }
                object.values.forEach(collect)
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        entries.forEach { collect($0.resource) }
        let outside = references.filter { !inside.contains($0) && !$0.hasPrefix("#") }
        XCTAssertEqual(outside, [], "references that leave the Bundle", file: file, line: line)
    }

    /// Per section code: its narrative lines and the codes of its resources' main concept.
    func sectionContents(_ bundle: [String: Any]) throws -> [String: (lines: [String], codes: Set<String>)] {
        let byURL = Dictionary(uniqueKeysWithValues: fullURLs(bundle).map { ($0.url, $0.resource) })
        let composition = try XCTUnwrap(resources(bundle).first)
        var contents: [String: (lines: [String], codes: Set<String>)] = [:]
        for section in composition["section"] as? [[String: Any]] ?? [] {
            let div = ((section["text"] as? [String: Any])?["div"] as? String) ?? ""
            let lines = div.components(separatedBy: "<li>").dropFirst().map { $0.components(separatedBy: "</li>")[0] }.sorted()
            var codes: Set<String> = []
            for reference in (section["entry"] as? [[String: Any]] ?? []).compactMap({ $0["reference"] as? String }) {
                let resource = byURL[reference] ?? [:]
                for key in ["code", "medicationCodeableConcept", "vaccineCode"] {
                    for coding in codings(resource[key]) { codes.insert("\(coding.system ?? "")|\(coding.code ?? "")") }
                }
            }
            contents[loinc(section["code"]) ?? "?"] = (lines, codes)
        }
        return contents
    }

    func codings(_ concept: Any?) -> [(system: String?, code: String?)] {
        ((concept as? [String: Any])?["coding"] as? [[String: Any]] ?? []).map { ($0["system"] as? String, $0["code"] as? String) }
    }

    func loinc(_ concept: Any?) -> String? {
        codings(concept).first { $0.system == "http://loinc.org" }?.code ?? nil
    }

    /// The page's table rows, as HTML.
    func rows(_ html: String) -> [String] {
        html.components(separatedBy: "<tr class=\"row\"").dropFirst().map { $0.components(separatedBy: "</tr>")[0] }
    }

}
