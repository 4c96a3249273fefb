/// The vocabulary the synthetic patients are drawn from. Every person is invented: names are
/// combined at random from these lists. Codes are real LOINC, SNOMED CT, ICD-10-CM, RxNorm and CVX
/// codes, so clients map them as they would real data.
enum Catalog {
    static let familyNames = [
        "Quillfeather", "Marrowby", "Thistlecombe", "Ambervane", "Fenwright", "Larkmoor", "Oldacre-Vey", "Brindlecote",
        "Sorrowgate", "Penhallow-Ree", "Wickerby", "Duskwell", "Halloran-Tye", "Mossgrave", "Kestrelmont", "Vellacourt",
    ]
    static let femaleNames = ["Elowen", "Marisol", "Tamsin", "Odalys", "Briallen", "Seraphine", "Junia", "Calla", "Ysolde", "Wrenna"]
    static let maleNames = ["Corwin", "Tobiah", "Evander", "Lucan", "Osric", "Thaddeus", "Ansel", "Bramwell", "Caspian", "Idris"]

    static let loinc = "http://loinc.org"
    static let snomed = "http://snomed.info/sct"
    static let icd10 = "http://hl7.org/fhir/sid/icd-10-cm"
    static let rxnorm = "http://www.nlm.nih.gov/research/umls/rxnorm"
    static let cvx = "http://hl7.org/fhir/sid/cvx"
    static let ucum = "http://unitsofmeasure.org"

    struct Measure {
        let loinc: String
        let display: String
        let unit: String
        let ucum: String
        let range: ClosedRange<Double>
        let places: Int
    }

    static let systolic = Measure(loinc: "8480-6", display: "Systolic blood pressure", unit: "mm[Hg]", ucum: "mm[Hg]", range: 104...152, places: 0)
    static let diastolic = Measure(loinc: "8462-4", display: "Diastolic blood pressure", unit: "mm[Hg]", ucum: "mm[Hg]", range: 62...96, places: 0)
    static let heartRate = Measure(loinc: "8867-4", display: "Heart rate", unit: "beats/minute", ucum: "/min", range: 54...98, places: 0)
    static let weight = Measure(loinc: "29463-7", display: "Body weight", unit: "kg", ucum: "kg", range: 48...118, places: 1)
    static let height = Measure(loinc: "8302-2", display: "Body height", unit: "cm", ucum: "cm", range: 150...196, places: 1)
    static let bmi = Measure(loinc: "39156-5", display: "Body mass index (BMI) [Ratio]", unit: "kg/m2", ucum: "kg/m2", range: 18.5...36, places: 1)
    static let oxygen = Measure(
        loinc: "59408-5", display: "Oxygen saturation in Arterial blood by Pulse oximetry", unit: "%", ucum: "%", range: 92...100, places: 0)
    static let respiratoryRate = Measure(loinc: "9279-1", display: "Respiratory rate", unit: "breaths/minute", ucum: "/min", range: 12...20, places: 0)
    static let cholesterol = Measure(
        loinc: "2093-3", display: "Cholesterol [Mass/volume] in Serum or Plasma", unit: "mg/dL", ucum: "mg/dL", range: 142...262, places: 0)
    static let hba1c = Measure(
        loinc: "4548-4", display: "Hemoglobin A1c/Hemoglobin.total in Blood", unit: "%", ucum: "%", range: 4.8...8.9, places: 1)
    static let glucose = Measure(
        loinc: "2345-7", display: "Glucose [Mass/volume] in Serum or Plasma", unit: "mg/dL", ucum: "mg/dL", range: 68...168, places: 0)
    static let steps = Measure(
        loinc: "55423-8", display: "Number of steps in unspecified time Pedometer", unit: "steps/day", ucum: "/d", range: 1800...14500, places: 0)

    struct Problem {
        let display: String
        let snomed: String
        let icd10: String
        let icd10Display: String
    }

    static let problems = [
        Problem(display: "Essential hypertension", snomed: "59621000", icd10: "I10", icd10Display: "Essential (primary) hypertension"),
        Problem(display: "Type 2 diabetes mellitus", snomed: "44054006", icd10: "E11.9", icd10Display: "Type 2 diabetes mellitus without complications"),
        Problem(display: "Hyperlipidemia", snomed: "55822004", icd10: "E78.5", icd10Display: "Hyperlipidemia, unspecified"),
        Problem(display: "Asthma", snomed: "195967001", icd10: "J45.909", icd10Display: "Unspecified asthma, uncomplicated"),
        Problem(display: "Migraine", snomed: "37796009", icd10: "G43.909", icd10Display: "Migraine, unspecified, not intractable"),
        Problem(display: "Hypothyroidism", snomed: "40930008", icd10: "E03.9", icd10Display: "Hypothyroidism, unspecified"),
        Problem(display: "Seasonal allergic rhinitis", snomed: "367498001", icd10: "J30.2", icd10Display: "Other seasonal allergic rhinitis"),
    ]

    struct Allergen {
        let display: String
        let system: String
        let shortSystem: String  // hData's name for the code system
        let code: String
        let category: String
    }

    static let allergens = [
        Allergen(display: "Penicillin", system: rxnorm, shortSystem: "RxNorm", code: "7980", category: "medication"),
        Allergen(display: "Sulfamethoxazole", system: rxnorm, shortSystem: "RxNorm", code: "10180", category: "medication"),
        Allergen(display: "Peanut", system: snomed, shortSystem: "SNOMED-CT", code: "256349002", category: "food"),
        Allergen(display: "Latex", system: snomed, shortSystem: "SNOMED-CT", code: "111088007", category: "environment"),
    ]

