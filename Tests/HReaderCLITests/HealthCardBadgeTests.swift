import Foundation
import TestSupport
import XCTest

/// The verified badge (issue 37, docs/sharing.md, "The verified badge"): entries SMART Health Cards
/// brought say how they were checked in the terminal summary, the printable page, the IPS and the
/// web view. Cards are made and signed here (`HealthCardMaker`), imported by the real hreader.
final class HealthCardBadgeTests: IssuerTestCase {

    /// A card's Bundle: the Patient, an active Condition and one Immunization.
    static func bundle(family: String) -> [String: Any] {
        var bundle = HealthCardMaker.immunizations(family: family, doses: 1)
        var entries = bundle["entry"] as! [[String: Any]]
        entries.append(["fullUrl": "resource:9", "resource": [
            "resourceType": "Condition",
            "clinicalStatus": ["coding": [["system": "http://terminology.hl7.org/CodeSystem/condition-clinical", "code": "active"]]],
            "code": ["coding": [["system": "http://snomed.info/sct", "code": "38341003"]], "text": "Hypertension"],
            "subject": ["reference": "resource:0"], "onsetDateTime": "2020-03-01"] as [String: Any]])
        bundle["entry"] = entries
        return bundle
    }

    func importCard(family: String, issuer: String? = nil, extra: [String] = []) throws -> String {
        let card = try HealthCardMaker.card(iss: issuer ?? issuerServer.iss, key: key, bundle: Self.bundle(family: family))
        let data = try JSONSerialization.data(withJSONObject: ["verifiableCredential": [card]])
        let path = try file("\(family).smart-health-card", String(decoding: data, as: UTF8.self))
        let result = try cli(["import", "--file", path] + extra)
        XCTAssertEqual(result.status, 0, result.stderr)
        let patients = try json(try cli(["patients", "list", "--json"]))["patients"] as? [[String: Any]] ?? []
        return "\(try XCTUnwrap(patients.first { $0["last_name"] as? String == family })["id"]!)"
    }

