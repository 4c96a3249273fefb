// The invariants the libFuzzer harness `fuzz-records` checks on every input, and that
// HReaderRecordsTests replays over Tests/HReaderRecordsTests/Fuzz/<harness>/ (docs/security.md, "Fuzzing").
// The parsers are internal to HReaderRecords, so this needs a testable build: debug builds are,
// and `make fuzz` passes -enable-testing -DFUZZING. A plain release build compiles this to nothing.
#if DEBUG || FUZZING
import Foundation
import FuzzDriver
import HReaderCrypto
import HReaderJSON
import HReaderModel
@testable import HReaderRecords
import HReaderStore

public enum RecordsFuzzChecks {
    /// Harness name → check. The names are the folders of the regression inputs.
    public static let all: [FuzzHarness] = [
        ("json", json), ("fhir-bundle", fhirBundle), ("fhir-ndjson", fhirNDJSON), ("fhir-xml", fhirXML),
        ("rhex-feed", rhexFeed), ("rhex-record", rhexRecord), ("apple-health", appleHealth), ("fhir-narrative", fhirNarrative),
        ("ccda", ccda), ("ccda-narrative", ccdaNarrative), ("xdm-metadata", xdmMetadata), ("html-text", htmlText), ("rtf-text", rtfText),
        ("health-card", healthCard), ("health-link", healthLink), ("extracted-text", extractedText),
        ("brands-bundle", brandsBundle), ("fit", fit), ("health-connect", healthConnect), ("fitbit", fitbit),
    ]

    static let utc = TimeZone(identifier: "UTC")!

    /// An error from a parser must be its documented RecordsError, never anything else.
    static func expectingRecordsError<T>(_ what: String, _ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch is RecordsError {
            return nil
        } catch let violation as FuzzViolation {
            throw violation
        } catch {
            throw FuzzViolation("\(what) threw \(type(of: error)) (\(error)), not a RecordsError")
        }
    }

    // MARK: 1. JSON core (HReaderJSON)

    /// The parser gives a value or a JSONError (its typed throws allows nothing else) and accepts
    /// nothing deeper than its depth limit, nor more bytes than its size limit; parse → serialize →
    /// parse gives an equal value, compact and pretty, and serializing is stable (also with sorted
    /// keys); the streaming writer writes the tree serializer's bytes. Asked to refuse repeated
    /// member names, it refuses exactly the values with an object that repeats one.
    public static func json(_ data: Data) throws {
        let limits = JSONParser.Limits.default
        let value: JSONValue
        do { value = try JSONParser.parse(data) } catch {
            if error.kind == .tooLarge { throw FuzzViolation("\(data.count) bytes refused as too large: \(error)") }
            if case .success = Result(catching: { () throws(JSONError) in try JSONParser.parse(data, duplicateNames: .refused) }) {
                throw FuzzViolation("refusing repeated names accepted what the parser refuses: \(error)")
            }
            return
        }
        let strict = Result { () throws(JSONError) in try JSONParser.parse(data, duplicateNames: .refused) }
        switch (strict, repeatsAName(value)) {
        case (.success(let again), false):
            guard again == value else { throw FuzzViolation("refusing repeated names read another value") }
        case (.failure(let error), true) where error.kind == .duplicateName: break
        case (.success, true): throw FuzzViolation("a repeated member name was not refused")
        case (.failure(let error), _): throw FuzzViolation("refusing repeated names failed otherwise: \(error)")
        }
        let depth = nesting(value)
        guard depth <= limits.maxDepth else { throw FuzzViolation("accepted nesting \(depth) > maxDepth \(limits.maxDepth)") }
        if data.count > 1 {
            let limited = Result { () throws(JSONError) in try JSONParser.parse(data, limits: .init(maxBytes: data.count - 1)) }
            guard case .failure(let error) = limited, error.kind == .tooLarge else {
                throw FuzzViolation("\(data.count) bytes not refused as too large with a limit of \(data.count - 1)")
            }
        }
        for pretty in [false, true] {
            let text = value.serialized(pretty: pretty)
            let again: JSONValue
            do { again = try JSONParser.parse(text) } catch {
                throw FuzzViolation("the serialized value does not parse: \(error)\n\(text.prefix(500))")
            }
            guard again == value else { throw FuzzViolation("parse(serialize(v)) != v (pretty: \(pretty))\n\(text.prefix(500))") }
            guard again.serialized(pretty: pretty) == text else { throw FuzzViolation("serialization is not stable (pretty: \(pretty))") }
        }
        let sorted = value.serialized(sortingKeys: true)
        guard let canonical = try? JSONParser.parse(sorted) else { throw FuzzViolation("the key-sorted form does not parse") }
        guard canonical.serialized(sortingKeys: true) == sorted else { throw FuzzViolation("the key-sorted form is not stable") }
        var streamed: [UInt8] = []
        var out = JSONByteWriter(chunkBytes: 1 + data.count % 13) { streamed.append(contentsOf: $0) }
        out.value(value)
        try out.flush()
        guard streamed == value.serializedBytes() else { throw FuzzViolation("the streaming writer differs from the tree serializer") }
    }

    static func repeatsAName(_ value: JSONValue) -> Bool {
        switch value {
        case .array(let items): items.contains(where: repeatsAName)
        case .object(let object): Set(object.keys).count != object.count || object.contains { repeatsAName($0.value) }
        default: false
        }
    }

