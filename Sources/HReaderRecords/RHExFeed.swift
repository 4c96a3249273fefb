import CLibXML2
import Foundation

/// One patient of an RHEx server's Atom feed, read as hReader read it: the id is the entry's `<id>`,
/// or the last path segment of its `alternate` link when the id is a `tag:` URI; the title is
/// "Last, First".
public struct RHExFeedEntry: Sendable, Equatable {
    public var id: String
    public var title: String
    public var alternate: String?

    /// "Last, First" split as hReader did; a title without a comma is all family name.
    public var name: (first: String, last: String) {
        let parts = title.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        return (parts.count > 1 ? parts[1] : "", parts.first ?? "")
    }
}

/// Parses an Atom feed with libxml2's streaming reader: no network access, no external entities,
/// no DTD loading (a hostile feed cannot make it read files or URLs).
public enum RHExFeed {
    public static func parse(_ data: Data) throws -> [RHExFeedEntry] {
        guard !data.isEmpty else { throw RecordsError.malformed("the patient feed is empty") }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOCDATA.rawValue)
        XMLPolicy.prepareThread()
        let reader: xmlTextReaderPtr? = data.withUnsafeBytes { raw in
            xmlReaderForMemory(raw.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(data.count), nil, nil, options)
        }
        guard let reader else { throw RecordsError.malformed("the patient feed cannot be read as XML") }
        defer { xmlFreeTextReader(reader) }

        var entries: [RHExFeedEntry] = []
        var sawFeed = false
        var current: (id: String, title: String, alternate: String?)?
        var field: String?       // the entry child whose text is being read
        var text = ""
        while true {
            let status = data.withUnsafeBytes { _ in xmlTextReaderRead(reader) }   // keeps `data` alive while reading
            if status == 0 { break }
            guard status == 1 else { throw RecordsError.malformed("the patient feed is not well-formed XML (\(location(reader)))") }
            let type = xmlTextReaderNodeType(reader)
            let name = string(xmlTextReaderConstLocalName(reader)) ?? ""
            switch type {
            case 1:  // element start
                if name == "feed" { sawFeed = true }
                if name == "entry" { current = ("", "", nil); continue }
                guard current != nil else { continue }
                if name == "id" || name == "title" {
                    field = name
                    text = ""
                    if xmlTextReaderIsEmptyElement(reader) == 1 { field = nil }
                } else if name == "link" {
                    var rel = "alternate", href: String?
                    while xmlTextReaderMoveToNextAttribute(reader) == 1 {
                        let attribute = string(xmlTextReaderConstLocalName(reader))
                        let value = string(xmlTextReaderConstValue(reader))
                        if attribute == "rel" { rel = value ?? rel }
                        if attribute == "href" { href = value }
                    }
                    xmlTextReaderMoveToElement(reader)
                    if rel == "alternate", let href { current?.alternate = href }
                }
            case 3, 4:  // text, CDATA
                if field != nil { text += string(xmlTextReaderConstValue(reader)) ?? "" }
            case 15:  // element end
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

    private static func string(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func location(_ reader: xmlTextReaderPtr) -> String {
        "line \(xmlTextReaderGetParserLineNumber(reader))"
    }
}
