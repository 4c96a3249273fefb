import Foundation
import HReaderJSON
import ZIPFoundation

/// `--format fitbit`: Fitbit's data as Google Takeout delivers it (docs/wearables.md): for each of
/// `days` days ending at the export date, `Takeout/Fitbit/Global Export Data/steps-…`, `distance-…`,
/// `heart_rate-…`, `resting_heart_rate-…`, `weight-…` and `sleep-…json`, about `records` samples in all
/// (a weight and its body fat, a resting heart rate and four sleep stages a day; the rest steps and
/// distance by the minute and heart rate every few seconds), and `Personal & Account/Profile.csv` (New York, pounds). Into a
/// folder (`--out DIR`) or a zip (`--out F.zip`).
///
/// `--format fitbit-csv` adds the newer files Takeout holds beside the JSON, in `Physical
/// Activity_GoogleData/` (UTC times, a `data source` column): a day's `heart_rate_…csv` and
/// `steps_…csv` (the watch's minutes and, every fourth of them, the phone's: MobileTrack), the night's
/// `oxygen_saturation_…csv` (30 readings) and `heart_rate_variability_…csv` (12 readings of RMSSD and
/// SDNN), and `daily_resting_heart_rate.csv`; the JSON twins of heart rate, steps and resting heart
/// rate are still written, as Takeout does, and hreader passes them over (counted: not samples).
enum FitbitOutput {
    static let exportDate: Int64 = 1_795_392_000   // 2026-11-21T00:00:00Z
    static let zone = TimeZone(identifier: "America/New_York")!

