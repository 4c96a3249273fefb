import FITWriter
import Foundation
import HReaderJSON
import ZIPFoundation

/// `--format fit`: a Garmin watch's days as FIT monitoring files (docs/wearables.md), one file a day
/// ending at the export date: sleep stages in the first hour, then readings of the day's running
/// totals (steps, active kcal, distance) each with a heart rate, about `records` samples in all
/// (four a reading, three sleep stages a day), and `workouts` activities (half an hour of one-second
/// heart rates, a session, beat-to-beat intervals: 1,802 samples and entries each). Into a folder (`--out DIR/`) or a zip (`--out F.zip`)
/// laid out as Garmin's export (a zip inside the zip). Deterministic: the same options, the same bytes.
enum FITOutput {
    static let exportDate: Int64 = 1_795_392_000   // 2026-11-21T00:00:00Z

    /// The samples hreader makes of what was written.
    static func write(to url: URL, zip: Bool, records: Int, days: Int, workouts: Int, seed: UInt64) throws -> Int {
        let perDay = max(1, (records / days - 3) / 4)
        let every = UInt32(max(1, 82_800 / perDay))
        var samples = 0
        var files: [(String, Data)] = []
        if !zip { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        for day in 0..<days {
            let start = FITWriter.time(unix: exportDate - Int64(days - day) * 86_400 - 3_600)
            let bytes = FITExamples.monitoring(start: start, readings: perDay, every: every, offsetMinutes: 60,
                                               stepsPerReading: UInt32(40 + (UInt64(day) &* 7 &+ seed) % 80))
            samples += perDay * 4 + 3
            let name = String(format: "%@_%04d_WELLNESS.fit", String(seed), day)
            if zip {
                files.append((name, Data(bytes)))
            } else {
                try Data(bytes).write(to: url.appendingPathComponent(name))
            }
        }
        // Activities: half an hour of one-second records each, on days spread over the range.
        for workout in 0..<workouts {
            let day = Int64(workout * days / max(1, workouts))
            let start = FITWriter.time(unix: exportDate - Int64(days) * 86_400 + day * 86_400 + 17 * 3_600)
            let heartRates = (0..<1_800).map { UInt8(110 + ($0 / 30 + workout) % 50) }
            // Its route: twice round a loop of about 2.5 km in a park, gently up and down.
            let route = (0..<heartRates.count).map { i -> (latitude: Double, longitude: Double, altitude: Double) in
                let angle = Double(i) / Double(heartRates.count) * 4 * Double.pi
                return (48.8462 + 0.0036 * sin(angle), 2.3372 + 0.0054 * cos(angle), 60 + 8 * sin(angle * 3))
            }
            let bytes = FITExamples.activity(start: start, heartRates: heartRates, serial: 3_911_111_111, distanceMeters: 5_000 + Double(workout % 10) * 100,
                                             route: route)
            samples += heartRates.count + 2
            let name = String(format: "%@_%04d_ACTIVITY.fit", String(seed), workout)
            if zip { files.append((name, Data(bytes))) } else { try Data(bytes).write(to: url.appendingPathComponent(name)) }
        }
        if zip {
            // Garmin's layout: the FIT files in a zip inside the export's zip.
            let innerURL = url.deletingLastPathComponent().appendingPathComponent(".fit-inner-\(ProcessInfo.processInfo.processIdentifier).zip")
            defer { try? FileManager.default.removeItem(at: innerURL) }
            try? FileManager.default.removeItem(at: innerURL)
            let inner = try Archive(url: innerURL, accessMode: .create)
            for (name, data) in files { try add(data, as: name, to: inner) }
            files = []
            try? FileManager.default.removeItem(at: url)
            let outer = try Archive(url: url, accessMode: .create)
            try add(try Data(contentsOf: innerURL), as: "DI_CONNECT/DI-Connect-Uploaded-Files/UploadedFiles_0-_Part1.zip", to: outer)
            try add(Data(JSONValue.object([("generated", .bool(true))]).serialized().utf8), as: "DI_CONNECT/DI-Connect-User/user_profile.json", to: outer)
        }
        return samples
    }

    private static func add(_ data: Data, as name: String, to archive: Archive) throws {
        try archive.addEntry(with: name, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate) { position, size in
            data.subdata(in: Int(position)..<(Int(position) + size))
        }
    }
}
