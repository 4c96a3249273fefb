import Foundation
import HReaderJSON
import HReaderModel

/// Fitbit's data as Google Takeout delivers it (docs/wearables.md): `Takeout/Fitbit/Global Export
/// Data/` holds one JSON file per metric and day (`steps-2026-03-01.json`, `distance-…`, `heart_rate-…`,
/// `resting_heart_rate-…`, `weight-…`, `sleep-…`), and `Personal & Account/Profile.csv` the
/// account's time zone and units. Times in the files carry no zone: they are the account's
/// (`timezone` in the profile), else the local zone. Weights are in the account's unit
/// (`weight_unit`: pounds or kilograms); a weight whose unit the export does not state is skipped.
public struct FitbitTakeoutReader {
    /// The zone the files' wall times are in: the account's, else the local zone.
    public var zone: DayZone
    /// Kilograms per the files' weight unit; nil when the profile does not say.
    public var kilogramsPerWeightUnit: Double?
    public var sourceName = "Fitbit"

    public init(zone: DayZone = .local, kilogramsPerWeightUnit: Double? = nil) {
        self.zone = zone
        self.kilogramsPerWeightUnit = kilogramsPerWeightUnit
    }

    public enum Metric: String, CaseIterable, Sendable {
        case steps, distance, heartRate = "heart_rate", restingHeartRate = "resting_heart_rate", weight, sleep
    }

    /// A minute's distance is stated in centimetres (walking 100 steps: about 7,600). More than 3 km in
    /// one minute (180 km/h) is no walk or run of the wearer's: skipped, not kept.
    static let largestMinuteCentimetres = 300_000.0

    public enum Failure: Error, CustomStringConvertible {
        case malformed(String)
        public var description: String {
            switch self { case let .malformed(why): why }
        }
    }

