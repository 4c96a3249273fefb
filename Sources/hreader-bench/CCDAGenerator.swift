import Foundation

/// A long C-CDA R2.1 Continuity of Care Document for the import benchmark: one patient with years
/// of lab panels (Result Organizers of several Result Observations) and vital-sign panels (Vital
/// Signs Organizers), plus a few problems, allergies, medications and immunizations, in the shapes
/// HL7's C-CDA examples use. Invented data; deterministic for a given size.
enum CCDAGenerator {
    static let loinc = "2.16.840.1.113883.6.1", snomed = "2.16.840.1.113883.6.96", rxnorm = "2.16.840.1.113883.6.88"
    static let cvx = "2.16.840.1.113883.12.292"

    static let labs: [(code: String, name: String, unit: String, low: Double, high: Double)] = [
        ("2093-3", "Cholesterol [Mass/volume] in Serum or Plasma", "mg/dL", 120, 260),
        ("2571-8", "Triglyceride [Mass/volume] in Serum or Plasma", "mg/dL", 60, 300),
        ("2085-9", "Cholesterol in HDL [Mass/volume] in Serum or Plasma", "mg/dL", 30, 90),
        ("2345-7", "Glucose [Mass/volume] in Serum or Plasma", "mg/dL", 65, 180),
        ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood", "%", 4.5, 9.5),
        ("2160-0", "Creatinine [Mass/volume] in Serum or Plasma", "mg/dL", 0.5, 1.6),
    ]
    static let vitals: [(code: String, name: String, unit: String, low: Double, high: Double)] = [
        ("8480-6", "Systolic blood pressure", "mm[Hg]", 100, 160),
        ("8462-4", "Diastolic blood pressure", "mm[Hg]", 60, 100),
        ("8867-4", "Heart rate", "/min", 50, 110),
        ("29463-7", "Body weight", "kg", 55, 110),
        ("8310-5", "Body temperature", "Cel", 36, 38.5),
    ]

    /// About `bytes` of XML.
    static func document(bytes: Int) -> String {
        var out = header()
        out += section(template: "2.16.840.1.113883.10.20.22.2.5.1", code: "11450-4", title: "Problems", entries: (0..<5).map(problem).joined())
        out += section(template: "2.16.840.1.113883.10.20.22.2.6.1", code: "48765-2", title: "Allergies", entries: allergy())
        out += section(template: "2.16.840.1.113883.10.20.22.2.1.1", code: "10160-0", title: "Medications", entries: (0..<4).map(medication).joined())
        out += section(template: "2.16.840.1.113883.10.20.22.2.2.1", code: "11369-6", title: "Immunizations", entries: (0..<6).map(immunization).joined())
        let fixed = out.utf8.count + 2000
        let panelBytes = 4600   // one lab panel plus one vitals panel, about
        let panels = max(1, (bytes - fixed) / panelBytes)
        var results = "", vitalSigns = ""
        results.reserveCapacity(panels * 2600)
        vitalSigns.reserveCapacity(panels * 2200)
        for n in 0..<panels {
            results += organizer(n, template: "2.16.840.1.113883.10.20.22.4.1", panel: ("24331-1", "Lipid and glucose panel"), items: labs,
                                 observationTemplate: "2.16.840.1.113883.10.20.22.4.2", code: "laboratory")
            vitalSigns += organizer(n, template: "2.16.840.1.113883.10.20.22.4.26", panel: ("46680005", "Vital signs"), items: vitals,
                                    observationTemplate: "2.16.840.1.113883.10.20.22.4.27", code: "vital")
        }
        out += section(template: "2.16.840.1.113883.10.20.22.2.3.1", code: "30954-2", title: "Results", entries: results)
        out += section(template: "2.16.840.1.113883.10.20.22.2.4.1", code: "8716-3", title: "Vital Signs", entries: vitalSigns)
        out += "</structuredBody></component></ClinicalDocument>\n"
        return out
    }

