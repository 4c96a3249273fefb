import Foundation
import HReaderJSON

/// A workout's route in a few numbers, kept with its exercise entry (docs/wearables.md, "Routes"):
/// how many positions, where it began and ended, the box it stayed in, its length along the
/// positions, and its altitude's range, climb and descent. The positions themselves are not kept.
/// One summary for every reader that has positions (FIT's `record`s, Health Connect's
/// `exercise_route_table`, Apple Health's GPX route files), fed in time order.
///
/// ```swift
/// var route = RouteSummary()
/// route.add(latitude: 52.5200, longitude: 13.4050, altitude: 34)
/// route.add(latitude: 52.5290, longitude: 13.4050, altitude: 40)
/// route.metres        // 1000.8 (great-circle, on a sphere of the Earth's mean radius)
/// route.text          // "route 1 km, climbing 6 m"
/// ```
public struct RouteSummary: Sendable, Equatable {
    public private(set) var points = 0
    public private(set) var start: (latitude: Double, longitude: Double)?
    public private(set) var end: (latitude: Double, longitude: Double)?
    public private(set) var south = Double.infinity, north = -Double.infinity, west = Double.infinity, east = -Double.infinity
    /// Metres along the positions, each step the great-circle distance between two.
    public private(set) var metres = 0.0
    public private(set) var lowest: Double?
    public private(set) var highest: Double?
    /// Metres climbed and descended: altitude changes of at least `altitudeStep` from the last
    /// altitude counted, so a barometer's or a GPS's jitter of a metre or two adds nothing.
    public private(set) var ascent = 0.0
    public private(set) var descent = 0.0
    /// Positions left out: outside the Earth's coordinates, or not numbers.
    public private(set) var implausible = 0
    private var reference: Double?

    /// The change of altitude that counts as a climb or a descent.
    public static let altitudeStep = 3.0
    /// The Earth's mean radius (IUGG), metres.
    static let earthRadius = 6_371_008.8

    public init() {}

    public var isEmpty: Bool { points == 0 }

    /// Adds the next position (degrees; altitude in metres, nil when the reading has none).
    public mutating func add(latitude: Double, longitude: Double, altitude: Double?) {
        guard latitude.isFinite, longitude.isFinite, abs(latitude) <= 90, abs(longitude) <= 180 else {
            implausible += 1
            return
        }
        if let end { metres += Self.distance(from: end, to: (latitude, longitude)) }
        if start == nil { start = (latitude, longitude) }
        end = (latitude, longitude)
        points += 1
        south = min(south, latitude); north = max(north, latitude)
        west = min(west, longitude); east = max(east, longitude)
        // Altitudes between the Dead Sea's shore and a little above Everest's summit, else none.
        if let altitude, altitude.isFinite, (-500...9_000).contains(altitude) {
            lowest = min(lowest ?? altitude, altitude)
            highest = max(highest ?? altitude, altitude)
            if let reference {
                if altitude - reference >= Self.altitudeStep {
                    ascent += altitude - reference
                    self.reference = altitude
                } else if reference - altitude >= Self.altitudeStep {
                    descent += reference - altitude
                    self.reference = altitude
                }
            } else {
                reference = altitude
            }
        }
    }

    /// The great-circle distance (haversine), metres.
    static func distance(from a: (latitude: Double, longitude: Double), to b: (latitude: Double, longitude: Double)) -> Double {
        let radians = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * radians, dLon = (b.longitude - a.longitude) * radians
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(a.latitude * radians) * cos(b.latitude * radians) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }

    /// For the entry's text: "route 5.12 km, climbing 85 m" (the climb when there is one).
    public var text: String? {
        guard !isEmpty else { return nil }
        var text = "route \(SampleText.plain((metres / 10).rounded() / 100)) km"
        if ascent >= 1 { text += ", climbing \(SampleText.plain(ascent.rounded())) m" }
        return text
    }

    /// The summary in the entry's raw JSON: positions to five decimals (about a metre), metres to one.
    public var json: JSONValue {
        func degrees(_ value: Double) -> JSONValue { .decimal(value, places: 5) }
        func point(_ p: (latitude: Double, longitude: Double)?) -> JSONValue {
            p.map { .array([degrees($0.latitude), degrees($0.longitude)]) } ?? .null
        }
        var members: [JSONObject.Member] = [
            ("points", .int(points)), ("start", point(start)), ("end", point(end)),
            ("bounds", isEmpty ? .null : .array([.array([degrees(south), degrees(west)]), .array([degrees(north), degrees(east)])])),
            ("distance_m", .decimal(metres, places: 1)),
        ]
        if let lowest, let highest {
            members += [("altitude_min_m", .decimal(lowest, places: 1)), ("altitude_max_m", .decimal(highest, places: 1)),
                        ("ascent_m", .decimal(ascent, places: 1)), ("descent_m", .decimal(descent, places: 1))]
        }
        if implausible > 0 { members.append(("positions_left_out", .int(implausible))) }
        return .object(JSONObject(members))
    }

    public static func == (a: RouteSummary, b: RouteSummary) -> Bool { a.json == b.json }
}
