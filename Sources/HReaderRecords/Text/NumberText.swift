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
