import Foundation
import HReaderModel

/// Reads an XML property list (Apple's PropertyList-1.0 DTD) with `XMLTextReader`: a `<plist>`
/// holding one value (or a bare value as the root, which Apple's parser also takes). Comments and
/// processing instructions are skipped; text is allowed only inside `<key>` and the scalar elements.
enum XMLPropertyListReader {
    /// A container or a scalar element being read.
    private enum Frame {
        case plist(PropertyList?)
        case array([PropertyList])
        case dictionary([String: PropertyList], key: (text: String, line: Int)?)
        /// `<key>`, `<string>`, `<integer>`, `<real>`, `<date>`, `<data>`, `<true>`, `<false>`.
        case scalar(name: String, text: String)
    }

    private static let declarationsRefused =
        "the property list declares entities or other markup in its DOCTYPE (a plist only names Apple's DTD): refused"

    private static let scalars: Set<String> = ["key", "string", "integer", "real", "date", "data", "true", "false"]

    static func read(_ data: Data) throws -> PropertyList {
        if let doctype = XMLTextReader.doctype(in: data), doctype.hasInternalSubset {
            throw RecordsError.malformed(declarationsRefused + " (line \(doctype.line))")
        }
        let reader = try XMLTextReader(data, what: "the property list")
        var stack: [(frame: Frame, line: Int)] = []
        var root: PropertyList?
        var budget = PropertyList.Budget()

        func fail(_ what: String, line: Int) -> RecordsError {
            RecordsError.malformed("the property list \(what) (line \(line))")
        }
        /// A finished value goes to the container it is in.
        func deliver(_ value: PropertyList, line: Int) throws {
            guard let top = stack.last else { root = value; return }
            switch top.frame {
            case .plist(nil): stack[stack.count - 1].frame = .plist(value)
            case .plist: throw fail("holds more than one value in <plist>", line: line)
            case .array(var items):
                stack[stack.count - 1].frame = .array([])  // keeps `items` uniquely referenced
                items.append(value)
                stack[stack.count - 1].frame = .array(items)
            case .dictionary(var members, let key?):
                guard members[key.text] == nil else {
                    throw fail("has the key '\(excerpt(key.text))' twice in one <dict>", line: key.line)
                }
                stack[stack.count - 1].frame = .dictionary([:], key: nil)
                members[key.text] = value
                stack[stack.count - 1].frame = .dictionary(members, key: nil)
            case .dictionary(_, nil): throw fail("has a value without a <key> in a <dict>", line: line)
            case .scalar(let name, _): throw fail("has an element inside <\(name)>", line: line)
            }
        }

        /// A scalar element read whole: a `<key>` names the next value of its dictionary, any other
        /// is a value.
        func endScalar(_ name: String, _ text: String, line: Int) throws {
            try budget.take(bytes: text.utf8.count, at: "line \(line)")
            guard name == "key" else { return try deliver(try value(name, text, line: line), line: line) }
            if case .dictionary(let members, nil)? = stack.last?.frame {
                stack[stack.count - 1].frame = .dictionary(members, key: (text, line))
            }
        }

        while try reader.read() {
            switch reader.nodeType {
            case .elementStart:
                let name = reader.localName, line = reader.line, empty = reader.isEmptyElement
                if case .scalar(let outer, _)? = stack.last?.frame {
                    throw fail("has an element <\(excerpt(name))> inside <\(outer)>", line: line)
                }
                let depth = stack.filter { if case .plist = $0.frame { false } else { true } }.count
                try budget.take(depth: depth, at: "line \(line)")
                switch name {
                case "plist":
                    guard stack.isEmpty, root == nil else { throw fail("has a <plist> inside another element", line: line) }
                    guard !empty else { throw fail("<plist> holds no value", line: line) }
                    stack.append((.plist(nil), line))
                case "array":
                    if empty { try deliver(.array([]), line: line) } else { stack.append((.array([]), line)) }
                case "dict":
                    if empty { try deliver(.dictionary([:]), line: line) } else { stack.append((.dictionary([:], key: nil), line)) }
                case _ where scalars.contains(name):
                    if name == "key" {
                        guard case .dictionary(_, let key)? = stack.last?.frame else { throw fail("has a <key> outside a <dict>", line: line) }
                        guard key == nil else { throw fail("has two <key>s in a row in a <dict>", line: line) }
                    } else if case .dictionary(_, nil)? = stack.last?.frame {
                        throw fail("has <\(name)> where a <dict> needs a <key>", line: line)
                    }
                    if empty { try endScalar(name, "", line: line) } else { stack.append((.scalar(name: name, text: ""), line)) }
                default:
                    throw fail("has an element <\(excerpt(name))> that property lists do not have", line: line)
                }
            case .elementEnd:
                guard let (frame, line) = stack.popLast() else { continue }
                switch frame {
                case .plist(let value?): root = value
                case .plist(nil): throw fail("<plist> holds no value", line: line)
                case .array(let items): try deliver(.array(items), line: line)
                case .dictionary(let members, nil): try deliver(.dictionary(members), line: line)
                case .dictionary(_, let key?): throw fail("has the key '\(excerpt(key.text))' without a value", line: key.line)
                case .scalar(let name, let text): try endScalar(name, text, line: line)
                }
            case .text, .cdata, .whitespace, .significantWhitespace:
                if case .scalar(let name, let text)? = stack.last?.frame {
                    stack[stack.count - 1].frame = .scalar(name: name, text: text + reader.value)
                } else if !reader.value.allSatisfy(\.isWhitespace) {
                    throw fail("has text outside a value", line: reader.line)
                }
            case .entityReference, .entity:
                throw fail("uses an entity: refused", line: reader.line)
            case .documentType:
                if reader.documentTypeDeclaresAnything {
                    throw RecordsError.malformed(declarationsRefused + " (line \(reader.line))")
                }
            default:  // comments, processing instructions
                continue
            }
        }
        guard let root else { throw RecordsError.malformed("the property list holds no value") }
        return root
    }

