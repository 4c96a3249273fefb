import Foundation
import HReaderStore
import ZIPFoundation

/// `--format health-connect`: an Android Health Connect export (docs/wearables.md) with invented
/// data: `health_connect_export.db` with AOSP's tables and columns (the subset hreader reads, and
/// one it does not), in `Health Connect.zip` as the phone writes it (`--out F.zip`) or alone
/// (`--out F.db`). About `records` rows of readings over `days` days, ending at the export date:
/// every day weight, blood pressure, SpO2, resting heart rate and the night's heart rate variability
/// (RMSSD), a night's sleep with four stages,
/// and the rest split between steps (every quarter hour) and heart-rate series (a record an hour,
/// its beats a minute apart); an exercise session every third day. Written through the project's
/// SQLite (SQLCipher, unkeyed): no second SQLite library.
enum HealthConnectOutput {
    static let exportDate: Int64 = 1_795_392_000   // 2026-11-21T00:00:00Z

    static func write(to url: URL, zip: Bool, records: Int, days: Int, seed: UInt64) throws -> Int {
        let dbURL = zip ? url.deletingLastPathComponent().appendingPathComponent(".hc-\(ProcessInfo.processInfo.processIdentifier).db") : url
        try? FileManager.default.removeItem(at: dbURL)
        defer { if zip { try? FileManager.default.removeItem(at: dbURL) } }
        var samples = 0
        do {
            let db = try Database.open(path: dbURL.path, key: nil, create: true)
            let common = "row_id INTEGER PRIMARY KEY AUTOINCREMENT, uuid BLOB UNIQUE, last_modified_time INTEGER, client_record_id TEXT, "
                + "client_record_version TEXT, device_info_id INTEGER, app_info_id INTEGER, recording_method INTEGER, dedupe_hash BLOB UNIQUE"
            let interval = "start_time INTEGER NOT NULL, start_zone_offset INTEGER, end_time INTEGER NOT NULL, end_zone_offset INTEGER, local_date INTEGER"
            let instant = "time INTEGER NOT NULL, zone_offset INTEGER, local_date INTEGER"
            try db.transaction {
                for sql in [
                    "CREATE TABLE application_info_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, package_name TEXT NOT NULL UNIQUE, app_name TEXT, app_icon BLOB, record_types_used TEXT)",
                    "CREATE TABLE device_info_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, manufacturer TEXT, model TEXT, device_type INTEGER)",
                    "CREATE TABLE steps_record_table (\(common), \(interval), count INTEGER NOT NULL)",
                    "CREATE TABLE heart_rate_record_table (\(common), \(interval))",
                    "CREATE TABLE heart_rate_record_series_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, beats_per_minute INTEGER, epoch_millis INTEGER, parent_key INTEGER)",
                    "CREATE TABLE weight_record_table (\(common), \(instant), weight REAL NOT NULL)",
                    "CREATE TABLE blood_pressure_record_table (\(common), \(instant), measurement_location INTEGER, systolic REAL, diastolic REAL, body_position INTEGER)",
                    "CREATE TABLE oxygen_saturation_record_table (\(common), \(instant), percentage REAL)",
                    "CREATE TABLE resting_heart_rate_record_table (\(common), \(instant), beats_per_minute INTEGER)",
                    "CREATE TABLE heart_rate_variability_rmssd_record_table (\(common), \(instant), heart_rate_variability_millis REAL)",
                    "CREATE TABLE sleep_session_record_table (\(common), \(interval), notes TEXT, title TEXT)",
                    "CREATE TABLE sleep_stages_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, stage_start_time INTEGER, stage_end_time INTEGER, stage_type INTEGER, parent_key INTEGER)",
                    "CREATE TABLE exercise_session_record_table (\(common), \(interval), notes TEXT, exercise_type INTEGER, title TEXT, has_route INTEGER)",
                    "CREATE TABLE hydration_record_table (\(common), \(interval), volume REAL)",
                    "INSERT INTO application_info_table (package_name, app_name) VALUES ('com.google.android.apps.fitness', 'Fit'), ('com.example.scale', 'Generator Scale')",
                    "INSERT INTO device_info_table (manufacturer, model, device_type) VALUES ('Google', 'Pixel Watch 2', 1)",
                ] { try db.execute(sql) }
                let offset: Int64 = 3600
                // Per day: 5 daily readings and 4 sleep stages; the rest steps and heart rate.
                let perDay = max(0, records / max(1, days) - 9)
                let stepsPerDay = min(96, perDay / 4)
                let heartPerDay = max(0, perDay - stepsPerDay)
                var uuid: UInt64 = seed << 40
                func bpm(_ minute: Int64, _ hour: Int64, _ day: Int64) -> Int64 { 55 + (minute + hour + day) % 60 }
                func next() -> [UInt8] { uuid += 1; return withUnsafeBytes(of: uuid.bigEndian) { Array($0) } }
                for day in 0..<Int64(days) {
                    let midnight = (exportDate - Int64(days) * 86_400 + day * 86_400 - offset) * 1000
                    for i in 0..<Int64(stepsPerDay) {
                        let start: Int64 = midnight + (7 * 3600 + i * 900) * 1000
                        let count: Int64 = 50 + (day + i + Int64(truncatingIfNeeded: seed)) % 300
                        try db.execute("INSERT INTO steps_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, count) VALUES (?, 1, 1, ?, ?, ?, ?, ?)",
                                       [next(), start, offset, start + 600_000, offset, count])
                    }
                    var left = heartPerDay, hour: Int64 = 0
                    while left > 0 {
                        let start = midnight + hour * 3_600_000
                        try db.execute("INSERT INTO heart_rate_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset) VALUES (?, 1, 1, ?, ?, ?, ?)",
                                       [next(), start, offset, start + 3_540_000, offset])
                        let parent = db.lastInsertRowID
                        for minute in 0..<Int64(min(60, left)) {
                            try db.execute("INSERT INTO heart_rate_record_series_table (beats_per_minute, epoch_millis, parent_key) VALUES (?, ?, ?)",
                                           [bpm(minute, hour, day), start + minute * 60_000, parent])
                        }
                        left -= min(60, left)
                        hour = (hour + 1) % 24
                        if hour == 0 { break }
                    }
                    samples += stepsPerDay + (heartPerDay - left)
                    let morning = midnight + 7 * 3_600_000
                    try db.execute("INSERT INTO weight_record_table (uuid, app_info_id, time, zone_offset, weight) VALUES (?, 2, ?, ?, ?)",
                                   [next(), morning, offset, 72_000.0 + Double((day * 37 + Int64(seed)) % 2000)])
                    try db.execute("INSERT INTO blood_pressure_record_table (uuid, app_info_id, time, zone_offset, systolic, diastolic) VALUES (?, 2, ?, ?, ?, ?)",
                                   [next(), morning + 60_000, offset, 110.0 + Double(day % 25), 70.0 + Double(day % 15)])
                    try db.execute("INSERT INTO oxygen_saturation_record_table (uuid, app_info_id, device_info_id, time, zone_offset, percentage) VALUES (?, 1, 1, ?, ?, ?)",
                                   [next(), morning + 120_000, offset, 94.0 + Double(day % 6)])
                    try db.execute("INSERT INTO resting_heart_rate_record_table (uuid, app_info_id, device_info_id, time, zone_offset, beats_per_minute) VALUES (?, 1, 1, ?, ?, ?)",
                                   [next(), morning + 180_000, offset, 50 + day % 15])
                    let night = midnight - 2 * 3_600_000
                    try db.execute("INSERT INTO heart_rate_variability_rmssd_record_table (uuid, app_info_id, device_info_id, time, zone_offset, heart_rate_variability_millis) VALUES (?, 1, 1, ?, ?, ?)",
                                   [next(), night + 4 * 3_600_000, offset, 30.0 + Double((day * 13 + Int64(seed)) % 40) + 0.5])
                    try db.execute("INSERT INTO sleep_session_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset) VALUES (?, 1, 1, ?, ?, ?, ?)",
                                   [next(), night, offset, night + 8 * 3_600_000, offset])
                    let session = db.lastInsertRowID
                    for (a, b, stage) in [(0, 2, 4), (2, 4, 5), (4, 6, 6), (6, 8, 4)] as [(Int64, Int64, Int64)] {
                        try db.execute("INSERT INTO sleep_stages_table (stage_start_time, stage_end_time, stage_type, parent_key) VALUES (?, ?, ?, ?)",
                                       [night + a * 3_600_000, night + b * 3_600_000, stage, session])
                    }
                    samples += 9
                    if day % 3 == 0 {
                        let run = midnight + 18 * 3_600_000
                        try db.execute("INSERT INTO exercise_session_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, exercise_type, title) VALUES (?, 1, 1, ?, ?, ?, ?, 33, 'Evening run')",
                                       [next(), run, offset, run + 1_800_000, offset])
                    }
                }
            }
        }
        if zip {
            try? FileManager.default.removeItem(at: url)
            let archive = try Archive(url: url, accessMode: .create)
            try archive.addEntry(with: "health_connect_export.db", fileURL: dbURL, compressionMethod: .deflate)
        }
        return samples
    }
}
