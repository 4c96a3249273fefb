import Foundation
import HReaderModel
import HReaderRecords
import HReaderStore

/// The list tiles: medications, the latest encounter, immunizations, functional status, symptoms
/// (hReader's TBI tracker) and activity. They have no normal range: `normal` when there is something
/// to show (`attention` only where a configured goal is missed), `unknown` when there is nothing.
enum RecordApplets {
    /// "Lisinopril 20mg", and what the patient says they take.
    static func medications(_ context: AppletContext) throws -> Tile {
        // hReader's order: newest start first; undated ones last.
        let (record, id) = (context.record, context.patient.id)
        let limit = context.configuredCount("limit", default: 8)
        let shown = try record.firstEntries(patientID: id, type: .medication, order: .start, current: false, limit: limit)
        guard !shown.isEmpty else { return context.emptyTile("None") }
        let all = try record.count(patientID: id, type: .medication)
        var lines = shown.map { entry -> String in
            var line = entry.content.description
            if let dose = entry.content.dose, !dose.isEmpty { line += " \(dose)" }
            if let own = entry.user.patientDose, !own.isEmpty { line += " (you take \(own))" }
            if entry.user.deleted { line += " (struck)" }
            return line
        }
        if all > limit { lines.append("\(all - limit) more…") }
        let current = try record.count(patientID: id, type: .medication, current: true)
        let newest = try record.firstEntries(patientID: id, type: .medication, order: .start, current: true, limit: 1).first
            .flatMap { $0.content.start ?? $0.content.date }
        return context.tile(status: current == 0 ? .unknown : .normal, value: String(current),
                            unit: current == 1 ? "medication" : "medications", lines: lines, updated: newest?.text)
    }

