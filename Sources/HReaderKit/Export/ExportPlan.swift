import Foundation
import HReaderStore

/// `--group`: whether high-frequency samples (steps, energy) are summed per local hour or day.
public enum ExportGrouping: String, CaseIterable, Sendable {
    case none, hour, day

    var component: Calendar.Component? {
        switch self {
        case .none: nil
        case .hour: .hour
        case .day: .day
        }
    }
}

/// What to export of a patient's record.
public struct ExportOptions: Sendable {
    /// The entry types `export` sends by default, and those it can send at all (as Observations).
    public static let defaultTypes: Set<EntryType> = [.vitalSign, .activity, .result]
    public static let exportableTypes: [EntryType] = [.vitalSign, .activity, .result, .symptom, .observation]

    public var types: Set<EntryType>
    /// Only entries whose time is at or after this instant.
    public var since: ClinicalTime?
    public var grouping: ExportGrouping
    /// Observations per transaction Bundle.
    public var batchSize: Int
    /// Also the patient's documents, as DocumentReferences with their bytes inline (`--out` only).
    public var withDocuments: Bool

    public init(types: Set<EntryType> = ExportOptions.defaultTypes, since: ClinicalTime? = nil, grouping: ExportGrouping = .none,
                batchSize: Int = 100, withDocuments: Bool = false) {
        self.types = types; self.since = since; self.grouping = grouping; self.batchSize = batchSize; self.withDocuments = withDocuments
    }
}

/// The Observations one export sends, and the entries it leaves out with the reason.
struct ExportPlan: Sendable {
    var drafts: [ObservationDraft] = []
    /// Vault entries the drafts stand for.
    var entries = 0
    /// … of which summed into hourly or daily Observations.
    var groupedEntries = 0
    /// Reason → number of entries not sent.
    var skipped: [String: Int] = [:]

    static let noLOINC = "without a LOINC code"
    static let struck = "struck through"
    static let duplicate = "with the same identifier as another entry"
    static let bucketOpen = "in an hour or day not over yet (a later export sends them)"
}

/// Turns entries into Observation drafts: the entry-by-entry mapping (codes, value and unit,
/// time, identifier) and the sums per hour or day. Pure: no vault, no network.
struct ExportPlanner {
    let patientUUID: String
    let options: ExportOptions
    /// Each source's kind, to tell Apple Health entries apart.
    let sourceKinds: [Int64: SourceKind]
    let now: Date
    let timeZone: TimeZone
    let catalog = ObservationCatalog.standard
    private let dateTimePattern: NSRegularExpression

    init(patientUUID: String, options: ExportOptions, sourceKinds: [Int64: SourceKind], now: Date, timeZone: TimeZone = .current) {
        self.patientUUID = patientUUID
        self.options = options
        self.sourceKinds = sourceKinds
        self.now = now
        self.timeZone = timeZone
        // FHIR R4's dateTime: a year, year-month, date, or a date and time with seconds and a zone.
        dateTimePattern = try! NSRegularExpression(pattern: """
            ^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)(-(0[1-9]|1[0-2])(-(0[1-9]|[1-2][0-9]|3[0-1])\
            (T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?(Z|(\\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?$
            """)
    }

    /// A bucket of summed samples: one code in one local hour or day.
    private struct BucketKey: Hashable {
        var loinc: String
        var start: Int64
    }

    private struct Bucket {
        var end: Int64
        var sum: Double = 0
        var samples = 0
        var first: ObservationDraft
        var healthKitType: String?
    }

    func plan(_ entries: [Entry]) -> ExportPlan {
        var plan = ExportPlan()
        var singles: [ObservationDraft] = []
        var buckets: [BucketKey: Bucket] = [:]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone

        for entry in entries where options.types.contains(entry.content.type) {
            let time = entry.content.effectiveTime
            // --since: an entry at or after it; a summed hour or day that ends after it (whole).
            let inRange = options.since.map { since in time.map { $0.epoch >= since.epoch } ?? false } ?? true
            if entry.user.deleted {
                if inRange { plan.skipped[ExportPlan.struck, default: 0] += 1 }
                continue
            }
            guard let draft = draft(for: entry) else {
                if inRange { plan.skipped[ExportPlan.noLOINC, default: 0] += 1 }
                continue
            }

            if let component = options.grouping.component, let code = catalog.code(draft.loinc), code.summable,
               case .quantity(let quantity) = draft.value, quantity.ucum == code.ucum, let time,
               let interval = calendar.dateInterval(of: component, for: time.date) {
                let key = BucketKey(loinc: draft.loinc, start: Int64(interval.start.timeIntervalSince1970))
                var bucket = buckets[key] ?? Bucket(end: Int64(interval.end.timeIntervalSince1970), first: draft, healthKitType: draft.healthKitType)
                bucket.sum += quantity.value
                bucket.samples += 1
                if bucket.healthKitType != draft.healthKitType { bucket.healthKitType = nil }
                buckets[key] = bucket
            } else if inRange {
                singles.append(draft)
            }
        }

        var drafts = singles
        for (key, bucket) in buckets {
            if let since = options.since, bucket.end <= since.epoch { continue }
            if bucket.end > Int64(now.timeIntervalSince1970) {
                plan.skipped[ExportPlan.bucketOpen, default: 0] += bucket.samples
                continue
            }
            drafts.append(groupDraft(key, bucket))
        }
        drafts.sort { ($0.time ?? .min, $0.identifier.value) < ($1.time ?? .min, $1.identifier.value) }

        var seen: Set<ObservationDraft.Identifier> = []
        for draft in drafts {
            guard seen.insert(draft.identifier).inserted else {
                plan.skipped[ExportPlan.duplicate, default: 0] += draft.entries
                continue
            }
            plan.drafts.append(draft)
            plan.entries += draft.entries
            if draft.identifier.system == ObservationDraft.groupSystem { plan.groupedEntries += draft.entries }
        }
        return plan
    }