    static func nesting(_ value: JSONValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.map(nesting).max() ?? 0)
        case .object(let object): 1 + (object.map { nesting($0.value) }.max() ?? 0)
        default: 0
        }
    }

    // MARK: 2. FHIR

    public static func fhirBundle(_ data: Data) throws {
        try batch("mapBundle", data) { try FHIRMapper(zone: .named(utc)).mapBundle(data) }
        try serverAnswer(data)
    }

    /// The same bytes as a server's answer for one patient (the first Patient's id, else "A"): after
    /// `keepOnly`, no entry is left that names anyone else, and no more is left out than was read.
    static func serverAnswer(_ data: Data) throws {
        var set = FHIRResponseSet()
        guard (try expectingRecordsError("FHIRResponseSet.add", { try set.add(data, what: "answer") })) != nil else { return }
        let asked = set.input.resources.first { $0.type == "Patient" }?.object["id"]?.string ?? "A"
        let read = set.input.resources.filter { $0.type != "Patient" }.count
        let check = FHIRPatientCheck(patientID: asked, base: "https://fhir.example.org/r4")
        let identity = check.identity(in: set.input.resources)
        let rejected = set.keepOnly(aboutPatient: check, requests: [("answer", 0..<set.resourceCount)])
        let leftOut = rejected.reduce(0) { $0 + $1.aboutOthers + $1.uncheckedCount }
        guard leftOut <= read else { throw FuzzViolation("left out \(leftOut) of \(read) resources") }
        let batch = set.map(zone: .named(utc))
        for record in batch.records where record.patient.fhirID != asked && !record.entries.isEmpty {
            throw FuzzViolation("entries kept under Patient \(record.patient.remoteID), not the patient asked for (\(asked))")
        }
        for item in batch.unattached {
            switch item.subject {
            case let .reference(_, id)? where id == asked: continue
            case let .identifier(token)? where identity.identifiers.contains(token): continue
            default:
                if let reference = item.patientReference, identity.fullUrls.contains(reference) { continue }
                throw FuzzViolation("\(item.entry.remoteID) kept although it names \(item.subject?.description ?? "nobody"), not \(asked)")
            }
        }
    }

    public static func fhirNDJSON(_ data: Data) throws {
        try batch("mapNDJSON", data) { try FHIRMapper(zone: .named(utc)).mapNDJSON(data) }
    }

    public static func fhirXML(_ data: Data) throws {
        try batch("mapXML", data) { try FHIRMapper(zone: .named(utc)).mapXML(data) }
    }

    /// A MappedBatch or a RecordsError; every patient and entry has a remoteID; the same bytes map to the same entries.
    static func batch(_ what: String, _ data: Data, _ map: () throws -> MappedBatch) throws {
        guard let batch = try expectingRecordsError(what, map) else { return }
        for record in batch.records {
            guard !record.patient.remoteID.isEmpty else { throw FuzzViolation("\(what): a patient without a remoteID") }
            for entry in record.entries where entry.remoteID.isEmpty {
                throw FuzzViolation("\(what): an entry of \(record.patient.remoteID) without a remoteID")
            }
        }
        for unattached in batch.unattached where unattached.entry.remoteID.isEmpty {
            throw FuzzViolation("\(what): an unattached entry without a remoteID")
        }
        // The documents an import would keep: read from every entry's raw resource (never a trap).
        for entry in batch.records.flatMap(\.entries) + batch.unattached.map(\.entry) {
            if let raw = entry.content.raw {
                for attachment in FHIRAttachments.attachments(raw: raw, remoteID: entry.remoteID) where attachment.data == nil && attachment.url == nil {
                    throw FuzzViolation("\(what): an attachment with neither data nor url")
                }
            }
        }
        guard let second = try? map() else { throw FuzzViolation("\(what): the same bytes failed the second time") }
        guard second.records.map(\.entries) == batch.records.map(\.entries), second.unattached == batch.unattached,
              second.records.map(\.patient.remoteID) == batch.records.map(\.patient.remoteID) else {
            throw FuzzViolation("\(what): the same bytes mapped differently the second time")
        }
    }

    /// A C-CDA/C32 document or a RecordsError, never a trap: recognition answers; every resource
    /// has a type and an id, unique per type, the Patient first; the same bytes give the same
    /// resources and notes; the mapper maps them as any FHIR input (`batch`'s invariants).
    public static func ccda(_ data: Data) throws {
        _ = CCDADocument.recognizes(data)
        guard let document = try expectingRecordsError("CCDADocument.read", { try CCDADocument.read(data, what: "fuzz.xml") }) else { return }
        guard document.resources.first?["resourceType"]?.string == "Patient" else { throw FuzzViolation("ccda: the first resource is not the Patient") }
        var seen: Set<String> = []
        for resource in document.resources {
            guard let type = resource["resourceType"]?.string, !type.isEmpty else { throw FuzzViolation("ccda: a resource without a type") }
            guard let id = resource["id"]?.string, !id.isEmpty else { throw FuzzViolation("ccda: a \(type) without an id") }
            guard seen.insert("\(type)/\(id)").inserted else { throw FuzzViolation("ccda: \(type)/\(id) twice") }
        }
        guard let again = try? CCDADocument.read(data, what: "fuzz.xml"), again.resources == document.resources, again.notes == document.notes,
              again.sections == document.sections else {
            throw FuzzViolation("ccda: the same bytes read differently the second time")
        }
        try batch("map(files: .ccda)", data) { try FHIRMapper(zone: .named(utc)).map(files: [("fuzz.xml", data, .ccda)]) }
    }

    /// The bytes as a section's narrative (`<text>…</text>`) that a problem and a medication refer
    /// into at each `ID` they hold (`CCDANarrative`): `ccda`'s invariants for the document; every
    /// text a reference gives is at most `maxTextBytes`, is the element's whole text when the input
    /// is shorter than that (else its beginning), and costs the allowance at least its bytes, which
    /// never runs below zero; no text of a resource (a code's, a sig, a note) is longer than the cap.
    public static func ccdaNarrative(_ data: Data) throws {
        let ids = narrativeIDs(data)
        let document = narrativeDocument(data, ids: ids)
        try ccda(document)
        guard let root = try? CDAElement.read(document, what: "fuzz.xml") else { return }
        let narrative = CCDANarrative(tree: root.tree)
        let allowance = narrative.remaining
        for id in ids {
            guard let target = narrative.target(forID: id) else { continue }
            let before = narrative.remaining
            let text = narrative.text(forID: id)
            guard let text else { continue }
            guard text.utf8.count <= CCDANarrative.maxTextBytes else {
                throw FuzzViolation("ccda-narrative: #\(id) gave \(text.utf8.count) bytes, more than \(CCDANarrative.maxTextBytes)")
            }
            guard before - narrative.remaining >= text.utf8.count else { throw FuzzViolation("ccda-narrative: #\(id) was handed out for less than its bytes") }
            let whole = CDAElement(tree: root.tree, index: target.element).plainText
            if data.count < CCDANarrative.maxTextBytes {
                // No element holds as many bytes as the cap: its whole text.
                guard text == whole else {
                    throw FuzzViolation("ccda-narrative: #\(id) resolved to \(text.prefix(200).debugDescription), its text is \(whole.prefix(200).debugDescription)")
                }
            } else if !whole.utf8.starts(with: text.utf8) {
                throw FuzzViolation("ccda-narrative: #\(id) resolved to text that does not begin its element's text")
            }
        }
        guard narrative.remaining >= 0, narrative.remaining <= allowance else {
            throw FuzzViolation("ccda-narrative: the allowance went from \(allowance) to \(narrative.remaining)")
        }
        guard let read = try? CCDADocument.read(document, what: "fuzz.xml") else { return }
        for resource in read.resources {
            let texts = [resource["code"]?["text"], resource["medicationCodeableConcept"]?["text"], resource["dosage"]?[0]?["text"],
                         resource["note"]?[0]?["text"]].compactMap { $0?.string }
            for text in texts where text.utf8.count > CCDANarrative.maxTextBytes {
                throw FuzzViolation("ccda-narrative: a \(resource["resourceType"]?.string ?? "resource") with a text of \(text.utf8.count) bytes")
            }
        }
    }

    /// The values of `ID="…"` in the bytes, at most 32, in order.
    static func narrativeIDs(_ data: Data) -> [String] {
        let bytes = [UInt8](data), marker = Array("ID=\"".utf8)
        var ids: [String] = []
        var i = 0
        while i + marker.count < bytes.count, ids.count < 32 {
            guard bytes[i..<(i + marker.count)].elementsEqual(marker) else { i += 1; continue }
            let start = i + marker.count
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { break }
            let id = String(decoding: bytes[start..<end], as: UTF8.self)
            if !id.contains(where: { $0 == "<" || $0 == "&" || $0 == "\"" }) { ids.append(id) }
            i = end + 1
        }
        return ids
    }

    /// A C-CDA document with the bytes as the Problems section's narrative, a problem and a
    /// medication referring to each ID.
    static func narrativeDocument(_ data: Data, ids: [String]) -> Data {
        let problems = ids.map { id in
            "<entry><observation classCode=\"OBS\" moodCode=\"EVN\"><templateId root=\"2.16.840.1.113883.10.20.22.4.4\"/>"
                + "<value xsi:type=\"CD\" code=\"38341003\" codeSystem=\"2.16.840.1.113883.6.96\"><originalText><reference value=\"#\(id)\"/>"
                + "</originalText></value></observation></entry>"
        }.joined()
        let medications = ids.map { id in
            "<entry><substanceAdministration classCode=\"SBADM\" moodCode=\"EVN\"><text><reference value=\"#\(id)\"/></text>"
                + "<consumable><manufacturedProduct><manufacturedMaterial><code nullFlavor=\"UNK\"/></manufacturedMaterial></manufacturedProduct>"
                + "</consumable></substanceAdministration></entry>"
        }.joined()
        var document = Data("""
            <ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\
            <recordTarget><patientRole><id root="1.2.3" extension="p"/><patient><name><family>F</family></name></patient></patientRole></recordTarget>\
            <component><structuredBody><component><section><templateId root="2.16.840.1.113883.10.20.22.2.5.1"/><title>P</title><text>
            """.utf8)
        document.append(data)
        document.append(Data(("</text>" + problems + "</section></component><component><section><templateId root=\"2.16.840.1.113883.10.20.22.2.1.1\"/>"
            + "<title>M</title>" + medications + "</section></component></structuredBody></component></ClinicalDocument>").utf8))
        return document
    }

    /// The key every `health-link` input is decrypted with (seeds sealed under it decrypt).
    static let healthLinkKey = [UInt8](repeating: 0x2a, count: 32)

    /// SMART Health Links (docs/sharing.md): the bytes as a link (`shlink:/`, a viewer URL), a
    /// manifest, a manifest request, and a compact JWE under `healthLinkKey`. Each reader gives its
    /// value or its own typed error, and: a link read has a 32-byte key and reads back from its own
    /// text as itself; a manifest's files have exactly one of embedded and location, and it and a
    /// request read back from their JSON as themselves; a file never decrypts to more than the
    /// inflate limit asked; sealing the bytes and opening them gives them back, and DEFLATE then
    /// inflate is the identity.
    public static func healthLink(_ data: Data) throws {
        let text = String(decoding: data, as: UTF8.self)
        if let link = try? HealthLink(text: text) {
            guard link.keyBytes.count == 32 else { throw FuzzViolation("health-link: a link with a \(link.keyBytes.count)-byte key") }
            guard (try? HealthLink(text: link.text)) == link else { throw FuzzViolation("health-link: a link does not read back from its text") }
        }
        if let manifest = try? HealthLinkManifest(Array(data)) {
            guard manifest.files.count <= HealthLinkManifest.maxFiles,
                  manifest.files.allSatisfy({ ($0.embedded == nil) != ($0.location == nil) }) else {
                throw FuzzViolation("health-link: a manifest file with both or neither of embedded and location")
            }
            guard (try? HealthLinkManifest(Array(manifest.json.serialized().utf8))) == manifest else {
                throw FuzzViolation("health-link: a manifest does not read back from its JSON")
            }
        }
        if let request = try? HealthLinkManifest.Request(Array(data)) {
            guard (try? HealthLinkManifest.Request(Array(request.json.serialized().utf8))) == request else {
                throw FuzzViolation("health-link: a manifest request does not read back from its JSON")
            }
        }
        let limit = 1 + data.count % 4096
        if let opened = try? HealthLinkFile.open(text, key: healthLinkKey, maxInflatedBytes: limit) {
            guard opened.content.count <= limit else { throw FuzzViolation("health-link: a file decrypted to \(opened.content.count) bytes past \(limit)") }
        }
        let bytes = Array(data.prefix(8192))
        guard (try? RawInflate.inflate(RawDeflate.deflate(bytes), limit: bytes.count)) == bytes else {
            throw FuzzViolation("health-link: DEFLATE then inflate changed \(bytes.count) bytes")
        }
        let sealed = try HealthLinkFile.seal(bytes, contentType: HealthLinkFile.fhirJSON, key: healthLinkKey)
        guard let opened = try? HealthLinkFile.open(sealed, key: healthLinkKey), opened.content == bytes,
              opened.contentType == HealthLinkFile.fhirJSON else {
            throw FuzzViolation("health-link: sealing then opening \(bytes.count) bytes did not give them back")
        }
    }

    /// SMART Health Cards (docs/sharing.md): the bytes as a card file or QR text, as one compact JWS,
    /// and as raw DEFLATE; also as a JWK Set and a revocation list. Each reader gives its value or
    /// its own error (typed throws), and: a QR text's cards are made of the characters its digits can
    /// encode; a card's signing input is the start of its text, its signature 64 bytes, its Bundle
    /// a Bundle, and preparing that Bundle keeps its entries; inflating never gives more than the
    /// limit; the digits of any base64url text read back as that text.
    public static func healthCard(_ data: Data) throws {
        if HealthCardFile.recognizes(data), let cards = try? HealthCardFile.credentials(in: data) {
            guard cards.count <= HealthCardFile.maxCards else { throw FuzzViolation("health-card: \(cards.count) cards read") }
            let qr = String(decoding: data, as: UTF8.self).drop { $0.isWhitespace || $0 == "\u{FEFF}" }.prefix(5).lowercased() == "shc:/"
            for card in cards where qr {
                guard card.utf8.allSatisfy({ $0 >= 45 && $0 <= 122 }) else { throw FuzzViolation("health-card: a QR card with a character no digits encode") }
            }
            for card in cards.prefix(4) { try checkCard(card) }
        }
        try checkCard(String(decoding: data, as: UTF8.self))
        let limit = 1 + data.count % 4096
        switch Result(catching: { () throws(RawInflate.Failure) in try RawInflate.inflate(Array(data), limit: limit) }) {
        case let .success(out): guard out.count <= limit else { throw FuzzViolation("health-card: inflated \(out.count) bytes past a limit of \(limit)") }
        case .failure: break
        }
        if let set = try? IssuerKey.keySet(Array(data)) {
            for key in set.keys { guard key.coordinates.x.count == 32, key.coordinates.y.count == 32 else { throw FuzzViolation("health-card: a key of the wrong size") } }
            // x5c: 1 to 10 certificates, none empty; OpenSSL parses each (hostile DER) and reads its URIs without failing.
            for key in set.keys {
                guard let chain = key.certificateChain else { continue }
                guard (1...10).contains(chain.count), chain.allSatisfy({ !$0.isEmpty }) else { throw FuzzViolation("health-card: an x5c of \(chain.count) certificates") }
                for der in chain { _ = (try? X509Certificate(der: der))?.uniformResourceIdentifiers }
            }
        }
        if let list = try? RevocationList(Array(data)) {
            for (rid, before) in list.revoked where before.map({ $0 > Int64.min }) ?? true {
                guard list.revokes(revocationID: rid, notBefore: (before ?? 1) - 1) else { throw FuzzViolation("health-card: \(rid) listed but not revoked") }
            }
        }
        // Base64url text (and dots) as QR digits, read back.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8)
        let text = String(decoding: data.prefix(512).map { alphabet[Int($0) % alphabet.count] }, as: UTF8.self)
        if !text.isEmpty {
            let digits = "shc:/" + text.utf8.map { value -> String in let n = Int(value) - 45; return n < 10 ? "0\(n)" : "\(n)" }.joined()
            guard (try? HealthCardFile.fromQRText(digits)) == [text] else { throw FuzzViolation("health-card: QR digits do not read back as \(text.prefix(60))") }
        }
    }

    private static func checkCard(_ compact: String) throws {
        guard let card = try? HealthCard(compact: compact) else { return }
        guard card.signature.count == 64 else { throw FuzzViolation("health-card: a signature of \(card.signature.count) bytes") }
        guard Array(compact.utf8).starts(with: card.signingInput) else { throw FuzzViolation("health-card: the signing input is not the card's start") }
        guard card.fhirBundle["resourceType"]?.string == "Bundle" else { throw FuzzViolation("health-card: the credential's Bundle is no Bundle") }
        let prepared = HealthCardBundle.prepared(card.fhirBundle, issuer: card.issuer)
        guard prepared["entry"]?.array?.count == card.fhirBundle["entry"]?.array?.count else {
            throw FuzzViolation("health-card: preparing the Bundle changed its entries")
        }
    }

    /// `METADATA.XML` of an XDM package: documents or a `RecordsError`; every document has a path
    /// (a `URI` slot, parts joined), a lower-case hash, at most one document per `ExtrinsicObject`
    /// element; the same bytes give the same documents.
    public static func xdmMetadata(_ data: Data) throws {
        guard let documents = try expectingRecordsError("XDMMetadata.documents", { try XDMMetadata.documents(in: data) }) else { return }
        let objects = [UInt8](data).withUnsafeBufferPointer { bytes in
            var count = 0, at = 0
            while let found = ByteSearch.find("ExtrinsicObject", in: bytes, from: at) { count += 1; at = found + 1 }
            return count
        }
        guard documents.count <= objects else { throw FuzzViolation("xdm-metadata: \(documents.count) documents from \(objects) ExtrinsicObject names") }
        for document in documents {
            guard !document.uri.isEmpty else { throw FuzzViolation("xdm-metadata: a document without a URI") }
            if let sha1 = document.sha1, sha1 != sha1.lowercased() { throw FuzzViolation("xdm-metadata: a hash not in lower case: \(sha1)") }
        }
        guard (try? XDMMetadata.documents(in: data)) == documents else { throw FuzzViolation("xdm-metadata: the same bytes read differently the second time") }
    }

    /// A narrative div (the bytes as UTF-8 text) is refused, or comes back written again so that it
    /// passes again unchanged (what is written keeps to the rules it was checked against) and is a
    /// single XHTML div, with no element or attribute outside the allow-list.
    public static func fhirNarrative(_ data: Data) throws {
        let div = String(decoding: data, as: UTF8.self)
        guard let clean = FHIRNarrative.sanitized(div) else { return }
        guard FHIRNarrative.sanitized(clean) == clean else {
            throw FuzzViolation("a sanitized narrative does not pass again unchanged:\n in: \(div.prefix(300))\n out: \(clean.prefix(300))")
        }
        guard clean.hasPrefix("<div xmlns=\"http://www.w3.org/1999/xhtml\""), clean.hasSuffix("</div>") || clean.hasSuffix("/>") else {
            throw FuzzViolation("a sanitized narrative is not one XHTML div: \(clean.prefix(300))")
        }
        let reader = try XMLTextReader(Data(clean.utf8), what: "the sanitized narrative")
        while try reader.read() {
            guard reader.nodeType == .elementStart else { continue }
            guard FHIRNarrative.elements.contains(reader.localName) else { throw FuzzViolation("element <\(reader.localName)> passed") }
            for attribute in reader.attributes() where !attribute.isNamespaceDeclaration {
                let name = attribute.localName.lowercased()
                guard !name.hasPrefix("on"), attribute.namespaceURI == nil || name == "lang" else {
                    throw FuzzViolation("attribute \(attribute.name) passed")
                }
                if name == "href", !FHIRNarrative.safeLink(attribute.value) { throw FuzzViolation("href \(attribute.value) passed") }
            }
        }
    }

    // MARK: 3. RHEx

    /// Entries or a RecordsError; every entry has a non-empty id and a trimmed title.
    /// HTML reduced to text (documents, issue 26): bounded output, no line-end spaces or runs of
    /// empty lines, and whatever sits inside a `<script>` element never reaches the text.
    public static func htmlText(_ data: Data) throws {
        let html = String(decoding: data, as: UTF8.self)
        let text = HTMLPlainText.text(html)
        try tidyText(text, input: html.utf8.count, factor: 2, what: "HTML text")
        _ = HTMLPlainText.text(html, markup: .xml)
        let lowered = String(decoding: html.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
        if !lowered.contains("</script") {
            let hidden = HTMLPlainText.text("<p>Before</p><script>" + html + "</script><p>After</p>")
            guard hidden == "Before\n\nAfter" else {
                throw FuzzViolation("script content reached the text: \(hidden.prefix(300).debugDescription)")
            }
        }
    }

    /// RTF reduced to text: bounded output, and nothing inside a font table (a skipped destination)
    /// reaches the text.
    public static func rtfText(_ data: Data) throws {
        let bytes = [UInt8](data)
        let text = RTFPlainText.text(bytes)
        guard text.utf8.count <= bytes.count * 4 + 16 else {
            throw FuzzViolation("RTF text of \(text.utf8.count) bytes from \(bytes.count) bytes of input")
        }
        let plain = bytes.filter { $0 != UInt8(ascii: "{") && $0 != UInt8(ascii: "}") && $0 != UInt8(ascii: "\\") }
        let hidden = RTFPlainText.text(Array("{\\rtf1{\\fonttbl ".utf8) + plain + Array("}Visible}".utf8))
        guard hidden == "Visible" else {
            throw FuzzViolation("a skipped destination's content reached the text: \(hidden.prefix(300).debugDescription)")
        }
        _ = DocumentText.readable(bytes, contentType: "text/rtf")
        _ = DocumentText.readable(bytes, contentType: "text/plain; charset=utf-16")
    }

    /// What the text helpers hand back (issue 39), read as Tesseract's TSV, as pdftotext's pages and
    /// as lab lines: bounded, tidy, no control characters, and every lab proposal sound (a name, a
    /// finite value, a unit, a range in order) and found again when its own line is read alone.
    public static func extractedText(_ data: Data) throws {
        let bytes = [UInt8](data)
        let ocr = ExtractedText.ocr(tsv: bytes)
        try tidyExtracted(ocr.text, input: bytes.count, what: "OCR text")
        if let confidence = ocr.confidence, !(0...100).contains(confidence) { throw FuzzViolation("confidence \(confidence)") }
        guard (ocr.words == 0) == (ocr.confidence == nil) else { throw FuzzViolation("\(ocr.words) words, confidence \(String(describing: ocr.confidence))") }
        let pages = ExtractedText.pages(ofPDFText: bytes)
        for page in pages { try tidyExtracted(page, input: bytes.count, what: "PDF page text") }
        try tidyExtracted(ExtractedText.tidy(text(bytes)), input: bytes.count, what: "tidied text")
        let proposals = LabLines.proposals(in: text(bytes))
        guard proposals.count <= LabLines.maxProposals else { throw FuzzViolation("\(proposals.count) proposals") }
        for p in proposals {
            guard !p.name.isEmpty, p.value.isFinite, !p.unit.isEmpty, p.line >= 1 else { throw FuzzViolation("an unsound proposal: \(p)") }
            if let low = p.low, let high = p.high, low > high { throw FuzzViolation("a range out of order: \(p)") }
            guard LabLines.parse(p.text) != nil else { throw FuzzViolation("a proposal's own line does not read again: \(p.text.debugDescription)") }
        }
        // A converter's PNM picture for zbar (QRCodeScanner): refused, or exactly its pixels, bounded.
        if let image = try? PNMImage(bytes, maxPixels: 1 << 20) {
            guard image.width > 0, image.height > 0, image.width * image.height == image.grey.count, image.grey.count <= 1 << 20 else {
                throw FuzzViolation("a PNM picture of \(image.width)x\(image.height) with \(image.grey.count) pixels")
            }
        }
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Extracted text keeps a line's indentation (a page's layout), but no line ends in a space or a
    /// tab, there are no runs of empty lines, no control characters but line breaks and tabs, no
    /// format characters (bidi overrides) but the zero-width joiner, and it is bounded.
    static func tidyExtracted(_ text: String, input: Int, what: String) throws {
        // U+FFFD for each bad byte: at most 3 bytes of UTF-8 for one of input.
        guard text.utf8.count <= input * 3 + 16, text.unicodeScalars.count <= ExtractedText.maxCharacters else {
            throw FuzzViolation("\(what) of \(text.utf8.count) bytes from \(input) bytes of input")
        }
        guard !text.contains("\n\n\n"), !text.hasPrefix("\n"), !text.hasSuffix("\n") else {
            throw FuzzViolation("\(what) has runs of empty lines: \(text.prefix(300).debugDescription)")
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where line.last == " " || line.last == "\t" {
            throw FuzzViolation("\(what) has spaces at a line's end: \(line.prefix(300).debugDescription)")
        }
        if let bad = text.unicodeScalars.first(where: { $0 != "\n" && $0 != "\t" && $0 != "\u{200D}" && ($0.properties.generalCategory == .control
                                                          || $0.properties.generalCategory == .format) }) {
            throw FuzzViolation("\(what) holds U+\(String(bad.value, radix: 16)): \(text.prefix(300).debugDescription)")
        }
    }

    static func tidyText(_ text: String, input: Int, factor: Int, what: String) throws {
        guard text.utf8.count <= input * factor + 16 else {
            throw FuzzViolation("\(what) of \(text.utf8.count) bytes from \(input) bytes of input")
        }
        guard !text.contains("\n\n\n") else { throw FuzzViolation("\(what) has runs of empty lines: \(text.prefix(300).debugDescription)") }
        guard !text.contains(" \n"), text.first != " ", text.last != " " else {
            throw FuzzViolation("\(what) has spaces at a line's end: \(text.prefix(300).debugDescription)")
        }
    }

    public static func rhexFeed(_ data: Data) throws {
        guard let entries = try expectingRecordsError("RHExFeed.parse", { try RHExFeed.parse(data) }) else { return }
        for entry in entries {
            guard !entry.id.isEmpty else { throw FuzzViolation("a feed entry with an empty id") }
            guard entry.title == entry.title.trimmingCharacters(in: .whitespacesAndNewlines) else {
                throw FuzzViolation("a feed entry title is not trimmed: \(entry.title.debugDescription)")
            }
            _ = entry.name
        }
    }

    /// A record or a RecordsError; the patient and every entry have remoteIDs, unique within the record.
    public static func rhexRecord(_ data: Data) throws {
        guard let record = try expectingRecordsError("RHExMapper.map", { try RHExMapper(zone: .named(utc)).map(data) }) else { return }
        guard !record.patient.remoteID.isEmpty else { throw FuzzViolation("an RHEx patient without a remoteID") }
        var seen: Set<String> = []
        for entry in record.entries {
            guard !entry.remoteID.isEmpty else { throw FuzzViolation("an RHEx entry without a remoteID") }
            guard seen.insert(entry.remoteID).inserted else { throw FuzzViolation("two RHEx entries share remoteID \(entry.remoteID)") }
        }
    }

    // MARK: 4. Apple Health

    /// The reader hands over elements (a workout's route files among them) or throws a RecordsError, and the outcome does not depend on how
    /// the bytes are cut into chunks (all at once, or a few bytes at a time): both succeed with the same
    /// elements, or both fail (libxml2's push parser may notice an error a few elements later when
    /// given more bytes at once, so failing reads need only agree on the elements they both handed over).
    public static func appleHealth(_ data: Data) throws {
        // The same bytes as a workout's route file (GPX): a summary with sane numbers, or a RecordsError.
        if let route = try expectingRecordsError("WorkoutRouteGPX.summary", { try WorkoutRouteGPX.summary(data, name: "fuzz.gpx") }) {
            guard route.points >= 0, route.metres.isFinite, route.metres >= 0, route.ascent >= 0, route.descent >= 0,
                  route.isEmpty || (route.south <= route.north && route.west <= route.east) else {
                throw FuzzViolation("a GPX route summary with impossible numbers: \(route.json.serialized())")
            }
        }
        let whole = try readAppleHealth(data, chunk: Int.max)
        let small = try readAppleHealth(data, chunk: 1 + data.count % 7)
        // Records split into the samples' columns give back exactly what the text form holds, and
        // parsing on a second thread hands over the same elements.
        let text = try readAppleHealth(data, chunk: Int.max, splittingSamples: false)
        let concurrent = try readAppleHealth(data, chunk: 1 + data.count % 7, concurrently: true)
        for (name, one, other) in [("text form", whole, text), ("concurrent read", small, concurrent)]
        where other.elements != one.elements || other.error != one.error {
            throw FuzzViolation("""
                Apple Health: the \(name) differs:
                 serial, samples split: \(one.elements.count) elements, \(one.error ?? "no error"); \(one.elements.suffix(2))
                 \(name): \(other.elements.count) elements, \(other.error ?? "no error"); \(other.elements.suffix(2))
                """)
        }
        let same: Bool
        switch (whole.error, small.error) {
        case (nil, nil): same = whole.elements == small.elements
        case (.some, .some): same = whole.elements.starts(with: small.elements) || small.elements.starts(with: whole.elements)
        default: same = false
        }
        // The fast path reads what it does not decline exactly as libxml2 does (elements, lines, errors)
        // given the same chunks (libxml2's own messages can differ with the chunking).
        let fast = try readAppleHealth(data, chunk: 1 + data.count % 7, fastPath: true)
        if fast.error != AppleHealthFuzzMarker.declined, fast.elements != small.elements || fast.error != small.error {
            throw FuzzViolation("""
                Apple Health: the fast path differs from libxml2:
                 libxml2: \(small.elements.count) elements, \(small.error ?? "no error"); \(small.elements.suffix(2))
                 fast: \(fast.elements.count) elements, \(fast.error ?? "no error"); \(fast.elements.suffix(2))
                """)
        }
        guard same else {
            throw FuzzViolation("""
                Apple Health: chunked reading differs:
                 whole: \(whole.elements.count) elements, \(whole.error ?? "no error"); last \(whole.elements.suffix(2))
                 small: \(small.elements.count) elements, \(small.error ?? "no error"); last \(small.elements.suffix(2))
                """)
        }
    }

    /// Each element as text (kind, line, attributes, metadata, children), and the error if it failed.
    static func readAppleHealth(_ data: Data, chunk: Int, splittingSamples: Bool = true,
                                concurrently: Bool = false, fastPath: Bool = false) throws -> (elements: [String], error: String?) {
        var offset = 0
        let reader = AppleHealthReader(splittingSamples: splittingSamples, fastPath: fastPath) { buffer in
            let count = min(buffer.count, chunk, data.count - offset)
            if count > 0 { data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: offset..<(offset + count)) }
            offset += count
            return count
        }
        var out: [String] = []
        func describe(_ e: AppleHealthElement) -> String {
            "\(e.kind.rawValue)@\(e.line) \(e.attributes.map { "\($0.name)=\($0.value.debugDescription)" }) \(e.metadata.map { "\($0.key)=\($0.value.debugDescription)" }) [\(e.children.map(describe).joined(separator: ", "))] \(e.routeFiles)"
        }
        do {
            try reader.read(concurrently: concurrently) { element in
                guard element.line >= 1 else { throw FuzzViolation("an element at line \(element.line)") }
                out.append(describe(element))
            }
        } catch is AppleHealthReader.FastPathDeclined {
            return (out, AppleHealthFuzzMarker.declined)
        } catch let error as RecordsError {
            return (out, error.description)
        } catch let violation as FuzzViolation {
            throw violation
        } catch {
            throw FuzzViolation("AppleHealthReader.read threw \(type(of: error)) (\(error)), not a RecordsError")
        }
        return (out, nil)
    }

    // MARK: User-access Brands bundles (the provider directory)

    /// The reader gives brands or a `BrandsBundleError`, never anything else; the same bytes fed in
    /// chunks of 1, 7 or 4096 bytes give the same brands (or the same refusal); every brand has a
    /// name, every text is clean (no control character, at most `maxText` characters), every
    /// endpoint an http(s) address and a status, and the caps on aliases, places and endpoints hold.
    public static func brandsBundle(_ data: Data) throws {
        let bytes = [UInt8](data)
        func read(chunk: Int) throws -> Result<[ProviderBrand], BrandsBundleError> {
            var reader = BrandsBundleReader()
            do {
                var start = 0
                while start < bytes.count {
                    try reader.feed(bytes[start..<min(bytes.count, start + chunk)])
                    start += chunk
                }
                var brands: [ProviderBrand] = []
                try reader.finish { brands.append($0) }
                return .success(brands)
            } catch let error as BrandsBundleError {
                return .failure(error)
            } catch {
                throw FuzzViolation("brands-bundle: the reader threw \(type(of: error)) (\(error)), not a BrandsBundleError")
            }
        }
        let whole = try read(chunk: max(1, bytes.count))
        for chunk in bytes.count <= 65_536 ? [1, 7, 4096] : [4096] {
            let again = try read(chunk: chunk)
            switch (whole, again) {
            case let (.success(a), .success(b)) where a == b: break
            case (.failure, .failure): break
            default: throw FuzzViolation("brands-bundle: chunks of \(chunk) bytes read otherwise than the whole input")
            }
        }
        guard case let .success(brands) = whole else { return }
        func clean(_ text: String, _ what: String) throws {
            guard !text.isEmpty, text.unicodeScalars.count <= BrandsBundleReader.maxText,
                  !text.unicodeScalars.contains(where: { $0.value < 0x20 || ($0.value >= 0x7f && $0.value < 0xa0) }) else {
                throw FuzzViolation("brands-bundle: \(what) is empty, too long or holds a control character")
            }
        }
        for brand in brands {
            try clean(brand.name, "a name")
            for alias in brand.aliases { try clean(alias, "an alias") }
            for place in brand.places { try place.city.map { try clean($0, "a city") }; try place.state.map { try clean($0, "a state") } }
            guard brand.aliases.count <= BrandsBundleReader.maxAliases, brand.places.count <= BrandsBundleReader.maxPlaces,
                  brand.endpoints.count <= BrandsBundleReader.maxEndpointsPerBrand else {
                throw FuzzViolation("brands-bundle: a brand past its caps")
            }
            for endpoint in brand.endpoints {
                let lower = endpoint.url.lowercased()
                guard lower.hasPrefix("https://") || lower.hasPrefix("http://"), !endpoint.url.contains(" "), !endpoint.status.isEmpty else {
                    throw FuzzViolation("brands-bundle: an endpoint that is no http(s) address")
                }
                try clean(endpoint.url, "an endpoint's address")
            }
        }
    }

}
enum AppleHealthFuzzMarker {
    /// The fast path declined the document (libxml2 reads it; nothing to compare).
    static let declined = "(declined by the fast path)"
}

