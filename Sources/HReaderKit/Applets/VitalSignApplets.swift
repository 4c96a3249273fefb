import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// One measured number at a time, from one entry.
struct Reading {
    let value: Double
    let unit: String?
    let time: ClinicalTime
}

/// hReader's vital-sign tiles: the latest reading, whether it is in the normal range, and the readings
/// before it. As in hReader, readings are found by description ("contains", case-insensitive); codes
/// (LOINC, SNOMED CT) find them too, for records whose descriptions differ.
enum VitalSignApplets {
    // MARK: Rules (hReader's)

    static let systolicRange: ClosedRange<Double> = 90...120
    static let diastolicRange: ClosedRange<Double> = 60...80
    /// Adults only (20 and over); hReader used CDC BMI-for-age percentiles for children.
    static let adultBMIRange: ClosedRange<Double> = 18.5...25
    static let bmiAdultAge = 20
    static let oxygenSaturationRange: ClosedRange<Double> = 95...100
    static let respiratoryRateRange: ClosedRange<Double> = 12...20
    /// Total cholesterol in mg/dL by age (HRTotalCholesterolAppletTile): under 21, and 21 and over.
    static let youngCholesterolRange: ClosedRange<Double> = 75...169
    static let adultCholesterolRange: ClosedRange<Double> = 100...199
    static let cholesterolAdultAge = 21
    /// mg/dL per mmol/L of cholesterol.
    static let cholesterolMilligramsPerMillimole = 38.67

    // MARK: Codes

    static let systolicLOINC: Set<String> = ["8480-6"]
    static let systolicSNOMED: Set<String> = ["271649006"]
    static let diastolicLOINC: Set<String> = ["8462-4"]
    static let diastolicSNOMED: Set<String> = ["271650006"]
    static let bloodPressurePanelLOINC: Set<String> = ["85354-9", "55284-4", "35094-2"]
    static let bmiLOINC: Set<String> = ["39156-5"]
    static let oxygenSaturationLOINC: Set<String> = ["2708-6", "59408-5", "59417-6"]
    static let respiratoryRateLOINC: Set<String> = ["9279-1"]
    static let totalCholesterolLOINC: Set<String> = ["2093-3", "14647-2", "35200-5"]

    // MARK: Blood pressure

    struct Pressure {
        var systolic: Double?
        var diastolic: Double?
        var unit: String?
        let time: ClinicalTime

        var text: String {
            func side(_ v: Double?) -> String { v.map { String(format: "%.0f", $0) } ?? "?" }
            return "\(side(systolic))/\(side(diastolic))"
        }
    }

    /// The newest blood pressure with a systolic reading (else the newest), and the `history` readings
    /// before it, newest first. RHEx records (and hReader) carry a reading as two entries ("Systolic
    /// Blood Pressure", "Diastolic Blood Pressure") at the same time; a FHIR panel arrives as one entry
    /// whose value is "120/80". Both give one reading per moment. Read newest first, a moment at a
    /// time, from the kinds that may be blood pressure: a few entries, however long the record.
    static func pressures(_ context: AppletContext, history: Int) throws -> (latest: Pressure, earlier: [Pressure])? {
        let wanted: Set<VitalKind> = [.systolic, .diastolic, .bloodPressurePanel]
        var newest: [Pressure] = []       // while no moment has a systolic reading: the newest history + 1
        var latest: Pressure?
        var earlier: [Pressure] = []
        var moment: [Entry] = []          // the entries of one moment, newest (highest id) first
        /// Adds a finished moment; false when nothing older is needed.
        func finish() -> Bool {
            defer { moment.removeAll() }
            guard let pressure = pressure(of: Array(moment.reversed())) else { return true }
            if latest != nil {
                earlier.append(pressure)
            } else if pressure.systolic != nil {
                latest = pressure
            } else if newest.count <= history {
                newest.append(pressure)
            }
            return latest == nil || earlier.count < history
        }
        try context.record.forEachNewest(patientID: context.patient.id, types: [.vitalSign],
                                         kinds: { !VitalKind.possible($0).isDisjoint(with: wanted) }) { entry in
            guard let time = entry.content.effectiveTime else { return true }
            if let first = moment.first, first.content.effectiveTime!.epoch != time.epoch, !finish() { return false }
            moment.append(entry)
            return true
        }
        if !moment.isEmpty { _ = finish() }
        if let latest { return (latest, earlier) }
        guard let first = newest.first else { return nil }
        return (first, Array(newest.dropFirst()))
    }

