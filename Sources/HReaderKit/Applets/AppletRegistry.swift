import Foundation
import HReaderJSON
import HReaderModel
import HReaderRecords

/// The declared applets: the list built into the binary, then `$XDG_CONFIG_HOME/hreader/applets.plist`,
/// then `--applets FILE`. A later list may declare an identifier again: its declaration replaces the
/// earlier one in place (so a user can reconfigure a built-in, or load hReader's own
/// `HReaderApplets.plist` unchanged), but a built-in's identifier never becomes a plugin. Within one
/// list an identifier must be unique. Declaring a plugin runs nothing: `PluginTrust` says what may run.
///
///     let registry = try AppletRegistry.load(extraFile: "my-applets.plist", environment: ProcessInfo.processInfo.environment)
///     registry.declaration("org.mitre.hreader.bloodpressure")?.isAvailable   // true
public struct AppletRegistry: Sendable {
    public private(set) var declarations: [AppletDeclaration]
    /// The plists that were read, in order ("built-in" first).
    public private(set) var sources: [String]
    /// Where plugin programs must live (`PluginTrust`); a relative `executable` is found there.
    public private(set) var pluginsDirectory: URL?

    /// A new patient's applets, as hReader: medications, then blood pressure (`OpenVault.defaultApplets`
    /// adds the built-in tiles of what their record holds).
    public static let defaultPatientApplets = ["org.mitre.hreader.medications", "org.mitre.hreader.bloodpressure"]

    /// Only the list inside the binary.
    public static func builtIn() -> AppletRegistry {
        // The embedded list is part of the binary and covered by tests: failing to parse it is a bug.
        let declarations = try! parse(Data(DefaultApplets.plist.utf8), origin: "built-in", pluginsDirectory: nil)
        return AppletRegistry(declarations: declarations, sources: ["built-in"], pluginsDirectory: nil)
    }

    /// The identifiers of the built-in list: a later list may reconfigure them, never make them plugins.
    public static let builtInIdentifiers: Set<String> = Set(builtIn().declarations.map(\.identifier))

    /// The built-in list, then the user's list (if it exists), then `extraFile`.
    public static func load(extraFile: String?, environment: [String: String]) throws -> AppletRegistry {
        var registry = builtIn()
        registry.pluginsDirectory = PluginTrust.pluginsDirectory(environment: environment)
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
        let added = try Self.parse(data, origin: url.path, pluginsDirectory: pluginsDirectory)
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

    /// Parses an XML or binary property list (`PropertyList`, not Foundation's reader): an array of
    /// applet dictionaries. A relative `executable` is found in `pluginsDirectory`.
    static func parse(_ data: Data, origin: String, pluginsDirectory: URL?) throws -> [AppletDeclaration] {
        guard PropertyList.format(of: data) != nil else {
            throw HReaderError.badInput("\(origin) is not an XML or binary property list")
        }
        let root: PropertyList
        do {
            root = try PropertyList.read(data)
        } catch let RecordsError.malformed(reason) {
            throw HReaderError.badInput("\(origin) is not a readable property list: \(reason)")
        }
        guard case .array(let items) = root else {
            throw HReaderError.badInput("\(origin): the top level must be an array of applet dictionaries")
        }
        var declarations: [AppletDeclaration] = []
        var firstEntry: [String: Int] = [:]
        for (offset, item) in items.enumerated() {
            let number = offset + 1
            let declaration = try parseEntry(item, number: number, origin: origin, pluginsDirectory: pluginsDirectory)
            if let earlier = firstEntry[declaration.identifier] {
                throw HReaderError.badInput("\(origin): entries \(earlier) and \(number) both declare '\(declaration.identifier)'; identifiers must be unique")
            }
            firstEntry[declaration.identifier] = number
            declarations.append(declaration)
        }
        return declarations
    }

    static func parseEntry(_ item: PropertyList, number: Int, origin: String, pluginsDirectory: URL?) throws -> AppletDeclaration {
        func fail(_ what: String, _ name: String? = nil) -> HReaderError {
            HReaderError.badInput("\(origin): entry \(number)\(name.map { " ('\($0)')" } ?? ""): \(what)")
        }
        guard case .dictionary(let entry) = item else { throw fail("is not a dictionary") }
        func string(_ key: String, _ name: String?) throws -> String? {
            guard let value = entry[key] else { return nil }
            guard case .string(let text) = value, !text.trimmingCharacters(in: .whitespaces).isEmpty else {
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
            if builtInIdentifiers.contains(identifier) {
                throw fail("is a built-in applet: a list may reconfigure it with a 'class_name', never make it a plugin; "
                           + "give your plugin an identifier of its own", identifier)
            }
            let plugin = try pluginSpecification(entry, executable: executable, pluginsDirectory: pluginsDirectory) { fail($0, identifier) }
            implementation = .plugin(plugin)
            do {
                _ = try PluginTrust.locate(plugin.executable, pluginsDirectory: pluginsDirectory)
            } catch {
                unavailable = error.reason
            }
        }
        return AppletDeclaration(identifier: identifier, displayName: displayName, className: className,
                                 implementation: implementation, unavailableReason: unavailable,
                                 configuration: configuration, origin: origin, entryNumber: number)
    }

    static func pluginSpecification(_ entry: [String: PropertyList], executable: String, pluginsDirectory: URL?,
                                    fail: (String) -> HReaderError) throws -> PluginSpecification {
        let path: String
        if executable.hasPrefix("/") {
            path = executable
        } else if executable.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] {
            path = URL(fileURLWithPath: home).appendingPathComponent(String(executable.dropFirst(2))).path
        } else if let pluginsDirectory {
            path = pluginsDirectory.appendingPathComponent(executable).standardizedFileURL.path
        } else {
            path = executable
        }
        var types: [EntryType] = []
        if let value = entry["entry_types"] {
            guard case .array(let names) = value else { throw fail("'entry_types' must be an array of entry types") }
            for name in names {
                guard case .string(let text) = name, let type = EntryType(rawValue: text) else {
                    let valid = EntryType.allCases.map(\.rawValue).joined(separator: ", ")
                    let shown = if case .string(let text) = name { "unknown entry type '\(text)'" } else { "an entry type that is not a string" }
                    throw fail("\(shown) in 'entry_types' (valid: \(valid))")
                }
                if !types.contains(type) { types.append(type) }
            }
        }
        func number(_ key: String) throws -> Double? {
            switch entry[key] {
            case nil: return nil
            case .integer(let n)?: return Double(n)
            case .real(let n)? where n.isFinite: return n
            case .string(let s)?: if let n = Double(s), n.isFinite { return n }
            default: break
            }
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
    static func jsonValue(_ value: PropertyList) -> JSONValue {
        switch value {
        case .string(let s): return .string(s)
        case .bool(let b): return .bool(b)
        case .integer(let n): return .int(n)
        case .real(let n): return .double(n)
        case .date(let since2001):
            // Only the years RFC 3339 can write (a plist date can be any Double, and converting one
            // past Int64 trapped: found by the applet-plist fuzzer).
            let seconds = (since2001 + PropertyList.referenceDateOffset).rounded(.down)
            guard (-62_135_596_800...253_402_300_799).contains(seconds) else { return .null }
            return .string(RFC3339.utc(Int64(seconds)))
        case .data(let bytes): return .string(Data(bytes).base64EncodedString())
        case .array(let items): return .array(items.map(jsonValue))
        case .dictionary(let members): return .object(JSONObject(sortingKeysOf: members, jsonValue))
        }
    }
}
