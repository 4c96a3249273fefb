import Foundation
import XCTest

/// Issue 40's "one day, counted once", through the real `hreader`: a phone and a watch that counted
/// the same walk are not summed twice on the timeline's pages, the activity tile and the export's
/// daily Observations; `hreader sources priority` reorders them, and the next answer follows.
///
/// The day (two days ago, UTC): the watch counts 2,000 steps over 08:00–10:00; the phone 500 over
/// 09:00–10:00 (under the watch's time) and 200 over 18:00–18:10 (nobody else's). Summed: 2,700.
/// Watch first (the default): 2,000 + 0 + 200 = 2,200. Phone first: 500 + 200 + the watch's
/// hour the phone did not cover, 1,000 = 1,700.
final class SourcePriorityTests: CLITestCase {
    static let watch = "Anna’s Apple Watch"
    static let phone = "Anna’s iPhone"
    let utc = ["TZ": "UTC"]

    /// Midnight UTC two days ago, and its date.
    lazy var day: (start: Int64, text: String) = {
        let start = (Int64(Date().timeIntervalSince1970) / 86_400 - 2) * 86_400
        return (start, Self.format(start, "yyyy-MM-dd"))
    }()

    static func format(_ epoch: Int64, _ pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = pattern
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(epoch)))
    }

    func steps(_ value: Int, from: Int64, to: Int64, source: String) -> String {
        let (start, end) = (Self.format(day.start + from, "yyyy-MM-dd HH:mm:ss '+0000'"), Self.format(day.start + to, "yyyy-MM-dd HH:mm:ss '+0000'"))
        return #"<Record type="HKQuantityTypeIdentifierStepCount" sourceName="\#(source)" unit="count" creationDate="\#(end)" startDate="\#(start)" endDate="\#(end)" value="\#(value)"/>"#
    }

    /// A vault with one person, the day's steps from the watch and the phone, and the activity tile.
    func vaultWithWatchAndPhone(_ given: [String]? = nil) throws {
        try initVault()
        let records = given ?? [
            steps(2000, from: 8 * 3600, to: 10 * 3600, source: Self.watch),
            steps(500, from: 9 * 3600, to: 10 * 3600, source: Self.phone),
            steps(200, from: 18 * 3600, to: 18 * 3600 + 600, source: Self.phone),
        ]
        let xml = AppleHealthTests.doctype + "\n<HealthData locale=\"en_US\">\n"
            + #"<ExportDate value="\#(Self.format(day.start + 2 * 86_400, "yyyy-MM-dd HH:mm:ss '+0000'"))"/>"# + "\n"
            + records.joined(separator: "\n") + "\n</HealthData>\n"
        try ok(withPassword(["import", "--apple-health", try file("export.xml", xml), "--as", "me"]), env: utc)
        try ok(withPassword(["applets", "add", "org.hreader.activity", "--patient", "1"]), env: utc)
    }

    /// The day's steps on a timeline page ending the next midnight.
    func timelineSteps(_ page: String) throws -> Double? {
        let at = Self.format(day.start + 86_400, "yyyy-MM-dd'T'HH:mm:ss'Z'")
        let payload = try json(try ok(withPassword(["timeline", "--patient", "1", "--page", page, "--at", at, "--types", "activity"]), env: utc))
        let days = payload["activity"] as? [[String: Any]] ?? []
        return (days.first { $0["day"] as? String == day.text && ($0["description"] as? String ?? "").lowercased().contains("step") }?["total"] as? NSNumber)?.doubleValue
    }

    /// The day's line of the activity tile ("Sun 2026-11-29  2200").
    func tileLine() throws -> String? {
        let summary = try json(try ok(withPassword(["summary", "--json", "--patient", "1"]), env: utc))
        let tile = (summary["tiles"] as? [[String: Any]] ?? []).first { $0["identifier"] as? String == "org.hreader.activity" }
        return (tile?["lines"] as? [String] ?? []).first { $0.contains(day.text) }
    }

    /// The day's steps Observation of `export --group day`.
    func exportedSteps() throws -> Double? {
        let url = workDir.appendingPathComponent("export-\(UUID().uuidString).json")
        try ok(withPassword(["export", "--patient", "1", "--out", url.path, "--group", "day"]), env: utc)
        let bundle = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let observations = (bundle["entry"] as? [[String: Any]] ?? []).compactMap { $0["resource"] as? [String: Any] }
            .filter { $0["resourceType"] as? String == "Observation" }
        let steps = observations.first { observation in
            let codes = ((observation["code"] as? [String: Any])?["coding"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
            let start = (observation["effectivePeriod"] as? [String: Any])?["start"] as? String ?? ""
            return codes.contains("55423-8") && start.hasPrefix(day.text)
        }
        return ((steps?["valueQuantity"] as? [String: Any])?["value"] as? NSNumber)?.doubleValue
    }

    func assertEverywhere(_ expected: Double, _ why: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for page in ["day", "week", "month"] {
            XCTAssertEqual(try timelineSteps(page), expected, "\(page) page: \(why)", file: file, line: line)
        }
        let tile = try tileLine()
        XCTAssertTrue(tile?.hasSuffix("  \(Int(expected))") ?? false, "activity tile: \(tile ?? "no line for \(day.text)"): \(why)", file: file, line: line)
        XCTAssertEqual(try exportedSteps(), expected, "export --group day: \(why)", file: file, line: line)
    }

    func testAWatchAndAPhoneCountADayOnceInTheTimelineTileAndExport() throws {
        try vaultWithWatchAndPhone()
        try assertEverywhere(2200, "the watch counts first; the phone adds only its 200 steps the watch did not cover (not 2,700)")
    }

    func testThePriorityReordersAndResets() throws {
        try vaultWithWatchAndPhone()
        // The default order, with each source's guessed kind.
        let shown = try json(try ok(withPassword(["sources", "priority", "--json"]), env: utc))
        let order = try XCTUnwrap(shown["sources"] as? [[String: Any]])
        XCTAssertEqual(order.map { $0["name"] as? String }, [Self.watch, Self.phone])
        XCTAssertEqual(order.map { $0["kind"] as? String }, ["watch or band", "phone"])

        try ok(withPassword(["sources", "priority", Self.phone]), env: utc)
        let text = try ok(withPassword(["sources", "priority"]), env: utc).stdout
        XCTAssertTrue(text.hasPrefix("1  \(Self.phone)"), text)
        try assertEverywhere(1700, "the phone first: its 700 whole, and the watch's hour the phone did not cover")

        try ok(withPassword(["sources", "priority", "--reset"]), env: utc)
        XCTAssertEqual(try timelineSteps("week"), 2200, "back to the default: the watch first")
        XCTAssertEqual(try exportedSteps(), 2200)
    }

    /// A range that begins inside the watch's sample (11:00–13:00, from noon): that sample counts on
    /// its day, as its row did, and is weighed with the day's others: the phone's 12:30–12:40 lies
    /// under it.
    func testASampleTheRangeBeginsInsideIsWeighedWithItsDay() throws {
        try vaultWithWatchAndPhone([
            steps(2000, from: 11 * 3600, to: 13 * 3600, source: Self.watch),
            steps(300, from: 12 * 3600 + 1800, to: 12 * 3600 + 2400, source: Self.phone),
            steps(100, from: 20 * 3600, to: 20 * 3600 + 600, source: Self.phone),
        ])
        let (from, to) = (Self.format(day.start + 12 * 3600, "yyyy-MM-dd'T'HH:mm:ss'Z'"), Self.format(day.start + 86_399, "yyyy-MM-dd'T'HH:mm:ss'Z'"))
        let payload = try json(try ok(withPassword(["timeline", "--patient", "1", "--from", from, "--to", to, "--types", "activity"]), env: utc))
        let total = ((payload["activity"] as? [[String: Any]])?.first { $0["day"] as? String == day.text }?["total"] as? NSNumber)?.doubleValue
        XCTAssertEqual(total, 2100, "the watch's 2,000 and the phone's 100 outside it, not 2,400")
    }

    func testAnUnknownOrRepeatedNameIsAUsageErrorAndChangesNothing() throws {
        try vaultWithWatchAndPhone()
        let unknown = try hreader(withPassword(["sources", "priority", "Somebody's Ring"]), env: utc)
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("Somebody's Ring"), unknown.stderr)
        let repeated = try hreader(withPassword(["sources", "priority", Self.phone, Self.phone]), env: utc)
        XCTAssertEqual(repeated.status, 2, repeated.stderr)
        let both = try hreader(withPassword(["sources", "priority", "--reset", Self.phone]), env: utc)
        XCTAssertEqual(both.status, 2, both.stderr)
        XCTAssertEqual(try timelineSteps("month"), 2200, "the order is still the default")
    }
}