    static func header() -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:sdtc="urn:hl7-org:sdtc">
        <realmCode code="US"/><typeId root="2.16.840.1.113883.1.3" extension="POCD_HD000040"/>
        <templateId root="2.16.840.1.113883.10.20.22.1.1" extension="2015-08-01"/><templateId root="2.16.840.1.113883.10.20.22.1.2" extension="2015-08-01"/>
        <id root="2.16.840.1.113883.19.5.99999.1" extension="bench-ccd-1"/>
        <code code="34133-9" codeSystem="\(loinc)" displayName="Summarization of Episode Note"/>
        <title>Continuity of Care Document</title><effectiveTime value="20241001103000-0500"/>
        <confidentialityCode code="N" codeSystem="2.16.840.1.113883.5.25"/><languageCode code="en-US"/>
        <recordTarget><patientRole><id root="2.16.840.1.113883.19.5.99999.2" extension="BENCH-0001"/>
        <addr use="HP"><streetAddressLine>1 Bench Way</streetAddressLine><city>Springfield</city><state>OR</state><postalCode>97475</postalCode></addr>
        <patient><name use="L"><given>Imogen</given><family>Benchley</family></name>
        <administrativeGenderCode code="F" codeSystem="2.16.840.1.113883.5.1"/><birthTime value="19620314"/></patient></patientRole></recordTarget>
        <author><time value="20241001103000-0500"/><assignedAuthor><id root="2.16.840.1.113883.4.6" extension="1234567893"/>
        <representedOrganization><name>Benchmark Community Hospital</name></representedOrganization></assignedAuthor></author>
        <custodian><assignedCustodian><representedCustodianOrganization><id root="2.16.840.1.113883.19.5.99999"/>
        <name>Benchmark Community Hospital</name></representedCustodianOrganization></assignedCustodian></custodian>
        <component><structuredBody>

