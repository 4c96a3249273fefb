/// The export's internal DTD, as the Health app writes it (HealthKit Export Version 13). Its
/// `#REQUIRED`/`#IMPLIED` attribute declarations are what trips up some XML parsers.
let healthDTD: StaticString = """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE HealthData [
    <!-- HealthKit Export Version: 13 -->
    <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram|VisionPrescription)*)>
    <!ATTLIST HealthData
      locale CDATA #REQUIRED
    >
    <!ELEMENT ExportDate EMPTY>
    <!ATTLIST ExportDate
      value CDATA #REQUIRED
    >
    <!ELEMENT Me EMPTY>
    <!ATTLIST Me
      HKCharacteristicTypeIdentifierDateOfBirth                   CDATA #REQUIRED
      HKCharacteristicTypeIdentifierBiologicalSex                 CDATA #REQUIRED
      HKCharacteristicTypeIdentifierBloodType                     CDATA #REQUIRED
      HKCharacteristicTypeIdentifierFitzpatrickSkinType           CDATA #REQUIRED
      HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse   CDATA #IMPLIED
    >
    <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
    <!ATTLIST Record
      type          CDATA #REQUIRED
      unit          CDATA #IMPLIED
      value         CDATA #IMPLIED
      sourceName    CDATA #REQUIRED
      sourceVersion CDATA #IMPLIED
      device        CDATA #IMPLIED
      creationDate  CDATA #IMPLIED
      startDate     CDATA #REQUIRED
      endDate       CDATA #REQUIRED
    >
    <!-- Note: Any Records that appear as children of a correlation also appear as top-level records in this document. -->
    <!ELEMENT Correlation ((MetadataEntry|Record)*)>
    <!ATTLIST Correlation
      type          CDATA #REQUIRED
      sourceName    CDATA #REQUIRED
      sourceVersion CDATA #IMPLIED
      device        CDATA #IMPLIED
      creationDate  CDATA #IMPLIED
      startDate     CDATA #REQUIRED
      endDate       CDATA #REQUIRED
    >
    <!ELEMENT Workout ((MetadataEntry|WorkoutEvent|WorkoutRoute|WorkoutStatistics)*)>
    <!ATTLIST Workout
      workoutActivityType   CDATA #REQUIRED
      duration              CDATA #IMPLIED
      durationUnit          CDATA #IMPLIED
      totalDistance         CDATA #IMPLIED
      totalDistanceUnit     CDATA #IMPLIED
      totalEnergyBurned     CDATA #IMPLIED
      totalEnergyBurnedUnit CDATA #IMPLIED
      sourceName            CDATA #REQUIRED
      sourceVersion         CDATA #IMPLIED
      device                CDATA #IMPLIED
      creationDate          CDATA #IMPLIED
      startDate             CDATA #REQUIRED
      endDate               CDATA #REQUIRED
    >
    <!ELEMENT WorkoutEvent (MetadataEntry*)>
    <!ATTLIST WorkoutEvent
      type         CDATA #REQUIRED
      date         CDATA #REQUIRED
      duration     CDATA #IMPLIED
      durationUnit CDATA #IMPLIED
    >
    <!ELEMENT WorkoutStatistics EMPTY>
    <!ATTLIST WorkoutStatistics
      type      CDATA #REQUIRED
      startDate CDATA #REQUIRED
      endDate   CDATA #REQUIRED
      average   CDATA #IMPLIED
      minimum   CDATA #IMPLIED
      maximum   CDATA #IMPLIED
      sum       CDATA #IMPLIED
      unit      CDATA #IMPLIED
    >
    <!ELEMENT WorkoutRoute ((MetadataEntry|FileReference)*)>
    <!ATTLIST WorkoutRoute
      sourceName    CDATA #REQUIRED
      sourceVersion CDATA #IMPLIED
      device        CDATA #IMPLIED
      creationDate  CDATA #IMPLIED
      startDate     CDATA #REQUIRED
      endDate       CDATA #REQUIRED
    >
    <!ELEMENT FileReference EMPTY>
    <!ATTLIST FileReference
      path CDATA #REQUIRED
    >
    <!ELEMENT ActivitySummary EMPTY>
    <!ATTLIST ActivitySummary
      dateComponents           CDATA #IMPLIED
      activeEnergyBurned       CDATA #IMPLIED
      activeEnergyBurnedGoal   CDATA #IMPLIED
      activeEnergyBurnedUnit   CDATA #IMPLIED
      appleMoveTime            CDATA #IMPLIED
      appleMoveTimeGoal        CDATA #IMPLIED
      appleExerciseTime        CDATA #IMPLIED
      appleExerciseTimeGoal    CDATA #IMPLIED
      appleStandHours          CDATA #IMPLIED
      appleStandHoursGoal      CDATA #IMPLIED
    >
    <!ELEMENT MetadataEntry EMPTY>
    <!ATTLIST MetadataEntry
      key   CDATA #REQUIRED
      value CDATA #REQUIRED
    >
    <!ELEMENT ClinicalRecord EMPTY>
    <!ATTLIST ClinicalRecord
      type              CDATA #REQUIRED
      identifier        CDATA #REQUIRED
      sourceName        CDATA #REQUIRED
      sourceURL         CDATA #REQUIRED
      fhirVersion       CDATA #REQUIRED
      receivedDate      CDATA #REQUIRED
      resourceFilePath  CDATA #REQUIRED
    >
    <!ELEMENT HeartRateVariabilityMetadataList (InstantaneousBeatsPerMinute*)>
    <!ELEMENT InstantaneousBeatsPerMinute EMPTY>
    <!ATTLIST InstantaneousBeatsPerMinute
      bpm  CDATA #REQUIRED
      time CDATA #REQUIRED
    >
    <!ELEMENT Audiogram ((MetadataEntry|SensitivityPoint)*)>
    <!ATTLIST Audiogram
      type          CDATA #REQUIRED
      sourceName    CDATA #REQUIRED
      sourceVersion CDATA #IMPLIED
      device        CDATA #IMPLIED
      creationDate  CDATA #IMPLIED
      startDate     CDATA #REQUIRED
      endDate       CDATA #REQUIRED
    >
    <!ELEMENT SensitivityPoint EMPTY>
    <!ATTLIST SensitivityPoint
      frequencyValue   CDATA #REQUIRED
      frequencyUnit    CDATA #REQUIRED
      leftEarValue     CDATA #IMPLIED
      leftEarUnit      CDATA #IMPLIED
      rightEarValue    CDATA #IMPLIED
      rightEarUnit     CDATA #IMPLIED
    >
    <!ELEMENT VisionPrescription ((RightEye|LeftEye|Attachment|MetadataEntry)*)>
    <!ATTLIST VisionPrescription
      type             CDATA #REQUIRED
      dateIssued       CDATA #REQUIRED
      expirationDate   CDATA #IMPLIED
      brand            CDATA #IMPLIED
    >
    <!ELEMENT RightEye EMPTY>
    <!ATTLIST RightEye
      sphere           CDATA #IMPLIED
      sphereUnit       CDATA #IMPLIED
      cylinder         CDATA #IMPLIED
      cylinderUnit     CDATA #IMPLIED
      axis             CDATA #IMPLIED
      axisUnit         CDATA #IMPLIED
      add              CDATA #IMPLIED
      addUnit          CDATA #IMPLIED
    >
    <!ELEMENT LeftEye EMPTY>
    <!ATTLIST LeftEye
      sphere           CDATA #IMPLIED
      sphereUnit       CDATA #IMPLIED
      cylinder         CDATA #IMPLIED
      cylinderUnit     CDATA #IMPLIED
      axis             CDATA #IMPLIED
      axisUnit         CDATA #IMPLIED
      add              CDATA #IMPLIED
      addUnit          CDATA #IMPLIED
    >
    <!ELEMENT Attachment EMPTY>
    <!ATTLIST Attachment
      identifier       CDATA #IMPLIED
    >
    ]>

    """

