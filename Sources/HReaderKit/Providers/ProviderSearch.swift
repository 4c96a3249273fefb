import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HReaderRecords

/// What `hreader providers search` asks.
public struct ProviderQuery: Sendable {
    public var text: String
    /// A two-letter state ("WI"): only brands with a place there.
    public var state: String?
    /// Only brands with a place in this city (its words, as folded).
    public var city: String?
    public var limit: Int

    public init(text: String, state: String? = nil, city: String? = nil, limit: Int = 20) {
        self.text = text
        self.state = state
        self.city = city
        self.limit = limit
    }
}

/// One brand found, with how well it matched.
public struct ProviderHit: Sendable {
    public var brand: DirectoryBrand
    public var score: Int
    /// Its name, folded, is the query's words (in any order).
    public var exactName: Bool
}

extension ProviderDirectory {
    /// The brands matching every word of the query (in any order, any case, accents folded, "St."
    /// as "Saint", a word's start, or one typo in a word of four letters or more), best first: a
    /// word found exactly before a start or a typo, in the name before an alias or the portal's
    /// name before a city; then brands whose name is the query, then those with an R4
    /// patient-access endpoint, then shorter names, then by name.
    public func search(_ query: ProviderQuery) throws -> [ProviderHit] {
        guard exists else { throw Self.missing() }
        let reader = try Reader(path: path)
        defer { reader.close() }
        let words = Array(Set(DirectoryText.words(query.text))).map { Array($0.utf8) }
        let state = query.state.map { Array($0.uppercased().utf8) }
        let city = query.city.map { Array(DirectoryText.words($0).joined(separator: " ").utf8) }
        guard !words.isEmpty || state != nil || city != nil else { return [] }
        let sortedQuery = DirectoryText.words(query.text).sorted()

        struct Candidate {
            var score: Int
            var exact: Bool
            var r4: Bool
            var offset: UInt64
            var name: Range<Int>
        }
        var candidates: [Candidate] = []
        reader.withSections { index, wordsSection in
            // The index lines to look at: those of the brands every query word is found in (by the
            // words section: each word of the directory compared once), with their scores; without
            // words, every line.
            var lines: [(start: Int, score: Int32)] = []
            if words.isEmpty {
                var start = 0
                while start < index.count {
                    lines.append((start, 0))
                    start = Self.lineEnd(index, start) + 1
                }
            } else {
                var best = [[Int: Int32]](repeating: [:], count: words.count)
                var similarities = [Int32](repeating: 0, count: words.count)
                var start = 0
                while start < wordsSection.count {
                    let end = Self.lineEnd(wordsSection, start)
                    defer { start = end + 1 }
                    var tab = start
                    while tab < end && wordsSection[tab] != 0x09 { tab += 1 }
                    guard tab < end else { continue }
                    let word = UnsafeBufferPointer(rebasing: wordsSection[start..<tab])
                    var any = false
                    for (w, queryWord) in words.enumerated() {
                        let similarity = queryWord.withUnsafeBufferPointer { DirectoryText.similarity($0, word) }
                        similarities[w] = Int32(similarity.rawValue * 4)
                        any = any || similarity != .none
                    }
                    guard any else { continue }
                    var number = 0
                    var digits = false
                    for i in (tab + 1)...end {
                        let byte: UInt8 = i < end ? wordsSection[i] : 0x20
                        if byte >= 0x30 && byte <= 0x39 {
                            number = number &* 10 &+ Int(byte - 0x30)
                            digits = true
                            continue
                        }
                        guard digits else { continue }
                        let line = number >> 2, field = number & 3
                        number = 0
                        digits = false
                        guard line < index.count else { continue }
                        let weight: Int32 = field == 0 ? 3 : field == 3 ? 1 : 2
                        for w in 0..<similarities.count where similarities[w] > 0 {
                            let value = similarities[w] + weight
                            if value > best[w][line, default: 0] { best[w][line] = value }
                        }
                    }
                }
                // Brands found by every word: the rarest word's brands, checked against the others.
                let order = best.indices.sorted { best[$0].count < best[$1].count }
                for (line, first) in best[order[0]] {
                    var score = first
                    var all = true
                    for w in order.dropFirst() {
                        guard let value = best[w][line] else { all = false; break }
                        score += value
                    }
                    if all { lines.append((line, score)) }
                }
            }

            for (start, score) in lines {
                guard let line = Self.indexLine(index, start, Self.lineEnd(index, start)) else { continue }
                if let state, !Self.containsWord(index, line.states, state) { continue }
                // Fields: name | aliases | portal | cities (cities separated by ',').
                var nameEnd = -1, lastBar = -1, bars = 0
                var i = line.words.lowerBound
                while i < line.words.upperBound {
                    if index[i] == 0x7c {
                        if bars == 0 { nameEnd = i }
                        lastBar = i
                        bars += 1
                    }
                    i += 1
                }
                guard bars == 3 else { continue }
                if let city, !Self.containsCity(index, (lastBar + 1)..<line.words.upperBound, city) { continue }
                let nameRange = line.words.lowerBound..<nameEnd
                var exact = false
                if !sortedQuery.isEmpty, index[nameRange].reduce(1, { $0 + ($1 == 0x20 ? 1 : 0) }) == sortedQuery.count {
                    let nameWords = String(decoding: UnsafeBufferPointer(rebasing: index[nameRange]), as: UTF8.self)
                        .split(separator: " ").map(String.init).sorted()
                    exact = nameWords == sortedQuery
                }
                candidates.append(Candidate(score: Int(score), exact: exact, r4: line.r4, offset: line.offset, name: nameRange))
            }
            candidates.sort { a, b in
                if a.score != b.score { return a.score > b.score }
                if a.exact != b.exact { return a.exact }
                if a.r4 != b.r4 { return a.r4 }
                if a.name.count != b.name.count { return a.name.count < b.name.count }   // fewer words besides the ones asked
                if !index[a.name].elementsEqual(index[b.name]) { return index[a.name].lexicographicallyPrecedes(index[b.name]) }
                return a.offset < b.offset
            }
        }
        return try candidates.prefix(max(0, query.limit)).map {
            ProviderHit(brand: try reader.brand(at: $0.offset), score: $0.score, exactName: $0.exact)
        }
    }

