import Foundation
@testable import HReaderRecords
import XCTest

/// Apple Health's workout route files (GPX 1.1, as the Health app writes them), read as their summary.
final class WorkoutRouteGPXTests: XCTestCase {
    static func gpx(_ points: String, prolog: String = "") -> Data {
        Data("""
            <?xml version="1.0" encoding="UTF-8"?>\(prolog)
            <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1">
             <metadata><time>2026-03-01T07:00:00Z</time></metadata>
             <trk><name>Route 2026-03-01 8:00am</name><trkseg>
            \(points)
             </trkseg></trk>
            </gpx>
            """.utf8)
    }

    func testTrackPointsBecomeTheRoutesSummary() throws {
        let points = [(52.5200, 34.0), (52.5290, 35.2), (52.5380, 41.0)].map { lat, ele in
            "<trkpt lon=\"13.405000\" lat=\"\(lat)\"><ele>\(ele)</ele><time>2026-03-01T07:00:00Z</time>"
                + "<extensions><speed>2.9</speed><course>0</course><hAcc>3</hAcc><vAcc>2</vAcc></extensions></trkpt>"
        }.joined(separator: "\n") + "\n<trkpt lat=\"52.5470\"/>\n<trkpt lat=\"52.5470\" lon=\"13.405\"><ele>not a number</ele></trkpt>"
        let route = try WorkoutRouteGPX.summary(Self.gpx(points), name: "route.gpx")
        XCTAssertEqual(route.points, 4)
        XCTAssertEqual(route.implausible, 1, "a point without its longitude")
        XCTAssertEqual(route.metres, 3 * 1000.75, accuracy: 1)
        XCTAssertEqual(route.ascent, 7, "34 → 41; the 1.2 m step alone is jitter")
        XCTAssertEqual(route.highest, 41)
        XCTAssertEqual(route.text, "route 3 km, climbing 7 m")
    }

    func testWhatIsNoGPXIsRefused() {
        XCTAssertThrowsError(try WorkoutRouteGPX.summary(Data("<kml><Placemark/></kml>".utf8), name: "r.gpx"))
        XCTAssertThrowsError(try WorkoutRouteGPX.summary(Data("not xml".utf8), name: "r.gpx"))
        XCTAssertThrowsError(try WorkoutRouteGPX.summary(Data("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\">".utf8), name: "r.gpx"), "cut short")
        // An entity declared in the document type (the billion laughs' way in) is refused before any is expanded.
        let bomb = Self.gpx("<trkpt lat=\"1\" lon=\"2\"><name>&a;</name></trkpt>",
                            prolog: "\n<!DOCTYPE gpx [<!ENTITY a \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\">]>")
        XCTAssertThrowsError(try WorkoutRouteGPX.summary(bomb, name: "r.gpx")) { error in
            XCTAssertTrue("\(error)".contains("document type"), "\(error)")
        }
    }
}
