/// A line of a lab report that reads as one result: `NAME VALUE UNIT (reference LOW - HIGH)`, offered
/// by `hreader documents propose` for the user to accept. Nothing is ever stored from it unasked.
///
///     LabLines.proposals(in: "Haemoglobin 13.2 g/dL (reference 12.0 - 16.0)")
///     // [LabLine(line: 1, name: "Haemoglobin", value: 13.2, valueText: "13.2", unit: "g/dL", low: 12.0, high: 16.0)]
public struct LabLine: Sendable, Equatable {
    /// The line's number in the text (from 1).
    public var line: Int
    public var name: String
    public var value: Double
    /// The value as written (`13.2`, `<0.5` keeps `0.5` as `value`).
    public var valueText: String
    public var unit: String
    public var low: Double?
    public var high: Double?
    /// The line as read (tidied), to show beside the proposal.
    public var text: String

    public init(line: Int, name: String, value: Double, valueText: String, unit: String, low: Double?, high: Double?, text: String) {
        self.line = line; self.name = name; self.value = value; self.valueText = valueText; self.unit = unit
        self.low = low; self.high = high; self.text = text
    }
}

public enum LabLines {
    /// Lines longer than this are not looked at (a paragraph, not a result line).
    public static let maxLineLength = 200
    /// At most this many proposals from one document.
    public static let maxProposals = 500

    public static func proposals(in text: String) -> [LabLine] {
        var found: [LabLine] = []
        var number = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            guard raw.count <= maxLineLength, let line = parse(String(raw), number: number) else { continue }
            found.append(line)
            if found.count == maxProposals { break }
        }
        return found
    }

    /// What a report writes after a value out of range.
    static let flags: Set<String> = ["H", "L", "HH", "LL", "HIGH", "LOW", "*", "!", "(H)", "(L)"]

    /// One line, or nil when it does not read as a result.
    public static func parse(_ raw: String, number: Int = 1) -> LabLine? {
        let line = raw.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
        var tokens = line.split(separator: " ").map(String.init)
        guard tokens.count >= 3 else { return nil }
        // The reference range: `(reference 12.0 - 16.0)`, `(ref 12-16)`, `(12.0-16.0)`, `12.0 - 16.0` at the end.
        var low: Double? = nil, high: Double? = nil
        if let open = line.lastIndex(of: "("), line.hasSuffix(")") {
            let inside = line[line.index(after: open)..<line.index(before: line.endIndex)]
            guard let range = Self.range(String(inside)) else { return nil }
            (low, high) = range
            tokens = line[..<open].split(separator: " ").map(String.init)
        }
        // NAME (one or more words, the first starting with a letter) VALUE UNIT
        guard tokens.count >= 3 else { return nil }
        var valueIndex: Int? = nil
        for i in 1..<tokens.count where valueToken(tokens[i]) != nil { valueIndex = i; break }
        guard let v = valueIndex, v + 1 < tokens.count, let value = valueToken(tokens[v]) else { return nil }
        let nameWords = tokens[..<v]
        guard let first = nameWords.first?.unicodeScalars.first, first.properties.isAlphabetic else { return nil }
        let name = nameWords.joined(separator: " ").trimmingTrailing(":")
        guard name.count >= 2, name.count <= 80 else { return nil }
        let unit = tokens[v + 1]
        guard Self.isUnit(unit) else { return nil }
        // Anything after the unit but a range (`12.0 - 16.0`, `12-16`) or a flag (H, L, *) is not one result.
        var after = Array(tokens[(v + 2)...])
        if let flag = after.last, Self.flags.contains(flag.uppercased()) { after.removeLast() }
        let rest = after.joined(separator: " ")
        if !rest.isEmpty {
            guard low == nil, let range = Self.range(rest) else { return nil }
            (low, high) = range
        }
        if let low, let high, low > high { return nil }
        return LabLine(line: number, name: name, value: value.value, valueText: value.text, unit: unit, low: low, high: high, text: line)
    }

    /// `12.0 - 16.0`, `12-16`, `reference 12.0 - 16.0`, `ref: 3.5–5.1`.
    static func range(_ text: String) -> (Double, Double)? {
        var s = Substring(text)
        for prefix in ["reference range", "reference", "ref. range", "ref range", "ref.", "ref", "normal", "range"] {
            if s.lowercased().hasPrefix(prefix) { s = s.dropFirst(prefix.count); break }
        }
        s = s.drop(while: { $0 == " " || $0 == ":" })
        let dashes: Set<Character> = ["-", "\u{2013}", "\u{2014}"]
        // The dash between the two numbers: the first one after a digit.
        var index = s.startIndex
        var seenDigit = false
        while index < s.endIndex {
            let c = s[index]
            if c.isNumber { seenDigit = true } else if seenDigit, dashes.contains(c) { break }
            index = s.index(after: index)
        }
        guard index < s.endIndex else { return nil }
        let left = s[..<index].trimmingSpaces(), right = s[s.index(after: index)...].trimmingSpaces()
        guard let low = plainNumber(Substring(left)), let high = plainNumber(Substring(right)) else { return nil }
        return (low, high)
    }

    /// A value: `13.2`, `140`, `0,9` (a decimal comma), `<0.5`, `>60`.
    static func valueToken(_ token: String) -> (value: Double, text: String)? {
        var body = Substring(token)
        if let first = body.first, first == "<" || first == ">" { body = body.dropFirst() }
        guard let value = plainNumber(body) else { return nil }
        return (value, token)
    }

    static func plainNumber(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.count <= 24 else { return nil }
        var digits = 0, separators = 0
        for c in text {
            if c.isASCII && c.isNumber { digits += 1 } else if c == "." || c == "," { separators += 1 } else { return nil }
        }
        guard digits > 0, separators <= 1, text.first != ".", text.first != ",", text.last != ".", text.last != "," else { return nil }
        guard let value = Double(text.replacingOccurrences(of: ",", with: ".")), value.isFinite else { return nil }
        return value
    }

    /// A unit as lab reports write them: `g/dL`, `mmol/L`, `%`, `10^9/L`, `x10E3/uL`, `U/L`, `µmol/L`, `fL`.
    static func isUnit(_ token: String) -> Bool {
        guard !token.isEmpty, token.count <= 16 else { return false }
        if token == "%" { return true }
        guard token.unicodeScalars.contains(where: { $0.properties.isAlphabetic }) else { return false }
        return token.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "/^*.%·-".unicodeScalars.contains($0) }
    }
}

extension String {
    fileprivate func trimmingTrailing(_ character: Character) -> String {
        var s = self
        while s.last == character { s.removeLast() }
        return s
    }
}

extension Substring {
    fileprivate func replacingOccurrences(of a: String, with b: String) -> String {
        String(self).split(separator: Character(a), omittingEmptySubsequences: false).joined(separator: b)
    }
}
