/// FIT files of the kinds a Garmin watch writes, made with `FITWriter`, for the tests, the generator
/// and the fuzz seeds.
public enum FITExamples {
    /// Base types.
    public static let enumType: UInt8 = 0x00, uint8: UInt8 = 0x02, uint16: UInt8 = 0x84, uint32: UInt8 = 0x86, string: UInt8 = 0x07
    public static let uint32z: UInt8 = 0x8C, sint32: UInt8 = 0x85

    /// An activity: file_id, device_info naming the watch, `records` one-second heart-rate records
    /// from `start` (the first with a full timestamp, the rest with compressed-timestamp headers
    /// where they fit, a developer field on each), hrv beats, a lap, a session, and an activity
    /// message stating the local offset (`offsetMinutes`, nil for none). Also an unknown message (number 65280).
    /// `route`: records of a position (degrees) and altitude (m) a second from `start`, beside the
    /// heart rates; `power`: the session's average and maximum power (W).
    public static func activity(start: UInt32, heartRates: [UInt8], offsetMinutes: Int? = 60, product: String = "Forerunner 965",
                                serial: UInt32 = 3_987_654_321, distanceMeters: Double = 5000, bigEndian: Bool = false,
                                route: [(latitude: Double, longitude: Double, altitude: Double)] = [],
                                power: (average: UInt16, maximum: UInt16)? = nil) -> [UInt8] {
        var fit = FITWriter()
        fit.define(local: 0, global: 0, fields: [(0, 1, enumType), (1, 2, uint16), (2, 2, uint16), (3, 4, uint32z), (4, 4, uint32)], bigEndian: bigEndian)
        fit.data(local: 0, [.uint(4), .uint(1), .uint(4315), .uint(UInt64(serial)), .uint(UInt64(start))])
        fit.define(local: 1, global: 23, fields: [(253, 4, uint32), (0, 1, uint8), (2, 2, uint16), (3, 4, uint32z), (4, 2, uint16),
                                                  (5, 2, uint16), (27, 20, string)], bigEndian: bigEndian)
        fit.data(local: 1, [.uint(UInt64(start)), .uint(0), .uint(1), .uint(UInt64(serial)), .uint(4315), .uint(1912), .string(product)])
        // A developer's field (a running-power app's, say): defined and skipped.
        fit.define(local: 2, global: 20, fields: [(253, 4, uint32), (3, 1, uint8), (5, 4, uint32)], developer: [(0, 2, 0)], bigEndian: bigEndian)
        fit.define(local: 3, global: 20, fields: [(3, 1, uint8), (5, 4, uint32)], bigEndian: bigEndian)
        for (i, hr) in heartRates.enumerated() {
            let distance = UInt64(Double(i) * distanceMeters / Double(max(1, heartRates.count)) * 100)
            if i % 20 == 0 {
                fit.data(local: 2, [.uint(UInt64(start) + UInt64(i)), .uint(UInt64(hr)), .uint(distance)], developer: [[0x34, 0x01]])
            } else {
                fit.compressed(local: 3, timeOffset: UInt8((UInt64(start) + UInt64(i)) & 0x1F), [.uint(UInt64(hr)), .uint(distance)])
            }
        }
        if !route.isEmpty {
            // position_lat, position_long (semicircles), enhanced_altitude (m × 5 + 500).
            fit.define(local: 9, global: 20, fields: [(253, 4, uint32), (0, 4, sint32), (1, 4, sint32), (78, 4, uint32)], bigEndian: bigEndian)
            for (i, p) in route.enumerated() {
                func semicircles(_ degrees: Double) -> UInt64 { UInt64(UInt32(bitPattern: Int32((degrees / 180 * 2_147_483_648).rounded()))) }
                fit.data(local: 9, [.uint(UInt64(start) + UInt64(i)), .uint(semicircles(p.latitude)), .uint(semicircles(p.longitude)),
                                    .uint(UInt64(((p.altitude + 500) * 5).rounded()))])
            }
        }
        let end = start + UInt32(max(heartRates.count, route.count))
        // Beat-to-beat intervals (s/1000), five to a message, 0xFFFF where none.
        fit.define(local: 4, global: 78, fields: [(0, 10, uint16)], bigEndian: bigEndian)
        fit.data(local: 4, [.array([800, 820, 790, 810, 805])])
        fit.data(local: 4, [.array([795, 815, 0xFFFF, 0xFFFF, 0xFFFF])])
        // An unknown message: counted, not an error.
        fit.define(local: 5, global: 65280, fields: [(1, 4, uint32)], bigEndian: bigEndian)
        fit.data(local: 5, [.uint(7)])
        // lap and session: start_time, timestamp, sport, elapsed (ms), distance (cm), calories, avg/max heart rate.
        var summary: [(UInt8, UInt8, UInt8)] = [(253, 4, uint32), (2, 4, uint32), (5, 1, enumType), (7, 4, uint32), (9, 4, uint32),
                                                (11, 2, uint16), (16, 1, uint8), (17, 1, uint8)]
        let hrs = heartRates.map(Int.init)
        var values: [FITWriter.Value] = [.uint(UInt64(end)), .uint(UInt64(start)), .uint(1), .uint(UInt64(end - start) * 1000),
                                         .uint(UInt64(distanceMeters * 100)), .uint(320),
                                         .uint(UInt64(hrs.isEmpty ? 0xFF : hrs.reduce(0, +) / hrs.count)), .uint(UInt64(hrs.max() ?? 0xFF))]
        if let power {
            summary += [(20, 2, uint16), (21, 2, uint16)]
            values += [.uint(UInt64(power.average)), .uint(UInt64(power.maximum))]
        }
        fit.define(local: 6, global: 19, fields: summary, bigEndian: bigEndian)
        fit.data(local: 6, values)
        fit.define(local: 7, global: 18, fields: summary, bigEndian: bigEndian)
        fit.data(local: 7, values)
        if let offsetMinutes {
            fit.define(local: 8, global: 34, fields: [(253, 4, uint32), (5, 4, uint32)], bigEndian: bigEndian)
            fit.data(local: 8, [.uint(UInt64(end)), .uint(UInt64(Int64(end) + Int64(offsetMinutes) * 60))])
        }
        return fit.file()
    }