    /// One moment's blood pressure from its entries in (time, id) order, a later entry's reading
    /// replacing an earlier one's; nil when none of them is a reading.
    static func pressure(of entries: [Entry]) -> Pressure? {
        var reading: Pressure?
        for entry in entries {
            guard let time = entry.content.effectiveTime else { continue }
            var next = reading ?? Pressure(time: time)
            switch VitalKind.of(entry) {
            case .bloodPressurePanel?:
                guard let (systolic, diastolic) = panelValues(entry) else { continue }
                next.systolic = systolic
                next.diastolic = diastolic
            case .systolic?:
                guard let value = entry.number else { continue }
                next.systolic = value
            case .diastolic?:
                guard let value = entry.number else { continue }
                next.diastolic = value
            default:
                continue
            }
            next.unit = next.unit ?? entry.content.unit.map { ReadableUnits.quantity(0, unit: $0, codes: entry.content.codes).unit ?? $0 }
            reading = next
        }
        return reading
    }

    /// "120/80" of a blood-pressure panel entry.
    static func panelValues(_ entry: Entry) -> (Double, Double)? {
        guard entry.content.valueNumber == nil, let text = entry.content.valueText else { return nil }
        let parts = text.split(separator: "/").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let systolic = Double(parts[0]), let diastolic = Double(parts[1]) else { return nil }
        return (systolic, diastolic)
    }

    static func bloodPressure(_ context: AppletContext) throws -> Tile {
        let history = context.configuredCount("history", default: 3)
        guard let (latest, earlier) = try pressures(context, history: history) else {
            return context.emptyTile("No blood pressure recorded")
        }
        let systolicNormal = latest.systolic.map(systolicRange.contains)
        let diastolicNormal = latest.diastolic.map(diastolicRange.contains)
        let status: Tile.Status
        if systolicNormal == false || diastolicNormal == false { status = .attention }
        else if systolicNormal == true && diastolicNormal == true { status = .normal }
        else { status = .unknown }
        let lines = ["normal \(TileFormat.range(systolicRange))/\(TileFormat.range(diastolicRange))"]
            + earlier.map { "\($0.time.dayText)  \($0.text)" }
        return context.tile(status: status, value: latest.text, unit: latest.unit ?? "mm[Hg]", lines: lines, updated: latest.time.text)
    }

    // MARK: Single readings

    /// The newest numeric readings (the latest and the `history` before it) of the patient's current
    /// entries of `types` that `matches` selects, from the kinds it may select (`kinds`), in time
    /// order, in the units people read (`ReadableUnits`: Apple Health's 0.97 % is 97 %, its BMI
    /// `count` kg/m²).
    static func readings(_ context: AppletContext, types: [EntryType], kinds: @escaping (EntryRepository.Kind) -> Bool,
                         _ matches: (Entry) -> Bool) throws -> [Reading] {
        let wanted = context.configuredCount("history", default: 3) + 1
        var found: [Reading] = []
        try context.record.forEachNewest(patientID: context.patient.id, types: types, kinds: kinds) { entry in
            guard matches(entry), let value = entry.number, let time = entry.content.effectiveTime else { return true }
            let shown = ReadableUnits.quantity(value, unit: entry.content.unit, codes: entry.content.codes, description: entry.content.description)
            found.append(Reading(value: shown.value, unit: shown.unit, time: time))
            return found.count < wanted
        }
        return found.reversed()
    }

    /// `readings` of one vital sign.
    static func readings(_ context: AppletContext, types: [EntryType], of kind: VitalKind) throws -> [Reading] {
        try readings(context, types: types, kinds: { VitalKind.possible($0).contains(kind) }) { VitalKind.of($0) == kind }
    }

