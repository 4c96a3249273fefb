import Foundation
import HReaderModel

/// Fitbit's newer CSV files, which Google Takeout delivers beside the JSON day files, in
/// `Physical Activity_GoogleData/` (docs/wearables.md): one file per metric and day or month
/// (`heart_rate_2026-03-01.csv`, `steps_2026-03-01.csv`, …) and one for the whole history of a daily
/// value (`daily_resting_heart_rate.csv`). Each holds a header line and one reading a line:
///
///     timestamp,beats per minute,data source
///     2026-03-01T06:00:05Z,71,Pixel Watch 2
///
/// Unlike the JSON, each time states its offset (UTC) and each reading the device or app that made
/// it (`data source`), so the same metric's JSON twin is passed over where a CSV file of it exists
/// (`jsonTwin`). A file holding only `no data` is Fitbit's way of saying the account has none.
public struct FitbitCSVReader {
    /// The account's zone: a reading's instant is the file's, its offset the zone's at that instant
    /// (the wearer's clock, by which its day is counted); a daily value's date is a day of this zone.
    public var zone: DayZone
    public var sourceName = "Fitbit"

    public init(zone: DayZone = .local) { self.zone = zone }

    /// The folder Takeout keeps these files in.
    public static let folder = "Physical Activity_GoogleData"

    public enum Metric: String, CaseIterable, Sendable {
        case heartRate = "heart_rate", steps, oxygenSaturation = "oxygen_saturation",
             heartRateVariability = "heart_rate_variability", restingHeartRate = "daily_resting_heart_rate"

        /// The JSON day files of the same readings, passed over when this metric has CSV files.
        public var jsonTwin: FitbitTakeoutReader.Metric? {
            switch self {
            case .heartRate: .heartRate
            case .steps: .steps
            case .restingHeartRate: .restingHeartRate
            case .oxygenSaturation, .heartRateVariability: nil
            }
        }

        /// The column holding the reading.
        var valueColumn: String {
            switch self {
            case .heartRate, .restingHeartRate: "beats per minute"
            case .steps: "steps"
            case .oxygenSaturation: "oxygen saturation percentage"
            case .heartRateVariability: "root mean square of successive differences milliseconds"
            }
        }
    }

