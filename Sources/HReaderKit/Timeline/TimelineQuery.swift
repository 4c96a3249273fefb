import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords
import HReaderStore

/// Builds hReader's timeline JSON (DESIGN.md §5) for one patient and range.
///
/// Shape, as hReader's `timelineJSONPayloadWithStartDate:endDate:` wrote it, with its bugs left out:
/// - `start_date`, `end_date`: epoch seconds.
/// - `allergies`, `conditions`, `encounters`, `immunizations`, `medications`, `procedures`, `results`
///   (and hreader's `symptoms`, `observations`): entries whose date, start or end is in range, by
///   date ascending, as `{id, description, date, measurement: {value, unit}}`; a key only when non-empty.
/// - `vitals`: one group per description, `{description, values, units}`; groups sorted by description,
///   blood-pressure groups last in descending order (systolic before diastolic). Always present.
/// - `timeline_medications`, `regimens`: posted items' data in time order. Always present.
/// - `levels`: posted levels merged in time order, key → values as posted. Always present.
/// - `activity`: daily totals per description (hreader's addition), a key only when non-empty.
/// - `workouts`: each activity entry with a start and a later end (a workout, an exercise session) as an
///   item of its own, with `end_date` and `details` (distance, energy, route…) beside its duration
///   (hreader's addition); it is also counted in `activity`. A key only when non-empty.
public struct TimelineQuery {
    public var range: TimelineRange
    /// Only these payload keys (nil: all).
    public var keys: Set<String>?
    /// Add each item's local entry id, codes and source.
    public var detail: Bool

    public init(range: TimelineRange, keys: Set<String>? = nil, detail: Bool = false) {
        self.range = range
        self.keys = keys
        self.detail = detail
    }

    /// Every key a payload may have, for `--types`.
    public static let allKeys: [String] = ["allergies", "conditions", "encounters", "immunizations", "medications",
                                           "procedures", "results", "symptoms", "observations", "vitals", "activity",
                                           "workouts", "timeline_medications", "regimens", "levels"]

