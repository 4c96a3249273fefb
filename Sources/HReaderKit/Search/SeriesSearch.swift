import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// A measurement series a search found by its name or code (a watch's heart rate, a meter's blood
/// glucose): one hit per patient and kind however many devices wrote it, with how many readings
/// there are, the first and last dates and the latest value. The readings themselves are not in the
/// text index (millions of numbers), so without this `search glucose` found nothing in a vault of
/// 2,438 glucose readings.
public struct SeriesSearchHit: Sendable {
    public let patientID: Int64
    public let type: EntryType
    public let description: String
    /// The stored series it stands for (one per source, device and unit).
    public let seriesIDs: [Int64]
    public let codes: [String: [String]]
    public let count: Int
    public let first: ClinicalTime?
    public let last: ClinicalTime?
    /// The newest reading, in the units people read.
    public let latest: ReadableQuantity?
    public let latestText: String?

    /// "2,438 readings, 2016-03-02 to 2026-11-20; latest 5.4 mmol/L".
    public var snippet: String {
        var digits = String(count)
        for index in stride(from: digits.count - 3, to: 0, by: -3) { digits.insert(",", at: digits.index(digits.startIndex, offsetBy: index)) }
        var text = "\(digits) reading\(count == 1 ? "" : "s")"
        if let first, let last {
            let (a, b) = (String(first.text.prefix(10)), String(last.text.prefix(10)))
            text += a == b ? ", \(a)" : ", \(a) to \(b)"
        }
        if let latest { text += "; latest \(latest.text)" } else if let latestText, !latestText.isEmpty { text += "; latest \(latestText)" }
        return text
    }
}

extension OpenVault {
    /// The series whose name, Apple Health type or codes hold every word of `query` (a word of three
    /// letters or more also as the start of a longer one, as the text search reads it). Call inside `read`.
    func seriesHits(_ query: SearchQuery, patientID: Int64?, type: EntryType?) throws -> [SeriesSearchHit] {
        let wanted = query.words.flatMap { SeriesWords.of($0) }
        guard !wanted.isEmpty else { return [] }
        let matching = try entries.seriesSummaries(patientID: patientID, type: type).filter { series in
            let words = Set(SeriesWords.of(series.description) + SeriesWords.ofIdentifier(series.kind)
                            + series.codes.values.flatMap { $0.flatMap { SeriesWords.of($0) } })
            return wanted.allSatisfy { w in words.contains(w) || (w.count >= 3 && words.contains { $0.hasPrefix(w) }) }
        }
        // One hit per patient, kind and name, its series together.
        var order: [String] = []
        var kinds: [String: [SeriesSummary]] = [:]
        for series in matching {
            let key = "\(series.patientID)\u{1F}\(series.type.rawValue)\u{1F}\(series.description)"
            if kinds[key] == nil { order.append(key) }
            kinds[key, default: []].append(series)
        }
        return order.map { key in
            let all = kinds[key]!
            let newest = all.max { ($0.last ?? .min) < ($1.last ?? .min) }!
            func time(_ epoch: Int64?) -> ClinicalTime? { epoch.map { ClinicalTime(epoch: $0) } }
            return SeriesSearchHit(
                patientID: newest.patientID, type: newest.type, description: newest.description, seriesIDs: all.map(\.id),
                codes: newest.codes, count: all.reduce(0) { $0 + $1.count },
                first: time(all.compactMap(\.first).min()), last: time(newest.last),
                latest: newest.latestNumber.map { ReadableUnits.quantity($0, unit: newest.unit, codes: newest.codes, description: newest.description) },
                latestText: newest.latestText)
        }
    }
}

/// The words a series is found by, folded as the text index folds them (case, accents).
enum SeriesWords {
    static func of(_ text: String) -> [String] {
        FoldedText.of(text).split { !($0.isLetter || $0.isNumber) }.map(String.init)
    }

    /// `HKQuantityTypeIdentifierBloodGlucose` → blood, glucose: the words of its name after HealthKit's prefix.
    static func ofIdentifier(_ identifier: String) -> [String] {
        var name = Substring(identifier)
        for prefix in ["HKQuantityTypeIdentifier", "HKCategoryTypeIdentifier", "HKCorrelationTypeIdentifier", "HKDataType"] where name.hasPrefix(prefix) {
            name = name.dropFirst(prefix.count)
        }
        var words: [String] = [], word = ""
        for character in name {
            if character.isUppercase, !word.isEmpty, !(word.last?.isUppercase ?? false) { words.append(word); word = "" }
            word.append(character)
        }
        if !word.isEmpty { words.append(word) }
        return words.flatMap { of($0) }
    }
}
