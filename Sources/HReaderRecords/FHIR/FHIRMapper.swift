import Foundation
import HReaderJSON
import HReaderModel

/// Maps FHIR R4 JSON to patients and entries: a Bundle of any type (nested Bundles included), a
/// single resource, NDJSON (one resource per line, as bulk export writes it), or resources already
/// parsed (`mapResources`).
///
/// ```swift
/// let batch = try FHIRMapper().mapBundle(everythingResponse)
/// for record in batch.records { store(record.patient, record.entries) }
/// ```
///
/// Entries join the Patient their `subject` (or `patient`) references: `Patient/<id>`, an absolute
/// URL ending so, or a Bundle entry's `fullUrl` such as `urn:uuid:…`. Entries whose patient is not in
/// the input are returned as `unattached`; resource types without an entry mapping (Practitioner,
/// Organization, Provenance, …) are listed in `skipped` with the reason, never dropped silently.
///
/// A container that cannot be read (not JSON, an entry that is not an object, a resource without
/// `resourceType`) throws `RecordsError.malformed`. A single resource of a supported type that holds
/// a member of the wrong type (or a date that is not a date) is skipped, with the member's path as
/// the reason, and the rest of the input is still mapped.
public struct FHIRMapper: Sendable {
    /// The zone in which dates without a time ("2012-05-01", "2012") start, for ordering, and
    /// date-times without an offset are read: the local zone the timeline counts days in, unless a
    /// caller names another.
    public var zone: DayZone

    public init(zone: DayZone = .local) {
        self.zone = zone
    }

    /// A Bundle or a single resource.
    public func mapBundle(_ data: Data) throws -> MappedBatch {
        var input = FHIRInput()
        try Self.addDocument(data, into: &input, what: nil)
        return map(consume input)
    }

    /// Newline-delimited JSON: one resource (or Bundle) per line; blank lines are ignored.
    public func mapNDJSON(_ data: Data) throws -> MappedBatch {
        var input = FHIRInput()
        try Self.addNDJSON(data, into: &input, what: nil)
        return map(consume input)
    }

    /// Several files read as one input (a Bulk Data export's one file per type): a Patient in one
    /// file is the patient of the resources in another that reference it.
    public func map(files: [(name: String, data: Data, format: FHIRFileFormat)]) throws -> MappedBatch {
        var input = FileInput()
        for file in files { try input.add(file.data, name: file.name, format: file.format) }
        return map(input)
    }

    /// Several files read as one input, added one at a time: each file's bytes (and a CDA
    /// document's tree) can be let go before the next is read, as a package's documents are.
    ///
    ///     var input = FHIRMapper.FileInput()
    ///     for member in package.members { try input.add(try package.read(member), name: member.name, format: .ccda) }
    ///     let batch = FHIRMapper().map(input)
    public struct FileInput {
        var input = FHIRInput()
        var documents: [(name: String, document: CCDADocument)] = []
        /// Each file added, with who wrote it when it says.
        public private(set) var files: [(name: String, author: String?)] = []

        public init() {}

        public mutating func add(_ data: Data, name: String, format: FHIRFileFormat) throws {
            input.file = files.count
            let author: String?
            switch format {
            case .json: author = try FHIRMapper.addDocument(data, into: &input, what: name)
            case .ndjson: try FHIRMapper.addNDJSON(data, into: &input, what: name); author = nil
            case .xml: author = try FHIRMapper.addXML(data, into: &input, what: name)
            case .ccda:
                let document = try FHIRMapper.addCCDA(data, into: &input, what: name)
                documents.append((name, document))
                author = document.producer
            }
            files.append((name, author))
        }

        /// Adds a Bundle already parsed (a SMART Health Card's `fhirBundle`), written by `author`.
        public mutating func add(bundle: JSONObject, name: String, author: String?) throws {
            input.file = files.count
            try input.add(bundle, path: "\(name): Bundle", fullUrl: nil)
            files.append((name, author))
        }
    }

