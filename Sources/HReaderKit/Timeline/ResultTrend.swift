import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// One lab result code over time: what the web view's lab trends chart (cholesterol, HbA1c, creatinine).
/// Values are in the units people read (`ReadableUnits`); each reading keeps the reference range and
/// the interpretation flag its source gave (a FHIR Observation's `referenceRange` and `interpretation`,
/// read from the entry's raw resource), and is out of range when it lies outside that range or its
/// source flagged it high, low or abnormal.
///
///     let trends = try open.resultTrends(patient: ada, code: "LOINC|2093-3")
///     trends.first?.referenceRange   // (low: 100, high: 199)
public struct ResultTrend: Sendable, Equatable {
    /// A reading, or for a long range the average of the readings of one stretch of time.
    public struct Point: Sendable, Equatable {
        /// Epoch seconds; for a bucket, the mean time of its readings.
        public let time: Double
        public let value: Double
        /// How many readings the point stands for (1 unless averaged).
        public let readings: Int
        /// How many of them were out of range.
        public let outOfRange: Int
        /// The reading's own range and flag (a single reading only).
        public let low: Double?
        public let high: Double?
        public let flag: String?
        /// The entry's local id (a single reading only), as `hreader entries` takes it.
        public let entryID: Int64?
    }

    /// "LOINC|2093-3" (system|code, LOINC under one name however the source spelled its system), or
    /// "description|HbA1c" for results that carry no code.
    public let key: String
    public let system: String?
    public let code: String?
    /// The latest reading's description.
    public let description: String
    public let unit: String?
    /// The latest reading's reference range, the band the chart draws (either bound may be missing).
    public let referenceLow: Double?
    public let referenceHigh: Double?
    public let points: [Point]
    public let readings: Int
    public let outOfRange: Int
    public let minimum: Double
    public let maximum: Double
    public let first: Int64
    public let last: Int64

    public var json: JSONValue {
        // Only the bounds the source gave: {"high": 5.6} for an upper limit alone.
        let bounds = JSONObject([("low", referenceLow), ("high", referenceHigh)].compactMap { name, value in
            value.map { (key: name, value: JSONValue.double($0)) }
        })
        let range: JSONValue = bounds.members.isEmpty ? .null : .object(bounds)
        return .object([
            ("key", .string(key)), ("system", system.map(JSONValue.string) ?? .null), ("code", code.map(JSONValue.string) ?? .null),
            ("description", .string(description)), ("unit", unit.map(JSONValue.string) ?? .null), ("reference_range", range),
            ("readings", .int(readings)), ("out_of_range", .int(outOfRange)), ("min", .double(minimum)), ("max", .double(maximum)),
            ("first", .int(first)), ("last", .int(last)),
            ("points", .array(points.map { p in
                var members: JSONObject = [("time", .double(p.time.rounded())), ("value", .double(p.value)), ("readings", .int(p.readings)),
                                           ("out_of_range", .int(p.outOfRange))]
                if let low = p.low { members.append(("low", .double(low))) }
                if let high = p.high { members.append(("high", .double(high))) }
                if let flag = p.flag {
                    members.append(("flag", .string(flag)))
                    members.append(("flag_text", .string(ResultFlag.words(flag))))
                }
                if let id = p.entryID { members.append(("entry_id", .int(id))) }
                return .object(members)
            })),
        ])
    }

    // MARK: Keys

    static let loincSystems: Set<String> = ["LOINC", "http://loinc.org", "urn:oid:2.16.840.1.113883.6.1", "2.16.840.1.113883.6.1"]

    /// The code a result is charted by: its LOINC code when it has one, else the first code of the first
    /// system (by name), else its description.
    public static func key(codes: [String: [String]], description: String) -> (key: String, system: String?, code: String?) {
        let trimmed = codes.mapValues { $0.map { $0.trimmingSpaces() }.filter { !$0.isEmpty } }
        if let loinc = loincSystems.sorted().lazy.compactMap({ trimmed[$0]?.first }).first {
            return ("LOINC|\(loinc)", "LOINC", loinc)
        }
        for system in trimmed.keys.sorted() where !loincSystems.contains(system) {
            if let code = trimmed[system]?.first { return ("\(system)|\(code)", system, code) }
        }
        let name = description.trimmingCharacters(in: .whitespacesAndNewlines)
        return ("description|\(name)", nil, nil)
    }

    // MARK: Reference ranges

    /// What a FHIR Observation says about one reading's normal range and its interpretation.
    struct Reference: Equatable {
        var low: Double?
        var high: Double?
        var flag: String?

        /// H, L, HH, LL, A, AA, HU, LU, HX, LX, <, >, and their v2 spellings: outside normal by the source's word.
        static let abnormalFlags: Set<String> = ["H", "L", "HH", "LL", "A", "AA", "HU", "LU", "HX", "LX", "<", ">", "U", "D"]

