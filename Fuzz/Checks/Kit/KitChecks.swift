// The invariants the libFuzzer harness `fuzz-kit` checks, replayed by HReaderCLITests over
// Tests/HReaderCLITests/Fuzz/<harness>/ (docs/security.md, "Fuzzing"). Needs a testable build
// (debug, or `make fuzz`'s -enable-testing -DFUZZING); a plain release build compiles this to nothing.
#if DEBUG || FUZZING
import Foundation
import FuzzDriver
import HReaderJSON
@testable import HReaderKit
import HReaderModel
import HReaderRecords
import HReaderStore

public enum KitFuzzChecks {
    public static let all: [FuzzHarness] = [
        ("applet-plist", appletPlist), ("timeline-post", timelinePost), ("apple-health-zip", appleHealthZip),
        ("backup-header", backupHeader), ("key-file", keyFile),
    ]

    // MARK: 5. Applet registry

    /// Declarations or an HReaderError; every declaration is well formed and identifiers are unique.
    /// First, the property list itself: a value or a RecordsError, and a value written back as an
    /// XML plist reads as the same value (the XML and binary readers agree on whatever they read).
    public static func appletPlist(_ data: Data) throws {
        try propertyListRoundTrip(data)
        let declarations: [AppletDeclaration]
        do {
            declarations = try AppletRegistry.parse(data, origin: "fuzz.plist", pluginsDirectory: URL(fileURLWithPath: "/nonexistent-fuzz"))
        } catch is HReaderError {
            return
        } catch {
            throw FuzzViolation("AppletRegistry.parse threw \(type(of: error)): \(error)")
        }
        var identifiers: Set<String> = []
        for (i, d) in declarations.enumerated() {
            guard AppletRegistry.isReverseDNS(d.identifier) else { throw FuzzViolation("identifier \(d.identifier.debugDescription) is not reverse-DNS") }
            guard identifiers.insert(d.identifier).inserted else { throw FuzzViolation("identifier \(d.identifier) declared twice") }
            guard !d.displayName.trimmingCharacters(in: .whitespaces).isEmpty else { throw FuzzViolation("an empty display_name") }
            guard d.entryNumber == i + 1 else { throw FuzzViolation("entry number \(d.entryNumber) at \(i + 1)") }
            let keys = d.configuration.map(\.0)
            guard keys == keys.sorted(), AppletRegistry.reservedKeys.isDisjoint(with: keys) else {
                throw FuzzViolation("configuration keys \(keys) are unsorted or reserved")
            }
            if case let .plugin(plugin) = d.implementation {
                guard plugin.timeout > 0, plugin.timeout <= PluginSpecification.maximumTimeout,
                      (1024...PluginSpecification.maximumMaxOutputBytes).contains(plugin.maxOutputBytes),
                      plugin.executable.hasPrefix("/") else {
                    throw FuzzViolation("plugin limits out of bounds: \(plugin)")
                }
                guard d.className == nil else { throw FuzzViolation("a plugin with a class_name") }
            }
            for (_, value) in d.configuration { _ = value.serialized() }
        }
    }

    static func propertyListRoundTrip(_ data: Data) throws {
        let value: PropertyList
        do {
            value = try PropertyList.read(data)
        } catch is RecordsError {
            return
        } catch {
            throw FuzzViolation("PropertyList.read threw \(type(of: error)): \(error)")
        }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">"
        guard PropertyListXMLWriter.write(value, into: &xml) else { return }  // a value XML cannot carry
        xml += "</plist>\n"
        let again: PropertyList
        do {
            again = try PropertyList.read(Data(xml.utf8))
        } catch {
            throw FuzzViolation("written back as XML, the property list does not read: \(error)\n\(xml)")
        }
        guard PropertyListXMLWriter.same(value, again) else {
            throw FuzzViolation("written back as XML, the property list reads differently:\n\(value)\n\(again)")
        }
    }

    // MARK: 6. Timeline POST body

