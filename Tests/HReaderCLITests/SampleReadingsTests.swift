import Foundation
import HReaderCrypto
import HReaderJSON
import HReaderModel
@testable import HReaderKit
import HReaderStore
import XCTest

/// Timeline pages of every length and vital charts longer than a day page read vital-sign and
/// activity samples as numbers (`SampleReadings`, `SampleReadingsPage`) instead of as rows: the page must be the one
/// the rows make, across series of one description (their readings merged by time, ties by id),
/// entries of the same description, long samples the range begins inside, values stored as text,
/// series of one description in two units, and day boundaries in zones with summer time.
final class SampleReadingsTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-readings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private func openVault() throws -> OpenVault {
        let service = VaultService(vault: Vault(root: root.appendingPathComponent("vault")))
        let password = SecretBytes(Array("Readings-Passw0rd".utf8))
        _ = try service.create(password: password, kdf: .pbkdf2SHA256(iterations: 600_000))
        return try service.open(.password(password))
    }

    /// Apple Health's date form, in UTC.
    private static func date(_ epoch: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(epoch))) + " +0000"
    }

    private static func record(_ type: String, _ value: String, _ unit: String, _ start: Int64, end: Int64? = nil, source: String) -> String {
        #"<Record type="HKQuantityTypeIdentifier\#(type)" sourceName="\#(source)" unit="\#(unit)" creationDate="\#(date(start))" startDate="\#(date(start))" endDate="\#(date(end ?? start))" value="\#(value)"/>"#
    }

    /// A generated export, then a small one of the same person whose series share descriptions with
    /// it and with each other, and entries of those descriptions. `base` is a UTC midnight in it.
    private func vaultWithSeries(textVital: Bool = false) throws -> (vault: OpenVault, patient: Patient, base: Int64) {
        let generated = root.appendingPathComponent("export.xml")
        try HealthExportGenerator.write(generated, records: 20_000, days: 40)
        let vault = try openVault()
        _ = try vault.importAppleHealth(generated, into: nil)
        let patient = try XCTUnwrap(try vault.allPatients().first)
        let latest = try XCTUnwrap(try vault.inDatabase { try EntryRepository($0).latestTime(patientID: patient.id) })
        let base = (latest / 86_400 - 12) * 86_400

        var records: [String] = []
        for i in 0..<200 {
            let t = base + Int64(i) * 3_600
            // Two straps read the heart at the same seconds: a tie between series, put in id order.
            records.append(Self.record("HeartRate", "\(60 + i % 7)", "count/min", t, source: "Strap A"))
            records.append(Self.record("HeartRate", "\(80 + i % 5)", "count/min", t, source: "Strap B"))
        }
        for i in 0..<400 {
            let t = base + Int64(i) * 1_800 + 900
            // Energy that is not whole numbers, from two rings: a day's total adds both.
            records.append(Self.record("ActiveEnergyBurned", String(format: "%.1f", 0.1 * Double(i % 10 + 1)), "kcal", t, end: t + 600, source: "Ring A"))
            records.append(Self.record("ActiveEnergyBurned", String(format: "%.3f", 0.013 * Double(i % 7 + 1)), "kcal", t + 300, end: t + 900, source: "Ring B"))
        }
        // A long sample that ranges begin inside, counted on the day it starts.
        records.append(Self.record("ActiveEnergyBurned", "55.5", "kcal", base - 5 * 3_600, end: base + 30 * 3_600, source: "Ring A"))
        // One description in two units: the rows say which reading was first.
        for i in 0..<30 { records.append(Self.record("FlightsClimbed", "\(i % 4 + 1)", "count", base + Int64(i) * 7_000, source: "Phone X")) }
        for i in 0..<30 { records.append(Self.record("FlightsClimbed", "\(i % 3 + 1)", "flights", base + Int64(i) * 7_000 + 3_500, source: "Phone Y")) }
        // A number stored as text (it does not read back the same): read as the number it says.
        for i in 0..<40 { records.append(Self.record("OxygenSaturation", "0.9\(i % 9)0", "%", base + Int64(i) * 9_000, source: "Oximeter")) }
        if textVital { records.append(Self.record("RespiratoryRate", "unreadable", "count/min", base + 86_400 * 3 + 77, source: "Oximeter")) }
        let extra = root.appendingPathComponent("extra.xml")
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
            <ExportDate value="\(Self.date(latest))"/>
            \(records.joined(separator: "\n"))
            </HealthData>
            """
        try Data(xml.utf8).write(to: extra)
        _ = try vault.importAppleHealth(extra, into: patient)

        // Entries of the strap's description, some at the very seconds of its readings.
        let heart = try XCTUnwrap(try vault.inDatabase { db in
            try db.query("SELECT description FROM sample_series WHERE source_name = 'Strap A'") { $0.string(0) }.first ?? nil
        })
        let energy = try XCTUnwrap(try vault.inDatabase { db in
            try db.query("SELECT description, unit FROM sample_series WHERE source_name = 'Ring A'") { ($0.string(0)!, $0.string(1)!) }.first
        })
        for i in 0..<20 {
            let t = base + Int64(i) * 7_200
            _ = try vault.addEntry(patient: patient, content: EntryContent(type: .vitalSign, description: heart, date: ClinicalTime(text: RFC3339.utc(t), epoch: t),
                                                                           valueNumber: Double(100 + i), unit: "/min"))
            _ = try vault.addEntry(patient: patient, content: EntryContent(type: .activity, description: energy.0, date: ClinicalTime(text: RFC3339.utc(t + 60), epoch: t + 60),
                                                                           valueNumber: 1.25, unit: i % 2 == 0 ? energy.1 : "kJ"))
        }
        // A blood pressure written as one text: two groups from one entry.
        _ = try vault.addEntry(patient: patient, content: EntryContent(type: .vitalSign, description: "Blood pressure", date: ClinicalTime(text: RFC3339.utc(base + 4_000), epoch: base + 4_000),
                                                                       valueText: "118/76", unit: "mm[Hg]"))
        return (vault, patient, base)
    }

    /// The two pages are the same but for a day's activity total, which may differ in its last digit.
    private func assertSamePage(_ numbers: JSONValue, _ rows: JSONValue, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        guard case let .object(a) = numbers, case let .object(b) = rows else { return XCTFail("not objects", file: file, line: line) }
        XCTAssertEqual(a.members.map(\.key), b.members.map(\.key), what, file: file, line: line)
        for ((key, x), (_, y)) in zip(a.members, b.members) {
            guard key == "activity", case let .array(days) = x, case let .array(expected) = y else {
                XCTAssertEqual(x, y, "\(what): \(key)", file: file, line: line)
                continue
            }
            XCTAssertEqual(days.count, expected.count, "\(what): activity days", file: file, line: line)
            for (day, other) in zip(days, expected) {
                guard case let .object(d) = day, case let .object(e) = other else { continue }
                XCTAssertEqual(d.members.filter { $0.key != "total" }.map { "\($0.key)=\($0.value)" }, e.members.filter { $0.key != "total" }.map { "\($0.key)=\($0.value)" },
                               "\(what): activity day", file: file, line: line)
                let total = d.members.first { $0.key == "total" }?.value.number ?? .nan, wanted = e.members.first { $0.key == "total" }?.value.number ?? .nan
                XCTAssertEqual(total, wanted, accuracy: abs(wanted) * 1e-12, "\(what): activity total", file: file, line: line)
            }
        }
    }

    func testPagesReadAsNumbersAreThePagesTheRowsMake() throws {
        let (vault, patient, base) = try vaultWithSeries()
        let day: Int64 = 86_400
        let ranges: [(String, Int64, Int64)] = [
            ("a month around the series", base - 20 * day, base + 10 * day),
            ("a fortnight from inside days", base - 3 * day + 1_234, base + 12 * day + 777),
            ("just over a day page", base + 1_800, base + 2 * day + 1),
            // Day pages read as numbers too (since 2026-12-02): a whole day, and one from inside a day.
            ("a day page", base + day, base + 2 * day - 1),
            ("a day page from mid-morning", base + 3 * day + 36_000, base + 4 * day + 35_999),
            ("beginning inside the long sample", base + 2 * 3_600, base + 9 * day),
            ("the whole export", base - 40 * day, base + 13 * day),
        ]
        let zones: [DayZone] = [.named(TimeZone(identifier: "UTC")!), .named(TimeZone(identifier: "Europe/Paris")!), .fixed(secondsFromGMT: 19_800)]
        var compared = 0
        for (name, start, end) in ranges {
            for zone in zones {
                for keys: Set<String>? in [nil, ["activity"], ["vitals", "results"]] {
                    let query = TimelineQuery(range: TimelineRange(start: start, end: end, zone: zone), keys: keys)
                    let numbers = try vault.inDatabase { try query.payload(patientID: patient.id, db: $0, readings: true) }.jsonValue
                    let rows = try vault.inDatabase { try query.payload(patientID: patient.id, db: $0, readings: false) }.jsonValue
                    assertSamePage(numbers, rows, "\(name), \(zone), \(keys.map { $0.sorted() } ?? [])")
                    compared += 1
                }
            }
        }
        // The pages hold what the test is about: both straps' ties, the entries, two units, the text number.
        let page = try vault.inDatabase { db in
            try TimelineQuery(range: TimelineRange(start: base - day, end: base + 10 * day, zone: .fixed(secondsFromGMT: 0)))
                .payload(patientID: patient.id, db: db, readings: true)
        }.jsonValue
        func member(_ value: JSONValue?, _ key: String) -> JSONValue? { value?.object?.members.first { $0.key == key }?.value }
        let vitals = member(page, "vitals")?.array ?? []
        let heart = try vault.inDatabase { db in
            try db.query("SELECT description FROM sample_series WHERE source_name = 'Strap A'") { $0.string(0)! }.first!
        }
        let heartValues = member(vitals.first { member($0, "description")?.string == heart }, "values")?.array ?? []
        XCTAssertGreaterThan(heartValues.count, 400, "both straps and the entries in one group")
        XCTAssertTrue(vitals.contains { member($0, "description")?.string == "Systolic Blood Pressure" })
        XCTAssertEqual(compared, 63)

        // The vital charts of a month: the same readings, units and extremes either way.
        let month = TimelineRange(start: base - 20 * day, end: base + 10 * day, zone: .fixed(secondsFromGMT: 0))
        let fromNumbers = try vault.read { try vault.vitalGroups(patient: patient, range: month, maximumPoints: 400, dayTotals: true, readings: true) }
        let fromRows = try vault.read { try vault.vitalGroups(patient: patient, range: month, maximumPoints: 400, dayTotals: true, readings: false) }
        XCTAssertEqual(fromNumbers.keys.sorted(), fromRows.keys.sorted())
        for (description, group) in fromRows {
            let other = try XCTUnwrap(fromNumbers[description])
            XCTAssertEqual(other.unit, group.unit, description)
            XCTAssertEqual(other.count, group.count, description)
            XCTAssertEqual(other.readings.map(\.time), group.readings.map(\.time), description)
            XCTAssertEqual(other.readings.map(\.value), group.readings.map(\.value), description)
        }
    }

    /// A vital sign stored as a word: the page made from numbers gives way to the rows, whole.
    func testAVitalSignStoredAsTextGivesThePageToTheRows() throws {
        let (vault, patient, base) = try vaultWithSeries(textVital: true)
        let texts = try vault.inDatabase { db in
            try db.scalarInt("""
                SELECT count(*) FROM samples s JOIN sample_series ss ON ss.id = s.series_id WHERE ss.type = 'vital_sign' AND typeof(s.value) = 'text'
                  AND s.value = 'unreadable'
                """)
        }
        XCTAssertEqual(texts, 1, "the word is kept as a sample's value")
        let query = TimelineQuery(range: TimelineRange(start: base - 86_400, end: base + 9 * 86_400, zone: .fixed(secondsFromGMT: 0)))
        XCTAssertThrowsError(try vault.inDatabase { try query.payload(patientID: patient.id, db: $0, readings: true) }) { error in
            guard case SampleReadingsPage.NeedsRows.vitalText = error else { return XCTFail("\(error)") }
        }
        assertSamePage(try vault.inDatabase { try query.payload(patientID: patient.id, db: $0) }.jsonValue,
                       try vault.inDatabase { try query.payload(patientID: patient.id, db: $0, readings: false) }.jsonValue, "with a word")
    }
}
