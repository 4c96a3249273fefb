import Foundation
import HReaderJSON
import HReaderModel

/// Fitbit's exercise log (docs/wearables.md): `exercise-<n>.json` files, numbered, not dated, each an
/// array of the account's logged and auto-detected workouts as Fitbit's Web API describes them
/// (`logId`, `activityName`, `startTime` in the account's wall time, `duration` in ms, `distance` in
/// `distanceUnit`, `calories`, `steps`, `averageHeartRate`, `elevationGain` in metres, `source`).
/// Each becomes an `activity` entry as a FIT or Health Connect session does: "Walking workout",
/// its duration in minutes, "2.88 km, 335 kcal, average heart rate 95/min, 3919 steps, climbing 27 m".
/// Takeout keeps no route (a GPS workout's TCX file is only a link, `tcxLink`, which is not followed).
extension FitbitTakeoutReader {
    /// Whether `name` is one of the exercise log's files: `exercise-<digits>.json`.
    public static func isExerciseFile(_ name: String) -> Bool {
        guard name.hasPrefix("exercise-"), name.hasSuffix(".json") else { return false }
        let number = name.dropFirst("exercise-".count).dropLast(".json".count)
        return !number.isEmpty && number.count <= 9 && number.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Fitbit's activity names as the other sources name their workouts ("Run" → "Running workout");
    /// any other name stays as Fitbit wrote it ("Aerobic Workout" → "Aerobic Workout").
    static let workoutNames = ["Run": "Running", "Walk": "Walking", "Bike": "Cycling", "Outdoor Bike": "Cycling", "Swim": "Swimming",
                               "Hike": "Hiking", "Treadmill": "Treadmill running", "Elliptical": "Elliptical", "Yoga": "Yoga",
                               "Spinning": "Stationary cycling", "Weights": "Strength training", "Sport": "Sport"]

    /// Metres in one of the file's distance units; nil for a unit it does not name.
    static func metres(per unit: String?) -> Double? {
        switch unit?.lowercased() {
        case "kilometer", "kilometers", "km": 1000
        case "mile", "miles", "mi": 1609.344
        case "meter", "meters", "m": 1
        default: nil
        }
    }

    /// Reads one `exercise-<n>.json`; the entries are handed on; returns what was skipped, by reason.
    public func readExercises(_ bytes: [UInt8], name: String, entry: (MappedEntry) throws -> Void) throws -> [String: Int] {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw Failure.malformed("\(name): \(error)")
        }
        guard let items = value.array else { throw Failure.malformed("\(name): not a JSON array, as Fitbit's files are") }
        var skipped: [String: Int] = [:]
        var local = WallTimes(zone: zone)
        func skip(_ reason: String) { skipped["a Fitbit exercise \(reason)", default: 0] += 1 }
        func number(_ value: JSONValue?) -> Double? {
            switch value {
            case let .number(text)?: Double(text).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            case let .string(text)?: Double(text).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            default: nil
            }
        }
        func text(_ value: JSONValue?, _ limit: Int = 100) -> String? {
            value?.string.map { String($0.trimmingCharacters(in: .whitespacesAndNewlines).prefix(limit)) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        for item in items {
            guard let object = item.object else { skip("that is not an object"); continue }
            guard let startText = object["startTime"]?.string, let start = local.time(usDateTime: startText) else {
                skip("without a readable startTime"); continue
            }
            // Shorter than a week: a longer "workout" is a device left logging, not one.
            guard let milliseconds = number(object["duration"]), milliseconds < 7 * 86_400_000 else {
                skip("without a plausible duration"); continue
            }
            let name = text(object["activityName"]) ?? "Exercise"
            var content = EntryContent(type: .activity, description: "\(Self.workoutNames[name] ?? name) workout")
            let end = local.time(epoch: start.epoch + Int64((milliseconds / 1000).rounded()))
            content.start = ClinicalTime(text: AppleHealthDate.rfc3339(start.epoch, offsetMinutes: start.offsetMinutes), epoch: start.epoch)
            content.end = ClinicalTime(text: AppleHealthDate.rfc3339(end.epoch, offsetMinutes: end.offsetMinutes), epoch: end.epoch)
            content.valueNumber = (milliseconds / 60_000 * 100).rounded() / 100
            content.unit = "min"
            let typeID = number(object["activityTypeId"]).flatMap { Int(exactly: $0.rounded(.towardZero)) }
            content.codes = ["com.fitbit": ["activity:\(typeID.map(String.init) ?? name)"]]

            var parts: [String] = []
            let source = text(object["source"]?.object?["name"])
            var raw: [JSONObject.Member] = [("element", .string("Fitbit exercise")), ("activity_name", .string(name)),
                                            ("source", .string(source.map { "Fitbit (\($0))" } ?? sourceName)),
                                            ("log_type", .text(text(object["logType"]))), ("duration_ms", .double(milliseconds))]
            if let distance = number(object["distance"]) {
                if let perUnit = Self.metres(per: object["distanceUnit"]?.string) {
                    let metres = distance * perUnit
                    parts.append("\(SampleText.plain((metres / 10).rounded() / 100)) km")
                    raw.append(("distance_m", .decimal(metres, places: 1)))
                } else if distance > 0 {
                    skipped["a Fitbit exercise distance whose unit the file does not state", default: 0] += 1
                }
            }
            if let calories = number(object["calories"]) {
                parts.append("\(SampleText.plain(calories.rounded())) kcal")
                raw.append(("calories_kcal", .double(calories)))
            }
            if let heart = number(object["averageHeartRate"]), heart > 0 {
                parts.append("average heart rate \(SampleText.plain(heart.rounded()))/min")
                raw.append(("avg_heart_rate", .double(heart)))
            }
            if let steps = number(object["steps"]), steps > 0 {
                parts.append("\(SampleText.plain(steps.rounded())) steps")
                raw.append(("steps", .double(steps)))
            }
            if let climb = number(object["elevationGain"]), climb > 0 {
                parts.append("climbing \(SampleText.plain(climb.rounded())) m")
                raw.append(("elevation_gain_m", .decimal(climb, places: 1)))
            }
            content.valueText = parts.isEmpty ? nil : parts.joined(separator: ", ")
            content.raw = JSONValue.object(JSONObject(raw)).serialized()
            // The log's own id is stable across exports; a log without one is known by its start.
            let logID = number(object["logId"]).flatMap { Int64(exactly: $0.rounded(.towardZero)) }
            let remote = "fitbit:exercise:" + (logID.map(String.init) ?? "start:\(start.epoch)")
            try entry(MappedEntry(remoteID: remote, content: content))
        }
        return skipped
    }
}
