/// Where the invented samples come from. Names and device strings are escaped once, up front.
struct Source: Sendable {
    let name: [UInt8]
    let version: [UInt8]
    /// Escaped `<<HKDevice: 0x` … `>, name:…>` around a per-sample object address, as real exports show.
    let devicePrefix: [UInt8]
    let deviceSuffix: [UInt8]
    let hasDevice: Bool

    init(name: String, version: String, deviceDescription: String?) {
        self.name = ByteSink.escape(name)
        self.version = ByteSink.escape(version)
        devicePrefix = ByteSink.escape("<<HKDevice: 0x")
        deviceSuffix = ByteSink.escape(">, " + (deviceDescription ?? "") + ">")
        hasDevice = deviceDescription != nil
    }

    static let watch = 0, iPhone = 1, zoe = 2, smartDevices = 3

    static let all: [Source] = [
        Source(name: "Generator Watch", version: "10.1",
               deviceDescription: "name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.1"),
        Source(name: "Generator iPhone", version: "17.1.2",
               deviceDescription: "name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone15,2, software:17.1.2"),
        Source(name: "Zoë’s iPhone", version: "17.1.2", deviceDescription: nil),
        Source(name: "Generator Health & \"Smart\" Devices", version: "3.2.0",
               deviceDescription: "name:Smart Scale <GS-2>, manufacturer:Generator Health & Co., model:GS-2, hardware:2, software:3.2.0"),
    ]
}

/// One `<Record>`: everything needed to write it, computed from (seed, type, index) alone.
struct RecordSample {
    var type: Int
    var source: Int
    var deviceAddress: UInt64 = 0
    var creation: Int64 = 0
    var start: Int64 = 0
    var end: Int64 = 0
    /// Quantity value as `value / 10^places`; for category types, the index into `categoryValue`.
    var value = 0
    var places = 0
    var category: [UInt8]?
    var motionContext = -1
    var userEntered = false
    var mealTime = -1
    var scaleLink = false
    /// Seeds the beat-to-beat list of an HRV sample (0: none).
    var beatsSeed: UInt64 = 0
}

enum CategoryValue {
    static let severities: [[UInt8]] = [
        "HKCategoryValueSeverityNotPresent", "HKCategoryValueSeverityMild",
        "HKCategoryValueSeverityModerate", "HKCategoryValueSeveritySevere",
    ].map { Array($0.utf8) }
    static let inBed = Array("HKCategoryValueSleepAnalysisInBed".utf8)
    static let core = Array("HKCategoryValueSleepAnalysisAsleepCore".utf8)
    static let deep = Array("HKCategoryValueSleepAnalysisAsleepDeep".utf8)
    static let rem = Array("HKCategoryValueSleepAnalysisAsleepREM".utf8)
    static let awake = Array("HKCategoryValueSleepAnalysisAwake".utf8)
    static let notApplicable = Array("HKCategoryValueNotApplicable".utf8)
}

/// The generator's world: seed, plan, clock. Every element is a pure function of its index.
struct Synth: Sendable {
    let seed: UInt64
    let plan: Plan
    let clock: HealthClock
    let systolicIndex = Catalog.index(of: .systolic)
    let diastolicIndex = Catalog.index(of: .diastolic)

    init(seed: UInt64, plan: Plan) {
        self.seed = seed
        self.plan = plan
        clock = HealthClock(days: plan.days)
    }

