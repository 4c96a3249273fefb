import Foundation
import HReaderJSON
import HReaderModel

/// The JSON shapes of patients and entries, shared by `--json` output and the web API (written with
/// sorted keys by both).
extension Patient {
    public var jsonObject: JSONObject {
        var o: JSONObject = ["id": .int(id), "uuid": .string(uuid), "first_name": .string(firstName), "last_name": .string(lastName),
                             "relationship": .string(relationship.rawValue), "display_order": .int(displayOrder),
                             "created": .string(created), "updated": .string(updated)]
        if let gender { o.members.append((key: "gender", value: .string(gender))) }
        if let birthDate { o.members.append((key: "birth_date", value: .string(birthDate))) }
        if let race { o.members.append((key: "race", value: .string(race))) }
        if let ethnicity { o.members.append((key: "ethnicity", value: .string(ethnicity))) }
        return o
    }

    /// Age in whole years at `date`, when the birth date is known.
    public func age(at date: Date = Date()) -> Int? { LocalAge(birthDate: birthDate, at: date)?.years }
}

extension Entry {
    public var jsonObject: JSONObject {
        let c = content
        var o: JSONObject = ["id": .int(id), "uuid": .string(uuid), "patient_id": .int(patientID), "source_id": .int(sourceID),
                             "remote_id": .string(remoteID), "type": .string(c.type.rawValue), "description": .string(c.description),
                             "codes": .object(JSONObject(sortingKeysOf: c.codes) { .array($0.map(JSONValue.string)) }),
                             "struck": .bool(user.deleted), "created": .string(created), "updated": .string(updated)]
        func add(_ key: String, _ value: String?) { if let value { o.members.append((key: key, value: .string(value))) } }
        add("status", c.status)
        add("date", c.date?.text)
        add("start", c.start?.text)
        add("end", c.end?.text)
        if let v = c.valueNumber { o.members.append((key: "value", value: .double(v))) } else { add("value", c.valueText) }
        // Beside a number, the text says more of it (a workout's duration, and "5 km, 320 kcal, route …").
        if c.valueNumber != nil { add("value_text", c.valueText) }
        add("unit", c.unit)
        add("dose", c.dose)
        add("reaction", c.reaction)
        add("severity", c.severity)
        add("comments", user.comments)
        add("missing_at_source", missingAtSource)
        var patientComments = JSONObject()
        for (key, value) in [("quantity", user.patientQuantity), ("dose", user.patientDose), ("directions", user.patientDirections),
                             ("prescriber", user.patientPrescriber)] {
            if let value { patientComments.members.append((key: key, value: .string(value))) }
        }
        if !patientComments.isEmpty { o.members.append((key: "patient_comments", value: .object(patientComments))) }
        return o
    }
}
