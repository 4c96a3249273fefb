import Foundation
import HReaderModel

/// What one export sends, counted as it goes, and the entries it leaves out with the reason.
package struct ExportPlan: Sendable {
    /// Observations handed out to be written or sent.
    package var observations = 0
    /// Vault entries they stand for.
    package var entries = 0
    /// … of which summed into hourly or daily Observations.
    package var groupedEntries = 0
    /// Reason → number of entries not sent.
    package var skipped: [String: Int] = [:]

    package init() {}

    static let noLOINC = "without a LOINC code"
    static let struck = "struck through"
    static let duplicate = "with the same identifier as another entry"
    static let bucketOpen = "in an hour or day not over yet (a later export sends them)"
}

/// Turns entries into Observation drafts: the entry-by-entry mapping (codes, value and unit,
/// time, identifier) and the sums per hour or day. Pure: no vault, no network (Kit's `ExportDrafts`
/// reads the entries and the source priority for it).
package struct ExportPlanner {
    package let patientUUID: String
    package let options: ExportOptions
    /// Each source's kind, to tell Apple Health entries apart.
    package let sourceKinds: [Int64: SourceKind]
    package let now: Date
    /// Where its hours and days are counted: the local zone, as the timeline counts it (DayCalendar).
    package let zone: DayZone
    let catalog = ObservationCatalog.standard
    private let dateTimePattern: NSRegularExpression

    package init(patientUUID: String, options: ExportOptions, sourceKinds: [Int64: SourceKind], now: Date, zone: DayZone = .local) {
        self.patientUUID = patientUUID
        self.options = options
        self.sourceKinds = sourceKinds
        self.now = now
        self.zone = zone
        // FHIR R4's dateTime: a year, year-month, date, or a date and time with seconds and a zone.
        dateTimePattern = try! NSRegularExpression(pattern: """
            ^([0-9]([0-9]([0-9][1-9]|[1-9]0)|[1-9]00)|[1-9]000)(-(0[1-9]|1[0-2])(-(0[1-9]|[1-2][0-9]|3[0-1])\
            (T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]+)?(Z|(\\+|-)((0[0-9]|1[0-3]):[0-5][0-9]|14:00)))?)?)?$
            """)
    }

    /// A bucket of summed samples: one code in one local hour or day.
    struct BucketKey: Hashable {
        var loinc: String
        var start: Int64
    }

    struct Bucket {
        var end: Int64
        /// Entries' values (a server's or typed-in counts), added as they are.
        var sum: Double = 0
        /// Samples' spans, weighed by source when the bucket closes (`SourceOverlap`): one hour or
        /// day counted once when a phone and a watch both counted it.
        var samplesBySource: [SourceOverlap.Sample] = []
        var total: Double { sum + SourceOverlap.total(samplesBySource) }
        var samples = 0
        var first: ObservationDraft
        var healthKitType: String?
    }

    /// An export planned in one pass over the patient's entries in time order (`EntryCursor`): each
    /// entry becomes a draft or is counted as left out, and samples are summed per hour or day as they
    /// come. Drafts come out in (time, identifier) order, the order the Bundle lists them in, as soon
    /// as nothing read later can come before them: without `--group`, once a later time is read;
    /// with it, once a later hour or day begins (a bucket's Observation is dated at its start). So
    /// memory holds an hour or a day of drafts, never the export.
    ///
    /// An identifier names one time (an entry's uuid; an Apple Health id hashes the sample's dates; a
    /// group's names its bucket), so two drafts with the same one are out together and the second is
    /// counted as a duplicate there.
    package struct Pass {
        let planner: ExportPlanner
        package private(set) var plan = ExportPlan()
        private var calendar: DayCalendar
        /// Buckets that may still get samples, and the earliest end among them.
        private var open: [BucketKey: Bucket] = [:]
        private var closesAt = Int64.max
        /// Drafts not handed out yet, with their arrival (ties keep it, as the sort of all drafts did).
        private var pending: [(draft: ObservationDraft, arrival: Int)] = []
        private var arrivals = 0
        /// Drafts before this time have been handed out.
        private var horizon = Int64.min
        /// The local hour or day of the last time asked about.
        private var interval: (start: Int64, end: Int64)?

        package init(_ planner: ExportPlanner) {
            self.planner = planner
            calendar = DayCalendar(planner.zone)
        }

        /// Reads entries before this time only to sum them into a bucket that ends after `--since`: an
        /// export need not read anything older.
        package var earliestNeeded: Int64? {
            guard let since = planner.options.since?.epoch else { return nil }
            return planner.options.grouping == .none ? since : since - 2 * 86_400
        }

        /// Takes the next entry (in time order); `emit` gets the drafts that are now final, in order.
        /// `sourceRank`: a sample's source's place in the priority (nil: an entry, summed as it is).
        package mutating func add(_ entry: Entry, sourceRank: Int? = nil, emit: ([ObservationDraft]) throws -> Void) rethrows {
            let options = planner.options
            guard options.types.contains(entry.content.type) else { return }
            let time = entry.content.effectiveTime
            if let time { try advance(to: time.epoch, emit: emit) }
            // --since: an entry at or after it; a summed hour or day that ends after it (whole).
            let inRange = options.since.map { since in time.map { $0.epoch >= since.epoch } ?? false } ?? true
            if entry.user.deleted {
                if inRange { plan.skipped[ExportPlan.struck, default: 0] += 1 }
                return
            }
            guard let draft = planner.draft(for: entry) else {
                if inRange { plan.skipped[ExportPlan.noLOINC, default: 0] += 1 }
                return
            }
            // Summed in the code's unit: another unit of the same kind (a phone's km beside a watch's m) is converted.
            if options.grouping != .none, let code = planner.catalog.code(draft.loinc), code.summable,
               case .quantity(var quantity) = draft.value, let from = quantity.ucum, let to = code.ucum,
               let factor = ObservationCatalog.factor(from: from, to: to), let time,
               let interval = bucket(of: time.epoch) {
                quantity.value *= factor
                let key = BucketKey(loinc: draft.loinc, start: interval.start)
                // Taken out while it grows, so that its samples' array is not copied at every sample.
                var bucket = open.removeValue(forKey: key) ?? Bucket(end: interval.end, first: draft, healthKitType: draft.healthKitType)
                if let sourceRank {
                    let start = entry.content.start?.epoch ?? time.epoch
                    bucket.samplesBySource.append(.init(rank: sourceRank, start: start, end: max(start, entry.content.end?.epoch ?? start),
                                                        value: quantity.value))
                } else {
                    bucket.sum += quantity.value
                }
                bucket.samples += 1
                if bucket.healthKitType != draft.healthKitType { bucket.healthKitType = nil }
                open[key] = bucket
                closesAt = min(closesAt, bucket.end)
            } else if inRange {
                pending.append((draft, arrivals))
                arrivals += 1
            }
        }

        /// After the last entry: every bucket closes, every draft goes out.
        package mutating func finish(emit: ([ObservationDraft]) throws -> Void) rethrows {
            for (key, bucket) in open { close(key, bucket) }
            open = [:]
            try flush(before: Int64.max, emit: emit)
        }

        /// Entries from `time` on are still to come: buckets that ended are closed, and drafts that
        /// nothing to come can precede go out.
        private mutating func advance(to time: Int64, emit: ([ObservationDraft]) throws -> Void) rethrows {
            if time >= closesAt {
                for (key, bucket) in open where bucket.end <= time {
                    close(key, bucket)
                    open[key] = nil
                }
                closesAt = open.values.map(\.end).min() ?? Int64.max
            }
            // A bucket read later starts no earlier than the hour or day of `time`.
            let limit = planner.options.grouping == .none ? time : bucket(of: time)?.start ?? time
            if limit > horizon { try flush(before: limit, emit: emit) }
        }

        /// A closed bucket's Observation, unless it is before `--since` or not over yet.
        private mutating func close(_ key: BucketKey, _ bucket: Bucket) {
            if let since = planner.options.since, bucket.end <= since.epoch { return }
            if bucket.end > Int64(planner.now.timeIntervalSince1970) {
                plan.skipped[ExportPlan.bucketOpen, default: 0] += bucket.samples
                return
            }
            pending.append((planner.groupDraft(key, bucket), arrivals))
            arrivals += 1
        }

        /// Hands out the drafts dated before `limit` (undated ones first), in (time, identifier) order.
        private mutating func flush(before limit: Int64, emit: ([ObservationDraft]) throws -> Void) rethrows {
            horizon = limit
            guard !pending.isEmpty else { return }
            var out: [(draft: ObservationDraft, arrival: Int)] = []
            var kept: [(draft: ObservationDraft, arrival: Int)] = []
            for item in pending {
                if (item.draft.time ?? Int64.min) < limit { out.append(item) } else { kept.append(item) }
            }
            guard !out.isEmpty else { return }
            pending = kept
            out.sort { ($0.draft.time ?? .min, $0.draft.identifier.value, $0.arrival) < ($1.draft.time ?? .min, $1.draft.identifier.value, $1.arrival) }
            var seen: Set<ObservationDraft.Identifier> = []
            var drafts: [ObservationDraft] = []
            drafts.reserveCapacity(out.count)
            for (draft, _) in out {
                guard seen.insert(draft.identifier).inserted else {
                    plan.skipped[ExportPlan.duplicate, default: 0] += draft.entries
                    continue
                }
                drafts.append(draft)
                plan.observations += 1
                plan.entries += draft.entries
                if draft.identifier.system == ObservationDraft.groupSystem { plan.groupedEntries += draft.entries }
            }
            try emit(drafts)
        }

        /// The local hour or day `time` falls in (one calendar question per hour or day read).
        private mutating func bucket(of time: Int64) -> (start: Int64, end: Int64)? {
            if let interval, interval.start <= time, time < interval.end { return interval }
            switch planner.options.grouping {
            case .none: return nil
            case .hour: interval = calendar.hour(containing: time)
            case .day: interval = { let day = calendar.day(containing: time); return (day.start, day.end) }()
            }
            return interval
        }
    }

    // MARK: One entry

    /// The Observation for one entry; nil when the entry has no LOINC code, unless `withoutLOINC`
    /// (the clinician summary, which names such an entry by its own codes): then `loinc` is empty.
    package func draft(for entry: Entry, withoutLOINC: Bool = false) -> ObservationDraft? {
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
            .map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
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
        let unit = recorded?.trimmingSpaces() ?? ""
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
    package func fhirDateTime(_ time: ClinicalTime) -> String {
        if let valid = Self.isPlainDateTime(time.text) { return valid ? time.text : RFC3339.utc(time.epoch) }
        let range = NSRange(time.text.startIndex..., in: time.text)
        return dateTimePattern.firstMatch(in: time.text, range: range) != nil ? time.text : RFC3339.utc(time.epoch)
    }

    /// The pattern's verdict on the shape nearly every time has, `2026-11-01T08:30:00Z` or with an
    /// offset (`+01:00`), read byte by byte (the regular expression costs an export of millions of
    /// samples seconds); nil for any other shape, which the pattern decides.
    static func isPlainDateTime(_ text: String) -> Bool? {
        let b = Array(text.utf8)
        guard b.count == 20 || b.count == 25 else { return nil }
        func digits(_ range: Range<Int>) -> Int? {
            var n = 0
            for i in range {
                guard (0x30...0x39).contains(b[i]) else { return nil }
                n = n * 10 + Int(b[i] - 0x30)
            }
            return n
        }
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"), b[13] == UInt8(ascii: ":"),
              b[16] == UInt8(ascii: ":"), let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
              let hour = digits(11..<13), let minute = digits(14..<16), let second = digits(17..<19) else { return nil }
        let zone: Bool
        if b.count == 20 {
            guard b[19] == UInt8(ascii: "Z") else { return nil }
            zone = true
        } else {
            guard b[19] == UInt8(ascii: "+") || b[19] == UInt8(ascii: "-"), b[22] == UInt8(ascii: ":"),
                  let zoneHour = digits(20..<22), let zoneMinute = digits(23..<25) else { return nil }
            zone = (zoneHour <= 13 && zoneMinute <= 59) || (zoneHour == 14 && zoneMinute == 0)
        }
        return year >= 1 && (1...12).contains(month) && (1...31).contains(day) && hour <= 23 && minute <= 59 && second <= 60 && zone
    }

    // MARK: Groups

    func groupDraft(_ key: BucketKey, _ bucket: Bucket) -> ObservationDraft {
        var draft = bucket.first
        draft.identifier = .init(system: ObservationDraft.groupSystem, value: "\(patientUUID):\(key.loinc):\(RFC3339.utc(key.start))")
        draft.effective = .period(start: localDateTime(key.start), end: localDateTime(bucket.end))
        draft.healthKitType = bucket.healthKitType
        draft.time = key.start
        draft.entries = bucket.samples
        guard case .quantity(var quantity) = draft.value else { return draft }
        quantity.value = Self.rounded(bucket.total)
        // In the code's unit, which the first reading may not have had (its sum was converted).
        if let ucum = catalog.code(key.loinc)?.ucum, quantity.ucum != ucum {
            (quantity.unit, quantity.ucum) = (catalog.display(ofUCUM: ucum), ucum)
        }
        if key.loinc == ObservationCatalog.steps {
            // A count per hour or per day: a rate in UCUM.
            (quantity.unit, quantity.ucum) = options.grouping == .day ? ("steps/day", "/d") : ("steps/hour", "/h")
        }
        draft.value = .quantity(quantity)
        return draft
    }

    /// RFC 3339 with the local offset of that instant ("2026-11-01T00:00:00+01:00", or Z in UTC).
    func localDateTime(_ epoch: Int64) -> String {
        let offset = Int(DayCalendar.offset(of: zone, at: epoch))
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
