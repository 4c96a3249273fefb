import Foundation
import HReaderJSON
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
        // In Double: the difference of two far-apart Int64 instants overflows Int64.
        let span = max(Double(range.end) - Double(range.start), 1)
        var sums = [(time: Double, value: Double, count: Int)](repeating: (0, 0, 0), count: maximumPoints)
        for reading in readings {
            let position = (reading.time - Double(range.start)) / span
            let scaled = (position * Double(maximumPoints)).rounded(.down)
            let bucket = scaled.isFinite ? Int(min(max(scaled, 0), Double(maximumPoints - 1))) : 0
            sums[bucket].time += reading.time
            sums[bucket].value += reading.value
            sums[bucket].count += 1
        }
        return sums.compactMap { $0.count == 0 ? nil : Point(time: $0.time / Double($0.count), value: $0.value / Double($0.count)) }
    }
}

extension OpenVault {
    /// The patient's vital signs in `range`, one series per description in the timeline's order
    /// (blood pressure last, systolic before diastolic); struck entries and text values are left out.
    /// Values and units are those people read (`ReadableUnits`): Apple Health's 0.99 % is 99 %.
    public func vitalSeries(patient: Patient, range: TimelineRange, maximumPoints: Int = 400) throws -> [VitalSeries] {
        var groups: [String: (unit: String?, points: [VitalSeries.Point])] = [:]
        try read {
            // Codes matter only to a `%` or `count` reading (ReadableUnits.needsCodes): they are read once per
            // source, description and unit, not decoded for each of a decade's rows.
            var codes: [String: [String: [String]]] = [:]
            func codesOf(_ row: TimelineRow) throws -> [String: [String]] {
                guard ReadableUnits.needsCodes(row.unit) else { return [:] }
                let key = "\(row.sourceID)\u{1F}\(row.description)\u{1F}\(row.unit ?? "")"
                if let known = codes[key] { return known }
                let found = try entries.get(id: row.id)?.content.codes ?? [:]
                codes[key] = found
                return found
            }
            for row in try entries.timelineRows(patientID: patient.id, from: range.start, to: range.end, type: .vitalSign) {
                for (description, number) in TimelineQuery.vitalReadings(row) {
                    guard let number else { continue }
                    let shown = ReadableUnits.quantity(number, unit: row.unit, codes: try codesOf(row), description: description)
                    groups[description, default: (shown.unit, [])].points.append(VitalSeries.Point(time: Double(row.time), value: shown.value))
                }
            }
        }
        return TimelineQuery.orderedVitals(groups).map { description, group in
            let values = group.points.map(\.value)
            return VitalSeries(description: description, unit: group.unit,
                               points: VitalSeries.downsample(group.points, range: range, maximumPoints: maximumPoints),
                               readings: group.points.count, minimum: values.min() ?? 0, maximum: values.max() ?? 0)
        }
    }

    /// When the patient's latest entry happened (date, else start, else end), for "jump to the latest".
    public func latestEntryTime(of patient: Patient) throws -> Int64? {
        try read { try entries.latestTime(patientID: patient.id) }
    }
}