extension RecordsFuzzChecks {
    // MARK: Fitbit Takeout (docs/wearables.md)

    /// Any bytes as each of Fitbit's day files (steps, heart rate, resting heart rate, weight, sleep)
    /// and as each of its CSV files (`Physical Activity_GoogleData/`): samples or a
    /// `FitbitTakeoutReader.Failure`, never a trap; every sample reads back as the same Record, its end
    /// not before its start. As an exercise log file: workouts whose end is not before their start,
    /// whose duration is a number of minutes, or a Failure. And any text as `Profile.csv`: a zone and
    /// unit or none.
    public static func fitbit(_ data: Data) throws {
        let bytes = [UInt8](data)
        _ = FitbitTakeoutReader.profile(String(decoding: bytes, as: UTF8.self))
        let zone = DayZone.named(TimeZone(identifier: "America/New_York")!)
        do {
            _ = try FitbitTakeoutReader(zone: zone).readExercises(bytes, name: "exercise-0.json") { entry in
                let c = entry.content
                guard let start = c.start?.epoch, let end = c.end?.epoch, end >= start, let minutes = c.valueNumber, minutes.isFinite,
                      minutes >= 0, entry.remoteID.hasPrefix("fitbit:exercise:") else {
                    throw FuzzViolation("a Fitbit workout without a sane span or duration: \(c.start?.text ?? "-") to \(c.end?.text ?? "-")")
                }
            }
        } catch is FitbitTakeoutReader.Failure {
        } catch let violation as FuzzViolation {
            throw violation
        } catch {
            throw FuzzViolation("the Fitbit exercise reader threw \(type(of: error)), not a Failure")
        }
        let readers: [(String, ((SampleRecord) throws -> Void) throws -> Void)] =
            FitbitTakeoutReader.Metric.allCases.map { metric in
                (metric.rawValue, { sample in
                    _ = try FitbitTakeoutReader(zone: zone, kilogramsPerWeightUnit: 0.45359237).read(bytes, metric: metric, name: "fuzz.json", sample: sample)
                })
            } + FitbitCSVReader.Metric.allCases.map { metric in
                ("\(metric.rawValue).csv", { sample in _ = try FitbitCSVReader(zone: zone).read(bytes, metric: metric, name: "fuzz.csv", sample: sample) })
            }
        for (name, read) in readers {
            var samples: [SampleRecord] = []
            do {
                try read { samples.append($0) }
            } catch is FitbitTakeoutReader.Failure {
                continue
            } catch {
                throw FuzzViolation("the Fitbit reader of \(name) threw \(type(of: error)), not a Failure")
            }
            for sample in samples.prefix(10_000) {
                guard sample.end.map({ $0.epoch >= sample.start.epoch }) ?? true,
                      let again = SampleRecord(attributes: sample.attributes, metadata: sample.metadata),
                      again.attributes.description == sample.attributes.description else {
                    throw FuzzViolation("a Fitbit sample does not read back as the same Record: \(sample.attributes)")
                }
            }
        }
    }