    /// "CPT 99213; ICD-9-CM V70.0".
    static func codeLine(_ codes: [String: [String]]) -> String? {
        let parts = codes.keys.sorted().compactMap { system -> String? in
            let values = codes[system] ?? []
            return values.isEmpty ? nil : "\(system) \(values.joined(separator: ", "))"
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// The latest encounter, with its codes (hReader's tile).
    static func encounters(_ context: AppletContext) throws -> Tile {
        guard let latest = try context.newest([.encounter], limit: 1, where: { $0.content.effectiveTime != nil }).first else {
            return context.emptyTile("None")
        }
        let dated = try context.record.count(patientID: context.patient.id, type: .encounter, current: true, dated: true)
        let time = latest.content.effectiveTime!
        var lines = [time.dayText]
        if let codes = codeLine(latest.content.codes) { lines.append(codes) }
        lines.append("\(dated) encounter\(dated == 1 ? "" : "s") in the record")
        return context.tile(status: .normal, value: latest.content.description, lines: lines, updated: time.text)
    }

    /// Immunizations, newest first. hReader showed "up to date: yes/no" from demo data that no record
    /// carries; hreader lists what was given instead.
    static func immunizations(_ context: AppletContext) throws -> Tile {
        let limit = context.configuredCount("limit", default: 8)
        let shown = try context.record.firstEntries(patientID: context.patient.id, type: .immunization, order: .effective, current: true, limit: limit)
        guard !shown.isEmpty else { return context.emptyTile("None recorded") }
        let all = try context.record.count(patientID: context.patient.id, type: .immunization, current: true)
        var lines = shown.map { e in
            [e.content.effectiveTime?.dayText, e.content.description].compactMap { $0 }.joined(separator: "  ")
        }
        if all > limit { lines.append("\(all - limit) more…") }
        return context.tile(status: .normal, value: String(all), unit: all == 1 ? "immunization" : "immunizations",
                            lines: lines, updated: shown.first?.content.effectiveTime?.text)
    }

    /// The latest functional status assessment (hReader filled this tile from demo data; hreader reads
    /// entries whose description says "functional", or LOINC 47420-5). Of several at the latest
    /// time, the first stored.
    static func functionalStatus(_ context: AppletContext) throws -> Tile {
        var latest: Entry?
        try context.record.forEachNewest(patientID: context.patient.id, types: [.observation, .condition, .result, .procedure],
                                         kinds: { $0.loweredDescription.contains("functional") || $0.hasCode("LOINC", in: ["47420-5"]) }) { entry in
            guard latest == nil || latest?.content.effectiveTime?.epoch == entry.content.effectiveTime?.epoch else { return false }
            latest = entry
            return true
        }
        guard let latest else { return context.emptyTile("None") }
        var lines: [String] = []
        if let time = latest.content.effectiveTime { lines.append(time.dayText) }
        if let value = latest.displayValue { lines.append(value) }
        if let status = latest.content.status { lines.append("status: \(status)") }
        return context.tile(status: .normal, value: latest.content.description, lines: lines, updated: latest.content.effectiveTime?.text)
    }

    /// Symptoms over the last `days` days (default 30), most frequent first: hReader's TBI tracker
    /// followed symptoms such as headache and fatigue over time. Reads those days only.
    static func symptoms(_ context: AppletContext) throws -> Tile {
        let days = context.configuredCount("days", default: 30)
        let since = Int64(context.now.timeIntervalSince1970) - Int64(days) * 86_400
        let recent = try context.record.list(patientID: context.patient.id, type: .symptom, from: since, to: nil)
            .filter { !$0.user.deleted && ($0.content.effectiveTime?.epoch ?? .min) >= since }
        guard !recent.isEmpty else { return context.emptyTile("No symptoms recorded in the last \(days) days") }
        var groups: [String: (count: Int, last: ClinicalTime?)] = [:]
        for entry in recent {
            let time = entry.content.effectiveTime
            var group = groups[entry.content.description] ?? (0, nil)
            group.count += 1
            if let time, time.epoch > (group.last?.epoch ?? .min) { group.last = time }
            groups[entry.content.description] = group
        }
        let lines = groups.sorted { ($1.value.count, $0.key) < ($0.value.count, $1.key) }.map { name, group in
            "\(name) ×\(group.count)\(group.last.map { ", last \($0.dayText)" } ?? "")"
        }
        let newest = recent.compactMap(\.content.effectiveTime).max { $0.epoch < $1.epoch }
        return context.tile(status: .normal, value: String(recent.count), unit: "in \(days) days", lines: lines, updated: newest?.text)
    }

    static let stepsLOINC: Set<String> = ["55423-8", "41950-7"]

    /// Whether a kind of activity entries counts steps.
    static func isSteps(_ kind: EntryRepository.Kind) -> Bool {
        kind.loweredDescription.contains("step") || kind.hasCode("LOINC", in: stepsLOINC)
    }

    /// Steps per day over the last 7 days (today included, local days): the daily average as the value,
    /// one line per day. With `daily_goal` configured, an average below it needs attention. Reads the
    /// week's step counts only (a watch writes about a thousand a day), not the person's record: the
    /// day totals of schema 7 are UTC days of vital signs, and the tile's days are local ones.
    static func activity(_ context: AppletContext) throws -> Tile {
        // The local days as the timeline counts them (DayCalendar: the C library's tzdata), today last.
        var calendar = DayCalendar(context.zone)
        var days = [calendar.day(containing: Int64(context.now.timeIntervalSince1970.rounded(.down)))]
        while days.count < 7 { days.insert(calendar.day(containing: days[0].start - 1), at: 0) }
        let first = days[0].start, end = days[days.count - 1].end
        let record = context.record, id = context.patient.id
        let stepSeries = try record.sampleSeriesIDs(patientID: id, type: .activity, kinds: isSteps)
        var totals = [Double](repeating: 0, count: days.count)
        var newest: (time: Int64, id: Int64)?
        func index(of time: Int64) -> Int? {
            guard time >= first, time < end else { return nil }
            return days.lastIndex(where: { $0.start <= time })
        }
        // Samples: each day counted once when a phone and a watch both counted it (ActivityTotals).
        var activity = ActivityTotals(db: context.db, zone: context.zone)
        let series = try SampleReadings(context.db).series(patientID: id).filter { stepSeries.contains($0.id) }
        try activity.forEachTotal(of: series, from: first, to: end - 1) { total in
            if let index = index(of: total.first.0) { totals[index] += total.sum }
        }
        // Entries (a server's or typed-in step counts) as they are; the newest reading of either kind
        // dates the tile.
        try record.forEachTimelineRow(patientID: id, from: first, to: end - 1, type: .activity, withCodes: true, series: stepSeries.contains) { row in
            let kind = EntryRepository.Kind(type: row.type, description: row.description, codes: row.codes)
            guard isSteps(kind), let number = CodeMatch.number(row.valueNumber, row.valueText), let index = index(of: row.time) else { return }
            if !row.isSample { totals[index] += number }
            if row.time > (newest?.time ?? .min) { newest = (row.time, row.id) }
        }
        guard let newest else { return context.emptyTile("No steps recorded in the last 7 days") }
        /// "Fri 2026-11-27": the weekday of a date, from its day count (1970-01-01 was a Thursday).
        func named(_ text: String) -> String {
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3 else { return text }
            let weekday = ((CivilDays.days(parts[0], parts[1], parts[2]) % 7) + 7 + 4) % 7
            return ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][weekday] + " " + text
        }
        let average = (totals.reduce(0, +) / Double(days.count)).rounded()
        var lines = zip(days, totals).map { "\(named($0.text))  \(TileFormat.number($1.rounded()))" }
        var status = Tile.Status.normal
        if let goal = context.declaration.configurationNumber("daily_goal"), goal > 0 {
            lines.insert("goal \(TileFormat.number(goal)) a day", at: 0)
            if average < goal { status = .attention }
        }
        let updated = try record.get(id: newest.id)?.content.effectiveTime?.text
        return context.tile(status: status, value: TileFormat.number(average), unit: "steps/day", lines: lines, updated: updated)
    }
}

extension BuiltInApplet {
    /// The tiles a patient's default list adds when they would show a reading of the patient's.
    static let shownWhenRecorded: Set<BuiltInApplet> = [.bmi, .oxygenSaturation, .respiratoryRate, .totalCholesterol, .activity]