    /// Spreads `count` items over the days, `window` seconds of each local day: item `index` gets
    /// its day and its own slot of that day's window (so samples of a type come out in time order).
    func slot(index: Int, count: Int, window: (start: Int, end: Int)) -> Slot {
        let days = plan.days
        // Items are spread by shares of days: one share a day before the watch era, `eraWeight`
        // from it on. The first item of day d is the first whose place reaches d's cumulative share.
        let total = shares(before: days)
        func first(_ d: Int) -> Int { (shares(before: d) * count + total - 1) / total }
        let share = index * total / count
        var day = share <= watchEra ? share : watchEra + (share - watchEra) / Self.eraWeight
        day = min(max(day, 0), days - 1)
        while day + 1 < days, first(day + 1) <= index { day += 1 }
        while day > 0, first(day) > index { day -= 1 }
        let firstOfDay = first(day)
        let perDay = max(1, first(day + 1) - firstOfDay)
        let width = window.end - window.start
        let offset = (index - firstOfDay) * width / perDay
        let windowStart = clock.localMidnight(ofDay: day) + Int64(window.start)
        return Slot(day: day, start: windowStart + Int64(offset), length: width / perDay,
                    position: index - firstOfDay, perDay: perDay, windowStart: windowStart, windowLength: width)
    }

    /// The day the watch era starts: real exports hold a phone's few samples a day for their first
    /// years and a watch's many after (a decade of them is dense late, not evenly thin): the first
    /// 40% of the days, then `eraWeight` times as many items a day.
    var watchEra: Int { plan.days * 2 / 5 }
    static let eraWeight = 3

    /// The shares of the days before day `d`.
    func shares(before d: Int) -> Int { d <= watchEra ? d : watchEra + (d - watchEra) * Self.eraWeight }

    struct Slot {
        let day: Int
        let start: Int64
        let length: Int
        /// This item's place among the `perDay` items of its day, and that day's whole window.
        let position: Int
        let perDay: Int
        let windowStart: Int64
        let windowLength: Int
    }

    // MARK: Records

