import Foundation
import HReaderJSON
import HReaderModel

/// FIT files → wearable readings (docs/wearables.md), pure. Reads the file twice over the decoder:
/// first what places its times (the local time offsets it states, `activity`, `monitoring_info` and
/// `timestamp_correlation`) and who wrote it (`file_id`, `device_info`), then its readings:
///
/// - `record`: heart rate (an instant each), and positions and altitudes, summarised as the route of
///   the session they fall in (`RouteSummary`);
/// - `monitoring`: heart rate, and steps, active energy and distance, which a monitoring file
///   accumulates per activity type through the day: each reading becomes the difference from the
///   one before of its type, over the time between them;
/// - `session`: an exercise entry ("Running workout") with its duration, distance, energy, heart
///   rate, power, cadence, laps and route;
/// - `hrv`: the beat-to-beat intervals, as one SDNN per session (or file);
/// - `sleep_level`: sleep stages, each lasting until the next.
///
/// Times are UTC (seconds since 1989-12-31T00:00:00Z) placed at the offset the file states for
/// them (the last statement at or before the time, else the first), or at `zone`'s offset then when
/// the file states none (the local zone the timeline counts days in, unless a caller names another).
public struct FITMapper {
    public var zone: DayZone

    public init(zone: DayZone = .local) { self.zone = zone }

    /// FIT times below this are seconds since the device started, not dates (the protocol's rule).
    static let minimumDate: UInt32 = 0x1000_0000

    /// What the first pass learns.
    struct Context {
        var offsets: [(utc: UInt32, minutes: Int)] = []
        var manufacturer: Int?
        var product: Int?
        var productName: String?
        var serial: Int?
        var softwareVersion: Double?
        var firstTime: UInt32?
        var lastTime: UInt32?
    }

    public func map(_ bytes: [UInt8], name: String) throws -> WearableReadings {
        var context = Context()
        var time = TimeTracker()
        try FITDecoder.decode(bytes) { message in
            let t = time.resolve(message)
            if let t, t >= Self.minimumDate {
                context.firstTime = min(context.firstTime ?? t, t)
                context.lastTime = max(context.lastTime ?? t, t)
            }
            switch message.global {
            case FITProfile.Message.activity:
                note(offset: message.uint32(FITProfile.Activity.localTimestamp), at: t, into: &context)
            case FITProfile.Message.monitoringInfo:
                note(offset: message.uint32(FITProfile.MonitoringInfo.localTimestamp), at: t, into: &context)
            case FITProfile.Message.timestampCorrelation:
                note(offset: message.uint32(FITProfile.TimestampCorrelation.localTimestamp), at: t, into: &context)
            case FITProfile.Message.fileID:
                context.manufacturer = message.integer(FITProfile.FileID.manufacturer) ?? context.manufacturer
                context.product = message.integer(FITProfile.FileID.product) ?? context.product
                context.serial = message.integer(FITProfile.FileID.serialNumber) ?? context.serial
                context.productName = message.text(FITProfile.FileID.productName) ?? context.productName
            case FITProfile.Message.deviceInfo:
                // The creator (device index 0) names the device better than file_id does.
                guard message.value(FITProfile.DeviceInfo.deviceIndex).map({ $0 == 0 }) ?? false else { return }
                context.manufacturer = message.integer(FITProfile.DeviceInfo.manufacturer) ?? context.manufacturer
                context.product = message.integer(FITProfile.DeviceInfo.product) ?? context.product
                context.serial = message.integer(FITProfile.DeviceInfo.serialNumber) ?? context.serial
                context.productName = message.text(FITProfile.DeviceInfo.productName) ?? context.productName
                context.softwareVersion = message.value(FITProfile.DeviceInfo.softwareVersion, scale: 100) ?? context.softwareVersion
            default:
                break
            }
        } 
        context.offsets.sort { $0.utc < $1.utc }
        var state = MappingState(context: context, zone: zone, name: name)
        time = TimeTracker()
        try FITDecoder.decode(bytes) { message in
            let t = time.resolve(message)
            state.add(message, at: t)
        }
        return state.finish()
    }

    private func note(offset local: UInt32?, at utc: UInt32?, into context: inout Context) {
        guard let local, let utc, utc >= Self.minimumDate else { return }
        let seconds = Int64(local) - Int64(utc)
        // Offsets on Earth are within ±14 h; a whole minute each.
        guard abs(seconds) <= 14 * 3600 + 59 else { return }
        context.offsets.append((utc, Int((Double(seconds) / 60).rounded())))
    }

    /// Each message's time: its timestamp (field 253 or a compressed header's), a `timestamp_16`
    /// field's against the last full one, or the last full one.
    struct TimeTracker {
        var last: UInt32?

