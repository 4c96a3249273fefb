import Foundation
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

    /// Blood pressures in time order. RHEx records carry them as two entries ("Systolic Blood
    /// Pressure", "Diastolic Blood Pressure") at the same time; a FHIR panel arrives as one entry whose
    /// value is "120/80". Both shapes give one reading per moment.
    static func pressures(_ context: AppletContext) -> [Pressure] {
        var byTime: [Int64: Pressure] = [:]
        for entry in context.current(.vitalSign) {
            guard let time = entry.content.effectiveTime else { continue }
            var reading = byTime[time.epoch] ?? Pressure(time: time)
            switch VitalKind.of(entry) {
            case .bloodPressurePanel?:
                guard let (systolic, diastolic) = panelValues(entry) else { continue }
                reading.systolic = systolic
                reading.diastolic = diastolic
            case .systolic?:
                guard let value = entry.number else { continue }
                reading.systolic = value
            case .diastolic?:
                guard let value = entry.number else { continue }
                reading.diastolic = value
            default:
                continue
            }
            reading.unit = reading.unit ?? entry.content.unit.map { ReadableUnits.quantity(0, unit: $0, codes: entry.content.codes).unit ?? $0 }
            byTime[time.epoch] = reading
        }
        return byTime.keys.sorted().map { byTime[$0]! }
    }

    /// "120/80" of a blood-pressure panel entry.
    static func panelValues(_ entry: Entry) -> (Double, Double)? {
        guard entry.content.valueNumber == nil, let text = entry.content.valueText else { return nil }
        let parts = text.split(separator: "/").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 2, let systolic = Double(parts[0]), let diastolic = Double(parts[1]) else { return nil }
        return (systolic, diastolic)
    }

    static func bloodPressure(_ context: AppletContext) -> Tile {
        let readings = pressures(context)
        guard let latest = readings.last(where: { $0.systolic != nil }) ?? readings.last else {
            return context.emptyTile("No blood pressure recorded")
        }
        let systolicNormal = latest.systolic.map(systolicRange.contains)
        let diastolicNormal = latest.diastolic.map(diastolicRange.contains)
        let status: Tile.Status
        if systolicNormal == false || diastolicNormal == false { status = .attention }
        else if systolicNormal == true && diastolicNormal == true { status = .normal }
        else { status = .unknown }
        let earlier = readings.filter { $0.time.epoch < latest.time.epoch }.suffix(context.configuredCount("history", default: 3)).reversed()
        let lines = ["normal \(TileFormat.range(systolicRange))/\(TileFormat.range(diastolicRange))"]
            + earlier.map { "\($0.time.dayText)  \($0.text)" }
        return context.tile(status: status, value: latest.text, unit: latest.unit ?? "mm[Hg]", lines: lines, updated: latest.time.text)
    }

    // MARK: Single readings

    /// Numeric readings of the patient's current entries of `types` that `matches` selects, in time
    /// order, in the units people read (`ReadableUnits`: Apple Health's 0.97 % is 97 %, its BMI `count` kg/m²).
    static func readings(_ context: AppletContext, types: [EntryType], _ matches: (Entry) -> Bool) -> [Reading] {
        context.entries
            .filter { types.contains($0.content.type) && !$0.user.deleted && matches($0) }
            .compactMap { entry in
                guard let value = entry.number, let time = entry.content.effectiveTime else { return nil }
                let shown = ReadableUnits.quantity(value, unit: entry.content.unit, codes: entry.content.codes, description: entry.content.description)
                return Reading(value: shown.value, unit: shown.unit, time: time)
            }
            .sorted { $0.time.epoch < $1.time.epoch }
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

    static func bmi(_ context: AppletContext) -> Tile {
        let readings = readings(context, types: [.vitalSign]) { VitalKind.of($0) == .bmi }
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

    static func oxygenSaturation(_ context: AppletContext) -> Tile {
        // Apple Health records saturation as a fraction (0.97) with unit "%": `readings` shows it as 97 %,
        // as every other view does. A saturation of at most 1 in any other unit (or none) is a fraction too.
        let readings = readings(context, types: [.vitalSign, .result, .observation]) { VitalKind.of($0) == .oxygenSaturation }.map { r in
            r.value > 0 && r.value <= 1 ? Reading(value: ReadableUnits.rounded(r.value * 100), unit: "%", time: r.time) : r
        }
        return rangeTile(context, readings, normal: oxygenSaturationRange, unit: "%")
    }

    static func respiratoryRate(_ context: AppletContext) -> Tile {
        let readings = readings(context, types: [.vitalSign]) { VitalKind.of($0) == .respiratoryRate }
        return rangeTile(context, readings, normal: respiratoryRateRange, unit: "/min")
    }

    /// By description first (records' codes are sometimes copied from a neighbour), then by LOINC code.
    static func isTotalCholesterol(_ entry: Entry) -> Bool {
        let d = entry.loweredDescription
        if ["hdl", "ldl", "high density", "low density", "ratio", "triglycer", "lipoprotein"].contains(where: { d.contains($0) }) { return false }
        return d.contains("cholesterol") || entry.hasCode("LOINC", in: totalCholesterolLOINC)
    }

    static func totalCholesterol(_ context: AppletContext) -> Tile {
        // hReader took every result as cholesterol; only total cholesterol counts here.
        let readings = readings(context, types: [.result, .vitalSign, .observation], isTotalCholesterol)
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
        let lowered = entry.loweredDescription
        let squeezed = String(String.UnicodeScalarView(lowered.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }))
        let words = Set(lowered.split { !$0.isLetter && !$0.isNumber }.map(String.init))
        let namesPressure = squeezed.contains("bloodpressure") || words.contains("bp")
        // A panel first: LOINC 55284-4 reads "Blood pressure systolic and diastolic".
        if namesPressure || entry.hasCode("LOINC", in: VitalSignApplets.bloodPressurePanelLOINC), VitalSignApplets.panelValues(entry) != nil {
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
        if entry.hasCode("LOINC", in: V.systolicLOINC) || entry.hasCode("SNOMED-CT", in: V.systolicSNOMED) { return .systolic }
        if entry.hasCode("LOINC", in: V.diastolicLOINC) || entry.hasCode("SNOMED-CT", in: V.diastolicSNOMED) { return .diastolic }
        if entry.hasCode("LOINC", in: V.bmiLOINC) { return .bmi }
        if entry.hasCode("LOINC", in: V.oxygenSaturationLOINC) { return .oxygenSaturation }
        if entry.hasCode("LOINC", in: V.respiratoryRateLOINC) { return .respiratoryRate }
        return nil
    }
}
