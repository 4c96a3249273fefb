import Foundation
import HReaderJSON
import NIOHTTP1

/// One hData c32 record, kept as the exact bytes served (files from --rhex-records are not rewritten).
struct RHExRecord: Sendable {
    let id: String
    let first: String
    let last: String
    /// Atom `updated`, from the record's effective_time.
    let updated: String
    let bytes: [UInt8]

    /// "Last, First" for the feed; the id when the record names nobody.
    var title: String { first.isEmpty && last.isEmpty ? id : "\(last), \(first)" }

    init(id: String, first: String, last: String, updated: String, bytes: [UInt8]) {
        self.id = id; self.first = first; self.last = last; self.updated = updated; self.bytes = bytes
    }

    init(id: String, json: JSONValue?, bytes: [UInt8]) {
        self.id = id
        first = json?["first"]?.string ?? ""
        last = json?["last"]?.string ?? ""
        if case .number(let text)? = json?["effective_time"], let seconds = Double(text) {
            updated = Clock.iso8601(epochSeconds: Int64(seconds))
        } else {
            updated = "2013-01-01T00:00:00Z"
        }
        self.bytes = bytes
    }
}

/// What the feed (and the record URLs) call a record: its `_id`, or a name of its own, as a server
/// that keeps each record in a file (`hs.json`) names it by the file.
enum RHExFeedIDs: String, Sendable {
    case record
    case file
}

struct RHExStore: Sendable {
    let records: [RHExRecord]
    private let positions: [String: Int]

    init(records: [RHExRecord]) {
        var kept: [RHExRecord] = []
        var positions: [String: Int] = [:]
        for record in records where positions[record.id] == nil {
            positions[record.id] = kept.count
            kept.append(record)
        }
        self.records = kept
        self.positions = positions
    }

    func record(_ id: String) -> RHExRecord? { positions[id].map { records[$0] } }

    /// The same records named by their file names: `jd` for Jane Doe (a number added when two share
    /// initials), whatever their `_id`.
    func namedAsFiles() -> RHExStore {
        var used: [String: Int] = [:]
        return RHExStore(records: records.map { record in
            let initials = [record.first, record.last].compactMap(\.first).map { String($0).lowercased() }.joined()
            let stem = initials.isEmpty ? "record" : initials
            used[stem, default: 0] += 1
            let name = used[stem]! == 1 ? stem : "\(stem)\(used[stem]!)"
            return RHExRecord(id: name, first: record.first, last: record.last, updated: record.updated, bytes: record.bytes)
        })
    }

    /// Every `*.json` in `directory`, by file name; id = the `_id` string member, else the file name
    /// (`feedIDs` .file: always the file name).
    /// A file that is not valid JSON is still served as it is (clients must cope with such servers).
    static func load(directory: String, feedIDs: RHExFeedIDs = .record) throws(Options.UsageError) -> RHExStore {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            throw Options.UsageError(message: "--rhex-records: cannot list '\(directory)': \(error.localizedDescription)", showUsage: false)
        }
        var records: [RHExRecord] = []
        for name in names {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw Options.UsageError(message: "--rhex-records: cannot read '\(path)'", showUsage: false)
            }
            let bytes = [UInt8](data)
            let json = try? JSONParser.parse(bytes)
            let fileName = String(name.dropLast(".json".count))
            let id = feedIDs == .file ? fileName : json?["_id"]?.string ?? fileName
            records.append(RHExRecord(id: id, json: json, bytes: bytes))
        }
        return RHExStore(records: records)
    }
}

/// What an RHEx request asks for (decided first, so fault modes can pick the record fetches).
enum RHExRoute {
    case feed
    case recordInfo(id: String)
    case root(id: String)
    case sectionFeed(id: String)
    case document(id: String)
    case failure(status: HTTPResponseStatus, message: String)
}

/// The hData REST API as hReader (2013) read it: an Atom feed of records, each with a c32 JSON document.
struct RHExAPI: Sendable {
    let store: RHExStore

    static func route(_ request: HTTPRequest, segments: [String]) -> RHExRoute {
        guard request.method == .GET else {
            return .failure(status: .methodNotAllowed, message: "\(request.method.rawValue) is not supported here")
        }
        switch segments.count {
        case 0: return .feed
        case 1 where segments[0] == "records": return .feed
        case 2 where segments[0] == "records": return .recordInfo(id: segments[1])
        case 3 where segments[0] == "records" && segments[2] == "root.xml": return .root(id: segments[1])
        case 3 where segments[0] == "records" && segments[2] == "c32": return .sectionFeed(id: segments[1])
        case 4 where segments[0] == "records" && segments[2] == "c32"
            && (segments[3] == segments[1] + ".json" || segments[3] == segments[1]):
            return .document(id: segments[1])
        default: return .failure(status: .notFound, message: "No such RHEx URL: \(request.path)")
        }
    }

