import Foundation
import HReaderJSON
import ZIPFoundation

/// `--format fitbit`: Fitbit's data as Google Takeout delivers it (docs/wearables.md): for each of
/// `days` days ending at the export date, `Takeout/Fitbit/Global Export Data/steps-…`, `distance-…`,
/// `heart_rate-…`, `resting_heart_rate-…`, `weight-…` and `sleep-…json`, about `records` samples in all
/// (a weight and its body fat, a resting heart rate and four sleep stages a day; the rest steps and
/// distance by the minute and heart rate every few seconds), and `Personal & Account/Profile.csv` (New York, pounds). Into a
/// folder (`--out DIR`) or a zip (`--out F.zip`).
enum FitbitOutput {
    static let exportDate: Int64 = 1_795_392_000   // 2026-11-21T00:00:00Z
    static let zone = TimeZone(identifier: "America/New_York")!

    static func write(to url: URL, zip: Bool, records: Int, days: Int, seed: UInt64) throws -> Int {
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
        let perDay = max(0, records / max(1, days) - 7)
        let stepMinutes = min(600, perDay / 4)
        // perDay is shared out: each walking minute is a step count and a distance, the rest heart rate.
        let beats = perDay - 2 * stepMinutes
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
