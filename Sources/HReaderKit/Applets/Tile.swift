import Foundation
import HReaderJSON

/// What an applet shows on a patient's summary (DESIGN.md §6): a headline value with its unit, whether it
/// is in the normal range, a few lines of detail, and when the newest data behind it is from.
///
///     Tile(identifier: "org.mitre.hreader.bloodpressure", title: "Blood Pressure", status: .attention,
///          value: "132/85", unit: "mm[Hg]", lines: ["normal 90-120/60-80"], updated: "2024-05-01")
public struct Tile: Equatable, Sendable {
    public enum Status: String, CaseIterable, Sendable {
        /// In the normal range (or, for lists, there is something to show).
        case normal
        /// Outside the normal range: hReader showed these in red.
        case attention
        /// No data, no rule for this patient, or the applet failed.
        case unknown
    }

    public var identifier: String
    public var title: String
    public var status: Status
    public var value: String?
    public var unit: String?
    public var lines: [String]
    /// When the newest data behind the tile is from, as the source wrote it (RFC 3339 or a date).
    public var updated: String?
    /// Set when the applet could not produce its tile; the summary still completes.
    public var error: String?

    public init(identifier: String, title: String, status: Status = .unknown, value: String? = nil, unit: String? = nil,
                lines: [String] = [], updated: String? = nil, error: String? = nil) {
        self.identifier = identifier
        self.title = title
        self.status = status
        self.value = value
        self.unit = unit
        self.lines = lines
        self.updated = updated
        self.error = error
    }

    /// The tile an applet shows when it failed: status unknown, the reason as its only line.
    public static func failure(identifier: String, title: String, _ reason: String) -> Tile {
        Tile(identifier: identifier, title: title, status: .unknown, lines: [reason], error: reason)
    }

    public var json: JSONValue {
        var members: JSONObject = [
            ("identifier", .string(identifier)), ("title", .string(title)), ("status", .string(status.rawValue)),
            ("value", value.map(JSONValue.string) ?? .null), ("unit", unit.map(JSONValue.string) ?? .null),
            ("lines", .array(lines.map(JSONValue.string))), ("updated", updated.map(JSONValue.string) ?? .null),
        ]
        if let error { members.append(("error", .string(error))) }
        return .object(members)
    }
}