    /// Where the line starting at `start` ends (its newline, or the end).
    static func lineEnd(_ buffer: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        guard start < buffer.count, let base = buffer.baseAddress else { return buffer.count }
        guard let found = memchr(base + start, 0x0a, buffer.count - start) else { return buffer.count }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// A space-separated list holds `word`.
    static func containsWord(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ word: [UInt8]) -> Bool {
        var start = range.lowerBound
        for i in range.lowerBound...range.upperBound where i == range.upperBound || buffer[i] == 0x20 {
            if i - start == word.count && buffer[start..<i].elementsEqual(word) { return true }
            start = i + 1
        }
        return false
    }

    /// A ','-separated list of cities holds `city` (its words, space-separated).
    static func containsCity(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ city: [UInt8]) -> Bool {
        var start = range.lowerBound
        for i in range.lowerBound...range.upperBound where i == range.upperBound || buffer[i] == 0x2c {
            if i - start == city.count && buffer[start..<i].elementsEqual(city) { return true }
            start = i + 1
        }
        return false
    }

    /// The brand a login names: its id, else the one brand whose name is the words given (or
    /// the one brand found). Several: `.ambiguous` with them, best first.
    public enum Resolution: Sendable {
        case found(DirectoryBrand)
        case ambiguous([DirectoryBrand])
        case none
    }

    public func resolve(_ reference: String, state: String? = nil) throws -> Resolution {
        if let brand = try brand(id: reference.trimmingCharacters(in: .whitespaces)) { return .found(brand) }
        let hits = try search(ProviderQuery(text: reference, state: state, limit: 50))
        let exact = hits.filter(\.exactName)
        if exact.count == 1 { return .found(exact[0].brand) }
        if exact.count > 1 { return .ambiguous(exact.map(\.brand)) }
        if hits.count == 1 { return .found(hits[0].brand) }
        if hits.isEmpty { return .none }
        return .ambiguous(Array(hits.prefix(10).map(\.brand)))
    }
}
