import Foundation
import HReaderModel
import HReaderStore

/// One clinical fact as a reader sees it: the copy shown, every stored copy with its source, and
/// what the copies disagree on (docs/reconciliation.md).
public struct ReconciledFact: Sendable {
    public var shown: Entry
    /// Every copy, the shown one first.
    public var copies: [Entry]
    public var sources: [EntryRepository.Copy]
    /// What the copies say differently, one line per field: "status: active (Hospital A), resolved (Dr B)".
    public var differences: [String]
    /// The SMART Health Card checks of the copies a card brought, by entry id.
    public var verifications: [Int64: EntryVerification] = [:]

    /// The fact's card check: the shown copy's, else the first copy's a card brought.
    public var verification: EntryVerification? {
        verifications[shown.id] ?? copies.lazy.compactMap { verifications[$0.id] }.first
    }
}

extension OpenVault {
    /// The fact an entry states, with all its copies.
    public func fact(of entry: Entry) throws -> ReconciledFact {
        try read {
            let sources = try entries.copies(of: entry.id)
            let copies = try sources.compactMap { try entries.get(id: $0.entryID) }
            let shown = copies.first ?? entry
            let all = copies.isEmpty ? [entry] : copies
            return ReconciledFact(shown: shown, copies: all, sources: sources, differences: Self.differences(copies, sources),
                                  verifications: try HealthCardRepository(db).verifications(of: all.map(\.id)))
        }
    }

    /// Where the copies of each listed fact disagree (status, value, dose…), by entry id: only facts
    /// several copies state, and that differ. `sources` is `factSources(of: listed)`.
    public func factDifferences(of listed: [Entry], sources: [Int64: [EntryRepository.Copy]]) throws -> [Int64: [String]] {
        var out: [Int64: [String]] = [:]
        for entry in listed where (sources[entry.id]?.count ?? 0) > 1 {
            let found = try fact(of: entry).differences
            if !found.isEmpty { out[entry.id] = found }
        }
        return out
    }

    /// The sources of each listed entry's fact, by entry id: every copy with its source (one for
    /// an entry no other source states).
    public func factSources(of listed: [Entry]) throws -> [Int64: [EntryRepository.Copy]] {
        try read {
            let names = Dictionary(try SourceRepository(db).all().map { ($0.id, $0.displayName) }, uniquingKeysWith: { a, _ in a })
            var out: [Int64: [EntryRepository.Copy]] = [:]
            for entry in listed {
                if !EntryRepository.isSample(entry), try entries.factID(of: entry.id) != nil {
                    out[entry.id] = try entries.copies(of: entry.id)
                } else {
                    out[entry.id] = [EntryRepository.Copy(entryID: entry.id, sourceID: entry.sourceID, sourceName: names[entry.sourceID] ?? "")]
                }
            }
            return out
        }
    }

    /// `hreader entries split ID`: the entry is a fact of its own from now on.
    public func splitFact(_ entry: Entry) throws {
        guard !EntryRepository.isSample(entry) else { throw HReaderError.usage("entry \(entry.id) is an Apple Health sample; samples are not grouped") }
        try write {
            let grouping = FactGrouping(db)
            // The joins it leaves are forgotten: its group (by its pointers) is regrouped whole.
            try grouping.split(entryID: entry.id)
            try grouping.regroup(patientID: entry.patientID, touched: [entry.id])
            try audit.record("entry.split", subject: entry.uuid)
        }
    }

    /// `hreader entries join A B`: the two entries state one fact, whatever the rules say.
    public func joinFacts(_ a: Entry, _ b: Entry) throws {
        for entry in [a, b] where EntryRepository.isSample(entry) {
            throw HReaderError.usage("entry \(entry.id) is an Apple Health sample; samples are not grouped")
        }
        guard a.id != b.id else { throw HReaderError.usage("an entry is one fact with itself already") }
        guard a.patientID == b.patientID else {
            throw HReaderError.usage("entries \(a.id) and \(b.id) are about two different people; facts are never joined across people")
        }
        guard a.content.type == b.content.type else {
            throw HReaderError.usage("entry \(a.id) is a \(a.content.type.rawValue) and \(b.id) a \(b.content.type.rawValue); only entries of one kind state one fact")
        }
        guard FactGrouping.groupedTypes.contains(a.content.type) else {
            throw HReaderError.usage("entries of kind \(a.content.type.rawValue) are not grouped into facts; only "
                + FactGrouping.groupedTypes.map(\.rawValue).joined(separator: ", ") + " are")
        }
        for entry in [a, b] where entry.user.deleted {
            throw HReaderError.usage("entry \(entry.id) is struck out; restore it first")
        }
        try write {
            let grouping = FactGrouping(db)
            try grouping.join(a.id, b.id)
            try grouping.regroup(patientID: a.patientID, touched: [a.id, b.id])
            try audit.record("entry.join", subject: a.uuid, detail: "with \(b.uuid)")
        }
    }

    /// The fields on which copies disagree, each value with the sources that say it.
    static func differences(_ copies: [Entry], _ sources: [EntryRepository.Copy]) -> [String] {
        guard copies.count > 1 else { return [] }
        let names = Dictionary(sources.map { ($0.entryID, $0.sourceName) }, uniquingKeysWith: { a, _ in a })
        let fields: [(String, (Entry) -> String?)] = [
            ("status", { $0.content.status }),
            ("value", { e in
                if let n = e.content.valueNumber { return (n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)) + (e.content.unit.map { " " + $0 } ?? "") }
                return e.content.valueText
            }),
            ("dose", { $0.content.dose }),
            ("end", { $0.content.end?.text }),
            ("reaction", { $0.content.reaction }),
            ("severity", { $0.content.severity }),
        ]
        var out: [String] = []
        for (field, read) in fields {
            var said: [(String, [String])] = []
            for copy in copies {
                let text = read(copy) ?? "not stated"
                if let i = said.firstIndex(where: { $0.0 == text }) { said[i].1.append(names[copy.id] ?? "source") }
                else { said.append((text, [names[copy.id] ?? "source"])) }
            }
            // Values that differ only in unit spelling or conversion are one value.
            if field == "value", said.count > 1, copies.allSatisfy({ $0.content.valueNumber != nil }),
               let first = copies.first, copies.dropFirst().allSatisfy({
                   UnitConversion.sameQuantity(first.content.valueNumber!, first.content.unit, $0.content.valueNumber!, $0.content.unit)
               }) { continue }
            guard said.count > 1, said.contains(where: { $0.0 != "not stated" }) else { continue }
            out.append("\(field): " + said.map { "\($0.0) (\($0.1.joined(separator: ", ")))" }.joined(separator: ", "))
        }
        return out
    }
}