    public func map(_ files: consuming FileInput) -> MappedBatch {
        // The input alone holds the resources, so the mapping lets each go once mapped.
        var files = files
        let input = files.input
        files.input = FHIRInput()
        var batch = map(consume input)
        batch.documents = files.documents
        batch.inputs = files.files
        return batch
    }

    /// Adds a Bundle or a resource; returns who wrote it when it says (`FHIRDocumentAuthor`).
    @discardableResult
    fileprivate static func addDocument(_ data: Data, into input: inout FHIRInput, what name: String?) throws -> String? {
        let json = try JSONParser.parse(data, what: name.map { "\($0) (FHIR JSON)" } ?? "FHIR JSON", duplicateNames: .refused)
        guard let object = json.object else {
            throw RecordsError.malformed("\(name.map { "\($0): " } ?? "")FHIR JSON is \(json.kindDescription), expected a Bundle or a resource (an object)")
        }
        let path = object["resourceType"]?.string == "Bundle" ? "Bundle" : "resource"
        try input.add(object, path: name.map { "\($0): \(path)" } ?? path, fullUrl: nil)
        return FHIRDocumentAuthor.name(of: object)
    }

    fileprivate static func addNDJSON(_ data: Data, into input: inout FHIRInput, what name: String?) throws {
        for (number, line) in Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let what = (name.map { "\($0) " } ?? "") + "NDJSON line \(number + 1)"
            guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { continue }
            let json = try JSONParser.parse(Array(line), what: what, duplicateNames: .refused)
            guard let object = json.object else {
                throw RecordsError.malformed("\(what) is \(json.kindDescription), expected a resource (an object)")
            }
            try input.add(object, path: what, fullUrl: nil)
        }
    }

    /// Resources (or Bundles) already parsed; what is not an object is skipped. (Foundation's objects
    /// come in through `JSONValue(foundation:)`, the one adapter.)
    public func mapResources(_ resources: [JSONValue]) throws -> MappedBatch {
        var input = FHIRInput()
        for (i, resource) in resources.enumerated() {
            guard let object = resource.object else { continue }
            try input.add(object, path: "resources[\(i)]", fullUrl: nil)
        }
        return map(consume input)
    }

    // MARK: - Grouping

    /// Takes the input over: each clinical resource is let go once its entry is made, so that a
    /// large input is not held twice (as resources and as entries) until the end.
    func map(_ input: consuming FHIRInput) -> MappedBatch {
        var batch = MappedBatch(skipped: input.skipped)
        var patientIndex: [String: Int] = [:]  // "Patient/<id>" and fullUrl → index in batch.records

        for resource in input.resources where resource.type == "Patient" {
            let fhirID = resource.object["id"]?.string.flatMap(nonEmpty)
            let keys = [fhirID.map { "Patient/\($0)" }, resource.fullUrl].compactMap { $0 }
            let remoteID = fhirID ?? resource.fullUrl ?? StableID.hashed("Patient", resource.object.json)
            if let existing = keys.lazy.compactMap({ patientIndex[$0] }).first {
                batch.skipped.append(Skip(kind: "Patient", remoteID: remoteID,
                                          reason: "\(resource.path) repeats Patient \(batch.records[existing].patient.remoteID)"))
                continue
            }
            do {
                let content = try FHIRPatientMapping.content(resource.reader, remoteID: remoteID, raw: resource.object.json.serialized())
                var patient = MappedPatient(remoteID: remoteID, content: content)
                patient.input = resource.file
                patient.identifiers = Self.identifiers(of: resource.object)
                patient.fhirID = fhirID
                if let fullUrl = resource.fullUrl, let fhirID, case let .reference(base?, id)? = Self.patientKey(fullUrl), id == fhirID {
                    patient.fullUrlBase = base
                }
                for key in keys { patientIndex[key] = batch.records.count }
                batch.records.append(MappedRecord(patient: patient))
            } catch {
                batch.skipped.append(Skip(kind: "Patient", remoteID: remoteID, reason: Self.reason(error)))
            }
        }

        for note in input.notes {
            guard let index = patientIndex[note.patient] else {
                batch.skipped.append(Skip(kind: "narrative", remoteID: note.entry.remoteID,
                                          reason: "a section's narrative about \(note.patient), whose Patient was not mapped"))
                continue
            }
            batch.records[index].entries.append(note.entry)
        }

        let entries = FHIREntryMapping(zone: zone, medications: input.medications)
        for index in input.resources.indices {
            let resource = input.resources[index]
            guard resource.type != "Patient" else { continue }
            input.letGo(at: index)
            let (reference, subject) = Self.subject(of: resource.object)
            let recordIndex = reference.flatMap { Self.resolve($0, in: patientIndex) }
            let remoteID = resource.object["id"]?.string.flatMap(nonEmpty).map { "\(resource.type)/\($0)" }
                ?? resource.fullUrl ?? StableID.hashed(resource.type, resource.object.json)

            var entry: MappedEntry
            do {
                if var content = try entries.content(resource.reader, type: resource.type) {
                    if let statement = Self.noInformationCode(content.codes) {
                        // An IPS document's "no information about …" stands for an empty section, not a record.
                        let skip = Skip(kind: resource.type, remoteID: remoteID,
                                        reason: "an IPS statement that there is no information (\(statement)), not a record")
                        if let recordIndex { batch.records[recordIndex].skipped.append(skip) } else { batch.skipped.append(skip) }
                        continue
                    }
                    content.raw = resource.object.json.serialized()
                    content.description = FHIREntryMapping.describingNegation(content)
                    entry = MappedEntry(remoteID: remoteID, content: content)
                    entry.input = resource.file
                } else if resource.type != "Medication", subject != nil {
                    // About a patient but of a type without a mapping (CarePlan, Goal, …): kept, raw
                    // and all, as an `observation` entry, and said so; never dropped silently.
                    var content = entries.unmapped(resource.reader, type: resource.type)
                    content.raw = resource.object.json.serialized()
                    entry = MappedEntry(remoteID: remoteID, content: content, unmappedType: resource.type)
                    entry.input = resource.file
                } else {
                    let skip = Skip(kind: resource.type, remoteID: remoteID, reason: resource.type == "Medication"
                        ? "Medication resources are read only through the medication entries that reference them"
                        : "unsupported resource type \(resource.type) (not about a patient)")
                    if let recordIndex { batch.records[recordIndex].skipped.append(skip) } else { batch.skipped.append(skip) }
                    continue
                }
            } catch {
                let skip = Skip(kind: resource.type, remoteID: remoteID, reason: Self.reason(error))
                if let recordIndex { batch.records[recordIndex].skipped.append(skip) } else { batch.skipped.append(skip) }
                continue
            }
            if let recordIndex {
                batch.records[recordIndex].entries.append(entry)
            } else {
                batch.unattached.append(UnattachedEntry(patientReference: reference, subject: subject, entry: entry))
            }
        }
        return batch
    }

    /// The IPS absent-unknown code (`no-problem-info`, `no-allergy-info`, `no-medication-info`, …) of a
    /// resource that says only that its section has no information. "No known allergies" (`no-known-…`)
    /// is information, and is kept.
    static func noInformationCode(_ codes: [String: [String]]) -> String? {
        codes["http://hl7.org/fhir/uv/ips/CodeSystem/absent-unknown-uv-ips"]?.first { $0.hasPrefix("no-") && $0.hasSuffix("-info") }
    }

    /// A Patient's identifiers that name a person: `system|value`, both present.
    static func identifiers(of patient: JSONObject) -> [String] {
        (patient["identifier"]?.array ?? []).compactMap { item in
            guard let identifier = item.object, let system = identifier["system"]?.string.flatMap(nonEmpty),
                  let value = identifier["value"]?.string.flatMap(nonEmpty) else { return nil }
            return "\(system)|\(value)"
        }
    }

    /// The patient element of a resource: `subject` for most types, `patient` for AllergyIntolerance,
    /// Immunization, Claim and others, `beneficiary` for Coverage, `for` for Task.
    static let subjectElements = ["subject", "patient", "beneficiary", "for"]

    /// The resource's patient reference as written, and who it names as a key the vault can look
    /// up: a `Patient/<id>` reference (relative or absolute), a logical reference by identifier, or
    /// a contained Patient's identifier. Read without judging the resource: a member of the wrong
    /// type shows when the resource itself is mapped.
    static func subject(of resource: JSONObject) -> (reference: String?, key: SubjectKey?) {
        for element in subjectElements {
            guard let subject = resource[element]?.object else { continue }
            if let reference = subject["reference"]?.string.flatMap(nonEmpty) {
                if reference.hasPrefix("#") {
                    let id = String(reference.dropFirst())
                    let contained = resource["contained"]?.array?.lazy.compactMap(\.object)
                        .first { $0["id"]?.string == id && $0["resourceType"]?.string == "Patient" }
                    if let token = contained.flatMap({ identifiers(of: $0).first }) { return (reference, .identifier(token)) }
                    return (reference, .unresolvable("\(reference) (a contained Patient without an identifier)"))
                }
                return (reference, patientKey(reference) ?? .unresolvable(reference))
            }
            if let identifier = subject["identifier"]?.object, let system = identifier["system"]?.string.flatMap(nonEmpty),
               let value = identifier["value"]?.string.flatMap(nonEmpty) {
                return (nil, .identifier("\(system)|\(value)"))
            }
        }
        return (nil, nil)
    }

    /// `Patient/<id>`, `[base]/Patient/<id>` or either with `/_history/<version>`; nil for anything else.
    static func patientKey(_ reference: String) -> SubjectKey? {
        var text = Substring(reference)
        // (Foundation's range(of:) only when there can be a "/_history/": it costs more than the rest.)
        if reference.utf8.contains(UInt8(ascii: "_")), let history = text.range(of: "/_history/") { text = text[..<history.lowerBound] }
        // An ASCII reference (nearly all) is split by its bytes: the same segments, without
        // walking it Character by Character.
        let segments = text.utf8.allSatisfy({ $0 < 0x80 })
            ? text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { Substring($0) }
            : text.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[segments.count - 2] == "Patient", let id = segments.last.map(String.init), !id.isEmpty else {
            return nil
        }
        if segments.count == 2 { return .reference(base: nil, id: id) }
        let base = segments.dropLast(2).joined(separator: "/")
        guard base.hasPrefix("http://") || base.hasPrefix("https://") else { return nil }
        return .reference(base: base, id: id)
    }

    private static func reason(_ error: Error) -> String {
        if case RecordsError.malformed(let message) = error { return message }
        return "\(error)"
    }

    /// A reference as a fullUrl of the input, or as `[base/]Patient/<id>[/_history/<version>]`.
    private static func resolve(_ reference: String, in index: [String: Int]) -> Int? {
        if let found = index[reference] { return found }
        var reference = Substring(reference)
        if reference.utf8.contains(UInt8(ascii: "_")), let history = reference.range(of: "/_history/") {
            reference = reference[..<history.lowerBound]
            if let found = index[String(reference)] { return found }
        }
        let segments = reference.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[segments.count - 2] == "Patient" else { return nil }
        return index["Patient/\(segments[segments.count - 1])"]
    }
}

/// How a FHIR file is written.
public enum FHIRFileFormat: String, Sendable {
    /// A Bundle or a single resource.
    case json
    /// One resource per line, as Bulk Data exports write them.
    case ndjson
    /// A Bundle or a single resource in FHIR's XML form (`FHIRXML`).
    case xml
    /// A C-CDA, CCD or HITSP C32 clinical document (`CCDADocument`), read as the FHIR resources it stands for.
    case ccda
}
