import HReaderModel
import HReaderStore

/// A timeline page's vital signs and activity from the samples' numbers (`SampleReadings`) rather
/// than from a row per sample: each vital-sign series is read as (start, id, number) and merged by
/// time with the entries of its description; the activity series are totalled a local day at a time
/// (`ActivityTotals`: by SQLite where one source wrote a description, else weighed by the source
/// priority). A month of a watch (115,000 samples at ten million) costs a third of what its rows did.
///
/// The page is the same as the rows make it, with one difference: a day's activity total adds each
/// series' readings first (SQLite's compensated sum), then the series, where the rows added every
/// reading in time order. Where readings are not whole numbers the two may differ in the last of a
/// double's seventeen digits.
struct SampleReadingsPage {
    enum NeedsRows: Error {
        /// A vital sign stored as text: a word, or "120/80" that becomes two groups.
        case vitalText
    }

    /// A reading an entry row gives a vital-sign group, waiting to be merged with the samples'.
    struct Contribution {
        let row: TimelineRow
        let number: Double?
    }

    /// Where a vital-sign reading comes from: an entry row, or a series' sample.
    enum VitalSource {
        case row(TimelineRow)
        case series(SampleReadings.Series)

        /// As the row or the sample's row says it.
        var unit: String? {
            switch self {
            case let .row(row): return row.unit
            case let .series(series): return series.unit
            }
        }
    }

    let readsVitals: Bool
    let readsActivity: Bool
    private let vitalSeries: [String: [SampleReadings.Series]]
    private let activitySeries: [SampleReadings.Series]
    private let ids: Set<Int64>

    init(series: [SampleReadings.Series], vitals: Bool, activity: Bool) {
        vitalSeries = vitals ? Dictionary(grouping: series.filter { $0.type == .vitalSign }, by: \.description) : [:]
        // A day's unit is that of its first reading; where the series of one description disagree on
        // their unit, which reading was first is for the rows to say.
        let byDescription = activity ? Dictionary(grouping: series.filter { $0.type == .activity }, by: \.description) : [:]
        activitySeries = byDescription.values.filter { Set($0.map(\.unit)).count == 1 }.flatMap { $0 }.sorted { $0.id < $1.id }
        readsVitals = !vitalSeries.isEmpty
        readsActivity = !activitySeries.isEmpty
        ids = Set(vitalSeries.values.flatMap { $0.map(\.id) } + activitySeries.map(\.id))
    }

    /// Whether the page reads this series as numbers (and not as rows).
    func reads(_ series: Int64) -> Bool { ids.contains(series) }

    /// The vital-sign groups: each description's series merged by (time, id) with what entry rows
    /// gave it (`rows`, in that order already). A group's units are its first reading's.
    func vitals(merging rows: [String: [Contribution]], from: Int64, to: Int64, db: Database) throws -> [String: TimelinePayload.Vitals] {
        var groups: [String: TimelinePayload.Vitals] = [:]
        var current: (description: String, group: TimelinePayload.Vitals)?
        try forEachVital(merging: rows, from: from, to: to, db: db) { description, source, _, _, number in
            if current?.description != description {
                if let done = current { groups[done.description] = done.group }
                current = (description, TimelinePayload.Vitals(units: source.unit))
            }
            if let number {
                current!.group.values.append(number)
            } else if case .series = source {
                throw NeedsRows.vitalText
            }
        }
        if let done = current { groups[done.description] = done.group }
        return groups
    }