/// The invented owner of the data.
struct Me {
    let birthDate: String
    let sex: String
    let bloodType: String
    let skinType: String

    init(seed: UInt64) {
        var random = SampleRandom(seed: seed, stream: Stream.me, index: 0)
        let year = random.int(1955...2000)
        let month = random.int(1...12)
        let day = random.int(1...28)
        birthDate = "\(year)-\(pad(month, 2))-\(pad(day, 2))"
        sex = random.percent(50) ? "HKBiologicalSexFemale" : "HKBiologicalSexMale"
        bloodType = ["HKBloodTypeAPositive", "HKBloodTypeANegative", "HKBloodTypeBPositive", "HKBloodTypeOPositive",
                     "HKBloodTypeONegative", "HKBloodTypeABPositive", "HKBloodTypeNotSet"][random.below(7)]
        skinType = ["HKFitzpatrickSkinTypeI", "HKFitzpatrickSkinTypeII", "HKFitzpatrickSkinTypeIII",
                    "HKFitzpatrickSkinTypeIV", "HKFitzpatrickSkinTypeNotSet"][random.below(5)]
    }
}

extension Synth {
    func writeHeader(into out: inout ByteSink) {
        out.raw(healthDTD)
        out.raw("<HealthData locale=\"en_US\">\n <ExportDate value=\"")
        out.healthDate(clock.exportEpoch, clock)
        out.raw("\"/>\n")
        let me = Me(seed: seed)
        out.raw(" <Me HKCharacteristicTypeIdentifierDateOfBirth=\"")
        out.escaped(me.birthDate)
        out.raw("\" HKCharacteristicTypeIdentifierBiologicalSex=\"")
        out.escaped(me.sex)
        out.raw("\" HKCharacteristicTypeIdentifierBloodType=\"")
        out.escaped(me.bloodType)
        out.raw("\" HKCharacteristicTypeIdentifierFitzpatrickSkinType=\"")
        out.escaped(me.skinType)
        out.raw("\" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse=\"None\"/>\n")
    }

