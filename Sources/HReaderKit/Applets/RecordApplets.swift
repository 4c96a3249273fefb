import Foundation
import HReaderStore

/// The list tiles: medications, the latest encounter, immunizations, functional status, symptoms
/// (hReader's TBI tracker) and activity. They have no normal range: `normal` when there is something
/// to show (`attention` only where a configured goal is missed), `unknown` when there is nothing.
enum RecordApplets {
    /// "Lisinopril 20mg", and what the patient says they take.
    static func medications(_ context: AppletContext) -> Tile {
        // hReader's order: newest start first; undated ones last.
        let all = context.entries.filter { $0.content.type == .medication }.sorted { a, b in
            let (x, y) = (a.content.start?.epoch ?? a.content.date?.epoch, b.content.start?.epoch ?? b.content.date?.epoch)
            switch (x, y) {
            case let (x?, y?): return x != y ? x > y : a.id < b.id
            case (.some, nil): return true
            case (nil, .some): return false
            default: return a.id < b.id
            }
        }
        guard !all.isEmpty else { return context.emptyTile("None") }
        let limit = context.configuredCount("limit", default: 8)
        var lines = all.prefix(limit).map { entry -> String in
            var line = entry.content.description
            if let dose = entry.content.dose, !dose.isEmpty { line += " \(dose)" }
            if let own = entry.user.patientDose, !own.isEmpty { line += " (you take \(own))" }
            if entry.user.deleted { line += " (struck)" }
            return line
        }
        if all.count > limit { lines.append("\(all.count - limit) more…") }
        let current = all.filter { !$0.user.deleted }
        let newest = current.compactMap { $0.content.start ?? $0.content.date }.max { $0.epoch < $1.epoch }
        return context.tile(status: current.isEmpty ? .unknown : .normal, value: String(current.count),
                            unit: current.count == 1 ? "medication" : "medications", lines: lines, updated: newest?.text)
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
    static func encounters(_ context: AppletContext) -> Tile {
        let dated = context.current(.encounter).filter { $0.content.effectiveTime != nil }
        guard let latest = dated.max(by: { ($0.content.effectiveTime!.epoch, $0.id) < ($1.content.effectiveTime!.epoch, $1.id) }) else {
            return context.emptyTile("None")
        }
        let time = latest.content.effectiveTime!
        var lines = [time.dayText]
        if let codes = codeLine(latest.content.codes) { lines.append(codes) }
        lines.append("\(dated.count) encounter\(dated.count == 1 ? "" : "s") in the record")
        return context.tile(status: .normal, value: latest.content.description, lines: lines, updated: time.text)
    }

    /// Immunizations, newest first. hReader showed "up to date: yes/no" from demo data that no record
    /// carries; hreader lists what was given instead.
    static func immunizations(_ context: AppletContext) -> Tile {
        let all = context.current(.immunization).sorted { ($0.content.effectiveTime?.epoch ?? .min) > ($1.content.effectiveTime?.epoch ?? .min) }
        guard !all.isEmpty else { return context.emptyTile("None recorded") }
        let limit = context.configuredCount("limit", default: 8)
        var lines = all.prefix(limit).map { e in
            [e.content.effectiveTime?.dayText, e.content.description].compactMap { $0 }.joined(separator: "  ")
        }
        if all.count > limit { lines.append("\(all.count - limit) more…") }
        return context.tile(status: .normal, value: String(all.count), unit: all.count == 1 ? "immunization" : "immunizations",
                            lines: lines, updated: all.first?.content.effectiveTime?.text)
    }

    /// The latest functional status assessment (hReader filled this tile from demo data; hreader reads
    /// entries whose description says "functional", or LOINC 47420-5).
    static func functionalStatus(_ context: AppletContext) -> Tile {
        let found = context.entries.filter { e in
            !e.user.deleted && [.observation, .condition, .result, .procedure].contains(e.content.type)
                && (e.loweredDescription.contains("functional") || e.hasCode("LOINC", in: ["47420-5"]))
        }
        guard let latest = found.max(by: { ($0.content.effectiveTime?.epoch ?? .min) < ($1.content.effectiveTime?.epoch ?? .min) }) else {
            return context.emptyTile("None")
        }
        var lines: [String] = []
        if let time = latest.content.effectiveTime { lines.append(time.dayText) }
        if let value = latest.displayValue { lines.append(value) }
        if let status = latest.content.status { lines.append("status: \(status)") }
        return context.tile(status: .normal, value: latest.content.description, lines: lines, updated: latest.content.effectiveTime?.text)
    }

    /// Symptoms over the last `days` days (default 30), most frequent first: hReader's TBI tracker
    /// followed symptoms such as headache and fatigue over time.
    static func symptoms(_ context: AppletContext) -> Tile {
        let days = context.configuredCount("days", default: 30)
        let since = Int64(context.now.timeIntervalSince1970) - Int64(days) * 86_400
        let recent = context.current(.symptom).filter { ($0.content.effectiveTime?.epoch ?? .min) >= since }
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

    /// Steps per day over the last 7 days (today included, local days): the daily average as the value,
    /// one line per day. With `daily_goal` configured, an average below it needs attention.
    static func activity(_ context: AppletContext) -> Tile {
        let calendar = context.calendar
        let today = calendar.startOfDay(for: context.now)
        let days = (0..<7).reversed().compactMap { calendar.date(byAdding: .day, value: -$0, to: today) }
        guard let first = days.first, let end = calendar.date(byAdding: .day, value: 1, to: today) else { return context.emptyTile("None") }
        let steps = context.current(.activity).filter { e in
            (e.loweredDescription.contains("step") || e.hasCode("LOINC", in: stepsLOINC)) && e.number != nil
        }
        var totals = [Double](repeating: 0, count: days.count)
        var newest: ClinicalTime?
        for entry in steps {
            guard let time = entry.content.effectiveTime, time.date >= first, time.date < end,
                  let index = days.lastIndex(where: { $0 <= time.date }) else { continue }
            totals[index] += entry.number!
            if time.epoch > (newest?.epoch ?? .min) { newest = time }
        }
        guard newest != nil else { return context.emptyTile("No steps recorded in the last 7 days") }
        let formatter = DateFormatter()
        formatter.calendar = calendar
        formatter.timeZone = calendar.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE yyyy-MM-dd"
        let average = (totals.reduce(0, +) / Double(days.count)).rounded()
        var lines = zip(days, totals).map { "\(formatter.string(from: $0))  \(TileFormat.number($1.rounded()))" }
        var status = Tile.Status.normal
        if let goal = context.declaration.configurationNumber("daily_goal"), goal > 0 {
            lines.insert("goal \(TileFormat.number(goal)) a day", at: 0)
            if average < goal { status = .attention }
        }
        return context.tile(status: status, value: TileFormat.number(average), unit: "steps/day", lines: lines, updated: newest?.text)
    }
}

extension BuiltInApplet {
    /// The tile of this applet for the context's patient.
    func tile(in context: AppletContext) -> Tile {
        switch self {
        case .bloodPressure: return VitalSignApplets.bloodPressure(context)
        case .bmi: return VitalSignApplets.bmi(context)
        case .oxygenSaturation: return VitalSignApplets.oxygenSaturation(context)
        case .respiratoryRate: return VitalSignApplets.respiratoryRate(context)
        case .totalCholesterol: return VitalSignApplets.totalCholesterol(context)
        case .medications: return RecordApplets.medications(context)
        case .encounters: return RecordApplets.encounters(context)
        case .immunizations: return RecordApplets.immunizations(context)
        case .functionalStatus: return RecordApplets.functionalStatus(context)
        case .symptoms: return RecordApplets.symptoms(context)
        case .activity: return RecordApplets.activity(context)
        }
    }
}
