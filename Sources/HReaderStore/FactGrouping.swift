import Foundation

/// Groups the entries of one person that state the same clinical fact, from different sources
/// (docs/reconciliation.md). Nothing is deleted or rewritten: every copy keeps its row, and
/// `entries.fact_id` points the copies of a group at the one shown (the group's lowest id that its
/// source still has); an entry of its own has no fact_id. Readers show one row per fact
/// (`EntryRepository.list`), and list every copy when asked.
///
/// The grouping is a function of the person's entries and the user's choices only, so it does not
/// depend on the order things were imported in: it is recomputed for the whole person after each
/// import, sync, merge and hand choice.
///
/// Rules (two entries of one type, never struck; one source's record may state a fact twice too, as
/// all imported files share one source, but two undated entries of one record are two facts):
/// - condition: a shared code (system|code) and onset on the same day as written, or both without;
/// - allergy: a shared substance code;
/// - medication: a shared code, or the same normalised name when neither has codes, and
///   overlapping periods;
/// - immunization: a shared code on the same day;
/// - result, vital sign: a shared code at the same instant, with the same value (after unit
///   conversion where the units are of one dimension);
/// - encounter, procedure: a shared code and the same start instant, or both without.
/// The user's splits take an entry out of automatic grouping; joins put two entries in one group.
public struct FactGrouping {
    let db: Database

    public init(_ db: Database) { self.db = db }

    public static let groupedTypes: [EntryType] = [.condition, .allergy, .medication, .immunization, .result, .vitalSign, .encounter, .procedure]

    struct Candidate {
        let id: Int64
        let record: (source: Int64, patient: Int64)
        let type: EntryType
        /// Only for a medication without codes (the rest never compare names).
        let name: String
        let day: String?
        let instant: Int64?
        let start: Int64?
        let end: Int64?
        let valueNumber: Double?
        let valueText: String?
        let unit: String?
        let missing: Bool
        let factID: Int64?
        var codes: [String] = []
    }

    /// Recomputes the groups of one person's entries; returns how many entries changed group.
    @discardableResult
    public func regroup(patientID: Int64) throws -> Int {
        let types = Self.groupedTypes.map { "'\($0.rawValue)'" }.joined(separator: ",")
        var candidates = try db.query("""
            SELECT id, source_id, source_patient_id, type,
                   CASE WHEN type = 'medication' AND codes = '{}' THEN description END,
                   CASE WHEN type IN ('condition', 'immunization') THEN substr(coalesce(date_text, start_text), 1, 10) END,
                   CASE WHEN type = 'condition' THEN substr(coalesce(start_text, date_text), 1, 10) END,
                   coalesce(date_epoch, start_epoch), coalesce(start_epoch, date_epoch), end_epoch,
                   value_number, value_text, unit, missing_at_source IS NOT NULL, fact_id
            FROM entries WHERE patient_id = ? AND user_deleted = 0 AND type IN (\(types))
            ORDER BY id
            """, [patientID]) { s -> Candidate in
            let type = EntryType(rawValue: s.string(3)!) ?? .observation
            // A condition's day is its onset's (start), others' their date's: the first ten characters as written.
            let day = type == .condition ? s.string(6) : s.string(5)
            return Candidate(id: s.int64(0)!, record: (s.int64(1)!, s.int64(2)!), type: type,
                             name: s.string(4).map(Self.normalisedName) ?? "", day: day,
                             instant: s.int64(7), start: s.int64(8), end: s.int64(9),
                             valueNumber: s.double(10), valueText: s.string(11), unit: s.string(12), missing: s.int(13) == 1,
                             factID: s.int64(14))
        }
        var index: [Int64: Int] = [:]
        index.reserveCapacity(candidates.count)
        for (i, c) in candidates.enumerated() { index[c.id] = i }
        // Codes as system|code, unpacked by SQLite's JSON functions (no Swift JSON parse per row).
        try db.query("""
            SELECT e.id, j.key || '|' || c.value FROM entries e, json_each(e.codes) j, json_each(j.value) c
            WHERE e.patient_id = ? AND e.user_deleted = 0 AND e.type IN (\(types)) AND e.codes <> '{}'
              AND json_valid(e.codes) AND j.type = 'array'
            """, [patientID]) { ($0.int64(0)!, $0.string(1) ?? "") }.forEach { id, token in
            if let i = index[id] { candidates[i].codes.append(token) }
        }
        let splits = Set(try db.query("""
            SELECT f.entry_id FROM fact_splits f JOIN entries e ON e.id = f.entry_id WHERE e.patient_id = ?
            """, [patientID]) { $0.int64(0)! })
        let joins = try db.query("""
            SELECT j.entry_id, j.other_id FROM fact_joins j JOIN entries a ON a.id = j.entry_id JOIN entries b ON b.id = j.other_id
            WHERE a.patient_id = ? AND b.patient_id = ? AND a.user_deleted = 0 AND b.user_deleted = 0
            """, [patientID, patientID]) { ($0.int64(0)!, $0.int64(1)!) }

        var groups = UnionFind(candidates.map(\.id))
        var buckets: [String: [Int]] = [:]
        for (i, c) in candidates.enumerated() where !splits.contains(c.id) {
            for key in Self.bucketKeys(c) { buckets[key, default: []].append(i) }
        }
        for members in buckets.values where members.count > 1 {
            for (i, a) in members.enumerated() {
                for b in members[(i + 1)...] where Self.sameFact(candidates[a], candidates[b]) {
                    groups.union(candidates[a].id, candidates[b].id)
                }
            }
        }
        for (a, b) in joins { groups.union(a, b) }

        // The shown copy of each group: the lowest id its source still has, else the lowest.
        var members: [Int64: [Candidate]] = [:]
        for c in candidates { members[groups.find(c.id), default: []].append(c) }
        var wanted: [Int64: Int64] = [:]
        for group in members.values where group.count > 1 {
            let shown = (group.first { !$0.missing } ?? group[0]).id
            for c in group { wanted[c.id] = shown }
        }
        // What is stored now: the candidates' fact ids, and any other entry of the person still in a
        // group (struck since, or of a kind no rule groups).
        var current = candidates.map { ($0.id, $0.factID) }
        current += try db.query("""
            SELECT id, fact_id FROM entries WHERE patient_id = ? AND fact_id IS NOT NULL
              AND (user_deleted = 1 OR type NOT IN (\(types)))
            """, [patientID]) { ($0.int64(0)!, $0.int64(1)) }
        let update = try db.prepare("UPDATE entries SET fact_id = ? WHERE id = ?")
        var changed = 0
        for (id, factID) in current where factID != wanted[id] {
            try update.bind([wanted[id], id])
            try update.step()
            update.reset()
            changed += 1
        }
        return changed
    }