    // MARK: One entry

    /// The Observation for one entry; nil when the entry has no LOINC code, unless `withoutLOINC`
    /// (the clinician summary, which names such an entry by its own codes): then `loinc` is empty.
    func draft(for entry: Entry, withoutLOINC: Bool = false) -> ObservationDraft? {
        let content = entry.content
        guard let loinc = primaryLOINC(content.codes) ?? (withoutLOINC ? "" : nil) else { return nil }
        let healthKitType = content.codes[ObservationDraft.healthKitSystem]?.first
        let fromAppleHealth = sourceKinds[entry.sourceID] == .appleHealth
        let identifier = fromAppleHealth
            ? ObservationDraft.Identifier(system: ObservationDraft.healthKitSystem, value: entry.remoteID)
            : ObservationDraft.Identifier(system: ObservationDraft.entrySystem, value: entry.uuid)
        let known = catalog.code(loinc)
        let category: String?
        switch content.type {
        case .vitalSign: category = "vital-signs"
        case .activity: category = "activity"
        case .result: category = "laboratory"
        default: category = known?.category
        }
        return ObservationDraft(
            identifier: identifier, category: category, loinc: loinc, display: known?.display ?? content.description,
            text: content.description, healthKitType: healthKitType, effective: effective(of: content),
            value: value(of: content, loinc: loinc, healthKit: fromAppleHealth || healthKitType != nil),
            time: content.effectiveTime?.epoch, entries: 1)
    }

    /// A blood-pressure panel code first, else the first code the catalog knows, else the first.
    func primaryLOINC(_ codes: [String: [String]]) -> String? {
        let all = ["LOINC", "http://loinc.org", "urn:oid:2.16.840.1.113883.6.1"].flatMap { codes[$0] ?? [] }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return all.first(where: ObservationCatalog.bloodPressurePanels.contains)
            ?? all.first(where: { catalog.code($0) != nil }) ?? all.first
    }

    func value(of content: EntryContent, loinc: String, healthKit: Bool) -> ObservationDraft.Value {
        if ObservationCatalog.bloodPressurePanels.contains(loinc), let reading = bloodPressure(content) {
            return reading
        }
        if let number = content.valueNumber, number.isFinite {
            return .quantity(quantity(number, recorded: content.unit, loinc: loinc, healthKit: healthKit))
        }
        if let text = content.valueText?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty {
            return .text(text)
        }
        return .none
    }

    /// A value and its unit as recorded, as a FHIR Quantity. HealthKit's bare `count` takes the
    /// code's unit (steps, BMI); its `%` is a fraction (0.97), sent as a percentage (97).
    func quantity(_ number: Double, recorded: String?, loinc: String, healthKit: Bool) -> ObservationDraft.Quantity {
        let unit = recorded?.trimmingCharacters(in: .whitespaces) ?? ""
        if unit == "count", let ucum = catalog.code(loinc)?.ucum, let mapped = catalog.unit(ucum) {
            return .init(value: Self.rounded(number * mapped.factor), unit: mapped.display, ucum: mapped.ucum)
        }
        if let mapped = catalog.unit(unit) {
            let scale = healthKit && mapped.ucum == "%" ? 100 : mapped.factor
            return .init(value: Self.rounded(number * scale), unit: mapped.display, ucum: mapped.ucum)
        }
        return .init(value: Self.rounded(number), unit: unit, ucum: nil)
    }

