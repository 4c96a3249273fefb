@testable import HReaderKit
import HReaderModel
import XCTest

/// The weighing rules of "one day, counted once" (`SourceOverlap`) and the default order of the
/// sources (`SourcePriority`), as units.
final class SourceOverlapTests: XCTestCase {
    typealias Sample = SourceOverlap.Sample
    let hour: Int64 = 3600

    func testTheFirstSourceCountsWholeAndALowerOneOnlyWhereItIsNotCovered() {
        let watch = [Sample(rank: 0, start: 8 * hour, end: 10 * hour, value: 2000)]
        let phone = [Sample(rank: 1, start: 9 * hour, end: 10 * hour, value: 500), Sample(rank: 1, start: 18 * hour, end: 18 * hour + 600, value: 200)]
        XCTAssertEqual(SourceOverlap.total(watch + phone), 2200)
        XCTAssertEqual(SourceOverlap.total(phone + watch), 2200, "the order samples come in does not matter")
    }

    func testALowerSourceIsProratedByTheTimeLeftUncovered() {
        // The phone's 09:30–10:30 is half under the watch's 08:00–10:00: half its 600 steps.
        let samples = [Sample(rank: 0, start: 8 * hour, end: 10 * hour, value: 1000), Sample(rank: 1, start: 9 * hour + 1800, end: 10 * hour + 1800, value: 600)]
        XCTAssertEqual(SourceOverlap.total(samples), 1300)
        // Covered by two of the watch's samples with a gap between them: only the gap counts.
        let gap = [Sample(rank: 0, start: 0, end: 100, value: 10), Sample(rank: 0, start: 150, end: 300, value: 10),
                   Sample(rank: 1, start: 50, end: 250, value: 40)]
        XCTAssertEqual(SourceOverlap.total(gap), 30, "the watch's 20, and a quarter of the phone's 40")
    }

    func testASourceNeverReducesItself() {
        // Two overlapping samples of one source (a phone that wrote a walk and its part again) add up, as before.
        let samples = [Sample(rank: 3, start: 0, end: 600, value: 100), Sample(rank: 3, start: 300, end: 900, value: 50)]
        XCTAssertEqual(SourceOverlap.total(samples), 150)
        // A third source is weighed against both higher ones, not against itself.
        let three = [Sample(rank: 0, start: 0, end: 100, value: 1), Sample(rank: 1, start: 100, end: 200, value: 2),
                     Sample(rank: 2, start: 50, end: 250, value: 8), Sample(rank: 2, start: 200, end: 250, value: 4)]
        XCTAssertEqual(SourceOverlap.total(three), 9, "1 + 2 + a quarter of 8 + 4")
    }

    func testAnInstantCountsUnlessAHigherSourceCoversIt() {
        let samples = [Sample(rank: 0, start: 100, end: 200, value: 10),
                       Sample(rank: 1, start: 150, end: 150, value: 5),    // inside the watch's time: covered
                       Sample(rank: 1, start: 200, end: 200, value: 7),    // at its end (half-open): counts
                       Sample(rank: 1, start: 50, end: 50, value: 3)]      // before it: counts
        XCTAssertEqual(SourceOverlap.total(samples), 20)
        // A higher source's instant covers no time.
        XCTAssertEqual(SourceOverlap.total([Sample(rank: 0, start: 100, end: 100, value: 1), Sample(rank: 1, start: 0, end: 200, value: 4)]), 5)
    }

    func testTheDefaultOrderIsWatchesThenAppsThenPhonesThenByName() {
        XCTAssertEqual(SourcePriority.kind(of: "Anna’s Apple Watch"), .wearable)
        XCTAssertEqual(SourcePriority.kind(of: "Garmin Forerunner 965"), .wearable)
        XCTAssertEqual(SourcePriority.kind(of: "Fit (Google Pixel Watch 2)"), .wearable)
        XCTAssertEqual(SourcePriority.kind(of: "Fit (Google Pixel 8)"), .phone)
        XCTAssertEqual(SourcePriority.kind(of: "Generator iPhone"), .phone)
        XCTAssertEqual(SourcePriority.kind(of: "My husband's iPhone"), .phone, "words, not letters: 'husband' is no band")
        XCTAssertEqual(SourcePriority.kind(of: "Strava"), .app)
        // An app's name does not make its phone a band: the device in parentheses is judged first.
        XCTAssertEqual(SourcePriority.kind(of: "Fitbit (MobileTrack)"), .phone)
        XCTAssertEqual(SourcePriority.kind(of: "Fitbit (Pixel Watch 2)"), .wearable)
        XCTAssertEqual(SourcePriority.kind(of: "Fitbit (Aria)"), .wearable, "a device of no known kind: the whole name decides, as before")
        let sources = ["Zoë’s iPhone", "Strava", "Generator Watch", "Anna’s Apple Watch"]
        XCTAssertEqual(SourcePriority().ordered(sources), ["Anna’s Apple Watch", "Generator Watch", "Strava", "Zoë’s iPhone"])
        XCTAssertEqual(SourcePriority(named: ["Zoë’s iPhone", "Gone Ring"]).ordered(sources),
                       ["Zoë’s iPhone", "Anna’s Apple Watch", "Generator Watch", "Strava"], "named first; a name no longer present is passed over")
        XCTAssertEqual(SourcePriority().ranks(sources)["Strava"], 2)
    }
}