    /// The resources of an IPS Bundle of this type.
    func resources(_ ips: [String: Any], _ type: String) -> [[String: Any]] {
        (ips["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }.filter { $0["resourceType"] as? String == type }
    }

    func codes(_ resource: [String: Any], _ member: String) -> [String] {
        ((resource["meta"] as? [String: Any])?[member] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
    }

    func testVerifiedCardShowsItsBadgeInEverySummary() throws {
        try ok(withPassword(["issuers", "add", issuerServer.iss, "--name", "Test Clinic"]))
        let patient = try importCard(family: "Lovelace")

        let text = try cli(["summary", "--patient", patient])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("Hypertension (since 2020-03-01) [verified: signed by Test Clinic]"), text.stdout)
        XCTAssertTrue(text.stdout.contains("Health cards: 2 entries verified: signed by Test Clinic"), text.stdout)
        let summaryJSON = try json(try cli(["summary", "--patient", patient, "--json"]))
        let condition = (summaryJSON["conditions"] as? [[String: Any]])?.first
        XCTAssertEqual((condition?["verification"] as? [String: Any])?["status"] as? String, "verified")
        XCTAssertEqual((summaryJSON["health_cards"] as? [[String: Any]])?.first?["entries"] as? Int, 2)

        let html = try cli(["summary", "--patient", patient, "--format", "html"])
        XCTAssertEqual(html.status, 0, html.stderr)
        XCTAssertEqual(html.stdout.components(separatedBy: "class=\"badge badge-verified\"").count - 1, 2, html.stdout)
        XCTAssertTrue(html.stdout.contains("verified: signed by Test Clinic</span>"), html.stdout)

        let ips = try json(try cli(["summary", "--patient", patient, "--format", "ips"]))
        let immunization = try XCTUnwrap(resources(ips, "Immunization").first)
        XCTAssertEqual(codes(immunization, "security"), ["DIGSIG"])
        XCTAssertEqual(codes(immunization, "tag"), ["verified"])
        let tag = ((immunization["meta"] as? [String: Any])?["tag"] as? [[String: Any]])?.first
        XCTAssertEqual(tag?["system"] as? String, "urn:hreader:smart-health-card-verification")
        XCTAssertTrue((tag?["display"] as? String ?? "").contains("Test Clinic"), "\(String(describing: tag))")
        XCTAssertEqual(codes(try XCTUnwrap(resources(ips, "Condition").first), "tag"), ["verified"])
        let composition = try XCTUnwrap(resources(ips, "Composition").first)
        let sections = composition["section"] as? [[String: Any]] ?? []
        let narrative = ((sections.first { $0["title"] as? String == "Immunizations" })?["text"] as? [String: Any])?["div"] as? String ?? ""
        XCTAssertTrue(narrative.contains("[SMART Health Card, verified: signed by Test Clinic]"), narrative)
        // The labels keep the document valid FHIR (fhir.resources, as every IPS test checks).
        let all = (ips["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
        try validateFHIR([ips] + all)
    }

    func testUntrustedAndUnverifiedCardsSayWhatTheyAre() throws {
        let untrusted = try importCard(family: "Hopper")
        let text = try cli(["summary", "--patient", untrusted])
        XCTAssertTrue(text.stdout.contains("[signed by \(issuerServer.iss), not among your trusted issuers]"), text.stdout)
        let html = try cli(["summary", "--patient", untrusted, "--format", "html"]).stdout
        XCTAssertTrue(html.contains("badge-untrusted-issuer"), html)
        XCTAssertFalse(html.contains("class=\"badge badge-verified\""), html)
        let ips = try json(try cli(["summary", "--patient", untrusted, "--format", "ips"]))
        let immunization = try XCTUnwrap(resources(ips, "Immunization").first)
        XCTAssertEqual(codes(immunization, "security"), ["DIGSIG", "UNCERTREL"])
        XCTAssertEqual(codes(immunization, "tag"), ["untrusted-issuer"])

        // An issuer nobody can reach, imported with --unverified: labelled so, never "verified".
        let nowhere = "http://127.0.0.1:9/nobody"
        let unverified = try importCard(family: "Lamarr", issuer: nowhere, extra: ["--unverified"])
        let lines = try cli(["summary", "--patient", unverified]).stdout
        XCTAssertTrue(lines.contains("[unverified: said to be from \(nowhere), not checked]"), lines)
        let unverifiedIPS = try json(try cli(["summary", "--patient", unverified, "--format", "ips"]))
        let unchecked = try XCTUnwrap(resources(unverifiedIPS, "Immunization").first)
        XCTAssertEqual(codes(unchecked, "security"), ["UNCERTREL"])
        XCTAssertEqual(codes(unchecked, "tag"), ["unverified"])
        try validateFHIR([unverifiedIPS] + (unverifiedIPS["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] })

        // An entry typed in has no badge anywhere.
        try ok(withPassword(["entries", "add", "--patient", untrusted, "--type", "condition", "--description", "Asthma", "--date", "2021-01-01"]))
        let mixed = try cli(["summary", "--patient", untrusted]).stdout
        XCTAssertTrue(mixed.contains("Asthma (since 2021-01-01)"), mixed)
        XCTAssertFalse(mixed.contains("Asthma (since 2021-01-01) ["), mixed)
    }

    func testWebViewShowsTheBadgeOnThePatientPageAndTheRecordLists() throws {
        try ok(withPassword(["issuers", "add", issuerServer.iss, "--name", "Test Clinic"]))
        let patient = try importCard(family: "Lovelace")
        let served = try serve()
        defer { stop(served) }

        let page = try served.bearer("/patients/\(patient)")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.body.contains("badge-verified"), page.body)
        XCTAssertTrue(page.body.contains("verified: signed by Test Clinic"), page.body)
        XCTAssertTrue(page.body.contains("From SMART Health Cards"), page.body)

        let listed = try served.bearer("/api/patients/\(patient)/entries")
        let entries = listed.json["entries"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.count, 2)
        XCTAssertEqual(entries.compactMap { ($0["verification"] as? [String: Any])?["status"] as? String }, ["verified", "verified"])

        let timeline = try served.bearer("/timeline.json?patient=\(patient)&from=2020-01-01&to=2022-01-01&detail=1")
        let immunizations = timeline.json["immunizations"] as? [[String: Any]] ?? []
        XCTAssertEqual(immunizations.first?["badge"] as? String, "verified: signed by Test Clinic", timeline.body)
    }
}
