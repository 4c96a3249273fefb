/// What the mapping makes of every sample of one series.
public struct SeriesMapping: Sendable {
    public var type: EntryType
    public var description: String
    public var codes: [String: [String]]

    public init(type: EntryType, description: String, codes: [String: [String]]) {
        self.type = type; self.description = description; self.codes = codes
    }
}

/// Writes Apple Health `Record` elements of one patient and source as samples (migration 3): one
/// short row per sample, clustered by series and time, with the series written once. Prepared
/// statements are reused; per sample there is no JSON, no uuid and no lookup unless the row exists.
///
///     let writer = try SampleWriter(db, patientID: 1, sourceID: 2)
///     if let (outcome, type) = try writer.add(attributes: a, metadata: m, mapping: map) { … } else { /* store as an entry */ }
///     try writer.finish()
public final class SampleWriter {
    /// Sample ids start here; entries' ids (SQLite rowids, from 1) stay far below.
    public static let firstID: Int64 = 1 << 40

    private let db: Database
    private let patientID: Int64
    private let sourceID: Int64
    /// A series by its strings and its layout (4 bits an attribute, in document order).
    private struct SeriesKey: Hashable {
        var type, sourceName, sourceVersion, device, unit: String
        var layout: UInt64
    }

    /// The attributes a sample's columns hold, by their 4-bit layout code (0 ends a layout).
    private static let layoutNames = ["", "type", "sourceName", "sourceVersion", "device", "unit", "creationDate", "startDate", "endDate", "value"]

    private static func layoutText(_ code: UInt64) -> String {
        var names: [String] = [], rest = code
        while rest != 0 { names.append(layoutNames[Int(rest & 0xF)]); rest >>= 4 }
        return names.reversed().joined(separator: ",")
    }

    private static func layoutCode(_ text: String) -> UInt64? {
        var code: UInt64 = 0
        for name in text.split(separator: ",") {
            guard let index = layoutNames.firstIndex(of: String(name)), index > 0 else { return nil }
            code = code << 4 | UInt64(index)
        }
        return code
    }

    private var series: [SeriesKey: (id: Int64, type: EntryType, span: Int64, storedSpan: Int64)] = [:]
    private var nextID: Int64
    private let insert: Statement
    private let update: Statement

    public init(_ db: Database, patientID: Int64, sourceID: Int64) throws {
        self.db = db
        self.patientID = patientID
        self.sourceID = sourceID
        nextID = max(Self.firstID, (try db.scalarInt("SELECT max(id) FROM samples") ?? 0) + 1)
        insert = try db.prepare("""
            INSERT OR IGNORE INTO samples (series_id, start_epoch, end_epoch, value, id, utc_offset, end_offset, creation_epoch,
                creation_offset, device_address, extras) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        update = try db.prepare("""
            UPDATE samples SET utc_offset = ?5, end_offset = ?6, creation_epoch = ?7, creation_offset = ?8, device_address = ?9, extras = ?10
            WHERE series_id = ?1 AND start_epoch = ?2 AND end_epoch = ?3 AND value = ?4
              AND (utc_offset IS NOT ?5 OR end_offset IS NOT ?6 OR creation_epoch IS NOT ?7 OR creation_offset IS NOT ?8
                   OR device_address IS NOT ?9 OR extras IS NOT ?10)
            """)
        try loadSeries()
    }


    /// Stores one Record as a sample. Nil when it does not fit the samples' columns exactly (an
    /// attribute they cannot name, a date not in the export's format, an attribute twice): the
    /// caller stores it as an entry, as before.
    public func add(attributes: [(name: String, value: String)], metadata: [(key: String, value: String)],
                    mapping: (String) -> SeriesMapping) throws -> (UpsertOutcome, EntryType)? {
        var type: String?, sourceName = "", sourceVersion = "", device = "", unit = "", value: String?
        var start: (epoch: Int64, offsetMinutes: Int)?, end: (epoch: Int64, offsetMinutes: Int)?
        var creation: (epoch: Int64, offsetMinutes: Int)?
        var deviceAddress: Int64?
        var layout: UInt64 = 0
        var seen: UInt16 = 0
        for (name, text) in attributes {
            let bit: UInt16
            switch name {
            case "type": bit = 1; type = text
            case "sourceName": bit = 2; sourceName = text
            case "sourceVersion": bit = 4; sourceVersion = text
            case "device":
                bit = 8
                (device, deviceAddress) = DeviceAddress.split(text)
            case "unit": bit = 16; unit = text
            case "creationDate":
                bit = 32
                guard let t = AppleHealthDate.parse(text, exact: true) else { return nil }
                creation = t
            case "startDate":
                bit = 64
                guard let t = AppleHealthDate.parse(text, exact: true) else { return nil }
                start = t
            case "endDate":
                bit = 128
                guard let t = AppleHealthDate.parse(text, exact: true) else { return nil }
                end = t
            case "value": bit = 256; value = text
            default: return nil
            }
            guard seen & bit == 0 else { return nil }
            seen |= bit
            layout = layout << 4 | UInt64(bit.trailingZeroBitCount + 1)
        }
        guard let type, !type.isEmpty, let start else { return nil }
        let endEpoch = end?.epoch ?? start.epoch

        let seriesKey = SeriesKey(type: type, sourceName: sourceName, sourceVersion: sourceVersion, device: device, unit: unit, layout: layout)
        var found = series[seriesKey]
        if found == nil {
            let m = mapping(type)
            try db.execute("""
                INSERT INTO sample_series (patient_id, source_id, hk_type, source_name, source_version, device, unit, layout, type,
                    description, codes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [patientID, sourceID, type, sourceName, sourceVersion, device, unit, Self.layoutText(layout), m.type.rawValue, m.description,
                      CodesJSON.encode(m.codes)])
            found = (db.lastInsertRowID, m.type, 0, 0)
            series[seriesKey] = found
        }
        let span = endEpoch - start.epoch
        if span > found!.span { series[seriesKey]!.span = span }

        var extras: String?
        if !metadata.isEmpty {
            var text = ""
            for (i, entry) in metadata.enumerated() {
                // XML forbids these control characters in attribute values, so they cannot occur inside.
                if i > 0 { text += "\u{1E}" }
                text += entry.key + "\u{1F}" + entry.value
            }
            extras = text
        }
        let stored = SampleValue.stored(value)
        let arguments: [DatabaseValueConvertible?] = [
            found!.id, start.epoch, endEpoch, stored, nextID, start.offsetMinutes,
            end.flatMap { $0.offsetMinutes == start.offsetMinutes ? nil : Int64($0.offsetMinutes) },
            creation?.epoch, creation.flatMap { $0.offsetMinutes == start.offsetMinutes ? nil : Int64($0.offsetMinutes) }, deviceAddress, extras,
        ]
        try insert.bind(arguments)
        try insert.step()
        insert.reset()
        if db.changes > 0 {
            nextID += 1
            return (.inserted, found!.type)
        }
        let key: [DatabaseValueConvertible?] = [found!.id, start.epoch, endEpoch, stored]
        try update.bind(key + Array(arguments[5...]))
        try update.step()
        update.reset()
        return (db.changes > 0 ? .updated : .unchanged, found!.type)
    }