    func record(type typeIndex: Int, index: Int) -> RecordSample {
        let type = Catalog.types[typeIndex]
        let isPressure = type.kind == .systolic || type.kind == .diastolic
        // Both halves of a blood-pressure reading share one random stream.
        var random = isPressure
            ? SampleRandom(seed: seed, stream: Stream.bloodPressure, index: index)
            : SampleRandom(seed: seed, stream: Stream.recordBase + UInt64(typeIndex), index: index)
        let count = isPressure ? plan.bloodPressureReadings : plan.counts[typeIndex]
        let slot = slot(index: index, count: count, window: type.window)
        var sample = RecordSample(type: typeIndex, source: Source.watch)

        /// Places the sample inside its slot; `duration` is shortened to fit.
        func place(duration wanted: Int) {
            let duration = max(0, min(wanted, slot.length - 1))
            let start = slot.start + Int64(random.below(slot.length - duration))
            sample.start = start
            sample.end = start + Int64(duration)
        }
        func automatic(_ source: Int) {
            sample.source = source
            sample.creation = sample.end + Int64(random.int(5...900))
        }
        /// With `--phone-overlap`: an iPhone sample that also covers the slot before its own, where
        /// the watch may have counted the same walk (no random draw, so every other sample stays).
        func overlapping() {
            guard plan.phoneOverlap > 0, sample.source == Source.iPhone, index % 100 < plan.phoneOverlap else { return }
            sample.start = max(slot.windowStart, sample.start - Int64(slot.length))
        }
        func manual() {
            sample.source = Source.zoe
            sample.userEntered = true
            sample.creation = sample.end + Int64(random.int(0...7200))
        }
        func measured(_ value: Int, places: Int) {
            sample.value = value
            sample.places = places
        }
        func symptom() {
            place(duration: random.int(1800...6 * 3600))
            manual()
            sample.userEntered = random.percent(30)
            sample.category = CategoryValue.severities[random.below(4)]
        }

        switch type.kind {
        case .stepCount:
            place(duration: random.int(60...600))
            automatic(random.percent(60) ? Source.watch : Source.iPhone)
            overlapping()
            measured(max(1, Int(sample.end - sample.start) * random.int(20...110) / 60), places: 0)
        case .distance:
            place(duration: random.int(60...600))
            automatic(random.percent(60) ? Source.watch : Source.iPhone)
            overlapping()
            measured(max(1, Int(sample.end - sample.start)) * random.int(15...140), places: 5)
        case .activeEnergy:
            place(duration: random.int(60...300))
            automatic(Source.watch)
            measured(random.int(150...15_000), places: 3)
        case .exerciseTime:
            place(duration: 60)
            automatic(Source.watch)
            measured(1, places: 0)
        case .flights:
            place(duration: random.int(20...120))
            automatic(Source.iPhone)
            measured(random.int(1...4), places: 0)
        case .heartRate:
            place(duration: 0)
            automatic(Source.watch)
            let hour = clock.local(sample.start).hour
            if hour < 6 {
                measured(random.int(48...66), places: 0)
            } else if random.percent(8) {
                measured(random.int(110...168), places: 0)
            } else {
                measured(random.int(58...104), places: 0)
            }
            if random.percent(70) {
                sample.motionContext = sample.value >= 110 ? 2 : random.int(0...1)
            }
        case .restingHeartRate:
            place(duration: slot.length * 9 / 10)
            automatic(Source.watch)
            measured(random.int(52...68), places: 0)
        case .heartRateVariability:
            place(duration: random.int(55...65))
            automatic(Source.watch)
            measured(random.int(18_000...95_000), places: 3)
            if random.percent(60) { sample.beatsSeed = random.next() | 1 }
        case .respiratoryRate:
            place(duration: random.int(0...180))
            automatic(Source.watch)
            measured(random.int(24...40) * 5, places: 1)
        case .oxygenSaturation:
            place(duration: 0)
            automatic(Source.watch)
            measured(random.int(92...100), places: 2)
        case .bodyMass:
            place(duration: 0)
            if random.percent(50) {
                automatic(Source.smartDevices)
                sample.scaleLink = true
            } else {
                manual()
            }
            // A slow drift over the year plus day-to-day noise.
            measured(735 - slot.day * 40 / max(1, plan.days) + random.int(-6...6), places: 1)
        case .bodyMassIndex:
            place(duration: 0)
            automatic(Source.smartDevices)
            sample.scaleLink = true
            measured(random.int(228_000...252_000), places: 4)
        case .height:
            place(duration: 0)
            manual()
            measured(1_680 + random.int(-2...2), places: 1)
        case .bodyTemperature:
            place(duration: 0)
            manual()
            measured(random.int(361...374), places: 1)
        case .bloodGlucose:
            place(duration: 0)
            manual()
            measured(random.int(72...158), places: 0)
            if random.percent(60) { sample.mealTime = random.int(1...2) }
        case .dietaryEnergy:
            place(duration: 0)
            manual()
            measured(random.int(1_200...9_000), places: 1)
        case .systolic, .diastolic:
            place(duration: 0)
            if random.percent(50) { manual() } else { automatic(Source.smartDevices) }
            let systolic = random.int(104...146)
            let diastolic = random.int(62...min(96, systolic - 30))
            measured(type.kind == .systolic ? systolic : diastolic, places: 0)
        case .underwaterDepth:
            place(duration: random.int(10...90))
            automatic(Source.watch)
            measured(random.int(30...1_800), places: 2)
        case .sleep:
            automatic(Source.watch)
            if slot.perDay == 1 {
                // A lone sample that night: in bed all night, or one stage of it.
                if random.percent(30) {
                    sample.start = slot.windowStart + Int64(random.int(0...1800))
                    sample.end = slot.windowStart + Int64(slot.windowLength - random.int(0...1800))
                    sample.category = CategoryValue.inBed
                } else {
                    place(duration: random.int(600...5400))
                    sample.category = sleepStage(&random)
                }
            } else if slot.position == 0 {
                // "In bed" spans the night; the night's other samples are consecutive stages within it.
                sample.start = slot.windowStart
                sample.end = slot.windowStart + Int64(slot.windowLength)
                sample.category = CategoryValue.inBed
            } else {
                let stages = slot.perDay - 1
                let length = slot.windowLength / stages
                sample.start = slot.windowStart + Int64((slot.position - 1) * slot.windowLength / stages)
                sample.end = sample.start + Int64(length)
                sample.category = sleepStage(&random)
            }
            sample.creation = sample.end + Int64(random.int(5...900))
        case .mindful:
            place(duration: random.int(60...900))
            automatic(random.percent(50) ? Source.watch : Source.iPhone)
            sample.category = CategoryValue.notApplicable
        case .headache, .fatigue, .nausea, .coughing:
            symptom()
        }
        if Source.all[sample.source].hasDevice {
            sample.deviceAddress = 0x2_8000_0000 | (random.next() & 0x7_FFFF_FFF0)
        }
        // Nothing is created after the export.
        sample.creation = min(sample.creation, clock.exportEpoch - 60)
        return sample
    }