        /// `raw` is the entry's raw resource; nothing comes of anything but a FHIR Observation.
        init(raw: String?) {
            guard let raw, raw.contains("\"referenceRange\"") || raw.contains("\"interpretation\""),
                  let observation = try? JSONParser.parse(raw), observation["resourceType"]?.string == "Observation" else { return }
            // The first range with a bound: FHIR lists the normal range first; others name a population in appliesTo.
            for range in observation["referenceRange"]?.array ?? [] {
                let low = range["low"]?["value"]?.number, high = range["high"]?["value"]?.number
                if low != nil || high != nil {
                    self.low = low.flatMap { $0.isFinite ? $0 : nil }
                    self.high = high.flatMap { $0.isFinite ? $0 : nil }
                    break
                }
            }
            for interpretation in observation["interpretation"]?.array ?? [] {
                if let code = interpretation["coding"]?.array?.lazy.compactMap({ $0["code"]?.string }).first {
                    flag = String(code.prefix(8))
                    break
                }
            }
        }

        init(low: Double?, high: Double?, flag: String?) { self.low = low; self.high = high; self.flag = flag }

        func isOutside(_ value: Double) -> Bool {
            if let low, value < low { return true }
            if let high, value > high { return true }
            return flag.map { Self.abnormalFlags.contains($0.uppercased()) } ?? false
        }
    }

    // MARK: Downsampling

    struct Reading {
        let time: Int64
        let value: Double
        let reference: Reference
        let entryID: Int64
        var outside: Bool { reference.isOutside(value) }
    }

    /// At most `maximumPoints` points over [start, end]: readings alone when they fit, else the mean of
    /// each of that many equal stretches of time (a stretch with none is left out). A mean stands for
    /// its readings and counts those out of range, so the chart still marks the stretch.
    static func single(_ r: Reading) -> Point {
        Point(time: Double(r.time), value: r.value, readings: 1, outOfRange: r.outside ? 1 : 0, low: r.reference.low,
              high: r.reference.high, flag: r.reference.flag, entryID: r.entryID)
    }

    /// Which of `count` equal stretches of [start, end] `time` falls in (the ends clamped).
    static func bucket(_ time: Int64, start: Int64, end: Int64, count: Int) -> Int {
        let span = max(Double(end) - Double(start), 1)
        let scaled = ((Double(time) - Double(start)) / span * Double(count)).rounded(.down)
        return scaled.isFinite ? Int(min(max(scaled, 0), Double(count - 1))) : 0
    }

    static func points(_ readings: [Reading], start: Int64, end: Int64, maximumPoints: Int) -> [Point] {
        guard readings.count > maximumPoints, maximumPoints > 0 else { return readings.map(single) }
        var buckets = [[Reading]](repeating: [], count: maximumPoints)
        for reading in readings {
            buckets[bucket(reading.time, start: start, end: end, count: maximumPoints)].append(reading)
        }
        return buckets.compactMap { bucket in
            guard let only = bucket.first else { return nil }
            if bucket.count == 1 { return single(only) }
            let count = Double(bucket.count)
            return Point(time: bucket.reduce(0) { $0 + Double($1.time) } / count, value: bucket.reduce(0) { $0 + $1.value } / count,
                         readings: bucket.count, outOfRange: bucket.filter(\.outside).count, low: nil, high: nil, flag: nil, entryID: nil)
        }
    }
}