    /// The metric of a file named `<metric>-YYYY-MM-DD.json`; nil for any other file.
    public static func metric(ofFileNamed name: String) -> Metric? {
        guard name.hasSuffix(".json"), name.count > 16 else { return nil }
        let stem = String(name.dropLast(5))
        let date = stem.suffix(10)
        guard stem.count > 11, stem[stem.index(stem.endIndex, offsetBy: -11)] == "-",
              date.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) else { return nil }
        return Metric(rawValue: String(stem.dropLast(11)))
    }

    /// The account's zone and weight unit from `Profile.csv` (a header line and one row).
    public static func profile(_ text: String) -> (timeZone: TimeZone?, kilogramsPerWeightUnit: Double?) {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        guard lines.count >= 2 else { return (nil, nil) }
        let header = csvFields(lines[0]).map { $0.lowercased() }
        let row = csvFields(lines[1])
        func field(_ name: String) -> String? {
            guard let i = header.firstIndex(of: name), i < row.count else { return nil }
            return row[i].trimmingCharacters(in: .whitespaces)
        }
        let zone = field("timezone").flatMap { TimeZone(identifier: $0) }
        let unit: Double? = switch field("weight_unit")?.uppercased() {
        case "POUND", "POUNDS", "LB", "LBS", "EN_US": 0.453_592_37
        case "METRIC", "KILOGRAM", "KILOGRAMS", "KG": 1
        case "STONE", "EN_GB": 0.453_592_37   // Fitbit's stone accounts export weights in pounds
        default: nil
        }
        return (zone, unit)
    }

    /// One CSV line's fields (RFC 4180 quoting).
    static func csvFields(_ line: String) -> [String] {
        var fields: [String] = [], current = "", quoted = false
        var chars = Array(line)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { current.append("\""); chars = chars.dropFirst() } else { quoted = false }
                } else { current.append(c) }
            } else if c == "\"" { quoted = true } else if c == "," { fields.append(current); current = "" } else { current.append(c) }
        }
        fields.append(current)
        return fields
    }

    /// Reads one day's file of `metric`; the samples are handed on; returns what was skipped, by reason.
    public func read(_ bytes: [UInt8], metric: Metric, name: String, sample: (SampleRecord) throws -> Void) throws -> [String: Int] {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw Failure.malformed("\(name): \(error)")
        }
        guard let items = value.array else { throw Failure.malformed("\(name): not a JSON array, as Fitbit's files are") }
        var skipped: [String: Int] = [:]
        var series = FitbitTakeoutReader.Series(sourceName: sourceName)
        var local = FitbitTakeoutReader.WallTimes(zone: zone)
        func skip(_ reason: String) { skipped["a Fitbit \(metric.rawValue) reading \(reason)", default: 0] += 1 }
        func number(_ value: JSONValue?) -> Double? {
            switch value {
            case let .number(text)?: Double(text).flatMap { $0.isFinite ? $0 : nil }
            case let .string(text)?: Double(text).flatMap { $0.isFinite ? $0 : nil }
            default: nil
            }
        }
        for item in items {
            guard let object = item.object else { skip("that is not an object"); continue }
            switch metric {
            case .steps, .distance, .heartRate, .restingHeartRate:
                guard let text = object["dateTime"]?.string, let start = local.time(usDateTime: text) else { skip("without a readable dateTime"); continue }
                switch metric {
                case .steps:
                    guard let steps = number(object["value"]) else { skip("without a value"); continue }
                    guard steps > 0 else { continue }   // a minute without steps is no reading
                    let end = local.time(epoch: start.epoch + 60)
                    try sample(SampleRecord(strings: series.strings(WearableKind.steps), start: start, end: end, value: .real(steps)))
                case .distance:
                    guard let centimetres = number(object["value"]) else { skip("without a value"); continue }
                    guard centimetres > 0 else { continue }   // a minute without movement is no reading
                    guard centimetres <= Self.largestMinuteCentimetres else { skip("of an impossible distance"); continue }
                    let end = local.time(epoch: start.epoch + 60)
                    // One division, correctly rounded: the metres the file's centimetres state.
                    try sample(SampleRecord(strings: series.strings(WearableKind.distanceWalkingRunning), start: start, end: end,
                                            value: .real(centimetres / 100)))
                case .heartRate:
                    guard let bpm = number(object["value"]?.object?["bpm"]), bpm > 0 else { skip("without a value"); continue }
                    try sample(SampleRecord(strings: series.strings(WearableKind.heartRate), start: start, end: start, value: .real(bpm)))
                default:
                    guard let bpm = number(object["value"]?.object?["value"]), bpm > 0 else { continue }   // 0: not measured that day
                    try sample(SampleRecord(strings: series.strings(WearableKind.restingHeartRate), start: start, end: start,
                                            value: .real((bpm * 100).rounded() / 100)))
                }
            case .weight:
                guard let date = object["date"]?.string, let start = local.time(usDateTime: date + " " + (object["time"]?.string ?? "00:00:00")) else {
                    skip("without a readable date"); continue
                }
                let device = object["source"]?.string.map { String($0.prefix(100)) } ?? ""
                if let weight = number(object["weight"]), weight > 0 {
                    if let factor = kilogramsPerWeightUnit {
                        let kg = (weight * factor * 1000).rounded() / 1000
                        guard kg < 1000 else { skip("of an impossible weight"); continue }
                        try sample(SampleRecord(strings: series.strings(WearableKind.bodyMass, device: device), start: start, end: start, value: .real(kg)))
                    } else {
                        skip("whose unit the export does not state (no weight_unit in Profile.csv)")
                    }
                }
                if let fat = number(object["fat"]), fat > 0, fat < 100 {
                    let fraction = (fat * 100).rounded() / 10_000
                    try sample(SampleRecord(strings: series.strings(WearableKind.bodyFat, device: device), start: start, end: start, value: .real(fraction)))
                }
            case .sleep:
                guard let levels = object["levels"]?.object?["data"]?.array else { skip("without levels"); continue }
                for level in levels {
                    guard let entry = level.object, let text = entry["dateTime"]?.string, let start = local.time(isoLocal: text),
                          let seconds = number(entry["seconds"]), seconds > 0, seconds < 86_400 else { skip("without a readable stage"); continue }
                    let value: String
                    switch entry["level"]?.string {
                    case "wake", "awake", "restless": value = "HKCategoryValueSleepAnalysisAwake"
                    case "light": value = "HKCategoryValueSleepAnalysisAsleepCore"
                    case "deep": value = "HKCategoryValueSleepAnalysisAsleepDeep"
                    case "rem": value = "HKCategoryValueSleepAnalysisAsleepREM"
                    case "asleep": value = "HKCategoryValueSleepAnalysisAsleepUnspecified"
                    default: skip("of an unknown sleep level"); continue
                    }
                    let end = local.time(epoch: start.epoch + Int64(seconds))
                    try sample(SampleRecord(strings: series.strings(WearableKind.sleep), start: start, end: end, value: .text(value)))
                }
            }
        }
        return skipped
    }

    /// A file's sample series, each made once: its kind and device name it (every sample carries its
    /// series' one shared `SampleSeriesStrings`).
    struct Series {
        let sourceName: String
        private var made: [String: SampleSeriesStrings] = [:]

        init(sourceName: String) { self.sourceName = sourceName }

        mutating func strings(_ kind: (String, String), device: String = "") -> SampleSeriesStrings {
            let key = kind.0 + "\u{1F}" + device
            if let found = made[key] { return found }
            let new = SampleSeriesStrings(type: kind.0, sourceName: sourceName, sourceVersion: "", device: device, unit: kind.1)
            made[key] = new
            return new
        }
    }

    /// Wall times without a zone → instants in `zone`, through Model's one calendar (`DayCalendar`),
    /// a day without a change of offset looked up once.
    struct WallTimes {
        let calendar: DayCalendar
        /// The last day (days since 1970-01-01 of the zone's clock) found without a change of offset,
        /// and the offset the whole day has.
        var plainDay: (day: Int64, offset: Int64)?

        init(zone: DayZone) { calendar = DayCalendar(zone) }

        /// "MM/DD/YY HH:MM:SS" (years 2000–2099).
        mutating func time(usDateTime text: String) -> SampleRecord.Time? {
            let b = Array(text.utf8)
            guard b.count == 17, b[2] == 0x2F, b[5] == 0x2F, b[8] == 0x20, b[11] == 0x3A, b[14] == 0x3A else { return nil }
            guard let month = digits(b, 0), let day = digits(b, 3), let year = digits(b, 6), let hour = digits(b, 9),
                  let minute = digits(b, 12), let second = digits(b, 15) else { return nil }
            return local(year: 2000 + year, month: month, day: day, hour: hour, minute: minute, second: second)
        }

        /// The start of the date a text begins with ("YYYY-MM-DD…"; what follows it is not read).
        mutating func time(isoDate text: String) -> SampleRecord.Time? {
            let b = Array(text.utf8.prefix(10))
            guard b.count == 10, b[4] == 0x2D, b[7] == 0x2D, let y1 = digits(b, 0), let y2 = digits(b, 2), let month = digits(b, 5),
                  let day = digits(b, 8) else { return nil }
            return local(year: y1 * 100 + y2, month: month, day: day, hour: 0, minute: 0, second: 0)
        }

        /// "YYYY-MM-DDTHH:MM:SS(.SSS)".
        mutating func time(isoLocal text: String) -> SampleRecord.Time? {
            let b = Array(text.utf8)
            guard b.count >= 19, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
                  let y1 = digits(b, 0), let y2 = digits(b, 2), let month = digits(b, 5), let day = digits(b, 8), let hour = digits(b, 11),
                  let minute = digits(b, 14), let second = digits(b, 17) else { return nil }
            return local(year: y1 * 100 + y2, month: month, day: day, hour: hour, minute: minute, second: second)
        }

        func time(epoch: Int64) -> SampleRecord.Time {
            SampleRecord.Time(epoch: epoch, offsetMinutes: Int(DayCalendar.offset(of: calendar.zone, at: epoch) / 60))
        }

        private func digits(_ b: [UInt8], _ i: Int) -> Int? {
            let a = Int(b[i]) - 48, c = Int(b[i + 1]) - 48
            guard (0...9).contains(a), (0...9).contains(c) else { return nil }
            return a * 10 + c
        }

        private mutating func local(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> SampleRecord.Time? {
            guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
            let days = Int64(CivilDays.days(year, month, day))
            let wall = days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
            if plainDay?.day != days {
                let start = calendar.instant(ofWall: days * 86_400), end = calendar.instant(ofWall: (days + 1) * 86_400)
                plainDay = end.epoch - start.epoch == 86_400 && start.offset == end.offset ? (days, start.offset) : nil
            }
            let found = plainDay.map { (epoch: wall - $0.offset, offset: $0.offset) } ?? calendar.instant(ofWall: wall)
            return SampleRecord.Time(epoch: found.epoch, offsetMinutes: Int(found.offset / 60))
        }
    }
}
