import Foundation
import HReaderJSON
import HReaderModel

/// An Android Health Connect export's database (`health_connect_export.db`, opened by
/// `Database.openForeign`, read as `ForeignTables`) → wearable readings, streamed row by row (docs/wearables.md). The tables
/// and columns are AOSP's (packages/modules/HealthFitness): every record row has `app_info_id`
/// (→ `application_info_table`) and `device_info_id` (→ `device_info_table`); instant records `time`
/// (epoch ms) and `zone_offset` (seconds), interval records `start_time`, `start_zone_offset`,
/// `end_time`, `end_zone_offset`; series and stages are child tables joined by `parent_key`.
/// Units as Health Connect keeps them: mass in grams, energy in calories, distance in metres,
/// percentages 0–100; converted once to the samples' kg, kcal, m and fraction.
///
/// A table the reader needs whose columns are not the expected ones is one clear error; tables it
/// does not read are counted (their rows) and reported.
public struct HealthConnectReader {
    /// The zone whose offset a record without one is given: the local zone the timeline counts days
    /// in, unless a caller names another.
    public var zone: DayZone

    public init(zone: DayZone = .local) { self.zone = zone }

    public enum Failure: Error, CustomStringConvertible {
        case schema(String)

        public var description: String {
            switch self {
            case let .schema(why): "not a Health Connect export as hreader knows it: \(why)"
            }
        }
    }

    /// What was read besides the samples and entries handed on.
    public struct Outcome: Sendable {
        public var unmapped: [String: Int] = [:]
        public var skipped: [String: Int] = [:]
        public var devices: [String] = []
        public var rows = 0
    }

    /// A quantity table: the kind, the value column, the factor to the sample's unit.
    struct Quantity {
        let table: String
        let kind: (String, String)
        let column: String
        let factor: Double
        let interval: Bool
    }

    static let quantities: [Quantity] = [
        Quantity(table: "steps_record_table", kind: WearableKind.steps, column: "count", factor: 1, interval: true),
        Quantity(table: "distance_record_table", kind: WearableKind.distanceWalkingRunning, column: "distance", factor: 1, interval: true),
        Quantity(table: "active_calories_burned_record_table", kind: WearableKind.activeEnergy, column: "energy", factor: 0.001, interval: true),
        Quantity(table: "weight_record_table", kind: WearableKind.bodyMass, column: "weight", factor: 0.001, interval: false),
        Quantity(table: "body_fat_record_table", kind: WearableKind.bodyFat, column: "percentage", factor: 0.01, interval: false),
        Quantity(table: "oxygen_saturation_record_table", kind: WearableKind.oxygenSaturation, column: "percentage", factor: 0.01, interval: false),
        Quantity(table: "resting_heart_rate_record_table", kind: WearableKind.restingHeartRate, column: "beats_per_minute", factor: 1, interval: false),
        Quantity(table: "respiratory_rate_record_table", kind: WearableKind.respiratoryRate, column: "rate", factor: 1, interval: false),
        Quantity(table: "heart_rate_variability_rmssd_record_table", kind: WearableKind.heartRateVariabilityRMSSD,
                 column: "heart_rate_variability_millis", factor: 1, interval: false),
        // Health Connect keeps lengths in metres, masses in grams, temperatures in degrees Celsius,
        // glucose in mmol/L and volumes in litres: each kept in that unit (or kg, as weight is).
        Quantity(table: "height_record_table", kind: WearableKind.height, column: "height", factor: 1, interval: false),
        Quantity(table: "lean_body_mass_record_table", kind: WearableKind.leanBodyMass, column: "mass", factor: 0.001, interval: false),
        Quantity(table: "body_temperature_record_table", kind: WearableKind.bodyTemperature, column: "temperature", factor: 1, interval: false),
        Quantity(table: "blood_glucose_record_table", kind: WearableKind.bloodGlucose, column: "level", factor: 1, interval: false),
        Quantity(table: "vo2_max_record_table", kind: WearableKind.vo2Max, column: "vo2_milliliters_per_minute_kilogram", factor: 1, interval: false),
        Quantity(table: "floors_climbed_record_table", kind: WearableKind.flightsClimbed, column: "floors", factor: 1, interval: true),
        Quantity(table: "hydration_record_table", kind: WearableKind.water, column: "volume", factor: 1, interval: true),
    ]

    /// Tables read (besides the quantities'), and Health Connect's own bookkeeping, which holds no readings.
    /// The most sleep sessions read from one export: a night each is 3,650 a decade; beyond these a
    /// database is no one's sleep, and the rest are counted as skipped (their stages too).
    static let maxSleepSessions = 200_000

