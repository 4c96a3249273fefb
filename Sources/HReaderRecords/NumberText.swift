import Foundation

/// Numbers written as text, read strictly: `Double("nan")`, `Double("0x1p3")` and `Double("inf")`
/// succeed, but none of them is a measurement.
enum NumberText {
    /// The value of a decimal number such as `6.3`, `-12`, `1.5e3` or `.5` (surrounding spaces
    /// allowed), nil for anything else.
    static func parse(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard isDecimal(trimmed), let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }

    /// The JSON number grammar (RFC 8259 §6).
    static func isJSONNumber(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "-" { rest = rest.dropFirst() }
        let integer = rest.prefix(while: \.isASCIIDigit)
        guard !integer.isEmpty, integer == "0" || integer.first != "0" else { return false }
        rest = rest.dropFirst(integer.count)
        return fractionAndExponent(&rest) && rest.isEmpty
    }

    /// A looser grammar for values written by people and older systems: a sign, digits with an
    /// optional point (`.5`, `5.`), an optional exponent.
    static func isDecimal(_ text: String) -> Bool {
        var rest = Substring(text)
        if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
        let integer = rest.prefix(while: \.isASCIIDigit)
        rest = rest.dropFirst(integer.count)
        var fraction: Substring = ""
        if rest.first == "." {
            rest = rest.dropFirst()
            fraction = rest.prefix(while: \.isASCIIDigit)
            rest = rest.dropFirst(fraction.count)
        }
        guard !integer.isEmpty || !fraction.isEmpty else { return false }
        return exponent(&rest) && rest.isEmpty
    }

    private static func fractionAndExponent(_ rest: inout Substring) -> Bool {
        if rest.first == "." {
            rest = rest.dropFirst()
            let fraction = rest.prefix(while: \.isASCIIDigit)
            guard !fraction.isEmpty else { return false }
            rest = rest.dropFirst(fraction.count)
        }
        return exponent(&rest)
    }

    private static func exponent(_ rest: inout Substring) -> Bool {
        guard rest.first == "e" || rest.first == "E" else { return true }
        rest = rest.dropFirst()
        if rest.first == "+" || rest.first == "-" { rest = rest.dropFirst() }
        let digits = rest.prefix(while: \.isASCIIDigit)
        rest = rest.dropFirst(digits.count)
        return !digits.isEmpty
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
