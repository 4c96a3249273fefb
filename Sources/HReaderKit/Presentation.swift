import Foundation
import HReaderStore

/// The JSON shapes of patients and entries, shared by `--json` output and (later) the web API.
extension Patient {
    public var jsonObject: [String: Any] {
        var o: [String: Any] = ["id": id, "uuid": uuid, "first_name": firstName, "last_name": lastName,
                                "relationship": relationship.rawValue, "display_order": displayOrder,
                                "created": created, "updated": updated]
        if let gender { o["gender"] = gender }
        if let birthDate { o["birth_date"] = birthDate }
        if let race { o["race"] = race }
        if let ethnicity { o["ethnicity"] = ethnicity }
        return o
    }

    /// Age in whole years at `date`, when the birth date is known.
    public func age(at date: Date = Date()) -> Int? {
        guard let birthDate, let born = ClinicalTime.parse(birthDate) else { return nil }
        return Calendar(identifier: .gregorian).dateComponents([.year], from: born.date, to: date).year
    }
}

extension Entry {
    public var jsonObject: [String: Any] {
        let c = content
        var o: [String: Any] = ["id": id, "uuid": uuid, "patient_id": patientID, "source_id": sourceID, "remote_id": remoteID,
                                "type": c.type.rawValue,
                                "description": c.description, "codes": c.codes, "struck": user.deleted,
                                "created": created, "updated": updated]
        if let status = c.status { o["status"] = status }
        if let date = c.date { o["date"] = date.text }
        if let start = c.start { o["start"] = start.text }
        if let end = c.end { o["end"] = end.text }
        if let v = c.valueNumber { o["value"] = v } else if let t = c.valueText { o["value"] = t }
        if let unit = c.unit { o["unit"] = unit }
        if let dose = c.dose { o["dose"] = dose }
        if let reaction = c.reaction { o["reaction"] = reaction }
        if let severity = c.severity { o["severity"] = severity }
        if let comments = user.comments { o["comments"] = comments }
        if let missing = missingAtSource { o["missing_at_source"] = missing }
        var patientComments: [String: String] = [:]
        if let q = user.patientQuantity { patientComments["quantity"] = q }
        if let d = user.patientDose { patientComments["dose"] = d }
        if let d = user.patientDirections { patientComments["directions"] = d }
        if let p = user.patientPrescriber { patientComments["prescriber"] = p }
        if !patientComments.isEmpty { o["patient_comments"] = patientComments }
        return o
    }

    /// The value with its unit as a person reads it ("120 mm[Hg]", "99 %" for Apple Health's 0.99,
    /// "positive"); numbers go through `ReadableUnits`, text is shown as recorded.
    public var displayValue: String? {
        ReadableUnits.text(number: content.valueNumber, text: content.valueText, unit: content.unit, codes: content.codes,
                           description: content.description)
    }

    /// The numeric value in the units people read (nil for text values).
    public var readableQuantity: ReadableQuantity? { ReadableUnits.quantity(of: content) }
}
