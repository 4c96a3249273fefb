import Foundation
import HReaderModel

/// A sample series as a search shows it: what it measures, how many readings, when the first and
/// the last were taken, and the latest value. Read from the series table and three lookups in the
/// samples' own order (series, start): no sample is read but the latest.
public struct SeriesSummary: Sendable, Equatable {
    public let id: Int64
    public let patientID: Int64
    public let type: EntryType
    public let description: String
    /// Apple Health's type identifier (`HKQuantityTypeIdentifierBloodGlucose`).
    public let kind: String
    public let unit: String
    public let codes: [String: [String]]
    public let count: Int
    public let first: Int64?
    public let last: Int64?
    /// The newest reading as its entry shows it (`SampleRepository.value`): a number, or else words.
    public let latestNumber: Double?
    public let latestText: String?
}

extension EntryRepository {
    /// Every series of a patient (nil: of everyone), of one `type` or all.
    public func seriesSummaries(patientID: Int64?, type: EntryType?) throws -> [SeriesSummary] {
        var conditions: [String] = [], arguments: [DatabaseValueConvertible?] = []
        if let patientID { conditions.append("patient_id = ?"); arguments.append(patientID) }
        if let type { conditions.append("type = ?"); arguments.append(type.rawValue) }
        return try db.query("""
            SELECT id, patient_id, type, description, hk_type, unit, codes, sample_count,
                   (SELECT start_epoch FROM samples WHERE series_id = ss.id ORDER BY start_epoch LIMIT 1),
                   (SELECT start_epoch FROM samples WHERE series_id = ss.id ORDER BY start_epoch DESC LIMIT 1),
                   (SELECT value FROM samples WHERE series_id = ss.id ORDER BY start_epoch DESC LIMIT 1)
            FROM sample_series ss\(conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")) ORDER BY id
            """, arguments) { s in
            // The newest value as its entry shows it: a text that reads as a number is one, other text in words.
            let latest: (number: Double?, text: String?) =
                s.isReal(10) ? (s.double(10), nil) : s.string(10).map(SampleRepository.value(text:)) ?? (nil, nil)
            return SeriesSummary(id: s.int64(0)!, patientID: s.int64(1)!, type: EntryType(rawValue: s.string(2) ?? "") ?? .observation,
                                 description: s.string(3) ?? "", kind: s.string(4) ?? "", unit: s.string(5) ?? "",
                                 codes: CodesJSON.decode(s.string(6) ?? "{}"), count: Int(s.int64(7) ?? 0), first: s.int64(8), last: s.int64(9),
                                 latestNumber: latest.number, latestText: latest.text)
        }
    }
}