    /// Whether the tile would show a reading of the patient's: a vital sign's or a result's latest
    /// value, or, for activity, any step count (its tile looks at the last 7 days, which an export of
    /// last month has none of).
    func showsRecords(in context: AppletContext) throws -> Bool {
        switch self {
        case .activity:
            var found = false
            try context.record.forEachNewest(patientID: context.patient.id, types: [.activity], kinds: RecordApplets.isSteps) { _ in
                found = true
                return false
            }
            return found
        case .bmi, .oxygenSaturation, .respiratoryRate, .totalCholesterol:
            return try tile(in: context).value != nil
        default:
            return false
        }
    }

    /// The tile of this applet for the context's patient.
    func tile(in context: AppletContext) throws -> Tile {
        switch self {
        case .bloodPressure: return try VitalSignApplets.bloodPressure(context)
        case .bmi: return try VitalSignApplets.bmi(context)
        case .oxygenSaturation: return try VitalSignApplets.oxygenSaturation(context)
        case .respiratoryRate: return try VitalSignApplets.respiratoryRate(context)
        case .totalCholesterol: return try VitalSignApplets.totalCholesterol(context)
        case .medications: return try RecordApplets.medications(context)
        case .encounters: return try RecordApplets.encounters(context)
        case .immunizations: return try RecordApplets.immunizations(context)
        case .functionalStatus: return try RecordApplets.functionalStatus(context)
        case .symptoms: return try RecordApplets.symptoms(context)
        case .activity: return try RecordApplets.activity(context)
        }
    }
}