        mutating func resolve(_ message: FITDecoder.Message) -> UInt32? {
            if let t = message.timestamp { last = t; return t }
            if message.global == FITProfile.Message.monitoring, let short = message.uint32(FITProfile.Monitoring.timestamp16), let base = last {
                let t = base &+ ((short &- (base & 0xFFFF)) & 0xFFFF)
                last = t
                return t
            }
            return last
        }
    }

    /// The second pass.
    struct MappingState {
        let context: Context
        let zone: DayZone
        let name: String
        var readings = WearableReadings()
        var strings: [String: SampleSeriesStrings] = [:]
        let sourceName: String
        let sourceVersion: String
        let device: String
        /// Monitoring's running totals, by activity type and field: (value, time).
        var totals: [Int: [UInt8: (value: Double, time: UInt32)]] = [:]
        var sessions: [(start: UInt32, end: UInt32)] = []
        /// The `record`s' positions (degrees) and altitudes (m), in file order, for the routes of the
        /// sessions they fall in: a session message comes after its records.
        var positions: [(time: UInt32, latitude: Double, longitude: Double, altitude: Double?)] = []
        /// A week of one position a second: what a file may hold for its routes (a crafted 64 MiB file
        /// of bare positions would otherwise keep some 7 million of them, about 240 MB).
        static let maxPositions = 604_800
        /// Each session's entry (its place in `readings.entries`), span, text parts and raw members,
        /// finished with its route once every record is read.
        var pending: [(entry: Int, start: UInt32, end: UInt32, parts: [String], raw: [JSONObject.Member])] = []
        var laps = 0
        var beats: [Double] = []          // RR intervals, seconds
        var sleep: (level: Int, time: UInt32)?

        init(context: Context, zone: DayZone, name: String) {
            self.context = context
            self.zone = zone
            self.name = name
            let maker = context.manufacturer.map(FITProfile.manufacturer) ?? "FIT device"
            if let product = context.productName?.trimmingCharacters(in: .whitespaces), !product.isEmpty {
                sourceName = product.lowercased().hasPrefix(maker.lowercased()) ? product : "\(maker) \(product)"
            } else if let product = context.product {
                sourceName = "\(maker) product \(product)"
            } else {
                sourceName = maker
            }
            sourceVersion = context.softwareVersion.map { SampleText.plain($0) } ?? ""
            device = context.serial.map { "serial \($0)" } ?? ""
            readings.devices = [sourceName]
        }

        mutating func series(_ kind: (String, String)) -> SampleSeriesStrings {
            if let found = strings[kind.0] { return found }
            let made = SampleSeriesStrings(type: kind.0, sourceName: sourceName, sourceVersion: sourceVersion, device: device, unit: kind.1)
            strings[kind.0] = made
            return made
        }

        func time(_ t: UInt32) -> SampleRecord.Time {
            let epoch = Int64(t) + FITDecoder.epochOffset
            let minutes: Int
            if context.offsets.isEmpty {
                minutes = Int(DayCalendar.offset(of: zone, at: epoch) / 60)
            } else {
                minutes = (context.offsets.last { $0.utc <= t } ?? context.offsets[0]).minutes
            }
            return SampleRecord.Time(epoch: epoch, offsetMinutes: minutes)
        }

        mutating func sample(_ kind: (String, String), from start: UInt32, to end: UInt32? = nil, _ value: DatabaseValue,
                             metadata: [(key: String, value: String)] = []) {
            readings.samples.append(SampleRecord(strings: series(kind), start: time(start), end: time(end ?? start), value: value, metadata: metadata))
        }

        mutating func skip(_ reason: String) { readings.skipped[reason, default: 0] += 1 }

        mutating func add(_ message: FITDecoder.Message, at t: UInt32?) {
            switch message.global {
            case FITProfile.Message.record:
                typealias R = FITProfile.Record
                let hr = message.value(R.heartRate)
                let latitude = message.value(R.positionLatitude), longitude = message.value(R.positionLongitude)
                guard hr != nil || (latitude != nil && longitude != nil) else { return }
                guard let t, t >= FITMapper.minimumDate else { return skip("a FIT reading without a date (device time only)") }
                if let hr, hr > 0 { sample(WearableKind.heartRate, from: t, .real(hr)) }
                if let latitude, let longitude {
                    guard positions.count < Self.maxPositions else { return skip("a FIT position beyond a week's worth in one file") }
                    let altitude = message.value(R.enhancedAltitude, scale: 5, offset: 500) ?? message.value(R.altitude, scale: 5, offset: 500)
                    positions.append((t, latitude * FITProfile.degreesPerSemicircle, longitude * FITProfile.degreesPerSemicircle, altitude))
                }
            case FITProfile.Message.monitoring:
                guard let t, t >= FITMapper.minimumDate else { return skip("a FIT reading without a date (device time only)") }
                if let hr = message.value(FITProfile.Monitoring.heartRate), hr > 0 { sample(WearableKind.heartRate, from: t, .real(hr)) }
                monitoring(message, at: t)
            case FITProfile.Message.session:
                session(message, at: t)
            case FITProfile.Message.lap:
                laps += 1
            case FITProfile.Message.hrv:
                for value in message.values(FITProfile.HRV.time) {
                    if let v = value, v > 0 { beats.append(v / 1000) }
                }
            case FITProfile.Message.sleepLevel:
                guard let t, t >= FITMapper.minimumDate, let level = message.integer(FITProfile.SleepLevel.level) else { return }
                closeSleep(at: t)
                sleep = (level, t)
            case FITProfile.Message.fileID, FITProfile.Message.deviceInfo, FITProfile.Message.activity,
                 FITProfile.Message.monitoringInfo, FITProfile.Message.timestampCorrelation:
                break
            default:
                readings.unmapped[FITProfile.Message.name(message.global), default: 0] += 1
            }
        }

