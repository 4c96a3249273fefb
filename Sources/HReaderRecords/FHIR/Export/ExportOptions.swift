import HReaderModel

/// `--group`: whether high-frequency samples (steps, energy) are summed per local hour or day.
public enum ExportGrouping: String, CaseIterable, Sendable {
    case none, hour, day
}

/// What to export of a patient's record.
public struct ExportOptions: Sendable {
    /// The entry types `export` sends by default, and those it can send at all (as Observations).
    public static let defaultTypes: Set<EntryType> = [.vitalSign, .activity, .result]
    public static let exportableTypes: [EntryType] = [.vitalSign, .activity, .result, .symptom, .observation]

    public var types: Set<EntryType>
    /// Only entries whose time is at or after this instant.
    public var since: ClinicalTime?
    public var grouping: ExportGrouping
    /// Observations per transaction Bundle.
    public var batchSize: Int
    /// Also the patient's documents, as DocumentReferences with their bytes inline (`--out` only).
    public var withDocuments: Bool

    public init(types: Set<EntryType> = ExportOptions.defaultTypes, since: ClinicalTime? = nil, grouping: ExportGrouping = .none,
                batchSize: Int = 100, withDocuments: Bool = false) {
        self.types = types; self.since = since; self.grouping = grouping; self.batchSize = batchSize; self.withDocuments = withDocuments
    }
}