    // MARK: Health Connect exports (docs/wearables.md)

    /// Any bytes as a Health Connect database: `openForeign` refuses them or opens them read-only; the
    /// reader gives readings or a `HealthConnectReader.Failure` or a database error (a damaged file),
    /// never a trap; every sample reads back as the same Record with a sane offset and an end not
    /// before its start; and the bytes it was given are unchanged (the copy is SQLite's, read-only).
    public static func healthConnect(_ data: Data) throws {
        let bytes = [UInt8](data)
        let db: Database
        do { db = try Database.openForeign(bytes) } catch is Database.ForeignFailure { return } catch {
            throw FuzzViolation("openForeign threw \(type(of: error)), not a ForeignFailure")
        }
        guard HealthConnectReader.recognizes(db) else { return }
        var samples: [SampleRecord] = []
        do {
            _ = try HealthConnectReader(zone: .named(utc)).read(db, sample: { samples.append($0) }, entry: { _ in })
        } catch is HealthConnectReader.Failure {
            return
        } catch is DatabaseError {
            return
        }
        for sample in samples.prefix(10_000) {
            guard abs(sample.start.offsetMinutes) <= 18 * 60, sample.end.map({ $0.epoch >= sample.start.epoch }) ?? true else {
                throw FuzzViolation("a Health Connect sample with an offset of \(sample.start.offsetMinutes) min or ending before it starts")
            }
            guard let again = SampleRecord(attributes: sample.attributes, metadata: sample.metadata),
                  again.attributes.description == sample.attributes.description else {
                throw FuzzViolation("a Health Connect sample does not read back as the same Record: \(sample.attributes)")
            }
        }
        guard [UInt8](data) == bytes else { throw FuzzViolation("the input's bytes changed") }
    }