    /// Every vital-sign reading, a description at a time, each description's in (time, id) order:
    /// its series' samples (`series` says which may be read) merged with what entry rows gave it.
    /// A sample's number is nil when its value is text that does not read as one.
    func forEachVital(merging rows: [String: [Contribution]], from: Int64, to: Int64, db: Database,
                      series wanted: (Int64) -> Bool = { _ in true },
                      _ body: (_ description: String, _ source: VitalSource, _ time: Int64, _ id: Int64, _ number: Double?) throws -> Void) throws {
        let readings = SampleReadings(db)
        for description in Set(rows.keys).union(vitalSeries.keys).sorted() {
            var cursors: [(series: SampleReadings.Series, cursor: SampleReadings.Cursor, head: SampleReadings.Reading)] = []
            for series in vitalSeries[description] ?? [] where wanted(series.id) {
                var cursor = try readings.cursor(series, from: from, to: to)
                if let head = try cursor.next() { cursors.append((series, cursor, head)) }
            }
            let pending = rows[description] ?? []
            if pending.isEmpty, cursors.count == 1 {
                // Nearly every group: one series, no entries. Its numbers as they come.
                var (series, cursor, head) = cursors[0]
                let source = VitalSource.series(series)
                try body(description, source, head.start, head.id, head.number)
                while let reading = try cursor.next() {
                    head = reading
                    try body(description, source, head.start, head.id, head.number)
                }
                continue
            }
            var next = 0
            while true {
                var best = -1
                for i in cursors.indices where best < 0 || (cursors[i].head.start, cursors[i].head.id) < (cursors[best].head.start, cursors[best].head.id) {
                    best = i
                }
                if next < pending.count, best < 0 || (pending[next].row.time, pending[next].row.id) <= (cursors[best].head.start, cursors[best].head.id) {
                    let row = pending[next].row
                    try body(description, .row(row), row.time, row.id, pending[next].number)
                    next += 1
                    continue
                }
                guard best >= 0 else { break }
                let head = cursors[best].head
                try body(description, .series(cursors[best].series), head.start, head.id, head.number)
                if let head = try cursors[best].cursor.next() { cursors[best].head = head } else { cursors.remove(at: best) }
            }
        }
    }

    /// Adds the activity series' day totals to `days` (`ActivityTotals`: each day counted once
    /// when several sources wrote a description, in the vault's source priority).
    func addActivity(to days: inout ActivityDays, from: Int64, to: Int64, zone: DayZone, db: Database) throws {
        var totals = ActivityTotals(db: db, zone: zone)
        try totals.forEachTotal(of: activitySeries, from: from, to: to) { total in
            days.add(total.sum, day: total.day, first: total.first, description: total.description, unit: total.unit)
        }
    }
}

/// A page's activity totals per local day and description. A total's unit is its first reading's
/// (by time, then id), whichever order the readings are added in.
struct ActivityDays {
    private(set) var days: [TimelinePayload.ActivityDay] = []
    /// Each local day's totals (their places in `days`), by the day's start: a day has a few
    /// descriptions. Keyed by Int64, whose Hashable conformance every page has looked up already: a
    /// key type of its own cost a scan of the binary's conformances at first use (docs/performance.md).
    private var index: [Int64: [Int]] = [:]
    private var first: [(Int64, Int64)] = []
    private var calendar: DayCalendar
    private var lastDay: (start: Int64, end: Int64, text: String)?
    private var last = -1

    init(zone: DayZone) { calendar = DayCalendar(zone) }

    /// The days a page [from, to] covers. A day that only touches it is left out: the next day when
    /// the page ends at its midnight (its readings at that instant), the day before when the page
    /// begins at midnight (a reading that began before and runs into the page counts on the day it
    /// began, in that day's page): a page of one day lists that day, not slivers of its neighbours.
    func days(covering from: Int64, _ to: Int64) -> [TimelinePayload.ActivityDay] {
        days.filter { $0.end > from && $0.day < to }
    }

    /// The local day holding `time`; rows come in time order, so nearly always the one asked for before.
    mutating func day(containing time: Int64) -> (start: Int64, end: Int64, text: String) {
        if let day = lastDay, time >= day.start, time < day.end { return day }
        let day = calendar.day(containing: time)
        lastDay = day
        return day
    }

    mutating func add(_ value: Double, at time: Int64, id: Int64, description: String, unit: String?) {
        if last >= 0, let day = lastDay, time >= day.start, time < day.end, days[last].day == day.start, days[last].description == description {
            days[last].total += value
            if (time, id) < first[last] { (first[last], days[last].unit) = ((time, id), unit) }
            return
        }
        add(value, day: day(containing: time), first: (time, id), description: description, unit: unit)
    }

    mutating func add(_ value: Double, day: (start: Int64, end: Int64, text: String), first reading: (Int64, Int64),
                      description: String, unit: String?) {
        let found: Int
        if let known = index[day.start]?.first(where: { days[$0].description == description }) {
            found = known
        } else {
            found = days.count
            days.append(TimelinePayload.ActivityDay(day: day.start, end: day.end, dayText: day.text, description: description, unit: unit))
            first.append(reading)
            index[day.start, default: []].append(found)
        }
        days[found].total += value
        if reading < first[found] { (first[found], days[found].unit) = (reading, unit) }
        last = found
    }
}
