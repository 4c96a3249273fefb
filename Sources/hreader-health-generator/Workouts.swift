import Foundation

/// One `<Workout>`, computed from (seed, index) alone, so the GPX files written after the XML
/// agree with the XML's FileReferences.
struct WorkoutSample {
    enum Activity: Int { case running, walking, cycling }

    let index: Int
    let activity: Activity
    let start: Int64
    let end: Int64
    let creation: Int64
    let activeSeconds: Int
    let durationMinutes: Double
    let distanceKm: Double
    let activeKcal: Double
    let basalKcal: Double
    let indoor: Bool
    let pause: (at: Int64, seconds: Int)?
    let heartRate: (average: Double, minimum: Int, maximum: Int)
    let deviceAddress: UInt64
    let temperatureF: Int
    let humidity: Int
    let elevationCm: Int
    let routeSeed: UInt64
    let traveling: Bool

    var activityType: String {
        switch activity {
        case .running: return "HKWorkoutActivityTypeRunning"
        case .walking: return "HKWorkoutActivityTypeWalking"
        case .cycling: return "HKWorkoutActivityTypeCycling"
        }
    }

    var distanceType: StaticString {
        activity == .cycling ? "HKQuantityTypeIdentifierDistanceCycling" : "HKQuantityTypeIdentifierDistanceWalkingRunning"
    }

    var hasRoute: Bool { !indoor }
}

extension Synth {
    func workout(_ index: Int) -> WorkoutSample {
        var random = SampleRandom(seed: seed, stream: Stream.workout, index: index)
        let slot = slot(index: index, count: plan.workouts, window: (7 * 3600, 19 * 3600))
        let roll = random.below(100)
        let activity: WorkoutSample.Activity = roll < 45 ? .running : roll < 80 ? .walking : .cycling
        let indoor = index % 4 == 3
        let pauseSeconds = !indoor && random.percent(30) ? random.int(60...300) : 0
        let room = max(60, slot.length - 120)
        var active = random.int(20 * 60...75 * 60)
        var pause = pauseSeconds
        if active + pause > room {
            pause = min(pause, room / 4)
            active = room - pause
        }
        // Starts on a whole minute, so no two routes share a file name.
        let firstMinute = (slot.start + 59) / 60 * 60
        let latest = slot.start + Int64(slot.length) - Int64(active + pause)
        let minutes = max(0, Int((latest - firstMinute) / 60))
        let start = firstMinute + Int64(random.int(0...minutes)) * 60
        let end = start + Int64(active + pause)
        let hours = Double(active) / 3600
        let speed: Double, kcalPerMinute: Double, heart: Double
        switch activity {
        case .running:
            speed = 9 + random.unit() * 3.5
            kcalPerMinute = 10 + random.unit() * 3
            heart = 140 + random.unit() * 20
        case .walking:
            speed = 4.5 + random.unit() * 1.5
            kcalPerMinute = 4 + random.unit() * 2
            heart = 95 + random.unit() * 20
        case .cycling:
            speed = 16 + random.unit() * 11
            kcalPerMinute = 7 + random.unit() * 3
            heart = 120 + random.unit() * 25
        }
        let average = (heart * 10).rounded() / 10
        return WorkoutSample(
            index: index, activity: activity, start: start, end: end,
            creation: min(end + Int64(random.int(5...120)), clock.exportEpoch - 60),
            activeSeconds: active,
            durationMinutes: (Double(active) + Double(random.int(0...999)) / 1000) / 60,
            distanceKm: speed * hours,
            activeKcal: kcalPerMinute * Double(active) / 60,
            basalKcal: (1.1 + random.unit() * 0.2) * Double(active + pause) / 60,
            indoor: indoor,
            pause: pause > 0 ? (start + Int64(active / 2), pause) : nil,
            heartRate: (average, Int(heart) - random.int(25...40), Int(heart) + random.int(12...25)),
            deviceAddress: 0x2_8000_0000 | (random.next() & 0x7_FFFF_FFF0),
            temperatureF: random.int(28...88),
            humidity: random.int(30...95) * 100,
            elevationCm: random.int(200...12_000),
            routeSeed: random.next(),
            traveling: clock.isTraveling(start)
        )
    }

    /// `route_2024-03-10_8.15am.gpx`, from the local start time, as real exports name them.
    func routeFileName(_ workout: WorkoutSample) -> String {
        let t = clock.local(workout.start)
        let hour = t.hour % 12 == 0 ? 12 : t.hour % 12
        return "route_\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))_\(hour).\(pad(t.minute, 2))\(t.hour < 12 ? "am" : "pm").gpx"
    }

