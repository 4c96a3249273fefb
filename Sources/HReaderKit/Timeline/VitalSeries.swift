import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// One vital sign over a range, with the time of every reading: what a chart needs and the timeline's
/// `vitals` groups (values only, as hReader had them) do not carry.
public struct VitalSeries: Sendable, Equatable {
    public struct Point: Sendable, Equatable {
        /// Epoch seconds; for a bucket, the mean time of its readings.
        public let time: Double
        /// The reading; for a bucket, the mean of its readings.
        public let value: Double
    }

    public let description: String
    public let unit: String?
    /// Time-ordered points, at most the `maximumPoints` asked for.
    public let points: [Point]
    /// How many readings the range holds (more than `points.count` when buckets were averaged).
    public let readings: Int
    public let minimum: Double
    public let maximum: Double

    public var json: JSONValue {
        .object([("description", .string(description)), ("unit", unit.map(JSONValue.string) ?? .null),
                 ("readings", .int(readings)), ("min", .double(minimum)), ("max", .double(maximum)),
                 ("points", .array(points.map { .array([.double($0.time.rounded()), .double($0.value)]) }))])
    }

    /// Averages consecutive readings into at most `maximumPoints` buckets of equal time width, so a decade
    /// of heart-rate samples from a watch draws as a few hundred points that keep its shape. A bucket with
    /// no reading is left out rather than drawn as zero.
    static func downsample(_ readings: [Point], range: TimelineRange, maximumPoints: Int) -> [Point] {
        guard readings.count > maximumPoints, maximumPoints > 0 else { return readings }
        return downsample(readings.map { Weighted(time: $0.time, value: $0.value, weight: 1) }, range: range, maximumPoints: maximumPoints)
    }

    /// A reading, or a day's mean standing for `weight` readings.
    struct Weighted {
        var time: Double
        var value: Double
        var weight: Double
    }

    static func downsample(_ readings: [Weighted], range: TimelineRange, maximumPoints: Int) -> [Point] {
        // In Double: the difference of two far-apart Int64 instants overflows Int64.
        let span = max(Double(range.end) - Double(range.start), 1)
        var sums = [(time: Double, value: Double, count: Double)](repeating: (0, 0, 0), count: max(1, maximumPoints))
        for reading in readings {
            let position = (reading.time - Double(range.start)) / span
            let scaled = (position * Double(sums.count)).rounded(.down)
            let bucket = scaled.isFinite ? Int(min(max(scaled, 0), Double(sums.count - 1))) : 0
            sums[bucket].time += reading.time * reading.weight
            sums[bucket].value += reading.value * reading.weight
            sums[bucket].count += reading.weight
        }
        return sums.compactMap { $0.count == 0 ? nil : Point(time: $0.time / $0.count, value: $0.value / $0.count) }
    }
}

extension OpenVault {
    /// The patient's vital signs in `range`, one series per description in the timeline's order
    /// (blood pressure last, systolic before diastolic); struck entries and text values are left out.
    /// Values and units are those people read (`ReadableUnits`): Apple Health's 0.99 % is 99 %.
    ///
    /// When a bucket spans a day or more (a year, a decade), a series of more readings than points reads
    /// its whole days from the day totals (schema 7) and only the range's partial first and last days
    /// sample by sample: a decade of a watch is 3,650 rows a series instead of millions of samples. A
    /// day's readings then fall in the bucket of their mean time. `dayTotals: false` reads every sample.
    public func vitalSeries(patient: Patient, range: TimelineRange, maximumPoints: Int = 400,
                            dayTotals useDayTotals: Bool = true) throws -> [VitalSeries] {
        var groups: [String: VitalGroup] = [:]
        try read {
            do {
                groups = try vitalGroups(patient: patient, range: range, maximumPoints: maximumPoints, dayTotals: useDayTotals, readings: true)
            } catch SampleReadingsPage.NeedsRows.vitalText {
                // A vital sign stored as text (a word, or "120/80" split in two): the rows say what it is.
                groups = try vitalGroups(patient: patient, range: range, maximumPoints: maximumPoints, dayTotals: useDayTotals, readings: false)
            }
        }
        return TimelineQuery.orderedVitals(groups).map { description, group in
            var readings = group.readings
            // Read in time order, but for days from the totals (appended after the samples).
            if group.fromDays { readings.sort { $0.time < $1.time } }
            let points = !group.fromDays && readings.count <= maximumPoints
                ? readings.map { VitalSeries.Point(time: $0.time, value: $0.value) }
                : VitalSeries.downsample(readings, range: range, maximumPoints: maximumPoints)
            return VitalSeries(description: description, unit: group.unit, points: points, readings: group.count,
                               minimum: group.count == 0 ? 0 : group.minimum, maximum: group.count == 0 ? 0 : group.maximum)
        }
    }

