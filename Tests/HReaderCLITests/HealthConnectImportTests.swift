import Foundation
import TestSupport
import XCTest

/// `hreader import --file` of an Android Health Connect export (a zip holding
/// `health_connect_export.db`), through the real binary. The databases are written by Python's
/// sqlite3 with the tables and columns of AOSP's HealthFitness module (docs/wearables.md).
final class HealthConnectImportTests: CLITestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try initVault()
    }

    static let marker = "Qwzx Pedometer"

    /// 2026-03-01T07:00:00Z in epoch ms.
    static let t0: Int64 = 1_772_348_400_000

    /// The export's database, as Python writes it: `extra` SQL runs last.
    func database(_ name: String, extra: String = "", steps: Int = 3) throws -> URL {
        let url = workDir.appendingPathComponent(name)
        let t0 = Self.t0
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            common = "row_id INTEGER PRIMARY KEY AUTOINCREMENT, uuid BLOB UNIQUE, last_modified_time INTEGER, client_record_id TEXT, client_record_version TEXT, device_info_id INTEGER, app_info_id INTEGER, recording_method INTEGER, dedupe_hash BLOB UNIQUE"
            interval = "start_time INTEGER NOT NULL, start_zone_offset INTEGER, end_time INTEGER NOT NULL, end_zone_offset INTEGER, local_date INTEGER"
            instant = "time INTEGER NOT NULL, zone_offset INTEGER, local_date INTEGER"
            db.executescript(f'''
            CREATE TABLE application_info_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, package_name TEXT NOT NULL UNIQUE, app_name TEXT, app_icon BLOB, record_types_used TEXT);
            CREATE TABLE device_info_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, manufacturer TEXT, model TEXT, device_type INTEGER);
            CREATE TABLE steps_record_table ({common}, {interval}, count INTEGER NOT NULL);
            CREATE TABLE heart_rate_record_table ({common}, {interval});
            CREATE TABLE heart_rate_record_series_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, beats_per_minute INTEGER, epoch_millis INTEGER, parent_key INTEGER REFERENCES heart_rate_record_table(row_id) ON DELETE CASCADE);
            CREATE TABLE weight_record_table ({common}, {instant}, weight REAL NOT NULL);
            CREATE TABLE blood_pressure_record_table ({common}, {instant}, measurement_location INTEGER, systolic REAL, diastolic REAL, body_position INTEGER);
            CREATE TABLE oxygen_saturation_record_table ({common}, {instant}, percentage REAL);
            CREATE TABLE heart_rate_variability_rmssd_record_table ({common}, {instant}, heart_rate_variability_millis REAL);
            CREATE TABLE sleep_session_record_table ({common}, {interval}, notes TEXT, title TEXT);
            CREATE TABLE sleep_stages_table (row_id INTEGER PRIMARY KEY AUTOINCREMENT, stage_start_time INTEGER, stage_end_time INTEGER, stage_type INTEGER, parent_key INTEGER);
            CREATE TABLE exercise_session_record_table ({common}, {interval}, notes TEXT, exercise_type INTEGER, title TEXT, has_route INTEGER);
            CREATE TABLE hydration_record_table ({common}, {interval}, volume REAL);
            CREATE TABLE nutrition_record_table ({common}, {interval}, energy REAL, protein REAL);
            CREATE TABLE height_record_table ({common}, {instant}, height REAL);
            CREATE TABLE lean_body_mass_record_table ({common}, {instant}, mass REAL);
            CREATE TABLE body_temperature_record_table ({common}, {instant}, measurement_location INTEGER, temperature REAL);
            CREATE TABLE blood_glucose_record_table ({common}, {instant}, specimen_source INTEGER, level REAL, relation_to_meal INTEGER, meal_type INTEGER);
            CREATE TABLE vo2_max_record_table ({common}, {instant}, measurement_method INTEGER, vo2_milliliters_per_minute_kilogram REAL);
            CREATE TABLE floors_climbed_record_table ({common}, {interval}, floors REAL);
            CREATE TABLE change_logs_table (row_id INTEGER PRIMARY KEY, record_type INTEGER);
            INSERT INTO application_info_table (package_name, app_name) VALUES ('com.example.pedometer', '\(Self.marker)'), ('com.google.android.apps.fitness', 'Fit');
            INSERT INTO device_info_table (manufacturer, model, device_type) VALUES ('Google', 'Pixel Watch 2', 1);
            ''')
            t0 = \(t0)
            for i in range(\(steps)):
                db.execute("INSERT INTO steps_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, count) VALUES (?, 1, 1, ?, 3600, ?, 3600, ?)", (bytes([1]) + i.to_bytes(4, "big"), t0 + i * 900000, t0 + i * 900000 + 600000, 100 + i))
            db.execute("INSERT INTO steps_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, count) VALUES (?, 2, NULL, ?, 3600, ?, 3600, 640)", (bytes([2, 0]), t0, t0 + 600000))
            db.execute("INSERT INTO heart_rate_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset) VALUES (?, 1, 1, ?, 3600, ?, 3600)", (bytes([3]), t0, t0 + 120000))
            for i, bpm in enumerate([71, 74, 77]):
                db.execute("INSERT INTO heart_rate_record_series_table (beats_per_minute, epoch_millis, parent_key) VALUES (?, ?, 1)", (bpm, t0 + i * 60000))
            db.execute("INSERT INTO weight_record_table (uuid, app_info_id, device_info_id, time, zone_offset, weight) VALUES (?, 2, NULL, ?, 3600, 72500.0)", (bytes([4]), t0))
            db.execute("INSERT INTO blood_pressure_record_table (uuid, app_info_id, time, zone_offset, systolic, diastolic) VALUES (?, 2, ?, 3600, 128.0, 82.0)", (bytes([5]), t0))
            db.execute("INSERT INTO oxygen_saturation_record_table (uuid, app_info_id, time, zone_offset, percentage) VALUES (?, 1, ?, 3600, 97.0)", (bytes([6]), t0))
            db.execute("INSERT INTO heart_rate_variability_rmssd_record_table (uuid, app_info_id, device_info_id, time, zone_offset, heart_rate_variability_millis) VALUES (?, 1, 1, ?, 3600, 48.5)", (bytes([10]), t0 - 7200000))
            db.execute("INSERT INTO sleep_session_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset) VALUES (?, 1, 1, ?, 3600, ?, 3600)", (bytes([7]), t0 - 28800000, t0 - 3600000))
            for a, b, kind in [(0, 3, 4), (3, 5, 5), (5, 7, 6)]:
                db.execute("INSERT INTO sleep_stages_table (stage_start_time, stage_end_time, stage_type, parent_key) VALUES (?, ?, ?, 1)", (t0 - 28800000 + a * 3600000, t0 - 28800000 + b * 3600000, kind))
            db.execute("INSERT INTO exercise_session_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, exercise_type, title) VALUES (?, 1, 1, ?, 3600, ?, 3600, 33, 'Morning run')", (bytes([8]), t0 + 3600000, t0 + 5400000))
            for i in range(3):
                db.execute("INSERT INTO hydration_record_table (uuid, app_info_id, start_time, end_time, volume) VALUES (?, 1, ?, ?, 0.25)", (bytes([9, i]), t0 + i * 3600000, t0 + i * 3600000 + 60000))
                db.execute("INSERT INTO nutrition_record_table (uuid, app_info_id, start_time, end_time, energy) VALUES (?, 1, ?, ?, 250000)", (bytes([11, i]), t0, t0 + 1))
            instant_rows = [("height_record_table", "height", 1.72), ("lean_body_mass_record_table", "mass", 58250.0),
                            ("body_temperature_record_table", "temperature", 36.8), ("blood_glucose_record_table", "level", 5.4),
                            ("vo2_max_record_table", "vo2_milliliters_per_minute_kilogram", 48.2)]
            for n, (table, column, value) in enumerate(instant_rows):
                db.execute(f"INSERT INTO {table} (uuid, app_info_id, time, zone_offset, {column}) VALUES (?, 2, ?, 3600, ?)", (bytes([12, n]), t0 + 600000, value))
            db.execute("INSERT INTO floors_climbed_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, floors) VALUES (?, 1, 1, ?, 3600, ?, 3600, 3)", (bytes([13]), t0, t0 + 300000))
            db.executescript('''\(extra)''')
            db.commit()
            """
        try python(script, [url.path])
        return url
    }

    func python(_ script: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "python failed")
    }

    /// The export's zip, as the phone writes it.
    func export(_ db: URL) throws -> String {
        let out = workDir.appendingPathComponent("Health Connect.zip").path
        try python("import zipfile, sys\nz = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\nz.write(sys.argv[2], 'health_connect_export.db')\nz.close()\n",
                   [out, db.path])
        try FileManager.default.removeItem(at: db)
        return out
    }

    func entries(_ patient: Any) throws -> [[String: Any]] {
        try json(try ok(withPassword(["entries", "list", "--patient", "\(patient)", "--json"])))["entries"] as! [[String: Any]]
    }

    func testImportsAnExportsTablesAsSamplesAtTheirOffsetsAndAgainAddsNothing() throws {
        let zip = try export(try database("health_connect_export.db"))
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Walker"]))
        let first = try ok(withPassword(["import", "--file", zip, "--patient", "1"]))
        XCTAssertTrue(first.stdout.contains("(Health Connect export)"), first.stdout)
        for line in ["Step count: 4 (4 new", "Heart rate: 3 (3 new", "Body weight: 1 (1 new", "Blood pressure: 1 (1 new", "Oxygen saturation: 1 (1 new",
                     "Heart rate variability (RMSSD): 1 (1 new",
                     "Sleep: 3 (3 new", "Exercise sessions: 1 (1 new", "Water: 3 (3 new", "Body height: 1 (1 new",
                     "Lean body mass: 1 (1 new", "Body temperature: 1 (1 new", "Blood glucose: 1 (1 new", "VO2 max: 1 (1 new",
                     "Flights climbed: 1 (1 new", "tables read but not mapped: nutrition_record_table 3"] {
            XCTAssertTrue(first.stdout.contains(line), "\(line): \(first.stdout)")
        }
        let listed = try entries(1)
        let steps = listed.filter { $0["description"] as? String == "Step count" }
        XCTAssertEqual(steps.compactMap { $0["value"] as? Double }.sorted(), [100, 101, 102, 640])
        XCTAssertTrue(steps.contains { ($0["start"] as? String) == "2026-03-01T08:00:00+01:00" }, "\(steps)")
        let weight = try XCTUnwrap(listed.first { $0["description"] as? String == "Body weight" })
        XCTAssertEqual(weight["value"] as? Double, 72.5)
        XCTAssertEqual(weight["unit"] as? String, "kg")
        XCTAssertEqual((weight["codes"] as? [String: [String]])?["LOINC"], ["29463-7"])
        XCTAssertEqual(listed.first { $0["description"] as? String == "Oxygen saturation" }?["value"] as? Double, 0.97)
        XCTAssertEqual(listed.first { $0["description"] as? String == "Blood pressure" }?["value"] as? String, "128/82")
        // Each in Health Connect's own unit (metres, °C, mmol/L, litres), a mass in kg as weight is.
        for (description, value, unit) in [("Body height", 1.72, "m"), ("Lean body mass", 58.25, "kg"), ("Body temperature", 36.8, "degC"),
                                           ("Blood glucose", 5.4, "mmol/L"), ("VO2 max", 48.2, "mL/min·kg"), ("Flights climbed", 3, "count")] {
            let found = listed.first { $0["description"] as? String == description }
            XCTAssertEqual(found?["value"] as? Double, value, description)
            XCTAssertEqual(found?["unit"] as? String, unit, description)
        }
        XCTAssertEqual(listed.filter { $0["description"] as? String == "Water" }.compactMap { $0["value"] as? Double }, [0.25, 0.25, 0.25])
        // RMSSD is kept as RMSSD, in milliseconds, never filed as Apple Health's SDNN.
        let rmssd = try XCTUnwrap(listed.first { $0["description"] as? String == "Heart rate variability (RMSSD)" })
        XCTAssertEqual(rmssd["value"] as? Double, 48.5)
        XCTAssertEqual(rmssd["unit"] as? String, "ms")
        XCTAssertFalse(listed.contains { $0["description"] as? String == "Heart rate variability (SDNN)" })
        XCTAssertTrue(listed.contains { $0["description"] as? String == "Running workout" })
        XCTAssertEqual(listed.filter { $0["description"] as? String == "Heart rate" }.count, 3)

        let again = try ok(withPassword(["import", "--file", zip, "--patient", "1"]))
        XCTAssertTrue(again.stdout.contains(" 0 new entries, 0 updated, 24 unchanged"), again.stdout)
        XCTAssertEqual(try entries(1).count, listed.count)
        let sources = try ok(withPassword(["sources", "list"]))
        XCTAssertTrue(sources.stdout.contains("Health Connect ("), sources.stdout)
        let line = sources.stdout.split(separator: "\n").first { $0.contains("Health Connect (") } ?? ""
        XCTAssertTrue(line.contains("  1 patient(s)  "), String(line))
        assertNoPlaintext([Self.marker, "Pixel Watch 2"])
    }

    /// An exercise session's route (`exercise_route_table`): summarised into its entry, the locations
    /// themselves not kept; a route of a session the export does not have is passed over.
    func testAnExerciseRouteIsSummarisedIntoItsSession() throws {
        let t = Self.t0 + 3_600_000
        // North along a meridian, 0.009° (about 1 km) a location; an altitude the app did not record
        // is Java's Double.MIN_VALUE (5e-324), which is no altitude.
        let route = [(52.5200, 34.0), (52.5290, 5e-324), (52.5380, 40.0)].enumerated().map { i, p in
            "INSERT INTO exercise_route_table VALUES (1, \(t + Int64(i) * 60_000), 13.405, \(p.0), 5.0, 3.0, \(p.1));"
        }.joined(separator: "\n")
        let db = try database("health_connect_export.db", extra: """
            CREATE TABLE exercise_route_table (parent_key INTEGER NOT NULL, timestamp_millis INTEGER NOT NULL, longitude REAL NOT NULL,
              latitude REAL NOT NULL, horizontal_accuracy REAL NOT NULL, vertical_accuracy REAL NOT NULL, altitude REAL NOT NULL);
            \(route)
            INSERT INTO exercise_route_table VALUES (99, \(t), 2.35, 48.85, 5.0, 3.0, 35.0);
            """)
        let result = try ok(withPassword(["import", "--file", db.path, "--as", "me"]))
        XCTAssertFalse(result.stdout.contains("exercise_route_table"), "read, not counted as unmapped: \(result.stdout)")
        let workout = try XCTUnwrap(try entries(1).first { $0["description"] as? String == "Running workout" })
        let shown = try ok(withPassword(["entries", "show", "\(workout["id"] as! Int)"]))
        XCTAssertTrue(shown.stdout.contains("Morning run, route 2 km, climbing 6 m"), shown.stdout)
        XCTAssertFalse(shown.stdout.contains("48.85"), "the other session's route: \(shown.stdout)")
        assertNoPlaintext(["52.529"])
    }

    func testTheDatabaseAloneIsReadToo() throws {
        let db = try database("health_connect_export.db", steps: 1)
        let result = try ok(withPassword(["import", "--file", db.path, "--as", "me"]))
        XCTAssertTrue(result.stdout.contains("Step count: 2 (2 new"), result.stdout)
    }

    func testADamagedOrForeignDatabaseStoresNothing() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Walker"]))
        let db = try database("health_connect_export.db", steps: 400)
        // Damage the root page of the steps table's b-tree (400 rows: an interior page).
        let damaged = workDir.appendingPathComponent("damaged.db")
        try python("""
            import sqlite3, sys
            d = sqlite3.connect(sys.argv[1])
            root = d.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'steps_record_table'").fetchone()[0]
            size = d.execute("PRAGMA page_size").fetchone()[0]
            d.close()
            b = bytearray(open(sys.argv[1], 'rb').read())
            b[(root - 1) * size:root * size] = b'\\xa5' * size
            open(sys.argv[2], 'wb').write(b)
            """, [db.path, damaged.path])
        let result = try hreader(withPassword(["import", "--file", damaged.path, "--patient", "1"]))
        XCTAssertEqual(result.status, 5, result.stderr)
        XCTAssertTrue(result.stderr.contains("damaged.db"), result.stderr)
        XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, result.stderr)
        XCTAssertEqual(try entries(1).count, 0)

        let other = workDir.appendingPathComponent("other.db")
        try python("import sqlite3, sys\nd = sqlite3.connect(sys.argv[1])\nd.execute('CREATE TABLE t (x)')\nd.commit()\n", [other.path])
        let refused = try hreader(withPassword(["import", "--file", other.path, "--patient", "1"]))
        XCTAssertEqual(refused.status, 5)
        XCTAssertTrue(refused.stderr.contains("not a Health Connect export"), refused.stderr)
    }

    /// The database is someone else's: its views and triggers never run (a view dressed as a record
    /// table is not read: views are off and only tables are looked at), nothing is written anywhere,
    /// and nothing of it lands in the temporary directory.
    func testAHostileDatabasesViewsAndTriggersNeverRun() throws {
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Walker"]))
        let db = workDir.appendingPathComponent("hostile.db")
        try python("""
            import sqlite3, sys
            d = sqlite3.connect(sys.argv[1])
            d.executescript('''
            CREATE TABLE application_info_table (row_id INTEGER PRIMARY KEY, package_name TEXT, app_name TEXT);
            INSERT INTO application_info_table VALUES (1, 'x', '\(Self.marker)');
            CREATE TABLE hidden (app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, count);
            INSERT INTO hidden VALUES (1, 1, 1772348400000, 3600, 1772348460000, 3600, 5);
            CREATE VIEW steps_record_table AS SELECT * FROM hidden;
            CREATE TABLE weight_record_table (app_info_id, device_info_id, time, zone_offset, weight);
            CREATE TRIGGER spy AFTER INSERT ON weight_record_table BEGIN INSERT INTO hidden VALUES (0,0,0,0,0,0,0); END;
            ''')
            d.commit()
            """, [db.path])
        let result = try ok(withPassword(["import", "--file", db.path, "--patient", "1"]))
        XCTAssertTrue(result.stdout.contains("0 new entries"), result.stdout)
        XCTAssertTrue(result.stdout.contains("tables read but not mapped: hidden 1"), result.stdout)
        assertNoPlaintext([Self.marker])
    }

    /// One app may write a watch's and a phone's steps: Health Connect's source is "App (Device)". The
    /// watch's 303 steps count whole; the Fit app's 640 over the watch's first ten minutes count
    /// nothing; the phone's 400 over 08:20–08:40 count the 5 of its 20 minutes the watch left: 100.
    func testAWatchAnAppAndAPhoneOfOneExportCountADayOnce() throws {
        let phone = """
            INSERT INTO device_info_table (manufacturer, model, device_type) VALUES ('Google', 'Pixel 8', 2);
            INSERT INTO steps_record_table (uuid, app_info_id, device_info_id, start_time, start_zone_offset, end_time, end_zone_offset, count)
                VALUES (x'0A', 2, 2, \(Self.t0 + 1_200_000), 3600, \(Self.t0 + 2_400_000), 3600, 400);
            """
        let zip = try export(try database("health_connect_export.db", extra: phone))
        try ok(withPassword(["import", "--file", zip, "--as", "me"]))
        let order = try json(try ok(withPassword(["sources", "priority", "--json"])))["sources"] as? [[String: Any]] ?? []
        // The pedometer app also wrote readings without a device (its oxygen saturation): a source of its own.
        XCTAssertEqual(order.map { $0["name"] as? String }, ["\(Self.marker) (Google Pixel Watch 2)", "Fit", Self.marker, "Fit (Google Pixel 8)"])
        XCTAssertEqual(order.map { $0["kind"] as? String }, ["watch or band", "app", "app", "phone"])
        func steps() throws -> Double? {
            let page = try json(try ok(withPassword(["timeline", "--patient", "1", "--page", "week", "--at", "2026-03-02T00:00:00Z"]), env: ["TZ": "UTC"]))
            let day = (page["activity"] as? [[String: Any]] ?? []).first { $0["day"] as? String == "2026-03-01" && $0["description"] as? String == "Step count" }
            return (day?["total"] as? NSNumber)?.doubleValue
        }
        XCTAssertEqual(try steps(), 403, "not 1,343: the watch, then the app and the phone where the watch was not counting")
        try ok(withPassword(["sources", "priority", "Fit"]))
        XCTAssertEqual(try steps(), 943, "the app's 640 first, the watch's 203 outside them, the phone's 100 outside both")
    }
}

extension HealthConnectImportTests {
    /// The test export imported under patient 1, and the same with `extra` SQL run on its database under
    /// patient 2: the plain import's peak memory, and the other's run and peak memory (MB).
    func importsBesidePlain(extra: String) throws -> (plainMB: Double, run: CLIResult, mb: Double) {
        let plain = try export(try database("health_connect_export.db"))
        let plainZip = workDir.appendingPathComponent("plain.zip")
        try FileManager.default.moveItem(atPath: plain, toPath: plainZip.path)
        let other = try export(try database("health_connect_export.db", extra: extra))
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Plain"]))
        try ok(withPassword(["patients", "add", "--first", "Ada", "--last", "Other"]))
        let (plainRun, plainMB) = try hreaderMeasuringMemory(withPassword(["import", "--file", plainZip.path, "--patient", "1"]))
        XCTAssertEqual(plainRun.status, 0, plainRun.stderr)
        let (run, mb) = try hreaderMeasuringMemory(withPassword(["import", "--file", other, "--patient", "2"]))
        XCTAssertEqual(run.status, 0, run.stderr)
        return (plainMB, run, mb)
    }

    /// Sleep stages are read in the order they were written and placed by their session, without a
    /// join: the stages' table has no index on parent_key, and the join made SQLite build one in
    /// memory over every stage (a crafted export of 1.5 million stages cost 40 MB more). Stages of no
    /// session are counted as skipped; the night's own stages are read as before.
    func testSleepStagesAreReadInTheSameMemoryHoweverMany() throws {
        let (plainMB, craftedRun, craftedMB) = try importsBesidePlain(extra: """
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500000)
            INSERT INTO sleep_stages_table (stage_start_time, stage_end_time, stage_type, parent_key) SELECT x, x + 1, 4, 1000000 + x FROM c;
            """)
        XCTAssertTrue(craftedRun.stdout.contains("a Health Connect sleep stage of no session"), craftedRun.stdout)
        XCTAssertLessThan(craftedMB, plainMB + 12, "1.5 million stages, the same memory (\(plainMB) MB without them)")
        func sleep(_ patient: String) throws -> [String] {
            let listed = try json(try ok(withPassword(["entries", "list", "--patient", patient, "--json"])))["entries"] as? [[String: Any]] ?? []
            return listed.filter { ($0["description"] as? String ?? "").lowercased().contains("sleep") }.compactMap { $0["value"] as? String }.sorted()
        }
        XCTAssertEqual(try sleep("2"), try sleep("1"), "the night's own stages, as before")
        XCTAssertEqual(try sleep("1").count, 3)
    }

    /// The database is read from a sealed copy beside the vault, not held in memory: an export whose
    /// database is 40 MB larger (a table of blobs it does not map, counted) imports in the same
    /// memory (held in memory, it cost twice that: its bytes and SQLite's copy), and no copy is left
    /// in the vault's directory.
    func testALargerDatabaseImportsInTheSameMemory() throws {
        let (plainMB, paddedRun, paddedMB) = try importsBesidePlain(extra: """
            CREATE TABLE padding_record_table (b BLOB);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400)
            INSERT INTO padding_record_table SELECT randomblob(100000) FROM c;
            """)
        XCTAssertTrue(paddedRun.stdout.contains("padding_record_table 400"), paddedRun.stdout)
        XCTAssertLessThan(paddedMB, plainMB + 12, "40 MB more database, the same memory (\(plainMB) MB without it)")
        let left = try FileManager.default.contentsOfDirectory(atPath: vaultDir.path).filter { $0.hasPrefix(".foreign-") }
        XCTAssertEqual(left, [], "the sealed copy is gone")
    }
}