    /// The user says an entry is a fact of its own: it leaves its group and no rule groups it again
    /// (re-imports and sync keep the choice); joins made with it before are forgotten.
    public func split(entryID: Int64) throws {
        try db.execute("INSERT OR IGNORE INTO fact_splits (entry_id) VALUES (?)", [entryID])
        try db.execute("DELETE FROM fact_joins WHERE entry_id = ?1 OR other_id = ?1", [entryID])
    }

    /// The user says two entries state one fact: their groups become one, whatever the rules say.
    public func join(_ a: Int64, _ b: Int64) throws {
        guard a != b else { return }
        try db.execute("INSERT OR IGNORE INTO fact_joins (entry_id, other_id) VALUES (?, ?)", [min(a, b), max(a, b)])
    }

    /// The keys under which an entry may meet its copies: every code (or, for a medication without
    /// codes, its name), with the part of the time its rule compares exactly.
    static func bucketKeys(_ c: Candidate) -> [String] {
        let time: String
        switch c.type {
        case .condition, .immunization: time = c.day ?? "-"
        case .result, .vitalSign: guard let instant = c.instant else { return [] }; time = String(instant)
        case .encounter, .procedure: time = c.start.map(String.init) ?? "-"
        default: time = ""
        }
        if c.codes.isEmpty {
            guard c.type == .medication, !c.name.isEmpty else { return [] }
            return ["\(c.type.rawValue) name:\(c.name)"]
        }
        return c.codes.map { "\(c.type.rawValue) \($0) \(time)" }
    }

    /// Whether two entries met in a bucket state one fact.
    static func sameFact(_ a: Candidate, _ b: Candidate) -> Bool {
        guard a.type == b.type else { return false }
        if a.record == b.record {
            // Within one record only a dated restatement is one fact (two undated procedures are two).
            switch a.type {
            case .condition, .immunization: if a.day == nil { return false }
            case .encounter, .procedure: if a.start == nil { return false }
            default: break
            }
        }
        switch a.type {
        case .condition, .immunization: return a.day == b.day
        case .allergy: return true
        case .medication:
            let aStart = a.start ?? Int64.min, aEnd = a.end ?? Int64.max
            let bStart = b.start ?? Int64.min, bEnd = b.end ?? Int64.max
            return aStart <= bEnd && bStart <= aEnd
        case .result, .vitalSign:
            guard a.instant == b.instant else { return false }
            return sameValue(a, b)
        case .encounter, .procedure: return a.start == b.start
        default: return false
        }
    }