    // MARK: FIT files (docs/wearables.md)

    /// The decoder gives messages or a `FITDecoder.Failure`, nothing else; a file it accepts decodes
    /// the same twice and maps without an error (the mapping is total over decoded messages); every
    /// sample of the mapping reads back as the same Record (`SampleRecord(attributes:)`), and its
    /// times are dates with a sane offset.
    public static func fit(_ data: Data) throws {
        let bytes = [UInt8](data)
        try sequentialZip(bytes)
        let first: [FITDecoder.Message]
        do { first = try FITDecoder.decode(bytes) } catch is FITDecoder.Failure { return } catch {
            throw FuzzViolation("the FIT decoder threw \(type(of: error)), not a FITDecoder.Failure")
        }
        let second = try FITDecoder.decode(bytes)
        guard first.count == second.count, zip(first, second).allSatisfy({ $0.global == $1.global && $0.fields == $1.fields && $0.timestamp == $1.timestamp }) else {
            throw FuzzViolation("the same FIT file decoded twice differently")
        }
        let readings: WearableReadings
        do { readings = try FITMapper(zone: .named(utc)).map(bytes, name: "fuzz.fit") } catch {
            throw FuzzViolation("the mapping failed on a file the decoder accepts: \(error)")
        }
        for sample in readings.samples {
            guard abs(sample.start.offsetMinutes) <= 14 * 60 + 59, sample.end.map({ $0.epoch >= sample.start.epoch }) ?? true else {
                throw FuzzViolation("a sample with an offset of \(sample.start.offsetMinutes) min or ending before it starts")
            }
            guard let again = SampleRecord(attributes: sample.attributes, metadata: sample.metadata),
                  again.attributes.description == sample.attributes.description else {
                throw FuzzViolation("a FIT sample does not read back as the same Record: \(sample.attributes)")
            }
        }
    }