    /// A blood-pressure panel's readings, in the entry's unit (mm[Hg] when it has none): both from
    /// "120/80"; from an entry that holds one of them (a panel whose other reading was absent at the
    /// source) that one, and the other as absent with the source's dataAbsentReason ("unknown" when
    /// it gave none). Which one the entry holds, its codes tell, else its raw Observation's
    /// components. Nil when the entry is neither.
    func bloodPressure(_ content: EntryContent) -> ObservationDraft.Value? {
        let mapped = catalog.unit(content.unit?.trimmingCharacters(in: .whitespaces) ?? "mmHg") ?? catalog.unit("mmHg")!
        func reading(_ value: Double) -> ObservationDraft.Component { .quantity(.init(value: value, unit: mapped.display, ucum: mapped.ucum)) }
        let text = content.valueText?.trimmingCharacters(in: .whitespaces) ?? ""
        let parts = text.split(separator: " ").first.map { $0.split(separator: "/") } ?? []
        if parts.count == 2, let systolic = Double(parts[0]), let diastolic = Double(parts[1]), systolic.isFinite, diastolic.isFinite {
            return .bloodPressure(systolic: reading(systolic), diastolic: reading(diastolic))
        }
        guard let number = content.valueNumber ?? Double(text), number.isFinite else { return nil }
        let source = BloodPressureSource(raw: content.raw)
        let codes = Set(["LOINC", "http://loinc.org", "urn:oid:2.16.840.1.113883.6.1"].flatMap { content.codes[$0] ?? [] })
        var hasSystolic = codes.contains(ObservationCatalog.systolic), hasDiastolic = codes.contains(ObservationCatalog.diastolic)
        if hasSystolic == hasDiastolic {  // both codes (an entry stored before half readings were told apart), or neither
            hasSystolic = source.components[ObservationCatalog.systolic]?.hasValue == true
            hasDiastolic = source.components[ObservationCatalog.diastolic]?.hasValue == true
        }
        guard hasSystolic != hasDiastolic else { return nil }
        let missing = hasSystolic ? ObservationCatalog.diastolic : ObservationCatalog.systolic
        let absent = ObservationDraft.Component.absent(reason: source.components[missing]?.absentReason ?? "unknown")
        return hasSystolic ? .bloodPressure(systolic: reading(number), diastolic: absent)
                           : .bloodPressure(systolic: absent, diastolic: reading(number))
    }

    /// effectivePeriod when start and end differ, else effectiveDateTime.
    func effective(of content: EntryContent) -> ObservationDraft.Effective {
        if let start = content.start, let end = content.end, start.epoch != end.epoch {
            let (first, last) = start.epoch < end.epoch ? (start, end) : (end, start)
            return .period(start: fhirDateTime(first), end: fhirDateTime(last))
        }
        guard let time = content.date ?? content.start ?? content.end else { return .none }
        return .instant(fhirDateTime(time))
    }

    /// The time as the source wrote it when that is a valid FHIR dateTime (keeping its precision
    /// and offset), else the instant in UTC.
    func fhirDateTime(_ time: ClinicalTime) -> String {
        let range = NSRange(time.text.startIndex..., in: time.text)
        return dateTimePattern.firstMatch(in: time.text, range: range) != nil ? time.text : RFC3339.utc(time.epoch)
    }

    // MARK: Groups

    private func groupDraft(_ key: BucketKey, _ bucket: Bucket) -> ObservationDraft {
        var draft = bucket.first
        draft.identifier = .init(system: ObservationDraft.groupSystem, value: "\(patientUUID):\(key.loinc):\(RFC3339.utc(key.start))")
        draft.effective = .period(start: localDateTime(key.start), end: localDateTime(bucket.end))
        draft.healthKitType = bucket.healthKitType
        draft.time = key.start
        draft.entries = bucket.samples
        guard case .quantity(var quantity) = draft.value else { return draft }
        quantity.value = Self.rounded(bucket.sum)
        if key.loinc == ObservationCatalog.steps {
            // A count per hour or per day: a rate in UCUM.
            (quantity.unit, quantity.ucum) = options.grouping == .day ? ("steps/day", "/d") : ("steps/hour", "/h")
        }
        draft.value = .quantity(quantity)
        return draft
    }

    /// RFC 3339 with the local offset of that instant ("2026-11-01T00:00:00+01:00", or Z in UTC).
    func localDateTime(_ epoch: Int64) -> String {
        let offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(epoch)))
        let shifted = RFC3339.utc(epoch + Int64(offset))
        guard offset != 0 else { return shifted }
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return String(shifted.dropLast()) + "\(sign)\(two(minutes / 60)):\(two(minutes % 60))"
    }

    /// Six decimals at most: 0.97 × 100 is 97, not 97.00000000000001.
    static func rounded(_ value: Double) -> Double {
        guard abs(value) < 1e12 else { return value }
        return (value * 1_000_000).rounded() / 1_000_000
    }
}
