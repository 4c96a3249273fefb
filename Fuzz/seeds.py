#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses: python3 Fuzz/seeds.py OUT_DIR (make fuzz does it).

One folder per harness (OUT_DIR/<harness>/), small hand-shaped inputs in the formats hreader reads:
FHIR R4 bundles, NDJSON and XML, RHEx c32 records and their Atom feed, Apple Health export.xml (with
its internal DTD) and export.zip, applet plists (XML and binary), timeline POST bodies and the web
layer's query strings, forms and return_to paths. Generated here, not copied from fixtures.
Standard library only."""
import io, json, os, plistlib, sys, zipfile

out = sys.argv[1] if len(sys.argv) > 1 else ".build/fuzz/corpus"


def put(harness, name, data):
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def j(value):
    return json.dumps(value, separators=(",", ":"))


# --- FHIR R4 resources ---------------------------------------------------------------------------
patient = {"resourceType": "Patient", "id": "p1",
           "identifier": [{"system": "urn:oid:1.2.3", "value": "MRN-1"}],
           "name": [{"family": "Lovelace", "given": ["Ada"]}], "gender": "female", "birthDate": "1985-12-10",
           "extension": [{"url": "http://hl7.org/fhir/us/core/StructureDefinition/us-core-race",
                          "extension": [{"url": "text", "valueString": "Invented"}]}]}
subject = {"reference": "Patient/p1"}
loinc = lambda code, text: {"coding": [{"system": "http://loinc.org", "code": code, "display": text}], "text": text}
resources = [
    patient,
    {"resourceType": "Observation", "id": "o1", "status": "final", "subject": subject,
     "category": [{"coding": [{"system": "http://terminology.hl7.org/CodeSystem/observation-category", "code": "vital-signs"}]}],
     "code": loinc("8867-4", "Heart rate"), "effectiveDateTime": "2024-03-01T08:00:00Z",
     "valueQuantity": {"value": 72.0, "unit": "/min", "system": "http://unitsofmeasure.org", "code": "/min"}},
    {"resourceType": "Observation", "id": "bp1", "status": "final", "subject": subject, "code": loinc("85354-9", "Blood pressure"),
     "effectivePeriod": {"start": "2024-03-01", "end": "2024-03-02"},
     "component": [{"code": loinc("8480-6", "Systolic"), "valueQuantity": {"value": 120, "unit": "mm[Hg]"}},
                   {"code": loinc("8462-4", "Diastolic"), "dataAbsentReason": {"text": "unknown"}}]},
    {"resourceType": "Condition", "id": "c1", "subject": subject, "clinicalStatus": {"coding": [{"code": "active"}]},
     "code": {"coding": [{"system": "http://snomed.info/sct", "code": "59621000"}], "text": "Hypertension"}, "onsetDateTime": "2020-01"},
    {"resourceType": "MedicationRequest", "id": "m1", "subject": subject, "status": "active", "authoredOn": "2021-05-05",
     "medicationReference": {"reference": "Medication/med1"}, "dosageInstruction": [{"text": "10 mg daily"}]},
    {"resourceType": "Medication", "id": "med1", "code": {"text": "Lisinopril 10 mg"}},
    {"resourceType": "AllergyIntolerance", "id": "a1", "patient": subject, "code": {"text": "Penicillin"},
     "reaction": [{"manifestation": [{"text": "Hives"}]}]},
    {"resourceType": "Immunization", "id": "i1", "patient": subject, "vaccineCode": {"text": "Influenza"}, "occurrenceDateTime": "2023-10-10"},
    {"resourceType": "Procedure", "id": "pr1", "subject": subject, "code": {"text": "Appendectomy"}, "performedPeriod": {"start": "2001-02-03"}},
    {"resourceType": "Encounter", "id": "e1", "subject": subject, "period": {"start": "2024-01-01T10:00:00+02:00"}, "type": [{"text": "Visit"}]},
    {"resourceType": "CarePlan", "id": "cp1", "subject": subject, "period": {"start": "2022"}, "title": "Walk more"},
    {"resourceType": "Observation", "id": "s1", "subject": {"reference": "urn:uuid:0c3b1f4e-0000-4000-8000-000000000001"},
     "code": loinc("29463-7", "Weight"), "valueQuantity": {"value": 1e400, "unit": "kg"}, "effectiveInstant": "2024-02-30T25:61:00Z"},
]
bundle = {"resourceType": "Bundle", "type": "collection",
          "entry": [{"fullUrl": "http://example.org/fhir/%s/%s" % (r["resourceType"], r["id"]), "resource": r} for r in resources]}
put("fhir-bundle", "bundle.json", json.dumps(bundle, indent=1))
put("fhir-bundle", "searchset.json", j({"resourceType": "Bundle", "type": "searchset", "total": 1, "entry": [{"resource": patient, "search": {"mode": "match"}}]}))
put("fhir-bundle", "single-resource.json", j(resources[1]))
put("fhir-bundle", "operation-outcome.json", j({"resourceType": "OperationOutcome", "issue": [{"severity": "error", "code": "not-found"}]}))
put("fhir-bundle", "duplicate-patients.json", j({"resourceType": "Bundle", "type": "collection",
                                                   "entry": [{"resource": patient}, {"resource": patient}, {"fullUrl": "urn:uuid:1", "resource": {"resourceType": "Patient"}}]}))
put("fhir-ndjson", "patients.ndjson", "\n".join(j(r) for r in resources) + "\n")
put("fhir-ndjson", "crlf-blank.ndjson", j(patient) + "\r\n\r\n" + j(resources[1]) + "\r\n")
put("fhir-ndjson", "bad-line.ndjson", j(patient) + "\n{not json\n")

# FHIR XML: the same resources written as XML (values in value attributes, lists as repeats).
def xml_value(name, value, indent):
    pad = " " * indent
    if isinstance(value, dict):
        inner = "".join(xml_value(k, v, indent + 1) for k, v in value.items() if k not in ("resourceType", "url"))
        url = ' url="%s"' % value["url"] if "url" in value else ""
        return '%s<%s%s>\n%s%s</%s>\n' % (pad, name, url, inner, pad, name)
    if isinstance(value, list):
        return "".join(xml_value(name, v, indent) for v in value)
    if isinstance(value, bool):
        value = "true" if value else "false"
    v = str(value).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return '%s<%s value="%s"/>\n' % (pad, name, v)

def xml_resource(r, indent=0):
    pad = " " * indent
    inner = "".join(xml_value(k, v, indent + 1) for k, v in r.items() if k != "resourceType")
    return '%s<%s xmlns="http://hl7.org/fhir">\n%s%s</%s>\n' % (pad, r["resourceType"], inner, pad, r["resourceType"])

entries = "".join('  <entry>\n    <fullUrl value="urn:uuid:%d"/>\n    <resource>\n%s    </resource>\n  </entry>\n'
                  % (i, xml_resource(r, 6).replace(' xmlns="http://hl7.org/fhir"', "")) for i, r in enumerate(resources[:6]))
put("fhir-xml", "bundle.xml", '<?xml version="1.0" encoding="UTF-8"?>\n<!-- a download -->\n'
    '<Bundle xmlns="http://hl7.org/fhir">\n  <type value="collection"/>\n' + entries + '</Bundle>\n')
put("fhir-xml", "patient.xml", xml_resource(patient))
put("fhir-xml", "narrative.xml", '<Observation xmlns="http://hl7.org/fhir"><id value="n1"/><text><status value="generated"/>'
    '<div xmlns="http://www.w3.org/1999/xhtml"><p>Heart <b>72</b>&#160;/min</p></div></text>'
    '<subject><reference value="Patient/p1"/></subject><code><text value="HR"/></code><valueQuantity><value value="72"/></valueQuantity></Observation>')
X = 'xmlns="http://www.w3.org/1999/xhtml"'
put("fhir-narrative", "table.xml", '<div %s xml:lang="en"><p>Eczema, <b>both hands</b> &amp; wrists<!-- c --></p><table class="t">'
    '<tr><th scope="col">Site</th><td style="color: rgb(0, 0, 0); font-weight: bold" colspan="2">Hands</td></tr></table>'
    '<ul><li><a href="https://example.org/x">x</a></li><li><a href="#n" name="n">n</a></li></ul><img src="#b1" alt="chart"/></div>' % X)
put("fhir-narrative", "script.xml", '<div %s><p>A</p><script>alert(1)</script><img src="x" onerror="alert(2)"/></div>' % X)
put("fhir-narrative", "javascript.xml", '<div %s><a href=" JaVa&#x09;ScRiPt:alert(3)">M</a><iframe src="https://e.example/"/></div>' % X)
put("fhir-narrative", "prefixed.xml", '<x:div xmlns:x="http://www.w3.org/1999/xhtml"><x:p>P<![CDATA[<b>]]></x:p></x:div>')

# --- Documents' text (issue 26): HTML and RTF reduced to text ------------------------------------
put("html-text", "note.html", '<!DOCTYPE html><html><head><title>T</title><style>p{}</style></head><body><h1>Note</h1>'
    '<p>Take <b>metformin</b> 500&nbsp;mg &amp; rest &#x2014; &#8364;5</p><ul><li>one<li>two</ul>'
    '<script>alert("x")</script><a href="https://example.org/a?b=1&amp;c=2">leaflet</a><a href="javascript:x()">no</a></body></html>')
put("html-text", "broken.html", '<p a=b c="d\' e=\'f>x<!-- unclosed <script>y</scr ipt> &#xFFFFFFFF; &bogus; <a href=\'mailto:x@y\'>m')
put("rtf-text", "letter.rtf", r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Arial;}}{\colortbl;\red0\green0\blue0;}"
    r"{\*\generator Writer;}\f0 Caf\'e9 \u8364? and \u-10179?\u-8703? \b bold\b0\par{\pict\pngblip 89504e47}\tab end\line}")
put("rtf-text", "nested.rtf", "{\\rtf1" + "{" * 300 + "deep" + "}" * 300 + "\\bin5 {}{}x after\\uc2\\u233 AB}")
# --- Papers' text (issue 39): Tesseract's TSV, pdftotext's pages, lab lines -----------------------
put("extracted-text", "ocr.tsv", "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
    "1\t1\t0\t0\t0\t0\t0\t0\t2550\t3300\t-1\t\n5\t1\t1\t1\t1\t1\t100\t100\t200\t40\t96.5\tHaemoglobin\n"
    "5\t1\t1\t1\t1\t2\t320\t100\t80\t40\t91.2\t13.2\n5\t1\t1\t1\t1\t3\t420\t100\t80\t40\t90\tg/dL\n"
    "5\t1\t2\t1\t1\t1\t100\t300\t200\t40\t-1\t \n5\t1\t2\t1\t2\t1\t100\t400\t200\t40\t88\tSodium\n")
put("extracted-text", "labs.txt", "City Lab\nHaemoglobin 13.2 g/dL (reference 12.0 - 16.0)\nSodium 139 mmol/L (ref 135-145)\n"
    "Potassium 5.9 mmol/L 3.5 - 5.1 H\nCreatinine <0,5 mg/dL (0,6\u20131,2)\n\x0cPage two\x0c")
put("extracted-text", "picture.pgm", b"P5\n# a comment\n4 2\n255\n" + bytes([0, 64, 128, 255, 255, 128, 64, 0]))
put("fhir-xml", "entity.xml", '<?xml version="1.0"?><!DOCTYPE Patient [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>'
    '<Patient xmlns="http://hl7.org/fhir"><id value="&b;"/></Patient>')
put("fhir-xml", "extension-primitive.xml", '<Patient xmlns="http://hl7.org/fhir"><id value="x"/><birthDate value="1970-01-01">'
    '<extension url="http://hl7.org/fhir/StructureDefinition/patient-birthTime"><valueDateTime value="1970-01-01T10:00:00Z"/></extension></birthDate>'
    '<name><given value="A"/><given value="B"/><family value="C"/></name></Patient>')

# --- C-CDA / C32 ---------------------------------------------------------------------------------
cda_head = ('<?xml version="1.0" encoding="UTF-8"?>\n<ClinicalDocument xmlns="urn:hl7-org:v3" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            '<templateId root="2.16.840.1.113883.10.20.22.1.2" extension="2015-08-01"/><id root="1.2.3" extension="d1"/>'
            '<effectiveTime value="20200102103000-0500"/>'
            '<recordTarget><patientRole><id root="1.2.3.4" extension="p1"/><patient><name><given>A</given><family>B</family></name>'
            '<administrativeGenderCode code="F"/><birthTime value="19800101"/></patient></patientRole></recordTarget>\n')
def cda(body):
    return cda_head + '<component>' + body + '</component></ClinicalDocument>\n'
def cda_section(template, entries, text=""):
    return ('<component><section><templateId root="2.16.840.1.113883.10.20.22.2.%s"/><title>S</title><text>%s</text>%s</section></component>'
            % (template, text, "".join("<entry>%s</entry>" % e for e in entries)))
problem = ('<act classCode="ACT" moodCode="EVN"><statusCode code="active"/><entryRelationship typeCode="SUBJ">'
           '<observation classCode="OBS" moodCode="EVN"%s><templateId root="2.16.840.1.113883.10.20.22.4.4"/><id root="9.9" extension="x"/>'
           '<effectiveTime><low value="2015"/><high value="201601"/></effectiveTime>'
           '<value xsi:type="CD" code="38341003" codeSystem="2.16.840.1.113883.6.96"><originalText><reference value="#p1"/></originalText>'
           '<translation code="I10" codeSystem="2.16.840.1.113883.6.90"/></value></observation></entryRelationship></act>')
vaccine = ('<substanceAdministration classCode="SBADM" moodCode="EVN"%s><id root="1.1"/><statusCode code="completed"/>'
           '<effectiveTime value="20191001"/><consumable><manufacturedProduct><manufacturedMaterial><code code="140" '
           'codeSystem="2.16.840.1.113883.12.292"/></manufacturedMaterial></manufacturedProduct></consumable></substanceAdministration>')
vitals = ('<organizer classCode="CLUSTER" moodCode="EVN"><statusCode code="completed"/><effectiveTime value="20200102"/>'
          '<component><observation classCode="OBS" moodCode="EVN"><code code="8480-6" codeSystem="2.16.840.1.113883.6.1"/>'
          '<value xsi:type="PQ" value=".5" unit="mm[Hg]"/></observation></component></organizer>')
put("ccda", "ccd.xml", cda("<structuredBody>" + cda_section("5.1", [problem % "", problem % ' negationInd="true"'],
                                                            '<content ID="p1">High blood pressure</content>')
                           + cda_section("2.1", [vaccine % "", vaccine % ' negationInd="true"', vaccine % ""])
                           + cda_section("4.1", [vitals]) + cda_section("1.1", [], "Narrative only") + "</structuredBody>"))
put("ccda", "nonxml.xml", cda('<nonXMLBody><text mediaType="application/pdf" representation="B64">JVBERi0xLjQK</text></nonXMLBody>'))
put("ccda", "bom-crlf.xml", b"\xef\xbb\xbf" + cda("<structuredBody>" + cda_section("6.1", []) + "</structuredBody>").replace("\n", "\r\n").encode())
put("ccda", "entity.xml", '<?xml version="1.0"?><!DOCTYPE ClinicalDocument [<!ENTITY a "aaaa">]>'
    '<ClinicalDocument xmlns="urn:hl7-org:v3"><title>&a;</title></ClinicalDocument>')

# The narrative a C-CDA's references point into (the harness wraps it in a document and refers to each ID).
put("ccda-narrative", "nested.xml", "".join('<content ID="c%d">' % i for i in range(30)) + "deep text<br/>more"
    + "</content>" * 30)
put("ccda-narrative", "medication-table.xml", '<table><thead><tr><th>Material</th><th colspan="2">Code</th><th>SIG</th></tr></thead>'
    '<tbody><tr ID="m1"><td>Lisinopril oral tablet</td><td>RxNorm</td><td>314076</td></tr>'
    '<tr ID="m2"><td ID="d2">Metformin</td><td colspan="2">RxNorm: 861007</td><td>1 tablet twice daily</td></tr></tbody></table>')
put("ccda-narrative", "list.xml", '<list><item ID="a">Ragweed <content ID="a">duplicate</content></item>'
    '<item><paragraph ID="b">Coded Allergy Name Not Available</paragraph></item></list><table><tr ID="r"><th>Drug</th><th>Sig</th></tr>'
    '<tr ID="s"><td>x</td><td>  two puffs\n as needed </td></tr></table>')
put("ccda-narrative", "caption.xml", '<table ID="t"><caption>Meds</caption><tbody><tr><th>Drug</th><th>Fill Instructions</th></tr>'
    '<tr ID="f"><td>Albuterol</td><td>Dispense 1</td></tr></tbody></table><content ID="u">\u00e9\u20ac\u00e9</content>')

# The METADATA.XML of an IHE XDM package (ebRIM SubmitObjectsRequest).
rim = "urn:oasis:names:tc:ebxml-regrep:xsd:rim:3.0"
def extrinsic(uri_values, size="79482", sha1="986F7136AA", mime="text/xml"):
    values = "".join("<rim:Value>%s</rim:Value>" % v for v in uri_values)
    return ('<rim:ExtrinsicObject id="Document01" mimeType="%s" objectType="urn:uuid:7edca82f-054d-47f2-a032-9b2a5b5186c1">'
            '<rim:Slot name="URI"><rim:ValueList>%s</rim:ValueList></rim:Slot>'
            '<rim:Slot name="size"><rim:ValueList><rim:Value>%s</rim:Value></rim:ValueList></rim:Slot>'
            '<rim:Slot name="hash"><rim:ValueList><rim:Value>%s</rim:Value></rim:ValueList></rim:Slot></rim:ExtrinsicObject>'
            % (mime, values, size, sha1))
def submission(objects):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<lcm:SubmitObjectsRequest xmlns:lcm="urn:oasis:names:tc:ebxml-regrep:xsd:lcm:3.0" '
            'xmlns:rim="%s"><rim:RegistryObjectList>%s</rim:RegistryObjectList></lcm:SubmitObjectsRequest>\n' % (rim, "".join(objects)))
put("xdm-metadata", "metadata.xml", submission([extrinsic(["DOC0001.XML"])]))
put("xdm-metadata", "numbered-uri.xml", submission([extrinsic(["2|0001.XML", "1|DOC"]), extrinsic(["../escape.xml"], size="-1", mime="application/pdf")]))
put("xdm-metadata", "empty.xml", submission(['<rim:ExtrinsicObject id="e"/>', '<rim:ExtrinsicObject id="f"><rim:Slot name="URI"/></rim:ExtrinsicObject>']))
put("xdm-metadata", "entity.xml", '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e "DOC0001.XML">]>' + submission([extrinsic(["&e;"])]).split("?>", 1)[1])

# --- JSON core ------------------------------------------------------------------------------------
put("json", "object.json", j({"a": [1, -2.5e-3, 1E+10, True, False, None], "b": {"c": "\u00e9\ud83d\ude00\\\"\n\t"}, "": {}}))
put("json", "escapes.json", r'"\u0000\u001f\ud834\udd1e\/\b\f"')
put("json", "numbers.json", "[0,-0,0.0,1e999,-1e-999,123456789012345678901234567890,1.5E3]")
put("json", "bom.json", b"\xef\xbb\xbf{\"x\":1}")
put("json", "duplicate-keys.json", '{"k":1,"k":2}')
put("json", "deep.json", "[" * 40 + "]" * 40)
for name, value in [("bundle.json", bundle), ("patient.json", patient)]:
    put("json", name, j(value))

# --- RHEx -----------------------------------------------------------------------------------------
code = lambda system, c: {system: [c]}
rhex = {"_id": "4f1e2a", "first": "Ada", "last": "Lovelace", "gender": "F", "birthdate": 503020800,
        "race": {"code": "2106-3", "code_set": "CDC-RE", "name": "White"},
        "ethnicity": {"code": "2186-5", "code_set": "CDC-RE", "name": "Not Hispanic or Latino"},
        "medical_record_number": "RHEX-0001", "effective_time": 1330000000, "languages": ["en-US"],
        "encounters": [{"_id": "e1", "_type": "Encounter", "description": "Visit", "time": 1300000000, "codes": code("CPT", "99213"),
                        "start_time": 1300000000, "end_time": None}],
        "conditions": [{"_id": "c1", "_type": "Entry", "description": "Hypertension", "time": None, "codes": code("SNOMED-CT", "59621000"),
                        "status": "active", "start_time": 1200000000, "end_time": None}],
        "allergies": [{"_id": "a1", "_type": "Allergy", "description": "Penicillin", "time": 1100000000, "codes": code("RxNorm", "7980"),
                       "reaction": {"code": "247472004", "code_system": "SNOMED-CT", "name": "Hives"}}],
        "medications": [{"_id": "m1", "_type": "Medication", "description": "Lisinopril", "time": 1250000000, "codes": code("RxNorm", "29046"),
                         "value": {}, "dose": {"scalar": "10", "units": "mg"}}],
        "results": [{"_id": "r1", "_type": "Entry", "description": "Glucose", "time": 1250000000, "codes": code("LOINC", "2345-7"),
                     "value": {"scalar": "5.4", "units": "mmol/L"}}],
        "vital_signs": [{"_id": "v1", "_type": "Entry", "description": "Systolic", "time": 1250000000, "codes": code("LOINC", "8480-6"),
                         "value": {"scalar": 120, "units": "mm[Hg]"}},
                        {"_id": "v1", "_type": "Entry", "description": "Systolic again", "time": "2012-01-01"}, None, 7],
        "immunizations": [{"description": "Flu", "time": 1250000000}],
        "procedures": [{"_id": {"$oid": "4f"}, "description": "x", "time": -1e300}],
        "social_history": [{"_id": "s1", "description": "Non-smoker"}], "care_goals": [{"description": "Walk"}]}
put("rhex-record", "record.json", json.dumps(rhex, indent=1))
put("rhex-record", "minimal.json", j({"first": "A"}))
put("rhex-record", "bad-section.json", j({"first": "A", "conditions": {"not": "an array"}}))
feed = lambda entries: ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
                        '  <title>Records</title>\n  <link rel="self" href="http://127.0.0.1/rhex/records"/>\n' + entries + '</feed>\n')
put("rhex-feed", "feed.xml", feed('  <entry>\n    <id>http://127.0.0.1/rhex/records/1</id>\n    <title>Lovelace, Ada</title>\n'
                                   '    <link rel="alternate" href="http://127.0.0.1/rhex/records/1"/>\n  </entry>\n'
                                   '  <entry><id>tag:example,2012:2</id><title><![CDATA[Babbage, Charles]]></title>'
                                   '<link href="records/2/"/></entry>\n'))
put("rhex-feed", "empty-feed.xml", feed(""))
put("rhex-feed", "no-id.xml", feed("<entry><title>x</title></entry>"))
put("rhex-feed", "entity.xml", '<!DOCTYPE feed [<!ENTITY x SYSTEM "file:///etc/passwd">]><feed><entry><id>&x;</id></entry></feed>')

# --- Apple Health ---------------------------------------------------------------------------------
dtd = '''<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE HealthData [
<!-- HealthKit Export Version: 13 -->
<!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord)*)>
<!ATTLIST HealthData
  locale CDATA #REQUIRED
>
<!ELEMENT ExportDate EMPTY>
<!ATTLIST ExportDate
  value CDATA #REQUIRED
>
<!ELEMENT Me EMPTY>
<!ATTLIST Me
  HKCharacteristicTypeIdentifierDateOfBirth         CDATA #REQUIRED
  HKCharacteristicTypeIdentifierBiologicalSex       CDATA #REQUIRED
>
<!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
<!ATTLIST Record
  type          CDATA #REQUIRED
  unit          CDATA #IMPLIED
  value         CDATA #IMPLIED
  sourceName    CDATA #REQUIRED
  startDate     CDATA #REQUIRED
  endDate       CDATA #REQUIRED
>
<!ELEMENT Correlation ((MetadataEntry|Record)*)>
<!ELEMENT MetadataEntry EMPTY>
<!ATTLIST MetadataEntry
  key   CDATA #REQUIRED
  value CDATA #REQUIRED
>
]>
'''
def record(t, unit, value, start="2024-03-01 08:00:00 +0100", extra=""):
    return ('<Record type="%s" sourceName="Watch" unit="%s" creationDate="%s" startDate="%s" endDate="%s" value="%s"%s>\n'
            % (t, unit, start, start, start, value, "/" if not extra else "")) + (extra + "</Record>\n" if extra else "")
body = ('<HealthData locale="en_US">\n <ExportDate value="2024-03-02 10:00:00 +0100"/>\n'
        ' <Me HKCharacteristicTypeIdentifierDateOfBirth="1985-12-10" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"'
        ' HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet"/>\n'
        + record("HKQuantityTypeIdentifierStepCount", "count", "1200")
        + record("HKQuantityTypeIdentifierHeartRate", "count/min", "72",
                 extra='  <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/>\n')
        + ' <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" creationDate="2024-03-01 08:00:00 +0100"'
          ' startDate="2024-03-01 08:00:00 +0100" endDate="2024-03-01 08:00:00 +0100">\n'
        + record("HKQuantityTypeIdentifierBloodPressureSystolic", "mmHg", "120")
        + record("HKQuantityTypeIdentifierBloodPressureDiastolic", "mmHg", "80")
        + ' </Correlation>\n'
        + ' <Workout workoutActivityType="HKWorkoutActivityTypeWalking" duration="30" durationUnit="min" sourceName="Watch"'
          ' startDate="2024-03-01 09:00:00 +0100" endDate="2024-03-01 09:30:00 +0100">\n'
          '  <WorkoutStatistics type="HKQuantityTypeIdentifierDistanceWalkingRunning" sum="2.1" unit="km"/>\n </Workout>\n'
        + ' <ActivitySummary dateComponents="2024-03-01" activeEnergyBurned="300" activeEnergyBurnedGoal="400" activeEnergyBurnedUnit="Cal"/>\n'
        + ' <ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" identifier="x" sourceName="Clinic" sourceURL="https://e.example"'
          ' fhirVersion="4.0.1" receivedDate="2024-03-01 08:00:00 +0100" resourceFilePath="/clinical-records/x.json"/>\n'
        + '</HealthData>\n')
export = dtd + body
put("apple-health", "export.xml", export)
put("apple-health", "no-dtd.xml", '<?xml version="1.0"?>\n' + body)
put("apple-health", "entity.xml", '<?xml version="1.0"?><!DOCTYPE HealthData [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
    '<HealthData><ExportDate value="&b;"/></HealthData>')
put("apple-health", "truncated.xml", export[: len(export) * 2 // 3])
put("apple-health", "not-an-export.xml", '<?xml version="1.0"?><feed><Record type="x"/></feed>')

def zipped(members, method=zipfile.ZIP_DEFLATED):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)
    return buffer.getvalue()
put("apple-health-zip", "export.zip", zipped([("apple_health_export/export.xml", export),
                                              ("apple_health_export/export_cda.xml", "<ClinicalDocument/>"),
                                              ("apple_health_export/clinical-records/x.json", j(resources[1]))]))
put("apple-health-zip", "stored.zip", zipped([("Export/Exportieren.xml", export)], zipfile.ZIP_STORED))
put("apple-health-zip", "no-export.zip", zipped([("readme.txt", "nothing here")]))
put("apple-health-zip", "bomb.zip", zipped([("apple_health_export/export.xml", dtd + body + "<!--" + "x" * 200000 + "-->")]))
put("apple-health-zip", "export.xml", export)

# --- Applet plists ---------------------------------------------------------------------------------
applets = [{"identifier": "org.mitre.hreader.bloodpressure", "class_name": "HRBloodPressureAppletTile", "display_name": "Blood Pressure"},
           {"identifier": "org.example.bmi-chart", "display_name": "BMI", "executable": "bin/bmi", "entry_types": ["vital_sign", "result"],
            "timeout": 5, "max_output_bytes": 65536, "color": "red", "levels": [1, 2.5, True], "when": {"a": b"\x00\x01"}},
           {"identifier": "org.example.home", "display_name": "Home", "executable": "~/applet", "timeout": "120"}]
put("applet-plist", "applets.plist", plistlib.dumps(applets))
put("applet-plist", "applets.bplist", plistlib.dumps(applets, fmt=plistlib.FMT_BINARY))
put("applet-plist", "duplicate.plist", plistlib.dumps([applets[0], applets[0]]))
put("applet-plist", "not-array.plist", plistlib.dumps({"identifier": "a.b"}))
put("applet-plist", "bad-timeout.plist", plistlib.dumps([dict(applets[1], timeout=0)]))

# --- Timeline POST bodies (first line: ?key=, the rest: the body) -----------------------------------
put("timeline-post", "levels.txt", "Levels\n" + j({"pain": "2", "mood": 7, "energy": 10.0, "note": "fine"}))
put("timeline-post", "medication.txt", "NewMedication\n" + j({"name": "Ibuprofen", "dose": {"amount": 400, "unit": "mg"}, "prn": True}))
put("timeline-post", "regimen.txt", "MedRegiment\n" + j({"items": [{"name": "a", "times": ["08:00", "20:00"]}], "n": None}))
put("timeline-post", "numbers.txt", "other\n" + j({"big": 1e308, "small": 5e-324, "int": 2**62, "neg": -0.0, "u": "\u2028\x00"}))

# --- The web layer ----------------------------------------------------------------------------------
put("web-query", "page.txt", "page=month&at=2012-05-01T00:00:00Z&types=vitals,results")
put("web-query", "from-to.txt", "from=2012-05-01&to=1339000000&limit=10&offset=5&token=abc")
put("web-query", "extremes.txt", "from=-62135596800&to=253402300799&at=9999-12-31T23:59:59Z&page=decade")
put("web-query", "encoded.txt", "from=2012%2D05%2D01T00%3A00%3A00%2B14%3A00&to=%32%30%31%33&token=x&token=y&a=%ZZ")
put("web-form", "form.txt", "csrf_token=abc&pain=3&mood=10&energy=0&note=a+b%21&return_to=%2Fp%2F1%2Ftimeline%3Fpage%3Dweek")
put("web-form", "bad.txt", "pain=11&mood=-1&energy=1.5&=x&return_to=%2F%5Cevil.example&&x")
for name, path in [("plain.txt", "/p/1/timeline?page=week#top"), ("double.txt", "//evil.example/"),
                   ("backslash.txt", "/\\evil.example"), ("tab.txt", "/\t/evil.example"), ("scheme.txt", "/x:y"),
                   ("encoded.txt", "/%2F%2Fevil.example"), ("dots.txt", "/../../etc/passwd")]:
    put("web-return-to", name, path)

# --- Key files and backup files (issue 23) -----------------------------------------------------------
import base64, hashlib, random, struct, uuid
rnd = random.Random(23)
b64 = lambda n: base64.b64encode(bytes(rnd.getrandbits(8) for _ in range(n))).decode()
vault = "8fa191c6-7665-4bc0-9e55-abcba7302966"


def slot(kind="password", kdf=None, questions=None):
    s = {"id": str(uuid.UUID(int=rnd.getrandbits(128), version=4)), "kind": kind, "label": kind + " slot",
         "kdf": dict(kdf or {"name": "scrypt", "n": 131072, "r": 8, "p": 1}, salt=b64(16)),
         "nonce": b64(12), "wrapped_key": b64(48), "created": "2026-11-24T09:12:40Z"}
    if questions:
        s["questions"] = questions
    return s


def key_file(slots, rekey=None):
    """A key file with its checksum as docs/formats.md defines it."""
    body = {"format": "hreader-key", "version": 1, "vault_id": vault, "created": "2026-11-24T09:12:40Z", "slots": slots}
    if rekey:
        body["rekey"] = rekey
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    body["checksum"] = "sha256:" + hashlib.sha256(canonical).hexdigest()
    return (json.dumps(body, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


pbkdf2 = {"name": "pbkdf2-sha256", "iterations": 600000}
key_files = {
    "default.key": key_file([slot(), slot("questions", questions=["First pet?", "Street?"]), slot("recovery")]),
    "pbkdf2.key": key_file([slot(kdf=pbkdf2), slot("recovery", kdf=pbkdf2)]),
    "rekey.key": key_file([slot()], rekey={"nonce": b64(12), "previous_key": b64(48)}),
    "thirty-two.key": key_file([slot(kdf={"name": "scrypt", "n": 1024, "r": 8, "p": 1}) for _ in range(32)]),
    "at-cap.key": key_file([slot(kdf={"name": "pbkdf2-sha256", "iterations": 16777216}) for _ in range(4)]),
    "over-cap.key": key_file([slot(kdf={"name": "scrypt", "n": 1 << 24, "r": 32, "p": 16})]),
    "unicode.key": key_file([slot(questions=None), slot("questions", questions=["Ça va?", "\u2028\u0000", "e\u0301"])]),
}
for name, data in key_files.items():
    put("key-file", name, data)


def backup(key, database_bytes=4096, header_extra=None, pages=1):
    header = {"vault_id": vault, "created": "2026-11-24T09:12:40Z", "key_file_bytes": len(key),
              "database_bytes": database_bytes, "page_size": 4096, "schema_version": 3, "sqlcipher": "4.6.1 community",
              "mac": "hmac-sha256", "mac_key": "hkdf-sha256", "salt": b64(32)}
    header.update(header_extra or {})
    h = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    body = bytes(rnd.getrandbits(8) for _ in range(4096 * pages))
    return b"HRBACKUP" + struct.pack(">II", 1, len(h)) + h + key + body + bytes(32)


put("backup-header", "small.hrbackup", backup(key_files["default.key"]))
put("backup-header", "two-pages.hrbackup", backup(key_files["pbkdf2.key"], 8192, pages=2))
put("backup-header", "overflow.hrbackup", backup(key_files["default.key"], 9223372036854771712, header_extra={"key_file_bytes": 1048576}))
put("backup-header", "overflow-long-header.hrbackup", backup(key_files["default.key"], 9223372036854771712, header_extra={"sqlcipher": " " * 5000}))
put("backup-header", "key-file-too-long.hrbackup", backup(key_files["default.key"], header_extra={"key_file_bytes": 1048577}))
put("backup-header", "unknown-member.hrbackup", backup(key_files["rekey.key"], header_extra={"extra": 1}))
print("seeds: written to %s" % out)


# --- SMART Health Cards (JWS, QR text, JWK Set, revocation list) -------------------------------
import base64, zlib


def b64u(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def deflate(data):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def shc(claims, header=None, signature=b"\x01" * 64, raw=None):
    header = header or {"alg": "ES256", "zip": "DEF", "kid": "3Kfdg-XwP-7gXyywtUfUADwBumDOPKMQx-iELL11W9s"}
    payload = raw if raw is not None else deflate(j(claims).encode())
    return b64u(j(header).encode()) + "." + b64u(payload) + "." + b64u(signature)


def qr(jws):
    return "".join("%02d" % (ord(c) - 45) for c in jws)


card_bundle = {"resourceType": "Bundle", "type": "collection", "entry": [
    {"fullUrl": "resource:0", "resource": {"resourceType": "Patient", "name": [{"family": "Lovelace", "given": ["Ada"]}], "birthDate": "1985-12-10"}},
    {"fullUrl": "resource:1", "resource": {"resourceType": "Immunization", "status": "completed",
                                           "vaccineCode": {"coding": [{"system": "http://hl7.org/fhir/sid/cvx", "code": "208"}]},
                                           "patient": {"reference": "resource:0"}, "occurrenceDateTime": "2021-01-01"}}]}
claims = {"iss": "https://issuer.example.org", "nbf": 1600000000,
          "vc": {"type": ["https://smarthealth.cards#health-card"], "rid": "abc",
                 "credentialSubject": {"fhirVersion": "4.0.1", "fhirBundle": card_bundle}}}
card = shc(claims)
put("health-card", "card.jws", card)
put("health-card", "file.smart-health-card", j({"verifiableCredential": [card, shc(claims, header={"alg": "ES256", "kid": "k"}, raw=j(claims).encode())]}))
put("health-card", "qr.txt", "shc:/" + qr(card) + "\n")
half = len(card) // 2
put("health-card", "chunked.txt", "shc:/2/2/" + qr(card[half:]) + "\nshc:/1/2/" + qr(card[:half]) + "\n")
put("health-card", "chunk-missing.txt", "shc:/1/3/" + qr(card[:10]) + "\n")
put("health-card", "bomb.jws", shc(claims, raw=deflate(b"{\"iss\":\"" + b"a" * (4 << 20) + b"\"}")))
put("health-card", "params.json", j({"resourceType": "Parameters", "parameter": [{"name": "verifiableCredential", "valueString": card}]}))
put("health-card", "jwks.json", j({"keys": [{"kty": "EC", "crv": "P-256", "kid": "x", "x": b64u(b"\x01" * 32), "y": b64u(b"\x02" * 32), "crlVersion": 1}]}))
# A key with an x5c chain (a leaf for the key, signed by a test CA, and the CA; made once with the
# openssl command line for this corpus): the chain reader and OpenSSL's DER parser get real certificates.
put("health-card", "jwks-x5c.json", '{"keys":[{"kty":"EC","crv":"P-256","use":"sig","alg":"ES256","kid":"r52BK4DL90qrjTsD9SWNOMS1Mc7sdz5PaegNwg_yQ5I","x":"RCJ83j0zOjimo4jyp3NFcrXwoNCJ9Y2ysbVWSr-T2wY","y":"mWJ32SXJoQwZqKplG2v9L4oZsrpGkJGuJIFxyM9fCtM","x5c":["MIIBljCCATygAwIBAgITYutCUbdNCL+mvmOSVFeYuo/VRTAKBggqhkjOPQQDAjARMQ8wDQYDVQQDDAZUZXN0Q0EwHhcNMjYxMTI4MDgyNTA1WhcNMjYxMTI3MDgyNTA1WjARMQ8wDQYDVQQDDAZpc3N1ZXIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAREInzePTM6OKajiPKnc0VytfCg0In1jbKxtVZKv5PbBplid9klyaEMGaiqZRtr/S+KGbK6RpCRriSBccjPXwrTo3MwcTAkBgNVHREEHTAbhhlodHRwOi8vMTI3LjAuMC4xOjEvaXNzdWVyMAkGA1UdEwQCMAAwHQYDVR0OBBYEFK7Nb0jP/L4ozZRQt46/r0yWfXtqMB8GA1UdIwQYMBaAFNFZgpKWV4Yq0rh4ebCkuKeyJNKWMAoGCCqGSM49BAMCA0gAMEUCIQD2ZIO9cdS/MJubKG8nlgEiDmo5K2gpFCh4WxzqSiXMeQIgGeZd2FNZQ82XqdUHCfjaNqUCkqRiH9Z5fM0UzS/fvvU=","MIIBhzCCAS2gAwIBAgIUDgxK1O/oL4nWtLwNyIrvgJfBYPowCgYIKoZIzj0EAwIwETEPMA0GA1UEAwwGVGVzdENBMB4XDTI2MTEyODA4MjUwNFoXDTI2MTIyODA4MjUwNFowETEPMA0GA1UEAwwGVGVzdENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQs/bxcbrwGATF5JUJxutG60ZT+W90SqmMbGtJdmJ8obZuakLKhm8cODjseitKSw9t2eL1hNwSOc6HvvicXIMeaNjMGEwHQYDVR0OBBYEFNFZgpKWV4Yq0rh4ebCkuKeyJNKWMB8GA1UdIwQYMBaAFNFZgpKWV4Yq0rh4ebCkuKeyJNKWMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQDAgIEMAoGCCqGSM49BAMCA0gAMEUCIQCe4RKRzRJHXx82/OwltUa5BHs19kC38cNIj/Yr5IeuEwIgOCltB0QhRA62E2WQx6kd7R9POXiLIoFfd+Eis4yBuHA="]}]}')
put("health-card", "crl.json", j({"kid": "x", "method": "rid", "ctr": 1, "rids": ["abc", "def.1600000000", "abc.-9223372036854775808"]}))

# SMART Health Links: payloads, viewer URLs, manifests, requests, and JWE shapes (random bytes: the
# harness's key opens none of these; the regression folder holds ones sealed under it).
link_key = b64u(b"\x2a" * 32)
payload = {"url": "https://shl.example.org/shl/abc", "key": link_key, "exp": 1900000000, "flag": "LP", "label": "Ada's summary", "v": 1}
put("health-link", "link.txt", "shlink:/" + b64u(j(payload).encode()))
put("health-link", "viewer.txt", "https://viewer.example.org/#shlink:/" + b64u(j(dict(payload, flag="U")).encode()))
put("health-link", "link-padded.txt", "shlink:/" + base64.urlsafe_b64encode(j({"url": "http://127.0.0.1:1/x", "key": link_key}).encode()).decode())
put("health-link", "manifest.json", j({"files": [{"contentType": "application/fhir+json", "embedded": "a..b.c.d"},
                                                 {"contentType": "application/smart-health-card", "location": "https://shl.example.org/f/1"}]}))
put("health-link", "request.json", j({"recipient": "Dr. Who", "passcode": "1234", "embeddedLengthMax": 4096}))
put("health-link", "jwe.txt", ".".join([b64u(j({"alg": "dir", "enc": "A256GCM", "zip": "DEF", "cty": "application/fhir+json"}).encode()), "",
                                        b64u(b"\x01" * 12), b64u(b"\x02" * 40), b64u(b"\x03" * 16)]))

# User-access Brands bundles (SMART App Launch 2.2): brands with the portal extension, aliases,
# partOf, endpoints with the fhir-version extension, an Endpoint-only list with a contained
# Organization, and the shapes the reader refuses.
def brand(i, name, endpoints=(), part_of=None, **extra):
    r = {"resourceType": "Organization", "id": i, "name": name, "active": True,
         "alias": extra.get("alias", []), "address": [{"city": "Madison", "state": "WI"}],
         "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/organization-portal", "extension":
                        [{"url": "portalName", "valueString": "MyChart"}, {"url": "portalUrl", "valueUrl": "https://p.example.org"}]
                        + [{"url": "portalEndpoint", "valueReference": {"reference": "Endpoint/" + e}} for e in endpoints]}],
         "endpoint": [{"reference": "Endpoint/" + e} for e in endpoints]}
    if part_of:
        r["partOf"] = {"reference": "Organization/" + part_of}
    return {"fullUrl": "https://ehr.example.org/Organization/" + i, "resource": r}
def endpoint(i, address, version="4.0.1", status="active"):
    return {"fullUrl": "https://ehr.example.org/Endpoint/" + i, "resource": {
        "resourceType": "Endpoint", "id": i, "status": status, "address": address,
        "connectionType": {"system": "http://terminology.hl7.org/CodeSystem/endpoint-connection-type", "code": "hl7-fhir-rest"},
        "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/endpoint-fhir-version", "valueCode": version}]}}
brands = {"resourceType": "Bundle", "type": "collection", "entry": [
    brand("a", "St. Mary's Hospital", ["a4", "a2"], alias=["SSM Health"]), brand("b", "Mary's Clinic", part_of="a"),
    brand("c", "Old Town", ["c2"]), endpoint("a4", "https://ehr.example.org/R4"), endpoint("a2", "https://ehr.example.org/DSTU2", "1.0.2"),
    endpoint("c2", "https://old.example.org/fhir", "1.0.2", "off")]}
put("brands-bundle", "brands.json", json.dumps(brands, indent=1))
put("brands-bundle", "endpoint-list.json", j({"resourceType": "Bundle", "entry": [{"resource": {
    "resourceType": "Endpoint", "id": "e", "status": "active", "address": "https://h.example.org/api/FHIR/R4/",
    "managingOrganization": {"reference": "#o"}, "contained": [{"resourceType": "Organization", "id": "o", "name": "Waco"}]}}]}))
put("brands-bundle", "cycle.json", j({"resourceType": "Bundle", "entry": [brand("x", "X", part_of="y"), brand("y", "Y", part_of="x")]}))
put("brands-bundle", "truncated.json", json.dumps(brands)[:300])
