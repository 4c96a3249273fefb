import Foundation
import HReaderJSON
import HReaderStore

/// The declared applets: the list built into the binary, then `$XDG_CONFIG_HOME/hreader/applets.plist`,
/// then `--applets FILE`. A later list may declare an identifier again: its declaration replaces the
/// earlier one in place (so a user can reconfigure a built-in, or load hReader's own
/// `HReaderApplets.plist` unchanged). Within one list an identifier must be unique.
///
///     let registry = try AppletRegistry.load(extraFile: "my-applets.plist", environment: ProcessInfo.processInfo.environment)
///     registry.declaration("org.mitre.hreader.bloodpressure")?.isAvailable   // true
public struct AppletRegistry: Sendable {
    public private(set) var declarations: [AppletDeclaration]
    /// The plists that were read, in order ("built-in" first).
    public private(set) var sources: [String]

    /// A new patient's applets, as hReader: medications, then blood pressure.
    public static let defaultPatientApplets = ["org.mitre.hreader.medications", "org.mitre.hreader.bloodpressure"]

    /// Only the list inside the binary.
    public static func builtIn() -> AppletRegistry {
        // The embedded list is part of the binary and covered by tests: failing to parse it is a bug.
        let declarations = try! parse(Data(DefaultApplets.plist.utf8), origin: "built-in", baseDirectory: nil)
        return AppletRegistry(declarations: declarations, sources: ["built-in"])
    }

    /// The built-in list, then the user's list (if it exists), then `extraFile`.
    public static func load(extraFile: String?, environment: [String: String]) throws -> AppletRegistry {
        var registry = builtIn()
        if let user = userListURL(environment: environment), FileManager.default.fileExists(atPath: user.path) {
            try registry.add(contentsOf: user)
        }
        if let extraFile {
            try registry.add(contentsOf: URL(fileURLWithPath: extraFile))
        }
        return registry
    }