    /// The value of a scalar element other than `<key>`, from its text.
    private static func value(_ name: String, _ text: String, line: Int) throws -> PropertyList {
        func bad(_ kind: String) -> RecordsError {
            RecordsError.malformed("the property list has <\(name)>\(excerpt(text))</\(name)>, which is not \(kind) (line \(line))")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch name {
        case "string": return .string(text)
        case "true", "false":
            guard trimmed.isEmpty else { throw bad("empty") }
            return .bool(name == "true")
        case "integer":
            guard let value = integer(trimmed) else { throw bad("an integer of at most 64 bits") }
            return .integer(value)
        case "real":
            guard let value = real(trimmed) else { throw bad("a number") }
            return .real(value)
        case "date":
            guard let value = date(trimmed) else { throw bad("a date such as 2011-03-04T05:06:07Z") }
            return .date(value)
        default:  // data
            guard let bytes = Data(base64Encoded: text.filter { !$0.isWhitespace }) else { throw bad("base64") }
            return .data([UInt8](bytes))
        }
    }

    /// Decimal or `0x` hexadecimal, with an optional sign, within Int64.
    static func integer(_ text: String) -> Int64? {
        var digits = Substring(text)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isHexDigit }),
              let magnitude = UInt64(digits, radix: radix) else { return nil }
        if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// A decimal number, or `nan`, `inf`, `infinity` with an optional sign (as Apple writes them).
    static func real(_ text: String) -> Double? {
        let word = text.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "+-"))
        if ["nan", "inf", "infinity"].contains(word) { return Double(text.lowercased()) }
        guard !text.isEmpty, text.allSatisfy({ "0123456789+-.eE".contains($0) }) else { return nil }
        return Double(text)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (the only form Apple writes), as seconds since 2001.
    static func date(_ text: String) -> Double? {
        let b = Array(text.utf8)
        guard b.count == 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x5A else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            guard b[range].allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return b[range].reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60,
              CivilDays.date(CivilDays.days(year, month, day)).day == day else { return nil }
        let seconds = CivilDays.days(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        return Double(seconds) - PropertyList.referenceDateOffset
    }

    /// At most 40 characters of a text a message quotes (terminal output filters control characters).
    static func excerpt(_ text: String) -> String {
        text.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
