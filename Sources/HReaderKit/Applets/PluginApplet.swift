import Foundation
import HReaderJSON
import HReaderModel
import HReaderStore

/// An external applet (DESIGN.md §6, `docs/applets.md`): one JSON request on stdin, one JSON tile on
/// stdout. The request holds the applet's configuration, an opaque token for the patient, the newest
/// entries of the types it is granted (at most `entriesPerType` of each) and nothing else, and the
/// key/value data it stored before; the answer may return `data` to store. Every failure becomes that
/// tile's error.
struct PluginApplet {
    let declaration: AppletDeclaration
    let specification: PluginSpecification

    static let protocolVersion = 1
    static let maximumLines = 50
    static let maximumTextLength = 500
    static let maximumDataKeyLength = 256
    static let maximumDataValueBytes = 64 * 1024
    static let maximumDataKeys = 1000
    /// The newest entries of each granted type a request carries: a person's heart rate is millions of
    /// samples, and neither hreader nor a plugin should hold them all to draw a tile.
    static let entriesPerType = 1000

    /// What came back: the tile, and the data changes to store (nil value: remove the key).
    struct Answer {
        var tile: Tile
        var dataChanges: [(String, String?)]
    }

    /// The entries a plugin is handed, per granted type: the newest `entriesPerType` (not struck,
    /// one per fact) in date order, and whether older ones were left out.
    struct Granted {
        var type: EntryType
        var entries: [Entry]
        var truncated: Bool
    }

    static func grantedEntries(_ types: [EntryType], of patient: Patient, in record: EntryRepository) throws -> [Granted] {
        try types.map { type in
            var newest: [Entry] = []
            var truncated = false
            try record.forEachNewest(patientID: patient.id, types: [type]) { entry in
                guard newest.count < entriesPerType else { truncated = true; return false }
                newest.append(entry)
                return true
            }
            return Granted(type: type, entries: newest.reversed(), truncated: truncated)
        }
    }

    // MARK: The request

    func request(patientToken: String, entryID: (Entry) -> String, entries: [Granted], data: [String: String], now: Date) -> JSONValue {
        let byType = entries.map { granted in
            (granted.type.rawValue, JSONValue.array(granted.entries.map { Self.json($0, id: entryID($0)) }))
        }
        return .object([
            ("protocol", .int(Self.protocolVersion)),
            ("applet", .object([("identifier", .string(declaration.identifier)), ("display_name", .string(declaration.displayName))])),
            ("configuration", .object(JSONObject(declaration.configuration))),
            ("patient", .string(patientToken)),
            ("now", .string(RFC3339.utc(Int64(now.timeIntervalSince1970.rounded(.down))))),
            ("entry_types", .array(entries.map { .string($0.type.rawValue) })),
            ("entries", .object(JSONObject(byType))),
            ("entries_limit", .int(Self.entriesPerType)),
            ("entries_truncated", .array(entries.filter(\.truncated).map { .string($0.type.rawValue) })),
            ("data", .object(JSONObject(sortingKeysOf: data, JSONValue.string))),
        ])
    }

    /// An entry as a plugin sees it: the source's content, without the raw source document or the
    /// user's own notes, under the id this applet knows it by.
    static func json(_ entry: Entry, id: String) -> JSONValue {
        let c = entry.content
        func text(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        let value: JSONValue = c.valueNumber.map(JSONValue.double) ?? text(c.valueText)
        return .object([
            ("id", .string(id)), ("type", .string(c.type.rawValue)), ("description", .string(c.description)),
            ("status", text(c.status)), ("date", text(c.date?.text)), ("start", text(c.start?.text)), ("end", text(c.end?.text)),
            ("codes", .object(JSONObject(sortingKeysOf: c.codes) { .array($0.map(JSONValue.string)) })),
            ("value", value), ("unit", text(c.unit)), ("dose", text(c.dose)), ("reaction", text(c.reaction)),
            ("severity", text(c.severity)),
        ])
    }

    // MARK: Running

    /// The environment a plugin gets: a search path, a private home and temporary directory, the
    /// locale and time zone. Nothing else is inherited: no HREADER_* variables, no secrets.
    static func environment(privateDirectory: String, inherited: [String: String]) -> [String: String] {
        var environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": privateDirectory, "TMPDIR": privateDirectory,
                           "LANG": "C.UTF-8"]
        for key in ["LANG", "LC_ALL", "TZ"] { if let value = inherited[key], !value.isEmpty { environment[key] = value } }
        return environment
    }

