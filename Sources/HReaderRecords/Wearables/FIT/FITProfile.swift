/// The parts of the FIT profile hreader reads: base types, and the message and field numbers of the
/// messages it maps (docs/wearables.md lists them). Everything else in a file is counted, not read.
public enum FITProfile {
    public enum BaseType {
        /// Bytes per value of base type `base` (its low five bits), nil for one hreader does not know.
        public static func width(_ base: UInt8) -> Int? {
            switch base {
            case 0x00, 0x01, 0x02, 0x07, 0x0A, 0x0D: 1
            case 0x03, 0x04, 0x0B: 2
            case 0x05, 0x06, 0x08, 0x0C: 4
            case 0x09, 0x0E, 0x0F, 0x10: 8
            default: nil
            }
        }

        /// The value of `raw` (the field's bytes as an unsigned number), nil when it is the type's
        /// invalid value.
        public static func value(_ raw: UInt64, base: UInt8) -> Double? {
            switch base {
            case 0x00, 0x02, 0x0D: return raw == 0xFF ? nil : Double(raw)                            // enum, uint8, byte
            case 0x01: return raw == 0x7F ? nil : Double(Int8(truncatingIfNeeded: raw))              // sint8
            case 0x0A, 0x0B, 0x0C, 0x10: return raw == 0 ? nil : Double(raw)                         // uint8z … uint64z
            case 0x03: return raw == 0x7FFF ? nil : Double(Int16(truncatingIfNeeded: raw))           // sint16
            case 0x04: return raw == 0xFFFF ? nil : Double(raw)                                      // uint16
            case 0x05: return raw == 0x7FFF_FFFF ? nil : Double(Int32(truncatingIfNeeded: raw))      // sint32
            case 0x06: return raw == 0xFFFF_FFFF ? nil : Double(raw)                                 // uint32
            case 0x08:                                                                                // float32
                guard raw != 0xFFFF_FFFF else { return nil }
                let value = Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw)))
                return value.isFinite ? value : nil
            case 0x09:                                                                                // float64
                guard raw != UInt64.max else { return nil }
                let value = Double(bitPattern: raw)
                return value.isFinite ? value : nil
            case 0x0E: return raw == 0x7FFF_FFFF_FFFF_FFFF ? nil : Double(Int64(bitPattern: raw))    // sint64
            case 0x0F: return raw == UInt64.max ? nil : Double(raw)                                  // uint64
            default: return nil
            }
        }
    }

    /// Global message numbers.
    public enum Message {
        public static let fileID: UInt16 = 0
        public static let session: UInt16 = 18
        public static let lap: UInt16 = 19
        public static let record: UInt16 = 20
        public static let event: UInt16 = 21
        public static let deviceInfo: UInt16 = 23
        public static let activity: UInt16 = 34
        public static let monitoring: UInt16 = 55
        public static let hrv: UInt16 = 78
        public static let monitoringInfo: UInt16 = 103
        public static let timestampCorrelation: UInt16 = 162
        public static let sleepLevel: UInt16 = 275

        /// Names for the summary's count of messages read but not mapped.
        public static let names: [UInt16: String] = [
            0: "file_id", 1: "capabilities", 2: "device_settings", 3: "user_profile", 7: "zones_target", 12: "sport",
            18: "session", 19: "lap", 20: "record", 21: "event", 22: "source", 23: "device_info", 26: "workout", 27: "workout_step",
            34: "activity", 35: "software", 49: "file_creator", 55: "monitoring", 72: "training_file", 78: "hrv",
            101: "length", 103: "monitoring_info", 104: "battery", 140: "physiological_metrics", 141: "epo_status",
            142: "segment_lap", 147: "sensor_settings", 162: "timestamp_correlation", 206: "field_description",
            207: "developer_data_id", 211: "monitoring_hr_data", 216: "time_in_zone", 227: "stress_level", 233: "split",
            275: "sleep_level", 297: "respiration_rate", 346: "sleep_assessment", 370: "hrv_status_summary", 371: "hrv_value",
        ]

        public static func name(_ number: UInt16) -> String { names[number] ?? "message \(number)" }
    }

    /// Fields every message may carry.
    public static let timestamp: UInt8 = 253

    public enum FileID {
        public static let type: UInt8 = 0, manufacturer: UInt8 = 1, product: UInt8 = 2, serialNumber: UInt8 = 3, timeCreated: UInt8 = 4, productName: UInt8 = 8
    }

    public enum DeviceInfo {
        public static let deviceIndex: UInt8 = 0, manufacturer: UInt8 = 2, serialNumber: UInt8 = 3, product: UInt8 = 4
        public static let softwareVersion: UInt8 = 5, productName: UInt8 = 27
    }

    public enum Record {
        public static let positionLatitude: UInt8 = 0, positionLongitude: UInt8 = 1
        public static let altitude: UInt8 = 2, heartRate: UInt8 = 3, cadence: UInt8 = 4, distance: UInt8 = 5, speed: UInt8 = 6
        public static let power: UInt8 = 7, enhancedSpeed: UInt8 = 73, enhancedAltitude: UInt8 = 78
    }

    /// Positions are semicircles: 2^31 of them make 180 degrees.
    public static let degreesPerSemicircle = 180.0 / 2_147_483_648.0

    public enum Session {
        // lap uses the same numbers for these
        public static let startTime: UInt8 = 2, sport: UInt8 = 5, subSport: UInt8 = 6, totalElapsedTime: UInt8 = 7, totalTimerTime: UInt8 = 8
        public static let totalDistance: UInt8 = 9, totalCalories: UInt8 = 11, avgSpeed: UInt8 = 14, maxSpeed: UInt8 = 15
        public static let avgHeartRate: UInt8 = 16, maxHeartRate: UInt8 = 17, avgCadence: UInt8 = 18, maxCadence: UInt8 = 19
        public static let avgPower: UInt8 = 20, maxPower: UInt8 = 21, totalAscent: UInt8 = 22, totalDescent: UInt8 = 23
        public static let enhancedAvgSpeed: UInt8 = 124, enhancedMaxSpeed: UInt8 = 125
    }

    public enum Lap {
        public static let sport: UInt8 = 25
    }

    public enum Activity {
        public static let localTimestamp: UInt8 = 5
    }

    public enum MonitoringInfo {
        public static let localTimestamp: UInt8 = 0
    }

    public enum TimestampCorrelation {
        public static let localTimestamp: UInt8 = 3
    }

    public enum Monitoring {
        public static let calories: UInt8 = 1, distance: UInt8 = 2, cycles: UInt8 = 3, activeTime: UInt8 = 4, activityType: UInt8 = 5
        public static let activeCalories: UInt8 = 19, timestamp16: UInt8 = 26, heartRate: UInt8 = 27
    }

    public enum HRV {
        public static let time: UInt8 = 0
    }

    public enum SleepLevel {
        public static let level: UInt8 = 0
    }

    /// `sport` values, as words.
    public static func sport(_ value: Int) -> String {
        let names = [0: "Generic", 1: "Running", 2: "Cycling", 3: "Transition", 4: "Fitness equipment", 5: "Swimming", 6: "Basketball",
                     7: "Soccer", 8: "Tennis", 9: "American football", 10: "Training", 11: "Walking", 12: "Cross-country skiing",
                     13: "Alpine skiing", 14: "Snowboarding", 15: "Rowing", 16: "Mountaineering", 17: "Hiking", 18: "Multisport",
                     19: "Paddling", 20: "Flying", 21: "E-biking", 22: "Motorcycling", 23: "Boating", 24: "Driving", 25: "Golf",
                     26: "Hang gliding", 27: "Horseback riding", 28: "Hunting", 29: "Fishing", 30: "Inline skating",
                     31: "Rock climbing", 32: "Sailing", 33: "Ice skating", 34: "Sky diving", 35: "Snowshoeing",
                     36: "Snowmobiling", 37: "Stand-up paddleboarding", 38: "Surfing", 39: "Wakeboarding", 40: "Water skiing",
                     41: "Kayaking", 42: "Rafting", 43: "Windsurfing", 44: "Kitesurfing", 45: "Tactical", 46: "Jumpmaster",
                     47: "Boxing", 48: "Floor climbing", 53: "Diving"]
        return names[value] ?? "Other"
    }

    /// Garmin's manufacturer number, the one name hreader gives a manufacturer without a product name.
    public static func manufacturer(_ value: Int) -> String {
        switch value {
        case 1: "Garmin"
        case 23: "Suunto"
        case 32: "Wahoo Fitness"
        case 255: "Development"
        case 260: "Zwift"
        case 265: "Strava"
        case 294: "Coros"
        default: "Manufacturer \(value)"
        }
    }
}