        /// Steps, active energy and distance: a monitoring file's running totals of the day, per
        /// activity type; the difference from the type's reading before, over the time between. A
        /// total lower than the one before starts again (a new day).
        mutating func monitoring(_ message: FITDecoder.Message, at t: UInt32) {
            let activity = message.integer(FITProfile.Monitoring.activityType) ?? 254
            let walking = activity == 1 || activity == 6
            let cycling = activity == 2
            var kinds: [(UInt8, (String, String), Double)] = []
            if walking { kinds.append((FITProfile.Monitoring.cycles, WearableKind.steps, 1)) }
            kinds.append((FITProfile.Monitoring.activeCalories, WearableKind.activeEnergy, 1))
            if walking || cycling {
                kinds.append((FITProfile.Monitoring.distance, cycling ? WearableKind.distanceCycling : WearableKind.distanceWalkingRunning, 100))
            }
            for (field, kind, scale) in kinds {
                guard let total = message.value(field, scale: scale) else { continue }
                let before = totals[activity]?[field]
                totals[activity, default: [:]][field] = (total, t)
                let delta: Double
                let start: UInt32
                if let before, total >= before.value, t >= before.time {
                    delta = total - before.value
                    start = before.time
                } else {
                    // The first total of the file, or one that started again: since the file's start
                    // (a monitoring file begins where the day's totals do), or the reading alone.
                    delta = total
                    start = before == nil ? min(context.firstTime ?? t, t) : t
                }
                guard delta > 0 else { continue }
                sample(kind, from: start, to: t, .real(delta))
            }
        }

        mutating func session(_ message: FITDecoder.Message, at t: UInt32?) {
            typealias S = FITProfile.Session
            guard let start = message.uint32(S.startTime), start >= FITMapper.minimumDate else {
                return skip("a FIT session without a start date")
            }
            let elapsed = (message.value(S.totalElapsedTime, scale: 1000) ?? message.value(S.totalTimerTime, scale: 1000)).map { max(0, $0) }
            let end = elapsed.map { UInt32(min(Double(UInt32.max), Double(start) + $0.rounded())) } ?? max(t ?? start, start)
            sessions.append((start, end))
            let sport = FITProfile.sport(message.integer(S.sport) ?? 0)
            var content = EntryContent(type: .activity, description: "\(sport) workout")
            let startTime = time(start), endTime = time(end)
            content.start = ClinicalTime(text: AppleHealthDate.rfc3339(startTime.epoch, offsetMinutes: startTime.offsetMinutes), epoch: startTime.epoch)
            content.end = ClinicalTime(text: AppleHealthDate.rfc3339(endTime.epoch, offsetMinutes: endTime.offsetMinutes), epoch: endTime.epoch)
            content.codes = ["com.garmin.fit": ["sport:\(sport.lowercased())"]]
            if let elapsed {
                content.valueNumber = (elapsed / 60 * 100).rounded() / 100
                content.unit = "min"
            }
            var parts: [String] = []
            var raw: [JSONObject.Member] = [("element", .string("FIT session")), ("sport", .string(sport)), ("source", .string(sourceName))]
            if let distance = message.value(S.totalDistance, scale: 100) {
                parts.append("\(SampleText.plain((distance / 10).rounded() / 100)) km")
                raw.append(("total_distance_m", .double(distance)))
            }
            if let energy = message.value(S.totalCalories) {
                parts.append("\(SampleText.plain(energy)) kcal")
                raw.append(("total_calories_kcal", .double(energy)))
            }
            if let hr = message.value(S.avgHeartRate) {
                parts.append("average heart rate \(SampleText.plain(hr))/min")
                raw.append(("avg_heart_rate", .double(hr)))
            }
            if let hr = message.value(S.maxHeartRate) { raw.append(("max_heart_rate", .double(hr))) }
            if let power = message.value(S.avgPower) {
                parts.append("average power \(SampleText.plain(power)) W")
                raw.append(("avg_power_w", .double(power)))
            }
            if let power = message.value(S.maxPower) { raw.append(("max_power_w", .double(power))) }
            if let cadence = message.value(S.avgCadence) { raw.append(("avg_cadence_rpm", .double(cadence))) }
            if let cadence = message.value(S.maxCadence) { raw.append(("max_cadence_rpm", .double(cadence))) }
            if let speed = message.value(S.enhancedAvgSpeed, scale: 1000) ?? message.value(S.avgSpeed, scale: 1000) {
                raw.append(("avg_speed_m_s", .double(speed)))
            }
            if let speed = message.value(S.enhancedMaxSpeed, scale: 1000) ?? message.value(S.maxSpeed, scale: 1000) {
                raw.append(("max_speed_m_s", .double(speed)))
            }
            if let ascent = message.value(S.totalAscent) { raw.append(("total_ascent_m", .double(ascent))) }
            if let descent = message.value(S.totalDescent) { raw.append(("total_descent_m", .double(descent))) }
            if let elapsed { raw.append(("total_elapsed_time_s", .double(elapsed))) }
            raw.append(("laps", .int(laps)))
            if laps > 0 { parts.append("\(laps) lap\(laps == 1 ? "" : "s")") }
            laps = 0
            let remote = "fit:session:\(device.isEmpty ? sourceName : device):\(Int64(start) + FITDecoder.epochOffset)"
            pending.append((readings.entries.count, start, end, parts, raw))
            readings.entries.append(MappedEntry(remoteID: remote, content: content))
        }

