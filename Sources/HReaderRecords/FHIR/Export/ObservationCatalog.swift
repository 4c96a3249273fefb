import Foundation

/// What `hreader export` knows about the codes and units it sends: LOINC display names, the
/// Observation category a code belongs to, its UCUM unit, and which codes are summed by `--group`.
/// The tables are data (tab-separated text below), so a row is added without touching code.
///
/// ```swift
/// let heartRate = ObservationCatalog.standard.code("8867-4")   // display "Heart rate", unit /min
/// let unit = ObservationCatalog.standard.unit("count/min")     // UCUM "/min"
/// ```
package struct ObservationCatalog: Sendable {
    /// One LOINC code.
    package struct Code: Sendable, Equatable {
        package var loinc: String
        package var display: String
        /// An `observation-category` code: vital-signs, activity, laboratory.
        package var category: String
        /// The UCUM unit of the code's values (used when HealthKit records a bare `count`).
        package var ucum: String?
        /// The code's samples may be added up per hour or day (`--group`).
        package var summable: Bool
    }

    /// One unit as a source writes it, and what FHIR gets.
    package struct Unit: Sendable, Equatable {
        /// The UCUM code (`system` http://unitsofmeasure.org).
        package var ucum: String
        /// `Quantity.unit`, the human-readable form.
        package var display: String
        /// The value is multiplied by this (kJ stay kJ; only HealthKit's fractions of `%` scale, see below).
        package var factor: Double
    }

    // LOINC code, display (LOINC's long common name), category, UCUM unit, "sum" when --group adds it up.
    package static let codeTable = """
        8867-4\tHeart rate\tvital-signs\t/min\t
        40443-4\tHeart rate --resting\tvital-signs\t/min\t
        80404-7\tR-R interval.standard deviation (Heart rate variability)\tvital-signs\tms\t
        8480-6\tSystolic blood pressure\tvital-signs\tmm[Hg]\t
        8462-4\tDiastolic blood pressure\tvital-signs\tmm[Hg]\t
        85354-9\tBlood pressure panel with all children optional\tvital-signs\tmm[Hg]\t
        9279-1\tRespiratory rate\tvital-signs\t/min\t
        2708-6\tOxygen saturation in Arterial blood\tvital-signs\t%\t
        59408-5\tOxygen saturation in Arterial blood by Pulse oximetry\tvital-signs\t%\t
        8310-5\tBody temperature\tvital-signs\tCel\t
        29463-7\tBody weight\tvital-signs\tkg\t
        8302-2\tBody height\tvital-signs\tcm\t
        39156-5\tBody mass index (BMI) [Ratio]\tvital-signs\tkg/m2\t
        41653-7\tGlucose [Mass/volume] in Capillary blood by Glucometer\tlaboratory\tmg/dL\t
        2339-0\tGlucose [Mass/volume] in Blood\tlaboratory\tmg/dL\t
        55423-8\tNumber of steps in unspecified time Pedometer\tactivity\t{steps}\tsum
        55430-3\tWalking distance unspecified time Pedometer\tactivity\tm\tsum
        55411-3\tExercise duration\tactivity\tmin\tsum
        41981-2\tCalories burned\tactivity\tkcal\tsum
        9052-2\tCalorie intake total\tactivity\tkcal\tsum
        """

    // Unit as recorded (HealthKit's spelling, or already UCUM), UCUM code, display, factor.
    // HealthKit's `count` is missing on purpose: what it counts depends on the code (see `quantity`).
    package static let unitTable = """
        count/min\t/min\t/min\t1
        /min\t/min\t/min\t1
        beats/min\t/min\t/min\t1
        bpm\t/min\t/min\t1
        breaths/min\t/min\t/min\t1
        mmHg\tmm[Hg]\tmm[Hg]\t1
        mm[Hg]\tmm[Hg]\tmm[Hg]\t1
        degC\tCel\tCel\t1
        Cel\tCel\tCel\t1
        °C\tCel\tCel\t1
        degF\t[degF]\t°F\t1
        [degF]\t[degF]\t°F\t1
        kg\tkg\tkg\t1
        g\tg\tg\t1
        lb\t[lb_av]\tlb\t1
        [lb_av]\t[lb_av]\tlb\t1
        cm\tcm\tcm\t1
        m\tm\tm\t1
        km\tkm\tkm\t1
        in\t[in_i]\tin\t1
        [in_i]\t[in_i]\tin\t1
        ft\t[ft_i]\tft\t1
        mi\t[mi_i]\tmi\t1
        %\t%\t%\t1
        mg/dL\tmg/dL\tmg/dL\t1
        mmol/L\tmmol/L\tmmol/L\t1
        kcal\tkcal\tkcal\t1
        Cal\tkcal\tkcal\t1
        kJ\tkJ\tkJ\t1
        ms\tms\tms\t1
        s\ts\ts\t1
        min\tmin\tmin\t1
        h\th\th\t1
        hr\th\th\t1
        kg/m2\tkg/m2\tkg/m2\t1
        kg/m^2\tkg/m2\tkg/m2\t1
        {steps}\t{steps}\tsteps\t1
        steps\t{steps}\tsteps\t1
        """

    package static let standard = ObservationCatalog(codes: codeTable, units: unitTable)

    private let codes: [String: Code]
    private let units: [String: Unit]

    package init(codes codeText: String, units unitText: String) {
        var codes: [String: Code] = [:]
        for fields in Self.rows(codeText) where fields.count >= 3 {
            let ucum = fields.count > 3 && !fields[3].isEmpty ? fields[3] : nil
            codes[fields[0]] = Code(loinc: fields[0], display: fields[1], category: fields[2], ucum: ucum,
                                    summable: fields.count > 4 && fields[4] == "sum")
        }
        var units: [String: Unit] = [:]
        for fields in Self.rows(unitText) where fields.count == 4 {
            units[fields[0]] = Unit(ucum: fields[1], display: fields[2], factor: Double(fields[3]) ?? 1)
        }
        self.codes = codes
        self.units = units
    }

    private static func rows(_ text: String) -> [[String]] {
        text.split(separator: "\n").map { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        }.filter { !($0.first ?? "").isEmpty }
    }

    package func code(_ loinc: String) -> Code? { codes[loinc] }
    package func unit(_ recorded: String) -> Unit? { units[recorded] }

    /// How many `to` one `from` is, between UCUM units of one kind: what a sum converts a reading by
    /// when one source writes kilometres and another metres of the same day. Nil when the two are of
    /// different kinds or not known here. Exact by definition (the international mile and foot, the
    /// thermochemical calorie of UCUM's `kcal`).
    ///
    /// ```swift
    /// ObservationCatalog.factor(from: "km", to: "m")   // 1000
    /// ObservationCatalog.factor(from: "kJ", to: "kcal") // 1 / 4.184
    /// ```
    package static func factor(from: String, to: String) -> Double? {
        if from == to { return 1 }
        guard let a = sameKind[from], let b = sameKind[to], a.kind == b.kind else { return nil }
        return a.size / b.size
    }

    /// Each unit's kind and its size in that kind's base unit (metre, joule, second).
    private static let sameKind: [String: (kind: String, size: Double)] = [
        "m": ("length", 1), "km": ("length", 1000), "cm": ("length", 0.01),
        "[mi_i]": ("length", 1609.344), "[ft_i]": ("length", 0.3048), "[in_i]": ("length", 0.0254),
        "kcal": ("energy", 4184), "kJ": ("energy", 1000),
        "s": ("time", 1), "min": ("time", 60), "h": ("time", 3600),
    ]

    /// The display of a UCUM unit as the unit table gives it (`[mi_i]` → "mi"), else the code itself.
    package func display(ofUCUM ucum: String) -> String {
        units.values.first { $0.ucum == ucum }?.display ?? ucum
    }

    /// The blood-pressure panels, sent with systolic and diastolic components.
    package static let bloodPressurePanels: Set<String> = ["85354-9", "55284-4", "35094-2"]
    package static let systolic = "8480-6"
    package static let diastolic = "8462-4"
    package static let steps = "55423-8"
}