    private func sleepStage(_ random: inout SampleRandom) -> [UInt8] {
        let roll = random.below(100)
        return roll < 50 ? CategoryValue.core : roll < 65 ? CategoryValue.deep : roll < 85 ? CategoryValue.rem : CategoryValue.awake
    }

    // MARK: XML

    func writeRecord(_ sample: RecordSample, indent: Int, into out: inout ByteSink) {
        let type = Catalog.types[sample.type]
        let source = Source.all[sample.source]
        writeIndent(indent, into: &out)
        out.raw("<Record type=\"")
        out.raw(EncodedCatalog.identifiers[sample.type])
        writeSourceAttributes(source, deviceAddress: sample.deviceAddress, into: &out)
        if let unit = type.unit {
            out.raw(" unit=\"")
            out.escaped(unit)
            out.byte(UInt8(ascii: "\""))
        }
        out.raw(" creationDate=\"")
        out.healthDate(sample.creation, clock)
        out.raw("\" startDate=\"")
        out.healthDate(sample.start, clock)
        out.raw("\" endDate=\"")
        out.healthDate(sample.end, clock)
        out.raw("\" value=\"")
        if let category = sample.category {
            out.raw(category)
        } else {
            out.decimal(sample.value, places: sample.places)
        }
        out.byte(UInt8(ascii: "\""))

        let hasChildren = sample.userEntered || sample.motionContext >= 0 || sample.mealTime >= 0
            || sample.scaleLink || sample.beatsSeed != 0
        guard hasChildren else {
            out.raw("/>\n")
            return
        }
        out.raw(">\n")
        if sample.userEntered { writeMetadata("HKWasUserEntered", "1", indent: indent + 1, into: &out) }
        if sample.motionContext >= 0 {
            writeIndent(indent + 1, into: &out)
            out.raw("<MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"")
            out.int(sample.motionContext)
            out.raw("\"/>\n")
        }
        if sample.mealTime >= 0 {
            writeIndent(indent + 1, into: &out)
            out.raw("<MetadataEntry key=\"HKMetadataKeyBloodGlucoseMealTime\" value=\"")
            out.int(sample.mealTime)
            out.raw("\"/>\n")
        }
        if sample.scaleLink {
            writeIndent(indent + 1, into: &out)
            out.raw("<MetadataEntry key=\"Generator Link\" value=\"generator-health://measure?user=42&amp;date=")
            out.int(Int(sample.start))
            out.raw("&amp;type=1\"/>\n")
        }
        if sample.beatsSeed != 0 {
            writeBeats(sample, indent: indent + 1, into: &out)
        }
        writeIndent(indent, into: &out)
        out.raw("</Record>\n")
    }

    /// The beat-to-beat list Apple Watch attaches to HRV samples (`time` is a locale-formatted clock time).
    private func writeBeats(_ sample: RecordSample, indent: Int, into out: inout ByteSink) {
        var random = SampleRandom(seed: sample.beatsSeed, stream: 0, index: 0)
        writeIndent(indent, into: &out)
        out.raw("<HeartRateVariabilityMetadataList>\n")
        let start = clock.local(sample.start)
        var centiseconds = (start.hour * 3600 + start.minute * 60 + start.second) * 100 + random.int(0...99)
        for _ in 0..<random.int(5...9) {
            let bpm = random.int(54...82)
            centiseconds += 6000 / bpm + random.int(-4...4)
            writeIndent(indent + 1, into: &out)
            out.raw("<InstantaneousBeatsPerMinute bpm=\"")
            out.int(bpm)
            out.raw("\" time=\"")
            let seconds = centiseconds / 100 % 86400
            let hour = seconds / 3600
            out.int(hour % 12 == 0 ? 12 : hour % 12)
            out.byte(UInt8(ascii: ":"))
            out.padded(seconds / 60 % 60, width: 2)
            out.byte(UInt8(ascii: ":"))
            out.padded(seconds % 60, width: 2)
            out.byte(UInt8(ascii: "."))
            out.padded(centiseconds % 100, width: 2)
            out.raw(hour < 12 ? " AM\"/>\n" : " PM\"/>\n")
        }
        writeIndent(indent, into: &out)
        out.raw("</HeartRateVariabilityMetadataList>\n")
    }

    /// ` sourceName=".." sourceVersion=".." device=".."` after an opening `type="..` value.
    func writeSourceAttributes(_ source: Source, deviceAddress: UInt64, into out: inout ByteSink) {
        out.raw("\" sourceName=\"")
        out.raw(source.name)
        out.raw("\" sourceVersion=\"")
        out.raw(source.version)
        out.byte(UInt8(ascii: "\""))
        if source.hasDevice && deviceAddress != 0 {
            out.raw(" device=\"")
            out.raw(source.devicePrefix)
            out.hex(deviceAddress)
            out.raw(source.deviceSuffix)
            out.byte(UInt8(ascii: "\""))
        }
    }

    func writeMetadata(_ key: StaticString, _ value: StaticString, indent: Int, into out: inout ByteSink) {
        writeIndent(indent, into: &out)
        out.raw("<MetadataEntry key=\"")
        out.raw(key)
        out.raw("\" value=\"")
        out.raw(value)
        out.raw("\"/>\n")
    }

    func writeMetadata(_ key: String, value: String, indent: Int, into out: inout ByteSink) {
        writeIndent(indent, into: &out)
        out.raw("<MetadataEntry key=\"")
        out.escaped(key)
        out.raw("\" value=\"")
        out.escaped(value)
        out.raw("\"/>\n")
    }

    /// Real exports indent one space per level.
    func writeIndent(_ level: Int, into out: inout ByteSink) {
        for _ in 0..<level { out.byte(UInt8(ascii: " ")) }
    }

    /// A blood-pressure correlation: the reading's two records again, identical, inside it.
    func writeBloodPressureCorrelation(reading: Int, into out: inout ByteSink) {
        let systolic = record(type: systolicIndex, index: reading)
        let diastolic = record(type: diastolicIndex, index: reading)
        let source = Source.all[systolic.source]
        out.raw(" <Correlation type=\"HKCorrelationTypeIdentifierBloodPressure")
        writeSourceAttributes(source, deviceAddress: systolic.deviceAddress, into: &out)
        out.raw(" creationDate=\"")
        out.healthDate(systolic.creation, clock)
        out.raw("\" startDate=\"")
        out.healthDate(systolic.start, clock)
        out.raw("\" endDate=\"")
        out.healthDate(systolic.end, clock)
        out.raw("\">\n")
        if systolic.userEntered { writeMetadata("HKWasUserEntered", "1", indent: 2, into: &out) }
        writeRecord(diastolic, indent: 2, into: &out)
        writeRecord(systolic, indent: 2, into: &out)
        out.raw(" </Correlation>\n")
    }
}

/// The catalog's identifiers as bytes, encoded once.
enum EncodedCatalog {
    static let identifiers: [[UInt8]] = Catalog.types.map { Array($0.identifier.utf8) }
}
