import HReaderModel

/// What a wearable's file (a FIT file, a Health Connect export) gave, in the forms the vault keeps:
/// samples in the Apple Health samples' form (the same HealthKit kinds, so the same LOINC codes, entry
/// types and readers: docs/wearables.md), entries for what is no sample (an exercise session), and
/// what was read but not mapped, counted.
public struct WearableReadings: Sendable {
    public var samples: [SampleRecord] = []
    public var entries: [MappedEntry] = []
    /// Messages or tables read but not mapped (unknown to hreader, or known and not needed), by name.
    public var unmapped: [String: Int] = [:]
    /// What was read but could not be kept, by reason.
    public var skipped: [String: Int] = [:]
    /// The devices or apps that wrote it, as the series name them.
    public var devices: [String] = []
    /// Notes for the summary (how times were placed).
    public var notes: [String] = []

    public init() {}
}

/// The HealthKit kinds wearables' readings become, with the units the samples are stored in (units
/// converted once, exactly, from the file's: FIT's centimetres become metres by a division by 100).
public enum WearableKind {
    public static let heartRate = ("HKQuantityTypeIdentifierHeartRate", "count/min")
    public static let restingHeartRate = ("HKQuantityTypeIdentifierRestingHeartRate", "count/min")
    public static let steps = ("HKQuantityTypeIdentifierStepCount", "count")
    public static let activeEnergy = ("HKQuantityTypeIdentifierActiveEnergyBurned", "kcal")
    public static let distanceWalkingRunning = ("HKQuantityTypeIdentifierDistanceWalkingRunning", "m")
    public static let distanceCycling = ("HKQuantityTypeIdentifierDistanceCycling", "m")
    public static let heartRateVariability = ("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", "ms")
    /// RMSSD, the measure Fitbit and Health Connect state (HealthKit's own identifier since iOS 27); not SDNN.
    public static let heartRateVariabilityRMSSD = ("HKQuantityTypeIdentifierHeartRateVariabilityRMSSD", "ms")
    public static let sleep = ("HKCategoryTypeIdentifierSleepAnalysis", "")
    public static let bodyMass = ("HKQuantityTypeIdentifierBodyMass", "kg")
    public static let bodyFat = ("HKQuantityTypeIdentifierBodyFatPercentage", "%")
    public static let oxygenSaturation = ("HKQuantityTypeIdentifierOxygenSaturation", "%")
    public static let systolic = ("HKQuantityTypeIdentifierBloodPressureSystolic", "mmHg")
    public static let diastolic = ("HKQuantityTypeIdentifierBloodPressureDiastolic", "mmHg")
    public static let respiratoryRate = ("HKQuantityTypeIdentifierRespiratoryRate", "count/min")
    public static let height = ("HKQuantityTypeIdentifierHeight", "m")
    public static let leanBodyMass = ("HKQuantityTypeIdentifierLeanBodyMass", "kg")
    public static let bodyTemperature = ("HKQuantityTypeIdentifierBodyTemperature", "degC")
    public static let bloodGlucose = ("HKQuantityTypeIdentifierBloodGlucose", "mmol/L")
    public static let vo2Max = ("HKQuantityTypeIdentifierVO2Max", "mL/min·kg")
    public static let flightsClimbed = ("HKQuantityTypeIdentifierFlightsClimbed", "count")
    public static let water = ("HKQuantityTypeIdentifierDietaryWater", "L")
}