    func execute(_ route: RHExRoute, base: String) -> HTTPResponse {
        switch route {
        case .feed:
            return Self.atom(feed(base: base))
        case .recordInfo(let id):
            guard let record = store.record(id) else { return Self.unknown(id) }
            return Self.atom(recordFeed(record, base: base))
        case .root(let id):
            guard let record = store.record(id) else { return Self.unknown(id) }
            return HTTPResponse(status: .ok, contentType: "application/xml", text: root(record))
        case .sectionFeed(let id):
            guard let record = store.record(id) else { return Self.unknown(id) }
            return Self.atom(sectionFeed(record, base: base))
        case .document(let id):
            guard let record = store.record(id) else { return Self.unknown(id) }
            return HTTPResponse(status: .ok, contentType: "application/json", body: record.bytes)
        case .failure(let status, let message):
            return Self.error(status, "not_found", message)
        }
    }

    static func error(_ status: HTTPResponseStatus, _ code: String, _ description: String, headers: [(String, String)] = []) -> HTTPResponse {
        let body: JSONValue = ["error": .string(code), "error_description": .string(description)]
        return HTTPResponse(status: status, contentType: "application/json", body: body.serializedBytes(), headers: headers)
    }

    private static func unknown(_ id: String) -> HTTPResponse { error(.notFound, "not_found", "No record '\(id)'") }

    private static func atom(_ xml: String) -> HTTPResponse {
        HTTPResponse(status: .ok, contentType: "application/atom+xml; charset=utf-8", text: xml)
    }

    // MARK: Documents

    /// Records at even positions get a `tag:` id, so a client must read the record id from the
    /// alternate link rather than trust `<id>`, as it had to with real servers.
    private func feed(base: String) -> String {
        let updated = store.records.map(\.updated).max() ?? "2013-01-01T00:00:00Z"
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>hReader sample records</title>
              <id>tag:hreader-sample.invalid,2013:records</id>
              <updated>\(updated)</updated>
              <link rel="self" href="\(XMLText.escape(base))/records"/>

            """
        for (position, record) in store.records.enumerated() {
            let id = position % 2 == 0 ? "tag:hreader-sample.invalid,2013:record/\(record.id)" : record.id
            xml += """
                  <entry>
                    <title>\(XMLText.escape(record.title))</title>
                    <id>\(XMLText.escape(id))</id>
                    <updated>\(record.updated)</updated>
                    <link rel="alternate" href="\(XMLText.escape("\(base)/records/\(URLText.encodeComponent(record.id))"))"/>
                  </entry>

                """
        }
        return xml + "</feed>\n"
    }

    private func recordFeed(_ record: RHExRecord, base: String) -> String {
        let recordURL = "\(base)/records/\(URLText.encodeComponent(record.id))"
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>\(XMLText.escape(record.title))</title>
              <id>\(XMLText.escape(record.id))</id>
              <updated>\(record.updated)</updated>
              <link rel="self" href="\(XMLText.escape(recordURL))"/>
              <entry>
                <title>C32</title>
                <id>\(XMLText.escape(record.id))/c32</id>
                <updated>\(record.updated)</updated>
                <link rel="alternate" href="\(XMLText.escape(recordURL))/c32"/>
              </entry>
            </feed>

            """
    }

    private func sectionFeed(_ record: RHExRecord, base: String) -> String {
        let section = "\(base)/records/\(URLText.encodeComponent(record.id))/c32"
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>C32</title>
              <id>\(XMLText.escape(record.id))/c32</id>
              <updated>\(record.updated)</updated>
              <entry>
                <title>\(XMLText.escape(record.title))</title>
                <id>\(XMLText.escape(record.id))</id>
                <updated>\(record.updated)</updated>
                <link rel="alternate" type="application/json" href="\(XMLText.escape("\(section)/\(URLText.encodeComponent(record.id)).json"))"/>
              </entry>
            </feed>

            """
    }

    /// hData's root document: one c32 section.
    private func root(_ record: RHExRecord) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <root xmlns="http://projecthdata.org/hdata/schemas/2009/06/core">
          <id>\(XMLText.escape(record.id))</id>
          <version>1.0</version>
          <created>\(record.updated)</created>
          <lastModified>\(record.updated)</lastModified>
          <extensions>
            <extension extensionId="1">http://projecthdata.org/extension/c32</extension>
          </extensions>
          <sections>
            <section path="c32" name="C32" extensionId="1"/>
          </sections>
        </root>

        """
    }
}