    func writeActivitySummary(day: Int, into out: inout ByteSink) {
        var random = SampleRandom(seed: seed, stream: Stream.summary, index: day)
        // The move goal was raised halfway through the period.
        let goal = day < plan.days / 2 ? 500 : 550
        out.raw(" <ActivitySummary dateComponents=\"")
        out.calendarDate(clock.date(ofDay: day))
        out.raw("\" activeEnergyBurned=\"")
        out.decimal(random.int(120_000...900_000), places: 3)
        out.raw("\" activeEnergyBurnedGoal=\"")
        out.int(goal)
        out.raw("\" activeEnergyBurnedUnit=\"kcal\" appleMoveTime=\"0\" appleMoveTimeGoal=\"0\" appleExerciseTime=\"")
        out.int(random.int(0...95))
        out.raw("\" appleExerciseTimeGoal=\"30\" appleStandHours=\"")
        out.int(random.int(4...16))
        out.raw("\" appleStandHoursGoal=\"12\"/>\n")
    }
}

/// Produces export.xml piece by piece, one element at a time, so the document is never held in
/// memory: the caller pulls chunks of any size (a file writer, or the zip entry's provider).
struct ExportXMLStream {
    private enum Phase {
        case header
        case records(type: Int, index: Int)
        case correlations(Int)
        case workouts(Int)
        case summaries(Int)
        case clinical(Int)
        case footer
        case done
    }

    let synth: Synth
    private var phase = Phase.header
    private(set) var bytesProduced: Int64 = 0

    init(synth: Synth) { self.synth = synth }

    var isFinished: Bool {
        if case .done = phase { return true }
        return false
    }

    /// Appends whole elements to `out` until it holds at least `target` bytes or the document ends.
    mutating func fill(_ out: inout ByteSink, target: Int) {
        let plan = synth.plan
        let before = out.count
        defer { bytesProduced += Int64(out.count - before) }
        while out.count < target {
            switch phase {
            case .header:
                synth.writeHeader(into: &out)
                phase = .records(type: 0, index: 0)
            case .records(let type, let index):
                if type >= plan.counts.count {
                    phase = .correlations(0)
                } else if index >= plan.counts[type] {
                    phase = .records(type: type + 1, index: 0)
                } else {
                    // A run of records of one type per step keeps the switch overhead down.
                    let last = min(plan.counts[type], index + 64)
                    for current in index..<last {
                        synth.writeRecord(synth.record(type: type, index: current), indent: 1, into: &out)
                    }
                    phase = .records(type: type, index: last)
                }
            case .correlations(let index):
                if index >= plan.bloodPressureReadings {
                    phase = .workouts(0)
                } else {
                    synth.writeBloodPressureCorrelation(reading: index, into: &out)
                    phase = .correlations(index + 1)
                }
            case .workouts(let index):
                if index >= plan.workouts {
                    phase = .summaries(0)
                } else {
                    synth.writeWorkout(synth.workout(index), into: &out)
                    phase = .workouts(index + 1)
                }
            case .summaries(let day):
                if day >= plan.days {
                    phase = .clinical(0)
                } else {
                    synth.writeActivitySummary(day: day, into: &out)
                    phase = .summaries(day + 1)
                }
            case .clinical(let index):
                if index >= plan.clinical {
                    phase = .footer
                } else {
                    synth.writeClinicalRecord(synth.clinical(index), into: &out)
                    phase = .clinical(index + 1)
                }
            case .footer:
                out.raw("</HealthData>\n")
                phase = .done
            case .done:
                return
            }
        }
    }
}
