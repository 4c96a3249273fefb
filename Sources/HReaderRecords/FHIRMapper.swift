import Foundation
import HReaderStore

/// Maps FHIR R4 JSON to patients and entries: a Bundle of any type (nested Bundles included), a
/// single resource, NDJSON (one resource per line, as bulk export writes it), or resources already
/// decoded by `JSONSerialization`.
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
    /// The zone in which dates without a time ("2012-05-01", "2012") start, for ordering.
    public var timeZone: TimeZone

    public init(timeZone: TimeZone = .current) {
        self.timeZone = timeZone
    }

    /// A Bundle or a single resource.
    public func mapBundle(_ data: Data) throws -> MappedBatch {
        let json = try JSONParser.parse(data, what: "FHIR JSON")
        guard let object = json.object else {
            throw RecordsError.malformed("FHIR JSON is \(json.kindDescription), expected a Bundle or a resource (an object)")
        }
        var input = FHIRInput()
        try input.add(object, path: object["resourceType"]?.string == "Bundle" ? "Bundle" : "resource", fullUrl: nil)
        return map(input)
    }

    /// Newline-delimited JSON: one resource (or Bundle) per line; blank lines are ignored.
    public func mapNDJSON(_ data: Data) throws -> MappedBatch {
        var input = FHIRInput()
        for (number, line) in Array(data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let what = "NDJSON line \(number + 1)"
            guard line.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { continue }
            let json = try JSONParser.parse(Array(line), what: what)
            guard let object = json.object else {
                throw RecordsError.malformed("\(what) is \(json.kindDescription), expected a resource (an object)")
            }
            try input.add(object, path: what, fullUrl: nil)
        }
        return map(input)
    }

    /// Resources (or Bundles) as `JSONSerialization` decodes them.
    public func mapResources(_ resources: [[String: Any]]) throws -> MappedBatch {
        var input = FHIRInput()
        for (i, resource) in resources.enumerated() {
            let path = "resources[\(i)]"
            guard let object = try JSONValue(foundation: resource, path: path).object else { continue }
            try input.add(object, path: path, fullUrl: nil)
        }
        return map(input)
    }

    // MARK: - Grouping

    func map(_ input: FHIRInput) -> MappedBatch {
        var batch = MappedBatch(skipped: input.skipped)
        var patientIndex: [String: Int] = [:]  // "Patient/<id>" and fullUrl → index in batch.records

        for resource in input.resources where resource.type == "Patient" {
            let keys = [resource.object["id"]?.string.flatMap(nonEmpty).map { "Patient/\($0)" }, resource.fullUrl].compactMap { $0 }
            let remoteID = resource.object["id"]?.string.flatMap(nonEmpty) ?? resource.fullUrl
                ?? StableID.hashed("Patient", resource.object.json)
            if let existing = keys.lazy.compactMap({ patientIndex[$0] }).first {
                batch.skipped.append(Skip(kind: "Patient", remoteID: remoteID,
                                          reason: "\(resource.path) repeats Patient \(batch.records[existing].patient.remoteID)"))
                continue
            }
            do {
                let content = try FHIRPatientMapping.content(resource.reader, remoteID: remoteID, raw: resource.object.json.serialized())
                for key in keys { patientIndex[key] = batch.records.count }
                batch.records.append(MappedRecord(patient: MappedPatient(remoteID: remoteID, content: content)))
            } catch {
                batch.skipped.append(Skip(kind: "Patient", remoteID: remoteID, reason: Self.reason(error)))
            }
        }

        let entries = FHIREntryMapping(timeZone: timeZone, medications: input.medications)
        for resource in input.resources where resource.type != "Patient" {
            let reference = Self.patientReference(resource.object)
            let recordIndex = reference.flatMap { Self.resolve($0, in: patientIndex) }
            let remoteID = resource.object["id"]?.string.flatMap(nonEmpty).map { "\(resource.type)/\($0)" }
                ?? resource.fullUrl ?? StableID.hashed(resource.type, resource.object.json)

            let skip: Skip
            do {
                if var content = try entries.content(resource.reader, type: resource.type) {
                    content.raw = resource.object.json.serialized()
                    let entry = MappedEntry(remoteID: remoteID, content: content)
                    if let recordIndex {
                        batch.records[recordIndex].entries.append(entry)
                    } else {
                        batch.unattached.append(UnattachedEntry(patientReference: reference, entry: entry))
                    }
                    continue
                }
                if resource.type != "Medication", reference != nil {
                    // About the patient but of a type without a mapping (CarePlan, Goal, …): kept, raw
                    // and all, as an `observation` entry, and said so; never dropped silently.
                    var content = entries.unmapped(resource.reader, type: resource.type)
                    content.raw = resource.object.json.serialized()
                    let entry = MappedEntry(remoteID: remoteID, content: content)
                    let note = Skip(kind: resource.type, remoteID: remoteID,
                                    reason: "resource type \(resource.type) has no mapping; kept as an observation entry with its raw resource")
                    if let recordIndex {
                        batch.records[recordIndex].entries.append(entry)
                        batch.records[recordIndex].keptUnmapped.append(note)
                    } else {
                        batch.unattached.append(UnattachedEntry(patientReference: reference, entry: entry))
                        batch.keptUnmapped.append(note)
                    }
                    continue
                }
                skip = Skip(kind: resource.type, remoteID: remoteID, reason: resource.type == "Medication"
                    ? "Medication resources are read only through the medication entries that reference them"
                    : "unsupported resource type \(resource.type) (not about a patient)")
            } catch {
                skip = Skip(kind: resource.type, remoteID: remoteID, reason: Self.reason(error))
            }
            if let recordIndex { batch.records[recordIndex].skipped.append(skip) } else { batch.skipped.append(skip) }
        }
        return batch
    }

    private static func reason(_ error: Error) -> String {
        if case RecordsError.malformed(let message) = error { return message }
        return "\(error)"
    }

    /// `subject.reference`, else `patient.reference` (AllergyIntolerance, Immunization), read
    /// without judging the resource: a wrong type here shows when the resource itself is mapped.
    private static func patientReference(_ resource: JSONObject) -> String? {
        for key in ["subject", "patient"] {
            if let reference = resource[key]?.object?["reference"]?.string.flatMap(nonEmpty) { return reference }
        }
        return nil
    }

    /// A reference as a fullUrl of the input, or as `[base/]Patient/<id>[/_history/<version>]`.
    private static func resolve(_ reference: String, in index: [String: Int]) -> Int? {
        if let found = index[reference] { return found }
        var reference = Substring(reference)
        if let history = reference.range(of: "/_history/") {
            reference = reference[..<history.lowerBound]
            if let found = index[String(reference)] { return found }
        }
        let segments = reference.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[segments.count - 2] == "Patient" else { return nil }
        return index["Patient/\(segments[segments.count - 1])"]
    }
}