    /// `$XDG_CONFIG_HOME/hreader/applets.plist`, else `~/.config/hreader/applets.plist`.
    public static func userListURL(environment: [String: String]) -> URL? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config).appendingPathComponent("hreader/applets.plist")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return URL(fileURLWithPath: home).appendingPathComponent(".config/hreader/applets.plist")
    }

    public func declaration(_ identifier: String) -> AppletDeclaration? {
        declarations.first { $0.identifier == identifier }
    }

    /// Reads one more list; its declarations replace earlier ones with the same identifier.
    public mutating func add(contentsOf url: URL) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw HReaderError.usage("cannot read the applets list \(url.path)")
        }
        let added = try Self.parse(data, origin: url.path, baseDirectory: url.deletingLastPathComponent())
        for declaration in added {
            if let index = declarations.firstIndex(where: { $0.identifier == declaration.identifier }) {
                declarations[index] = declaration
            } else {
                declarations.append(declaration)
            }
        }
        sources.append(url.path)
    }

    // MARK: Parsing

    static let reservedKeys: Set<String> = ["identifier", "display_name", "class_name", "executable", "entry_types"]

    /// Parses an XML or binary property list: an array of applet dictionaries.
    static func parse(_ data: Data, origin: String, baseDirectory: URL?) throws -> [AppletDeclaration] {
        // Foundation on Linux crashes (SIGSEGV, bridging NSSet) on a binary plist holding a set; no applet
        // list has one (XML plists cannot say it), so it is refused first. Found by make fuzz (applet-plist).
        if Self.binaryPlistHasSet(data) {
            throw HReaderError.badInput("\(origin) is a binary property list holding a set, which hreader does not read; use arrays")
        }
        // Only the two formats applets are declared in: Foundation would also try the old OpenStep text
        // format on anything else, and on Linux it leaks the error of every failed attempt (the fuzzer
        // ran out of memory on it after two million inputs).
        guard Self.isXMLOrBinaryPlist(data) else {
            throw HReaderError.badInput("\(origin) is not an XML or binary property list")
        }
        let root: Any
        do {
            root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw HReaderError.badInput("\(origin) is not a readable property list (XML or binary); fix or remove it")
        }
        guard let items = root as? [Any] else {
            throw HReaderError.badInput("\(origin): the top level must be an array of applet dictionaries")
        }
        var declarations: [AppletDeclaration] = []
        var firstEntry: [String: Int] = [:]
        for (offset, item) in items.enumerated() {
            let number = offset + 1
            let declaration = try parseEntry(item, number: number, origin: origin, baseDirectory: baseDirectory)
            if let earlier = firstEntry[declaration.identifier] {
                throw HReaderError.badInput("\(origin): entries \(earlier) and \(number) both declare '\(declaration.identifier)'; identifiers must be unique")
            }
            firstEntry[declaration.identifier] = number
            declarations.append(declaration)
        }
        return declarations
    }

    /// Whether `data` starts as a binary plist (`bplist`) or as XML (`<`, after a byte order mark and
    /// whitespace).
    static func isXMLOrBinaryPlist(_ data: Data) -> Bool {
        var bytes = data.prefix(4096)[...]
        if bytes.starts(with: [0x62, 0x70, 0x6C, 0x69, 0x73, 0x74]) { return true }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == 0x3C
    }

    /// Whether `data` is a binary plist (bplist00) whose object table has a set (marker 0xCn). A damaged
    /// trailer answers false and is left to PropertyListSerialization, which refuses it.
    static func binaryPlistHasSet(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else { return false }
        let trailer = bytes.count - 32
        func integer(at start: Int, size: Int) -> Int? {
            guard size >= 1, size <= 8, start >= 0, start + size <= bytes.count else { return nil }
            let value = bytes[start..<(start + size)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        let offsetSize = Int(bytes[trailer + 6])
        guard let count = integer(at: trailer + 8, size: 8), let table = integer(at: trailer + 24, size: 8),
              offsetSize >= 1, offsetSize <= 8, table <= trailer else { return false }
        for index in 0..<min(count, (trailer - table) / offsetSize) {
            guard let offset = integer(at: table + index * offsetSize, size: offsetSize), offset < bytes.count else { continue }
            if bytes[offset] >> 4 == 0xC { return true }
        }
        return false
    }

    static func parseEntry(_ item: Any, number: Int, origin: String, baseDirectory: URL?) throws -> AppletDeclaration {
        func fail(_ what: String, _ name: String? = nil) -> HReaderError {
            HReaderError.badInput("\(origin): entry \(number)\(name.map { " ('\($0)')" } ?? ""): \(what)")
        }
        guard let entry = item as? [String: Any] else { throw fail("is not a dictionary") }
        func string(_ key: String, _ name: String?) throws -> String? {
            guard let value = entry[key] else { return nil }
            guard let text = value as? String, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw fail("'\(key)' must be a non-empty string", name)
            }
            return text
        }
        guard let identifier = try string("identifier", nil) else { throw fail("has no 'identifier'") }
        guard isReverseDNS(identifier) else {
            throw fail("the identifier must be reverse-DNS, such as org.example.my-applet", identifier)
        }
        guard let displayName = try string("display_name", identifier) else { throw fail("has no 'display_name'", identifier) }
        let className = try string("class_name", identifier)
        let executable = try string("executable", identifier)

        var configuration: [(String, JSONValue)] = []
        for key in entry.keys.sorted() where !reservedKeys.contains(key) {
            configuration.append((key, jsonValue(entry[key]!)))
        }

        let implementation: AppletDeclaration.Implementation
        var unavailable: String?
        switch (className, executable) {
        case (.some, .some):
            throw fail("has both 'class_name' and 'executable'; give one", identifier)
        case (nil, nil):
            throw fail("has neither 'class_name' (a built-in) nor 'executable' (a plugin)", identifier)
        case let (className?, nil):
            if entry["entry_types"] != nil { throw fail("'entry_types' goes with 'executable', not 'class_name'", identifier) }
            if let builtIn = BuiltInApplet(className: className) {
                implementation = .builtIn(builtIn)
            } else if let reason = BuiltInApplet.unavailableClasses[className] {
                implementation = .none
                unavailable = reason
            } else {
                let known = BuiltInApplet.allCases.map(\.className).joined(separator: ", ")
                throw fail("unknown class_name '\(className)' (built-ins: \(known)); for your own applet give 'executable'", identifier)
            }
        case let (nil, executable?):
            let plugin = try pluginSpecification(entry, executable: executable, baseDirectory: baseDirectory) { fail($0, identifier) }
            implementation = .plugin(plugin)
            if !FileManager.default.isExecutableFile(atPath: plugin.executable) {
                unavailable = FileManager.default.fileExists(atPath: plugin.executable)
                    ? "\(plugin.executable) is not executable (chmod +x it)"
                    : "\(plugin.executable) does not exist"
            }
        }
        return AppletDeclaration(identifier: identifier, displayName: displayName, className: className,
                                 implementation: implementation, unavailableReason: unavailable,
                                 configuration: configuration, origin: origin, entryNumber: number)
    }

    static func pluginSpecification(_ entry: [String: Any], executable: String, baseDirectory: URL?,
                                    fail: (String) -> HReaderError) throws -> PluginSpecification {
        let path: String
        if executable.hasPrefix("/") {
            path = executable
        } else if executable.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] {
            path = URL(fileURLWithPath: home).appendingPathComponent(String(executable.dropFirst(2))).path
        } else {
            let base = baseDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            path = base.appendingPathComponent(executable).standardizedFileURL.path
        }
        var types: [EntryType] = []
        if let value = entry["entry_types"] {
            guard let names = value as? [Any] else { throw fail("'entry_types' must be an array of entry types") }
            for name in names {
                guard let text = name as? String, let type = EntryType(rawValue: text) else {
                    let valid = EntryType.allCases.map(\.rawValue).joined(separator: ", ")
                    throw fail("unknown entry type '\(name)' in 'entry_types' (valid: \(valid))")
                }
                if !types.contains(type) { types.append(type) }
            }
        }
        func number(_ key: String) throws -> Double? {
            guard let value = entry[key] else { return nil }
            if type(of: value) != Bool.self, let n = value as? NSNumber { return n.doubleValue }
            if let s = value as? String, let n = Double(s) { return n }
            throw fail("'\(key)' must be a number")
        }
        let timeout = try number("timeout") ?? PluginSpecification.defaultTimeout
        guard timeout > 0, timeout <= PluginSpecification.maximumTimeout else {
            throw fail("'timeout' must be more than 0 and at most \(Int(PluginSpecification.maximumTimeout)) seconds")
        }
        let maxOutput = try number("max_output_bytes") ?? Double(PluginSpecification.defaultMaxOutputBytes)
        guard maxOutput >= 1024, maxOutput <= Double(PluginSpecification.maximumMaxOutputBytes) else {
            throw fail("'max_output_bytes' must be between 1024 and \(PluginSpecification.maximumMaxOutputBytes)")
        }
        return PluginSpecification(executable: path, entryTypes: types, timeout: timeout, maxOutputBytes: Int(maxOutput))
    }

    /// "org.example.my-applet": two or more dot-separated labels of letters, digits, '-' and '_'.
    static func isReverseDNS(_ identifier: String) -> Bool {
        let labels = identifier.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, identifier.count <= 200 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
        }
    }

    /// A plist value as JSON: dates become RFC 3339, data becomes base64.
    static func jsonValue(_ value: Any) -> JSONValue {
        switch value {
        case let s as String: return .string(s)
        // Property lists hand booleans back as Bool (test it before NSNumber, which a Bool also casts to).
        case let b as Bool where type(of: value) == Bool.self: return .bool(b)
        case let n as NSNumber: return .double(n.doubleValue)
        case let d as Date:
            // Only the years RFC 3339 can write (a plist date can be any Double, and converting one
            // past Int64 trapped: found by the applet-plist fuzzer).
            let seconds = d.timeIntervalSince1970.rounded(.down)
            guard (-62_135_596_800...253_402_300_799).contains(seconds) else { return .null }
            return .string(RFC3339.utc(Int64(seconds)))
        case let d as Data: return .string(d.base64EncodedString())
        case let a as [Any]: return .array(a.map(jsonValue))
        case let o as [String: Any]: return .object(JSONObject(sortingKeysOf: o, jsonValue))
        default: return .null
        }
    }
}
