extension String {
    /// The text without the spaces around it, as Foundation's `trimmingCharacters(in: .whitespaces)`
    /// trims (tab, Unicode's space separators and, in the Linux Foundation's older table, the zero-width
    /// space; scalar by scalar), without Foundation: its NSString bridge costs a short command a third
    /// of a millisecond the first time (docs/cli.md, "Start-up").
    public func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isTrimmedSpace }), let last = scalars.lastIndex(where: { !$0.isTrimmedSpace })
        else { return "" }
        return String(scalars[first...last])
    }
}

extension Substring {
    /// As `String.trimmingSpaces()`.
    public func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isTrimmedSpace }), let last = scalars.lastIndex(where: { !$0.isTrimmedSpace })
        else { return "" }
        return String(scalars[first...last])
    }
}

extension Unicode.Scalar {
    fileprivate var isTrimmedSpace: Bool {
        self == " " || self == "\t" || (value >= 0x80 && (value == 0x200B || properties.generalCategory == .spaceSeparator))
    }
}
