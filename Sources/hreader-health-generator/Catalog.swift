/// What kinds of records are written, in which order (real exports group records by type, quantity
/// types first), and which share of `--records` each gets.
enum RecordKind: Sendable {
    case height, bodyMass, bodyMassIndex, heartRate, stepCount, distance, activeEnergy, flights
    case dietaryEnergy, systolic, diastolic, respiratoryRate, bodyTemperature, oxygenSaturation
    case bloodGlucose, restingHeartRate, heartRateVariability, exerciseTime, underwaterDepth
    case sleep, mindful, headache, fatigue, nausea, coughing
}

struct RecordType: Sendable {
    let kind: RecordKind
    let identifier: String
    let unit: String?
    /// Share of `--records`, in basis points (steps and heart rate take what the others leave).
    let basisPoints: Int
    /// Local time-of-day window (seconds after midnight; may pass 24 h) the samples fall into.
    let window: (start: Int, end: Int)
    /// At most this many a day, however many records are asked for: what a person measures by hand or
    /// a device takes now and then (a weight, a blood pressure) does not grow with a watch's samples.
    /// Nil: the watch's own types, which do. What the caps leave goes to steps and heart rate.
    var maxPerDay: Double? = nil
}

enum Catalog {
    static let types: [RecordType] = [
        RecordType(kind: .height, identifier: "HKQuantityTypeIdentifierHeight", unit: "cm", basisPoints: 20, window: (7 * 3600, 9 * 3600), maxPerDay: 0.02),
        RecordType(kind: .bodyMass, identifier: "HKQuantityTypeIdentifierBodyMass", unit: "kg", basisPoints: 100, window: (6 * 3600 + 1800, 8 * 3600 + 1800), maxPerDay: 1),
        RecordType(kind: .bodyMassIndex, identifier: "HKQuantityTypeIdentifierBodyMassIndex", unit: "count", basisPoints: 50, window: (6 * 3600 + 1800, 8 * 3600 + 1800), maxPerDay: 1),
        RecordType(kind: .heartRate, identifier: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", basisPoints: 0, window: (0, 86400)),
        RecordType(kind: .stepCount, identifier: "HKQuantityTypeIdentifierStepCount", unit: "count", basisPoints: 0, window: (6 * 3600 + 1800, 23 * 3600)),
        RecordType(kind: .distance, identifier: "HKQuantityTypeIdentifierDistanceWalkingRunning", unit: "km", basisPoints: 600, window: (6 * 3600 + 1800, 23 * 3600)),
        RecordType(kind: .activeEnergy, identifier: "HKQuantityTypeIdentifierActiveEnergyBurned", unit: "kcal", basisPoints: 800, window: (6 * 3600, 23 * 3600 + 1800)),
        RecordType(kind: .flights, identifier: "HKQuantityTypeIdentifierFlightsClimbed", unit: "count", basisPoints: 200, window: (7 * 3600, 22 * 3600)),
        RecordType(kind: .dietaryEnergy, identifier: "HKQuantityTypeIdentifierDietaryEnergyConsumed", unit: "kcal", basisPoints: 100, window: (7 * 3600, 21 * 3600), maxPerDay: 4),
        RecordType(kind: .systolic, identifier: "HKQuantityTypeIdentifierBloodPressureSystolic", unit: "mmHg", basisPoints: 100, window: (7 * 3600, 21 * 3600), maxPerDay: 2),
        RecordType(kind: .diastolic, identifier: "HKQuantityTypeIdentifierBloodPressureDiastolic", unit: "mmHg", basisPoints: 100, window: (7 * 3600, 21 * 3600), maxPerDay: 2),
        RecordType(kind: .respiratoryRate, identifier: "HKQuantityTypeIdentifierRespiratoryRate", unit: "count/min", basisPoints: 150, window: (0, 7 * 3600), maxPerDay: 150),
        RecordType(kind: .bodyTemperature, identifier: "HKQuantityTypeIdentifierBodyTemperature", unit: "degC", basisPoints: 50, window: (7 * 3600, 22 * 3600), maxPerDay: 1),
        RecordType(kind: .oxygenSaturation, identifier: "HKQuantityTypeIdentifierOxygenSaturation", unit: "%", basisPoints: 150, window: (0, 86400), maxPerDay: 30),
        RecordType(kind: .bloodGlucose, identifier: "HKQuantityTypeIdentifierBloodGlucose", unit: "mg/dL", basisPoints: 100, window: (7 * 3600, 22 * 3600), maxPerDay: 4),
        RecordType(kind: .restingHeartRate, identifier: "HKQuantityTypeIdentifierRestingHeartRate", unit: "count/min", basisPoints: 150, window: (60, 86400 - 60), maxPerDay: 1),
        RecordType(kind: .heartRateVariability, identifier: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", unit: "ms", basisPoints: 200, window: (0, 86400), maxPerDay: 12),
        RecordType(kind: .exerciseTime, identifier: "HKQuantityTypeIdentifierAppleExerciseTime", unit: "min", basisPoints: 300, window: (7 * 3600, 20 * 3600)),
        RecordType(kind: .underwaterDepth, identifier: "HKQuantityTypeIdentifierUnderwaterDepth", unit: "m", basisPoints: 20, window: (10 * 3600, 17 * 3600), maxPerDay: 1),
        RecordType(kind: .sleep, identifier: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil, basisPoints: 300, window: (22 * 3600 + 1800, 31 * 3600), maxPerDay: 12),
        RecordType(kind: .mindful, identifier: "HKCategoryTypeIdentifierMindfulSession", unit: nil, basisPoints: 50, window: (6 * 3600, 22 * 3600), maxPerDay: 2),
        RecordType(kind: .headache, identifier: "HKCategoryTypeIdentifierHeadache", unit: nil, basisPoints: 50, window: (8 * 3600, 21 * 3600), maxPerDay: 0.2),
        RecordType(kind: .fatigue, identifier: "HKCategoryTypeIdentifierFatigue", unit: nil, basisPoints: 50, window: (8 * 3600, 21 * 3600), maxPerDay: 0.2),
        RecordType(kind: .nausea, identifier: "HKCategoryTypeIdentifierNausea", unit: nil, basisPoints: 30, window: (8 * 3600, 21 * 3600), maxPerDay: 0.1),
        RecordType(kind: .coughing, identifier: "HKCategoryTypeIdentifierCoughing", unit: nil, basisPoints: 30, window: (8 * 3600, 21 * 3600), maxPerDay: 0.2),
    ]

    static func index(of kind: RecordKind) -> Int {
        types.firstIndex { $0.kind == kind }!
    }

    static let correlationBloodPressure = "HKCorrelationTypeIdentifierBloodPressure"
}

/// How many of each thing one run writes.
struct Plan: Sendable {
    /// Top-level records per catalog entry (systolic and diastolic are each `bloodPressureReadings`).
    let counts: [Int]
    let bloodPressureReadings: Int
    let days: Int
    let workouts: Int
    let clinical: Int
    /// Percent of the iPhone's step and distance samples that also cover the slot before theirs.
    var phoneOverlap = 0

    var records: Int { counts.reduce(0, +) }
    var correlations: Int { bloodPressureReadings }

    init(records: Int, days: Int, workouts: Int?, clinical: Int) {
        self.days = days
        self.clinical = clinical
        self.workouts = workouts ?? max(1, days / 3)
        let types = Catalog.types
        let steps = Catalog.index(of: .stepCount)
        let heart = Catalog.index(of: .heartRate)
        let systolic = Catalog.index(of: .systolic)
        let diastolic = Catalog.index(of: .diastolic)
        var counts = Array(repeating: 0, count: types.count)
        var readings = 0
        // One of everything (a blood-pressure reading is two records) needs this many.
        let minimum = types.count

        var allocated = false
        if records >= minimum {
            var used = 0
            for (index, type) in types.enumerated() where index != steps && index != heart && index != diastolic {
                var share = max(1, records * type.basisPoints / 10_000)
                if let cap = type.maxPerDay { share = min(share, max(1, Int(cap * Double(days)))) }
                if index == systolic {
                    readings = share
                    used += 2 * share
                } else {
                    counts[index] = share
                    used += share
                }
            }
            let rest = records - used
            if rest >= 2 {
                counts[steps] = (rest + 1) / 2
                counts[heart] = rest / 2
                allocated = true
            } else {
                counts = Array(repeating: 0, count: types.count)
                readings = 0
            }
        }
        if !allocated {
            // Too few for the mix: one each, in order of importance, until they run out.
            var left = records
            var order = [steps, heart]
            order += types.indices.filter { $0 != steps && $0 != heart && $0 != diastolic }
            while left > 0 {
                for index in order where left > 0 {
                    if index == systolic {
                        if left >= 2 {
                            readings += 1
                            left -= 2
                        }
                    } else {
                        counts[index] += 1
                        left -= 1
                    }
                }
            }
        }
        counts[systolic] = readings
        counts[diastolic] = readings
        self.counts = counts
        bloodPressureReadings = readings
    }
}
