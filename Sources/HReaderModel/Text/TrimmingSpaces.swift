extension String {
    /// The text without the spaces around it, as Foundation's `trimmingCharacters(in: .whitespaces)`
    /// trims (tab, Unicode's space separators and, in the Linux Foundation's older table, the zero-width
    /// space; scalar by scalar), without Foundation: its NSString bridge costs a short command a third
    /// of a millisecond the first time (docs/cli.md, "Start-up").
    public func trimmingSpaces() -> String {
        spaceTrimmedBounds(unicodeScalars).map { String(unicodeScalars[$0]) } ?? ""
    }
}

extension Substring {
    /// As `String.trimmingSpaces()`.
    public func trimmingSpaces() -> String {
        spaceTrimmedBounds(unicodeScalars).map { String(unicodeScalars[$0]) } ?? ""
    }
}

/// The scalars between the first and the last that are not spaces; nil when all are.
private func spaceTrimmedBounds<Scalars: BidirectionalCollection<Unicode.Scalar>>(_ scalars: Scalars) -> ClosedRange<Scalars.Index>? {
    func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || (scalar.value >= 0x80 && (scalar.value == 0x200B || scalar.properties.generalCategory == .spaceSeparator))
    }
    guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return nil }
    return first...last
}