    static func sameValue(_ a: Candidate, _ b: Candidate) -> Bool {
        switch (a.valueNumber, b.valueNumber) {
        case (nil, nil):
            return normalisedName(a.valueText ?? "") == normalisedName(b.valueText ?? "")
        case let (x?, y?):
            return UnitConversion.sameQuantity(x, a.unit, y, b.unit)
        default:
            return false
        }
    }

    /// Lowercased, accents and punctuation folded, runs of spaces as one.
    static func normalisedName(_ text: String) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var out = ""
        var space = false
        for scalar in folded.unicodeScalars {
            if CharacterSet.alphanumerics.contains(scalar) || scalar == "." {
                if space, !out.isEmpty { out.append(" ") }
                out.unicodeScalars.append(scalar)
                space = false
            } else {
                space = true
            }
        }
        return out
    }
}

/// Disjoint sets over entry ids, for grouping.
struct UnionFind {
    private var parent: [Int64: Int64] = [:]

    init(_ ids: [Int64]) { for id in ids { parent[id] = id } }

    mutating func find(_ id: Int64) -> Int64 {
        var root = id
        while let up = parent[root], up != root { root = up }
        var node = id
        while let up = parent[node], up != root { parent[node] = root; node = up }
        return root
    }

    /// Joins two sets; the smaller id becomes the root, so the result does not depend on order.
    mutating func union(_ a: Int64, _ b: Int64) {
        guard parent[a] != nil, parent[b] != nil else { return }
        let ra = find(a), rb = find(b)
        guard ra != rb else { return }
        if ra < rb { parent[rb] = ra } else { parent[ra] = rb }
    }
}

/// Comparing measured values across sources that write units differently (UCUM and the common
/// spellings): within one dimension, by a factor (and, for temperatures, an offset).
public enum UnitConversion {
    /// unit spelling → (dimension, factor to the dimension's base, offset added after the factor).
    static let units: [String: (dimension: String, factor: Double, offset: Double)] = [
        "kg": ("mass", 1000, 0), "g": ("mass", 1, 0), "mg": ("mass", 0.001, 0), "ug": ("mass", 1e-6, 0),
        "[lb_av]": ("mass", 453.59237, 0), "lb": ("mass", 453.59237, 0), "lbs": ("mass", 453.59237, 0),
        "[oz_av]": ("mass", 28.349523125, 0), "oz": ("mass", 28.349523125, 0),
        "m": ("length", 100, 0), "cm": ("length", 1, 0), "mm": ("length", 0.1, 0),
        "[in_i]": ("length", 2.54, 0), "in": ("length", 2.54, 0), "[ft_i]": ("length", 30.48, 0), "ft": ("length", 30.48, 0),
        "cel": ("temperature", 1, 0), "°c": ("temperature", 1, 0), "degc": ("temperature", 1, 0),
        "[degf]": ("temperature", 5.0 / 9.0, -32 * 5.0 / 9.0), "°f": ("temperature", 5.0 / 9.0, -32 * 5.0 / 9.0),
        "degf": ("temperature", 5.0 / 9.0, -32 * 5.0 / 9.0),
        "l": ("volume", 1000, 0), "dl": ("volume", 100, 0), "ml": ("volume", 1, 0),
        "mg/dl": ("mass concentration", 10, 0), "g/dl": ("mass concentration", 10000, 0), "g/l": ("mass concentration", 1000, 0),
        "mg/l": ("mass concentration", 1, 0),
        "mmol/l": ("substance concentration", 1, 0), "umol/l": ("substance concentration", 0.001, 0),
        "mm[hg]": ("pressure", 1, 0), "mmhg": ("pressure", 1, 0), "kpa": ("pressure", 7.500617, 0),
        "/min": ("rate", 1, 0), "{beats}/min": ("rate", 1, 0), "beats/min": ("rate", 1, 0), "bpm": ("rate", 1, 0),
        "{breaths}/min": ("rate", 1, 0), "count/min": ("rate", 1, 0),
        "kg/m2": ("mass per area", 1, 0), "kg/m^2": ("mass per area", 1, 0),
    ]

    /// Whether two measured values are one quantity: equal in one unit, or equal to the rounding
    /// a conversion brings (0.1 %) in two units of one dimension.
    public static func sameQuantity(_ a: Double, _ unitA: String?, _ b: Double, _ unitB: String?) -> Bool {
        let ua = (unitA ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let ub = (unitB ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        if ua == ub { return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1) }
        guard let x = units[ua], let y = units[ub], x.dimension == y.dimension else { return false }
        let ca = a * x.factor + x.offset, cb = b * y.factor + y.offset
        return abs(ca - cb) <= 1e-3 * max(abs(ca), abs(cb), 1e-9)
    }
}
