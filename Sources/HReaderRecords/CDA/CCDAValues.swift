import Foundation
import HReaderJSON
import HReaderModel

/// HL7 v3 data types of a CDA document as FHIR R4 JSON, as "C-CDA on FHIR" maps them: TS → date or
/// dateTime at the precision written, CD → CodeableConcept (translations as extra codings,
/// originalText resolved into the narrative), II → Identifier, PQ → Quantity.
enum CCDAValues {
    /// Code system OIDs and their FHIR system URIs; other OIDs stay `urn:oid:…`.
    static let systems: [String: String] = [
        "2.16.840.1.113883.6.1": "http://loinc.org",
        "2.16.840.1.113883.6.96": "http://snomed.info/sct",
        "2.16.840.1.113883.6.88": "http://www.nlm.nih.gov/research/umls/rxnorm",
        "2.16.840.1.113883.12.292": "http://hl7.org/fhir/sid/cvx",
        "2.16.840.1.113883.6.59": "http://hl7.org/fhir/sid/cvx",  // CVX as HITSP C32 named it
        "2.16.840.1.113883.6.90": "http://hl7.org/fhir/sid/icd-10-cm",
        "2.16.840.1.113883.6.3": "http://hl7.org/fhir/sid/icd-10",
        "2.16.840.1.113883.6.103": "http://hl7.org/fhir/sid/icd-9-cm",
        "2.16.840.1.113883.6.2": "http://hl7.org/fhir/sid/icd-9-cm",
        "2.16.840.1.113883.6.12": "http://www.ama-assn.org/go/cpt",
        "2.16.840.1.113883.6.69": "http://hl7.org/fhir/sid/ndc",
        "2.16.840.1.113883.6.8": "http://unitsofmeasure.org",
        "2.16.840.1.113883.6.4": "http://www.cms.gov/Medicare/Coding/ICD10",
        "2.16.840.1.113883.6.285": "http://www.cms.gov/Medicare/Coding/HCPCSReleaseCodeSets",
        "2.16.840.1.113883.6.101": "http://nucc.org/provider-taxonomy",
        "2.16.840.1.113883.4.9": "http://fdasis.nlm.nih.gov",
        "2.16.840.1.113883.5.4": "http://terminology.hl7.org/CodeSystem/v3-ActCode",
        "2.16.840.1.113883.5.8": "http://terminology.hl7.org/CodeSystem/v3-ActReason",
        "2.16.840.1.113883.5.83": "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation",
        "2.16.840.1.113883.5.112": "http://terminology.hl7.org/CodeSystem/v3-RouteOfAdministration",
        "2.16.840.1.113883.5.1063": "http://terminology.hl7.org/CodeSystem/v3-ObservationValue",
        "2.16.840.1.113883.5.1": "http://terminology.hl7.org/CodeSystem/v3-AdministrativeGender",
        "2.16.840.1.113883.5.1008": "http://terminology.hl7.org/CodeSystem/v3-NullFlavor",
        "2.16.840.1.113883.5.111": "http://terminology.hl7.org/CodeSystem/v3-RoleCode",
    ]

    static func system(_ oid: String?) -> String? {
        guard let oid = oid.flatMap(nonEmpty) else { return nil }
        if let known = systems[oid] { return known }
        if isOID(oid) { return "urn:oid:" + oid }
        if isUUID(oid) { return "urn:uuid:" + oid.lowercased() }
        return oid.contains(":") ? oid : nil
    }

