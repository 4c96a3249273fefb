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
    /// `zone` (the local one, as the timeline counts days, unless a caller names another) places a
    /// date without a time at the start of its day, through Model's one calendar (`DayCalendar`); an
    /// instant needs none, and the local zone is only read when it is needed.
    public static func parse(_ text: String, zone: DayZone = .local) -> ClinicalTime? {
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
        let month = numbers.count > 1 ? numbers[1] : 1, day = numbers.count > 2 ? numbers[2] : 1
        guard (1...12).contains(month), (1...31).contains(day), let days = DayCalendar.day(year: numbers[0], month: month, day: day) else {
            return nil
        }
        // The day's first second in the zone, as Calendar's `date(from:)` finds it (a skipped midnight is
        // the moment of the change); a day the zone skipped whole (Apia, 30 December 2011) is no date there.
        let start = DayCalendar(zone).instant(ofWall: days * 86_400)
        guard DayCalendar.floorDivide(start.epoch + start.offset, 86_400) == days else { return nil }
        return ClinicalTime(text: trimmed, epoch: start.epoch)
    }
}