    /// "vitals, levels" → ["vitals", "levels"]; an unknown key is a usage error naming it.
    public static func keys(parsing list: String) throws -> Set<String> {
        let keys = Set(list.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty })
        let unknown = keys.subtracting(allKeys)
        guard unknown.isEmpty else { throw HReaderError.usage("unknown timeline keys: \(unknown.sorted().joined(separator: ", "))") }
        return keys
    }

    static func key(for type: EntryType) -> String {
        switch type {
        case .allergy: return "allergies"
        case .condition: return "conditions"
        case .encounter: return "encounters"
        case .immunization: return "immunizations"
        case .medication: return "medications"
        case .procedure: return "procedures"
        case .result: return "results"
        case .symptom: return "symptoms"
        case .observation: return "observations"
        case .vitalSign: return "vitals"
        case .activity: return "activity"
        }
    }

    /// The timeline item types posted through `timeline add`, by payload key.
    static let postedTypes: [String: String] = ["timeline_medications": "medication", "regimens": "regimen", "levels": "levels"]

    func wants(_ key: String) -> Bool { keys?.contains(key) ?? true }

    /// The page as a JSON value (for `--pretty`, and callers that look inside it).
    public func run(patientID: Int64, db: Database) throws -> JSONValue {
        try payload(patientID: patientID, db: db).jsonValue
    }

    /// The page written compact, straight to `out`: the same bytes as `run(…).serialized()`,
    /// without the tree (a decade holds a million numbers).
    public func write(patientID: Int64, db: Database, to out: inout JSONByteWriter) throws {
        try payload(patientID: patientID, db: db).write(to: &out)
    }

    func payload(patientID: Int64, db: Database) throws -> TimelinePayload {
        do {
            // Every page length reads samples as numbers: a day of a watch at ten million samples
            // (1,500 vital signs) costs a tenth fewer instructions than one sorted statement of rows,
            // a sparse day about the same (docs/performance.md).
            return try payload(patientID: patientID, db: db, readings: true)
        } catch SampleReadingsPage.NeedsRows.vitalText {
            // A vital sign stored as text (a word, or "120/80" split in two): the rows say what it is.
            return try payload(patientID: patientID, db: db, readings: false)
        }
    }

    /// Each activity day's total as the web view lists it (`display`: "15744 steps", not "15744 count"):
    /// a bare `count` takes the unit of its LOINC code (`ReadableUnits`), read from the rows' codes or
    /// from one series of the description (a few descriptions a page, one lookup each).
    private func describe(_ days: inout [TimelinePayload.ActivityDay], codes known: [String: [String: [String]]],
                          series: [SampleReadings.Series], db: Database) throws {
        var codes = known
        for index in days.indices {
            let description = days[index].description
            if codes[description] == nil {
                let id = series.first { $0.type == .activity && $0.description == description }?.id
                codes[description] = try id.map { try SampleReadings(db).codes(seriesID: $0) } ?? [:]
            }
            days[index].display = ReadableUnits.quantity(days[index].total, unit: days[index].unit, codes: codes[description] ?? [:],
                                                          description: description).text
        }
    }

    /// `readings`: vital-sign and activity samples are read as numbers (`SampleReadingsPage`) rather
    /// than as rows; the same page either way (but a day's total, summed by series first: see there).
    func payload(patientID: Int64, db: Database, readings: Bool) throws -> TimelinePayload {
        let sources = detail ? Dictionary(uniqueKeysWithValues: try SourceRepository(db).all().map { ($0.id, $0) }) : [:]
        // A fact several sources state is one item (the shown copy); detail names every source.
        let facts = detail ? try EntryRepository(db).factSources(patientID: patientID) : [:]
        // Entries SMART Health Cards brought: their check, for the verified badge.
        let checks = detail ? try HealthCardRepository(db).verifications(patientID: patientID) : [:]

        // Which samples are read at all (none of a type the page leaves out), and which as numbers.
        // A list, not a dictionary: a dozen types at most, and EntryType's Hashable conformance would
        // be looked up (a scan of the binary's conformances) for this alone (docs/performance.md).
        var wanted: [(type: EntryType, wanted: Bool)] = []
        func wantsType(_ type: EntryType) -> Bool {
            if let known = wanted.first(where: { $0.type == type }) { return known.wanted }
            let answer = self.wants(Self.key(for: type))
            wanted.append((type, answer))
            return answer
        }
        let series = try SampleReadings(db).series(patientID: patientID)
        // Activity samples are always totalled by ActivityTotals, whatever the page's length: one day
        // counted once when several sources wrote it (issue 40), the same rule on every page.
        let page = SampleReadingsPage(series: series, vitals: readings && wantsType(.vitalSign), activity: wantsType(.activity))
        let skipped = Set(series.filter { !wantsType($0.type) || page.reads($0.id) }.map(\.id))

        var lists: [String: [JSONValue]] = [:]
        // Vitals keep plain numbers, grouped by description; activity its daily totals. Rows of one
        // kind come in runs, so the group of the row before is tried first, without hashing.
        var vitalGroups: [(description: String, group: TimelinePayload.Vitals)] = []
        var vitalIndex: [String: Int] = [:]
        var lastVitals = -1
        // With vitals read as numbers, the rows' vital signs wait to be merged with them by time.
        var vitalRows: [String: [SampleReadingsPage.Contribution]] = [:]
        var days = ActivityDays(zone: range.zone)
        // With detail, the codes of each activity description the rows have (a day's `display`).
        var activityCodes: [String: [String: [String]]] = [:]

        let wantsWorkouts = wants("workouts")
        var workouts: [JSONValue] = []
        try EntryRepository(db).forEachTimelineRow(patientID: patientID, from: range.start, to: range.end, withCodes: detail,
                                                   series: skipped.isEmpty ? nil : { !skipped.contains($0) }) { row in
            if wantsWorkouts, row.type == .activity, let end = row.end, end > row.time, !row.isSample {
                workouts.append(workout(row, end: end, sources: sources, facts: facts, checks: checks))
            }
            guard wantsType(row.type) else { return }
            switch row.type {
            case .vitalSign:
                if page.readsVitals {
                    for (description, number) in Self.vitalReadings(row) {
                        vitalRows[description, default: []].append(.init(row: row, number: number))
                    }
                    return
                }
                if let number = row.valueNumber, lastVitals >= 0, vitalGroups[lastVitals].description == row.description {
                    vitalGroups[lastVitals].group.values.append(number)
                    return
                }
                for (description, number) in Self.vitalReadings(row) {
                    let index: Int
                    if let found = vitalIndex[description] {
                        index = found
                    } else {
                        index = vitalGroups.count
                        vitalGroups.append((description, TimelinePayload.Vitals(units: row.unit)))
                        vitalIndex[description] = index
                    }
                    if let number { vitalGroups[index].group.values.append(number) }
                    lastVitals = index
                }
            case .activity:
                guard let value = row.valueNumber else { return }
                days.add(value, at: row.time, id: row.id, description: row.description, unit: row.unit)
                if detail, activityCodes[row.description] == nil { activityCodes[row.description] = row.codes }
            default:
                lists[Self.key(for: row.type), default: []].append(item(row, sources: sources, facts: facts, checks: checks))
            }
        }
        var vitals = Dictionary(uniqueKeysWithValues: vitalGroups.map { ($0.description, $0.group) })
        if page.readsVitals {
            vitals = try page.vitals(merging: vitalRows, from: range.start, to: range.end, db: db)
        }
        if page.readsActivity {
            try page.addActivity(to: &days, from: range.start, to: range.end, zone: range.zone, db: db)
        }
        var activity = days.days(covering: range.start, range.end)
        if detail { try describe(&activity, codes: activityCodes, series: series, db: db) }

        var payload = TimelinePayload(start: range.start, end: range.end)
        for key in Self.allKeys {
            guard wants(key) else { continue }
            switch key {
            case "vitals":
                payload.members.append((key, .vitals(Self.orderedVitals(vitals))))
            case "activity":
                let sorted = activity.sorted { ($0.day, $0.description) < ($1.day, $1.description) }
                if !sorted.isEmpty { payload.members.append((key, .activity(sorted))) }
            case "workouts":
                if !workouts.isEmpty { payload.members.append((key, .json(.array(workouts)))) }
            case "timeline_medications", "regimens":
                let items = try TimelineItemRepository(db).list(patientID: patientID, from: range.start, to: range.end, types: [Self.postedTypes[key]!])
                payload.members.append((key, .json(.array(items.compactMap(Self.parsedObject)))))
            case "levels":
                payload.members.append((key, .json(try levels(patientID: patientID, db: db))))
            default:
                if let list = lists[key], !list.isEmpty { payload.members.append((key, .json(.array(list)))) }
            }
        }
        return payload
    }

    /// A workout as an item (`item`'s members, the duration as its measurement), with its end and its
    /// text beside the number (what `entries show` prints as `details:`).
    func workout(_ row: TimelineRow, end: Int64, sources: [Int64: SourceRepository.Summary],
                 facts: [Int64: (names: [String], copies: Int)], checks: [Int64: EntryVerification]) -> JSONValue {
        guard case var .object(members) = item(row, sources: sources, facts: facts, checks: checks) else { return .null }
        let at = members.firstIndex { $0.0 == "date" }.map { $0 + 1 } ?? members.count
        members.insert(("end_date", .int(end)), at: at)
        if row.valueNumber != nil, let details = row.valueText { members.append(("details", .string(details))) }
        return .object(members)
    }

    func item(_ row: TimelineRow, sources: [Int64: SourceRepository.Summary],
              facts: [Int64: (names: [String], copies: Int)] = [:], checks: [Int64: EntryVerification] = [:]) -> JSONValue {
        let value: JSONValue = row.valueNumber.map(JSONValue.double) ?? row.valueText.map(JSONValue.string) ?? .null
        var members: JSONObject = [
            ("id", .string(row.uuid)), ("description", .string(row.description)), ("date", .int(row.time)),
            ("measurement", .object([("value", value), ("unit", row.unit.map(JSONValue.string) ?? .null)])),
        ]
        if detail {
            members.append(("entry_id", .int(row.id)))
            // The value as the web view lists it, in the units people read (ReadableUnits).
            if let display = ReadableUnits.text(number: row.valueNumber, text: row.valueText, unit: row.unit, codes: row.codes,
                                                description: row.description) {
                members.append(("display", .string(display)))
            }
            members.append(("codes", .object(JSONObject(sortingKeysOf: row.codes) { .array($0.map(JSONValue.string)) })))
            if let source = sources[row.sourceID] {
                var s: JSONObject = [("kind", .string(source.kind.rawValue)), ("name", .string(source.displayName))]
                if let url = source.baseURL { s.append(("url", .string(url))) }
                members.append(("source", .object(s)))
            }
            if let fact = facts[row.id] {
                members.append(("sources", .array(fact.names.map(JSONValue.string))))
                members.append(("copies", .int(fact.copies)))
            }
            if let check = checks[row.id] {
                members.append(("verification", check.jsonValue))
                members.append(("badge", .string(check.badge)))
            }
        }
        return .object(members)
    }

    /// The chartable readings of a vital-sign entry. Only numbers can be charted: hReader turned text such
    /// as "positive" into 0, hreader leaves it out (the group still appears). A blood-pressure panel that
    /// arrived as one FHIR Observation ("120/80") gives the systolic and diastolic series that RHEx
    /// records carry as two entries.
    static func vitalReadings(_ row: TimelineRow) -> [(String, Double?)] {
        if let number = row.valueNumber { return [(row.description, number)] }
        let text = row.valueText?.trimmingSpaces() ?? ""
        if let number = Double(text) { return [(row.description, number)] }
        let parts = text.split(separator: "/")
        if parts.count == 2, let systolic = Double(parts[0]), let diastolic = Double(parts[1]),
           row.description.lowercased().contains("blood pressure") {
            return [("Systolic Blood Pressure", systolic), ("Diastolic Blood Pressure", diastolic)]
        }
        return [(row.description, nil)]
    }

    /// Groups sorted by description; blood-pressure groups last, by description descending
    /// ("Systolic …" before "Diastolic …"), as hReader ordered them.
    static func orderedVitals<G>(_ groups: [String: G]) -> [(String, G)] {
        func isBloodPressure(_ d: String) -> Bool {
            let l = d.lowercased()
            return l.contains("blood pressure") || l.contains("systolic") || l.contains("diastolic")
        }
        let other = groups.filter { !isBloodPressure($0.key) }.sorted { $0.key < $1.key }
        let pressure = groups.filter { isBloodPressure($0.key) }.sorted { $0.key > $1.key }
        return (other + pressure).map { ($0.key, $0.value) }
    }

    /// Posted levels merged in time order: {"pain": ["5", "7"], "mood": ["6"]}.
    func levels(patientID: Int64, db: Database) throws -> JSONValue {
        var order: [String] = []
        var merged: [String: [JSONValue]] = [:]
        for item in try TimelineItemRepository(db).list(patientID: patientID, from: range.start, to: range.end, types: ["levels"]) {
            guard case let .object(members)? = Self.parsedObject(item) else { continue }
            for (key, value) in members {
                if merged[key] == nil { order.append(key) }
                merged[key, default: []].append(value)
            }
        }
        return .object(JSONObject(order.map { ($0, JSONValue.array(merged[$0]!)) }))
    }

    /// A posted item's data as stored (an object, written by `postTimelineItem`), nil when it is not one.
    static func parsedObject(_ item: TimelineItem) -> JSONValue? {
        guard let value = try? JSONParser.parse(item.data), value.object != nil else { return nil }
        return value
    }
}