    /// The metric of a file named `<metric>_YYYY-MM-DD.csv` or, for daily values, `<metric>.csv`;
    /// nil for any other file (Fitbit writes many: distance, calories, readmes, …).
    public static func metric(ofFileNamed name: String) -> Metric? {
        guard name.hasSuffix(".csv") else { return nil }
        var stem = Substring(name.dropLast(4))
        let date = stem.suffix(11)
        if date.count == 11, date.first == "_", date.dropFirst().allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) {
            stem = stem.dropLast(11)
            guard let metric = Metric(rawValue: String(stem)), metric != .restingHeartRate else { return nil }
            return metric
        }
        return Metric(rawValue: String(stem)) == .restingHeartRate ? .restingHeartRate : nil
    }

    /// Reads one file of `metric`; the samples are handed on; returns what was skipped, by reason.
    public func read(_ bytes: [UInt8], metric: Metric, name: String, sample: (SampleRecord) throws -> Void) throws -> [String: Int] {
        var lines = CSVLines(bytes)
        guard let headerLine = lines.next() else { return [:] }
        if headerLine.trimmingCharacters(in: .whitespaces).lowercased() == "no data" { return [:] }
        let header = FitbitTakeoutReader.csvFields(headerLine).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let timeColumn = header.firstIndex(of: "timestamp") else {
            throw FitbitTakeoutReader.Failure.malformed("\(name): no timestamp column, as Fitbit's CSV files have")
        }
        guard let valueColumn = header.firstIndex(of: metric.valueColumn) else {
            throw FitbitTakeoutReader.Failure.malformed("\(name): no '\(metric.valueColumn)' column, as Fitbit's \(metric.rawValue) files have")
        }
        let deviceColumn = header.firstIndex(of: "data source")
        let sdnnColumn = metric == .heartRateVariability ? header.firstIndex(of: "standard deviation milliseconds") : nil

        var skipped: [String: Int] = [:]
        var series = FitbitTakeoutReader.Series(sourceName: sourceName)
        var local = FitbitTakeoutReader.WallTimes(zone: zone)
        func skip(_ reason: String) { skipped["a Fitbit \(metric.rawValue) reading \(reason)", default: 0] += 1 }
        func number(_ fields: [String], _ column: Int) -> Double? {
            guard column < fields.count, let value = Double(fields[column].trimmingCharacters(in: .whitespaces)), value.isFinite else { return nil }
            return value
        }
        while let line = lines.next() {
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            let fields = FitbitTakeoutReader.csvFields(line)
            let device = deviceColumn.flatMap { $0 < fields.count ? String(fields[$0].trimmingCharacters(in: .whitespaces).prefix(100)) : nil } ?? ""
            guard timeColumn < fields.count else { skip("without a timestamp"); continue }
            let stamp = fields[timeColumn].trimmingCharacters(in: .whitespaces)
            if metric == .restingHeartRate {
                // A day's value, stamped at midnight UTC of its date: kept at the start of that date in the account's zone.
                guard let start = local.time(isoDate: stamp) else { skip("without a readable timestamp"); continue }
                guard let bpm = number(fields, valueColumn), bpm > 0 else { continue }   // 0 or empty: not measured that day
                guard bpm < 300 else { skip("of an impossible heart rate"); continue }
                try sample(SampleRecord(strings: series.strings(WearableKind.restingHeartRate, device: device), start: start, end: start,
                                        value: .real((bpm * 100).rounded() / 100)))
                continue
            }
            guard let epoch = Self.instant(stamp) else { skip("without a readable timestamp"); continue }
            let start = local.time(epoch: epoch)
            switch metric {
            case .heartRate:
                guard let bpm = number(fields, valueColumn), bpm > 0 else { skip("without a value"); continue }
                guard bpm < 300 else { skip("of an impossible heart rate"); continue }
                try sample(SampleRecord(strings: series.strings(WearableKind.heartRate, device: device), start: start, end: start, value: .real(bpm)))
            case .steps:
                guard let steps = number(fields, valueColumn) else { skip("without a value"); continue }
                guard steps > 0 else { continue }   // a minute without steps is no reading
                guard steps <= 1_000 else { skip("of an impossible step count"); continue }
                try sample(SampleRecord(strings: series.strings(WearableKind.steps, device: device), start: start, end: local.time(epoch: epoch + 60),
                                        value: .real(steps)))
            case .oxygenSaturation:
                guard let percent = number(fields, valueColumn), percent > 0 else { skip("without a value"); continue }
                guard percent <= 100 else { skip("of an impossible saturation"); continue }
                // Kept as HealthKit keeps it, a fraction with the unit %: 95.5 → 0.955.
                try sample(SampleRecord(strings: series.strings(WearableKind.oxygenSaturation, device: device), start: start, end: start,
                                        value: .real((percent * 100).rounded() / 10_000)))
            case .heartRateVariability:
                // RMSSD, Fitbit's own measure; the standard deviation (SDNN, Apple Health's measure) beside it when stated.
                // Two measures, two kinds: neither is the other.
                guard let rmssd = number(fields, valueColumn), rmssd > 0 else { skip("without a value"); continue }
                guard rmssd < 1_000 else { skip("of an impossible variability"); continue }
                try sample(SampleRecord(strings: series.strings(WearableKind.heartRateVariabilityRMSSD, device: device), start: start, end: start,
                                        value: .real(rmssd)))
                if let column = sdnnColumn, let sdnn = number(fields, column), sdnn > 0, sdnn < 1_000 {
                    try sample(SampleRecord(strings: series.strings(WearableKind.heartRateVariability, device: device), start: start, end: start,
                                            value: .real(sdnn)))
                }
            case .restingHeartRate:
                break
            }
        }
        return skipped
    }

    /// "YYYY-MM-DDTHH:MM:SS(.fff)" followed by "Z" or "±HH:MM" (or "±HHMM"): seconds since 1970, the
    /// fraction dropped; nil for anything else (a time without an offset names no instant).
    static func instant(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54 || b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A else { return nil }
        func two(_ i: Int) -> Int? {
            let a = Int(b[i]) - 48, c = Int(b[i + 1]) - 48
            guard (0...9).contains(a), (0...9).contains(c) else { return nil }
            return a * 10 + c
        }
        guard let y1 = two(0), let y2 = two(2), let month = two(5), let day = two(8), let hour = two(11), let minute = two(14),
              let second = two(17), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var i = 19
        if b[i] == 0x2E {
            i += 1
            let digits = i
            while i < b.count, (0x30...0x39).contains(b[i]) { i += 1 }
            guard i > digits else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        switch b[i] {
        case 0x5A, 0x7A:   // Z
            guard i + 1 == b.count else { return nil }
        case 0x2B, 0x2D:   // + or -
            let rest = b.count - i - 1
            guard rest == 5 || rest == 4, let h = two(i + 1) else { return nil }
            let m: Int?
            if rest == 5 { guard b[i + 3] == 0x3A else { return nil }; m = two(i + 4) } else { m = two(i + 3) }
            guard let m, h < 24, m < 60 else { return nil }
            offset = (h * 60 + m) * 60 * (b[i] == 0x2D ? -1 : 1)
        default:
            return nil
        }
        let days = Int64(CivilDays.days(y1 * 100 + y2, month, day))
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
    }
}

/// The lines of a CSV file's bytes (a UTF-8 byte-order mark dropped, LF or CRLF), one at a time.
struct CSVLines: IteratorProtocol {
    private let bytes: [UInt8]
    private var position: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        position = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    }

    mutating func next() -> String? {
        guard position < bytes.count else { return nil }
        var end = position
        while end < bytes.count, bytes[end] != 0x0A { end += 1 }
        var last = end
        if last > position, bytes[last - 1] == 0x0D { last -= 1 }
        let line = String(decoding: bytes[position..<last], as: UTF8.self)
        position = end + 1
        return line
    }
}