    /// Runs `program` (the checked real path of the specification's executable: `PluginTrust`),
    /// directly, never through a shell, with no arguments.
    func run(program: String, patientToken: String, entryID: (Entry) -> String, entries: [Granted], data: [String: String], now: Date) -> Answer {
        let input = Array(request(patientToken: patientToken, entryID: entryID, entries: entries, data: data, now: now).serialized().utf8)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-applet-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            return Answer(tile: failure("cannot create a working directory for the plugin: \(error.localizedDescription)"), dataChanges: [])
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = ChildProcess.run(executable: program,
                                      environment: Self.environment(privateDirectory: directory.path, inherited: ProcessInfo.processInfo.environment),
                                      workingDirectory: directory.path, input: input, timeout: specification.timeout,
                                      outputLimit: specification.maxOutputBytes)
        switch result.ending {
        case let .couldNotStart(why):
            return Answer(tile: failure("the plugin could not start: \(why)"), dataChanges: [])
        case .timedOut:
            return Answer(tile: failure("the plugin did not answer within \(TileFormat.number(specification.timeout)) s and was stopped"), dataChanges: [])
        case .outputTooLarge:
            return Answer(tile: failure("the plugin wrote more than \(specification.maxOutputBytes) bytes and was stopped"), dataChanges: [])
        case .stopped:   // never asked for here (no stop pipe), but a stop is a stop
            return Answer(tile: failure("the plugin was stopped"), dataChanges: [])
        case let .signaled(signal):
            return Answer(tile: failure("the plugin crashed (signal \(signal))"), dataChanges: [])
        case let .exited(status) where status != 0:
            let said = Self.lastLine(of: result.stderr).map { ": \($0)" } ?? ""
            return Answer(tile: failure("the plugin failed with exit status \(status)\(said)"), dataChanges: [])
        case .exited:
            do {
                return try answer(from: result.stdout)
            } catch let error as AnswerError {
                return Answer(tile: failure("the plugin's answer is not a valid tile: \(error.reason)"), dataChanges: [])
            } catch {
                return Answer(tile: failure("the plugin's answer is not a valid tile"), dataChanges: [])
            }
        }
    }

    func failure(_ reason: String) -> Tile {
        Tile.failure(identifier: declaration.identifier, title: declaration.displayName, reason)
    }

    static func lastLine(of bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).last(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else { return nil }
        return sanitized(String(line), limit: 200)
    }

    // MARK: The answer

    struct AnswerError: Error { let reason: String }

    func answer(from stdout: [UInt8]) throws -> Answer {
        let trimmed = String(decoding: stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw AnswerError(reason: "it wrote nothing on stdout") }
        // Parsed by the fuzzed parser (a name given twice: the last counts, as before).
        guard let parsed = try? JSONParser.parse(trimmed, limits: .init(maxDepth: 64, maxBytes: stdout.count + 1)) else {
            throw AnswerError(reason: "stdout is not JSON")
        }
        guard let object = parsed.object else { throw AnswerError(reason: "stdout is JSON but not an object") }

        func string(_ key: String) throws -> String? {
            switch object[key] {
            case nil, .null?: return nil
            case let .string(s)?: return Self.sanitized(s, limit: Self.maximumTextLength)
            default: throw AnswerError(reason: "'\(key)' must be a string")
            }
        }
        if let reported = try string("error") {
            return Answer(tile: failure("the plugin reported: \(reported)"), dataChanges: [])
        }
        var tile = Tile(identifier: declaration.identifier, title: try string("title") ?? declaration.displayName)
        if let status = try string("status") {
            guard let known = Tile.Status(rawValue: status) else { throw AnswerError(reason: "'status' must be normal, attention or unknown") }
            tile.status = known
        }
        let value = object["value"]
        switch value {
        case nil, .null?: break
        case let .string(s)?: tile.value = Self.sanitized(s, limit: Self.maximumTextLength)
        case .number?: tile.value = TileFormat.number(value?.number ?? 0)
        default: throw AnswerError(reason: "'value' must be a string or a number")
        }
        tile.unit = try string("unit")
        tile.updated = try string("updated")
        switch object["lines"] {
        case nil, .null?: break
        case let .array(lines)?:
            let texts = lines.compactMap(\.string)
            guard texts.count == lines.count else { throw AnswerError(reason: "'lines' must be an array of strings") }
            tile.lines = texts.prefix(Self.maximumLines).map { Self.sanitized($0, limit: Self.maximumTextLength) }
            if texts.count > Self.maximumLines { tile.lines.append("\(texts.count - Self.maximumLines) more lines not shown") }
        default: throw AnswerError(reason: "'lines' must be an array of strings")
        }
        return Answer(tile: tile, dataChanges: try dataChanges(object["data"]))
    }

    func dataChanges(_ value: JSONValue?) throws -> [(String, String?)] {
        switch value {
        case nil, .null?: return []
        case let .object(object)?:
            guard object.count <= Self.maximumDataKeys else { throw AnswerError(reason: "'data' has more than \(Self.maximumDataKeys) keys") }
            return try object.keys.sorted().map { key in
                guard !key.isEmpty, key.count <= Self.maximumDataKeyLength else {
                    throw AnswerError(reason: "'data' keys must have 1 to \(Self.maximumDataKeyLength) characters")
                }
                switch object[key] {
                case .null?: return (key, nil)
                case let .string(s)?:
                    guard s.utf8.count <= Self.maximumDataValueBytes else {
                        throw AnswerError(reason: "'data' value '\(key)' is larger than \(Self.maximumDataValueBytes) bytes")
                    }
                    return (key, s)
                default: throw AnswerError(reason: "'data' values must be strings (or null to remove a key)")
                }
            }
        default: throw AnswerError(reason: "'data' must be an object")
        }
    }

    /// Text from a plugin without control characters (no terminal escape sequences), at most `limit` characters.
    static func sanitized(_ text: String, limit: Int) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            out.append(v < 0x20 || (0x7f...0x9f).contains(v) ? " " : scalar)
        }
        let clean = String(out)
        return clean.count > limit ? String(clean.prefix(limit)) + "…" : clean
    }
}
