import Foundation

/// A point in time as a clinical source wrote it, and the instant it stands for.
///
/// `text` keeps the source's precision and offset ("2012", "2012-05", "2012-05-01",
/// "2012-05-01T23:30:00+02:00"); `epoch` is the instant (UTC seconds) used for ordering and ranges.
/// Partial dates and bare dates stand for the start of the period at local midnight, the zone the
/// person reads their timeline in.
public struct ClinicalTime: Equatable, Hashable, Codable, Sendable {
    public let text: String
    public let epoch: Int64

    public init(text: String, epoch: Int64) {
        self.text = text
        self.epoch = epoch
    }

    /// An instant, written as RFC 3339 in UTC.
    public init(epoch: Int64) {
        self.epoch = epoch
        self.text = RFC3339.utc(epoch)
    }

    public var date: Date { Date(timeIntervalSince1970: TimeInterval(epoch)) }

    /// Parses FHIR/RFC 3339 date-times (with or without fractional seconds), full dates,
    /// "YYYY-MM" and "YYYY". Nil when the text is none of these.
    /// `timeZone` (the local one when nil) places a date without a time; an instant needs none, and
    /// reading the local zone costs a command's start-up (the zone database) when it is not needed.
    public static func parse(_ text: String, timeZone: TimeZone? = nil) -> ClinicalTime? {
        let trimmed = text.trimmingSpaces()
        if trimmed.contains("T") {
            if let epoch = rfc3339Instant(trimmed) { return ClinicalTime(text: trimmed, epoch: epoch) }
            // Foundation's parser is lenient (it read "-629999-01-01T…" as a year): only the RFC 3339
            // shape that the fast path declined for its value (a year before 1600, a leap second) goes to it.
            guard hasRFC3339Shape(trimmed) else { return nil }
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let d = f.date(from: trimmed) { return ClinicalTime(text: trimmed, epoch: Int64(d.timeIntervalSince1970.rounded(.down))) }
            f.formatOptions = [.withInternetDateTime]
            if let d = f.date(from: trimmed) { return ClinicalTime(text: trimmed, epoch: Int64(d.timeIntervalSince1970)) }
            return nil
        }
        let parts = trimmed.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count),
              parts[0].count == 4, parts.dropFirst().allSatisfy({ $0.count == 2 }),
              parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else { return nil }
        let numbers = parts.compactMap { Int($0) }
        var components = DateComponents()
        components.year = numbers[0]
        components.month = numbers.count > 1 ? numbers[1] : 1
        components.day = numbers.count > 2 ? numbers[2] : 1
        guard (1...12).contains(components.month!), (1...31).contains(components.day!) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone ?? .current
        guard let d = calendar.date(from: components),
              calendar.component(.day, from: d) == components.day else { return nil }
        return ClinicalTime(text: trimmed, epoch: Int64(d.timeIntervalSince1970))
    }
}