    /// The latest reading against `normal` (nil: no rule applies, and `why` says so).
    static func rangeTile(_ context: AppletContext, _ readings: [Reading], normal: ClosedRange<Double>?, why: String? = nil,
                          unit defaultUnit: String?, format: (Double) -> String = TileFormat.number,
                          judged: (Reading) -> Double = { $0.value }) -> Tile {
        guard let latest = readings.last else { return context.emptyTile("No \(context.declaration.displayName.lowercased()) recorded") }
        let status: Tile.Status = normal.map { $0.contains(judged(latest)) ? .normal : .attention } ?? .unknown
        let unit = latest.unit ?? defaultUnit
        var lines: [String] = []
        if let normal { lines.append("normal \(TileFormat.range(normal))\(unit.map { " \($0)" } ?? "")") }
        if let why { lines.append(why) }
        let earlier = readings.dropLast().suffix(context.configuredCount("history", default: 3)).reversed()
        lines += earlier.map { "\($0.time.dayText)  \(format($0.value))\($0.unit.map { " \($0)" } ?? "")" }
        return context.tile(status: status, value: format(latest.value), unit: unit, lines: lines, updated: latest.time.text)
    }

    static func bmi(_ context: AppletContext) throws -> Tile {
        let readings = try readings(context, types: [.vitalSign], of: .bmi)
        guard let latest = readings.last else { return context.emptyTile("No BMI recorded") }
        // The adult range applies from age 20 at the time of the reading; for children hReader looked up
        // CDC BMI-for-age percentiles, which hreader does not ship: their tile shows the value, unjudged.
        switch context.ageInYears(at: latest.time.date) {
        case nil:
            return rangeTile(context, readings, normal: nil, why: "birth date unknown: the adult range \(TileFormat.range(adultBMIRange)) applies from age \(bmiAdultAge)",
                             unit: bmiUnit, format: TileFormat.oneDecimal)
        case let age? where age < bmiAdultAge:
            return rangeTile(context, readings, normal: nil, why: "age \(age): under \(bmiAdultAge), BMI is judged by BMI-for-age percentile, not the adult range",
                             unit: bmiUnit, format: TileFormat.oneDecimal)
        default:
            return rangeTile(context, readings, normal: adultBMIRange, unit: bmiUnit, format: TileFormat.oneDecimal)
        }
    }

    static var bmiUnit: String { ReadableUnits.display("kg/m2") }

    static func oxygenSaturation(_ context: AppletContext) throws -> Tile {
        // Apple Health records saturation as a fraction (0.97) with unit "%": `readings` shows it as 97 %,
        // as every other view does. A saturation of at most 1 in any other unit (or none) is a fraction too.
        let readings = try readings(context, types: [.vitalSign, .result, .observation], of: .oxygenSaturation).map { r in
            r.value > 0 && r.value <= 1 ? Reading(value: ReadableUnits.rounded(r.value * 100), unit: "%", time: r.time) : r
        }
        return rangeTile(context, readings, normal: oxygenSaturationRange, unit: "%")
    }

    static func respiratoryRate(_ context: AppletContext) throws -> Tile {
        let readings = try readings(context, types: [.vitalSign], of: .respiratoryRate)
        return rangeTile(context, readings, normal: respiratoryRateRange, unit: "/min")
    }

    /// By description first (records' codes are sometimes copied from a neighbour), then by LOINC code:
    /// what every entry of a kind shares.
    static func isTotalCholesterol(_ kind: EntryRepository.Kind) -> Bool {
        let d = kind.loweredDescription
        if ["hdl", "ldl", "high density", "low density", "ratio", "triglycer", "lipoprotein"].contains(where: { d.contains($0) }) { return false }
        return d.contains("cholesterol") || kind.hasCode("LOINC", in: totalCholesterolLOINC)
    }

