import Foundation
import HReaderJSON
import HReaderModel

/// One applet declared in a property list: what it is called, what runs it, and its configuration.
///
///     <dict>
///         <key>identifier</key>   <string>org.mitre.hreader.bloodpressure</string>
///         <key>class_name</key>   <string>HRBloodPressureAppletTile</string>
///         <key>display_name</key> <string>Blood Pressure</string>
///     </dict>
public struct AppletDeclaration: Sendable {
    public enum Implementation: Sendable {
        /// Built into hreader (hReader's `class_name`s map here).
        case builtIn(BuiltInApplet)
        /// An external program (`executable`), given only the entry types it is granted.
        case plugin(PluginSpecification)
        /// Declared, but nothing hreader can run on a terminal (hReader's image and HTML tiles).
        case none
    }

    /// Reverse-DNS, unique across the loaded lists.
    public let identifier: String
    public let displayName: String
    /// The `class_name` as written, when there is one.
    public let className: String?
    public let implementation: Implementation
    /// Why the applet cannot show a tile here; nil when it can.
    public let unavailableReason: String?
    /// Every key other than `identifier`, `display_name`, `class_name`, `executable` and `entry_types`.
    public let configuration: [(String, JSONValue)]
    /// The plist it came from ("built-in" for the list inside the binary).
    public let origin: String
    /// Position in its plist (1-based), for messages.
    public let entryNumber: Int

    public var isAvailable: Bool { unavailableReason == nil }

    public var kind: String {
        switch implementation {
        case .builtIn: return "built-in"
        case .plugin: return "plugin"
        case .none: return "hReader only"
        }
    }

    public func configurationValue(_ key: String) -> JSONValue? {
        configuration.first { $0.0 == key }?.1
    }

    /// A number from the configuration (a plist `integer`, `real`, or a string that reads as one).
    public func configurationNumber(_ key: String) -> Double? {
        switch configurationValue(key) {
        case let value? where value.number != nil: return value.number
        case let .string(s)?: return Double(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }
}

/// How an external plugin runs (DESIGN.md §6, `docs/applets.md`).
public struct PluginSpecification: Sendable, Equatable {
    /// Absolute path; a relative `executable` is resolved against its plist's directory.
    public let executable: String
    /// The only entry types the plugin receives.
    public let entryTypes: [EntryType]
    /// Seconds the plugin may run (plist key `timeout`; default 10, at most 120).
    public let timeout: TimeInterval
    /// Bytes the plugin may write to stdout (plist key `max_output_bytes`; default 1 MiB, at most 16 MiB).
    public let maxOutputBytes: Int

    public static let defaultTimeout: TimeInterval = 10
    public static let maximumTimeout: TimeInterval = 120
    public static let defaultMaxOutputBytes = 1 << 20
    public static let maximumMaxOutputBytes = 16 << 20
}

/// The applets built into hreader, each named by the hReader class it stands for.
public enum BuiltInApplet: String, CaseIterable, Sendable {
    case bloodPressure, bmi, oxygenSaturation, respiratoryRate, totalCholesterol
    case medications, encounters, immunizations, functionalStatus, symptoms, activity

    /// The `class_name` that selects it (hReader's, or hreader's own for activity).
    public var className: String {
        switch self {
        case .bloodPressure: return "HRBloodPressureAppletTile"
        case .bmi: return "HRBMIVitalAppletTile"
        case .oxygenSaturation: return "HROxygenSaturationAppletTile"
        case .respiratoryRate: return "HRRespiratoryRateAppletTile"
        case .totalCholesterol: return "HRTotalCholesterolAppletTile"
        case .medications: return "HRMedicationsAppletTile"
        case .encounters: return "HREncountersAppletTile"
        case .immunizations: return "HRImmunizationsAppletTile"
        case .functionalStatus: return "HRFunctionalStatusAppletTile"
        case .symptoms: return "TBITrackerAppletTile"
        case .activity: return "HRActivityAppletTile"
        }
    }

    public init?(className: String) {
        guard let found = Self.allCases.first(where: { $0.className == className }) else { return nil }
        self = found
    }

    /// hReader classes that have no terminal form, with the reason shown in `applets available`.
    public static let unavailableClasses: [String: String] = [
        "HRImageAppletTile": "an image placeholder: hReader showed a fixed picture with no data behind it",
        "HRPopHealthAppletTile": "an HTML tile (tile_url): it needs a web view and a popHealth server",
        "HRAppletTile": "hReader's abstract base class, not an applet",
        "HRVitalAppletTile": "hReader's abstract base class, not an applet",
    ]
}