    /// The first line is the `?key=`, the rest the JSON body, read as `POST timeline.json` reads it.
    /// What is stored (`JSONValue(foundation:)`, serialized) must read back with the JSON core (as the
    /// timeline query reads it) as the same object, serialize the same again, and read with
    /// JSONSerialization too, with the same keys.
    public static func timelinePost(_ data: Data) throws {
        let newline = data.firstIndex(of: 0x0A) ?? data.endIndex
        let key = String(decoding: data[data.startIndex..<newline], as: UTF8.self)
        let body = newline < data.endIndex ? data[(newline + 1)...] : Data()
        let postKey = TimelinePostKey(key)
        guard ["levels", "medication", "regimen"].contains(postKey.itemType) else { throw FuzzViolation("item type \(postKey.itemType)") }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { return }
        let posted: JSONValue
        do { posted = try JSONValue(foundation: object) } catch { throw FuzzViolation("a decoded body does not convert: \(error)") }
        guard case let .object(members) = posted, members.count == object.count else {
            throw FuzzViolation("a posted object did not become a JSON object with its \(object.count) members")
        }
        let stored = posted.serialized()
        guard let again = try? JSONParser.parse(stored), again == posted, again.serialized() == stored else {
            throw FuzzViolation("the stored item reads back differently: \(stored.prefix(300))")
        }
        guard let foundation = (try? JSONSerialization.jsonObject(with: Data(stored.utf8))) as? [String: Any],
              Set(foundation.keys) == Set(object.keys) else {
            throw FuzzViolation("the stored item does not read back with JSONSerialization as an object with its keys: \(stored.prefix(300))")
        }
    }

    // MARK: 4b. Apple Health export.zip

    /// An export file (zip or XML) opened as `hreader import --apple-health` opens it, and read: an
    /// HReaderError or RecordsError, never a trap or another error.
    public static func appleHealthZip(_ data: Data) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hreader-fuzz-\(getpid()).zip")
        try data.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            let source = try AppleHealthExportSource(url: url, inflateStall: 2)
            try source.withXML { read in
                try AppleHealthReader(source: read).read { _ in }
            }
        } catch is HReaderError {
        } catch is RecordsError {
        } catch {
            throw FuzzViolation("the Apple Health export threw \(type(of: error)): \(error)")
        }
    }
}
/// An XML plist writer for the round trip: false for a value XML 1.0 cannot carry (a control
/// character in a string, a date outside years 1 to 9999 or between seconds).
enum PropertyListXMLWriter {
    static func write(_ value: PropertyList, into out: inout String) -> Bool {
        switch value {
        case .string(let text): return element("string", text, into: &out)
        case .integer(let n): out += "<integer>\(n)</integer>"
        case .real(let n): out += n.isNaN ? "<real>nan</real>" : "<real>\(n)</real>"  // Swift writes a NaN's payload
        case .bool(let b): out += b ? "<true/>" : "<false/>"
        case .date(let since2001):
            // XML dates are whole seconds: only a whole number of seconds since 2001 survives (adding
            // the offset to 8e-303 gives a whole number too, by rounding).
            let seconds = since2001 + PropertyList.referenceDateOffset
            guard since2001 == since2001.rounded(.down), (-62_135_596_800...253_402_300_799).contains(seconds) else { return false }
            out += "<date>\(RFC3339.utc(Int64(seconds)))</date>"
        case .data(let bytes): out += "<data>\(Data(bytes).base64EncodedString())</data>"
        case .array(let items):
            out += "<array>"
            for item in items { guard write(item, into: &out) else { return false } }
            out += "</array>"
        case .dictionary(let members):
            out += "<dict>"
            for (key, item) in members.sorted(by: { $0.key < $1.key }) {
                guard element("key", key, into: &out), write(item, into: &out) else { return false }
            }
            out += "</dict>"
        }
        return true
    }

    private static func element(_ name: String, _ text: String, into out: inout String) -> Bool {
        out += "<\(name)>"
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\r": out += "&#13;"  // a raw CR would be read as a line end
            case "\t", "\n", "\u{20}"..."\u{D7FF}", "\u{E000}"..."\u{FFFD}", "\u{10000}"...: out.unicodeScalars.append(scalar)
            default: return false
            }
        }
        out += "</\(name)>"
        return true
    }

    /// Equal, with any NaN equal to any other.
    static func same(_ a: PropertyList, _ b: PropertyList) -> Bool {
        switch (a, b) {
        case let (.real(x), .real(y)): return x == y || (x.isNaN && y.isNaN)
        case let (.array(x), .array(y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case let (.dictionary(x), .dictionary(y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
        default: return a == b
        }
    }
}
#endif