    /// The same bytes as a zip inside Garmin's zip, read in order (`SequentialZip`), a few bytes a read:
    /// members or a `SequentialZip.Failure`, never a trap; no member past the limit; the same members
    /// when read again in other pieces.
    static func sequentialZip(_ bytes: [UInt8]) throws {
        func members(chunk: Int) throws -> [SequentialZip.Member]? {
            var position = 0
            var zip = SequentialZip(limits: .init(memberBytes: 1 << 20, ratio: 250, members: 1000)) { target in
                let count = min(chunk, target.count, bytes.count - position)
                for i in 0..<count { target[i] = bytes[position + i] }
                position += count
                return count
            }
            var found: [SequentialZip.Member] = []
            do {
                while let member = try zip.next(wanted: { $0.count % 2 == 0 }) {
                    guard (member.bytes?.count ?? 0) <= 1 << 20 else { throw FuzzViolation("a member past the limit") }
                    found.append(member)
                }
            } catch is SequentialZip.Failure {
                return nil
            } catch let violation as FuzzViolation {
                throw violation
            } catch {
                throw FuzzViolation("the sequential zip reader threw \(type(of: error)), not a Failure")
            }
            return found
        }
        let a = try members(chunk: 13), b = try members(chunk: 4096)
        guard a?.map(\.name) == b?.map(\.name), a?.map(\.bytes) == b?.map(\.bytes) else {
            throw FuzzViolation("the same zip read in other pieces gave other members")
        }
    }
}
#endif
