import HReaderModel
import HReaderStore

/// The one day totaller of activity samples (steps, distance, energy): per local day and
/// description, each day counted once whatever number of devices counted it (`SourceOverlap`,
/// in the order of `SourcePriority`). The timeline (every page length), the activity tile and
/// the web view read their days here; the export's hour and day buckets weigh with the same rules.
///
/// Where one source has readings of a description on a day (nearly every day of one device), SQLite
/// adds them (`SampleReadings.totals`), as before. A description that several sources write is read
/// a day at a time as (start, end, value) instead, once, and weighed when that day has more than one
/// source in it.
struct ActivityTotals {
    /// One day's total of a description.
    struct Total {
        let day: (start: Int64, end: Int64, text: String)
        let description: String
        let unit: String?
        let sum: Double
        /// The first reading's (time, id); the id is Int64.max where it was not read (after any
        /// entry of that second: entries' ids are lower).
        let first: (Int64, Int64)
    }

    let db: Database
    let priority: SourcePriority
    private var calendar: DayCalendar

    init(db: Database, zone: DayZone, priority: SourcePriority) {
        self.db = db
        self.priority = priority
        calendar = DayCalendar(zone)
    }

    /// Reads the vault's priority.
    init(db: Database, zone: DayZone) throws {
        self.init(db: db, zone: zone, priority: try SourcePriority.load(db))
    }

    /// The totals of `series` (activity series) per local day, for their readings that start in
    /// [from, to], and those that start before `from` and end in it (on the day they start, as their
    /// rows are), a description and a day at a time.
    mutating func forEachTotal(of series: [SampleReadings.Series], from: Int64, to: Int64, _ body: (Total) throws -> Void) throws {
        guard !series.isEmpty else { return }
        let readings = SampleReadings(db)
        let ranks = priority.ranks(series.map(\.source))
        let byID = Dictionary(uniqueKeysWithValues: series.map { ($0.id, $0) })
        var single: [SampleReadings.Series] = []
        var shared: [(description: String, unit: String?, series: [SampleReadings.Series])] = []
        for (description, list) in Dictionary(grouping: series, by: \.description).sorted(by: { $0.key < $1.key }) {
            if Set(list.map(\.source)).count > 1 {
                shared.append((description, list.first?.unit, list.sorted { $0.id < $1.id }))
            } else {
                single += list
            }
        }
        single.sort { $0.id < $1.id }
        func sample(_ span: SampleReadings.Span) -> SourceOverlap.Sample {
            SourceOverlap.Sample(rank: ranks[byID[span.seriesID]!.source] ?? Int.max, start: span.start, end: span.end, value: span.number)
        }

        // Long samples the range begins inside: one at a time where one source writes the description,
        // else kept for the day they start, to be weighed with it.
        var carried: [Int: [Int64: [SourceOverlap.Sample]]] = [:]
        var carriedDays: [Int64: (start: Int64, end: Int64, text: String)] = [:]
        for s in single {
            for reading in try readings.overhanging(s, from: from, to: to) {
                if let number = reading.number {
                    try body(Total(day: calendar.day(containing: reading.start), description: s.description, unit: s.unit, sum: number,
                                   first: (reading.start, reading.id)))
                }
            }
        }
        for (index, group) in shared.enumerated() {
            for s in group.series {
                for span in try readings.overhangingSpans(s, from: from, to: to) {
                    let day = calendar.day(containing: span.start)
                    carriedDays[day.start] = day
                    carried[index, default: [:]][day.start, default: []].append(sample(span))
                }
            }
        }

        // From the first reading to the last: an empty stretch of a long range costs nothing.
        if let span = try readings.starts(of: series.map(\.id), from: from, to: to) {
            let singleIDs = single.map(\.id)
            var time = span.first
            while time <= span.last {
                let day = calendar.day(containing: time)
                let last = min(day.end - 1, to)
                if !singleIDs.isEmpty {
                    for total in try readings.totals(of: singleIDs, startingFrom: time, to: last) {
                        guard let s = byID[total.seriesID] else { continue }
                        if let first = total.firstStart {
                            try body(Total(day: day, description: s.description, unit: s.unit, sum: total.sum, first: (first, Int64.max)))
                        }
                        if total.others > 0 {
                            for reading in try readings.textReadings(of: s.id, startingFrom: time, to: last) {
                                if let number = reading.number {
                                    try body(Total(day: day, description: s.description, unit: s.unit, sum: number, first: (reading.start, reading.id)))
                                }
                            }
                        }
                    }
                }
                for (index, group) in shared.enumerated() {
                    var samples = try readings.spans(of: group.series.map(\.id), startingFrom: time, to: last).map(sample)
                    if let early = carried[index]?.removeValue(forKey: day.start) { samples += early }
                    guard let first = samples.map(\.start).min() else { continue }
                    try body(Total(day: day, description: group.description, unit: group.unit, sum: SourceOverlap.total(samples),
                                   first: (first, Int64.max)))
                }
                guard day.end > time else { break }
                time = day.end
            }
        }
        // Long samples of days the loop did not reach (a range that begins at midnight).
        for (index, days) in carried.sorted(by: { $0.key < $1.key }) {
            for (start, samples) in days.sorted(by: { $0.key < $1.key }) where !samples.isEmpty {
                try body(Total(day: carriedDays[start]!, description: shared[index].description, unit: shared[index].unit,
                               sum: SourceOverlap.total(samples), first: (samples.map(\.start).min()!, Int64.max)))
            }
        }
    }
}