        """
    }

    static func section(template: String, code: String, title: String, entries: String) -> String {
        "<component><section><templateId root=\"\(template)\" extension=\"2015-08-01\"/><code code=\"\(code)\" codeSystem=\"\(loinc)\"/>"
            + "<title>\(title)</title><text>See entries.</text>\n\(entries)</section></component>\n"
    }

    /// One panel every four days from 1995 on, at 08:00 in a -05:00 offset.
    static func time(_ n: Int) -> String {
        let day = Date(timeIntervalSince1970: 788_918_400 + Double(n) * 4 * 86_400)
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(secondsFromGMT: 0)!, from: day)
        return String(format: "%04d%02d%02d080000-0500", parts.year!, parts.month!, parts.day!)
    }

    static func organizer(_ n: Int, template: String, panel: (String, String), items: [(code: String, name: String, unit: String, low: Double, high: Double)],
                          observationTemplate: String, code: String) -> String {
        var out = "<entry typeCode=\"DRIV\"><organizer classCode=\"CLUSTER\" moodCode=\"EVN\"><templateId root=\"\(template)\" extension=\"2015-08-01\"/>"
            + "<id root=\"7d5a02b0-67a4-11db-bd13-0800200c9a66\" extension=\"\(code)-\(n)\"/>"
            + "<code code=\"\(panel.0)\" codeSystem=\"\(code == "vital" ? snomed : loinc)\" displayName=\"\(panel.1)\"/>"
            + "<statusCode code=\"completed\"/><effectiveTime value=\"\(time(n))\"/>"
        for (i, item) in items.enumerated() {
            let value = item.low + (item.high - item.low) * Double((n * 7919 + i * 104_729) % 1000) / 1000
            out += "<component><observation classCode=\"OBS\" moodCode=\"EVN\"><templateId root=\"\(observationTemplate)\" extension=\"2015-08-01\"/>"
                + "<id root=\"107c2dc0-67a5-11db-bd13-0800200c9a66\" extension=\"\(code)-\(n)-\(i)\"/>"
                + "<code code=\"\(item.code)\" codeSystem=\"\(loinc)\" displayName=\"\(item.name)\"/><statusCode code=\"completed\"/>"
                + "<effectiveTime value=\"\(time(n))\"/><value xsi:type=\"PQ\" value=\"\(String(format: "%.1f", value))\" unit=\"\(item.unit)\"/>"
                + "<interpretationCode code=\"N\" codeSystem=\"2.16.840.1.113883.5.83\"/></observation></component>"
        }
        return out + "</organizer></entry>\n"
    }

    static func problem(_ n: Int) -> String {
        let problems = [("38341003", "Hypertensive disorder"), ("44054006", "Diabetes mellitus type 2"), ("55822004", "Hyperlipidemia"),
                        ("195967001", "Asthma"), ("35489007", "Depressive disorder")]
        let (code, name) = problems[n % problems.count]
        return "<entry typeCode=\"DRIV\"><act classCode=\"ACT\" moodCode=\"EVN\"><templateId root=\"2.16.840.1.113883.10.20.22.4.3\" extension=\"2015-08-01\"/>"
            + "<id root=\"ec8a6ff8-ed4b-4f7e-82c3-e98e58b45de7\" extension=\"concern-\(n)\"/><code code=\"CONC\" codeSystem=\"2.16.840.1.113883.5.6\"/>"
            + "<statusCode code=\"active\"/><effectiveTime><low value=\"\(time(n * 300).prefix(8))\"/></effectiveTime>"
            + "<entryRelationship typeCode=\"SUBJ\"><observation classCode=\"OBS\" moodCode=\"EVN\"><templateId root=\"2.16.840.1.113883.10.20.22.4.4\" extension=\"2015-08-01\"/>"
            + "<id root=\"ab1791b0-5c71-11db-b0de-0800200c9a66\" extension=\"problem-\(n)\"/><code code=\"55607006\" codeSystem=\"\(snomed)\" displayName=\"Problem\"/>"
            + "<statusCode code=\"completed\"/><effectiveTime><low value=\"\(time(n * 300).prefix(8))\"/></effectiveTime>"
            + "<value xsi:type=\"CD\" code=\"\(code)\" codeSystem=\"\(snomed)\" displayName=\"\(name)\"/></observation></entryRelationship></act></entry>\n"
    }

    static func allergy() -> String {
        "<entry typeCode=\"DRIV\"><act classCode=\"ACT\" moodCode=\"EVN\"><templateId root=\"2.16.840.1.113883.10.20.22.4.30\" extension=\"2015-08-01\"/>"
            + "<id root=\"36e3e930-7b14-11db-9fe1-0800200c9a66\"/><code code=\"CONC\" codeSystem=\"2.16.840.1.113883.5.6\"/><statusCode code=\"active\"/>"
            + "<effectiveTime><low value=\"20100301\"/></effectiveTime><entryRelationship typeCode=\"SUBJ\"><observation classCode=\"OBS\" moodCode=\"EVN\">"
            + "<templateId root=\"2.16.840.1.113883.10.20.22.4.7\" extension=\"2014-06-09\"/><id root=\"4adc1020-7b14-11db-9fe1-0800200c9a66\"/>"
            + "<code code=\"ASSERTION\" codeSystem=\"2.16.840.1.113883.5.4\"/><statusCode code=\"completed\"/><effectiveTime><low value=\"20100301\"/></effectiveTime>"
            + "<value xsi:type=\"CD\" code=\"419511003\" codeSystem=\"\(snomed)\" displayName=\"Propensity to adverse reactions to drug\"/>"
            + "<participant typeCode=\"CSM\"><participantRole classCode=\"MANU\"><playingEntity classCode=\"MMAT\">"
            + "<code code=\"7980\" codeSystem=\"\(rxnorm)\" displayName=\"Penicillin G\"/></playingEntity></participantRole></participant>"
            + "</observation></entryRelationship></act></entry>\n"
    }

    static func medication(_ n: Int) -> String {
        let drugs = [("314076", "Lisinopril 10 MG Oral Tablet"), ("860975", "Metformin hydrochloride 500 MG Oral Tablet"),
                     ("617310", "Atorvastatin 20 MG Oral Tablet"), ("197361", "Amlodipine 5 MG Oral Tablet")]
        let (code, name) = drugs[n % drugs.count]
        return "<entry typeCode=\"DRIV\"><substanceAdministration classCode=\"SBADM\" moodCode=\"EVN\">"
            + "<templateId root=\"2.16.840.1.113883.10.20.22.4.16\" extension=\"2014-06-09\"/><id root=\"cdbd33f0-6cde-11db-9fe1-0800200c9a66\" extension=\"med-\(n)\"/>"
            + "<statusCode code=\"active\"/><effectiveTime xsi:type=\"IVL_TS\"><low value=\"\(time(n * 500).prefix(8))\"/></effectiveTime>"
            + "<consumable><manufacturedProduct classCode=\"MANU\"><templateId root=\"2.16.840.1.113883.10.20.22.4.23\" extension=\"2014-06-09\"/>"
            + "<manufacturedMaterial><code code=\"\(code)\" codeSystem=\"\(rxnorm)\" displayName=\"\(name)\"/></manufacturedMaterial>"
            + "</manufacturedProduct></consumable></substanceAdministration></entry>\n"
    }

    static func immunization(_ n: Int) -> String {
        let vaccines = [("140", "Influenza, seasonal, injectable, preservative free"), ("115", "Tdap"), ("33", "Pneumococcal polysaccharide PPV23")]
        let (code, name) = vaccines[n % vaccines.count]
        return "<entry typeCode=\"DRIV\"><substanceAdministration classCode=\"SBADM\" moodCode=\"EVN\" negationInd=\"false\">"
            + "<templateId root=\"2.16.840.1.113883.10.20.22.4.52\" extension=\"2015-08-01\"/><id root=\"e6f1ba43-c0ed-4b9b-9f12-f435d8ad8f92\" extension=\"imm-\(n)\"/>"
            + "<statusCode code=\"completed\"/><effectiveTime value=\"\(time(n * 400).prefix(8))\"/>"
            + "<consumable><manufacturedProduct classCode=\"MANU\"><templateId root=\"2.16.840.1.113883.10.20.22.4.54\" extension=\"2014-06-09\"/>"
            + "<manufacturedMaterial><code code=\"\(code)\" codeSystem=\"\(cvx)\" displayName=\"\(name)\"/></manufacturedMaterial>"
            + "</manufacturedProduct></consumable></substanceAdministration></entry>\n"
    }
}