/// A timeline page before it is written: the small lists as JSON values, the vitals' numbers and
/// the activity totals as plain arrays. Written as a tree (`jsonValue`) or straight out (`write`),
/// the same JSON either way.
struct TimelinePayload {
    struct Vitals {
        var units: String?
        var values: [Double] = []
    }

    struct ActivityDay {
        let day: Int64
        /// When the local day ends (the next one's start).
        let end: Int64
        let dayText: String
        let description: String
        var total: Double = 0
        var unit: String?
        /// The total in the units people read, with detail (`TimelineQuery.describe`).
        var display: String?
        init(day: Int64, end: Int64, dayText: String, description: String, unit: String?) {
            self.day = day; self.end = end; self.dayText = dayText; self.description = description; self.unit = unit
        }
    }

    enum Member {
        case json(JSONValue)
        case vitals([(String, Vitals)])
        case activity([ActivityDay])
    }

    let start: Int64
    let end: Int64
    var members: [(String, Member)] = []

    init(start: Int64, end: Int64) { self.start = start; self.end = end }

    var jsonValue: JSONValue {
        var out: JSONObject = [("start_date", .int(start)), ("end_date", .int(end))]
        for (key, member) in members {
            switch member {
            case let .json(value): out.append((key, value))
            case let .vitals(groups):
                out.append((key, .array(groups.map { description, group in
                    .object([("description", .string(description)), ("values", .array(group.values.map(JSONValue.double))),
                             ("units", group.units.map(JSONValue.string) ?? .null)])
                })))
            case let .activity(days):
                out.append((key, .array(days.map { d in
                    var day: JSONObject = [("date", .int(d.day)), ("day", .string(d.dayText)), ("description", .string(d.description)),
                                           ("total", .double(d.total)), ("unit", d.unit.map(JSONValue.string) ?? .null)]
                    if let display = d.display { day.append(("display", .string(display))) }
                    return .object(day)
                })))
            }
        }
        return .object(out)
    }