    static func write(to url: URL, zip: Bool, records: Int, days: Int, seed: UInt64, csv: Bool = false) throws -> Int {
        var files: [(String, Data)] = []
        var samples = 0
        let root = "Takeout/Fitbit/"
        func emit(_ path: String, _ data: Data) throws {
            if zip { files.append((path, data)); return }
            let target = url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: target)
        }
        try emit(root + "Personal & Account/Profile.csv", Data("id,full_name,timezone,weight_unit\n\"GEN\",\"Zoë Generator\",America/New_York,POUND\n".utf8))
        // A day's fixed readings: a weight and its body fat, a resting heart rate, four sleep stages; with
        // the CSV files also the night's 30 SpO2 and 12 × 2 variability readings.
        let fixed = csv ? 61 : 7
        let perDay = max(0, records / max(1, days) - fixed)
        let stepMinutes = min(600, perDay / 4)
        let phoneMinutes = csv ? stepMinutes / 4 : 0
        // perDay is shared out: each walking minute is a step count and a distance, the rest heart rate.
        let beats = max(0, perDay - 2 * stepMinutes - phoneMinutes)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let us = DateFormatter()
        us.locale = Locale(identifier: "en_US_POSIX")
        us.timeZone = zone
        us.dateFormat = "MM/dd/yy HH:mm:ss"
        let iso = DateFormatter()
        iso.locale = Locale(identifier: "en_US_POSIX")
        iso.timeZone = zone
        iso.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS"
        let dayName = DateFormatter()
        dayName.locale = Locale(identifier: "en_US_POSIX")
        dayName.timeZone = zone
        dayName.dateFormat = "yyyy-MM-dd"
        let utc = DateFormatter()
        utc.locale = Locale(identifier: "en_US_POSIX")
        utc.timeZone = TimeZone(identifier: "UTC")
        utc.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        var restingRows = "timestamp,beats per minute\n"
        func json(_ items: [JSONValue]) -> Data { Data(JSONValue.array(items).serialized().utf8) }
        for day in 0..<days {
            let midnight = calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(exportDate - Int64(days - day) * 86_400)))
            let name = dayName.string(from: midnight)
            func at(_ seconds: Int) -> Date { midnight.addingTimeInterval(TimeInterval(seconds)) }
            let walk = (0..<stepMinutes).map { minute -> JSONValue in
                .object([("dateTime", .string(us.string(from: at(7 * 3600 + minute * 60)))),
                         ("value", .string(String(20 + (minute + day + Int(seed % 50)) % 90)))])
            }
            // The same minutes' distance, in centimetres: about 76 cm a step.
            let distance = (0..<stepMinutes).map { minute -> JSONValue in
                .object([("dateTime", .string(us.string(from: at(7 * 3600 + minute * 60)))),
                         ("value", .string(String(76 * (20 + (minute + day + Int(seed % 50)) % 90))))])
            }
            let heart = (0..<beats).map { i -> JSONValue in
                .object([("dateTime", .string(us.string(from: at(6 * 3600 + i * 5)))),
                         ("value", .object([("bpm", .int(58 + (i / 12 + day) % 50)), ("confidence", .int(2))]))])
            }
            let weight = JSONValue.object([("logId", .int(Int64(day) + 1_000_000)), ("weight", .double(160 + Double((day * 7) % 40) / 10)),
                                           ("bmi", .double(24.1)), ("fat", .double(22 + Double(day % 10) / 10)),
                                           ("date", .string(String(us.string(from: at(7 * 3600)).prefix(8)))), ("time", .string("07:00:00")),
                                           ("source", .string("Aria"))])
            let resting = JSONValue.object([("dateTime", .string(us.string(from: midnight))),
                                            ("value", .object([("date", .string(String(us.string(from: midnight).prefix(8)))),
                                                               ("value", .double(55 + Double(day % 9))), ("error", .double(6.1))]))])
            let night = at(-5400)
            let stages = [("wake", 600), ("light", 10_800), ("deep", 5_400), ("rem", 7_200)]
            var offset = 0
            let levels = stages.map { level, seconds -> JSONValue in
                defer { offset += seconds }
                return .object([("dateTime", .string(iso.string(from: night.addingTimeInterval(TimeInterval(offset))))),
                                ("level", .string(level)), ("seconds", .int(seconds))])
            }
            let sleep = JSONValue.object([("logId", .int(Int64(day) + 2_000_000)), ("dateOfSleep", .string(name)),
                                          ("startTime", .string(iso.string(from: night))), ("type", .string("stages")),
                                          ("levels", .object([("data", .array(levels))]))])
            let data = root + "Global Export Data/"
            try emit(data + "steps-\(name).json", json(walk))
            try emit(data + "distance-\(name).json", json(distance))
            try emit(data + "heart_rate-\(name).json", json(heart))
            try emit(data + "weight-\(name).json", json([weight]))
            try emit(data + "resting_heart_rate-\(name).json", json([resting]))
            try emit(data + "sleep-\(name).json", json([sleep]))
            samples += 2 * stepMinutes + beats + 7
            if csv {
                let folder = root + "Physical Activity_GoogleData/"
                func steps(_ minute: Int) -> Int { 20 + (minute + day + Int(seed % 50)) % 90 }
                var heartRows = "timestamp,beats per minute,data source\n"
                for i in 0..<beats { heartRows += "\(utc.string(from: at(6 * 3600 + i * 5))),\(58 + (i / 12 + day) % 50),Pixel Watch 2\n" }
                var stepRows = "timestamp,steps,data source\n"
                for minute in 0..<stepMinutes { stepRows += "\(utc.string(from: at(7 * 3600 + minute * 60))),\(steps(minute)),Pixel Watch 2\n" }
                // The phone in a pocket counted every fourth of the same minutes, a little less.
                for minute in stride(from: 0, to: 4 * phoneMinutes, by: 4) {
                    stepRows += "\(utc.string(from: at(7 * 3600 + minute * 60))),\(steps(minute) - 5),MobileTrack\n"
                }
                var oxygenRows = "timestamp,oxygen saturation percentage,data source\n"
                for i in 0..<30 { oxygenRows += "\(utc.string(from: at(-3600 + i * 60))),\(93 + (i + day) % 6).\(i % 10),Pixel Watch 2\n" }
                var variabilityRows = "timestamp,root mean square of successive differences milliseconds,standard deviation milliseconds,data source\n"
                for i in 0..<12 {
                    variabilityRows += "\(utc.string(from: at(-1800 + i * 300))),\(30 + (i * 7 + day) % 40).25,\(45 + (i * 3 + day) % 30).5,Pixel Watch 2\n"
                }
                restingRows += "\(name)T00:00:00Z,\(55 + day % 9).5\n"
                try emit(folder + "heart_rate_\(name).csv", Data(heartRows.utf8))
                try emit(folder + "steps_\(name).csv", Data(stepRows.utf8))
                try emit(folder + "oxygen_saturation_\(name).csv", Data(oxygenRows.utf8))
                try emit(folder + "heart_rate_variability_\(name).csv", Data(variabilityRows.utf8))
                samples += phoneMinutes + 30 + 24
            }
        }
        if csv {
            try emit(root + "Physical Activity_GoogleData/daily_resting_heart_rate.csv", Data(restingRows.utf8))
            try emit(root + "Physical Activity_GoogleData/heart_rate_readme.txt", Data("Heart rate, one reading every few seconds.\n".utf8))
        }
        if zip {
            try? FileManager.default.removeItem(at: url)
            let archive = try Archive(url: url, accessMode: .create)
            for (path, data) in files {
                try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
                    data.subdata(in: Int(position)..<(Int(position) + size))
                }
            }
        }
        return samples
    }
}