        /// Each session's text and raw JSON, with the route of the positions recorded between its
        /// start and its end. A position counts in one session at most (the last to start at or
        /// before it), so a file of many overlapping sessions costs no more than one of each.
        mutating func finishSessions() {
            let order = pending.indices.sorted { (pending[$0].start, $0) < (pending[$1].start, $1) }
            var routes = [RouteSummary](repeating: RouteSummary(), count: pending.count)
            for p in positions.sorted(by: { $0.time < $1.time }) {
                // The last session (by start) starting at or before the position.
                var low = 0, high = order.count
                while low < high {
                    let middle = (low + high) / 2
                    if pending[order[middle]].start <= p.time { low = middle + 1 } else { high = middle }
                }
                guard low > 0, p.time <= pending[order[low - 1]].end else { continue }
                routes[order[low - 1]].add(latitude: p.latitude, longitude: p.longitude, altitude: p.altitude)
            }
            for (index, session) in pending.enumerated() {
                let route = routes[index]
                var parts = session.parts, raw = session.raw
                if let text = route.text { parts.append(text) }
                if !route.isEmpty { raw.append(("route", route.json)) }
                readings.entries[session.entry].content.valueText = parts.isEmpty ? nil : parts.joined(separator: ", ")
                readings.entries[session.entry].content.raw = JSONValue.object(JSONObject(raw)).serialized()
            }
            pending = []
        }

        mutating func closeSleep(at t: UInt32) {
            guard let (level, from) = sleep, t > from else { return }
            sleep = nil
            let value: String
            switch level {
            case 1: value = "HKCategoryValueSleepAnalysisAwake"
            case 2: value = "HKCategoryValueSleepAnalysisAsleepCore"
            case 3: value = "HKCategoryValueSleepAnalysisAsleepDeep"
            case 4: value = "HKCategoryValueSleepAnalysisAsleepREM"
            default: return skip("a FIT sleep level that was not measured")
            }
            sample(WearableKind.sleep, from: from, to: t, .text(value))
        }

        mutating func finish() -> WearableReadings {
            finishSessions()
            // The last sleep level marks the end of the night (a watch writes one when the wearer
            // wakes): it lasts until nothing, and is not a stage.
            // HRV: the SDNN of the file's beat-to-beat intervals, at its session (or the file's span).
            if beats.count >= 2 {
                let mean = beats.reduce(0, +) / Double(beats.count)
                let variance = beats.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(beats.count - 1)
                let sdnn = (variance.squareRoot() * 1000 * 10).rounded() / 10
                if let span = sessions.first.map({ ($0.start, $0.end) }) ?? context.firstTime.map({ ($0, context.lastTime ?? $0) }) {
                    sample(WearableKind.heartRateVariability, from: span.0, to: span.1, .real(sdnn),
                           metadata: [("HKMetadataKeyHeartRateVariabilityBeats", String(beats.count + 1))])
                }
            }
            if context.offsets.isEmpty, !readings.samples.isEmpty || !readings.entries.isEmpty {
                readings.notes.append("\(name) states no local time: its times were placed in \(zone.name)")
            }
            return readings
        }
    }
}

/// Numbers as the samples write them ("72", "0.98").
enum SampleText {
    static func plain(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }
}
