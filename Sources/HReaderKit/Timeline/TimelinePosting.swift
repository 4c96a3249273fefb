import Foundation
import HReaderJSON
import HReaderModel

/// What the user posts to the timeline, as hReader's web view did with `POST timeline.json?key=…`.
public enum TimelinePostKey: Sendable, Equatable {
    case levels, newMedication, medicationRegimen
    /// Any other key: stored as levels, as hReader did.
    case other(String)

    public init(_ key: String) {
        switch key.lowercased() {
        case "levels": self = .levels
        case "newmedication": self = .newMedication
        case "medregiment", "medregimen": self = .medicationRegimen
        default: self = .other(key)
        }
    }

    /// The stored item type.
    public var itemType: String {
        switch self {
        case .levels, .other: return "levels"
        case .newMedication: return "medication"
        case .medicationRegimen: return "regimen"
        }
    }
}

extension OpenVault {
    /// Stores a timeline item for `patient` at `time`; `data` must be a non-empty JSON object.
    /// Values of `levels` are kept as posted (hReader posted strings).
    public func postTimelineItem(patient: Patient, key: TimelinePostKey, data: JSONValue, at time: Date = Date()) throws -> TimelineItem {
        guard case let .object(members) = data else { throw HReaderError.badInput("the timeline item is not a JSON object") }
        guard !members.isEmpty else { throw HReaderError.badInput("a timeline item needs at least one field") }
        return try write {
            let item = try timelineItems.add(patientID: patient.id, type: key.itemType, data: data.serialized(),
                                             time: Int64(time.timeIntervalSince1970.rounded(.down)))
            try audit.record("timeline.add", subject: patient.uuid, detail: key.itemType)
            return item
        }
    }

    /// The timeline payload for `patient`.
    public func timeline(patient: Patient, query: TimelineQuery) throws -> JSONValue {
        try read { try query.run(patientID: patient.id, db: db) }
    }

    /// The same page written compact straight to `out` (no tree): what the CLI and the web serve.
    public func writeTimeline(patient: Patient, query: TimelineQuery, to out: inout JSONByteWriter) throws {
        try read { try query.write(patientID: patient.id, db: db, to: &out) }
    }
}
