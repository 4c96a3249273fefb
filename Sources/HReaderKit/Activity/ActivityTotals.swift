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
    private var priority: SourcePriority?
    private var calendar: DayCalendar

    /// Reads the vault's priority when a description turns out to have several sources.
    init(db: Database, zone: DayZone) {
        self.db = db
        priority = nil
        calendar = DayCalendar(zone)
    }

    /// Ranges up to this long walk their local days one by one rather than asking each series where
    /// its readings begin and end (two lookups a series, more than a day page's own statements).
    static let shortRangeSeconds: Int64 = 3 * 86_400

    /// The totals of `series` (activity series) per local day, for their readings that start in
    /// [from, to], and those that start before `from` and end in it (on the day they start, as their
    /// rows are), a description and a day at a time.
    ///
    /// Plain arrays throughout: a day page calls this once per process, where each new generic
    /// dictionary type costs a scan of the binary's protocol conformances (docs/performance.md).
    mutating func forEachTotal(of series: [SampleReadings.Series], from: Int64, to: Int64, _ body: (Total) throws -> Void) throws {
        guard !series.isEmpty else { return }
        let readings = SampleReadings(db)
        // Descriptions one source writes (`single`, by id) and those several do (`shared`, by
        // description, each group's series by id).
        let byDescription = series.sorted { ($0.description, $0.id) < ($1.description, $1.id) }
        var single: [SampleReadings.Series] = []
        var shared: [(description: String, unit: String?, series: [SampleReadings.Series])] = []
        var index = 0
        while index < byDescription.count {
            var end = index + 1
            var sources = 1
            while end < byDescription.count, byDescription[end].description == byDescription[index].description {
                if !byDescription[index..<end].contains(where: { $0.source == byDescription[end].source }) { sources += 1 }
                end += 1
            }
            if sources > 1 {
                shared.append((byDescription[index].description, byDescription[index].unit, Array(byDescription[index..<end])))
            } else {
                single += byDescription[index..<end]
            }
            index = end
        }
        single.sort { $0.id < $1.id }
        func lookup(_ id: Int64) -> SampleReadings.Series? { series.first { $0.id == id } }
        // Each shared series' place in the source priority, read only when a description is shared.
        var ranks: [(series: Int64, rank: Int)] = []
        if !shared.isEmpty {
            if priority == nil { priority = try SourcePriority.load(db) }
            let bySource = priority!.ranks(shared.flatMap { $0.series.map(\.source) })
            ranks = shared.flatMap { $0.series.map { ($0.id, bySource[$0.source] ?? Int.max) } }
        }
        func rank(_ series: Int64) -> Int { ranks.first { $0.series == series }?.rank ?? Int.max }
        func sample(_ span: SampleReadings.Span) -> SourceOverlap.Sample {
            SourceOverlap.Sample(rank: rank(span.seriesID), start: span.start, end: span.end, value: span.number)
        }

        // Long samples the range begins inside (one statement for every series): one at a time where
        // one source writes the description, else kept for the day they start, to be weighed with it.
        var carried: [(group: Int, day: (start: Int64, end: Int64, text: String), sample: SourceOverlap.Sample)] = []
        let overhanging = try readings.overhanging(series, from: from, to: to)
        for s in single {
            for reading in overhanging where reading.seriesID == s.id {
                if let number = reading.number {
                    try body(Total(day: calendar.day(containing: reading.start), description: s.description, unit: s.unit, sum: number,
                                   first: (reading.start, reading.id)))
                }
            }
        }
        for (index, group) in shared.enumerated() {
            for s in group.series {
                for reading in overhanging where reading.seriesID == s.id {
                    guard let number = reading.number else { continue }
                    carried.append((index, calendar.day(containing: reading.start),
                                    SourceOverlap.Sample(rank: rank(s.id), start: reading.start, end: reading.end, value: number)))
                }
            }
        }

        // From the first reading to the last: an empty stretch of a long range costs nothing. A
        // short range walks its few days instead.
        let span: (first: Int64, last: Int64)?
        if to - from <= Self.shortRangeSeconds {
            span = from <= to ? (from, to) : nil
        } else {
            span = try readings.starts(of: series.map(\.id), from: from, to: to)
        }
        if let span {
            let singleIDs = single.map(\.id)
            var time = span.first
            while time <= span.last {
                let day = calendar.day(containing: time)
                let last = min(day.end - 1, to)
                if !singleIDs.isEmpty {
                    for total in try readings.totals(of: singleIDs, startingFrom: time, to: last) {
                        guard let s = lookup(total.seriesID) else { continue }
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
                    samples += carried.lazy.filter { $0.group == index && $0.day.start == day.start }.map(\.sample)
                    carried.removeAll { $0.group == index && $0.day.start == day.start }
                    guard let first = samples.map(\.start).min() else { continue }
                    try body(Total(day: day, description: group.description, unit: group.unit, sum: SourceOverlap.total(samples),
                                   first: (first, Int64.max)))
                }
                guard day.end > time else { break }
                time = day.end
            }
        }
        // Long samples of days the loop did not reach (a range that begins at midnight), by group, then day.
        carried.sort { ($0.group, $0.day.start) < ($1.group, $1.day.start) }
        var next = 0
        while next < carried.count {
            var end = next + 1
            while end < carried.count, carried[end].group == carried[next].group, carried[end].day.start == carried[next].day.start { end += 1 }
            let samples = carried[next..<end].map(\.sample)
            try body(Total(day: carried[next].day, description: shared[carried[next].group].description, unit: shared[carried[next].group].unit,
                           sum: SourceOverlap.total(samples), first: (samples.map(\.start).min()!, Int64.max)))
            next = end
        }
    }
}