    func writeWorkout(_ workout: WorkoutSample, into out: inout ByteSink) {
        let watch = Source.all[Source.watch]
        out.raw(" <Workout workoutActivityType=\"")
        out.escaped(workout.activityType)
        out.raw("\" duration=\"")
        out.double(workout.durationMinutes)
        out.raw("\" durationUnit=\"min\" totalDistance=\"")
        out.double(workout.distanceKm)
        out.raw("\" totalDistanceUnit=\"km\" totalEnergyBurned=\"")
        out.double(workout.activeKcal)
        out.raw("\" totalEnergyBurnedUnit=\"kcal\" sourceName=\"")
        out.raw(watch.name)
        out.raw("\" sourceVersion=\"")
        out.raw(watch.version)
        out.raw("\" device=\"")
        out.raw(watch.devicePrefix)
        out.hex(workout.deviceAddress)
        out.raw(watch.deviceSuffix)
        out.raw("\" creationDate=\"")
        out.healthDate(workout.creation, clock)
        out.raw("\" startDate=\"")
        out.healthDate(workout.start, clock)
        out.raw("\" endDate=\"")
        out.healthDate(workout.end, clock)
        out.raw("\">\n")

        writeMetadata("HKIndoorWorkout", value: workout.indoor ? "1" : "0", indent: 2, into: &out)
        writeMetadata("HKTimeZone", value: workout.traveling ? "America/New_York" : "Europe/Berlin", indent: 2, into: &out)
        if !workout.indoor {
            writeMetadata("HKWeatherTemperature", value: "\(workout.temperatureF) degF", indent: 2, into: &out)
            writeMetadata("HKWeatherHumidity", value: "\(workout.humidity) %", indent: 2, into: &out)
            writeMetadata("HKElevationAscended", value: "\(workout.elevationCm) cm", indent: 2, into: &out)
        }
        let mets = (workout.activeKcal + workout.basalKcal) / (Double(workout.activeSeconds) / 3600) / 70
        writeMetadata("HKAverageMETs", value: String(format: "%.5f kcal/hr·kg", mets), indent: 2, into: &out)

        // Segments over the active time, then the pause and resume if there was one.
        let segments = workout.activeSeconds >= 1800 ? 3 : 1
        let segmentSeconds = workout.activeSeconds / segments
        for segment in 0..<segments {
            out.raw("  <WorkoutEvent type=\"HKWorkoutEventTypeSegment\" date=\"")
            out.healthDate(workout.start + Int64(segment * segmentSeconds), clock)
            out.raw("\" duration=\"")
            out.double(Double(segmentSeconds) / 60)
            out.raw("\" durationUnit=\"min\"/>\n")
        }
        if let pause = workout.pause {
            out.raw("  <WorkoutEvent type=\"HKWorkoutEventTypePause\" date=\"")
            out.healthDate(pause.at, clock)
            out.raw("\"/>\n  <WorkoutEvent type=\"HKWorkoutEventTypeResume\" date=\"")
            out.healthDate(pause.at + Int64(pause.seconds), clock)
            out.raw("\"/>\n")
        }

        func statistics(_ type: StaticString) {
            out.raw("  <WorkoutStatistics type=\"")
            out.raw(type)
            out.raw("\" startDate=\"")
            out.healthDate(workout.start, clock)
            out.raw("\" endDate=\"")
            out.healthDate(workout.end, clock)
            out.byte(UInt8(ascii: "\""))
        }
        statistics("HKQuantityTypeIdentifierActiveEnergyBurned")
        out.raw(" sum=\"")
        out.double(workout.activeKcal)
        out.raw("\" unit=\"kcal\"/>\n")
        statistics("HKQuantityTypeIdentifierBasalEnergyBurned")
        out.raw(" sum=\"")
        out.double(workout.basalKcal)
        out.raw("\" unit=\"kcal\"/>\n")
        statistics("HKQuantityTypeIdentifierHeartRate")
        out.raw(" average=\"")
        out.double(workout.heartRate.average)
        out.raw("\" minimum=\"")
        out.int(workout.heartRate.minimum)
        out.raw("\" maximum=\"")
        out.int(workout.heartRate.maximum)
        out.raw("\" unit=\"count/min\"/>\n")
        statistics(workout.distanceType)
        out.raw(" sum=\"")
        out.double(workout.distanceKm)
        out.raw("\" unit=\"km\"/>\n")

        if workout.hasRoute {
            out.raw("  <WorkoutRoute sourceName=\"")
            out.raw(watch.name)
            out.raw("\" sourceVersion=\"")
            out.raw(watch.version)
            out.raw("\" device=\"")
            out.raw(watch.devicePrefix)
            out.hex(workout.deviceAddress)
            out.raw(watch.deviceSuffix)
            out.raw("\" creationDate=\"")
            out.healthDate(workout.creation, clock)
            out.raw("\" startDate=\"")
            out.healthDate(workout.start, clock)
            out.raw("\" endDate=\"")
            out.healthDate(workout.end, clock)
            out.raw("\">\n")
            writeMetadata("HKMetadataKeySyncVersion", "2", indent: 3, into: &out)
            writeMetadata("HKMetadataKeySyncIdentifier", value: uuid(workout.routeSeed), indent: 3, into: &out)
            out.raw("   <FileReference path=\"/workout-routes/")
            out.escaped(routeFileName(workout))
            out.raw("\"/>\n  </WorkoutRoute>\n")
        }
        out.raw(" </Workout>\n")
    }