    static func totalCholesterol(_ context: AppletContext) throws -> Tile {
        // hReader took every result as cholesterol; only total cholesterol counts here.
        let readings = try readings(context, types: [.result, .vitalSign, .observation], kinds: isTotalCholesterol) { _ in true }
        guard let latest = readings.last else { return context.emptyTile("No total cholesterol recorded") }
        func milligrams(_ r: Reading) -> Double {
            (r.unit?.lowercased().contains("mmol") ?? false) ? r.value * cholesterolMilligramsPerMillimole : r.value
        }
        // The band is chosen by the age at the reading (hReader computed an age that was never right).
        guard let age = context.ageInYears(at: latest.time.date) else {
            return rangeTile(context, readings, normal: nil, why: "birth date unknown: the normal range depends on age (\(TileFormat.range(youngCholesterolRange)) under \(cholesterolAdultAge), \(TileFormat.range(adultCholesterolRange)) from \(cholesterolAdultAge))",
                             unit: "mg/dL")
        }
        let normal = age < cholesterolAdultAge ? youngCholesterolRange : adultCholesterolRange
        var tile = rangeTile(context, readings, normal: normal, unit: "mg/dL", judged: milligrams)
        if !tile.lines.isEmpty { tile.lines[0] += age < cholesterolAdultAge ? " (under \(cholesterolAdultAge))" : " (age \(cholesterolAdultAge) and over)" }
        return tile
    }
}

/// Which of the tiles' vital signs an entry is. The description decides, as in hReader ("contains",
/// case-insensitive; spaces ignored so HealthKit names match too); codes decide only when the
/// description names no vital sign at all, because records copy codes between neighbouring entries
/// (hReader's samples code oxygen saturation and respiration as systolic pressure).
enum VitalKind: Equatable {
    case systolic, diastolic, bloodPressurePanel, bmi, oxygenSaturation, respiratoryRate

    static func of(_ entry: Entry) -> VitalKind? {
        of(description: entry.content.description, codes: entry.content.codes, panel: VitalSignApplets.panelValues(entry) != nil)
    }

    /// What the entries of a kind may be: one that names blood pressure is a panel when its value
    /// reads "120/80" and nothing otherwise, so both are possible until an entry is read.
    static func possible(_ kind: EntryRepository.Kind) -> Set<VitalKind> {
        Set([true, false].compactMap { of(description: kind.description, codes: kind.codes, panel: $0) })
    }

    /// `panel`: the value reads as a blood-pressure panel's ("120/80").
    static func of(description: String, codes: [String: [String]], panel: Bool) -> VitalKind? {
        let lowered = description.lowercased()
        let squeezed = String(String.UnicodeScalarView(lowered.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }))
        let words = Set(lowered.split { !$0.isLetter && !$0.isNumber }.map(String.init))
        let namesPressure = squeezed.contains("bloodpressure") || words.contains("bp")
        func hasCode(_ system: String, in set: Set<String>) -> Bool { CodeMatch.has(codes, system, in: set) }
        // A panel first: LOINC 55284-4 reads "Blood pressure systolic and diastolic".
        if namesPressure || hasCode("LOINC", in: VitalSignApplets.bloodPressurePanelLOINC), panel {
            return .bloodPressurePanel
        }
        if squeezed.contains("systolic") { return .systolic }
        if squeezed.contains("diastolic") { return .diastolic }
        if namesPressure { return nil }
        if words.contains("bmi") || squeezed.contains("bodymassindex") { return .bmi }
        if squeezed.contains("oxygensaturation") || squeezed.contains("spo2") || words.contains("sao2") { return .oxygenSaturation }
        if squeezed.contains("respiration") || squeezed.contains("respiratoryrate") { return .respiratoryRate }
        let otherVitals = ["heart", "pulse", "weight", "height", "temperature", "glucose", "pain", "circumference", "length"]
        if otherVitals.contains(where: { squeezed.contains($0) }) { return nil }
        typealias V = VitalSignApplets
        if hasCode("LOINC", in: V.systolicLOINC) || hasCode("SNOMED-CT", in: V.systolicSNOMED) { return .systolic }
        if hasCode("LOINC", in: V.diastolicLOINC) || hasCode("SNOMED-CT", in: V.diastolicSNOMED) { return .diastolic }
        if hasCode("LOINC", in: V.bmiLOINC) { return .bmi }
        if hasCode("LOINC", in: V.oxygenSaturationLOINC) { return .oxygenSaturation }
        if hasCode("LOINC", in: V.respiratoryRateLOINC) { return .respiratoryRate }
        return nil
    }
}
