/// What the mapping makes of every sample of one series.
public struct SeriesMapping: Sendable {
    public var type: EntryType
    public var description: String
    public var codes: [String: [String]]

    public init(type: EntryType, description: String, codes: [String: [String]]) {
        self.type = type; self.description = description; self.codes = codes
    }
}