    /// A small valid GPX 1.1 track for the workout's route.
    func gpx(_ workout: WorkoutSample) -> Data {
        var random = SampleRandom(seed: workout.routeSeed, stream: Stream.route, index: workout.index)
        let base = workout.traveling ? (lat: 40.7812, lon: -73.9665) : (lat: 52.5145, lon: 13.3501)
        let center = (lat: base.lat + (random.unit() - 0.5) * 0.04, lon: base.lon + (random.unit() - 0.5) * 0.06)
        // A loop whose circumference is the workout's distance.
        let radiusKm = max(0.05, workout.distanceKm / (2 * Double.pi))
        let kmPerDegreeLat = 111.2
        let kmPerDegreeLon = 111.2 * cos(center.lat * Double.pi / 180)
        let phase = random.unit() * 2 * Double.pi
        let points = 30
        let name = routeFileName(workout)
            .replacingOccurrences(of: "route_", with: "Route ")
            .replacingOccurrences(of: ".gpx", with: "")
            .replacingOccurrences(of: "_", with: " ")
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="hreader-health-generator" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.topografix.com/GPX/1/1 http://www.topografix.com/GPX/1/1/gpx.xsd">
             <metadata>
              <time>\(clock.utcISO(workout.start))</time>
             </metadata>
             <trk>
              <name>\(name)</name>
              <trkseg>

            """
        var elevation = 30 + random.unit() * 15
        for point in 0..<points {
            let fraction = Double(point) / Double(points - 1)
            let angle = phase + fraction * 2 * Double.pi
            let lat = center.lat + radiusKm * sin(angle) / kmPerDegreeLat
            let lon = center.lon + radiusKm * cos(angle) / kmPerDegreeLon
            elevation += (random.unit() - 0.5) * 1.2
            let time = workout.start + Int64(fraction * Double(workout.end - workout.start))
            // The Health app's routes carry speed, course and accuracies in <extensions>, and
            // importers (healthkit-to-sqlite among them) read them.
            let speed = 2.2 + random.unit() * 1.2, course = (angle * 180 / Double.pi).truncatingRemainder(dividingBy: 360)
            text += "   <trkpt lat=\"\(String(format: "%.6f", lat))\" lon=\"\(String(format: "%.6f", lon))\">"
                + "<ele>\(String(format: "%.2f", elevation))</ele><time>\(clock.utcISO(time))</time>"
                + "<extensions><speed>\(String(format: "%.6f", speed))</speed><course>\(String(format: "%.6f", course))</course>"
                + "<hAcc>\(String(format: "%.6f", 2 + random.unit() * 3))</hAcc><vAcc>\(String(format: "%.6f", 1.5 + random.unit() * 2))</vAcc></extensions></trkpt>\n"
        }
        text += "  </trkseg>\n </trk>\n</gpx>\n"
        return Data(text.utf8)
    }

    func uuid(_ value: UInt64) -> String {
        var random = SampleRandom(seed: value, stream: 0, index: 0)
        let hex = String(format: "%016llX%016llX", random.next(), random.next())
        let chars = Array(hex)
        return String(chars[0..<8]) + "-" + String(chars[8..<12]) + "-4" + String(chars[13..<16]) + "-A"
            + String(chars[17..<20]) + "-" + String(chars[20..<32])
    }
}