    /// Forgets the series it knows and reads them again (after a rollback to a savepoint).
    func forgetSeries() throws {
        series = [:]
        nextID = max(Self.firstID, (try db.scalarInt("SELECT max(id) FROM samples") ?? 0) + 1)
        try loadSeries()
    }

    private func loadSeries() throws {
        for row in try db.query("""
            SELECT id, hk_type, source_name, source_version, device, unit, layout, type, max_span FROM sample_series
            WHERE patient_id = ? AND source_id = ?
            """, [patientID, sourceID], { s in
                (Self.layoutCode(s.string(6)!).map { SeriesKey(type: s.string(1)!, sourceName: s.string(2)!, sourceVersion: s.string(3)!,
                                                                device: s.string(4)!, unit: s.string(5)!, layout: $0) },
                 s.int64(0)!, EntryType(rawValue: s.string(7)!) ?? .observation, s.int64(8)!)
            }) {
            if let key = row.0 { series[key] = (row.1, row.2, row.3, row.3) }
        }
    }

    /// Writes what the series learnt (their longest span, for range reads). Call before the transaction ends.
    public func finish() throws {
        for (key, s) in series where s.span > s.storedSpan {
            try db.execute("UPDATE sample_series SET max_span = max(max_span, ?) WHERE id = ?", [s.span, s.id])
            series[key]!.storedSpan = s.span
        }
    }
}

/// A sample's value: a REAL when its text reads back the same (`72`, `0.98`), else the text itself
/// (`72.50`, `HKCategoryValueSeverityModerate`); '' as a text when the Record has no value (its
/// series' layout says so).
enum SampleValue {
    static func stored(_ text: String?) -> DatabaseValue {
        guard let text, !text.isEmpty else { return .text("") }
        if let number = Double(text), number.isFinite, plain(number) == text { return .real(number) }
        return .text(text)
    }

    static func plain(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }
}

/// A HealthKit device as exports write it, `<<HKDevice: 0x2a8f52a90>, name:Apple Watch, …>`, carries the
/// address of an object in memory, different in every sample: it is kept per sample, the rest per series.
enum DeviceAddress {
    static let prefix = "<<HKDevice: 0x"

    /// The device without its address, and the address; the text unchanged (and nil) when it does not
    /// read back exactly (upper-case digits, leading zeros, more than 15 digits).
    static func split(_ text: String) -> (String, Int64?) {
        guard text.hasPrefix(prefix) else { return (text, nil) }
        let rest = text.dropFirst(prefix.count)
        let hex = rest.prefix { $0.isHexDigit }
        guard !hex.isEmpty, hex.count <= 15, let address = Int64(hex, radix: 16), String(address, radix: 16) == hex else { return (text, nil) }
        return (prefix + rest.dropFirst(hex.count), address)
    }

    static func joined(_ device: String, _ address: Int64?) -> String {
        guard let address, device.hasPrefix(prefix) else { return device }
        return prefix + String(address, radix: 16) + device.dropFirst(prefix.count)
    }
}