    static func isOID(_ text: String) -> Bool {
        var previous: UInt8 = UInt8(ascii: ".")
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                if previous == UInt8(ascii: ".") { return false }  // a leading "." or ".."
            } else if !isDigit(byte) {
                return false
            }
            previous = byte
        }
        return previous != UInt8(ascii: ".")  // empty, or a trailing "."
    }

    static func isUUID(_ text: String) -> Bool {
        var part = 0, length = 0
        for byte in text.utf8 {
            if byte >= 0x80 {
                // Character.isHexDigit also takes the fullwidth forms.
                let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
                return parts == [8, 4, 4, 4, 12] && text.allSatisfy { $0 == "-" || $0.isHexDigit }
            }
            if byte == UInt8(ascii: "-") {
                guard part < 4, length == (part == 0 ? 8 : 4) else { return false }
                part += 1
                length = 0
            } else if isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20) {
                length += 1
            } else {
                return false
            }
        }
        return part == 4 && length == 12
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// An ASCII text without the spaces and tabs at its ends (what `.whitespaces` trims from ASCII),
    /// or nil when the text is not ASCII: then Foundation trims it, and what is left must be ASCII.
    private static func asciiTrimmed(_ text: String) -> String? {
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            let utf8 = text.utf8
            guard let first = utf8.first, let last = utf8.last else { return text }
            if first != 0x20, first != 0x09, last != 0x20, last != 0x09 { return text }
            let bytes = Array(utf8)
            var start = 0, end = bytes.count
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        return trimmed.utf8.allSatisfy({ $0 < 0x80 }) ? trimmed : nil
    }

    // MARK: Times

    /// An HL7 TS (`YYYY[MM[DD[HH[MM[SS[.S…]]]]]][±ZZZZ]`) as a FHIR date or dateTime at the precision
    /// written. A time of day needs an offset in FHIR; without one only the date is kept (the time
    /// is not guessed in some zone). Nil for anything that is not a valid TS.
    static func fhirDateTime(_ text: String?) -> String? {
        guard let text, var trimmed = asciiTrimmed(text), !trimmed.isEmpty else { return nil }
        return trimmed.withUTF8 { dateTime(ascii: $0) }
    }

    /// `fhirDateTime` of a trimmed ASCII text, read byte by byte.
    private static func dateTime(ascii bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var end = bytes.count
        var sign: Int?
        if let found = bytes.firstIndex(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) {
            guard bytes.count - found == 5, bytes[(found + 1)...].allSatisfy(isDigit) else { return nil }
            let hours = Int(bytes[found + 1] - 48) * 10 + Int(bytes[found + 2] - 48)
            let minutes = Int(bytes[found + 3] - 48) * 10 + Int(bytes[found + 4] - 48)
            guard hours <= 14, minutes < 60 else { return nil }
            sign = found
            end = found
        }
        var fraction = 0..<0
        if let dot = bytes[..<end].firstIndex(of: UInt8(ascii: ".")) {
            guard dot + 1 < end, bytes[(dot + 1)..<end].allSatisfy(isDigit) else { return nil }
            fraction = dot..<min(end, dot + 10)   // the dot and at most nine digits
            end = dot
        }
        guard bytes[..<end].allSatisfy(isDigit), [4, 6, 8, 10, 12, 14].contains(end) else { return nil }
        func number(_ from: Int, _ count: Int) -> Int { bytes[from..<(from + count)].reduce(0) { $0 * 10 + Int($1 - 48) } }
        let year = number(0, 4)
        guard year >= 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(40)
        out.append(contentsOf: bytes[0..<4])
        func done() -> String { String(decoding: out, as: UTF8.self) }
        guard end >= 6 else { return done() }
        let month = number(4, 2)
        guard (1...12).contains(month) else { return nil }
        out.append(UInt8(ascii: "-"))
        out.append(contentsOf: bytes[4..<6])
        guard end >= 8 else { return done() }
        let day = number(6, 2)
        guard day >= 1, day <= CivilDays.daysIn(month: month, of: year) else { return nil }
        out.append(UInt8(ascii: "-"))
        out.append(contentsOf: bytes[6..<8])
        guard end >= 10, let sign else { return done() }
        let hour = number(8, 2), minute = end >= 12 ? number(10, 2) : 0, second = end >= 14 ? number(12, 2) : 0
        guard hour < 24, minute < 60, second < 60 else { return nil }
        for (separator, value) in [(UInt8(ascii: "T"), hour), (UInt8(ascii: ":"), minute), (UInt8(ascii: ":"), second)] {
            out.append(separator)
            out.append(UInt8(48 + value / 10))
            out.append(UInt8(48 + value % 10))
        }
        if end >= 14 { out.append(contentsOf: bytes[fraction]) }
        out.append(contentsOf: bytes[sign..<(sign + 3)])
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: bytes[(sign + 3)..<(sign + 5)])
        return done()
    }

    /// An effectiveTime (TS, IVL_TS, or a PIVL/SXPR whose first part is one): its point or its
    /// low and high, each as FHIR.
    static func times(_ element: CDAElement?) -> (point: String?, low: String?, high: String?) {
        guard let element else { return (nil, nil, nil) }
        let point = fhirDateTime(element[attribute: "value"])
        let low = fhirDateTime(element.child("low")?[attribute: "value"])
        let high = fhirDateTime(element.child("high")?[attribute: "value"])
        if point == nil, low == nil, high == nil, let center = element.child("center") {
            return (fhirDateTime(center[attribute: "value"]), nil, nil)
        }
        return (point, low, high)
    }

    /// The effectiveTime elements of an entry: the interval first (an IVL_TS), a frequency (PIVL_TS) after.
    static func interval(of entry: CDAElement) -> (point: String?, low: String?, high: String?) {
        let times = entry.all("effectiveTime")
        let chosen = times.first { let type = $0.instanceType; return type != "PIVL_TS" && type != "EIVL_TS" } ?? times.first
        return Self.times(chosen)
    }

    // MARK: Codes

    /// A CD/CE/CV as a CodeableConcept: the code (when it has one), its translations, and the
    /// original text (`originalText`, its reference into the narrative resolved by `narrative`).
    /// A placeholder code (`Unknown`, `UNK`, `0`: `FHIRCodes.isPlaceholder(code:)`) is no coding;
    /// its display name, when it names something, is the text if the concept has no other.
    /// Nil when nothing is left: a nullFlavor with no text and no translation.
    static func concept(_ element: CDAElement?, narrative: (String) -> String?) -> JSONObject? {
        guard let element else { return nil }
        var codings: [JSONValue] = []
        var seen: Set<CodingKey> = []
        var placeholderDisplay: String?
        func add(_ coding: CDAElement) {
            guard coding.nullFlavor == nil, let code = coding[attribute: "code"].flatMap(nonEmpty) else { return }
            let display = coding[attribute: "displayName"].flatMap(nonEmpty)
            guard !FHIRCodes.isPlaceholder(code: code) else {
                if placeholderDisplay == nil, let display, !isPlaceholderText(display) { placeholderDisplay = display }
                return
            }
            let system = system(coding[attribute: "codeSystem"])
            guard seen.insert(CodingKey(system: system, code: code, display: display)).inserted else { return }
            var members: [JSONObject.Member] = []
            if let system { members.append(("system", .string(system))) }
            members.append(("code", .string(code)))
            if let display { members.append(("display", .string(display))) }
            codings.append(.object(JSONObject(members)))
        }
        add(element)
        // Translations are other systems' codes for the same thing: a handful in practice. More are
        // left out (security review 3, L-1: 8,000 of them made one import take minutes).
        for translation in element.children.lazy.filter({ $0.isHL7 && $0.name == "translation" }).prefix(maxTranslations) {
            add(translation)
        }
        var members: [JSONObject.Member] = []
        if !codings.isEmpty { members.append(("coding", .array(codings))) }
        let original = originalText(element, narrative: narrative)
        let text = original.flatMap { isPlaceholderText($0) ? nil : $0 } ?? placeholderDisplay ?? original
        if let text { members.append(("text", .string(text))) }
        return members.isEmpty ? nil : JSONObject(members)
    }

    /// The most translations of one code that are read.
    static let maxTranslations = 64

    /// A coding as written, to leave out repeats in constant time each.
    private struct CodingKey: Hashable {
        let system: String?
        let code: String
        let display: String?
    }

    /// The text of an `originalText` (or of any element with a `reference`): its reference into the
    /// narrative (`#id`) when it resolves, else its own text.
    static func originalText(_ element: CDAElement, narrative: (String) -> String?) -> String? {
        guard let original = element.child("originalText") else { return nil }
        return text(original, narrative: narrative)
    }

    /// An ED/`text` element: its reference resolved into the narrative, else its own text.
    static func text(_ element: CDAElement?, narrative: (String) -> String?) -> String? {
        guard let element else { return nil }
        if let reference = element.child("reference")?[attribute: "value"], reference.hasPrefix("#"),
           let resolved = narrative(String(reference.dropFirst())).flatMap(nonEmpty) {
            return resolved
        }
        return nonEmpty(element.plainText(leavingOut: { $0.name == "reference" }))
    }

    /// Whether a concept says nothing but that nothing is known: nothing at all, or a text such as
    /// "Not on file" or "No medication data is applicable" (whatever generic code a vendor put beside it).
    static func isPlaceholder(_ concept: JSONObject?) -> Bool {
        guard let concept else { return true }
        if let text = concept["text"]?.string { return isPlaceholderText(text) }
        return concept["coding"] == nil
    }

    static let placeholderTexts: Set<String> = [
        "not on file", "no information", "no information available", "none recorded", "no data", "not available", "unknown",
        "n/a", "na", "none", "not recorded", "no known", "not specified", "not documented", "nullflavor", "ni", "unk",
    ]

    /// Placeholders vendors write where a section has nothing: "No medication data is applicable",
    /// "Instruction excluded/not available", "No information available", "Not applicable". As
    /// regular expressions (the tests hold the matcher to them):
    ///
    ///     ^no( [a-z/&-]+){0,4} (data|information|info)( (is|was))?( (applicable|available|recorded|on file|documented|reported|found))?$
    ///     not (applicable|available|on file|recorded|documented|indicated)$
    ///     ^(data|information) (not|un)available$
    ///     ^no (data|information|info) (about|on|for|regarding)( [a-z/&-]+){1,4}$
    ///     ^no [a-z]+ (taken|recorded|reported|documented|on file)$
    ///
    /// matched word by word (words of the folded text between single spaces), without compiling a
    /// regular expression for every text read.
    static func isPlaceholderText(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: ".-")))
        // Every placeholder is short: a long text (a narrative) is not lower-cased to find that out.
        guard trimmed.utf8.count <= 4 * 80 else { return false }
        let folded = trimmed.lowercased()
        if placeholderTexts.contains(folded) { return true }
        guard folded.count <= 80 else { return false }
        return matchesPlaceholderPattern(folded)
    }

    private static let dataWords: Set<String> = ["data", "information", "info"]

    static func matchesPlaceholderPattern(_ folded: String) -> Bool {
        let scalars = folded.unicodeScalars
        for ending in ["applicable", "available", "on file", "recorded", "documented", "indicated"] {
            if scalars.reversed().starts(with: ("not " + ending).unicodeScalars.reversed()) { return true }
        }
        if ["data notavailable", "data unavailable", "information notavailable", "information unavailable"].contains(folded) { return true }
        let words = scalars.split(separator: " ", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
        guard words.first == "no" else { return false }
        func isWord(_ word: String, slashes: Bool = true) -> Bool {
            !word.isEmpty && word.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || slashes && ($0 == "/" || $0 == "&" || $0 == "-")
            }
        }
        // ^no( W){0,4} (data|information|info)( (is|was))?( (applicable|…|on file|…))?$
        let states: Set<String> = ["applicable", "available", "recorded", "documented", "reported", "found"]
        for count in 0...4 where 1 + count < words.count {
            guard words[1..<(1 + count)].allSatisfy({ isWord($0) }) else { break }
            guard dataWords.contains(words[1 + count]) else { continue }
            var rest = words[(2 + count)...]
            if let first = rest.first, first == "is" || first == "was" { rest = rest.dropFirst() }
            if rest.isEmpty || rest.count == 1 && states.contains(rest.first!) || Array(rest) == ["on", "file"] { return true }
        }
        // ^no (data|information|info) (about|on|for|regarding)( W){1,4}$
        if (4...7).contains(words.count), dataWords.contains(words[1]), ["about", "on", "for", "regarding"].contains(words[2]),
           words[3...].allSatisfy({ isWord($0) }) {
            return true
        }
        // ^no [a-z]+ (taken|recorded|reported|documented|on file)$
        if words.count >= 3, isWord(words[1], slashes: false) {
            let rest = Array(words[2...])
            if rest.count == 1 && ["taken", "recorded", "reported", "documented"].contains(rest[0]) || rest == ["on", "file"] { return true }
        }
        return false
    }

    static func codes(of concept: JSONObject?) -> [(system: String?, code: String)] {
        (concept?["coding"]?.array ?? []).compactMap { coding in
            guard let code = coding["code"]?.string else { return nil }
            return (coding["system"]?.string, code)
        }
    }

    static func coding(_ system: String, _ code: String, _ display: String) -> JSONValue {
        ["system": .string(system), "code": .string(code), "display": .string(display)]
    }

    static func concept(_ system: String, _ code: String, _ display: String) -> JSONValue {
        ["coding": [coding(system, code, display)]]
    }

    // MARK: Identifiers and quantities

    /// An II as a FHIR Identifier: `urn:oid:ROOT` (or `urn:uuid:`) and the extension; a root alone
    /// is the value, in the URI system. Nil for a nullFlavor or an id without a root.
    static func identifier(_ element: CDAElement) -> JSONObject? {
        guard element.nullFlavor == nil, let root = element[attribute: "root"].flatMap(nonEmpty) else { return nil }
        // What `system(root)` would say, without looking the root up as a code system first.
        let rootURI = isOID(root) ? "urn:oid:" + root : isUUID(root) ? "urn:uuid:" + root.lowercased()
            : systems[root] != nil || root.contains(":") ? root : nil
        if let extensionValue = element[attribute: "extension"].flatMap(nonEmpty) {
            guard let rootURI else { return nil }
            return ["system": .string(rootURI), "value": .string(extensionValue)]
        }
        guard let rootURI else { return nil }
        return ["system": "urn:ietf:rfc:3986", "value": .string(rootURI)]
    }

    /// A decimal literal as FHIR JSON takes it (`.5` → `0.5`, `+3` → `3`, `007` → `7`); nil when the
    /// text is not a decimal.
    static func decimal(_ text: String?) -> String? {
        guard let text, let trimmed = asciiTrimmed(text), !trimmed.isEmpty else { return nil }
        var bytes = Substring(trimmed).utf8
        var sign = ""
        if bytes.first == UInt8(ascii: "-") { sign = "-"; bytes.removeFirst() } else if bytes.first == UInt8(ascii: "+") { bytes.removeFirst() }
        let dot = bytes.firstIndex(of: UInt8(ascii: "."))
        let whole = bytes[..<(dot ?? bytes.endIndex)]
        guard whole.allSatisfy(isDigit) else { return nil }
        let significant = whole.drop { $0 == UInt8(ascii: "0") }
        var out = sign + (significant.isEmpty ? "0" : String(Substring(significant)))
        if let dot {
            let fraction = bytes[bytes.index(after: dot)...]
            guard !fraction.isEmpty, fraction.allSatisfy(isDigit) else { return nil }
            out += "." + String(Substring(fraction))
        } else if whole.isEmpty {
            return nil
        }
        guard out.utf8.count <= 40 else { return nil }
        return out == "-0" ? "0" : out
    }

    /// A PQ as a Quantity with its UCUM unit (the unit `1` is left out, as it says no unit).
    static func quantity(_ element: CDAElement) -> JSONObject? {
        guard element.nullFlavor == nil, let value = decimal(element[attribute: "value"]) else { return nil }
        var members: [JSONObject.Member] = [("value", .number(value))]
        if let unit = element[attribute: "unit"].flatMap(nonEmpty), unit != "1" {
            members += [("unit", .string(unit)), ("system", "http://unitsofmeasure.org"), ("code", .string(unit))]
        }
        return JSONObject(members)
    }

    /// nullFlavor → FHIR's data-absent-reason code.
    static func absentReason(_ nullFlavor: String?) -> JSONValue {
        let code = switch nullFlavor?.uppercased() {
        case "ASKU": "asked-unknown"
        case "NAV": "temp-unknown"
        case "NASK": "not-asked"
        case "MSK": "masked"
        case "NA": "not-applicable"
        case "NAN": "not-a-number"
        case "NINF": "negative-infinity"
        case "PINF": "positive-infinity"
        default: "unknown"
        }
        return ["coding": [["system": "http://terminology.hl7.org/CodeSystem/data-absent-reason", "code": .string(code)]]]
    }
}