    /// A day's monitoring file: monitoring_info with the local offset, then every `every` seconds a
    /// walking reading of the day's running totals (steps, active kcal, distance in cm), a
    /// heart rate in between with a 16-bit timestamp, and sleep levels before the day's walking.
    public static func monitoring(start: UInt32, readings: Int, every: UInt32 = 900, offsetMinutes: Int = 60,
                                  stepsPerReading: UInt32 = 120, product: String = "fenix 7") -> [UInt8] {
        var fit = FITWriter()
        fit.define(local: 0, global: 0, fields: [(0, 1, enumType), (1, 2, uint16), (2, 2, uint16), (3, 4, uint32z), (4, 4, uint32), (8, 20, string)])
        fit.data(local: 0, [.uint(32), .uint(1), .uint(3906), .uint(3_911_111_111), .uint(UInt64(start)), .string(product)])
        fit.define(local: 1, global: 103, fields: [(253, 4, uint32), (0, 4, uint32)])
        fit.data(local: 1, [.uint(UInt64(start)), .uint(UInt64(Int64(start) + Int64(offsetMinutes) * 60))])
        // Sleep: light, deep, rem, awake, in the first hour.
        fit.define(local: 2, global: 275, fields: [(253, 4, uint32), (0, 1, enumType)])
        for (i, level) in [2, 3, 4, 1].enumerated() { fit.data(local: 2, [.uint(UInt64(start) + UInt64(i) * 900), .uint(UInt64(level))]) }
        fit.define(local: 3, global: 55, fields: [(253, 4, uint32), (5, 1, enumType), (3, 4, uint32), (19, 2, uint16), (2, 4, uint32)])
        fit.define(local: 4, global: 55, fields: [(26, 2, uint16), (27, 1, uint8)])
        for i in 1...max(1, readings) {
            let t = start + 3600 + UInt32(i) * every
            let steps = UInt64(i) * UInt64(stepsPerReading)
            fit.data(local: 3, [.uint(UInt64(t)), .uint(6), .uint(steps), .uint(UInt64(i) * 5), .uint(steps * 75)])
            fit.data(local: 4, [.uint(UInt64((t + 60) & 0xFFFF)), .uint(UInt64(60 + i % 30))])
        }
        return fit.file()
    }
}
