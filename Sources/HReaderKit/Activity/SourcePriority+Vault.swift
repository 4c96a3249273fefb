import HReaderStore

/// One source of samples in the order its activity counts (`hreader sources priority`).
public struct RankedSource: Sendable, Equatable {
    public let name: String
    /// Its kind, guessed from its name (what orders the sources not named).
    public let kind: SourcePriority.Kind
    /// Whether it was named with `sources priority NAME …` (else it is placed by kind, then name).
    public let named: Bool
    /// How many sample series (kinds of readings, of any person) it wrote.
    public let series: Int
}

extension OpenVault {
    /// The vault's sources of samples in the order their activity counts.
    public func sourcePriority() throws -> [RankedSource] {
        try read { try rankedSources(SourcePriority.load(db)) }
    }

    /// Puts `names` first, in that order; every other source follows by kind, then name. A name no
    /// sample source has, or one given twice, is a usage error and changes nothing. Day totals are
    /// computed from the stored samples at every read, so the next answer follows the new order.
    @discardableResult
    public func setSourcePriority(_ names: [String]) throws -> [RankedSource] {
        try write {
            let known = try SampleReadings(db).sources()
            let knownNames = Set(known.map(\.name))
            var seen: Set<String> = []
            for name in names {
                guard seen.insert(name).inserted else { throw HReaderError.usage("'\(name)' is given twice") }
                guard knownNames.contains(name) else {
                    let list = known.map { "'\($0.name)'" }.joined(separator: ", ")
                    throw HReaderError.usage("no source of samples is named '\(name)'"
                                             + (known.isEmpty ? " (the vault has no samples yet)" : "; the sources are \(list)"))
                }
            }
            let priority = SourcePriority(named: names)
            try priority.save(db)
            try AuditLog(db).record("sources priority", detail: names.isEmpty ? "reset" : "\(names.count) named")
            return try rankedSources(priority)
        }
    }

    /// Back to the default order (watches and bands, apps, phones; then by name).
    @discardableResult
    public func resetSourcePriority() throws -> [RankedSource] { try setSourcePriority([]) }

    private func rankedSources(_ priority: SourcePriority) throws -> [RankedSource] {
        let known = try SampleReadings(db).sources()
        let counts = Dictionary(known.map { ($0.name, $0.series) }, uniquingKeysWith: +)
        let named = Set(priority.named)
        return priority.ordered(known.map(\.name)).map {
            RankedSource(name: $0, kind: SourcePriority.kind(of: $0), named: named.contains($0), series: counts[$0] ?? 0)
        }
    }
}