    /// A sleep session as its stages need it (its source and zone offsets), and whether any came.
    struct SleepSession {
        let app, device, startOffset, start, end, endOffset: Int64?
        var staged = false
    }

    static let readTables: Set<String> = ["application_info_table", "device_info_table", "heart_rate_record_table", "heart_rate_record_series_table",
                                          "blood_pressure_record_table", "sleep_session_record_table", "sleep_stages_table",
                                          "exercise_session_record_table", "exercise_route_table"]
    static let bookkeeping: Set<String> = ["access_logs_table", "change_logs_table", "change_log_request_table", "preference_table",
                                           "activity_date_table", "health_data_category_priority_table", "migration_entity_table",
                                           "android_metadata", "priority_migration_table", "read_access_logs_table", "app_op_logs_table",
                                           "backup_change_token_table", "medical_data_source_table", "medical_resource_table",
                                           "medical_resource_indices_table"]

    /// Whether the database looks like Health Connect's (its application table and a record table).
    public static func recognizes(_ db: some ForeignTables) -> Bool {
        guard let tables = try? Set(db.tableNames()) else { return false }
        return tables.contains("application_info_table") && tables.contains { $0.hasSuffix("_record_table") }
    }

    public func read(_ db: some ForeignTables, sample: (SampleRecord) throws -> Void, entry: (MappedEntry) throws -> Void) throws -> Outcome {
        var outcome = Outcome()
        let tables = Set(try db.tableNames())
        guard tables.contains("application_info_table") else { throw Failure.schema("no application_info_table") }
        func require(_ table: String, _ columns: [String]) throws {
            let have = Set(try db.columnNames(of: table))
            if let missing = columns.first(where: { !have.contains($0) }) { throw Failure.schema("\(table) has no column \(missing)") }
        }
        // Apps and devices: few rows, read once.
        try require("application_info_table", ["row_id", "package_name", "app_name"])
        var apps: [Int64: String] = [:]
        try db.readRows("SELECT row_id, package_name, app_name FROM application_info_table") { row in
            let (id, package, name) = (row.int64(0) ?? 0, row.string(1) ?? "", row.string(2))
            apps[id] = String((name.flatMap { $0.isEmpty ? nil : $0 } ?? package).prefix(200))
        }
        var devices: [Int64: String] = [:]
        if tables.contains("device_info_table") {
            try require("device_info_table", ["row_id", "manufacturer", "model"])
            try db.readRows("SELECT row_id, manufacturer, model FROM device_info_table") { row in
                let (id, maker, model) = (row.int64(0) ?? 0, row.string(1) ?? "", row.string(2) ?? "")
                devices[id] = String([maker, model].filter { !$0.isEmpty }.joined(separator: " ").prefix(200))
            }
        }
        var series: [String: SampleSeriesStrings] = [:]
        func strings(_ kind: (String, String), app: Int64?, device: Int64?) -> SampleSeriesStrings {
            let source = app.flatMap { apps[$0] } ?? "Health Connect"
            let deviceName = device.flatMap { devices[$0] } ?? ""
            let key = "\(kind.0)\u{1F}\(source)\u{1F}\(deviceName)"
            if let found = series[key] { return found }
            let made = SampleSeriesStrings(type: kind.0, sourceName: source, sourceVersion: "", device: deviceName, unit: kind.1)
            series[key] = made
            let shown = deviceName.isEmpty ? source : "\(source) (\(deviceName))"
            if !outcome.devices.contains(shown) { outcome.devices.append(shown) }
            return made
        }
        func time(_ millis: Int64, _ offsetSeconds: Int64?) -> SampleRecord.Time {
            let epoch = Int64((Double(millis) / 1000).rounded(.down))
            if let offsetSeconds, abs(offsetSeconds) <= 18 * 3600 {
                return SampleRecord.Time(epoch: epoch, offsetMinutes: Int((Double(offsetSeconds) / 60).rounded()))
            }
            return SampleRecord.Time(epoch: epoch, offsetMinutes: Int(DayCalendar.offset(of: zone, at: epoch) / 60))
        }
        /// Times from 1900 to 2200 (epoch ms); a row outside is skipped (and its arithmetic never overflows).
        func plausible(_ millis: Int64?...) -> Bool {
            millis.allSatisfy { $0.map { (-2_208_988_800_000...7_258_118_400_000).contains($0) } ?? true }
        }
        func rows(_ sql: String, _ body: (any ForeignRow) throws -> Void) throws {
            try db.readRows(sql) { row in
                outcome.rows += 1
                try body(row)
            }
        }

        // The tables of readings (millions of rows) are read in the order they were written, never
        // sorted: SQLite sorts in memory (temp_store is memory: nothing of the export may reach the
        // disk in plaintext), so an ORDER BY over a decade's rows held them all (289 MB at 10M).
        // Each sample is keyed by its series and time in the vault whatever the order it comes in; so
        // are the entries below, and so are the sleep stages (placed by their session, not joined).
        for q in Self.quantities where tables.contains(q.table) {
            let timeColumns = q.interval ? "start_time, start_zone_offset, end_time, end_zone_offset" : "time, zone_offset, time, zone_offset"
            try require(q.table, ["app_info_id", "device_info_id", q.column] + timeColumns.components(separatedBy: ", "))
            try rows("SELECT app_info_id, device_info_id, \(timeColumns), \(q.column) FROM \(q.table)") { s in
                guard let start = s.int64(2), let value = s.double(6), value.isFinite else {
                    outcome.skipped["a Health Connect \(q.table) row without a time or a value", default: 0] += 1
                    return
                }
                let end = s.int64(4) ?? start
                guard plausible(start, end), end >= start else {
                    outcome.skipped["a Health Connect \(q.table) row ending before it starts", default: 0] += 1
                    return
                }
                let converted = Self.exact(value * q.factor)
                try sample(SampleRecord(strings: strings(q.kind, app: s.int64(0), device: s.int64(1)), start: time(start, s.int64(3)),
                                        end: time(end, s.int64(5)), value: .real(converted)))
            }
        }

        if tables.contains("heart_rate_record_table"), tables.contains("heart_rate_record_series_table") {
            try require("heart_rate_record_table", ["row_id", "app_info_id", "device_info_id", "start_zone_offset"])
            try require("heart_rate_record_series_table", ["parent_key", "beats_per_minute", "epoch_millis"])
            try rows("""
                SELECT r.app_info_id, r.device_info_id, r.start_zone_offset, s.epoch_millis, s.beats_per_minute
                FROM heart_rate_record_series_table s JOIN heart_rate_record_table r ON r.row_id = s.parent_key
                """) { s in
                guard let at = s.int64(3), plausible(at), let bpm = s.double(4), bpm > 0, bpm.isFinite else {
                    outcome.skipped["a Health Connect heart rate without a time or a value", default: 0] += 1
                    return
                }
                let t = time(at, s.int64(2))
                try sample(SampleRecord(strings: strings(WearableKind.heartRate, app: s.int64(0), device: s.int64(1)), start: t, end: t, value: .real(bpm)))
            }
        }

        if tables.contains("blood_pressure_record_table") {
            try require("blood_pressure_record_table", ["uuid", "app_info_id", "time", "zone_offset", "systolic", "diastolic"])
            try rows("SELECT uuid, app_info_id, time, zone_offset, systolic, diastolic FROM blood_pressure_record_table") { s in
                guard let at = s.int64(2), plausible(at), let systolic = s.double(4), let diastolic = s.double(5), systolic.isFinite, diastolic.isFinite else {
                    outcome.skipped["a Health Connect blood pressure without a time or a value", default: 0] += 1
                    return
                }
                let t = time(at, s.int64(3))
                var content = EntryContent(type: .vitalSign, description: "Blood pressure")
                content.date = ClinicalTime(text: AppleHealthDate.rfc3339(t.epoch, offsetMinutes: t.offsetMinutes), epoch: t.epoch)
                content.codes = ["LOINC": ["85354-9"], AppleHealthMapper.codeSystem: ["HKCorrelationTypeIdentifierBloodPressure"]]
                content.valueText = "\(SampleText.plain(Self.exact(systolic)))/\(SampleText.plain(Self.exact(diastolic)))"
                content.unit = "mmHg"
                let source = s.int64(1).flatMap { apps[$0] } ?? "Health Connect"
                content.raw = JSONValue.object([("element", .string("Health Connect blood pressure")), ("source", .string(source)),
                                                ("systolic_mmHg", .double(systolic)), ("diastolic_mmHg", .double(diastolic))]).serialized()
                try entry(MappedEntry(remoteID: "health-connect:bp:" + Self.hex(s.blob(0) ?? Array("\(at)-\(systolic)-\(diastolic)".utf8)), content: content))
            }
        }

        if tables.contains("sleep_session_record_table") {
            try require("sleep_session_record_table", ["row_id", "app_info_id", "device_info_id", "start_time", "start_zone_offset", "end_time", "end_zone_offset"])
            let stages = tables.contains("sleep_stages_table")
            if stages { try require("sleep_stages_table", ["parent_key", "stage_start_time", "stage_end_time", "stage_type"]) }
            func sleep(_ session: SleepSession, from: Int64?, to: Int64?, stage: Int64?) throws {
                guard let from, let to, plausible(from, to), to > from else {
                    outcome.skipped["a Health Connect sleep stage without its times", default: 0] += 1
                    return
                }
                let value: String
                switch stage {
                case nil, 2: value = "HKCategoryValueSleepAnalysisAsleepUnspecified"
                case 1, 3, 7: value = "HKCategoryValueSleepAnalysisAwake"
                case 4: value = "HKCategoryValueSleepAnalysisAsleepCore"
                case 5: value = "HKCategoryValueSleepAnalysisAsleepDeep"
                case 6: value = "HKCategoryValueSleepAnalysisAsleepREM"
                default:
                    outcome.skipped["a Health Connect sleep stage of an unknown type", default: 0] += 1
                    return
                }
                try sample(SampleRecord(strings: strings(WearableKind.sleep, app: session.app, device: session.device),
                                        start: time(from, session.startOffset), end: time(to, session.endOffset ?? session.startOffset),
                                        value: .text(value)))
            }
            // The sessions first, by row_id (a night each: a few thousand in a decade, at most
            // `maxSleepSessions`), then the stages in the order they were written, each placed by its
            // session: memory grows with the nights, never with the stages. (A join made SQLite build
            // an index in memory over every stage, the stages' table having none on parent_key.)
            var sessions: [SleepSession] = []
            var byRowID: [Int64: Int] = [:]
            try rows("""
                SELECT row_id, app_info_id, device_info_id, start_zone_offset, start_time, end_time, end_zone_offset
                FROM sleep_session_record_table
                """) { s in
                guard sessions.count < Self.maxSleepSessions else {
                    outcome.skipped["a Health Connect sleep session past the first \(Self.maxSleepSessions)", default: 0] += 1
                    return
                }
                if let id = s.int64(0), byRowID[id] == nil { byRowID[id] = sessions.count }
                sessions.append(SleepSession(app: s.int64(1), device: s.int64(2), startOffset: s.int64(3), start: s.int64(4), end: s.int64(5),
                                             endOffset: s.int64(6)))
            }
            if stages {
                try rows("SELECT parent_key, stage_start_time, stage_end_time, stage_type FROM sleep_stages_table") { st in
                    guard let parent = st.int64(0), let index = byRowID[parent] else {
                        outcome.skipped["a Health Connect sleep stage of no session", default: 0] += 1
                        return
                    }
                    sessions[index].staged = true
                    try sleep(sessions[index], from: st.int64(1), to: st.int64(2), stage: st.int64(3))
                }
            }
            // A session without stages is one "asleep" interval.
            for session in sessions where !session.staged {
                try sleep(session, from: session.start, to: session.end, stage: nil)
            }
        }

        if tables.contains("exercise_session_record_table") {
            try require("exercise_session_record_table", ["row_id", "uuid", "app_info_id", "start_time", "start_zone_offset", "end_time",
                                                          "end_zone_offset", "exercise_type", "title"])
            // Each session's route (`exercise_route_table`, its locations by `parent_key`), summarised in
            // one pass in the order the rows were written, which is each route's own time order: a
            // summary a session, never the locations.
            var routes: [Int64: RouteSummary] = [:]
            if tables.contains("exercise_route_table") {
                try require("exercise_route_table", ["parent_key", "latitude", "longitude"])
                let altitude = try db.columnNames(of: "exercise_route_table").contains("altitude") ? "altitude" : "NULL"
                // Only the locations of sessions there are: one summary a session at most, whatever the table holds.
                try rows("""
                    SELECT parent_key, latitude, longitude, \(altitude) FROM exercise_route_table
                    WHERE parent_key IN (SELECT row_id FROM exercise_session_record_table)
                    """) { r in
                    guard let parent = r.int64(0), let latitude = r.double(1), let longitude = r.double(2) else {
                        outcome.skipped["a Health Connect route location without its position", default: 0] += 1
                        return
                    }
                    // An altitude the app did not record is stored as Java's Double.MIN_VALUE, a subnormal.
                    let height = r.double(3).flatMap { $0.isSubnormal ? nil : $0 }
                    routes[parent, default: RouteSummary()].add(latitude: latitude, longitude: longitude, altitude: height)
                }
            }
            try rows("SELECT uuid, app_info_id, start_time, start_zone_offset, end_time, end_zone_offset, exercise_type, title, row_id FROM exercise_session_record_table") { s in
                guard let from = s.int64(2), let to = s.int64(4), plausible(from, to), to >= from else {
                    outcome.skipped["a Health Connect exercise session without its times", default: 0] += 1
                    return
                }
                let start = time(from, s.int64(3)), end = time(to, s.int64(5))
                let sport = Self.exercise(Int(clamping: s.int64(6) ?? 0))
                var content = EntryContent(type: .activity, description: "\(sport) workout")
                content.start = ClinicalTime(text: AppleHealthDate.rfc3339(start.epoch, offsetMinutes: start.offsetMinutes), epoch: start.epoch)
                content.end = ClinicalTime(text: AppleHealthDate.rfc3339(end.epoch, offsetMinutes: end.offsetMinutes), epoch: end.epoch)
                content.codes = ["com.google.health-connect": ["exercise:\(s.int64(6) ?? 0)"]]
                content.valueNumber = (Double(to - from) / 60_000 * 100).rounded() / 100
                content.unit = "min"
                let title = s.string(7).map { String($0.prefix(200)) }
                let route = s.int64(8).flatMap { routes.removeValue(forKey: $0) } ?? RouteSummary()
                let parts = [title.flatMap { $0.isEmpty ? nil : $0 }, route.text].compactMap { $0 }
                content.valueText = parts.isEmpty ? nil : parts.joined(separator: ", ")
                let source = s.int64(1).flatMap { apps[$0] } ?? "Health Connect"
                var raw: [JSONObject.Member] = [("element", .string("Health Connect exercise session")), ("source", .string(source)),
                                                ("exercise_type", .int(s.int64(6) ?? 0)), ("title", .text(title))]
                if !route.isEmpty { raw.append(("route", route.json)) }
                content.raw = JSONValue.object(JSONObject(raw)).serialized()
                try entry(MappedEntry(remoteID: "health-connect:exercise:" + Self.hex(s.blob(0) ?? Array("\(from)-\(to)".utf8)), content: content))
            }
        }

        let read = Set(Self.quantities.map(\.table)).union(Self.readTables).union(Self.bookkeeping)
        for table in tables.sorted() where !read.contains(table) {
            let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            var count: Int64 = 0
            try db.readRows("SELECT count(*) FROM \(quoted)") { count = $0.int64(0) ?? 0 }
            if count > 0 { outcome.unmapped[table] = Int(count) }
        }
        return outcome
    }

