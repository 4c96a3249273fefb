/// Day totals of a person's vital-sign samples (schema 7, `sample_days`): what a chart of years
/// reads instead of every sample.
public struct SampleDayTotals {
    public struct Day: Sendable {
        public let seriesID: Int64
        /// UTC day: floor(start / 86400) (`SampleDayTotals.day(of:)`).
        public let day: Int64
        public let count: Int64
        public let valueSum: Double
        /// Sum of the readings' seconds into the day.
        public let secondSum: Double
        public let minimum: Double
        public let maximum: Double
        /// The readings' mean start time, epoch seconds.
        public var meanTime: Double { Double(day * SampleDayTotals.secondsPerDay) + secondSum / Double(count) }
        public var mean: Double { valueSum / Double(count) }
    }

    /// What a series' readings are: as a sample's timeline row says it.
    public struct SeriesInfo: Sendable {
        public let id: Int64
        public let sourceID: Int64
        public let description: String
        public let unit: String?
        public let codes: [String: [String]]
        /// Its longest sample, in seconds (a sample may start before a range and end in it).
        public let maxSpan: Int64
    }

    let db: Database

    public init(_ db: Database) { self.db = db }

    public static let secondsPerDay: Int64 = 86_400

    /// The UTC day an instant falls in (floor, before 1970 too) and its seconds into that day.
    public static func day(of epoch: Int64) -> (day: Int64, second: Int64) {
        let second = ((epoch % secondsPerDay) + secondsPerDay) % secondsPerDay
        return ((epoch - second) / secondsPerDay, second)
    }

    /// Adds an import's readings of one series and day to what the table holds.
    func add(series: Int64, day: Int64, count: Int64, sum: Double, seconds: Double, minimum: Double, maximum: Double) throws {
        let upsert = try db.cachedStatement("""
            INSERT INTO sample_days (series_id, day, count, value_sum, second_sum, min_value, max_value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT (series_id, day) DO UPDATE SET count = count + excluded.count, value_sum = value_sum + excluded.value_sum,
                second_sum = second_sum + excluded.second_sum, min_value = min(min_value, excluded.min_value),
                max_value = max(max_value, excluded.max_value)
            """)
        defer { upsert.reset() }
        upsert.bind(1, series)
        upsert.bind(2, day)
        upsert.bind(3, count)
        upsert.bind(4, sum)
        upsert.bind(5, seconds)
        upsert.bind(6, minimum)
        upsert.bind(7, maximum)
        try upsert.step()
    }

    /// The person's vital-sign series, and their day totals for the UTC days [fromDay, toDay].
    public func vitalSigns(patientID: Int64, fromDay: Int64, toDay: Int64) throws -> (series: [Int64: SeriesInfo], days: [Day]) {
        var series: [Int64: SeriesInfo] = [:]
        for (id, s) in try SampleRepository(db: db).series(patientID: patientID) where s.type == .vitalSign {
            series[id] = SeriesInfo(id: id, sourceID: s.sourceID, description: s.description, unit: s.unit.isEmpty ? nil : s.unit,
                                    codes: s.codes, maxSpan: s.maxSpan)
        }
        var days: [Day] = []
        for id in series.keys.sorted() {
            try db.forEachRow("""
                SELECT day, count, value_sum, second_sum, min_value, max_value FROM sample_days WHERE series_id = ? AND day BETWEEN ? AND ?
                """, [id, fromDay, toDay]) { r in
                days.append(Day(seriesID: id, day: r.int64(0)!, count: r.int64(1)!, valueSum: r.double(2)!, secondSum: r.double(3)!,
                                minimum: r.double(4)!, maximum: r.double(5)!))
            }
        }
        return (series, days)
    }
}