    /// A vital-sign reading or a day's mean standing for its readings, grouped by description.
    struct VitalGroup {
        var unit: String?
        var readings: [VitalSeries.Weighted] = []
        var count = 0
        var minimum = Double.infinity
        var maximum = -Double.infinity
        var fromDays = false

        /// A reading (count 1), or a day's mean standing for `count` readings between its extremes.
        mutating func add(time: Double, value: Double, count: Int = 1, minimum: Double? = nil, maximum: Double? = nil) {
            readings.append(.init(time: time, value: value, weight: Double(count)))
            self.count += count
            self.minimum = min(self.minimum, minimum ?? value)
            self.maximum = max(self.maximum, maximum ?? value)
        }
    }

    /// The groups of `vitalSeries`. `readings`: samples are read as numbers (`SampleReadingsPage`),
    /// not as rows (false: the rows, for a vital sign stored as a word).
    func vitalGroups(patient: Patient, range: TimelineRange, maximumPoints: Int, dayTotals useDayTotals: Bool,
                     readings: Bool) throws -> [String: VitalGroup] {
        typealias Group = VitalGroup
        var groups: [String: Group] = [:]
        // Codes matter only to a `%` or `count` reading (ReadableUnits.needsCodes): they are read once per
        // source, description and unit, not decoded for each of a decade's rows.
        // So is how they read (`ReadableUnits.Scale`), by source, description and unit.
        var scales: [String: ReadableUnits.Scale] = [:]
        // (A reading's own description may differ from its group's: "120/80" gives two groups.)
        func scale(source: Int64, own: String, unit: String?, id: Int64, _ description: String) throws -> ReadableUnits.Scale {
            let key = "\(source)\u{1F}\(description)\u{1F}\(own)\u{1F}\(unit ?? "")"
            if let known = scales[key] { return known }
            let codes = ReadableUnits.needsCodes(unit) ? try entries.get(id: id)?.content.codes ?? [:] : [:]
            let found = ReadableUnits.Scale(unit: unit, codes: codes, description: description)
            scales[key] = found
            return found
        }
        func add(_ row: TimelineRow, _ description: String, _ number: Double) throws {
            let shown = try scale(source: row.sourceID, own: row.description, unit: row.unit, id: row.id, description).quantity(number)
            groups[description, default: Group(unit: shown.unit)].add(time: Double(row.time), value: shown.value)
        }
        func add(_ row: TimelineRow) throws {
            for (description, number) in TimelineQuery.vitalReadings(row) {
                if let number { try add(row, description, number) }
            }
        }
        // The entries and the samples of every series but `skipped` over the whole range: the samples
        // as numbers merged with the entries by time, as rows would be.
        func addWholeRange(skipping skipped: Set<Int64>) throws {
            guard readings else {
                try entries.forEachTimelineRow(patientID: patient.id, from: range.start, to: range.end, type: .vitalSign,
                                               series: skipped.isEmpty ? nil : { !skipped.contains($0) }, add)
                return
            }
            let page = SampleReadingsPage(series: try SampleReadings(db).series(patientID: patient.id), vitals: true, activity: false)
            var rows: [String: [SampleReadingsPage.Contribution]] = [:]
            try entries.forEachTimelineRow(patientID: patient.id, from: range.start, to: range.end, type: .vitalSign,
                                           series: { !skipped.contains($0) && !page.reads($0) }) { row in
                for (description, number) in TimelineQuery.vitalReadings(row) {
                    rows[description, default: []].append(.init(row: row, number: number))
                }
            }
            // A description's readings come together, and a series' in a run: its group and its scale are
            // kept at hand rather than looked up by name for each of a month's 40,000 readings.
            var current: (description: String, group: Group?)?
            var seriesScale: (id: Int64, scale: ReadableUnits.Scale)?
            func flush() {
                guard let (description, group) = current, let group else { return }
                groups[description] = group
            }
            try page.forEachVital(merging: rows, from: range.start, to: range.end, db: db, series: { !skipped.contains($0) }) { description, source, time, id, number in
                let shown: ReadableQuantity
                switch source {
                case let .row(row):
                    guard let number else { return }
                    shown = try scale(source: row.sourceID, own: row.description, unit: row.unit, id: row.id, description).quantity(number)
                case let .series(series):
                    guard let number else { throw SampleReadingsPage.NeedsRows.vitalText }
                    if seriesScale?.id != series.id {
                        seriesScale = (series.id, try scale(source: series.sourceID, own: series.description, unit: series.unit, id: id, description))
                    }
                    shown = seriesScale!.scale.quantity(number)
                }
                if current?.description != description {
                    flush()
                    current = (description, groups.removeValue(forKey: description))
                }
                if current!.group == nil { current!.group = Group(unit: shown.unit) }
                current!.group!.add(time: Double(time), value: shown.value)
            }
            flush()
        }

        // The whole days inside the range, and the series with more readings there than points.
        let perDay = SampleDayTotals.secondsPerDay
        let firstDay = SampleDayTotals.day(of: range.start + perDay - 1).day, lastDay = SampleDayTotals.day(of: range.end + 1).day - 1
        var fromTotals: Set<Int64> = []
        var days: [SampleDayTotals.Day] = [], series: [Int64: SampleDayTotals.SeriesInfo] = [:]
        if useDayTotals, maximumPoints > 0, Double(range.end) - Double(range.start) >= Double(perDay) * Double(maximumPoints), firstDay <= lastDay {
            (series, days) = try SampleDayTotals(db).vitalSigns(patientID: patient.id, fromDay: firstDay, toDay: lastDay)
            var counts: [Int64: Int64] = [:]
            for day in days { counts[day.seriesID, default: 0] += day.count }
            fromTotals = Set(counts.filter { $0.value > Int64(maximumPoints) }.keys)
        }
        if fromTotals.isEmpty {
            try addWholeRange(skipping: [])
        } else {
            let wholeStart = firstDay * perDay, wholeEnd = (lastDay + 1) * perDay - 1
            // Entries, and the series read sample by sample, over the whole range.
            try addWholeRange(skipping: fromTotals)
            // The other series: their partial first and last days sample by sample (a sample counts in
            // the day it starts; the days' totals hold those starting inside them). The first part day
            // also brings a sample that starts before the range and ends in it: it cannot end later
            // than its series' longest span after the range's start...
            let longest = fromTotals.compactMap { series[$0]?.maxSpan }.max() ?? 0
            try entries.forEachTimelineRow(patientID: patient.id, from: range.start, to: max(wholeStart - 1, range.start + longest),
                                           type: .vitalSign, series: { fromTotals.contains($0) }, entries: false) { row in
                if row.time < wholeStart { try add(row) }
            }
            if wholeEnd < range.end {
                try entries.forEachTimelineRow(patientID: patient.id, from: wholeEnd + 1, to: range.end, type: .vitalSign,
                                               series: { fromTotals.contains($0) }, entries: false) { row in
                    if row.time > wholeEnd { try add(row) }
                }
            }
            // ...and their whole days from the totals.
            var seriesScales: [Int64: ReadableUnits.Scale] = [:]
            for day in days where fromTotals.contains(day.seriesID) {
                guard let info = series[day.seriesID] else { continue }
                let scale = seriesScales[day.seriesID] ?? ReadableUnits.Scale(unit: info.unit, codes: info.codes, description: info.description)
                seriesScales[day.seriesID] = scale
                let mean = scale.quantity(day.mean)
                groups[info.description, default: Group(unit: mean.unit)].add(time: day.meanTime, value: mean.value, count: Int(day.count),
                                                                              minimum: scale.quantity(day.minimum).value,
                                                                              maximum: scale.quantity(day.maximum).value)
                groups[info.description]!.fromDays = true
            }
        }
        return groups
    }

    /// When the patient's latest entry happened (date, else start, else end), for "jump to the latest".
    public func latestEntryTime(of patient: Patient) throws -> Int64? {
        try read { try entries.latestTime(patientID: patient.id) }
    }
}