    /// A converted value without binary noise (0.001 × 72500 g is 72.5 kg, not 72.50000000000001).
    static func exact(_ value: Double) -> Double {
        let rounded = (value * 1e6).rounded() / 1e6
        return abs(rounded - value) < 1e-9 * max(1, abs(value)) ? rounded : value
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.prefix(64).map { String(format: "%02x", $0) }.joined() }

    static func exercise(_ type: Int) -> String {
        let names = [1: "Badminton", 2: "Baseball", 3: "Basketball", 4: "Cycling", 5: "Stationary cycling", 6: "Boot camp", 7: "Boxing",
                     8: "Calisthenics", 9: "Cricket", 10: "Dancing", 11: "Exercise class", 12: "Fencing", 13: "American football",
                     14: "Australian football", 15: "Frisbee", 16: "Golf", 17: "Guided breathing", 18: "Gymnastics", 19: "Handball",
                     20: "High-intensity interval training", 21: "Hiking", 22: "Ice hockey", 23: "Ice skating", 24: "Martial arts",
                     25: "Paddling", 26: "Paragliding", 27: "Pilates", 28: "Racquetball", 29: "Rock climbing", 30: "Roller hockey",
                     31: "Rowing", 32: "Rugby", 33: "Running", 34: "Treadmill running", 35: "Sailing", 36: "Scuba diving", 37: "Skating",
                     38: "Skiing", 39: "Snowboarding", 40: "Snowshoeing", 41: "Soccer", 42: "Softball", 43: "Squash", 44: "Stair climbing",
                     45: "Strength training", 46: "Stretching", 47: "Surfing", 48: "Open water swimming", 49: "Pool swimming",
                     50: "Table tennis", 51: "Tennis", 52: "Volleyball", 53: "Walking", 54: "Water polo", 55: "Weightlifting",
                     56: "Wheelchair", 57: "Yoga", 58: "Other", 59: "Stair climbing machine", 60: "Elliptical", 61: "Rowing machine"]
        return names[type] ?? "Other"
    }
}
