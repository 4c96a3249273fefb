import Foundation

/// Text as two writings of one name compare: lower-cased, accents and punctuation folded, runs of
/// spaces as one ("Müller-Lüdenscheidt, Ö." and "muller ludenscheidt o." fold alike). Letters,
/// digits and "." are kept (a dose's "0.5" stays one word).
public enum FoldedText {
    public static func of(_ text: String) -> String {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var out = ""
        var space = false
        for scalar in folded.unicodeScalars {
            if CharacterSet.alphanumerics.contains(scalar) || scalar == "." {
                if space, !out.isEmpty { out.append(" ") }
                out.unicodeScalars.append(scalar)
                space = false
            } else {
                space = true
            }
        }
        return out
    }
}
