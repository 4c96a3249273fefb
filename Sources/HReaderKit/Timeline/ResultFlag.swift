/// A lab's interpretation flag in words, as people read a result: HL7's ObservationInterpretation
/// codes (v3, and the v2 table 0078 spellings FHIR and C-CDA carry) as "low", "critically low",
/// "normal"; the code stays beside them in the detail. A code no table knows is shown as it is.
///
///     ResultFlag.words("LL")   // "critically low"
public enum ResultFlag {
    public static func words(_ code: String) -> String {
        names[code] ?? names[code.uppercased()] ?? code
    }

    static let names: [String: String] = [
        "N": "normal", "L": "low", "H": "high", "LL": "critically low", "HH": "critically high",
        "LU": "significantly low", "HU": "significantly high", "LX": "below the low threshold", "HX": "above the high threshold",
        "<": "below the measurable range", ">": "above the measurable range", "A": "abnormal", "AA": "critically abnormal",
        "U": "significantly up", "D": "significantly down", "B": "better", "W": "worse",
        "POS": "positive", "NEG": "negative", "DET": "detected", "ND": "not detected", "IND": "indeterminate", "E": "equivocal",
        "R": "resistant", "S": "susceptible", "I": "intermediate", "NS": "not susceptible", "SDD": "susceptible, dose-dependent",
        "RR": "reactive", "NR": "not reactive", "WR": "weakly reactive", "EX": "outside the threshold", "EXP": "expected",
        "UNE": "unexpected", "CAR": "carrier", "IE": "insufficient evidence", "OBX": "interpretation in the observation",
    ]
}
