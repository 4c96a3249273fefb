import Foundation

/// One patient of an RHEx server's Atom feed, read as hReader read it: the id is the entry's `<id>`,
/// or the last path segment of its `alternate` link when the id is a `tag:` URI; the title is
/// "Last, First".
public struct RHExFeedEntry: Sendable, Equatable {
    public var id: String
    public var title: String
    public var alternate: String?

    public init(id: String, title: String, alternate: String?) {
        self.id = id; self.title = title; self.alternate = alternate
    }

    /// "Last, First" split as hReader did; a title without a comma is all family name.
    public var name: (first: String, last: String) {
        let parts = title.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        return (parts.count > 1 ? parts[1] : "", parts.first ?? "")
    }
}

/// Parses an Atom feed with libxml2's streaming reader (`XMLTextReader`, under `XMLPolicy`): no
/// network access, no external entities, no DTD loading (a hostile feed cannot make it read files or URLs).
public enum RHExFeed {
    public static func parse(_ data: Data) throws -> [RHExFeedEntry] {
        guard !data.isEmpty else { throw RecordsError.malformed("the patient feed is empty") }
        let reader = try XMLTextReader(data, what: "the patient feed")

        var entries: [RHExFeedEntry] = []
        var sawFeed = false
        var current: (id: String, title: String, alternate: String?)?
        var field: String?       // the entry child whose text is being read
        var text = ""
        while try reader.read() {
            let name = reader.localName
            switch reader.nodeType {
            case .elementStart:
                if name == "feed" { sawFeed = true }
                if name == "entry" { current = ("", "", nil); continue }
                guard current != nil else { continue }
                if name == "id" || name == "title" {
                    field = name
                    text = ""
                    if reader.isEmptyElement { field = nil }
                } else if name == "link" {
                    var rel = "alternate", href: String?
                    for attribute in reader.attributes() {
                        if attribute.localName == "rel" { rel = attribute.value }
                        if attribute.localName == "href" { href = attribute.value }
                    }
                    if rel == "alternate", let href { current?.alternate = href }
                }
            case .text, .cdata:
                if field != nil { text += reader.value }
            case .elementEnd:
                if name == "entry", let entry = current {
                    current = nil
                    var id = entry.id.trimmingCharacters(in: .whitespacesAndNewlines)
                    if id.hasPrefix("tag:") || id.isEmpty, let alternate = entry.alternate,
                       let last = URL(string: alternate)?.lastPathComponent, !last.isEmpty, last != "/" {
                        id = last
                    }
                    guard !id.isEmpty else { throw RecordsError.malformed("a patient feed entry has neither an id nor an alternate link") }
                    entries.append(RHExFeedEntry(id: id, title: entry.title.trimmingCharacters(in: .whitespacesAndNewlines),
                                                 alternate: entry.alternate))
                } else if let f = field, name == f {
                    if f == "id" { current?.id = text } else { current?.title = text }
                    field = nil
                }
            default:
                continue
            }
        }
        guard sawFeed else { throw RecordsError.malformed("the patient feed is XML but not an Atom feed") }
        return entries
    }
}