    func write(to out: inout JSONByteWriter) throws {
        out.raw("{\"start_date\":")
        out.int(start)
        out.raw(",\"end_date\":")
        out.int(end)
        for (key, member) in members {
            out.raw(",")
            out.string(key)
            out.raw(":")
            switch member {
            case let .json(value):
                out.value(value)
            case let .vitals(groups):
                out.raw("[")
                for (i, (description, group)) in groups.enumerated() {
                    if i > 0 { out.raw(",") }
                    out.raw("{\"description\":")
                    out.string(description)
                    out.raw(",\"values\":[")
                    for (j, value) in group.values.enumerated() {
                        if j > 0 { out.raw(",") }
                        out.double(value)
                        if j & 1023 == 0 { try out.flushIfFull() }
                    }
                    out.raw("],\"units\":")
                    if let units = group.units { out.string(units) } else { out.raw("null") }
                    out.raw("}")
                }
                out.raw("]")
            case let .activity(days):
                out.raw("[")
                for (i, d) in days.enumerated() {
                    if i > 0 { out.raw(",") }
                    out.raw("{\"date\":")
                    out.int(d.day)
                    out.raw(",\"day\":")
                    out.string(d.dayText)
                    out.raw(",\"description\":")
                    out.string(d.description)
                    out.raw(",\"total\":")
                    out.double(d.total)
                    out.raw(",\"unit\":")
                    if let unit = d.unit { out.string(unit) } else { out.raw("null") }
                    if let display = d.display {
                        out.raw(",\"display\":")
                        out.string(display)
                    }
                    out.raw("}")
                    try out.flushIfFull()
                }
                out.raw("]")
            }
            try out.flushIfFull()
        }
        out.raw("}")
        try out.flush()
    }
}