    struct Coded {
        let display: String
        let code: String
    }

    static let reactions = [
        Coded(display: "Hives", code: "247472004"), Coded(display: "Rash", code: "271807003"),
        Coded(display: "Wheezing", code: "56018004"), Coded(display: "Anaphylaxis", code: "39579001"),
    ]
    /// FHIR's reaction severities and their SNOMED codes (for hData).
    static let severities = [("mild", "255604002"), ("moderate", "6736007"), ("severe", "24484000")]

    struct Drug {
        let display: String
        let rxnorm: String
        let dose: Double
        let doseUnit: String
        let instructions: String
    }

    static let drugs = [
        Drug(display: "Lisinopril 10 MG Oral Tablet", rxnorm: "314076", dose: 10, doseUnit: "mg", instructions: "Take 1 tablet by mouth once daily"),
        Drug(display: "Atorvastatin 20 MG Oral Tablet", rxnorm: "617310", dose: 20, doseUnit: "mg", instructions: "Take 1 tablet by mouth at bedtime"),
        Drug(display: "Metformin hydrochloride 500 MG Oral Tablet", rxnorm: "860975", dose: 500, doseUnit: "mg", instructions: "Take 1 tablet by mouth twice daily with meals"),
        Drug(display: "Amlodipine 5 MG Oral Tablet", rxnorm: "197361", dose: 5, doseUnit: "mg", instructions: "Take 1 tablet by mouth once daily"),
        Drug(display: "Levothyroxine Sodium 0.05 MG Oral Tablet", rxnorm: "966222", dose: 50, doseUnit: "ug", instructions: "Take 1 tablet by mouth every morning before breakfast"),
    ]

    static let vaccines = [
        Coded(display: "Influenza, seasonal, injectable, preservative free", code: "140"),
        Coded(display: "Tdap", code: "115"),
        Coded(display: "Pneumococcal polysaccharide PPV23", code: "33"),
        Coded(display: "Hepatitis B vaccine, adult dosage", code: "43"),
    ]

    static let procedures = [
        Coded(display: "Colonoscopy", code: "73761001"),
        Coded(display: "Appendectomy", code: "80146002"),
        Coded(display: "Electrocardiographic procedure", code: "29303009"),
    ]

    struct Visit {
        let display: String
        let classCode: String
        let classDisplay: String
        let snomed: String
        let cpt: String
    }

    static let visits = [
        Visit(display: "Office visit", classCode: "AMB", classDisplay: "ambulatory", snomed: "11429006", cpt: "99213"),
        Visit(display: "Check-up", classCode: "AMB", classDisplay: "ambulatory", snomed: "185349003", cpt: "99397"),
        Visit(display: "Emergency department visit", classCode: "EMER", classDisplay: "emergency", snomed: "50849002", cpt: "99284"),
    ]

    static let smokingStatuses = ["Never smoker", "Former smoker", "Current some day smoker"]
    static let smokingCodes = ["Never smoker": "266919005", "Former smoker": "8517006", "Current some day smoker": "428041000124106"]
    static let goals = ["Walk 30 minutes a day", "Lower salt intake", "Keep blood pressure under 130/80", "Sleep 7 hours a night"]
}

/// A clinical date drawn at random, written with whatever precision a resource needs.
struct SampleDate {
    let year: Int
    let month: Int
    let day: Int
    let hour: Int
    let minute: Int
    /// Minutes east of UTC.
    let offsetMinutes: Int

    static let offsets = [0, -300, -240, 60, -420]

    init(_ random: inout SeededRandom, years: ClosedRange<Int>) {
        year = random.int(years)
        month = random.int(1...12)
        day = random.int(1...28)
        hour = random.int(7...18)
        minute = random.pick([0, 10, 15, 20, 30, 40, 45, 50])
        offsetMinutes = random.pick(Self.offsets)
    }

    private init(year: Int, month: Int, day: Int, hour: Int, minute: Int, offsetMinutes: Int) {
        (self.year, self.month, self.day, self.hour, self.minute, self.offsetMinutes) = (year, month, day, hour, minute, offsetMinutes)
    }

    /// The same moment plus some minutes (kept within the day for simplicity).
    func adding(minutes: Int) -> SampleDate {
        let total = min(hour * 60 + minute + minutes, 23 * 60 + 59)
        return SampleDate(year: year, month: month, day: day, hour: total / 60, minute: total % 60, offsetMinutes: offsetMinutes)
    }

    var date: String { "\(Clock.pad(year, 4))-\(Clock.pad(month, 2))-\(Clock.pad(day, 2))" }
    var yearMonth: String { "\(Clock.pad(year, 4))-\(Clock.pad(month, 2))" }

    var dateTime: String {
        let zone: String
        if offsetMinutes == 0 {
            zone = "Z"
        } else {
            let magnitude = abs(offsetMinutes)
            zone = (offsetMinutes < 0 ? "-" : "+") + Clock.pad(magnitude / 60, 2) + ":" + Clock.pad(magnitude % 60, 2)
        }
        return "\(date)T\(Clock.pad(hour, 2)):\(Clock.pad(minute, 2)):00\(zone)"
    }

    var epochSeconds: Int {
        Clock.daysSinceEpoch(year: year, month: month, day: day) * 86_400 + (hour * 60 + minute - offsetMinutes) * 60
    }
}
