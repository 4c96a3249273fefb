/// The CDC Race & Ethnicity code set's top-level (OMB) categories, used by hData records and by the
/// US Core race and ethnicity extensions, for sources that send a code without its name.
enum RaceAndEthnicity {
    static let names: [String: String] = [
        "1002-5": "American Indian or Alaska Native",
        "2028-9": "Asian",
        "2054-5": "Black or African American",
        "2076-8": "Native Hawaiian or Other Pacific Islander",
        "2106-3": "White",
        "2131-1": "Other Race",
        "2135-2": "Hispanic or Latino",
        "2186-5": "Not Hispanic or Latino",
    ]

    static func name(forCode code: String) -> String? { names[code] }
}