extension OpenVault {
    /// The patient's numeric results, one trend per result code (`ResultTrend.key`) and unit, ordered by
    /// description; only `code` when given. Without a range, all of the patient's results, each trend
    /// placed over its own first to last reading. Struck entries and text values are left out.
    ///
    /// Memory is bounded by the charts, not the record: the rows stream twice (a glucose monitor's ten
    /// years are a million samples). The first pass counts each trend and keeps its readings only while
    /// they fit in `maximumPoints`; the second averages the larger trends into that many stretches.
    public func resultTrends(patient: Patient, code: String? = nil, range: TimelineRange? = nil, maximumPoints: Int = 400) throws -> [ResultTrend] {
        let bounds = range.map { ($0.start, $0.end) } ?? (TimelineRange.supportedEpochs.lowerBound, TimelineRange.supportedEpochs.upperBound)
        struct Group {
            var key: String
            var system: String?
            var code: String?
            var description = ""
            var unit: String?
            var reference = ResultTrend.Reference(low: nil, high: nil, flag: nil)
            var count = 0
            var outOfRange = 0
            var minimum = Double.infinity, maximum = -Double.infinity
            var first: Int64 = 0, last: Int64 = 0
            /// All readings while they fit in `maximumPoints`; then none (the second pass averages).
            var readings: [ResultTrend.Reading] = []
            var buckets: [Bucket] = []
        }
        struct Bucket {
            var count = 0, outOfRange = 0
            var time = 0.0, value = 0.0
            var only: ResultTrend.Reading?
        }
        return try read {
            // Raw resources (for reference ranges) of the stored entries: a clinical record's worth;
            // Apple Health samples have none.
            let stored = try entries.list(patientID: patient.id, type: .result, from: bounds.0, to: bounds.1, samples: false)
            let raws = Dictionary(stored.map { ($0.id, $0.content.raw) }, uniquingKeysWith: { a, _ in a })
            var groups: [String: Group] = [:]
            /// A row as its trend reads it: the group's key, its reference, the reading; nil when not a number or not `code`.
            func reading(_ row: TimelineRow) -> (groupKey: String, key: (key: String, system: String?, code: String?), description: String,
                                                  unit: String?, reading: ResultTrend.Reading)? {
                let number = row.valueNumber ?? row.valueText.flatMap { Double($0.trimmingSpaces()) }
                guard let number, number.isFinite else { return nil }
                let key = ResultTrend.key(codes: row.codes, description: row.description)
                if let code, key.key != code { return nil }
                let shown = ReadableUnits.quantity(number, unit: row.unit, codes: row.codes, description: row.description)
                var reference = ResultTrend.Reference(raw: raws[row.id] ?? nil)
                // The range is in the unit recorded: it is shown as the value is (a fraction's range too).
                if shown.value != number, number != 0 {
                    let factor = shown.value / number
                    reference.low = reference.low.map { ReadableUnits.rounded($0 * factor) }
                    reference.high = reference.high.map { ReadableUnits.rounded($0 * factor) }
                }
                // One chart per code and unit: a code a lab reported in mg/dL and another in mmol/L is two charts.
                return (key.key + "\u{1F}" + (shown.unit ?? ""), key, row.description, shown.unit,
                        ResultTrend.Reading(time: row.time, value: shown.value, reference: reference, entryID: row.id))
            }
            try entries.forEachTimelineRow(patientID: patient.id, from: bounds.0, to: bounds.1, type: .result, withCodes: true) { row in
                guard let read = reading(row) else { return }
                var group = groups[read.groupKey] ?? Group(key: read.key.key, system: read.key.system, code: read.key.code, first: read.reading.time)
                group.description = read.description
                group.unit = read.unit
                let reference = read.reading.reference
                if reference.low != nil || reference.high != nil { group.reference = reference }
                group.count += 1
                if read.reading.outside { group.outOfRange += 1 }
                group.minimum = min(group.minimum, read.reading.value)
                group.maximum = max(group.maximum, read.reading.value)
                group.last = read.reading.time
                if group.count <= maximumPoints { group.readings.append(read.reading) } else { group.readings = [] }
                groups[read.groupKey] = group
            }
            // Trends with more readings than points: their stretches, from a second pass.
            func span(_ group: Group) -> (Int64, Int64) { range.map { ($0.start, $0.end) } ?? (group.first, group.last) }
            if maximumPoints > 0, groups.values.contains(where: { $0.count > maximumPoints }) {
                for key in groups.keys where groups[key]!.count > maximumPoints {
                    groups[key]!.buckets = Array(repeating: Bucket(), count: maximumPoints)
                }
                try entries.forEachTimelineRow(patientID: patient.id, from: bounds.0, to: bounds.1, type: .result, withCodes: true) { row in
                    guard let read = reading(row), let group = groups[read.groupKey], !group.buckets.isEmpty else { return }
                    let (start, end) = span(group)
                    let index = ResultTrend.bucket(read.reading.time, start: start, end: end, count: maximumPoints)
                    var bucket = group.buckets[index]
                    bucket.count += 1
                    if read.reading.outside { bucket.outOfRange += 1 }
                    bucket.time += Double(read.reading.time)
                    bucket.value += read.reading.value
                    if bucket.only == nil { bucket.only = read.reading }
                    groups[read.groupKey]!.buckets[index] = bucket
                }
            }
            return groups.values.map { group in
                let (start, end) = span(group)
                let points = group.buckets.isEmpty
                    ? ResultTrend.points(group.readings, start: start, end: end, maximumPoints: maximumPoints)
                    : group.buckets.compactMap { bucket -> ResultTrend.Point? in
                        guard let only = bucket.only else { return nil }
                        if bucket.count == 1 { return ResultTrend.single(only) }
                        let count = Double(bucket.count)
                        return ResultTrend.Point(time: bucket.time / count, value: bucket.value / count, readings: bucket.count,
                                                 outOfRange: bucket.outOfRange, low: nil, high: nil, flag: nil, entryID: nil)
                    }
                return ResultTrend(key: group.key, system: group.system, code: group.code, description: group.description, unit: group.unit,
                                   referenceLow: group.reference.low, referenceHigh: group.reference.high, points: points,
                                   readings: group.count, outOfRange: group.outOfRange,
                                   minimum: group.count == 0 ? 0 : group.minimum, maximum: group.count == 0 ? 0 : group.maximum,
                                   first: group.first, last: group.last)
            }.sorted { ($0.description.lowercased(), $0.key, $0.unit ?? "") < ($1.description.lowercased(), $1.key, $1.unit ?? "") }
        }
    }

    /// The trend key of one of the patient's results (`ResultTrend.key`), for "this result's trend"; nil
    /// when the patient has no such entry or it is not a result.
    public func resultTrendKey(entry reference: String, patient: Patient) throws -> String? {
        let entry = try read { try entries.find(reference) }
        guard let entry, entry.patientID == patient.id, entry.content.type == .result else { return nil }
        return ResultTrend.key(codes: entry.content.codes, description: entry.content.description).key
    }
}
